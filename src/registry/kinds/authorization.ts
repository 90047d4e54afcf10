// The access reviews of the authorization group: SubjectAccessReview (may this user do that?),
// LocalSubjectAccessReview (the same, inside one namespace), SelfSubjectAccessReview (may I?) and
// SelfSubjectRulesReview (what may I do in this namespace?). Each is answered on create by the
// server's authorizer and stored nowhere, as kube-apiserver serves them; the checks and messages
// are those of its authorization validation and REST storage.

import type { Naming } from '../../naming.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { Schema } from '../../machinery/schema.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { parseFieldSelector, parseLabelSelector } from '../../machinery/selectors.ts';
import { errors } from '../../machinery/status.ts';
import { pathCheckInfo, resourceCheckInfo, type RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';
import type { KindDefinition } from '../definition.ts';
import { arr, bool, obj, objectSchema, str } from '../schemas.ts';

/** A selector requirement of a review, in object form (metav1 Field/LabelSelectorRequirement). */
export interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** What a review asks about, besides the user: the resource or path, and any selectors it names. */
export interface ReviewAttributes {
  info: RequestInfo;
  /** Field selector requirements (`field`, `=`/`!=`, `value`), when the review gave a usable one. */
  fieldSelector?: { field: string; op: '=' | '!='; value: string }[];
  /** Label selector requirements as written, when the review gave a usable one. */
  labelSelector?: SelectorRequirement[];
}

/** A SubjectAccessReview status, as kube-apiserver fills it. */
export interface AccessReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** What the server's rule resolvers say a user may do in a namespace (SubjectRulesReviewStatus). */
export interface RulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  evaluationError?: string;
}

/** The server's authorizer and rule resolvers, as the review kinds ask them. */
export interface AccessReviewer {
  authorize(user: UserInfo, attrs: ReviewAttributes): Promise<AccessReviewStatus>;
  rulesFor(user: UserInfo, namespace: string): Promise<RulesReviewStatus>;
}

// ---- the wire shapes ----

interface SelectorAttributes {
  rawSelector?: string;
  requirements?: SelectorRequirement[];
}

interface WireResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  fieldSelector?: SelectorAttributes;
  labelSelector?: SelectorAttributes;
}

interface WireNonResourceAttributes {
  path?: string;
  verb?: string;
}

