// OpenAPI v3 (index plus one document per group/version) and v2, derived from the definitions.
// kubectl reads them for validation (it leaves validation to the server when PATCH declares the
// `fieldValidation` parameter) and for `kubectl explain`.

import { createHash } from 'node:crypto';
import type { Naming } from '../naming.ts';
import type { Schema } from '../machinery/schema.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import type { GroupVersion } from './discovery.ts';

type Json = Record<string, unknown>;

/** `io.orch.coordination.v1.Lease`, `io.orch.core.v1.Namespace`: reversed group, as Kubernetes names them. */
export function definitionName(naming: Naming, d: Pick<KindDefinition, 'group' | 'version' | 'kind'>): string {
  const group = d.group || 'core';
  const reversed = group.endsWith(`.${naming.groupSuffix}`)
    ? [...naming.groupSuffix.split('.').reverse(), group.slice(0, -naming.groupSuffix.length - 1)].join('.')
    : group === 'core'
      ? [...naming.groupSuffix.split('.').reverse(), 'core'].join('.')
      : group.split('.').reverse().join('.');
  return `${reversed}.${d.version}.${d.kind}`;
}

const gvk = (d: KindDefinition) => [{ group: d.group, version: d.version, kind: d.kind }];

const param = (name: string, where: 'query' | 'path', description: string, type: 'string' | 'integer' | 'boolean' = 'string', required = false): Json => ({
  name,
  in: where,
  description,
  ...(required ? { required: true } : {}),
  schema: { type, uniqueItems: true },
});

