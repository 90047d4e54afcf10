// CustomResourceDefinition (apiextensions/v1, cluster-scoped): a kind defined at run time. Its
// object is validated here as kube-apiserver's apiextensions validation does; the CRD controller
// (src/controllers/custom-resources.ts) keeps its status and serves the kind it defines, built by
// src/registry/custom-resource.ts.

import { X509Certificate } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Naming } from '../../naming.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1035Label, dns1123Subdomain, nowTimestamp, type KObject } from '../../machinery/meta.ts';
import { validateConditions, validateImmutable } from '../../machinery/validation.ts';
import type { Schema } from '../../machinery/schema.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { arr, bool, condition, describe, int32, obj, objectMeta, objectSchema, str } from '../schemas.ts';
import { customResourceDefinitionDocs } from './docs/custom-resource-definition.ts';
import { keepStatus, statusSubresource } from './status-subresource.ts';
import { validateCustomResourceSchema } from '../custom-resource-schema.ts';

export interface CrdNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface CrdColumn {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface CrdVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: Record<string, unknown> };
  subresources?: { status?: Record<string, never>; scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: CrdColumn[];
  selectableFields?: { jsonPath?: string }[];
}

export interface CrdClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  caBundle?: string;
}

export interface CrdCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CrdSpec {
  group?: string;
  names?: CrdNames;
  scope?: string;
  versions?: CrdVersion[];
  conversion?: { strategy?: string; webhook?: { conversionReviewVersions?: string[]; clientConfig?: CrdClientConfig } };
  preserveUnknownFields?: boolean;
}

export type CrdObject = KObject & {
  spec?: CrdSpec;
  status?: { conditions?: CrdCondition[]; acceptedNames?: CrdNames; storedVersions?: string[] };
};

const namesSchema = (): Schema =>
  obj({ plural: str(), singular: str(), shortNames: arr(str(), { 'x-kubernetes-list-type': 'atomic' }), kind: str(), listKind: str(), categories: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }, { required: ['plural', 'kind'] });

/** A JSON schema node (JSONSchemaProps): kept whole, validated by the CRD's own rules. */
const jsonSchemaProps = (): Schema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });

const SCOPES = ['Cluster', 'Namespaced'];
const CONVERSION_STRATEGIES = ['None', 'Webhook'];
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'name', 'password'];
/** IsDNS1035Label's problems. */
const dns1035Problems = dns1035Label;

/** IsDNS1035Label's problems, joined as kube-apiserver joins them. */
function dns1035(v: string): string {
  return dns1035Problems(v).join(',');
}

/** The finalizer a deleted CRD keeps until its custom resources are gone. */
export const cleanupFinalizer = (n: Naming): string => `customresourcecleanup.${n.group('apiextensions')}`;

