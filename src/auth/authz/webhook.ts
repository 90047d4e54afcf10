// The Webhook authorizer: the request's attributes are sent to a remote service as a
// SubjectAccessReview (`<authorization group>/v1` or `v1beta1`), which answers allow, deny or no
// opinion. As kube-apiserver's webhook authorizer:
// - the spec carries the user (name, uid, groups, extra) and either the resource attributes
//   (namespace, verb, group, version, resource, subresource, name) or the non-resource ones
//   (path, verb); v1beta1 names the groups `group`;
// - match conditions (from the configuration file) run first on the v1 spec: one false skips the
//   webhook (no opinion); an error with none false applies the failure policy; all true call it;
// - `denied: true` denies at once (also when `allowed` is set too), `allowed: true` allows,
//   anything else is no opinion, each with the webhook's reason;
// - answers are kept for the authorized or unauthorized TTL (0: not kept), keyed by the whole spec;
//   requests whose attributes are very large are never cached;
// - a call that fails (the service unreachable, an HTTP error, a timeout) or an answer that is no
//   SubjectAccessReview of the version sent is the failure policy's decision: no opinion (the flags'
//   mode, or `NoOpinion`) or deny (`Deny`). Failures are never cached.

import type { CelProgram } from '../../cel/environment.ts';
import { cel } from '../../cel/load.ts';
import { WebhookError, type CallResult, type WebhookClient } from '../../machinery/webhook-client.ts';
import type { Attributes, Authorizer } from './authorizer.ts';

export const SAR_VERSIONS = ['v1', 'v1beta1'] as const;
export type SarVersion = (typeof SAR_VERSIONS)[number];
export type FailurePolicy = 'NoOpinion' | 'Deny';

/** A compiled match condition: its expression (for messages) and its program. */
export interface MatchCondition {
  expression: string;
  program: CelProgram;
}

export interface WebhookAuthorizerConfig {
  /** The authorizer's name (the configuration file's), for log lines. */
  name: string;
  client: WebhookClient;
  /** The authorization group (`authorization.orch.io`, or `authorization.k8s.io`). */
  group: string;
  version: SarVersion;
  /** How long an allow is kept; 0: not kept. */
  authorizedTtlMs: number;
  /** How long anything else (deny, no opinion) is kept; 0: not kept. */
  unauthorizedTtlMs: number;
  failurePolicy: FailurePolicy;
  matchConditions?: readonly MatchCondition[];
  log?: (message: string) => void;
  /** The most answers kept (default 8192, kube's); the oldest go first. */
  cacheSize?: number;
  /** Where fail-open decisions and match condition evaluations are reported (round-trips: the client's `onAttempt`). */
  metrics?: AuthorizationWebhookMetrics;
}

/** kube-apiserver's authorization webhook metrics, by authorizer name. */
export interface AuthorizationWebhookMetrics {
  /** One round-trip to the webhook (apiserver_authorization_webhook_evaluations_total, _duration_seconds). */
  evaluation(name: string, result: CallResult, seconds: number): void;
  /** A failed call made no opinion by the failure policy (…_evaluations_fail_open_total); `result` is the last round-trip's. */
  failOpen(name: string, result: Exclude<CallResult, 'success'>): void;
  /** The match conditions of one request evaluated (apiserver_authorization_match_condition_*). */
  matchConditions(name: string, seconds: number, outcome: 'matched' | 'excluded' | 'error'): void;
}

/** kube's limit on the attributes a requester controls beyond which an answer is not cached. */
const MAX_CACHED_ATTRIBUTES = 10_000;
const DEFAULT_CACHE_SIZE = 8192;

type Decision = Awaited<ReturnType<Authorizer['authorize']>>;

interface ReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
}

