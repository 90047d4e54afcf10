// Kubernetes' authorizer library (apiserver cel/library/authz.go): an `authorizer` variable whose
// checks ask the server's authorizer what a user may do.
//
//   authorizer.group(g).resource(r)[.subresource(s)][.namespace(ns)][.name(n)].check(verb)
//   authorizer.path(p).check(httpVerb)
//   authorizer.serviceAccount(ns, name)            an authorizer for that service account
//   <Decision>.allowed() / .reason() / .errored() / .error()
//   .fieldSelector(s) / .labelSelector(s)          with the AuthorizeWithSelectors gate only
//
// A check costs 350 000 (so an expression under the per-call limit makes at most two), every other
// function of the library 1 (cost.ts, estimate.ts), as Kubernetes prices them.
//
// Kubernetes makes the variable available in admission (ValidatingAdmissionPolicy and its
// mutating sibling) only; neither authentication's nor authorization's match conditions have it.
// An environment opts in with `authorizerLibrary()` among its extensions and binds
// `withAuthorizer(authorizer, user)` to `authorizer` at evaluation.
//
// Evaluation here is synchronous and the server's authorizers answer with promises: a check whose
// answer is not known yet stops the evaluation (`evaluateWithAuthorizer` then awaits every answer
// asked for and evaluates again, from the start, with them known). Expressions are pure, so each
// run takes the same path up to its first unknown answer; the runs are bounded by the cost limit
// (a check's price), and only the last one, which knows every answer, gives the result and the
// cost. An authorizer that answers synchronously needs one run, with `CelProgram.evaluate`.