/** Sets (or replaces) the condition of its type, keeping lastTransitionTime when the status is unchanged. */
export function setCrdCondition(crd: CrdObject, c: Omit<CrdCondition, 'lastTransitionTime'>, now: string): void {
  const status = (crd.status ??= {});
  const list = status.conditions ?? [];
  const old = list.find((x) => x.type === c.type);
  const next = { ...c, lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  status.conditions = old ? list.map((x) => (x === old ? next : x)) : [...list, next];
}

export function customResourceDefinitionDefinition(n: Naming): KindDefinition {
  const finalizer = cleanupFinalizer(n);
  return {
    group: n.group('apiextensions'),
    version: 'v1',
    kind: 'CustomResourceDefinition',
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    namespaced: false,
    verbs: ALL_VERBS,
    // The name is checked against spec by the strategy (`<plural>.<group>`).
    nameRule: 'dns-subdomain',
    // A CRD's schema is checked with its rules compiled and its patterns compiled as RE2.
    validationUsesExpressions: true,
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: describe(objectSchema({
      spec: obj(
        {
          group: str(),
          names: namesSchema(),
          scope: str(),
          versions: arr(
            obj(
              {
                name: str(),
                served: bool(),
                storage: bool(),
                deprecated: bool(),
                deprecationWarning: str(),
                schema: obj({ openAPIV3Schema: jsonSchemaProps() }),
                subresources: obj({ status: { type: 'object' }, scale: obj({ specReplicasPath: str(), statusReplicasPath: str(), labelSelectorPath: str() }) }),
                additionalPrinterColumns: arr(obj({ name: str(), type: str(), format: str(), description: str(), priority: int32(), jsonPath: str() }), { 'x-kubernetes-list-type': 'atomic' }),
                selectableFields: arr(obj({ jsonPath: str() }), { 'x-kubernetes-list-type': 'atomic' }),
              },
              { required: ['name', 'served', 'storage'] },
            ),
            { 'x-kubernetes-list-type': 'atomic' },
          ),
          conversion: obj({
            strategy: str(),
            webhook: obj({
              clientConfig: obj({ url: str(), service: obj({ namespace: str(), name: str(), path: str(), port: int32() }), caBundle: str({ format: 'byte' }) }),
              conversionReviewVersions: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
            }),
          }),
          preserveUnknownFields: bool(),
        },
        { required: ['group', 'names', 'scope', 'versions'] },
      ),
      status: obj({
        conditions: arr(condition(), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
        acceptedNames: namesSchema(),
        storedVersions: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
      }),
    }), customResourceDefinitionDocs),
    subresources: [statusSubresource],
    strategicMergePatch: true,
    strategy: {
      defaults: defaultCrd,
      // As kube-apiserver: a new CRD's status is its storage version alone.
      prepareForCreate(o) {
        const storage = storageVersion(o as CrdObject);
        o.status = { storedVersions: storage ? [storage] : [] };
      },
      prepareForUpdate(o, old) {
        keepStatus(o, old);
        // A new storage version joins the stored versions.
        const crd = o as CrdObject;
        const storage = storageVersion(crd);
        if (!storage) return;
        const status = (crd.status ??= {});
        const stored = (status.storedVersions ??= []);
        if (!stored.includes(storage)) status.storedVersions = [...stored, storage];
      },
      // The first delete marks the CRD terminating and keeps it until its custom resources are
      // deleted (the controller then removes the finalizer), as kube-apiserver's CRD storage does.
      pendingFinalization: (o) => !o.metadata.deletionTimestamp,
      prepareForDelete(o) {
        if (!o.metadata.finalizers?.includes(finalizer)) o.metadata.finalizers = [...(o.metadata.finalizers ?? []), finalizer];
        setCrdCondition(o as CrdObject, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, nowTimestamp());
      },
      validate: (o) => validateCrd(o as CrdObject, n),
      // A write to /status is checked for its status only (ValidateUpdateCustomResourceDefinitionStatus).
      validateUpdate: (o, old, subresource) => (subresource === 'status' ? validateStatus(o as CrdObject, false) : validateCrdUpdate(o as CrdObject, old as CrdObject, n)),
    },
  };
}

/** SetDefaults_CustomResourceDefinitionSpec: singular, listKind, the None conversion. */
function defaultCrd(o: KObject): void {
  const spec = (o as CrdObject).spec;
  if (!spec || typeof spec !== 'object') return;
  const names = spec.names;
  if (names && typeof names.kind === 'string') {
    names.singular ??= names.kind.toLowerCase();
    names.listKind ??= `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  spec.conversion.strategy ??= 'None';
}

export function storageVersion(crd: CrdObject): string | undefined {
  return crd.spec?.versions?.find((v) => v.storage)?.name;
}

/**
 * What a CRD update may keep that a new CRD may not have, as kube-apiserver's validation of an
 * update tightens nothing on what is already stored: a rule of a version whose schema is unchanged
 * may exceed the per-expression cost limit; a kind of schema problem the stored CRD already had
 * (unpruned defaults, non-atomic set items, map-list keys neither required nor defaulted or
 * nullable, unknown types) is not reported; more selectable fields than allowed when they are
 * unchanged; a caBundle while the CRD is not established or the stored one was invalid too;
 * conversion review versions when the stored ones named none this server knows.
 */
interface Leniency {
  unchangedSchemas: ReadonlySet<string>;
  /** The kinds of schema problems (LENIENT_PROBLEMS) the stored CRD has. */
  storedProblems: () => ReadonlySet<string>;
  unchangedSelectableFields: ReadonlySet<string>;
  allowInvalidCaBundle: boolean;
  requireKnownReviewVersion: boolean;
}

const STRICT: Leniency = { unchangedSchemas: new Set(), storedProblems: () => new Set(), unchangedSelectableFields: new Set(), allowInvalidCaBundle: true, requireKnownReviewVersion: true };

/** The kinds of schema problems an update may keep when the stored CRD has them already, by their wording. */
const LENIENT_PROBLEMS: Record<string, (e: FieldError) => boolean> = {
  prunedDefaults: (e) => e.message.endsWith(': must not have unknown fields'),
  atomicSetItems: (e) => e.message.endsWith('must be atomic as item of a list with x-kubernetes-list-type=set'),
  mapListKeys: (e) => e.message.includes('cannot be nullable when x-kubernetes-list-type is') || e.message.includes('this property is in x-kubernetes-list-map-keys'),
  propertyType: (e) => e.type === 'FieldValueNotSupported' && e.field.endsWith('.type'),
};

const problemKind = (e: FieldError): string | undefined => Object.keys(LENIENT_PROBLEMS).find((k) => LENIENT_PROBLEMS[k]!(e));

/** A rule's cost over the per-expression limit (not the CRD's total). */
const perExpressionCost = (e: FieldError): boolean => /: Forbidden: estimated (rule|messageExpression) cost exceeds budget/.test(e.message);

/** ValidateCustomResourceDefinition. */
export function validateCrd(crd: CrdObject, n: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec ?? {};
  const required = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (crd.metadata.name !== required) errs.push(fieldError.invalid('metadata.name', crd.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  errs.push(...validateSpec(spec, 'spec', STRICT));
  errs.push(...validateStatus(crd, true));
  errs.push(...validateApproval(crd, undefined, n));
  return errs;
}

/** ValidateCustomResourceDefinitionUpdate: the create rules (less strict on what is kept), and what may not change. */
export function validateCrdUpdate(crd: CrdObject, old: CrdObject, n: Naming): FieldError[] {
  const established = old.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  const oldVersions = new Map((old.spec?.versions ?? []).map((v) => [v.name, v]));
  const unchanged = (pick: (v: CrdVersion) => unknown) =>
    new Set((crd.spec?.versions ?? []).filter((v) => oldVersions.has(v.name) && isDeepStrictEqual(pick(v), pick(oldVersions.get(v.name)!))).map((v) => v.name ?? ''));
  const oldReview = old.spec?.conversion?.webhook?.conversionReviewVersions ?? [];
  const oldCa = old.spec?.conversion?.webhook?.clientConfig?.caBundle;
  let stored: Set<string> | undefined;
  const leniency: Leniency = {
    unchangedSchemas: unchanged((v) => v.schema),
    storedProblems: () =>
      (stored ??= new Set(
        (old.spec?.versions ?? []).flatMap((v, i) =>
          v.schema?.openAPIV3Schema === undefined ? [] : validateCustomResourceSchema(v.schema.openAPIV3Schema, `spec.versions[${i}]`, { statusSubresource: v.subresources?.status !== undefined, objectMeta }).map(problemKind).filter((k) => k !== undefined),
        ),
      )),
    unchangedSelectableFields: unchanged((v) => v.selectableFields ?? []),
    allowInvalidCaBundle: !established || (oldCa !== undefined && oldCa !== '' && caBundleProblem(oldCa) !== undefined),
    requireKnownReviewVersion: oldReview.length === 0 || oldReview.some((v) => REVIEW_VERSIONS.includes(v)),
  };
  const errs = validateSpec(crd.spec ?? {}, 'spec', leniency);
  if (established) {
    errs.push(...validateImmutable(crd.spec?.scope, old.spec?.scope, 'spec.scope'));
    errs.push(...validateImmutable(crd.spec?.names?.kind, old.spec?.names?.kind, 'spec.names.kind'));
  }
  errs.push(...validateImmutable(crd.spec?.group, old.spec?.group, 'spec.group'));
  errs.push(...validateImmutable(crd.spec?.names?.plural, old.spec?.names?.plural, 'spec.names.plural'));
  errs.push(...validateStatus(crd, true));
  errs.push(...validateApproval(crd, old, n));
  return errs;
}

/**
 * The API review annotation of a CRD in a protected group (the profile's own domains, `k8s.io` and
 * `kubernetes.io` in the kubernetes profile): a URL of the approval, or a reason starting with
 * "unapproved". An update that leaves its state as it was is never refused for it.
 */
function validateApproval(crd: CrdObject, old: CrdObject | undefined, n: Naming): FieldError[] {
  const group = crd.spec?.group ?? '';
  const domains = [...new Set([n.groupSuffix, n.labelDomain])];
  if (!domains.some((d) => group === d || group.endsWith(`.${d}`))) return [];
  const key = `api-approved.${n.labelDomain}`;
  const state = (o: CrdObject) => approvalState(o.metadata.annotations?.[key], key);
  const now = state(crd);
  if (old && state(old).state === now.state) return [];
  const at = `metadata.annotations[${key}]`;
  if (now.state === 'missing') return [fieldError.required(at, now.reason)];
  if (now.state === 'invalid') return [fieldError.invalid(at, crd.metadata.annotations?.[key] ?? '', now.reason)];
  return [];
}

function approvalState(value: string | undefined, key: string): { state: 'missing' | 'bypassed' | 'approved' | 'invalid'; reason: string } {
  if (!value) return { state: 'missing', reason: `protected groups must have approval annotation "${key}", see https://github.com/kubernetes/enhancements/pull/1111` };
  if (value.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: "${value}"` };
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#\s]+/.test(value)) return { state: 'approved', reason: `approved in ${value}` };
  return {
    state: 'invalid',
    reason: `protected groups must have approval annotation "${key}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

/** The status rules (also those of a write to /status): accepted names, stored versions, conditions. */
function validateStatus(crd: CrdObject, storedVersions: boolean): FieldError[] {
  const errs = validateNames(crd.status?.acceptedNames ?? {}, 'status.acceptedNames');
  if (storedVersions) {
    const stored = crd.status?.storedVersions ?? [];
    const path = 'status.storedVersions';
    if (stored.length === 0) errs.push(fieldError.invalid(path, stored, 'must have at least one stored version'));
    else {
      const versions = crd.spec?.versions ?? [];
      for (const v of versions) if (v.storage && v.name && !stored.includes(v.name)) errs.push(fieldError.invalid(path, stored, `must have the storage version ${v.name}`));
      stored.forEach((v, i) => {
        if (!versions.some((x) => x.name === v))
          errs.push(fieldError.invalid(child(path, i), v, `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`));
      });
    }
  }
  errs.push(...validateConditions(crd.status?.conditions, 'status.conditions'));
  return errs;
}

function validateSpec(spec: CrdSpec, at: string, lenient: Leniency): FieldError[] {
  const errs: FieldError[] = [];
  const group = spec.group ?? '';
  if (!group) errs.push(fieldError.required(child(at, 'group')));
  else if (dns1123Subdomain(group).length) errs.push(fieldError.invalid(child(at, 'group'), group, dns1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2) errs.push(fieldError.invalid(child(at, 'group'), group, 'should be a domain with at least one dot'));

  if (!spec.scope) errs.push(fieldError.required(child(at, 'scope')));
  else if (!SCOPES.includes(spec.scope)) errs.push(fieldError.notSupported(child(at, 'scope'), spec.scope, SCOPES));

  const versions = spec.versions ?? [];
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    const vAt = `${at}.versions[${i}]`;
    if (v.storage) storage++;
    const name = v.name ?? '';
    if (seen.has(name)) unique = false;
    seen.add(name);
    const bad = dns1035(name);
    if (bad) errs.push(fieldError.invalid(`${vAt}.name`, name, bad));
    const schema = v.schema?.openAPIV3Schema;
    if (schema === undefined) errs.push(fieldError.required(`${vAt}.schema.openAPIV3Schema`));
    else {
      const unchangedSchema = lenient.unchangedSchemas.has(name);
      const ignore = (e: FieldError): boolean => (unchangedSchema && perExpressionCost(e)) || lenient.storedProblems().has(problemKind(e) ?? '');
      errs.push(...validateCustomResourceSchema(schema, `${vAt}.schema.openAPIV3Schema`, { statusSubresource: v.subresources?.status !== undefined, objectMeta, ignore }));
    }
    if (v.selectableFields?.length) errs.push(...validateSelectableFields(v.selectableFields, schema, `${vAt}.selectableFields`, lenient.unchangedSelectableFields.has(name)));
    if (!v.deprecated && v.deprecationWarning !== undefined) errs.push(fieldError.invalid(`${vAt}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
    else if (v.deprecationWarning !== undefined) {
      if (v.deprecationWarning.length > 256) errs.push(fieldError.invalid(`${vAt}.deprecationWarning`, v.deprecationWarning, 'must be <= 256 characters long'));
      if (v.deprecationWarning.length === 0) errs.push(fieldError.invalid(`${vAt}.deprecationWarning`, v.deprecationWarning, 'must not be an empty string'));
    }
    errs.push(...validateScale(v.subresources?.scale, `${vAt}.subresources`));
    (v.additionalPrinterColumns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${vAt}.additionalPrinterColumns[${j}]`)));
  });
  if (!unique) errs.push(fieldError.invalid(`${at}.versions`, versions, 'must contain unique version names'));
  if (storage !== 1) errs.push(fieldError.invalid(`${at}.versions`, versions, 'must have exactly one version marked as storage version'));

  const names = spec.names ?? {};
  for (const k of ['plural', 'singular', 'kind', 'listKind'] as const) if (!names[k]) errs.push(fieldError.required(`${at}.names.${k}`));
  errs.push(...validateNames(names, `${at}.names`));

  errs.push(...validateConversion(spec.conversion, `${at}.conversion`, lenient));
  if (spec.preserveUnknownFields === true) errs.push(fieldError.invalid(`${at}.preserveUnknownFields`, true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  return errs;
}

/** ValidateCustomResourceDefinitionNames. */
function validateNames(names: CrdNames, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const label = (field: string, v: string | undefined, lower = false, prefix = '') => {
    if (!v) return;
    const bad = dns1035(lower ? v.toLowerCase() : v);
    if (bad) errs.push(fieldError.invalid(`${at}.${field}`, v, prefix + bad));
  };
  label('plural', names.plural);
  label('singular', names.singular);
  label('kind', names.kind, true, 'may have mixed case, but should otherwise match: ');
  label('listKind', names.listKind, true, 'may have mixed case, but should otherwise match: ');
  (names.shortNames ?? []).forEach((s, i) => {
    const bad = dns1035(s);
    if (bad) errs.push(fieldError.invalid(`${at}.shortNames[${i}]`, s, bad));
  });
  if (names.kind && names.kind === names.listKind) errs.push(fieldError.invalid(`${at}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.categories ?? []).forEach((s, i) => {
    const bad = dns1035(s);
    if (bad) errs.push(fieldError.invalid(`${at}.categories[${i}]`, s, bad));
  });
  return errs;
}

/** validateSimpleJSONPath. */
function simpleJsonPath(s: string, at: string): FieldError[] {
  if (s.length === 0) return [fieldError.invalid(at, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldError.invalid(at, s, 'must be a simple json path starting with .')];
  return [];
}

function validateScale(scale: NonNullable<CrdVersion['subresources']>['scale'], at: string): FieldError[] {
  if (!scale) return [];
  const errs: FieldError[] = [];
  const under = (path: string | undefined, field: string, prefixes: string[], where: string) => {
    if (!path) return field.endsWith('labelSelectorPath') ? undefined : errs.push(fieldError.required(`${at}.${field}`));
    const bad = simpleJsonPath(path, `${at}.${field}`);
    if (bad.length) return errs.push(...bad);
    if (!prefixes.some((p) => path.startsWith(p))) errs.push(fieldError.invalid(`${at}.${field}`, path, `should be a json path under ${where}`));
  };
  under(scale.specReplicasPath, 'scale.specReplicasPath', ['.spec.'], '.spec');
  under(scale.statusReplicasPath, 'scale.statusReplicasPath', ['.status.'], '.status');
  under(scale.labelSelectorPath, 'scale.labelSelectorPath', ['.spec.', '.status.'], 'either .spec or .status');
  return errs;
}

/** ValidateCustomResourceColumnDefinition. */
function validateColumn(c: CrdColumn, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldError.required(`${at}.name`));
  if (!c.type) errs.push(fieldError.required(`${at}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(c.type)) errs.push(fieldError.invalid(`${at}.type`, c.type, `must be one of ${COLUMN_TYPES.join(',')}`));
  if (c.format && !COLUMN_FORMATS.includes(c.format)) errs.push(fieldError.invalid(`${at}.format`, c.format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  if (!c.jsonPath) errs.push(fieldError.required(`${at}.JSONPath`));
  else errs.push(...simpleJsonPath(c.jsonPath, `${at}.JSONPath`));
  return errs;
}

/** The ConversionReview versions this server (as kube-apiserver) speaks. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/**
 * validateCustomResourceConversion, with kube-apiserver's field paths (its internal form names
 * `webhook.clientConfig` `webhookClientConfig` and `webhook.conversionReviewVersions`
 * `conversionReviewVersions`).
 */
function validateConversion(conversion: CrdSpec['conversion'], at: string, lenient: Leniency): FieldError[] {
  if (!conversion) return [];
  const errs: FieldError[] = [];
  const strategy = conversion.strategy;
  if (!strategy) errs.push(fieldError.required(`${at}.strategy`));
  else if (!CONVERSION_STRATEGIES.includes(strategy)) errs.push(fieldError.notSupported(`${at}.strategy`, strategy, CONVERSION_STRATEGIES));
  const cc = conversion.webhook?.clientConfig;
  const reviews = conversion.webhook?.conversionReviewVersions;
  const ccAt = `${at}.webhookClientConfig`;
  if (strategy === 'Webhook') {
    if (!cc) errs.push(fieldError.required(ccAt, 'required when strategy is set to Webhook'));
    else {
      if ((cc.url === undefined) === (cc.service === undefined)) errs.push(fieldError.required(ccAt, 'exactly one of url or service is required'));
      else if (cc.url !== undefined) errs.push(...validateWebhookUrl(cc.url, `${ccAt}.url`));
      else errs.push(...validateWebhookService(cc.service!, `${ccAt}.service`));
      if (cc.caBundle && !lenient.allowInvalidCaBundle) {
        const bad = caBundleProblem(cc.caBundle);
        if (bad) errs.push({ type: 'FieldValueInvalid', field: `${ccAt}.caBundle`, message: `${ccAt}.caBundle: Invalid value: ${goBytes(cc.caBundle)}: ${bad}` });
      }
    }
    const rAt = `${at}.conversionReviewVersions`;
    if (!reviews?.length) errs.push(fieldError.required(rAt));
    else {
      const seen = new Set<string>();
      reviews.forEach((v, i) => {
        if (seen.has(v)) return void errs.push(fieldError.invalid(`${rAt}[${i}]`, v, 'duplicate version'));
        seen.add(v);
        for (const problem of dns1035Problems(v)) errs.push(fieldError.invalid(`${rAt}[${i}]`, v, problem));
      });
      if (lenient.requireKnownReviewVersion && !reviews.some((v) => REVIEW_VERSIONS.includes(v))) errs.push(fieldError.invalid(rAt, reviews, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
    }
  } else {
    if (cc) errs.push(fieldError.forbidden(ccAt, 'should not be set when strategy is not set to Webhook'));
    if (reviews?.length) errs.push(fieldError.forbidden(`${at}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

const URL_FORM = '; desired format: https://host[/path]';

/** ValidateWebhookURL, https only. */
function validateWebhookUrl(text: string, at: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(text);
  } catch (e) {
    return [fieldError.required(at, `url must be a valid URL: ${(e as Error).message}${URL_FORM}`)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(fieldError.invalid(at, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (!u.host) errs.push(fieldError.invalid(at, u.host, `host must be specified${URL_FORM}`));
  if (u.username || u.password) errs.push(fieldError.invalid(at, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash) errs.push(fieldError.invalid(at, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search) errs.push(fieldError.invalid(at, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

/** ValidateWebhookService. */
function validateWebhookService(svc: NonNullable<CrdClientConfig['service']>, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(fieldError.required(`${at}.name`, 'service name is required'));
  if (!svc.namespace) errs.push(fieldError.required(`${at}.namespace`, 'service namespace is required'));
  const port = svc.port ?? 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(fieldError.invalid(`${at}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const path = svc.path;
  if (path === undefined || path === '' || path === '/') return errs;
  if (path === '//') return [...errs, fieldError.invalid(`${at}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(fieldError.invalid(`${at}.path`, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') return void errs.push(fieldError.invalid(`${at}.path`, path, `segment[${i}] may not be empty`));
    for (const failure of dns1123Subdomain(step)) errs.push(fieldError.invalid(`${at}.path`, path, `segment[${i}]: ${failure}`));
  });
  return errs;
}

/** Why a caBundle (base64 of PEM) holds no certificate, in client-go's words; undefined when it does. */
function caBundleProblem(caBundle: string): string | undefined {
  const pem = Buffer.from(caBundle, 'base64').toString('latin1');
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  let certs = 0;
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') continue;
    try {
      new X509Certificate(b[0]);
      certs++;
    } catch (e) {
      return `x509: ${(e as Error).message}`;
    }
  }
  return certs > 0 ? undefined : 'data does not contain any valid RSA or ECDSA certificates';
}

/** A []byte value as Go's %#v prints it in a field error. */
function goBytes(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  return `[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`;
}

const MAX_SELECTABLE_FIELDS = 8;

/** ValidateCustomResourceSelectableFields. */
function validateSelectableFields(fields: { jsonPath?: string }[], schema: Record<string, unknown> | undefined, at: string, unchanged: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const fAt = `${at}[${i}].jsonPath`;
    if (!f.jsonPath) return void errs.push(fieldError.required(fAt));
    const found = fieldPathSchema(f.jsonPath, schema ?? {});
    if (typeof found === 'string') return void errs.push(fieldError.invalid(fAt, f.jsonPath, `is an invalid path: ${found}`));
    if (found.path[0] === 'metadata') errs.push(fieldError.invalid(fAt, f.jsonPath, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(found.schema.type as string))
      errs.push(fieldError.invalid(fAt, f.jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    const key = found.path.join('.');
    if (unique.has(key)) errs.push(fieldError.duplicate(fAt, f.jsonPath));
    else unique.add(key);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS && !unchanged) errs.push(fieldError.tooMany(at, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

/** The schema a simple JSON path (`.spec.a.b`, no array notation) names, or why it names none (cel.ValidFieldPath). */
function fieldPathSchema(jsonPath: string, root: Record<string, unknown>): { path: string[]; schema: Record<string, unknown> } | string {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  let s = root;
  const path: string[] = [];
  const tokens = jsonPath.split(/([.[\]])/).filter((t) => t !== '');
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '[') return 'array notation is not allowed';
    if (t !== '.') return `expected [ or . but got: ${t}`;
    const name = tokens[++i];
    if (name === undefined) return 'unexpected end of JSON path';
    if (isObj(s.properties)) {
      const p = s.properties[name];
      if (!isObj(p)) return 'does not refer to a valid field';
      s = p;
    } else if (isObj(s.additionalProperties)) s = s.additionalProperties;
    else return 'does not refer to a valid field';
    path.push(name);
  }
  return { path, schema: s };
}