/** The v1 SubjectAccessReviewSpec of a request, as kube-apiserver builds it. */
export interface SarSpec {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

/** Go's omitempty: empty strings, lists and maps are left out. */
function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

export function sarSpec({ user, info }: Attributes): SarSpec {
  const spec: SarSpec = info.isResourceRequest
    ? {
        resourceAttributes: compact({
          namespace: info.namespace,
          verb: info.verb,
          group: info.apiGroup,
          version: info.apiVersion,
          resource: info.resource,
          subresource: info.subresource,
          name: info.name,
        }),
      }
    : { nonResourceAttributes: compact({ path: info.path, verb: info.verb }) };
  return compact({ ...spec, user: user.name, groups: user.groups, extra: user.extra, uid: user.uid });
}

/** The spec as the version sent names its fields (v1beta1: `group` for the groups). */
function specFor(version: SarVersion, spec: SarSpec): Record<string, unknown> {
  if (version === 'v1') return { ...spec };
  const { groups, ...rest } = spec;
  return groups ? { ...rest, group: groups } : rest;
}

const controlledSize = ({ info }: Attributes) =>
  info.namespace.length + info.verb.length + info.apiGroup.length + info.apiVersion.length + info.resource.length + info.subresource.length + info.name.length + (info.isResourceRequest ? 0 : info.path.length);

let requestEnv: ReturnType<typeof import('../../cel/uses.ts').authorizationRequestEnvironment> | undefined;
/** The per-expression cost limit of match conditions (set with their environment, which compiled them). */
let perCallLimit = 0;
/** The `request` environment of match conditions (built once; the expression language is loaded: loadCel). */
export const matchConditionEnvironment = () => (requestEnv ??= requestEnvironment());

function requestEnvironment(): NonNullable<typeof requestEnv> {
  const { cost, uses } = cel();
  perCallLimit = cost.DEFAULT_PER_CALL_LIMIT;
  return uses.authorizationRequestEnvironment();
}

export function webhookAuthorizer(c: WebhookAuthorizerConfig): Authorizer & { close(): void } {
  const apiVersion = `${c.group}/${c.version}`;
  const cacheSize = c.cacheSize ?? DEFAULT_CACHE_SIZE;
  const cache = new Map<string, { status: ReviewStatus; until: number }>();
  const inFlight = new Map<string, Promise<ReviewStatus>>();
  const onError = (reason: string): Decision => (c.failurePolicy === 'Deny' ? { decision: 'deny', reason } : { decision: 'no-opinion' });

  const remember = (key: string, status: ReviewStatus) => {
    const ttl = status.allowed ? c.authorizedTtlMs : c.unauthorizedTtlMs;
    if (ttl <= 0) return;
    if (cache.size >= cacheSize) {
      const now = Date.now();
      for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
      while (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, { status, until: Date.now() + ttl });
  };

  /** Whether the webhook is to be asked: true, false (a condition is false), or the evaluation error. */
  const matches = (spec: SarSpec): true | false | Error => {
    const conditions = c.matchConditions ?? [];
    if (!conditions.length) return true;
    const activation = matchConditionEnvironment().activation({ request: spec });
    let failure: Error | undefined;
    for (const m of conditions) {
      try {
        const v = m.program.evaluate(activation, { costLimit: perCallLimit }).value;
        if (v === false) return false;
        if (v !== true) failure ??= new Error(`matchCondition ${JSON.stringify(m.expression)} did not evaluate to a boolean`);
      } catch (e) {
        failure ??= e instanceof Error ? e : new Error(String(e));
      }
    }
    return failure ?? true;
  };

  const review = async (spec: SarSpec): Promise<ReviewStatus> => {
    const answer = await c.client.post({ apiVersion, kind: 'SubjectAccessReview', metadata: {}, spec: specFor(c.version, spec), status: { allowed: false } });
    return decodeStatus(answer, apiVersion);
  };

  return {
    async authorize(attrs) {
      const spec = sarSpec(attrs);
      const started = c.metrics && c.matchConditions?.length ? performance.now() : undefined;
      const m = matches(spec);
      if (started !== undefined) c.metrics!.matchConditions(c.name, (performance.now() - started) / 1000, m === true ? 'matched' : m === false ? 'excluded' : 'error');
      if (m === false) return { decision: 'no-opinion' };
      if (m !== true) {
        c.log?.(`authorizer ${c.name}: failed to evaluate matchConditions: ${m.message}`);
        return onError(`failed to evaluate matchConditions: ${m.message}`);
      }
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      let status: ReviewStatus;
      if (hit && hit.until > Date.now()) status = hit.status;
      else {
        if (hit) cache.delete(key);
        let pending = inFlight.get(key);
        if (!pending) {
          pending = review(spec).finally(() => inFlight.delete(key));
          inFlight.set(key, pending);
        }
        try {
          status = await pending;
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          c.log?.(`Failed to make webhook authorizer request: ${message}`);
          if (c.failurePolicy === 'NoOpinion') c.metrics?.failOpen(c.name, e instanceof WebhookError ? e.result : 'error');
          return onError(`failed to make webhook authorizer request: ${message}`);
        }
        if (controlledSize(attrs) < MAX_CACHED_ATTRIBUTES && !cache.has(key)) remember(key, status);
      }
      if (status.denied) return { decision: 'deny', reason: status.reason };
      if (status.allowed) return status.reason ? { decision: 'allow', reason: status.reason } : { decision: 'allow' };
      return status.reason ? { decision: 'no-opinion', reason: status.reason } : { decision: 'no-opinion' };
    },
    close: () => c.client.close(),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The status of the answer, which must be a SubjectAccessReview of `apiVersion`; mistyped fields are refused as Go's decoding refuses them. */
function decodeStatus(answer: unknown, apiVersion: string): ReviewStatus {
  if (!isObject(answer)) throw new Error('the webhook did not answer with a JSON object');
  if (answer.apiVersion !== apiVersion || answer.kind !== 'SubjectAccessReview')
    throw new Error(`the webhook answered with ${JSON.stringify(answer.apiVersion ?? '')}, kind ${JSON.stringify(answer.kind ?? '')}: expected ${JSON.stringify(apiVersion)}, kind "SubjectAccessReview"`);
  const status = answer.status ?? {};
  if (!isObject(status)) throw new Error("the webhook's SubjectAccessReview has a status of the wrong type");
  const field = <T>(name: string, type: 'boolean' | 'string', fallback: T): T => {
    const v = status[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== type) throw new Error(`the webhook's SubjectAccessReview has a status.${name} of the wrong type`);
    return v as T;
  };
  return { allowed: field('allowed', 'boolean', false), denied: field('denied', 'boolean', false), reason: field('reason', 'string', '') };
}
