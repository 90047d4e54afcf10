// The protobuf form of the /openapi/v2 document (message openapi.v2.Document of
// openapi-v2.proto beside this file). A Swagger 2.0 JSON document maps onto it as follows: JSON
// objects with free keys (paths, definitions, properties, responses) become repeated (name, value)
// pairs in key order; `x-…` keys become vendor extensions whose value is YAML text; free-form
// values (default, enum, example) are YAML text too. JSON text is YAML, and unambiguous YAML at
// that (every string is quoted), so values are written as JSON.

import { readFileSync } from 'node:fs';
import type * as protobuf from 'protobufjs';
import { codeFile } from '../machinery/package-files.ts';
import { protobufjs } from '../wire/protobuf/library.ts';

type Json = Record<string, unknown>;

/** The Document message type, parsed from its schema the first time a document is encoded. */
let documentType: protobuf.Type | undefined;
const DocumentType = (): protobuf.Type =>
  (documentType ??= protobufjs().parse(readFileSync(codeFile('endpoints/openapi-v2.proto'), 'utf8'), { keepCase: true }).root.lookupType('openapi.v2.Document'));

/** A free-form value as an `Any` (YAML text). */
const any = (v: unknown): Json => ({ yaml: `${JSON.stringify(v)}\n` });

const named = (entries: [string, unknown][]): Json[] => entries.map(([name, value]) => ({ name, value }));

/** The `x-…` keys of a JSON object as vendor extensions. */
function extensions(o: Json): Json[] {
  return named(Object.entries(o).filter(([k]) => k.startsWith('x-')).map(([k, v]) => [k, any(v)]));
}

/** Copies the keys of `o` named in `fields` (JSON name → message field name). */
function pick(o: Json, fields: Record<string, string>): Json {
  const out: Json = {};
  for (const [json, field] of Object.entries(fields)) if (o[json] !== undefined) out[field] = o[json];
  return out;
}

function unexpected(o: Json, known: readonly string[], where: string): void {
  for (const k of Object.keys(o)) {
    if (!k.startsWith('x-') && !known.includes(k)) throw new Error(`openapi v2 protobuf: no field for "${k}" in ${where}`);
  }
}

const SCHEMA_SCALARS: Record<string, string> = {
  $ref: '_ref',
  format: 'format',
  title: 'title',
  description: 'description',
  multipleOf: 'multiple_of',
  maximum: 'maximum',
  exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum',
  exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  pattern: 'pattern',
  maxItems: 'max_items',
  minItems: 'min_items',
  uniqueItems: 'unique_items',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
  required: 'required',
  discriminator: 'discriminator',
  readOnly: 'read_only',
};
const SCHEMA_KEYS = [...Object.keys(SCHEMA_SCALARS), 'default', 'enum', 'additionalProperties', 'type', 'items', 'allOf', 'properties', 'example'];

function schema(s: Json): Json {
  unexpected(s, SCHEMA_KEYS, 'a schema');
  const out = pick(s, SCHEMA_SCALARS);
  if (s.default !== undefined) out.default = any(s.default);
  if (Array.isArray(s.enum)) out.enum = s.enum.map(any);
  if (s.additionalProperties !== undefined)
    out.additional_properties = typeof s.additionalProperties === 'boolean' ? { boolean: s.additionalProperties } : { schema: schema(s.additionalProperties as Json) };
  if (s.type !== undefined) out.type = { value: Array.isArray(s.type) ? s.type : [s.type] };
  if (s.items !== undefined) out.items = { schema: (Array.isArray(s.items) ? s.items : [s.items]).map((i) => schema(i as Json)) };
  if (Array.isArray(s.allOf)) out.all_of = s.allOf.map((x) => schema(x as Json));
  if (s.properties !== undefined) out.properties = { additional_properties: named(Object.entries(s.properties as Record<string, Json>).map(([k, v]) => [k, schema(v)])) };
  if (s.example !== undefined) out.example = any(s.example);
  const ext = extensions(s);
  if (ext.length) out.vendor_extension = ext;
  return out;
}

const PARAMETER_COMMON = ['name', 'in', 'description', 'required', 'type', 'format', 'collectionFormat', 'default', 'uniqueItems', 'enum'];

function nonBodyParameter(p: Json): Json {
  const out: Json = pick(p, { required: 'required', in: 'in', description: 'description', name: 'name', type: 'type', format: 'format', collectionFormat: 'collection_format', uniqueItems: 'unique_items' });
  if (p.default !== undefined) out.default = any(p.default);
  if (Array.isArray(p.enum)) out.enum = p.enum.map(any);
  const ext = extensions(p);
  if (ext.length) out.vendor_extension = ext;
  return out;
}

