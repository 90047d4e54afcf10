// OpenAPI publication over real HTTP: /openapi/v3 (index and one OpenAPI 3.0 document per
// group/version), /openapi/v2 as JSON and in its protobuf form, content negotiation and caching,
// the x-kubernetes-* markers of every field of every kind, and the real kubectl using them.
//
// The protobuf answer is decoded here with a message description built in this file (not the
// server's .proto), turned back into Swagger JSON and compared with the JSON answer.
//
// kubectl (test/support/kubectl.ts picks the binaries): kubectl 1.20 (Debian bookworm's
// kubernetes-client) fetches /openapi/v2 as protobuf for create/apply/explain and validates
// objects against it; it is taken from KUBECTL_1_20, from `kubectl` on PATH when that is 1.20, or
// from node_modules/.cache where scripts/test-setup.sh unpacks Debian's kubernetes-client package
// (it fails with a clear message otherwise). The newest kubectl is KUBECTL or the newest of
// `kubectl` on PATH and the versioned binaries beside it (≥ 1.27: explain reads /openapi/v3,
// validation is left to the server through fieldValidation).

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { parse as parseYaml } from 'yaml';
import { Validator } from '@seriousme/openapi-schema-validator';
import { api, testServer } from '../support/server.ts';
import { kubectl120, kubectlFor, type KubectlRun } from '../support/kubectl.ts';
import { builtinKinds } from '../../src/registry/kinds/index.ts';
import type { KindDefinition } from '../../src/registry/definition.ts';
import type { Schema } from '../../src/machinery/schema.ts';

type Json = Record<string, any>;

const PB = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PB_RETURNED = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const server = await testServer({ runtimeConfig: 'coordination.orch.io/v1beta1=true' });
const defs: KindDefinition[] = builtinKinds(server.naming, server.featureGates, { componentHealth: async () => [] }).filter((d) => !d.unlisted);

