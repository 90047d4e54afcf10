// OpenAPI publication, derived from the kind definitions: /openapi/v3 (an index plus one OpenAPI
// 3.0 document per group/version) and /openapi/v2 (one Swagger 2.0 document, as JSON or in the
// protobuf form kubectl < 1.27 asks for). kubectl reads them for validation (it leaves validation
// to the server when PATCH declares the `fieldValidation` parameter), for `kubectl explain`, and
// for the list/map markers of strategic merge.
//
// Nested objects are published as named components, as Kubernetes names its Go types (`NodeSpec`,
// `Taint`, `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`), so `kubectl explain` prints
// `<[]Taint>` where Kubernetes does. A field that refers to a component keeps its own
// description (and default) beside the reference: in v3 inside an `allOf` wrapper, in v2 as
// siblings of `$ref`, as Kubernetes publishes them.

import { createHash } from 'node:crypto';
import type { Naming } from '../naming.ts';
import { isUnstructured, type Schema } from '../machinery/schema.ts';
import { errors } from '../machinery/status.ts';
import type { KindDefinition } from '../registry/definition.ts';
import { ENVELOPE_DESCRIPTIONS, quantity } from '../registry/schemas.ts';
import type { GroupVersion } from './discovery.ts';
import { encodeSwaggerDocument } from './openapi-v2-proto.ts';

type Json = Record<string, unknown>;

/** `io.orch.coordination.v1.Lease`, `io.orch.core.v1.Namespace`: reversed group, as Kubernetes names them. */
function definitionName(naming: Naming, d: Pick<KindDefinition, 'group' | 'version' | 'kind'>): string {
  return `${namePrefix(naming, d)}.${d.kind}`;
}

/** The component name prefix of a group/version: `io.orch.coordination.v1`. */
function namePrefix(naming: Naming, d: Pick<KindDefinition, 'group' | 'version'>): string {
  const group = d.group || 'core';
  const reversed = group.endsWith(`.${naming.groupSuffix}`)
    ? [...naming.groupSuffix.split('.').reverse(), group.slice(0, -naming.groupSuffix.length - 1)].join('.')
    : group === 'core' || !group.includes('.')
      ? [...naming.groupSuffix.split('.').reverse(), group].join('.')
      : group.split('.').reverse().join('.');
  return `${reversed}.${d.version}`;
}

// ---------------------------------------------------------------------------------------------
// Component names

/** The object metadata types, under the names every client knows them by. */
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const STATUS = `${META}.Status`;
const PATCH = `${META}.Patch`;
const DELETE_OPTIONS = `${META}.DeleteOptions`;
const LIST_META = `${META}.ListMeta`;

/**
 * Names of nested types where Kubernetes' differ from the generic rule (`spec` of Node →
 * `NodeSpec`, the items of `taints` → `Taint`, any other object field → its capitalized name), keyed
 * by `<containing type>.<field>`. A name with dots is a full component name.
 */
const TYPE_NAMES: Record<string, string> = {
  'ObjectMeta.ownerReferences': `${META}.OwnerReference`,
  'ObjectMeta.managedFields': `${META}.ManagedFieldsEntry`,
  'ManagedFieldsEntry.fieldsV1': `${META}.FieldsV1`,
  'NodeSpec.configSource': 'NodeConfigSource',
  'NodeConfigSource.configMap': 'ConfigMapNodeConfigSource',
  'NodeStatus.conditions': 'NodeCondition',
  'NodeStatus.addresses': 'NodeAddress',
  'NodeStatus.daemonEndpoints': 'NodeDaemonEndpoints',
  'NodeDaemonEndpoints.kubeletEndpoint': 'DaemonEndpoint',
  'NodeStatus.nodeInfo': 'NodeSystemInfo',
  'NodeSystemInfo.swap': 'NodeSwapStatus',
  'NodeStatus.images': 'ContainerImage',
  'NodeStatus.volumesAttached': 'AttachedVolume',
  'NodeStatus.config': 'NodeConfigStatus',
  'NodeConfigStatus.assigned': 'NodeConfigSource',
  'NodeConfigStatus.active': 'NodeConfigSource',
  'NodeConfigStatus.lastKnownGood': 'NodeConfigSource',
  'NodeStatus.runtimeHandlers': 'NodeRuntimeHandler',
  'NodeRuntimeHandler.features': 'NodeRuntimeHandlerFeatures',
  'NodeStatus.features': 'NodeFeatures',
  'NamespaceStatus.conditions': 'NamespaceCondition',
  'ComponentStatus.conditions': 'ComponentCondition',
  'Event.series': 'EventSeries',
  'Event.regarding': 'ObjectReference',
  'Event.related': 'ObjectReference',
  'Event.deprecatedSource': 'EventSource',
  'Event.involvedObject': 'ObjectReference',
  'Event.source': 'EventSource',
  'ServiceAccount.secrets': 'ObjectReference',
  'ServiceAccount.imagePullSecrets': 'LocalObjectReference',
  'IPAddressSpec.parentRef': 'ParentReference',
  'ServiceCIDRStatus.conditions': `${META}.Condition`,
  'RuntimeClass.overhead': 'Overhead',
  'Scheduling.tolerations': 'Toleration',
  'APIServiceSpec.service': 'ServiceReference',
  'APIServiceStatus.conditions': 'APIServiceCondition',
  'TokenReviewStatus.user': 'UserInfo',
  'Role.rules': 'PolicyRule',
  'ClusterRole.rules': 'PolicyRule',
  'AggregationRule.clusterRoleSelectors': `${META}.LabelSelector`,
  'LabelSelector.matchExpressions': `${META}.LabelSelectorRequirement`,
};