import { pathCheckInfo, resourceCheckInfo, type RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';
import { dns1123Label, dns1123Subdomain } from '../../machinery/meta.ts';
import { parseFieldSelector, parseLabelSelector, type FieldSelector, type LabelSelector } from '../../machinery/selectors.ts';
import type { CelExtension, CelProgram, EvaluateOptions, EvaluationResult } from '../environment.ts';
import { celError, type Registrar } from './register.ts';

/** What a check asks: the user and the request it would make; selectors with AuthorizeWithSelectors. */
export interface AuthorizationCheck {
  user: UserInfo;
  info: RequestInfo;
  /** `fieldSelector(s)`: its requirements (the server's authorizers read them in this shape). */
  fieldSelector?: FieldSelector['requirements'];
  labelSelector?: LabelSelector['requirements'];
  /** Why a selector did not parse (none of its requirements is then sent), as kube's attributes keep it. */
  fieldSelectorError?: string;
  labelSelectorError?: string;
}

export interface CheckDecision {
  decision: 'allow' | 'deny' | 'no-opinion';
  reason?: string;
}

/** The server's Authorizer fits: an answer now or later; a thrown or rejected one is an errored decision. */
export interface CheckAuthorizer {
  authorize(check: AuthorizationCheck): CheckDecision | Promise<CheckDecision>;
}

export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

/** Thrown by a check whose answer is still on its way (the evaluation is run again). */
class PendingCheck extends Error {
  constructor() {
    super('authorization check pending');
  }
}

/** The answers of one authorizer, asked and known, shared by the values built from it. */
class Answers {
  readonly authorizer: CheckAuthorizer;
  readonly selectors: boolean;
  readonly known = new Map<string, CelDecision>();
  readonly pending = new Map<string, Promise<CelDecision>>();
  constructor(
    authorizer: CheckAuthorizer,
    selectors: boolean,
  ) {
    this.authorizer = authorizer;
    this.selectors = selectors;
  }

  decide(check: AuthorizationCheck): CelDecision {
    const key = keyOf(check);
    const known = this.known.get(key);
    if (known !== undefined) return known;
    let answer: CheckDecision | Promise<CheckDecision>;
    try {
      answer = this.authorizer.authorize(check);
    } catch (e) {
      return this.remember(key, erroredDecision(e));
    }
    if (!(answer instanceof Promise)) return this.remember(key, decisionOf(answer));
    if (!this.pending.has(key)) this.pending.set(key, answer.then(decisionOf, erroredDecision));
    throw new PendingCheck();
  }

  private remember(key: string, d: CelDecision): CelDecision {
    this.known.set(key, d);
    return d;
  }

  /** Waits for every pending answer; whether there was any. */
  async settle(): Promise<boolean> {
    if (this.pending.size === 0) return false;
    const waiting = [...this.pending];
    this.pending.clear();
    for (const [key, p] of waiting) this.known.set(key, await p);
    return true;
  }
}

function keyOf(c: AuthorizationCheck): string {
  const i = c.info;
  return JSON.stringify([c.user.name, c.user.uid ?? '', c.user.groups, c.user.extra ?? {}, i.isResourceRequest, i.path, i.verb, i.apiGroup, i.resource, i.subresource, i.namespace, i.name, c.fieldSelector ?? null, c.labelSelector ?? null, c.fieldSelectorError ?? null, c.labelSelectorError ?? null]);
}

export class CelDecision {
  readonly decision: CheckDecision['decision'];
  readonly reason: string;
  readonly error?: string;
  constructor(
    decision: CheckDecision['decision'],
    reason: string,
    error?: string,
  ) {
    this.decision = decision;
    this.reason = reason;
    this.error = error;
  }
}

const decisionOf = (d: CheckDecision): CelDecision => new CelDecision(d.decision, d.reason ?? '');
const erroredDecision = (e: unknown): CelDecision => new CelDecision('no-opinion', '', e instanceof Error ? e.message : String(e));

/** The value of the `authorizer` variable: checks as `user`. */
export class CelAuthorizer {
  readonly answers: Answers;
  readonly user: UserInfo;
  constructor(
    answers: Answers,
    user: UserInfo,
  ) {
    this.answers = answers;
    this.user = user;
  }
}

export class CelPathCheck {
  readonly authorizer: CelAuthorizer;
  readonly path: string;
  constructor(
    authorizer: CelAuthorizer,
    path: string,
  ) {
    this.authorizer = authorizer;
    this.path = path;
  }
}

export class CelGroupCheck {
  readonly authorizer: CelAuthorizer;
  readonly group: string;
  constructor(
    authorizer: CelAuthorizer,
    group: string,
  ) {
    this.authorizer = authorizer;
    this.group = group;
  }
}

export class CelResourceCheck {
  readonly groupCheck: CelGroupCheck;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly fieldSelector: string;
  readonly labelSelector: string;
  constructor(
    groupCheck: CelGroupCheck,
    resource: string,
    subresource = '',
    namespace = '',
    name = '',
    fieldSelector = '',
    labelSelector = '',
  ) {
    this.groupCheck = groupCheck;
    this.resource = resource;
    this.subresource = subresource;
    this.namespace = namespace;
    this.name = name;
    this.fieldSelector = fieldSelector;
    this.labelSelector = labelSelector;
  }
  with(change: Partial<Pick<CelResourceCheck, 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector'>>): CelResourceCheck {
    const c = { ...this, ...change };
    return new CelResourceCheck(this.groupCheck, this.resource, c.subresource, c.namespace, c.name, c.fieldSelector, c.labelSelector);
  }
}


function resourceCheck(r: CelResourceCheck, verb: string): AuthorizationCheck {
  const a = r.groupCheck.authorizer;
  const info = resourceCheckInfo({ verb, apiGroup: r.groupCheck.group, apiVersion: '*', namespace: r.namespace, resource: r.resource, subresource: r.subresource, name: r.name });
  const check: AuthorizationCheck = { user: a.user, info };
  if (a.answers.selectors) {
    if (r.fieldSelector) {
      const p = parsed(() => parseFieldSelector(r.fieldSelector).requirements);
      if ('error' in p) check.fieldSelectorError = p.error;
      else check.fieldSelector = p.value;
    }
    if (r.labelSelector) {
      const p = parsed(() => parseLabelSelector(r.labelSelector).requirements);
      if ('error' in p) check.labelSelectorError = p.error;
      else check.labelSelector = p.value;
    }
  }
  return check;
}

function parsed<T>(parse: () => T): { value: T } | { error: string } {
  try {
    return { value: parse() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** A service account's user, as the service-account authenticator makes it. */
function serviceAccountUser(namespace: string, name: string): UserInfo {
  return { name: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
}

export interface AuthorizerLibraryOptions {
  /** The AuthorizeWithSelectors feature gate: `fieldSelector` and `labelSelector` exist. */
  selectors?: boolean;
}

/** The library, for an environment's extensions: its types, functions and the `authorizer` variable. */
export function authorizerLibrary(options: AuthorizerLibraryOptions = {}): CelExtension {
  return {
    name: 'kubernetes.authz',
    register: (r) => registerAuthz(r, options.selectors === true),
    variables: [{ name: 'authorizer', type: AUTHORIZER_TYPE }],
  };
}

function registerAuthz(r: Registrar, selectors: boolean): void {
  r.env.registerType(AUTHORIZER_TYPE, CelAuthorizer);
  r.env.registerType(PATH_CHECK, CelPathCheck);
  r.env.registerType(GROUP_CHECK, CelGroupCheck);
  r.env.registerType(RESOURCE_CHECK, CelResourceCheck);
  r.env.registerType(DECISION, CelDecision);
  r.fn(`${AUTHORIZER_TYPE}.path(string): ${PATH_CHECK}`, (a: CelAuthorizer, path: string) => {
    if (!path.trim()) throw celError('path must not be empty');
    return new CelPathCheck(a, path);
  });
  r.fn(`${AUTHORIZER_TYPE}.group(string): ${GROUP_CHECK}`, (a: CelAuthorizer, group: string) => new CelGroupCheck(a, group));
  r.fn(`${AUTHORIZER_TYPE}.serviceAccount(string, string): ${AUTHORIZER_TYPE}`, (a: CelAuthorizer, namespace: string, name: string) => {
    if (dns1123Subdomain(name).length) throw celError('Invalid service account name');
    if (dns1123Label(namespace).length) throw celError('Invalid service account namespace');
    return new CelAuthorizer(a.answers, serviceAccountUser(namespace, name));
  });
  r.fn(`${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`, (g: CelGroupCheck, resource: string) => {
    if (!resource.trim()) throw celError('resource must not be empty');
    return new CelResourceCheck(g, resource);
  });
  r.fn(`${RESOURCE_CHECK}.subresource(string): ${RESOURCE_CHECK}`, (c: CelResourceCheck, subresource: string) => c.with({ subresource }));
  r.fn(`${RESOURCE_CHECK}.namespace(string): ${RESOURCE_CHECK}`, (c: CelResourceCheck, namespace: string) => c.with({ namespace }));
  r.fn(`${RESOURCE_CHECK}.name(string): ${RESOURCE_CHECK}`, (c: CelResourceCheck, name: string) => c.with({ name }));
  if (selectors) {
    r.fn(`${RESOURCE_CHECK}.fieldSelector(string): ${RESOURCE_CHECK}`, (c: CelResourceCheck, fieldSelector: string) => c.with({ fieldSelector }));
    r.fn(`${RESOURCE_CHECK}.labelSelector(string): ${RESOURCE_CHECK}`, (c: CelResourceCheck, labelSelector: string) => c.with({ labelSelector }));
  }
  r.fn(`${PATH_CHECK}.check(string): ${DECISION}`, (p: CelPathCheck, verb: string) => p.authorizer.answers.decide({ user: p.authorizer.user, info: pathCheckInfo(p.path, verb) }));
  r.fn(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (c: CelResourceCheck, verb: string) => c.groupCheck.authorizer.answers.decide(resourceCheck(c, verb)));
  r.fn(`${DECISION}.allowed(): bool`, (d: CelDecision) => d.decision === 'allow');
  r.fn(`${DECISION}.reason(): string`, (d: CelDecision) => d.reason);
  r.fn(`${DECISION}.errored(): bool`, (d: CelDecision) => d.error !== undefined);
  r.fn(`${DECISION}.error(): string`, (d: CelDecision) => d.error ?? '');
}

/**
 * The value of the `authorizer` variable: checks made as `user` through `authorizer`. Answers are
 * remembered for the value's life (one request's expressions), so ask for a new one per request.
 */
export function withAuthorizer(authorizer: CheckAuthorizer, user: UserInfo, options: AuthorizerLibraryOptions = {}): CelAuthorizer {
  return new CelAuthorizer(new Answers(authorizer, options.selectors === true), user);
}

/**
 * Evaluates `program` whose activation binds authorizer values, waiting for the authorizer's
 * answers (see the top of this file). Each run before the last is bounded by the evaluation's
 * limit (`costLimit`, else what the budget allows) and charges nothing; the last runs with
 * `options` as given.
 */
export async function evaluateWithAuthorizer(program: CelProgram, activation: Record<string, unknown>, options: EvaluateOptions = {}): Promise<EvaluationResult> {
  const answers = Object.values(activation).flatMap((v) => (v instanceof CelAuthorizer ? [v.answers] : []));
  if (answers.length === 0) return program.evaluate(activation, options);
  const limit = options.costLimit ?? options.budget?.nextLimit();
  const probe: EvaluateOptions = limit === undefined ? {} : { costLimit: Math.max(limit, 0) };
  for (;;) {
    let result: EvaluationResult | undefined;
    let failure: unknown;
    try {
      result = program.evaluate(activation, probe);
    } catch (e) {
      failure = e;
    }
    let waited = false;
    for (const a of answers) if (await a.settle()) waited = true;
    if (waited) continue;
    // Every answer was known: this run was the evaluation. With a budget it runs once more, to be
    // charged to it.
    if (options.budget !== undefined) return program.evaluate(activation, options);
    if (result !== undefined) return result;
    throw failure;
  }
}