async function getBytes(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const res = await fetch(server.url + path, { headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const index = (await api(server, 'GET', '/openapi/v3')).body as { paths: Record<string, { serverRelativeURL: string }> };
const v3: Record<string, Json> = {};
for (const [gv, { serverRelativeURL }] of Object.entries(index.paths)) v3[gv] = (await api(server, 'GET', serverRelativeURL)).body;
const v2 = (await api(server, 'GET', '/openapi/v2', undefined, { Accept: 'application/json' })).body as Json;

const gvKey = (d: KindDefinition) => (d.group ? `apis/${d.group}/${d.version}` : `api/${d.version}`);

// ---------------------------------------------------------------------------------------------
// The protobuf form, decoded with a description of its own

/** openapi.v2 messages as [field, number, type, repeated?]: the field numbers of the wire contract. */
const MESSAGES: Record<string, [string, number, string, boolean?][]> = {
  Document: [['swagger', 1, 'string'], ['info', 2, 'Info'], ['host', 3, 'string'], ['base_path', 4, 'string'], ['schemes', 5, 'string', true], ['consumes', 6, 'string', true], ['produces', 7, 'string', true], ['paths', 8, 'Paths'], ['definitions', 9, 'Definitions'], ['vendor_extension', 16, 'NamedAny', true]],
  Info: [['title', 1, 'string'], ['version', 2, 'string'], ['description', 3, 'string'], ['vendor_extension', 7, 'NamedAny', true]],
  Any: [['yaml', 2, 'string']],
  NamedAny: [['name', 1, 'string'], ['value', 2, 'Any']],
  Paths: [['vendor_extension', 1, 'NamedAny', true], ['path', 2, 'NamedPathItem', true]],
  NamedPathItem: [['name', 1, 'string'], ['value', 2, 'PathItem']],
  PathItem: [['_ref', 1, 'string'], ['get', 2, 'Operation'], ['put', 3, 'Operation'], ['post', 4, 'Operation'], ['delete', 5, 'Operation'], ['options', 6, 'Operation'], ['head', 7, 'Operation'], ['patch', 8, 'Operation'], ['parameters', 9, 'ParametersItem', true], ['vendor_extension', 10, 'NamedAny', true]],
  Operation: [['tags', 1, 'string', true], ['summary', 2, 'string'], ['description', 3, 'string'], ['operation_id', 5, 'string'], ['produces', 6, 'string', true], ['consumes', 7, 'string', true], ['parameters', 8, 'ParametersItem', true], ['responses', 9, 'Responses'], ['schemes', 10, 'string', true], ['deprecated', 11, 'bool'], ['vendor_extension', 13, 'NamedAny', true]],
  ParametersItem: [['parameter', 1, 'Parameter'], ['json_reference', 2, 'JsonReference']],
  JsonReference: [['_ref', 1, 'string'], ['description', 2, 'string']],
  Parameter: [['body_parameter', 1, 'BodyParameter'], ['non_body_parameter', 2, 'NonBodyParameter']],
  BodyParameter: [['description', 1, 'string'], ['name', 2, 'string'], ['in', 3, 'string'], ['required', 4, 'bool'], ['schema', 5, 'Schema'], ['vendor_extension', 6, 'NamedAny', true]],
  NonBodyParameter: [['header', 1, 'SimpleParameter'], ['query', 3, 'QueryParameter'], ['path', 4, 'SimpleParameter']],
  QueryParameter: [['required', 1, 'bool'], ['in', 2, 'string'], ['description', 3, 'string'], ['name', 4, 'string'], ['allow_empty_value', 5, 'bool'], ['type', 6, 'string'], ['format', 7, 'string'], ['unique_items', 20, 'bool'], ['vendor_extension', 23, 'NamedAny', true]],
  SimpleParameter: [['required', 1, 'bool'], ['in', 2, 'string'], ['description', 3, 'string'], ['name', 4, 'string'], ['type', 5, 'string'], ['format', 6, 'string'], ['unique_items', 19, 'bool'], ['vendor_extension', 22, 'NamedAny', true]],
  Responses: [['response_code', 1, 'NamedResponseValue', true], ['vendor_extension', 2, 'NamedAny', true]],
  NamedResponseValue: [['name', 1, 'string'], ['value', 2, 'ResponseValue']],
  ResponseValue: [['response', 1, 'Response'], ['json_reference', 2, 'JsonReference']],
  Response: [['description', 1, 'string'], ['schema', 2, 'SchemaItem'], ['vendor_extension', 5, 'NamedAny', true]],
  SchemaItem: [['schema', 1, 'Schema']],
  Definitions: [['additional_properties', 1, 'NamedSchema', true]],
  NamedSchema: [['name', 1, 'string'], ['value', 2, 'Schema']],
  Schema: [
    ['_ref', 1, 'string'], ['format', 2, 'string'], ['title', 3, 'string'], ['description', 4, 'string'], ['default', 5, 'Any'], ['multiple_of', 6, 'double'], ['maximum', 7, 'double'],
    ['exclusive_maximum', 8, 'bool'], ['minimum', 9, 'double'], ['exclusive_minimum', 10, 'bool'], ['max_length', 11, 'int64'], ['min_length', 12, 'int64'], ['pattern', 13, 'string'],
    ['max_items', 14, 'int64'], ['min_items', 15, 'int64'], ['unique_items', 16, 'bool'], ['max_properties', 17, 'int64'], ['min_properties', 18, 'int64'], ['required', 19, 'string', true],
    ['enum', 20, 'Any', true], ['additional_properties', 21, 'AdditionalPropertiesItem'], ['type', 22, 'TypeItem'], ['items', 23, 'ItemsItem'], ['all_of', 24, 'Schema', true],
    ['properties', 25, 'Properties'], ['discriminator', 26, 'string'], ['read_only', 27, 'bool'], ['example', 30, 'Any'], ['vendor_extension', 31, 'NamedAny', true],
  ],
  AdditionalPropertiesItem: [['schema', 1, 'Schema'], ['boolean', 2, 'bool']],
  TypeItem: [['value', 1, 'string', true]],
  ItemsItem: [['schema', 1, 'Schema', true]],
  Properties: [['additional_properties', 1, 'NamedSchema', true]],
};

const pbRoot = new protobuf.Root();
const pbNamespace = pbRoot.define('check');
for (const [name, fields] of Object.entries(MESSAGES)) {
  const type = new protobuf.Type(name);
  for (const [field, id, t, repeated] of fields) type.add(new protobuf.Field(field, id, t, repeated ? 'repeated' : undefined));
  pbNamespace.add(type);
}
const DocumentMessage = pbRoot.lookupType('check.Document');

/** Swagger JSON back from the decoded message. */
const fromAny = (a: Json) => parseYaml(a.yaml as string);
const fromExtensions = (list: Json[] | undefined): Json => Object.fromEntries((list ?? []).map((n) => [n.name, fromAny(n.value)]));
function renamed(m: Json, names: Record<string, string>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(m)) {
    if (k === 'vendor_extension') Object.assign(out, fromExtensions(v));
    else out[names[k] ?? k] = v;
  }
  return out;
}
const SCHEMA_NAMES: Record<string, string> = {
  _ref: '$ref', multiple_of: 'multipleOf', exclusive_maximum: 'exclusiveMaximum', exclusive_minimum: 'exclusiveMinimum', max_length: 'maxLength', min_length: 'minLength',
  max_items: 'maxItems', min_items: 'minItems', unique_items: 'uniqueItems', max_properties: 'maxProperties', min_properties: 'minProperties', read_only: 'readOnly',
};
function schemaJson(s: Json): Json {
  const { default: dflt, enum: en, example, additional_properties: ap, type, items, all_of: allOf, properties, ...rest } = s;
  const out = renamed(rest, SCHEMA_NAMES);
  if (dflt) out.default = fromAny(dflt);
  if (en) out.enum = en.map(fromAny);
  if (example) out.example = fromAny(example);
  if (ap) out.additionalProperties = ap.schema ? schemaJson(ap.schema) : ap.boolean;
  if (type) out.type = type.value.length === 1 ? type.value[0] : type.value;
  if (items) out.items = items.schema.length === 1 ? schemaJson(items.schema[0]) : items.schema.map(schemaJson);
  if (allOf) out.allOf = allOf.map(schemaJson);
  if (properties) out.properties = Object.fromEntries(properties.additional_properties.map((p: Json) => [p.name, schemaJson(p.value)]));
  return out;
}
function parameterJson(p: Json): Json {
  if (p.json_reference) return { $ref: p.json_reference._ref };
  const { body_parameter: body, non_body_parameter: nonBody } = p.parameter;
  if (body) {
    const { schema, ...rest } = body;
    return { ...renamed(rest, {}), ...(schema ? { schema: schemaJson(schema) } : {}) };
  }
  const sub = nonBody.query ?? nonBody.path ?? nonBody.header;
  return renamed(sub, { unique_items: 'uniqueItems', allow_empty_value: 'allowEmptyValue' });
}
function operationJson(o: Json): Json {
  const { parameters, responses, ...rest } = o;
  const out = renamed(rest, { operation_id: 'operationId' });
  if (parameters) out.parameters = parameters.map(parameterJson);
  if (responses)
    out.responses = Object.fromEntries(
      responses.response_code.map((r: Json) => {
        const v = r.value.response;
        const { schema, ...rr } = v;
        return [r.name, { ...renamed(rr, {}), ...(schema ? { schema: schemaJson(schema.schema) } : {}) }];
      }),
    );
  return out;
}
function documentJson(d: Json): Json {
  const { info, paths, definitions, ...rest } = d;
  const out = renamed(rest, { base_path: 'basePath' });
  if (info) out.info = renamed(info, {});
  if (paths)
    out.paths = {
      ...fromExtensions(paths.vendor_extension),
      ...Object.fromEntries(
        (paths.path ?? []).map((p: Json) => {
          const { parameters, ...ops } = p.value;
          const item: Json = Object.fromEntries(Object.entries(ops).map(([m, o]) => [m, operationJson(o as Json)]));
          if (parameters) item.parameters = parameters.map(parameterJson);
          return [p.name, item];
        }),
      ),
    };
  if (definitions) out.definitions = Object.fromEntries(definitions.additional_properties.map((n: Json) => [n.name, schemaJson(n.value)]));
  return out;
}

describe('/openapi/v2 protobuf', () => {
  test('kubectl < 1.27 asks for protobuf and gets openapi.v2.Document with an ETag', async () => {
    const r = await getBytes('/openapi/v2', { Accept: PB });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), PB_RETURNED);
    assert.match(r.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
    assert.notEqual(r.bytes[0], '{'.charCodeAt(0));
    const decoded = DocumentMessage.toObject(DocumentMessage.decode(r.bytes), { longs: Number, arrays: false, defaults: false }) as Json;
    assert.equal(decoded.swagger, '2.0');
    assert.deepEqual(documentJson(decoded), v2, 'the protobuf document says what the JSON document says');
  });

  test('the kind definitions carry x-kubernetes-group-version-kind as YAML vendor extensions', async () => {
    const r = await getBytes('/openapi/v2', { Accept: PB });
    const doc = DocumentMessage.toObject(DocumentMessage.decode(r.bytes), { longs: Number }) as Json;
    const node = doc.definitions.additional_properties.find((n: Json) => n.name === 'io.orch.core.v1.Node');
    assert.ok(node, 'io.orch.core.v1.Node is defined');
    const gvk = node.value.vendor_extension.find((e: Json) => e.name === 'x-kubernetes-group-version-kind');
    assert.deepEqual(parseYaml(gvk.value.yaml), [{ group: '', kind: 'Node', version: 'v1' }]);
  });

  test('Accept lists: the best acceptable form wins, JSON is the fallback, nothing acceptable is 406', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'application/json'],
      ['*/*', 'application/json'],
      ['application/json', 'application/json'],
      [`${PB}, application/json`, PB_RETURNED],
      [`${PB_RETURNED}`, PB_RETURNED],
      [`application/json;q=0.5, ${PB}`, PB_RETURNED],
      [`${PB};q=0.5, application/json`, 'application/json'],
      [`application/xml, application/json;q=0.9`, 'application/json'],
      [`application/*`, 'application/json'],
    ];
    for (const [accept, type] of cases) {
      const r = await getBytes('/openapi/v2', accept ? { Accept: accept } : {});
      assert.equal(r.status, 200, `Accept: ${accept}`);
      assert.equal(r.headers.get('content-type'), type, `Accept: ${accept}`);
      assert.equal(r.headers.get('vary'), 'Accept');
    }
    const none = await api(server, 'GET', '/openapi/v2', undefined, { Accept: 'application/xml' });
    assert.equal(none.status, 406);
    assert.equal(none.body.reason, 'NotAcceptable');
  });

  test('ETags differ per form; If-None-Match answers 304; HEAD has no body', async () => {
    const json = await getBytes('/openapi/v2', { Accept: 'application/json' });
    const pb = await getBytes('/openapi/v2', { Accept: PB });
    const jsonTag = json.headers.get('etag')!;
    const pbTag = pb.headers.get('etag')!;
    assert.notEqual(jsonTag, pbTag);
    const notModified = await getBytes('/openapi/v2', { Accept: PB, 'If-None-Match': pbTag });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.bytes.length, 0);
    assert.equal((await getBytes('/openapi/v2', { Accept: PB, 'If-None-Match': jsonTag })).status, 200);
    assert.equal((await getBytes('/openapi/v2', { 'If-None-Match': `"x", ${jsonTag}` })).status, 304);
    const head = await fetch(`${server.url}/openapi/v2`, { method: 'HEAD', headers: { Accept: PB } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(pb.bytes.length));
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  });
});

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.0