/** Descriptions of shared types published at a field (where the field's own text is the field's). */
const TYPE_DESCRIPTIONS: Record<string, string> = {
  [`${META}.ObjectMeta`]: 'The metadata every stored object has: its identity, labels and annotations, ownership, finalizers and the versions the server keeps.',
  [QUANTITY]: 'A fixed-point decimal amount with an optional unit suffix, such as 500m, 1.5 or 2Gi, written as a string (or a plain number). The server stores it in canonical form.',
};
const API_VERSION_DESCRIPTION = ENVELOPE_DESCRIPTIONS.apiVersion;
const KIND_DESCRIPTION = ENVELOPE_DESCRIPTIONS.kind;
const LIST_METADATA_DESCRIPTION = ENVELOPE_DESCRIPTIONS.listMetadata;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function singular(s: string): string {
  if (s.endsWith('ies')) return `${s.slice(0, -3)}y`;
  if (/(ss|sh|ch|x)es$/.test(s)) return s.slice(0, -2);
  if (s.endsWith('s') && !s.endsWith('ss')) return s.slice(0, -1);
  return s;
}

/** The type name of an object found at `field` of the type `container` (a short name). */
function typeName(container: string, field: string, site: Site, kindRoot: boolean): string {
  const known = TYPE_NAMES[`${container}.${field}`];
  if (known) return known;
  if (kindRoot && field === 'metadata') return `${META}.ObjectMeta`;
  if (kindRoot && (field === 'spec' || field === 'status')) return `${container}${capitalize(field)}`;
  return capitalize(site === 'item' ? singular(field) : field);
}

const shortName = (full: string) => full.slice(full.lastIndexOf('.') + 1);

// ---------------------------------------------------------------------------------------------
// Schemas → components (v3 form: references are #/components/schemas/…)

type Site = 'field' | 'item' | 'value';

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const OBJECT_META = `${META}.ObjectMeta`;
const QUANTITY_PATTERN = quantity().pattern;

/** A JSON text with sorted keys: equal schemas have equal keys. */
function stableKey(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableKey).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableKey((v as Json)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Every named schema of the server: one namespace for v2, per-group/version subsets for v3. */
class Components {
  readonly schemas = new Map<string, Json>();
  private readonly keys = new Map<string, string>();

  /** Registers `schema` as `name` (or `name2`, `name3`, … when a different schema has it); returns the name used. */
  add(name: string, schema: Json): string {
    const key = stableKey(schema);
    for (let i = 1; ; i++) {
      const candidate = i === 1 ? name : `${name}${i}`;
      const existing = this.keys.get(candidate);
      if (existing === undefined) {
        this.keys.set(candidate, key);
        this.schemas.set(candidate, schema);
        return candidate;
      }
      if (existing === key) return candidate;
    }
  }

  /** `names` and every component they refer to, transitively, in a stable order. */
  closure(names: Iterable<string>): Json {
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      collectRefs(this.schemas.get(name), visit);
    };
    for (const n of names) visit(n);
    return Object.fromEntries([...seen].sort().map((n) => [n, this.schemas.get(n)!]));
  }
}

function collectRefs(v: unknown, visit: (name: string) => void): void {
  if (Array.isArray(v)) for (const x of v) collectRefs(x, visit);
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')) visit(x.slice('#/components/schemas/'.length));
      else collectRefs(x, visit);
    }
  }
}

/** Where a schema sits: the component that contains it and the prefix of new component names. */
interface Context {
  components: Components;
  /** Short name of the containing type (the kind at the top). */
  container: string;
  /** Prefix of component names made here: `io.orch.core.v1`. */
  prefix: string;
  /** The schema is a field of the kind's top-level object. */
  kindRoot: boolean;
  /**
   * A custom resource's schema: published inline, as kube-apiserver publishes a CRD's (only
   * ObjectMeta, at the top and in embedded resources, is a reference).
   */
  inlineObjects?: boolean;
}

const isNamedObject = (s: Schema) => (s.type === 'object' || s.type === undefined) && !!s.properties && Object.keys(s.properties).length > 0;
const isQuantity = (s: Schema) => s['x-kubernetes-int-or-string'] === true && s.pattern === QUANTITY_PATTERN && !s.type;