const COMMON = {
  pretty: param('pretty', 'query', "If 'true', then the output is pretty printed."),
  dryRun: param('dryRun', 'query', 'When present, indicates that modifications should not be persisted. The only valid value is All.'),
  fieldManager: param('fieldManager', 'query', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  fieldValidation: param('fieldValidation', 'query', 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn (default) or Strict.'),
  force: param('force', 'query', 'Force is going to "force" Apply requests.', 'boolean'),
  gracePeriodSeconds: param('gracePeriodSeconds', 'query', 'The duration in seconds before the object should be deleted.', 'integer'),
  propagationPolicy: param('propagationPolicy', 'query', "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."),
  orphanDependents: param('orphanDependents', 'query', 'Deprecated: please use the PropagationPolicy.', 'boolean'),
  list: [
    param('allowWatchBookmarks', 'query', 'allowWatchBookmarks requests watch events with type "BOOKMARK".', 'boolean'),
    param('continue', 'query', 'The continue option should be set when retrieving more results from the server.'),
    param('fieldSelector', 'query', 'A selector to restrict the list of returned objects by their fields.'),
    param('labelSelector', 'query', 'A selector to restrict the list of returned objects by their labels.'),
    param('limit', 'query', 'limit is a maximum number of responses to return for a list call.', 'integer'),
    param('resourceVersion', 'query', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
    param('resourceVersionMatch', 'query', 'resourceVersionMatch determines how resourceVersion is applied to list calls.'),
    param('sendInitialEvents', 'query', 'sendInitialEvents=true may be set together with watch=true.', 'boolean'),
    param('timeoutSeconds', 'query', 'Timeout for the list/watch call.', 'integer'),
    param('watch', 'query', 'Watch for changes to the described resources.', 'boolean'),
  ],
};

const JSON_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

function content(schema: Json, types = JSON_TYPES): Json {
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

function responses(codes: Record<string, Json>): Json {
  return { responses: { ...Object.fromEntries(Object.entries(codes).map(([c, s]) => [c, { description: c === '201' ? 'Created' : c === '202' ? 'Accepted' : 'OK', content: content(s) }])), '401': { description: 'Unauthorized' } } };
}

function operation(d: KindDefinition, action: string, id: string, extra: Json): Json {
  return { description: `${action} ${d.kind}`, operationId: id, tags: [d.group || 'core'], 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk(d)[0], ...extra };
}

/** The paths of one kind: collection, item and subresources, in every scope it is served at. */
function kindPaths(naming: Naming, d: KindDefinition): Json {
  const name = definitionName(naming, d);
  const list = `${name}List`;
  const base = `/${d.group ? `apis/${d.group}` : 'api'}/${d.version}`;
  const nsParam = param('namespace', 'path', 'object name and auth scope, such as for teams and projects', 'string', true);
  const nameParam = param('name', 'path', `name of the ${d.kind}`, 'string', true);
  const scoped = d.namespaced ? `${base}/namespaces/{namespace}/${d.resource}` : `${base}/${d.resource}`;
  const id = (verb: string, sub = '') => `${verb}${d.namespaced ? 'Namespaced' : ''}${d.kind}${sub}`;
  const paths: Json = {};
  const collection: Json = { parameters: [...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
  if (d.verbs.includes('list')) collection.get = operation(d, 'list', id('list'), { parameters: COMMON.list, ...responses({ '200': ref(list) }) });
  if (d.verbs.includes('create'))
    collection.post = operation(d, 'post', id('create'), {
      parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation],
      requestBody: { content: content(ref(name)), required: true },
      ...responses({ '200': ref(name), '201': ref(name), '202': ref(name) }),
    });
  if (d.verbs.includes('deletecollection'))
    collection.delete = operation(d, 'deletecollection', id('deleteCollection'), {
      parameters: [...COMMON.list, COMMON.dryRun, COMMON.gracePeriodSeconds, COMMON.propagationPolicy, COMMON.orphanDependents],
      ...responses({ '200': ref('io.k8s.apimachinery.pkg.apis.meta.v1.Status') }),
    });
  paths[scoped] = collection;
  const item: Json = { parameters: [nameParam, ...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
  if (d.verbs.includes('get')) item.get = operation(d, 'get', id('read'), responses({ '200': ref(name) }));
  if (d.verbs.includes('update'))
    item.put = operation(d, 'put', id('replace'), {
      parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation],
      requestBody: { content: content(ref(name)), required: true },
      ...responses({ '200': ref(name), '201': ref(name) }),
    });
  if (d.verbs.includes('patch'))
    item.patch = operation(d, 'patch', id('patch'), {
      parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation, COMMON.force],
      requestBody: { content: content({ type: 'object' }, PATCH_TYPES), required: true },
      ...responses({ '200': ref(name), '201': ref(name) }),
    });
  if (d.verbs.includes('delete'))
    item.delete = operation(d, 'delete', id('delete'), {
      parameters: [COMMON.dryRun, COMMON.gracePeriodSeconds, COMMON.propagationPolicy, COMMON.orphanDependents],
      ...responses({ '200': ref('io.k8s.apimachinery.pkg.apis.meta.v1.Status'), '202': ref('io.k8s.apimachinery.pkg.apis.meta.v1.Status') }),
    });
  paths[`${scoped}/{name}`] = item;
  for (const s of d.subresources ?? []) {
    const sub: Json = { parameters: [nameParam, ...(d.namespaced ? [nsParam] : []), COMMON.pretty] };
    const suffix = s.name[0]!.toUpperCase() + s.name.slice(1);
    if (s.verbs.includes('get')) sub.get = operation(d, 'get', id('read', suffix), responses({ '200': ref(name) }));
    if (s.verbs.includes('update'))
      sub.put = operation(d, 'put', id('replace', suffix), {
        parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation],
        requestBody: { content: content(ref(name)), required: true },
        ...responses({ '200': ref(name), '201': ref(name) }),
      });
    if (s.verbs.includes('patch'))
      sub.patch = operation(d, 'patch', id('patch', suffix), {
        parameters: [COMMON.dryRun, COMMON.fieldManager, COMMON.fieldValidation, COMMON.force],
        requestBody: { content: content({ type: 'object' }, PATCH_TYPES), required: true },
        ...responses({ '200': ref(name), '201': ref(name) }),
      });
    paths[`${scoped}/{name}/${s.name}`] = sub;
  }
  if (d.namespaced && d.verbs.includes('list'))
    paths[`${base}/${d.resource}`] = { parameters: [COMMON.pretty], get: operation(d, 'list', `list${d.kind}ForAllNamespaces`, { parameters: COMMON.list, ...responses({ '200': ref(list) }) }) };
  return paths;
}

/** Our Schema as an OpenAPI schema object (the markers are already OpenAPI extensions). */
function toOpenApi(s: Schema): Json {
  const out: Json = { ...s };
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toOpenApi(v)]));
  if (s.items) out.items = toOpenApi(s.items);
  if (s.additionalProperties) out.additionalProperties = toOpenApi(s.additionalProperties);
  return out;
}

function kindSchemas(naming: Naming, d: KindDefinition): Json {
  const name = definitionName(naming, d);
  return {
    [name]: { ...toOpenApi(d.schema), description: d.schema.description ?? `${d.kind} of ${apiVersionOf(d)}.`, 'x-kubernetes-group-version-kind': gvk(d) },
    [`${name}List`]: {
      type: 'object',
      description: `${d.kind}List is a list of ${d.kind} objects.`,
      required: ['items'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' }, remainingItemCount: { type: 'integer', format: 'int64' } } },
        items: { type: 'array', items: ref(name) },
      },
      'x-kubernetes-group-version-kind': [{ group: d.group, version: d.version, kind: `${d.kind}List` }],
    },
  };
}

const statusSchema: Json = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    status: { type: 'string' },
    message: { type: 'string' },
    reason: { type: 'string' },
    details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    code: { type: 'integer', format: 'int32' },
  },
  'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Status' }],
};