interface ReviewSpec {
  resourceAttributes?: WireResourceAttributes;
  nonResourceAttributes?: WireNonResourceAttributes;
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

// ---- schemas ----

const strings = (description: string): Schema => arr(str(), { 'x-kubernetes-list-type': 'atomic', description });

const requirementSchema: Schema = obj(
  {
    key: str({ description: 'The key (a field path or a label) the requirement applies to.' }),
    operator: str({ description: 'How the key relates to the values: In, NotIn, Exists or DoesNotExist.' }),
    values: strings('The values; non-empty for In and NotIn, empty for Exists and DoesNotExist.'),
  },
  { required: ['key', 'operator'], description: 'A selector requirement: a key, an operator and values.', typeDescription: 'A selector requirement: a key, an operator and values.' },
);

const selectorAttributesSchema = (what: string): Schema =>
  obj(
    {
      rawSelector: str({ description: `The ${what} selector as a list query parameter spells it. Not together with requirements.` }),
      requirements: arr(requirementSchema, { 'x-kubernetes-list-type': 'atomic', description: `The ${what} selector as parsed requirements. Not together with rawSelector.` }),
    },
    { description: `The ${what} selector of a list or watch being checked: authorizers may allow a narrower request than the whole collection.`, typeDescription: `A ${what} selector, raw or parsed, of an access review.` },
  );

const resourceAttributesSchema = obj(
  {
    namespace: str({ description: 'The namespace of the action; empty for cluster-scoped resources, or for all namespaces of a namespaced one (list and watch).' }),
    verb: str({ description: 'The resource API verb: get, list, watch, create, update, patch, delete, deletecollection, or a special one such as bind or escalate; "*" means all.' }),
    group: str({ description: 'The API group of the resource; "*" means all.' }),
    version: str({ description: 'The API version of the resource; "*" means all.' }),
    resource: str({ description: 'One of the existing resource types; "*" means all.' }),
    subresource: str({ description: 'One of the existing subresources; "" means none.' }),
    name: str({ description: 'The name of the resource being asked about (get, update, delete); "" means all.' }),
    fieldSelector: selectorAttributesSchema('field'),
    labelSelector: selectorAttributesSchema('label'),
  },
  { description: 'The resource request being checked.', typeDescription: 'The attributes of a resource request, as the authorizers see them.' },
);

const nonResourceAttributesSchema = obj(
  {
    path: str({ description: 'The URL path of the request.' }),
    verb: str({ description: 'The standard HTTP verb, lower case.' }),
  },
  { description: 'The non-resource request being checked (a path such as /healthz).', typeDescription: 'The attributes of a request for a path that is not a resource.' },
);

const subjectSpecSchema = (self: boolean): Schema =>
  obj(
    {
      resourceAttributes: resourceAttributesSchema,
      nonResourceAttributes: nonResourceAttributesSchema,
      ...(self
        ? {}
        : {
            user: str({ description: 'The user to check. Either user or groups is required.' }),
            groups: strings('The groups to check.'),
            extra: { type: 'object', additionalProperties: arr(str()), description: 'Extra information of the user, as an authenticator gives it.' },
            uid: str({ description: 'The uid of the user.' }),
          }),
    },
    { description: 'What to check: exactly one of resourceAttributes and nonResourceAttributes.', typeDescription: self ? 'The action the requesting user asks about.' : 'The user and the action asked about.' },
  );

const accessStatusSchema = obj(
  {
    allowed: { ...bool(), description: 'Whether the action is allowed.' },
    denied: { ...bool(), description: 'Whether an authorizer denied the action outright. allowed false and denied false means no authorizer had an opinion.' },
    reason: str({ description: 'Why the action is allowed or denied, as the authorizers say.' }),
    evaluationError: str({ description: 'An error met while checking; the answer may still stand (an authorizer can allow despite another failing).' }),
  },
  { description: 'Filled in by the server: the authorizers’ answer.', typeDescription: 'The result of an access review.' },
);

const rulesStatusSchema = obj(
  {
    resourceRules: arr(
      obj({
        verbs: strings('The verbs allowed.'),
        apiGroups: strings('The API groups.'),
        resources: strings('The resources.'),
        resourceNames: strings('The names the rule is limited to; empty means all.'),
      }, { description: 'Resource actions a user may perform.', typeDescription: 'Resource actions a user may perform.' }),
      { 'x-kubernetes-list-type': 'atomic', description: 'The resource actions allowed. The list is not complete when incomplete is true.' },
    ),
    nonResourceRules: arr(obj({ verbs: strings('The verbs allowed.'), nonResourceURLs: strings('The paths; a trailing * matches any suffix.') }, { description: 'Non-resource actions a user may perform.', typeDescription: 'Non-resource actions a user may perform.' }), {
      'x-kubernetes-list-type': 'atomic',
      description: 'The non-resource actions allowed.',
    }),
    incomplete: { ...bool(), description: 'True when an authorizer cannot list its rules (a webhook): more may be allowed than the lists say.' },
    evaluationError: str({ description: 'An error met while listing the rules.' }),
  },
  { description: 'Filled in by the server: what the user may do.', typeDescription: 'The result of a rules review: the actions a user may perform in a namespace.' },
);

// ---- validation (kube's pkg/apis/authorization/validation) ----

function validateSelector(sel: SelectorAttributes | undefined, path: string): FieldError[] {
  if (!sel) return [];
  const errs: FieldError[] = [];
  const reqs = sel.requirements ?? [];
  if (sel.rawSelector && reqs.length) errs.push(fieldError.invalid(child(path, 'rawSelector'), sel.rawSelector, 'may not specified at the same time as requirements'));
  if (!sel.rawSelector && !reqs.length) errs.push(fieldError.required(child(path, 'requirements'), `when ${path} is specified, requirements or rawSelector is required`));
  // Unknown operators are allowed: a newer client may know operators this server does not.
  reqs.forEach((r, i) => {
    const at = `${child(path, 'requirements')}[${i}]`;
    if (!r.key) errs.push(fieldError.required(child(at, 'key'), 'must be specified'));
    const values = r.values ?? [];
    if ((r.operator === 'In' || r.operator === 'NotIn') && !values.length) errs.push(fieldError.required(child(at, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length) errs.push(fieldError.forbidden(child(at, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  });
  return errs;
}

function validateSpec(spec: ReviewSpec, self: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if (r && n) errs.push(fieldError.invalid('spec.nonResourceAttributes', goNonResource(n), 'cannot be specified in combination with resourceAttributes'));
  // Go prints a nil pointer as "null".
  if (!r && !n) errs.push(fieldError.invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (!self && !spec.user && !spec.groups?.length) errs.push(fieldError.invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified'));
  if (r) {
    errs.push(...validateSelector(r.fieldSelector, 'spec.resourceAttributes.fieldSelector'));
    errs.push(...validateSelector(r.labelSelector, 'spec.resourceAttributes.labelSelector'));
  }
  return errs;
}

/** How Go prints the internal NonResourceAttributes struct in an error (JSON of its untagged fields). */
const goNonResource = (n: WireNonResourceAttributes): Record<string, string> => ({ Path: n.path ?? '', Verb: n.verb ?? '' });

/** How Go prints ObjectMeta in an error: its JSON, where creationTimestamp is always written. */
function goMeta(o: KObject): Record<string, unknown> {
  const { name, generateName, namespace, ...rest } = o.metadata as Record<string, unknown>;
  const { uid, resourceVersion, generation, ...more } = rest;
  delete more.creationTimestamp;
  return { name, generateName, namespace, uid, resourceVersion, generation, creationTimestamp: null, ...more };
}

/** Whether metadata has anything but `allowed` keys (kube: metadata must be empty). */
function metadataIsEmpty(o: KObject, allowed: readonly string[] = []): boolean {
  const meta = o.metadata as Record<string, unknown>;
  return Object.entries(meta).every(([k, v]) => k === 'managedFields' || allowed.includes(k) || v === undefined || v === null || v === '' || (typeof v === 'object' && Object.keys(v).length === 0));
}

// ---- attributes (kube's ResourceAttributesFrom, with selectors) ----

const FIELD_OPS: Record<string, '=' | '!='> = { In: '=', NotIn: '!=' };
const LABEL_OPS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** The selector a review names, and the evaluation error for a part that could not be read. */
function readSelectors(r: WireResourceAttributes): { attrs: Omit<ReviewAttributes, 'info'>; errors: string[] } {
  const attrs: Omit<ReviewAttributes, 'info'> = {};
  const errs: string[] = [];
  const fs = r.fieldSelector;
  if (fs) {
    let ok: ReviewAttributes['fieldSelector'];
    let failed = false;
    if (fs.rawSelector) {
      try {
        ok = parseFieldSelector(fs.rawSelector).requirements.map((q) => ({ field: q.field, op: q.op, value: q.value }));
      } catch {
        failed = true;
      }
    }
    if (fs.requirements?.length) {
      ok = [];
      failed = false;
      for (const q of fs.requirements) {
        const values = q.values ?? [];
        const op = FIELD_OPS[q.operator];
        if (values.length > 1 || !op || values.length !== 1) failed = true;
        else ok.push({ field: q.key, op, value: values[0]! });
      }
    }
    if (ok?.length) attrs.fieldSelector = ok;
    if (failed) errs.push(`spec.resourceAttributes.fieldSelector ${ok?.length ? 'partially ' : ''}ignored due to parse error`);
  }
  const ls = r.labelSelector;
  if (ls) {
    let ok: SelectorRequirement[] | undefined;
    let failed = false;
    if (ls.rawSelector) {
      try {
        ok = parseLabelSelector(ls.rawSelector).requirements.map((q) => ({ key: q.key, operator: q.operator, values: [...q.values] }));
      } catch {
        failed = true;
      }
    }
    if (ls.requirements?.length) {
      ok = [];
      failed = false;
      for (const q of ls.requirements) {
        if (!LABEL_OPS.has(q.operator)) failed = true;
        else ok.push({ key: q.key, operator: q.operator, values: [...(q.values ?? [])] });
      }
    }
    if (ok?.length) attrs.labelSelector = ok;
    if (failed) errs.push(`spec.resourceAttributes.labelSelector ${ok?.length ? 'partially ' : ''}ignored due to parse error`);
  }
  return { attrs, errors: errs };
}

function reviewAttributes(spec: ReviewSpec): { attrs: ReviewAttributes; errors: string[] } {
  const r = spec.resourceAttributes;
  if (r) {
    const { attrs, errors: errs } = readSelectors(r);
    const info = resourceCheckInfo({ verb: r.verb ?? '', apiGroup: r.group ?? '', apiVersion: r.version || '*', namespace: r.namespace, resource: r.resource ?? '', subresource: r.subresource, name: r.name });
    return { attrs: { ...attrs, info }, errors: errs };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { attrs: { info: pathCheckInfo(n.path ?? '', n.verb ?? '') }, errors: [] };
}

async function decide(reviewer: AccessReviewer | undefined, user: UserInfo, spec: ReviewSpec): Promise<Record<string, unknown>> {
  const { attrs, errors: selectorErrors } = reviewAttributes(spec);
  const s: AccessReviewStatus = reviewer ? await reviewer.authorize(user, attrs) : { allowed: false };
  const evaluationError = [...(s.evaluationError ? [s.evaluationError] : []), ...selectorErrors].join('; ');
  return {
    allowed: s.allowed,
    ...(s.denied ? { denied: true } : {}),
    ...(s.reason ? { reason: s.reason } : {}),
    ...(evaluationError ? { evaluationError } : {}),
  };
}

// ---- the kinds ----

const reviewKind = (naming: Naming, kind: string, resource: string, namespaced: boolean, schema: Schema, review: KindDefinition['review']): KindDefinition => ({
  group: naming.group('authorization'),
  version: 'v1',
  kind,
  resource,
  singular: resource.replace(/s$/, ''),
  namespaced,
  verbs: ['create'],
  nameRule: 'path-segment',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  schema,
  review,
  strategy: {},
});

function invalid(naming: Naming, kind: string, errs: FieldError[]): void {
  if (errs.length) throw errors.invalid(naming.group('authorization'), kind, '', errs);
}

const specOf = (o: KObject): ReviewSpec => (o.spec ?? {}) as ReviewSpec;

export function subjectAccessReviewDefinition(naming: Naming, reviewer: AccessReviewer | undefined): KindDefinition {
  const schema = objectSchema(
    { spec: subjectSpecSchema(false), status: accessStatusSchema },
    'Checks whether a user or group may perform an action. Answered by the server’s authorizers; nothing is stored.',
  );
  return reviewKind(naming, 'SubjectAccessReview', 'subjectaccessreviews', false, schema, async (o) => {
    const spec = specOf(o);
    const errs = validateSpec(spec, false);
    if (!metadataIsEmpty(o)) errs.push(fieldError.invalid('metadata', goMeta(o), 'must be empty'));
    invalid(naming, 'SubjectAccessReview', errs);
    const user: UserInfo = { name: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid ? { uid: spec.uid } : {}), ...(spec.extra ? { extra: spec.extra } : {}) };
    return { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec, status: await decide(reviewer, user, spec) };
  });
}

export function localSubjectAccessReviewDefinition(naming: Naming, reviewer: AccessReviewer | undefined): KindDefinition {
  const schema = objectSchema(
    { spec: subjectSpecSchema(false), status: accessStatusSchema },
    'Checks whether a user or group may perform an action in one namespace: spec.resourceAttributes.namespace must be the namespace of the request. Nothing is stored.',
  );
  return reviewKind(naming, 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, schema, async (o, _requester, namespace) => {
    const spec = specOf(o);
    // As any namespaced create: the namespace of the path, which the body may only repeat.
    if (o.metadata.namespace && o.metadata.namespace !== namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    const metaNamespace = namespace ?? '';
    o = { ...o, metadata: { ...o.metadata, ...(metaNamespace ? { namespace: metaNamespace } : {}) } };
    const errs = validateSpec(spec, false);
    if (!metadataIsEmpty(o, ['namespace'])) errs.push(fieldError.invalid('metadata', goMeta(o), 'must be empty except for namespace'));
    if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? '') !== metaNamespace)
      errs.push(fieldError.invalid('spec.resourceAttributes.namespace', spec.resourceAttributes.namespace ?? '', 'must match metadata.namespace'));
    if (spec.nonResourceAttributes) errs.push(fieldError.invalid('spec.nonResourceAttributes', goNonResource(spec.nonResourceAttributes), 'disallowed on this kind of request'));
    invalid(naming, 'LocalSubjectAccessReview', errs);
    if (!namespace) throw errors.badRequest(`namespace is required on this type: ${namespace ?? ''}`);
    if (namespace !== metaNamespace) throw errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
    const user: UserInfo = { name: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid ? { uid: spec.uid } : {}), ...(spec.extra ? { extra: spec.extra } : {}) };
    return { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec, status: await decide(reviewer, user, spec) };
  });
}

export function selfSubjectAccessReviewDefinition(naming: Naming, reviewer: AccessReviewer | undefined): KindDefinition {
  const schema = objectSchema(
    { spec: subjectSpecSchema(true), status: accessStatusSchema },
    'Checks whether the user making the request may perform an action (kubectl auth can-i). Nothing is stored.',
  );
  return reviewKind(naming, 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, schema, async (o, requester) => {
    const spec = specOf(o);
    const errs = validateSpec(spec, true);
    if (!metadataIsEmpty(o)) errs.push(fieldError.invalid('metadata', goMeta(o), 'must be empty'));
    invalid(naming, 'SelfSubjectAccessReview', errs);
    return { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec, status: await decide(reviewer, requester, spec) };
  });
}

export function selfSubjectRulesReviewDefinition(naming: Naming, reviewer: AccessReviewer | undefined): KindDefinition {
  const schema = objectSchema(
    {
      spec: obj({ namespace: str({ description: 'The namespace to list the rules of.' }) }, { description: 'Where to list the rules.', typeDescription: 'The namespace a rules review lists the rules of.' }),
      status: rulesStatusSchema,
    },
    'Lists what the user making the request may do in a namespace (kubectl auth can-i --list). For display only: authorization decisions are made by access reviews. Nothing is stored.',
  );
  return reviewKind(naming, 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, schema, async (o, requester) => {
    const namespace = (o.spec as { namespace?: string } | undefined)?.namespace ?? '';
    if (!namespace) throw errors.badRequest('no namespace on request');
    const s: RulesReviewStatus = reviewer ? await reviewer.rulesFor(requester, namespace) : { resourceRules: [], nonResourceRules: [], incomplete: true };
    // kube-apiserver answers with the status alone.
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: {},
      spec: {},
      status: { resourceRules: s.resourceRules, nonResourceRules: s.nonResourceRules, incomplete: s.incomplete, ...(s.evaluationError ? { evaluationError: s.evaluationError } : {}) },
    };
  });
}

/** The four review kinds, in kube-apiserver's discovery order. */
export function authorizationKinds(naming: Naming, reviewer: AccessReviewer | undefined): KindDefinition[] {
  return [
    localSubjectAccessReviewDefinition(naming, reviewer),
    selfSubjectAccessReviewDefinition(naming, reviewer),
    selfSubjectRulesReviewDefinition(naming, reviewer),
    subjectAccessReviewDefinition(naming, reviewer),
  ];
}