function parameter(p: Json): Json {
  if (typeof p.$ref === 'string') return { json_reference: { _ref: p.$ref } };
  switch (p.in) {
    case 'body': {
      unexpected(p, ['name', 'in', 'description', 'required', 'schema'], 'a body parameter');
      const out = pick(p, { description: 'description', name: 'name', in: 'in', required: 'required' });
      if (p.schema) out.schema = schema(p.schema as Json);
      const ext = extensions(p);
      if (ext.length) out.vendor_extension = ext;
      return { parameter: { body_parameter: out } };
    }
    case 'query':
      unexpected(p, [...PARAMETER_COMMON, 'allowEmptyValue'], 'a query parameter');
      return { parameter: { non_body_parameter: { query_parameter_sub_schema: { ...nonBodyParameter(p), ...pick(p, { allowEmptyValue: 'allow_empty_value' }) } } } };
    case 'path':
      unexpected(p, PARAMETER_COMMON, 'a path parameter');
      return { parameter: { non_body_parameter: { path_parameter_sub_schema: nonBodyParameter(p) } } };
    case 'header':
      unexpected(p, PARAMETER_COMMON, 'a header parameter');
      return { parameter: { non_body_parameter: { header_parameter_sub_schema: nonBodyParameter(p) } } };
    default:
      throw new Error(`openapi v2 protobuf: no message for parameters in ${String(p.in)}`);
  }
}

function operation(o: Json): Json {
  unexpected(o, ['tags', 'summary', 'description', 'operationId', 'produces', 'consumes', 'parameters', 'responses', 'schemes', 'deprecated'], 'an operation');
  const out = pick(o, { tags: 'tags', summary: 'summary', description: 'description', operationId: 'operation_id', produces: 'produces', consumes: 'consumes', schemes: 'schemes', deprecated: 'deprecated' });
  if (Array.isArray(o.parameters)) out.parameters = o.parameters.map((p) => parameter(p as Json));
  if (o.responses)
    out.responses = {
      response_code: named(
        Object.entries(o.responses as Record<string, Json>).map(([code, r]) => {
          if (typeof r.$ref === 'string') return [code, { json_reference: { _ref: r.$ref } }];
          unexpected(r, ['description', 'schema'], 'a response');
          const response = pick(r, { description: 'description' });
          if (r.schema) response.schema = { schema: schema(r.schema as Json) };
          const ext = extensions(r);
          if (ext.length) response.vendor_extension = ext;
          return [code, { response }];
        }),
      ),
    };
  const ext = extensions(o);
  if (ext.length) out.vendor_extension = ext;
  return out;
}

function pathItem(item: Json): Json {
  unexpected(item, ['$ref', 'get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'parameters'], 'a path');
  const out = pick(item, { $ref: '_ref' });
  for (const m of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const) if (item[m]) out[m] = operation(item[m] as Json);
  if (Array.isArray(item.parameters)) out.parameters = item.parameters.map((p) => parameter(p as Json));
  const ext = extensions(item);
  if (ext.length) out.vendor_extension = ext;
  return out;
}

/** The message object of a Swagger 2.0 document (field names as in openapi-v2.proto). */
function swaggerMessage(doc: Json): Json {
  unexpected(doc, ['swagger', 'info', 'host', 'basePath', 'schemes', 'consumes', 'produces', 'paths', 'definitions'], 'the document');
  const out = pick(doc, { swagger: 'swagger', host: 'host', basePath: 'base_path', schemes: 'schemes', consumes: 'consumes', produces: 'produces' });
  if (doc.info) {
    const info = doc.info as Json;
    out.info = { ...pick(info, { title: 'title', version: 'version', description: 'description' }), vendor_extension: extensions(info) };
  }
  if (doc.paths) {
    const paths = doc.paths as Json;
    out.paths = {
      vendor_extension: extensions(paths),
      path: named(Object.entries(paths).filter(([k]) => !k.startsWith('x-')).map(([k, v]) => [k, pathItem(v as Json)])),
    };
  }
  if (doc.definitions) out.definitions = { additional_properties: named(Object.entries(doc.definitions as Record<string, Json>).map(([k, v]) => [k, schema(v)])) };
  const ext = extensions(doc);
  if (ext.length) out.vendor_extension = ext;
  return out;
}

/** The protobuf encoding of a Swagger 2.0 document. */
export function encodeSwaggerDocument(doc: Json): Uint8Array {
  const type = DocumentType();
  return type.encode(type.fromObject(swaggerMessage(doc))).finish();
}
