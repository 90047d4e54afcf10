// A custom resource's schema, as a CRD writes it (`openAPIV3Schema`): the structural-schema rules
// kube-apiserver checks when the CRD is written (apiextensions' schema/validation.go and the CRD
// validation around it), its validation rules compiled and cost-estimated, and its conversion to
// the Schema every kind definition is written in, so custom resources take the generic paths.

import { fieldError, type FieldError } from '../machinery/field-errors.ts';
import { ERROR_WORDING, type Schema, type ValidationRule } from '../machinery/schema.ts';
import { RuleDefinitionError } from '../cel/rules.ts';
import { ruleValidator } from './validation-rules.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

type Level = 'root' | 'field' | 'item';

/**
 * The problems of a CRD version's schema at `at` (`spec.versions[0].schema.openAPIV3Schema`), in
 * kube-apiserver's words; empty when a custom resource can be served from it.
 */
export function validateCustomResourceSchema(schema: unknown, at: string, o: { statusSubresource: boolean }): FieldError[] {
  if (!isObject(schema)) return [fieldError.invalid(at, schema, 'must be an object')];
  const errs: FieldError[] = [];
  if (schema.nullable === true) errs.push(fieldError.forbidden(`${at}.nullable`, 'nullable cannot be true at the root'));
  if (o.statusSubresource && schema.type !== undefined && schema.type !== 'object')
    errs.push(fieldError.invalid(`${at}.type`, schema.type, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
  walk(schema, at, 'root', errs);
  // Rules are compiled (and their cost estimated) only for a schema that is otherwise sound.
  if (errs.length === 0) {
    try {
      ruleValidator(customResourceSchema(schema), { nestedRules: false });
    } catch (e) {
      if (!(e instanceof RuleDefinitionError)) throw e;
      for (const p of e.problems) errs.push(problemError(p.replace(/^<root>/, at)));
    }
  }
  return errs;
}

/** A rule compiler's problem (`<field>: <Kind of error>: …`) as the field error it words. */
function problemError(problem: string): FieldError {
  const sep = problem.indexOf(': ');
  const field = sep < 0 ? '' : problem.slice(0, sep);
  const body = sep < 0 ? problem : problem.slice(sep + 2);
  const type = body.startsWith('Forbidden')
    ? 'FieldValueForbidden'
    : body.startsWith('Required')
      ? 'FieldValueRequired'
      : body.startsWith('Unsupported')
        ? 'FieldValueNotSupported'
        : 'FieldValueInvalid';
  return { type, field, message: problem };
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isObjects = (v: unknown): boolean => Array.isArray(v) && v.every(isObject);

/** What each keyword's value must be (JSONSchemaProps' Go types), and how kube-apiserver's decoding names that type. */
const KEYWORD_TYPES: Record<string, [(v: unknown) => boolean, string]> = {
  type: [(v) => typeof v === 'string', 'string'],
  description: [(v) => typeof v === 'string', 'string'],
  format: [(v) => typeof v === 'string', 'string'],
  pattern: [(v) => typeof v === 'string', 'string'],
  title: [(v) => typeof v === 'string', 'string'],
  'x-kubernetes-list-type': [(v) => typeof v === 'string', 'string'],
  'x-kubernetes-map-type': [(v) => typeof v === 'string', 'string'],
  minimum: [(v) => typeof v === 'number', 'float64'],
  maximum: [(v) => typeof v === 'number', 'float64'],
  multipleOf: [(v) => typeof v === 'number', 'float64'],
  exclusiveMinimum: [(v) => typeof v === 'boolean', 'bool'],
  exclusiveMaximum: [(v) => typeof v === 'boolean', 'bool'],
  nullable: [(v) => typeof v === 'boolean', 'bool'],
  uniqueItems: [(v) => typeof v === 'boolean', 'bool'],
  'x-kubernetes-preserve-unknown-fields': [(v) => typeof v === 'boolean', 'bool'],
  'x-kubernetes-int-or-string': [(v) => typeof v === 'boolean', 'bool'],
  'x-kubernetes-embedded-resource': [(v) => typeof v === 'boolean', 'bool'],
  minLength: [isCount, 'int64'],
  maxLength: [isCount, 'int64'],
  minItems: [isCount, 'int64'],
  maxItems: [isCount, 'int64'],
  minProperties: [isCount, 'int64'],
  maxProperties: [isCount, 'int64'],
  required: [isStrings, '[]string'],
  'x-kubernetes-list-map-keys': [isStrings, '[]string'],
  enum: [Array.isArray, '[]JSON'],
  allOf: [isObjects, '[]JSONSchemaProps'],
  anyOf: [isObjects, '[]JSONSchemaProps'],
  oneOf: [isObjects, '[]JSONSchemaProps'],
  not: [isObject, 'JSONSchemaProps'],
  'x-kubernetes-validations': [isObjects, '[]ValidationRule'],
  properties: [(v) => isObject(v) && Object.values(v).every(isObject), 'map[string]JSONSchemaProps'],
  additionalProperties: [(v) => isObject(v) || typeof v === 'boolean', 'JSONSchemaPropsOrBool'],
};

/** Keywords whose values are not of their type: each one error, so nothing malformed reaches the validator of objects. */
function keywordTypes(s: Json, at: string, errs: FieldError[]): boolean {
  let ok = true;
  for (const [k, [check, goType]] of Object.entries(KEYWORD_TYPES)) {
    if (s[k] === undefined || check(s[k])) continue;
    errs.push(fieldError.invalid(`${at}.${k}`, s[k], `must be of type ${goType}`));
    ok = false;
  }
  if (Array.isArray(s.items)) {
    errs.push(fieldError.forbidden(`${at}.items`, 'items must be a schema object and not an array'));
    ok = false;
  } else if (s.items !== undefined && !isObject(s.items)) {
    errs.push(fieldError.invalid(`${at}.items`, s.items, 'must be of type JSONSchemaProps'));
    ok = false;
  }
  if (typeof s.pattern === 'string') {
    // As the validator of objects compiles it (src/machinery/schema-validate.ts): with Unicode, else without.
    try {
      new RegExp(s.pattern, 'u');
    } catch {
      try {
        new RegExp(s.pattern);
      } catch (e) {
          errs.push(fieldError.invalid(`${at}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(e as Error).message}`));
        ok = false;
      }
    }
  }
  return ok;
}

function walk(s: Json, at: string, level: Level, errs: FieldError[]): void {
  if (!keywordTypes(s, at, errs)) {
    // The node's own rules need well-typed keywords; its children are still checked.
    if (KEYWORD_TYPES.properties![0](s.properties)) for (const [k, p] of Object.entries(s.properties as Json)) walk(p as Json, `${at}.properties[${k}]`, 'field', errs);
    if (isObject(s.items)) walk(s.items, `${at}.items`, 'item', errs);
    if (isObject(s.additionalProperties)) walk(s.additionalProperties, `${at}.additionalProperties`, 'field', errs);
    return;
  }
  const type = s.type;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (type !== undefined && (typeof type !== 'string' || !TYPES.includes(type))) errs.push(fieldError.notSupported(`${at}.type`, type, TYPES));
  if (embedded && type !== 'object') {
    if (type === undefined) errs.push(fieldError.required(`${at}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(fieldError.invalid(`${at}.type`, type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (type === undefined && !intOrString && !preserve) {
    const where = { root: 'at the root', field: 'for specified object fields', item: 'for specified array items' }[level];
    errs.push(fieldError.required(`${at}.type`, `must not be empty ${where}`));
  }
  if (level === 'root' && typeof type === 'string' && type !== 'object') errs.push(fieldError.invalid(`${at}.type`, type, 'must be object at the root'));
  if (intOrString && preserve) errs.push(fieldError.invalid(`${at}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(fieldError.invalid(`${at}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (s.uniqueItems === true) errs.push(fieldError.forbidden(`${at}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (type === 'array' && s.items === undefined) errs.push(fieldError.required(`${at}.items`, 'must be specified'));
  const properties = isObject(s.properties) ? s.properties : undefined;
  const additional = s.additionalProperties;
  if (additional !== undefined) {
    if (level === 'root') errs.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used at the root'));
    if (properties && Object.keys(properties).length > 0 && (additional === false || isObject(additional)))
      errs.push(fieldError.forbidden(`${at}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    if (embedded) errs.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (s['x-kubernetes-list-type'] === 'map') {
    const keys = s['x-kubernetes-list-map-keys'];
    if (!Array.isArray(keys) || keys.length === 0) errs.push(fieldError.required(`${at}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    const items = isObject(s.items) ? s.items : undefined;
    if (items && items.type !== 'object') errs.push(fieldError.invalid(`${at}.items.type`, items.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
  } else if (s['x-kubernetes-list-map-keys'] !== undefined) {
    errs.push(fieldError.forbidden(`${at}.x-kubernetes-list-map-keys`, 'must not be set if x-kubernetes-list-type is not map'));
  }
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType as string)) errs.push(fieldError.notSupported(`${at}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  const checkMetadata = level === 'root' || embedded;
  if (properties) {
    for (const k of ['kind', 'apiVersion']) {
      const p = properties[k];
      if (checkMetadata && isObject(p) && p.type !== 'string') errs.push(fieldError.invalid(`${at}.properties[${k}].type`, p.type ?? '', 'must be string'));
    }
    const meta = properties.metadata;
    if (isObject(meta)) {
      if (checkMetadata && meta.type !== 'object') errs.push(fieldError.invalid(`${at}.properties[metadata].type`, meta.type ?? '', 'must be object'));
      if (level === 'root') {
        const declared = Object.keys(isObject(meta.properties) ? meta.properties : {});
        const others = Object.keys(meta).filter((k) => k !== 'type' && k !== 'properties' && k !== 'default');
        if (declared.some((k) => k !== 'name' && k !== 'generateName') || others.length > 0)
          errs.push(fieldError.forbidden(`${at}.properties[metadata]`, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
      }
    }
    for (const [k, p] of Object.entries(properties)) if (isObject(p)) walk(p, `${at}.properties[${k}]`, 'field', errs);
  }
  if (isObject(s.items)) walk(s.items, `${at}.items`, 'item', errs);
  if (isObject(additional)) walk(additional, `${at}.additionalProperties`, 'field', errs);
}

const KEYWORDS = [
  'type',
  'description',
  'format',
  'enum',
  'default',
  'nullable',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'maxProperties',
  'pattern',
  'required',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
] as const;

/** A CRD's JSON schema node as a Schema: the keywords the generic machinery knows, children converted. */
function toSchema(s: Json): Schema {
  const out: Record<string, unknown> = {};
  for (const k of KEYWORDS) if (s[k] !== undefined) out[k] = s[k];
  if (isObject(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).filter(([, v]) => isObject(v)).map(([k, v]) => [k, toSchema(v as Json)]));
  if (isObject(s.items)) out.items = toSchema(s.items);
  // `additionalProperties: true` keeps any field, as preserving unknown fields does.
  if (isObject(s.additionalProperties)) out.additionalProperties = toSchema(s.additionalProperties);
  else if (s.additionalProperties === true && !isObject(s.properties)) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (Array.isArray(s['x-kubernetes-validations'])) out['x-kubernetes-validations'] = s['x-kubernetes-validations'] as ValidationRule[];
  if (Array.isArray(s.allOf)) out.allOf = s.allOf.filter(isObject).map(toSchema);
  return out as Schema;
}

/**
 * The whole object's schema of a custom resource: the CRD's schema with the envelope every object
 * has (apiVersion, kind, and the standard metadata, whatever the CRD says of name and
 * generateName) over it.
 */
export function customResourceSchema(json: Json, objectMeta?: Schema): Schema {
  const s = toSchema(json);
  return {
    ...s,
    [ERROR_WORDING]: 'openapi',
    type: 'object',
    properties: {
      ...s.properties,
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: objectMeta ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
}