/** `#/components/schemas/X` (v3) or `#/definitions/X` (v2) → the schema; undefined for anything else. */
function component(doc: Json, ref: unknown, prefix = '#/components/schemas/'): Json | undefined {
  if (typeof ref !== 'string' || !ref.startsWith(prefix)) return undefined;
  const schemas = prefix === '#/definitions/' ? doc.definitions : doc.components?.schemas;
  return schemas?.[ref.slice(prefix.length)];
}

/** Every object in a JSON tree, with its JSON pointer. */
function* walk(v: unknown, path = ''): Generator<[string, Json]> {
  if (Array.isArray(v)) for (const [i, x] of v.entries()) yield* walk(x, `${path}/${i}`);
  else if (v !== null && typeof v === 'object') {
    yield [path, v as Json];
    for (const [k, x] of Object.entries(v)) yield* walk(x, `${path}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The OpenAPI 3.0 rules Kubernetes' documents keep, beyond what the JSON schema of 3.0 checks. */
function structuralProblems(doc: Json): string[] {
  const problems: string[] = [];
  const problem = (where: string, what: string) => problems.push(`${where}: ${what}`);
  if (doc.openapi !== '3.0.0') problem('/openapi', `is ${doc.openapi}`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string') problem('/info', 'needs title and version');
  if ('swagger' in doc || 'definitions' in doc) problem('/', 'has Swagger 2.0 keys');
  const schemas = doc.components?.schemas as Json | undefined;
  if (!schemas || !Object.keys(schemas).length) problem('/components/schemas', 'is empty');
  const ids = new Set<string>();
  if (!Object.keys(doc.paths ?? {}).length) problem('/paths', 'is empty');
  const checkParam = (where: string, p: Json, template: string) => {
    if (!p.name || !['query', 'path', 'header', 'cookie'].includes(p.in)) problem(where, 'parameter needs a name and a valid in');
    if (!p.schema || typeof p.schema.type !== 'string') problem(where, 'parameter needs a schema with a type');
    if ('type' in p) problem(where, 'parameter has a Swagger 2.0 type');
    if (p.in === 'path' && (p.required !== true || !template.includes(`{${p.name}}`))) problem(where, 'path parameter must be required and in the path');
  };
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const where = `/paths/${path}`;
    const ops = METHODS.filter((m) => item[m]);
    if (!ops.length) problem(where, 'has no operation');
    const pathParams = new Set<string>();
    for (const [i, p] of (item.parameters ?? []).entries()) {
      checkParam(`${where}/parameters/${i}`, p, path);
      if (p.in === 'path') pathParams.add(p.name);
    }
    for (const m of ops) {
      const op = item[m] as Json;
      const ow = `${where}/${m}`;
      if (!op.operationId || ids.has(op.operationId)) problem(ow, `operationId ${op.operationId} missing or repeated`);
      ids.add(op.operationId);
      const params = new Set(pathParams);
      for (const [i, p] of (op.parameters ?? []).entries()) {
        checkParam(`${ow}/parameters/${i}`, p, path);
        if (p.in === 'path') params.add(p.name);
      }
      for (const name of path.matchAll(/\{([^}]+)\}/g)) if (!params.has(name[1]!)) problem(ow, `no path parameter for {${name[1]}}`);
      if (op.requestBody && !Object.values(op.requestBody.content ?? {}).every((c) => (c as Json).schema)) problem(ow, 'requestBody content needs schemas');
      if ('consumes' in op || 'produces' in op) problem(ow, 'has Swagger 2.0 consumes/produces');
      const responses = Object.entries((op.responses ?? {}) as Record<string, Json>);
      if (!responses.length) problem(ow, 'has no responses');
      for (const [code, r] of responses) {
        if (typeof r.description !== 'string') problem(`${ow}/responses/${code}`, 'needs a description');
        if (code.startsWith('2') && !Object.values(r.content ?? {}).some((c) => (c as Json).schema)) problem(`${ow}/responses/${code}`, 'needs content with a schema');
        if ('schema' in r) problem(`${ow}/responses/${code}`, 'has a Swagger 2.0 schema');
      }
      const gvk = op['x-kubernetes-group-version-kind'];
      if (!gvk || typeof gvk.kind !== 'string' || Array.isArray(gvk)) problem(ow, 'needs one x-kubernetes-group-version-kind');
      if (m === 'patch' && !(op.parameters ?? []).some((p: Json) => p.name === 'fieldValidation' && p.in === 'query')) problem(ow, 'PATCH must declare fieldValidation');
    }
  }
  for (const [where, o] of walk(doc)) {
    if ('$ref' in o) {
      if (!component(doc, o.$ref)) problem(where, `$ref ${o.$ref} does not resolve`);
      // OpenAPI 3.0 ignores the siblings of $ref: a field's own keywords go beside an allOf.
      if (Object.keys(o).length !== 1) problem(where, `$ref with siblings ${Object.keys(o).join(',')}`);
    }
    if (where.startsWith('/components/schemas/') || where.includes('/schema')) {
      if (Array.isArray(o.type)) problem(where, 'type must be one string in 3.0');
      if ('nullable' in o && typeof o.nullable !== 'boolean') problem(where, 'nullable must be a boolean');
      if (Array.isArray(o.allOf) && o.allOf.some((x: Json) => !x.$ref && !x.type && !x.properties)) problem(where, 'allOf entries must be schemas');
    }
  }
  for (const [name, s] of Object.entries(schemas ?? {})) if (s.$ref) problem(`/components/schemas/${name}`, 'is only a reference');
  return problems;
}

/**
 * A published schema node as one schema: a reference (plain, or the allOf wrapper that carries a
 * field's own keywords) merged with the component it names.
 */
function resolved(doc: Json, s: Json, prefix: string): Json {
  if (s.$ref) return { ...resolved(doc, component(doc, s.$ref, prefix)!, prefix), ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')) };
  if (Array.isArray(s.allOf) && s.allOf.length === 1 && s.allOf[0].$ref && !s.properties) {
    const { allOf, ...own } = s;
    return { ...resolved(doc, allOf[0], prefix), ...own };
  }
  return s;
}

const MARKERS = ['x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key'] as const;

/** Where the published schema lacks or changes what the definition says (markers, types, descriptions, …). */
function publicationProblems(doc: Json, def: Schema, published: Json, prefix: string, path: string, v2: boolean): string[] {
  const problems: string[] = [];
  const p = resolved(doc, published, prefix);
  for (const [k, v] of Object.entries(def)) {
    if (k === 'properties' || k === 'items' || k === 'additionalProperties' || v === undefined) continue;
    if (v2 && k === 'nullable') continue;
    if (k === 'typeDescription') {
      // Published as the description of the type the field refers to.
      const ref: string | undefined = published.$ref ?? published.allOf?.[0]?.$ref;
      const type = ref === undefined ? undefined : component(doc, ref, prefix);
      if (type?.description !== v) problems.push(`${path}: its type's description is ${JSON.stringify(type?.description)}, the definition says ${JSON.stringify(v)}`);
      continue;
    }
    if (JSON.stringify(p[k]) !== JSON.stringify(v)) problems.push(`${path}: ${k} is ${JSON.stringify(p[k])}, the definition says ${JSON.stringify(v)}`);
  }
  for (const [name, sub] of Object.entries(def.properties ?? {})) {
    if (!p.properties?.[name]) problems.push(`${path}.${name}: not published`);
    else problems.push(...publicationProblems(doc, sub, p.properties[name], prefix, `${path}.${name}`, v2));
  }
  if (def.items) {
    if (!p.items) problems.push(`${path}[]: no items`);
    else problems.push(...publicationProblems(doc, def.items, p.items, prefix, `${path}[]`, v2));
  }
  if (def.additionalProperties) {
    if (!p.additionalProperties) problems.push(`${path}{}: no additionalProperties`);
    else problems.push(...publicationProblems(doc, def.additionalProperties, p.additionalProperties, prefix, `${path}{}`, v2));
  }
  return problems;
}