/** A reference with the site's own keywords: plain `$ref` alone, else wrapped in `allOf`. */
function refAt(name: string, siblings: Json): Json {
  return Object.keys(siblings).length ? { allOf: [ref(name)], ...siblings } : ref(name);
}

/** The published form of the schema at one site: a component reference or an inline schema. */
function publish(s: Schema, field: string, site: Site, ctx: Context): Json {
  if (ctx.inlineObjects) {
    // ObjectMeta whatever the CRD declares of it (a name's length, say), as kube-apiserver has it.
    if (ctx.kindRoot && field === 'metadata' && ctx.components.schemas.has(OBJECT_META)) return ref(OBJECT_META);
    if (!(ctx.kindRoot && field === 'metadata')) return inline(s, field, { ...ctx, kindRoot: false });
  }
  if (isQuantity(s)) {
    const { description, ...rest } = s;
    const name = ctx.components.add(QUANTITY, { description: TYPE_DESCRIPTIONS[QUANTITY], ...inline(rest, field, ctx) });
    return refAt(name, description ? { description } : {});
  }
  if (isNamedObject(s)) {
    const wanted = typeName(ctx.container, field, site, ctx.kindRoot);
    const full = wanted.includes('.') ? wanted : `${ctx.prefix}.${wanted}`;
    const prefix = full.slice(0, full.lastIndexOf('.'));
    // On a field the description is the field's; on items and map values it describes the type.
    const { description, typeDescription, default: dflt, nullable, ...rest } = s;
    const typeText = site === 'field' ? typeDescription : description;
    const own: Json = typeText ? { description: typeText } : {};
    if (!own.description && TYPE_DESCRIPTIONS[full]) own.description = TYPE_DESCRIPTIONS[full];
    const body = { ...own, ...inline(rest, field, { components: ctx.components, container: shortName(full), prefix, kindRoot: false }) };
    const name = ctx.components.add(full, body);
    const siblings: Json = {};
    if (site === 'field' && description) siblings.description = description;
    if (dflt !== undefined) siblings.default = dflt;
    if (nullable !== undefined) siblings.nullable = nullable;
    return refAt(name, siblings);
  }
  return inline(s, field, ctx);
}

/** The schema (at `field`) with its own keywords, and its properties, items and map values published in turn. */
function inline(s: Schema, field: string, ctx: Context): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined || k === 'typeDescription') continue;
    if (k === 'properties') {
      const props = v as Record<string, Schema>;
      if (Object.keys(props).length === 0 && s.additionalProperties) continue;
      // An embedded resource's metadata is ObjectMeta, as at the top of a kind.
      const embedded = ctx.inlineObjects === true && s['x-kubernetes-embedded-resource'] === true && ctx.components.schemas.has(OBJECT_META);
      out.properties = Object.fromEntries(Object.entries(props).map(([name, p]) => [name, embedded && name === 'metadata' ? ref(OBJECT_META) : publish(p, name, 'field', ctx)]));
    } else if (k === 'items') out.items = publish(v as Schema, field, 'item', ctx);
    else if (k === 'additionalProperties') out.additionalProperties = publish(v as Schema, field, 'value', ctx);
    else out[k] = v;
  }
  if (s['x-kubernetes-int-or-string'] && !s.type && !out.anyOf) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  return out;
}