export class OpenApi {
  private readonly docs = new Map<string, { body: string; hash: string }>();
  readonly index: string;
  readonly v2: string;

  constructor(naming: Naming, gvs: readonly GroupVersion[], version: string) {
    const allPaths: Json = {};
    const allSchemas: Json = { 'io.k8s.apimachinery.pkg.apis.meta.v1.Status': statusSchema };
    for (const gv of gvs) {
      const paths: Json = {};
      const schemas: Json = { 'io.k8s.apimachinery.pkg.apis.meta.v1.Status': statusSchema };
      for (const d of gv.kinds) {
        Object.assign(paths, kindPaths(naming, d));
        Object.assign(schemas, kindSchemas(naming, d));
      }
      Object.assign(allPaths, paths);
      Object.assign(allSchemas, schemas);
      const doc = { openapi: '3.0.0', info: { title: 'orch-apiserver', version }, paths, components: { schemas } };
      const body = JSON.stringify(doc);
      const key = gv.group ? `apis/${gv.group}/${gv.version}` : `api/${gv.version}`;
      this.docs.set(key, { body, hash: createHash('sha512').update(body).digest('hex').slice(0, 128).toUpperCase() });
    }
    this.index = JSON.stringify({
      paths: Object.fromEntries([...this.docs].map(([k, d]) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${d.hash}` }])),
    });
    this.v2 = JSON.stringify({ swagger: '2.0', info: { title: 'orch-apiserver', version }, paths: v2Paths(allPaths), definitions: v2Definitions(allSchemas) });
  }

  document(path: string): { body: string; hash: string } | undefined {
    return this.docs.get(path);
  }
}

/** v2 keeps the same shapes with `#/definitions/` references and body/query parameters. */
function v2Definitions(schemas: Json): Json {
  return JSON.parse(JSON.stringify(schemas).replaceAll('#/components/schemas/', '#/definitions/')) as Json;
}

function v2Paths(paths: Json): Json {
  const text = JSON.stringify(paths).replaceAll('#/components/schemas/', '#/definitions/');
  const converted = JSON.parse(text) as Record<string, Record<string, unknown>>;
  for (const item of Object.values(converted)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters' || typeof op !== 'object' || op === null) continue;
      const o = op as Json;
      const params = ((o.parameters as Json[] | undefined) ?? []).map(v2Param);
      const body = o.requestBody as { content: Record<string, { schema: Json }> } | undefined;
      if (body) {
        params.push({ name: 'body', in: 'body', required: true, schema: Object.values(body.content)[0]!.schema });
        o.consumes = Object.keys(body.content);
        delete o.requestBody;
      }
      o.parameters = params;
      o.produces = JSON_TYPES;
      const rs = o.responses as Record<string, { description: string; content?: Record<string, { schema: Json }> }>;
      for (const r of Object.values(rs)) {
        if (r.content) {
          (r as Json).schema = Object.values(r.content)[0]!.schema;
          delete r.content;
        }
      }
    }
    if (Array.isArray(item.parameters)) item.parameters = (item.parameters as Json[]).map(v2Param);
  }
  return converted;
}

function v2Param(p: Json): Json {
  const { schema, ...rest } = p as { schema?: Json } & Json;
  return { ...rest, type: schema?.type ?? 'string', uniqueItems: true };
}
