// CustomResourceDefinition (apiextensions/v1, cluster-scoped): a kind defined at run time. Its
// object is validated here as kube-apiserver's apiextensions validation does; the CRD controller
// (src/controllers/custom-resources.ts) keeps its status and serves the kind it defines, built by
// src/registry/custom-resource.ts.

import type { Naming } from '../../naming.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Subdomain, nowTimestamp, type KObject } from '../../machinery/meta.ts';
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
  conversion?: { strategy?: string; webhook?: { conversionReviewVersions?: string[]; clientConfig?: Record<string, unknown> } };
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
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** IsDNS1035Label's problems, joined as kube-apiserver joins them. */
function dns1035(v: string): string {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(v)) out.push(DNS1035_MSG);
  return out.join(',');
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
      validate: (o) => validateCrd(o as CrdObject),
      validateUpdate: (o, old) => validateCrdUpdate(o as CrdObject, old as CrdObject),
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

/** ValidateCustomResourceDefinition. */
export function validateCrd(crd: CrdObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec ?? {};
  const required = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (crd.metadata.name !== required) errs.push(fieldError.invalid('metadata.name', crd.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  errs.push(...validateSpec(spec, 'spec'));
  errs.push(...validateStatus(crd, true));
  return errs;
}

/** ValidateCustomResourceDefinitionUpdate: the create rules, and what may not change. */
export function validateCrdUpdate(crd: CrdObject, old: CrdObject): FieldError[] {
  const errs = validateSpec(crd.spec ?? {}, 'spec');
  const established = old.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  if (established) {
    errs.push(...validateImmutable(crd.spec?.scope, old.spec?.scope, 'spec.scope'));
    errs.push(...validateImmutable(crd.spec?.names?.kind, old.spec?.names?.kind, 'spec.names.kind'));
  }
  errs.push(...validateImmutable(crd.spec?.group, old.spec?.group, 'spec.group'));
  errs.push(...validateImmutable(crd.spec?.names?.plural, old.spec?.names?.plural, 'spec.names.plural'));
  errs.push(...validateStatus(crd, true));
  return errs;
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

function validateSpec(spec: CrdSpec, at: string): FieldError[] {
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
    else errs.push(...validateCustomResourceSchema(schema, `${vAt}.schema.openAPIV3Schema`, { statusSubresource: v.subresources?.status !== undefined, objectMeta }));
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

  const strategy = spec.conversion?.strategy;
  if (strategy !== undefined && !CONVERSION_STRATEGIES.includes(strategy)) errs.push(fieldError.notSupported(`${at}.conversion.strategy`, strategy, CONVERSION_STRATEGIES));
  if (strategy === 'None' && spec.conversion?.webhook !== undefined) errs.push(fieldError.forbidden(`${at}.conversion.webhook`, 'should not be set when strategy is not set to Webhook'));
  if (strategy === 'Webhook' && spec.conversion?.webhook === undefined) errs.push(fieldError.required(`${at}.conversion.webhook`, 'required when strategy is set to Webhook'));
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