/** The kind's own component and its List; returns their names. */
function kindComponents(naming: Naming, components: Components, d: KindDefinition): { kind: string; list: string } {
  const full = definitionName(naming, d);
  const ctx: Context = { components, container: d.kind, prefix: namePrefix(naming, d), kindRoot: true, inlineObjects: isUnstructured(d.schema) };
  const body = inline(d.schema, d.kind, ctx);
  const kind = components.add(full, {
    ...body,
    'x-kubernetes-group-version-kind': [{ group: d.group, kind: d.kind, version: d.version }],
  });
  const list = components.add(`${full}List`, {
    description: `A list of ${d.kind} objects, as a list request answers.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: API_VERSION_DESCRIPTION },
      items: { type: 'array', description: `The ${d.kind} objects of this list (or of this page of it).`, items: ref(kind) },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      metadata: { allOf: [ref(LIST_META)], description: LIST_METADATA_DESCRIPTION },
    },
    'x-kubernetes-group-version-kind': [{ group: d.group, kind: `${d.kind}List`, version: d.version }],
  });
  return { kind, list };
}

/** The metadata types every document refers to. */
function addMetaComponents(components: Components): void {
  components.add(LIST_META, {
    description: 'The metadata of a list: the version it was read at and, for a paged list, how to get the rest.',
    type: 'object',
    properties: {
      continue: { type: 'string', description: 'Opaque token for the next page, set when the list was cut short by limit; send it back as the continue parameter. Empty on the last page.' },
      remainingItemCount: {
        type: 'integer',
        format: 'int64',
        description: 'How many items follow this page; absent on the last page and when a label or field selector was given.',
      },
      resourceVersion: { type: 'string', description: 'The opaque version the list was read at; a watch from it sees every change made after the list.' },
      selfLink: { type: 'string', description: 'Deprecated and never set by this server.' },
    },
  });
  components.add(`${META}.StatusCause`, {
    description: 'One reason a request failed, usually one invalid field.',
    type: 'object',
    properties: {
      field: { type: 'string', description: 'The path of the field at fault, such as spec.leaseDurationSeconds or metadata.name; empty when no single field is.' },
      message: { type: 'string', description: 'What is wrong, for humans.' },
      reason: { type: 'string', description: 'What kind of problem it is, for machines, such as FieldValueInvalid or FieldValueRequired.' },
    },
  });
  components.add(`${META}.StatusDetails`, {
    description: 'Which object a Status is about and, for invalid requests, every cause.',
    type: 'object',
    properties: {
      causes: { type: 'array', items: ref(`${META}.StatusCause`), 'x-kubernetes-list-type': 'atomic', description: 'Every problem found, one per field when the request was invalid.' },
      group: { type: 'string', description: 'The API group of the resource the request was about.' },
      kind: { type: 'string', description: 'The resource (or kind) the request was about, such as leases.' },
      name: { type: 'string', description: 'The name of the object the request was about, when it names one.' },
      retryAfterSeconds: { type: 'integer', format: 'int32', description: 'Seconds to wait before retrying, when the server asks the client to retry.' },
      uid: { type: 'string', description: 'The uid of the object, when known.' },
    },
  });
  components.add(STATUS, {
    description: 'The answer to a request that returns no object: every error, and the success of a delete that removed the object at once.',
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: API_VERSION_DESCRIPTION },
      code: { type: 'integer', format: 'int32', description: 'The HTTP status code of the answer.' },
      details: { allOf: [ref(`${META}.StatusDetails`)], description: 'The object concerned and the causes, when the reason has them.' },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      message: { type: 'string', description: 'What happened, for humans.' },
      metadata: { allOf: [ref(LIST_META)], description: LIST_METADATA_DESCRIPTION },
      reason: { type: 'string', description: 'Why the request failed, as one CamelCase word for machines, such as NotFound, AlreadyExists, Conflict or Invalid.' },
      status: { type: 'string', description: 'Success or Failure.' },
    },
    'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
  });
  components.add(PATCH, { description: 'The body of a PATCH request, in the format its Content-Type names: JSON patch, merge patch, strategic merge patch or apply configuration.', type: 'object' });
  components.add(`${META}.Preconditions`, {
    description: 'Conditions the stored object must meet for the request to proceed; otherwise it fails with 409 Conflict.',
    type: 'object',
    properties: {
      resourceVersion: { type: 'string', description: 'The object must still be at this resource version.' },
      uid: { type: 'string', description: 'The object must still have this uid (it was not deleted and re-created).' },
    },
  });
  components.add(DELETE_OPTIONS, {
    description: 'Options of a delete or deletecollection request, sent as its body (or as query parameters).',
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: API_VERSION_DESCRIPTION },
      dryRun: { type: 'array', items: { type: 'string' }, description: 'With All, the request is checked and answered but nothing is deleted.', 'x-kubernetes-list-type': 'atomic' },
      gracePeriodSeconds: { type: 'integer', format: 'int64', description: 'Seconds the object is given before it is removed; 0 removes it at once.' },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      orphanDependents: { type: 'boolean', description: 'Deprecated form of propagationPolicy: true means Orphan, false means Background.' },
      preconditions: { allOf: [ref(`${META}.Preconditions`)], description: 'The delete happens only if the stored object still meets these.' },
      propagationPolicy: {
        type: 'string',
        description: 'What happens to the objects this one owns: Orphan keeps them, Background deletes them after this object, Foreground before it.',
      },
    },
    'x-kubernetes-group-version-kind': [{ group: '', kind: 'DeleteOptions', version: 'v1' }],
  });
}

// ---------------------------------------------------------------------------------------------
// Paths (v3 form)

const param = (name: string, where: 'query' | 'path', description: string, type: 'string' | 'integer' | 'boolean' = 'string', required = false): Json => ({
  name,
  in: where,
  description,
  ...(required ? { required: true } : {}),
  schema: { type, uniqueItems: true },
});

const COMMON = {
  pretty: param('pretty', 'query', 'true: the answer is indented for reading.'),
  dryRun: param('dryRun', 'query', 'All: the request is checked and answered as if it were carried out, but nothing is stored.'),
  fieldManager: param('fieldManager', 'query', 'The name of the writer, recorded in metadata.managedFields; required for apply.'),
  fieldValidation: param('fieldValidation', 'query', 'What unknown or duplicate fields in the body cause: Ignore (dropped), Warn (dropped with a warning, the default) or Strict (400).'),
  force: param('force', 'query', 'For apply: take the fields other managers own instead of failing with a conflict.', 'boolean'),
  gracePeriodSeconds: param('gracePeriodSeconds', 'query', 'Seconds the object is given before it is removed; 0 removes it at once.', 'integer'),
  propagationPolicy: param('propagationPolicy', 'query', 'What happens to the objects this one owns: Orphan keeps them, Background deletes them after this object, Foreground before it.'),
  orphanDependents: param('orphanDependents', 'query', 'Deprecated form of propagationPolicy: true means Orphan, false means Background.', 'boolean'),
  list: [
    param('allowWatchBookmarks', 'query', 'For a watch: the server may send BOOKMARK events that carry only a newer resourceVersion.', 'boolean'),
    param('continue', 'query', 'The token of the previous page (its metadata.continue), to read the next page of a paged list.'),
    param('fieldSelector', 'query', 'Keep only objects whose fields match, such as metadata.name=x or spec.unschedulable!=true.'),
    param('labelSelector', 'query', 'Keep only objects whose labels match, such as app=web,tier in (a,b).'),
    param('limit', 'query', 'The most items to return; more are read through continue.', 'integer'),
    param('resourceVersion', 'query', 'The version the list or watch starts from; how it is applied depends on resourceVersionMatch.'),
    param('resourceVersionMatch', 'query', 'How resourceVersion constrains a list: Exact or NotOlderThan.'),
    param('sendInitialEvents', 'query', 'For a watch: first send every existing object as an ADDED event, then a bookmark, then the changes.', 'boolean'),
    param('timeoutSeconds', 'query', 'Ends the list or watch after this many seconds.', 'integer'),
    param('watch', 'query', 'Stream the changes to the listed objects instead of listing them.', 'boolean'),
  ],
};

const JSON_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function content(schema: Json, types = JSON_TYPES): Json {
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

const RESPONSE_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };

function responses(codes: Record<string, Json>): Json {
  return {
    responses: {
      ...Object.fromEntries(Object.entries(codes).map(([c, s]) => [c, { description: RESPONSE_TEXT[c] ?? 'OK', content: content(s) }])),
      '401': { description: 'Unauthorized' },
    },
  };
}

/** The paths of one kind: collection, item and subresources, in every scope it is served at. */
function kindPaths(d: KindDefinition, names: { kind: string; list: string }, views: ReadonlyMap<string, string> = new Map()): Json {
  const base = `/${d.group ? `apis/${d.group}` : 'api'}/${d.version}`;
  const tag = `${(d.group || 'core').split('.')[0]}_${d.version}`;
  const gvk = { group: d.group, kind: d.kind, version: d.version };
  const operation = (action: string, id: string, extra: Json): Json => ({
    description: `${action} ${d.kind}`,
    operationId: id,
    tags: [tag],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    ...extra,
  });
  const nsParam = param('namespace', 'path', 'The namespace of the objects.', 'string', true);
  const nameParam = param('name', 'path', `The name of the ${d.kind}.`, 'string', true);
  const scoped = d.namespaced ? `${base}/namespaces/{namespace}/${d.resource}` : `${base}/${d.resource}`;
  const id = (verb: string, sub = '') => `${verb}${capitalize(tag.replace(/_v/, 'V'))}${d.namespaced ? 'Namespaced' : ''}${d.kind}${sub}`;
  const body = (schema: Json): Json => ({ requestBody: { content: content(schema), required: true } });
  // A subresource served as another kind (a Scale) reads and writes that kind, by JSON and merge patch.
  const write = (verb: 'put' | 'patch', sub = '', kind = names.kind, patchTypes = d.strategicMergePatch === false ? PATCH_TYPES.filter((t) => !t.includes('strategic')) : PATCH_TYPES): Json =>
    verb === 'put'
      ? operation('put', id('replace', sub), { parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation], ...body(ref(kind)), ...responses({ '200': ref(kind), '201': ref(kind) }) })
      : operation('patch', id('patch', sub), {
          parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation, COMMON.force],
          requestBody: { content: content(ref(PATCH), patchTypes), required: true },
          ...responses({ '200': ref(kind), '201': ref(kind) }),
        });
  const paths: Json = {};
  const collection: Json = { parameters: [...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
  if (d.verbs.includes('list')) collection.get = operation('list', id('list'), { parameters: COMMON.list, ...responses({ '200': ref(names.list) }) });
  if (d.verbs.includes('create'))
    collection.post = operation('post', id('create'), {
      parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation],
      ...body(ref(names.kind)),
      ...responses({ '200': ref(names.kind), '201': ref(names.kind), '202': ref(names.kind) }),
    });
  if (d.verbs.includes('deletecollection'))
    collection.delete = operation('deletecollection', id('deleteCollection'), {
      parameters: [...COMMON.list, COMMON.dryRun, COMMON.gracePeriodSeconds, COMMON.propagationPolicy, COMMON.orphanDependents],
      requestBody: { content: content(ref(DELETE_OPTIONS)) },
      ...responses({ '200': ref(STATUS) }),
    });
  paths[scoped] = collection;
  const item: Json = { parameters: [nameParam, ...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
  if (d.verbs.includes('get')) item.get = operation('get', id('read'), responses({ '200': ref(names.kind) }));
  if (d.verbs.includes('update')) item.put = write('put');
  if (d.verbs.includes('patch')) item.patch = write('patch');
  if (d.verbs.includes('delete'))
    item.delete = operation('delete', id('delete'), {
      parameters: [COMMON.dryRun, COMMON.gracePeriodSeconds, COMMON.propagationPolicy, COMMON.orphanDependents],
      requestBody: { content: content(ref(DELETE_OPTIONS)) },
      ...responses({ '200': ref(STATUS), '202': ref(STATUS) }),
    });
  // A kind served on create only (the reviews) has no object to address.
  if (Object.keys(item).length > 1) paths[`${scoped}/{name}`] = item;
  for (const s of d.subresources ?? []) {
    const sub: Json = { parameters: [nameParam, ...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
    const suffix = capitalize(s.name);
    const kind = (s.view && views.get(s.name)) ?? names.kind;
    // A view kind takes JSON and merge patches, and apply when it keeps field ownership (a Scale).
    const patchTypes = s.view ? ['application/json-patch+json', 'application/merge-patch+json', ...(s.view.managedFields ? ['application/apply-patch+yaml'] : [])] : undefined;
    if (s.verbs.includes('get')) sub.get = operation('get', id('read', suffix), responses({ '200': ref(kind) }));
    if (s.verbs.includes('update')) sub.put = write('put', suffix, kind);
    if (s.verbs.includes('patch')) sub.patch = write('patch', suffix, kind, patchTypes);
    paths[`${scoped}/{name}/${s.name}`] = sub;
  }
  if (d.namespaced && d.verbs.includes('list'))
    paths[`${base}/${d.resource}`] = {
      parameters: [COMMON.pretty],
      get: operation('list', `list${capitalize(tag.replace(/_v/, 'V'))}${d.kind}ForAllNamespaces`, { parameters: COMMON.list, ...responses({ '200': ref(names.list) }) }),
    };
  return paths;
}

// ---------------------------------------------------------------------------------------------
// v3 → v2

/**
 * A custom resource kind's schema for v2, as kube-apiserver makes it (ToStructuralOpenAPIV2) for
 * kubectl's client-side validation: a kind that keeps unknown fields at its root is an object and
 * nothing more; elsewhere no junctors, a nullable node is untyped without items or properties (and
 * not required), a node that keeps unknown fields has no items or properties (an object or array
 * one no type either), an embedded resource keeps its apiVersion, kind and metadata.
 */
function customKindV2(kind: Json): Json {
  if (kind['x-kubernetes-preserve-unknown-fields'] === true) {
    return Object.fromEntries(Object.entries(kind).filter(([k]) => k === 'x-kubernetes-group-version-kind' || k === 'x-kubernetes-selectable-fields').concat([['type', 'object']]));
  }
  return structuralV2(kind);
}

function structuralV2(s: Json): Json {
  const out: Json = { ...s };
  for (const k of ['allOf', 'oneOf', 'anyOf', 'not']) delete out[k];
  const props = s.properties as Record<string, Json> | undefined;
  let kept = props;
  if (out.nullable === true) {
    for (const k of ['type', 'nullable', 'items']) delete out[k];
    kept = undefined;
  }
  const preserve = out['x-kubernetes-preserve-unknown-fields'] === true;
  if (preserve) {
    delete out.items;
    kept = undefined;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (preserve && out.type === 'object') delete out.type;
  // An embedded resource is given its header again (kube-apiserver adds it after the conversion).
  if (s['x-kubernetes-embedded-resource'] === true && props) {
    kept = { ...kept };
    for (const k of ['apiVersion', 'kind', 'metadata']) if (props[k]) kept[k] = props[k];
    const required = new Set([...((out.required as string[] | undefined) ?? []), 'kind', 'apiVersion']);
    out.required = [...required];
  }
  if (kept && Object.keys(kept).length) out.properties = Object.fromEntries(Object.entries(kept).map(([n, p]) => [n, p.$ref ? p : structuralV2(p)]));
  else delete out.properties;
  if (Array.isArray(out.required) && kept) {
    const nullable = new Set(Object.entries(kept).filter(([, p]) => p.nullable === true).map(([n]) => n));
    out.required = (out.required as string[]).filter((n) => !nullable.has(n));
  }
  const extra = out.additionalProperties;
  if (typeof extra === 'object' && extra !== null) {
    if ((extra as Json).nullable === true) delete out.required;
    out.additionalProperties = structuralV2(extra as Json);
  }
  if (typeof out.items === 'object' && out.items !== null) out.items = structuralV2(out.items as Json);
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}

/** A v3 schema in Swagger 2.0 terms: `#/definitions/` references, `$ref` with siblings instead of `allOf`, no v3-only keywords. */
function v2Schema(s: Json): Json {
  const out: Json = {};
  const wrapped = Array.isArray(s.allOf) && s.allOf.length === 1 && typeof (s.allOf[0] as Json).$ref === 'string' && !s.properties;
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'anyOf' || k === 'oneOf' || k === 'not') continue;
    if (k === '$ref') out.$ref = (v as string).replace('#/components/schemas/', '#/definitions/');
    else if (k === 'allOf') {
      if (wrapped) out.$ref = ((v as Json[])[0]!.$ref as string).replace('#/components/schemas/', '#/definitions/');
      else out.allOf = (v as Json[]).map(v2Schema);
    } else if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([n, p]) => [n, v2Schema(p)]));
    else if ((k === 'items' || k === 'additionalProperties') && typeof v === 'object' && v !== null) out[k] = v2Schema(v as Json);
    else out[k] = v;
  }
  return out;
}