/** The component with this kind's x-kubernetes-group-version-kind. */
function kindSchema(schemas: Json, d: KindDefinition): Json {
  const found = Object.values(schemas).filter((s) => (s['x-kubernetes-group-version-kind'] ?? []).some((g: Json) => g.group === d.group && g.version === d.version && g.kind === d.kind));
  assert.equal(found.length, 1, `one schema for ${d.kind}`);
  return found[0]!;
}

/** Every marker of a definition, with its path: to show the check looked at all of them. */
function markerPaths(s: Schema, path: string): string[] {
  const here = MARKERS.filter((m) => s[m] !== undefined).map((m) => `${path} ${m}`);
  return [
    ...here,
    ...Object.entries(s.properties ?? {}).flatMap(([k, v]) => markerPaths(v, `${path}.${k}`)),
    ...(s.items ? markerPaths(s.items, `${path}[]`) : []),
    ...(s.additionalProperties ? markerPaths(s.additionalProperties, `${path}{}`) : []),
  ];
}

describe('/openapi/v3', () => {
  test('the index names one document per served group/version, with its hash', () => {
    const served = new Set(defs.map(gvKey));
    assert.deepEqual(new Set(Object.keys(index.paths)), served);
    for (const [gv, { serverRelativeURL }] of Object.entries(index.paths)) assert.match(serverRelativeURL, new RegExp(`^/openapi/v3/${gv}\\?hash=[0-9A-F]{128}$`));
  });

  test('every document is valid OpenAPI 3.0 (its JSON schema, and every $ref resolves)', async () => {
    for (const [gv, doc] of Object.entries(v3)) {
      const validator = new Validator();
      const r = await validator.validate(structuredClone(doc));
      assert.ok(r.valid, `${gv}: ${JSON.stringify(r.errors, null, 1)}`);
      assert.equal(validator.version, '3.0');
      assert.doesNotThrow(() => validator.resolveRefs(), gv);
    }
  });

  test('every document keeps the 3.0 rules Kubernetes keeps: operations, parameters with schemas, responses with content, allOf around references with siblings', () => {
    for (const [gv, doc] of Object.entries(v3)) assert.deepEqual(structuralProblems(doc), [], gv);
  });

  test('the v2 document is valid Swagger 2.0', async () => {
    const validator = new Validator();
    const r = await validator.validate(structuredClone(v2));
    assert.ok(r.valid, JSON.stringify(r.errors, null, 1));
    assert.equal(validator.version, '2.0');
  });

  test('every field of every kind is published with its markers, types and descriptions, in v3 and in v2', () => {
    let markers = 0;
    for (const d of defs) {
      const doc = v3[gvKey(d)]!;
      assert.deepEqual(publicationProblems(doc, d.schema, kindSchema(doc.components.schemas, d), '#/components/schemas/', d.kind, false), [], `v3 ${d.kind}`);
      assert.deepEqual(publicationProblems(v2, d.schema, kindSchema(v2.definitions, d), '#/definitions/', d.kind, true), [], `v2 ${d.kind}`);
      markers += markerPaths(d.schema, d.kind).length;
    }
    // Node, Namespace, ComponentStatus, ServiceCIDR, APIService and metadata all have markers.
    assert.ok(markers > 50, `${markers} markers checked`);
  });

  test('kinds and their lists carry x-kubernetes-group-version-kind; PATCH declares fieldValidation', () => {
    for (const d of defs) {
      const doc = v3[gvKey(d)]!;
      const list = Object.values(doc.components.schemas as Json).find((s: Json) => s['x-kubernetes-group-version-kind']?.[0]?.kind === `${d.kind}List`);
      assert.ok(list, `${d.kind}List`);
      if (!d.verbs.includes('patch')) continue;
      const patches = Object.values(doc.paths as Record<string, Json>)
        .map((item) => item.patch)
        .filter((op: Json | undefined) => op?.['x-kubernetes-group-version-kind']?.kind === d.kind);
      assert.ok(patches.length >= 1, `${d.kind} has PATCH`);
      for (const op of patches) assert.ok(op.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'), op.operationId);
    }
  });

  test('nested types are named as Kubernetes names them, and a field keeps its description beside the reference', () => {
    const core = v3['api/v1']!;
    const nodeSpec = core.components.schemas['io.orch.core.v1.NodeSpec'];
    assert.equal(nodeSpec.properties.taints.items.$ref, '#/components/schemas/io.orch.core.v1.Taint');
    assert.equal(nodeSpec.properties.taints['x-kubernetes-list-type'], 'atomic');
    assert.deepEqual(core.components.schemas['io.orch.core.v1.Taint'].required, ['key', 'effect']);
    const nodeDef = defs.find((d) => d.kind === 'Node')!;
    const specText = nodeDef.schema.properties!.spec!.description;
    assert.ok(specText);
    const node = kindSchema(core.components.schemas, nodeDef);
    assert.deepEqual(node.properties.spec, { allOf: [{ $ref: '#/components/schemas/io.orch.core.v1.NodeSpec' }], description: specText });
    assert.deepEqual(node.properties.metadata.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    const meta = core.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'];
    assert.equal(meta.properties.ownerReferences.items.$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference');
    assert.equal(meta.properties.ownerReferences['x-kubernetes-patch-merge-key'], 'uid');
    // The same in v2, as $ref with siblings.
    assert.deepEqual(v2.definitions['io.orch.core.v1.Node'].properties.spec, { $ref: '#/definitions/io.orch.core.v1.NodeSpec', description: specText });
  });

  test('ETag, If-None-Match, immutable caching under the current hash, and a redirect from a stale one', async () => {
    const [gv, { serverRelativeURL }] = Object.entries(index.paths)[0]!;
    const current = await getBytes(serverRelativeURL);
    assert.equal(current.status, 200);
    assert.equal(current.headers.get('cache-control'), 'public, immutable');
    const hash = serverRelativeURL.split('hash=')[1]!;
    assert.equal(current.headers.get('etag'), `"${hash}"`);
    const plain = await getBytes(`/openapi/v3/${gv}`);
    assert.equal(plain.headers.get('cache-control'), 'no-cache, private');
    assert.equal((await getBytes(`/openapi/v3/${gv}`, { 'If-None-Match': `"${hash}"` })).status, 304);
    const stale = await getBytes(`/openapi/v3/${gv}?hash=0123`);
    assert.equal(stale.status, 301);
    assert.equal(stale.headers.get('location'), serverRelativeURL);
    assert.equal((await api(server, 'GET', '/openapi/v3/apis/nope/v1')).status, 404);
    assert.equal((await api(server, 'GET', `/openapi/v3/${gv}`, undefined, { Accept: 'application/xml' })).status, 406);
    assert.equal((await api(server, 'DELETE', `/openapi/v3/${gv}`)).status, 405);
  });
});

// ---------------------------------------------------------------------------------------------
// kubectl

/** The docs of Node's spec.taints: what explain prints for the field and for its item type. */
const taintsText = (() => {
  const taints = defs.find((d) => d.kind === 'Node')!.schema.properties!.spec!.properties!.taints!;
  assert.ok(taints.description && taints.items?.description);
  return { about: taints.description, item: taints.items.description };
})();
const flat = (s: string) => s.replace(/\s+/g, ' ').trim();

const expectOk = (r: KubectlRun, what: string) => assert.equal(r.code, 0, `${what} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

/** The fields of `kubectl explain` output: name → the type between angle brackets, and required. */
function explainedFields(out: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const m of out.matchAll(/^\s+(\w+)\t<([^>]+)>( -required-)?/gm)) fields.set(m[1]!, `${m[2]}${m[3] ?? ''}`);
  return fields;
}

const TAINT_FIELDS = new Map([
  ['effect', 'string -required-'],
  ['key', 'string -required-'],
  ['timeAdded', 'string'],
  ['value', 'string'],
]);

describe('kubectl 1.20 (OpenAPI v2 as protobuf, client-side validation)', () => {
  const k = kubectlFor(server, { bin: kubectl120(), namespace: 'default', label: 'openapi-kubectl-1.20' });
  const kubectl = (args: readonly string[]) => k.run(args);
  const manifest = (name: string, text: string) => k.file(name, text);

  test('create -f with default validation: a Node with taints and a Lease', async (t) => {
    t.diagnostic(`${k.bin}: ${k.version}`);
    const file = manifest(
      'create.yaml',
      [
        'apiVersion: v1',
        'kind: Node',
        'metadata: {name: v120-node, labels: {made-by: kubectl-1.20}}',
        'spec:',
        '  taints:',
        '  - {key: dedicated, value: infra, effect: NoSchedule}',
        // Quantities may be numbers or strings (int-or-string), and a null is no value.
        'status: {capacity: {cpu: 4, memory: 8Gi}, conditions: [{type: Ready, status: "True", lastTransitionTime: null}]}',
        '---',
        'apiVersion: coordination.orch.io/v1',
        'kind: Lease',
        'metadata: {name: v120-lease, namespace: default}',
        'spec: {holderIdentity: me, leaseDurationSeconds: 15}',
        '',
      ].join('\n'),
    );
    const r = await kubectl(['create', '-f', file]);
    expectOk(r, 'kubectl create -f');
    assert.match(r.stdout, /node\/v120-node created/);
    assert.match(r.stdout, /lease\.coordination\.orch\.io\/v120-lease created/);
    const node = await api(server, 'GET', '/api/v1/nodes/v120-node');
    assert.deepEqual(node.body.spec.taints, [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]);
    assert.equal(node.body.status.capacity.memory, '8Gi');
    const lease = await api(server, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases/v120-lease');
    assert.equal(lease.body.spec.holderIdentity, 'me');
  });

  test('validation uses the published schema: an unknown field or a wrong type is refused before any request', async () => {
    const unknown = await kubectl(['create', '-f', manifest('unknown.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: v120-bad}\nspec:\n  taints:\n  - {key: a, effect: NoSchedule, bogus: 1}\n')]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /ValidationError\(Node\.spec\.taints\[0\]\): unknown field "bogus" in io\.orch\.core\.v1\.Taint/);
    const wrongType = await kubectl(['create', '-f', manifest('type.yaml', 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata: {name: v120-bad}\nspec: {leaseDurationSeconds: soon}\n')]);
    assert.notEqual(wrongType.code, 0);
    assert.match(wrongType.stderr, /ValidationError\(Lease\.spec\.leaseDurationSeconds\): invalid type for io\.orch\.coordination\.v1\.LeaseSpec\.leaseDurationSeconds: got "string", expected "integer"/);
    const missing = await kubectl(['create', '-f', manifest('missing.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: v120-bad}\nspec:\n  taints:\n  - {key: a}\n')]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /missing required field "effect" in io\.orch\.core\.v1\.Taint/);
    assert.equal((await api(server, 'GET', '/api/v1/nodes/v120-bad')).status, 404);
  });

  test('apply -f: create, unchanged, configured (strategic merge of a Node)', async () => {
    const text = (holder: string, taint: string) =>
      `apiVersion: v1\nkind: Node\nmetadata: {name: v120-apply, labels: {holder: ${holder}}}\nspec:\n  podCIDRs: [10.1.0.0/24]\n  taints:\n  - {key: ${taint}, effect: NoExecute}\n`;
    const file = manifest('apply.yaml', text('a', 'one'));
    const created = await kubectl(['apply', '-f', file]);
    expectOk(created, 'kubectl apply (create)');
    assert.match(created.stdout, /node\/v120-apply created/);
    const unchanged = await kubectl(['apply', '-f', file]);
    expectOk(unchanged, 'kubectl apply (unchanged)');
    assert.match(unchanged.stdout, /node\/v120-apply unchanged/);
    manifest('apply.yaml', text('b', 'two'));
    const configured = await kubectl(['apply', '-f', file]);
    expectOk(configured, 'kubectl apply (configure)');
    assert.match(configured.stdout, /node\/v120-apply configured/);
    const node = await api(server, 'GET', '/api/v1/nodes/v120-apply');
    assert.equal(node.body.metadata.labels.holder, 'b');
    assert.deepEqual(node.body.spec.taints, [{ key: 'two', effect: 'NoExecute' }]);
    assert.deepEqual(node.body.spec.podCIDRs, ['10.1.0.0/24']);
  });

  test('explain node.spec.taints prints the field as Kubernetes does', async () => {
    const r = await kubectl(['explain', 'node.spec.taints']);
    expectOk(r, 'kubectl explain node.spec.taints');
    assert.match(r.stdout, /^KIND:\s+Node$/m);
    assert.match(r.stdout, /^VERSION:\s+v1$/m);
    assert.match(r.stdout, /^RESOURCE:\s+taints <\[\]Object>$/m);
    assert.match(r.stdout, /DESCRIPTION:\n\s+\S[^]*\n\n\s+\S[^]*\n\nFIELDS:/, 'the field text, then the text of its type');
    assert.ok(flat(r.stdout).includes(`DESCRIPTION: ${flat(taintsText.about)} ${flat(taintsText.item)} FIELDS:`), r.stdout);
    assert.deepEqual(explainedFields(r.stdout), TAINT_FIELDS);
    assert.match(r.stdout, /key\t<string> -required-\n\s+The taint key/);
  });

  test('explain lease.spec and ipaddress.spec.parentRef', async () => {
    const lease = await kubectl(['explain', 'lease.spec']);
    expectOk(lease, 'kubectl explain lease.spec');
    assert.match(lease.stdout, /^VERSION:\s+coordination\.orch\.io\/v1$/m);
    assert.match(lease.stdout, /^RESOURCE:\s+spec <Object>$/m);
    assert.equal(explainedFields(lease.stdout).get('leaseDurationSeconds'), 'integer');
    assert.match(lease.stdout, /holderIdentity\t<string>\n\s+The identity of the current holder/);
    const ref = await kubectl(['explain', 'ipaddress.spec.parentRef']);
    expectOk(ref, 'kubectl explain ipaddress.spec.parentRef');
    assert.match(ref.stdout, /^RESOURCE:\s+parentRef <Object>$/m);
    assert.deepEqual(explainedFields(ref.stdout), new Map([['group', 'string'], ['name', 'string -required-'], ['namespace', 'string'], ['resource', 'string -required-']]));
  });
});

describe('the newest kubectl (OpenAPI v3, validation left to the server)', () => {
  const k = kubectlFor(server, { namespace: 'default', label: 'openapi-kubectl-newest' });
  const kubectl = (args: readonly string[]) => k.run(args);

  test('explain node.spec.taints prints the field as Kubernetes does', async (t) => {
    t.diagnostic(`${k.bin}: ${k.version}`);
    const r = await kubectl(['explain', 'node.spec.taints']);
    expectOk(r, 'kubectl explain node.spec.taints');
    assert.match(r.stdout, /^KIND:\s+Node$/m);
    assert.match(r.stdout, /^FIELD:\s+taints <\[\]Taint>$/m);
    assert.ok(flat(r.stdout).includes(`DESCRIPTION: ${flat(taintsText.about)} ${flat(taintsText.item)} FIELDS:`), r.stdout);
    assert.deepEqual(explainedFields(r.stdout), TAINT_FIELDS);
    assert.match(r.stdout, /enum: NoSchedule, PreferNoSchedule, NoExecute/);
  });

  test('explain lease.spec and ipaddress.spec.parentRef name their types', async () => {
    const lease = await kubectl(['explain', 'lease.spec']);
    expectOk(lease, 'kubectl explain lease.spec');
    assert.match(lease.stdout, /^FIELD:\s+spec <LeaseSpec>$/m);
    assert.equal(explainedFields(lease.stdout).get('renewTime'), 'string');
    const ref = await kubectl(['explain', 'ipaddress.spec.parentRef']);
    expectOk(ref, 'kubectl explain ipaddress.spec.parentRef');
    assert.match(ref.stdout, /^FIELD:\s+parentRef <ParentReference>$/m);
    const capacity = await kubectl(['explain', 'node.status.capacity']);
    expectOk(capacity, 'kubectl explain node.status.capacity');
    assert.match(capacity.stdout, /^FIELD:\s+capacity <map\[string\]Quantity>$/m);
  });

  test('create -f with default validation; an unknown field is refused by the server (fieldValidation=Strict)', async () => {
    const good = k.file('good.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: newest-node}\nspec:\n  taints:\n  - {key: a, effect: NoSchedule}\n');
    expectOk(await kubectl(['create', '-f', good]), 'kubectl create -f');
    assert.equal((await api(server, 'GET', '/api/v1/nodes/newest-node')).status, 200);
    const bad = k.file('bad.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: newest-bad}\nspec:\n  taints:\n  - {key: a, effect: NoSchedule, bogus: 1}\n');
    const r = await kubectl(['create', '-f', bad]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /strict decoding error: unknown field "spec\.taints\[0\]\.bogus"/);
  });
});