function v2Param(p: Json): Json {
  const { schema, ...rest } = p as { schema?: Json } & Json;
  return { ...rest, ...(schema ? { type: schema.type ?? 'string', uniqueItems: true } : {}) };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

function v2Paths(paths: Json): Json {
  const out: Json = {};
  for (const [path, itemValue] of Object.entries(paths)) {
    const item = itemValue as Json;
    const converted: Json = {};
    for (const [k, v] of Object.entries(item)) {
      if (k === 'parameters') {
        converted.parameters = (v as Json[]).map(v2Param);
        continue;
      }
      if (!(METHODS as readonly string[]).includes(k)) {
        converted[k] = v;
        continue;
      }
      const { parameters, requestBody, responses: rs, ...op } = v as Json & { parameters?: Json[]; requestBody?: { content: Record<string, { schema: Json }>; required?: boolean }; responses: Record<string, Json> };
      const params = (parameters ?? []).map(v2Param);
      const o: Json = { ...op };
      if (requestBody) {
        params.push({ name: 'body', in: 'body', ...(requestBody.required ? { required: true } : {}), schema: v2Schema(Object.values(requestBody.content)[0]!.schema) });
        o.consumes = Object.keys(requestBody.content);
      }
      if (params.length) o.parameters = params;
      o.produces = JSON_TYPES;
      o.responses = Object.fromEntries(
        Object.entries(rs).map(([code, r]) => {
          const { content: c, ...rest } = r as { content?: Record<string, { schema: Json }> } & Json;
          return [code, c ? { ...rest, schema: v2Schema(Object.values(c)[0]!.schema) } : rest];
        }),
      );
      converted[k] = o;
    }
    out[path] = converted;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Documents and their negotiation

const PROTOBUF_V2 = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_V2_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

interface Representation {
  body: string | Uint8Array;
  etag: string;
}

const hashOf = (body: string | Uint8Array) => createHash('sha512').update(body).digest('hex').toUpperCase();
const represent = (body: string | Uint8Array): Representation => ({ body, etag: hashOf(body) });

/** What /openapi/… answers: a status, its headers and the body (none for 304 and 301). */
interface OpenApiResponse {
  status: 200 | 301 | 304;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** Media ranges of an Accept header, best first (q=0 dropped; equal q keep their order). */
function acceptedRanges(accept: string | undefined): { type: string; subtype: string }[] {
  const ranges = (accept?.trim() ? accept : '*/*')
    .split(',')
    .map((part, i) => {
      const [range, ...params] = part.split(';').map((p) => p.trim());
      const q = params.map((p) => /^q=([0-9.]+)$/i.exec(p)).find((m) => m)?.[1];
      const [type = '', subtype = ''] = (range ?? '').toLowerCase().split('/');
      return { type, subtype, q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.type && r.subtype && r.q > 0);
  return ranges.sort((a, b) => b.q - a.q || a.i - b.i);
}

/** The first offer (media type → what is served as it) an Accept header takes, or undefined. */
function negotiate<T>(accept: string | undefined, offers: readonly [string, T][]): T | undefined {
  for (const r of acceptedRanges(accept)) {
    for (const [mediaType, value] of offers) {
      const [type, subtype] = mediaType.split('/');
      if ((r.type === '*' || r.type === type) && (r.subtype === '*' || r.subtype === subtype)) return value;
    }
  }
  return undefined;
}

function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${etag}"`;
  });
}

export class OpenApi {
  private readonly v3 = new Map<string, Representation>();
  private readonly v3Index: Representation;
  /** Built on the first /openapi/v2 request: most servers never serve it. */
  private readonly v2Doc: () => Json;
  private v2Json?: Representation;
  private v2Proto?: Representation;

  constructor(naming: Naming, gvs: readonly GroupVersion[], version: string) {
    const components = new Components();
    addMetaComponents(components);
    /** The components of custom resource kinds: published in v2 as kube-apiserver publishes a CRD's. */
    const custom = new Set<string>();
    const allPaths: Json = {};
    const info = { title: naming.serverName, version };
    for (const gv of gvs) {
      const paths: Json = {};
      const roots = [STATUS, PATCH, DELETE_OPTIONS];
      for (const d of gv.kinds) {
        const names = kindComponents(naming, components, d);
        if (isUnstructured(d.schema)) custom.add(names.kind);
        roots.push(names.kind, names.list);
        const views = new Map<string, string>();
        for (const s of d.subresources ?? []) if (s.view) views.set(s.name, kindComponents(naming, components, s.view.def).kind);
        roots.push(...views.values());
        Object.assign(paths, kindPaths(d, names, views));
      }
      Object.assign(allPaths, paths);
      const doc = { openapi: '3.0.0', info, paths, components: { schemas: components.closure(roots) } };
      const key = gv.group ? `apis/${gv.group}/${gv.version}` : `api/${gv.version}`;
      this.v3.set(key, represent(JSON.stringify(doc)));
    }
    this.v3Index = represent(JSON.stringify({ paths: Object.fromEntries([...this.v3].map(([k, d]) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${d.etag}` }])) }));
    this.v2Doc = () => {
      const definitions = Object.fromEntries(
        [...components.schemas.keys()].sort().map((n) => {
          const schema = components.schemas.get(n)!;
          return [n, v2Schema(custom.has(n) ? customKindV2(schema) : schema)];
        }),
      );
      return { swagger: '2.0', info, paths: v2Paths(allPaths), definitions };
    };
  }

  /** The v3 index: `{paths: {"apis/<group>/<version>": {serverRelativeURL}}}`. */
  get index(): string {
    return this.v3Index.body as string;
  }

  /** The v2 document as JSON text. */
  get v2(): string {
    return this.swaggerJson().body as string;
  }

  /** The v2 document in its protobuf form (openapi.v2.Document). */
  get v2Protobuf(): Uint8Array {
    return this.swaggerProto().body as Uint8Array;
  }

  /** The v3 document of one group/version (`api/v1`, `apis/<group>/<version>`), with its hash. */
  document(path: string): { body: string; hash: string } | undefined {
    const d = this.v3.get(path);
    return d && { body: d.body as string, hash: d.etag };
  }

  /**
   * The answer to a GET of `path` (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<gv>`), undefined
   * for an unknown path; throws NotAcceptable when the Accept header takes none of its forms.
   */
  serve(path: string, accept: string | undefined, ifNoneMatch: string | undefined, hash: string | null): OpenApiResponse | undefined {
    const answer = (r: Representation, type: string, headers: Record<string, string> = {}): OpenApiResponse => {
      const h: Record<string, string> = { 'Content-Type': type, ETag: `"${r.etag}"`, Vary: 'Accept', 'Cache-Control': 'no-cache, private', ...headers };
      return matchesEtag(ifNoneMatch, r.etag) ? { status: 304, headers: h } : { status: 200, headers: h, body: r.body };
    };
    if (path === '/openapi/v2') {
      const form = negotiate<'json' | 'proto'>(accept, [
        ['application/json', 'json'],
        [PROTOBUF_V2_DEPRECATED, 'proto'],
        [PROTOBUF_V2, 'proto'],
      ]);
      if (!form) throw errors.notAcceptable(['application/json', PROTOBUF_V2_DEPRECATED, PROTOBUF_V2]);
      return form === 'json' ? answer(this.swaggerJson(), 'application/json') : answer(this.swaggerProto(), PROTOBUF_V2);
    }
    const doc = path === '/openapi/v3' ? this.v3Index : path.startsWith('/openapi/v3/') ? this.v3.get(path.slice('/openapi/v3/'.length)) : undefined;
    if (!doc) return undefined;
    if (!negotiate(accept, [['application/json', true]])) throw errors.notAcceptable(['application/json']);
    if (doc === this.v3Index || hash === null) return answer(doc, 'application/json');
    // A stale hash moves to the current document, as Kubernetes redirects it.
    if (hash !== doc.etag) return { status: 301, headers: { Location: `${path}?hash=${doc.etag}`, 'Cache-Control': 'no-cache, private' } };
    return answer(doc, 'application/json', { 'Cache-Control': 'public, immutable', Expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString() });
  }

  private swaggerJson(): Representation {
    return (this.v2Json ??= represent(JSON.stringify(this.v2Doc())));
  }

  private swaggerProto(): Representation {
    return (this.v2Proto ??= represent(encodeSwaggerDocument(JSON.parse(this.swaggerJson().body as string) as Json)));
  }
}
