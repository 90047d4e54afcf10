// A custom resource's schema, as a CRD writes it (`openAPIV3Schema`): the structural-schema rules
// kube-apiserver checks when the CRD is written (apiextensions' schema/validation.go and the CRD
// validation around it), its validation rules compiled and cost-estimated, and its conversion to
// the Schema every kind definition is written in, so custom resources take the generic paths.
// Checking a schema needs the expression language loaded (loadCel): its rules are compiled, its
// patterns compiled by the language's regular expressions (RE2).

import { isDeepStrictEqual } from 'node:util';
import { fieldError, type FieldError } from '../machinery/field-errors.ts';
import { ERROR_WORDING, type Schema, type ValidationRule } from '../machinery/schema.ts';
import { embeddedResourceErrors, pruneUnknownFields, validateAgainstSchema } from '../machinery/schema-validate.ts';
import { cel } from '../cel/load.ts';
import { ruleValidator } from './validation-rules.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

type Level = 'root' | 'field' | 'item';

/**
 * The problems of a CRD version's schema at `at` (`spec.versions[0].schema.openAPIV3Schema`), in
 * kube-apiserver's words; empty when a custom resource can be served from it.
 */
export function validateCustomResourceSchema(schema: unknown, at: string, o: { statusSubresource: boolean; objectMeta?: Schema; ignore?: (e: FieldError) => boolean }): FieldError[] {
  if (!isObject(schema)) return [fieldError.invalid(at, schema, 'must be an object')];
  const found: FieldError[] = [];
  if (o.statusSubresource) {
    if (schema.type !== undefined && schema.type !== 'object')
      found.push(fieldError.invalid(`${at}.type`, schema.type, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
    else if (Object.entries(schema).some(([k, v]) => !ROOT_WITH_STATUS.has(k) && !isZero(v)))
      found.push(fieldError.invalid(at, schema, `only [${ROOT_WITH_STATUS_GO.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`));
  }
  if (schema.nullable === true) found.push(fieldError.forbidden(`${at}.nullable`, 'nullable cannot be true at the root'));
  walk(schema, at, 'root', found, { insideMeta: false });
  // Problems an update may keep (the CRD's leniency) are dropped before they can hold anything back.
  const ignore = o.ignore;
  const kept = (list: FieldError[]) => (ignore ? list.filter((e) => !ignore(e)) : list);
  const errs = kept(found);
  // Defaults and rules are checked (rules compiled, their cost estimated) only for a schema that
  // is otherwise sound, as kube-apiserver checks them only for a valid structural schema.
  if (errs.length === 0) errs.push(...kept(validateDefaults(schema, at, o.objectMeta)));
  if (errs.length === 0) {
    try {
      ruleValidator(customResourceSchema(schema), { nestedRules: false });
    } catch (e) {
      if (!(e instanceof cel().rules.RuleDefinitionError)) throw e;
      errs.push(...kept(e.problems.map((p) => problemError(p.replace(/^<root>/, at)))));
    }
  }
  return errs;
}

/** Whether a CRD version's schema is structural (the NonStructuralSchema condition is False). */
export function structuralProblems(schema: unknown, at: string): FieldError[] {
  if (!isObject(schema)) return [];
  const errs: FieldError[] = [];
  walk(schema, at, 'root', errs, { insideMeta: false, structuralOnly: true });
  return errs;
}

/** The keywords allowed at the root of a schema whose version has the status subresource (kube's field names beside). */
const ROOT_WITH_STATUS = new Set(['description', 'type', 'format', 'title', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'required', 'items', 'properties', 'externalDocs', 'example', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations']);
const ROOT_WITH_STATUS_GO = ['Description', 'Type', 'Format', 'Title', 'Maximum', 'ExclusiveMaximum', 'Minimum', 'ExclusiveMinimum', 'MaxLength', 'MinLength', 'Pattern', 'MaxItems', 'MinItems', 'UniqueItems', 'MultipleOf', 'Required', 'Items', 'Properties', 'ExternalDocs', 'Example', 'XPreserveUnknownFields', 'XValidations'];

/** A Go zero value (skipped when kube-apiserver compares the root's fields): false, 0, "", empty. */
function isZero(v: unknown): boolean {
  if (v === false || v === 0 || v === '' || v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
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

/** A rule's fields of ValidationRule's Go types (`rule` and `reason` have checks of their own). */
const RULE_FIELD_TYPES: Record<string, string> = { message: 'string', messageExpression: 'string', fieldPath: 'string', optionalOldSelf: 'boolean' };
const isRules = (v: unknown): boolean =>
  Array.isArray(v) && v.every((r) => isObject(r) && Object.entries(RULE_FIELD_TYPES).every(([k, t]) => r[k] === undefined || typeof r[k] === t));

/** What each keyword's value must be (JSONSchemaProps' Go types), and how kube-apiserver's decoding names that type. */
const KEYWORD_TYPES: Record<string, [(v: unknown) => boolean, string]> = {
  type: [(v) => typeof v === 'string', 'string'],
  description: [(v) => typeof v === 'string', 'string'],
  format: [(v) => typeof v === 'string', 'string'],
  pattern: [(v) => typeof v === 'string', 'string'],
  title: [(v) => typeof v === 'string', 'string'],
  $schema: [(v) => typeof v === 'string', 'string'],
  externalDocs: [(v) => isObject(v) && ['description', 'url'].every((k) => v[k] === undefined || typeof v[k] === 'string'), 'ExternalDocumentation'],
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
  'x-kubernetes-validations': [isRules, '[]ValidationRule'],
  properties: [(v) => isObject(v) && Object.values(v).every(isObject), 'map[string]JSONSchemaProps'],
  additionalProperties: [(v) => isObject(v) || typeof v === 'boolean', 'JSONSchemaPropsOrBool'],
};

/** Each keyword's check and its place in KEYWORD_TYPES (the order its errors are reported in). */
const KEYWORD_CHECKS = new Map(Object.entries(KEYWORD_TYPES).map(([k, [check, goType]], i) => [k, { check, goType, order: i }] as const));

/** Keywords whose values are not of their type: each one error, so nothing malformed reaches the validator of objects. */
function keywordTypes(s: Json, at: string, errs: FieldError[]): boolean {
  let ok = true;
  // The node's own keys are looked up (a node has a few; the keywords are many).
  let bad: string[] | undefined;
  for (const k of Object.keys(s)) {
    const c = KEYWORD_CHECKS.get(k);
    if (c === undefined || s[k] === undefined || c.check(s[k])) continue;
    (bad ??= []).push(k);
  }
  if (bad) {
    bad.sort((a, b) => KEYWORD_CHECKS.get(a)!.order - KEYWORD_CHECKS.get(b)!.order);
    for (const k of bad) errs.push(fieldError.invalid(`${at}.${k}`, s[k], `must be of type ${KEYWORD_CHECKS.get(k)!.goType}`));
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
    // Go's regexp (RE2) must compile it, as kube-apiserver compiles it.
    const re = cel().regex.compileRegex(s.pattern);
    if (typeof re === 'string') {
      errs.push(fieldError.invalid(`${at}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${re}`));
      ok = false;
    }
  }
  return ok;
}

interface Context {
  /** Inside the apiVersion, kind or metadata of the resource or of an embedded resource. */
  insideMeta: boolean;
  /** Why defaults are forbidden here, when they are. */
  noDefaults?: string;
  /** Only the structural-schema rules (what the NonStructuralSchema condition reports). */
  structuralOnly?: boolean;
}

const UNSUPPORTED: Record<string, string> = {
  id: 'id is not supported',
  additionalItems: 'additionalItems is not supported',
  patternProperties: 'patternProperties is not supported',
  definitions: 'definitions is not supported',
  dependencies: 'dependencies is not supported',
  $ref: '$ref is not supported',
};

const UNSUPPORTED_ENTRIES = Object.entries(UNSUPPORTED);

const COMBINATORS = ['allOf', 'anyOf', 'oneOf'] as const;

function walk(s: Json, at: string, level: Level, errs: FieldError[], ctx: Context): void {
  if (!keywordTypes(s, at, errs)) {
    // The node's own rules need well-typed keywords; its children are still checked.
    if (KEYWORD_TYPES.properties![0](s.properties)) for (const [k, p] of Object.entries(s.properties as Json)) walk(p as Json, `${at}.properties[${k}]`, 'field', errs, ctx);
    if (isObject(s.items)) walk(s.items, `${at}.items`, 'item', errs, ctx);
    if (isObject(s.additionalProperties)) walk(s.additionalProperties, `${at}.additionalProperties`, 'field', errs, ctx);
    return;
  }
  // The rules of the schema's API validation beside the structural ones: not reported as structural problems.
  const other: FieldError[] = ctx.structuralOnly ? [] : errs;
  const type = s.type;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (type !== undefined && (typeof type !== 'string' || !TYPES.includes(type))) other.push(fieldError.notSupported(`${at}.type`, type, TYPES));
  if (type === 'null') other.push(fieldError.forbidden(`${at}.type`, 'type cannot be set to null, use nullable as an alternative'));
  // (The node's own keys are looked up: a miss on each unsupported keyword costs more.)
  let unsupported = false;
  for (const k of Object.keys(s)) if (Object.hasOwn(UNSUPPORTED, k)) unsupported = true;
  if (unsupported) for (const [k, detail] of UNSUPPORTED_ENTRIES) if (s[k] !== undefined) other.push(fieldError.forbidden(`${at}.${k}`, detail));
  if (s.default != null && ctx.noDefaults !== undefined) other.push(fieldError.forbidden(`${at}.default`, `must not be set ${ctx.noDefaults}`));
  if (ctx.insideMeta && embedded) other.push(fieldError.forbidden(`${at}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
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
  if (s['x-kubernetes-preserve-unknown-fields'] === false) other.push(fieldError.invalid(`${at}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  if (s.uniqueItems === true) other.push(fieldError.forbidden(`${at}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (type === 'array' && s.items === undefined) errs.push(fieldError.required(`${at}.items`, 'must be specified'));
  const properties = isObject(s.properties) ? s.properties : undefined;
  const additional = s.additionalProperties;
  if (additional !== undefined) {
    if (level === 'root') errs.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used at the root'));
    if (properties && Object.keys(properties).length > 0 && (additional === false || isObject(additional)))
      other.push(fieldError.forbidden(`${at}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    if (embedded) errs.push(fieldError.forbidden(`${at}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (embedded && !preserve && (!properties || Object.keys(properties).length === 0))
    errs.push(fieldError.required(`${at}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  mapAndListTypes(s, at, other);
  combinators(s, at, errs);
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
    for (const [k, p] of Object.entries(properties)) {
      if (!isObject(p)) continue;
      const meta = checkMetadata && (k === 'metadata' || k === 'kind' || k === 'apiVersion');
      const sub: Context = meta
        ? { ...ctx, insideMeta: true, noDefaults: level === 'root' ? `in top-level ${k}` : ctx.noDefaults }
        : embedded
          ? { ...ctx, insideMeta: false }
          : ctx;
      walk(p, `${at}.properties[${k}]`, 'field', errs, sub);
    }
  }
  if (isObject(s.items)) walk(s.items, `${at}.items`, 'item', errs, ctx);
  if (isObject(additional)) walk(additional, `${at}.additionalProperties`, 'field', errs, ctx.insideMeta ? { ...ctx, noDefaults: 'inside additionalProperties applying to object metadata' } : ctx);
}

/** The list and map markers: their types, the items a set or map-type list may have, its keys. */
function mapAndListTypes(s: Json, at: string, errs: FieldError[]): void {
  // (Most nodes have no marker: nothing to check.)
  if (s['x-kubernetes-map-type'] === undefined && s['x-kubernetes-list-type'] === undefined && s['x-kubernetes-list-map-keys'] === undefined) return;
  const type = s.type;
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (type !== 'object') {
      if (type === undefined) errs.push(fieldError.required(`${at}.type`, 'must be object if x-kubernetes-map-type is specified'));
      else errs.push(fieldError.invalid(`${at}.type`, type, 'must be object if x-kubernetes-map-type is specified'));
    }
    if (mapType !== 'atomic' && mapType !== 'granular') errs.push(fieldError.notSupported(`${at}.x-kubernetes-map-type`, mapType, ['atomic', 'granular']));
  }
  const listType = s['x-kubernetes-list-type'];
  const items = isObject(s.items) ? s.items : undefined;
  if (listType !== undefined && type !== 'array') {
    if (type === undefined) errs.push(fieldError.required(`${at}.type`, 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(fieldError.invalid(`${at}.type`, type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    // Set items are compared whole: lists in them atomic, maps atomic.
    if (items.type === 'array' && items['x-kubernetes-list-type'] !== undefined && items['x-kubernetes-list-type'] !== 'atomic')
      errs.push(fieldError.invalid(`${at}.items.x-kubernetes-list-type`, items['x-kubernetes-list-type'], 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic')
      errs.push(fieldError.invalid(`${at}.items.x-kubernetes-map-type`, listType, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType as string)) errs.push(fieldError.notSupported(`${at}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && keys.length > 0) {
    if (listType === undefined) errs.push(fieldError.required(`${at}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') errs.push(fieldError.invalid(`${at}.x-kubernetes-list-type`, listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (!Array.isArray(keys) || keys.length === 0) errs.push(fieldError.required(`${at}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (s.items === undefined) errs.push(fieldError.required(`${at}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') errs.push(fieldError.invalid(`${at}.items.type`, items.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
    if (items && items.type === 'object' && Array.isArray(keys)) {
      const props = isObject(items.properties) ? items.properties : {};
      const seen = new Set<string>();
      for (const k of keys as string[]) {
        const p = props[k];
        if (isObject(p)) {
          if (p.type === 'array' || p.type === 'object') errs.push(fieldError.invalid(`${at}.items.properties[${k}].type`, items.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
        } else errs.push(fieldError.invalid(`${at}.x-kubernetes-list-map-keys`, keys, 'entries must all be names of item properties'));
        if (seen.has(k)) errs.push(fieldError.invalid(`${at}.x-kubernetes-list-map-keys`, keys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  if ((listType === 'set' || listType === 'map') && items) {
    if (items.nullable === true) errs.push(fieldError.forbidden(`${at}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
    if (listType === 'map' && Array.isArray(keys)) {
      const props = isObject(items.properties) ? items.properties : {};
      const required = Array.isArray(items.required) ? items.required : [];
      for (const k of keys as string[]) {
        const p = props[k];
        if (!isObject(p)) continue;
        if (!required.includes(k) && p.default == null)
          errs.push(fieldError.required(`${at}.items.properties[${k}].default`, 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
        if (p.nullable === true) errs.push(fieldError.forbidden(`${at}.items.properties[${k}].nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
      }
    }
  }
}

/** `anyOf [{type: integer}, {type: string}]`: the one place a type is allowed in a value validation. */
function isIntOrStringPattern(list: unknown): boolean {
  return Array.isArray(list) && list.length === 2 && isDeepStrictEqual(list[0], { type: 'integer' }) && isDeepStrictEqual(list[1], { type: 'string' });
}

/** A structural schema's value validations (allOf, anyOf, oneOf, not): what they may not say, and that they name only specified fields. */
function combinators(s: Json, at: string, errs: FieldError[], nested = false): void {
  // (Most nodes have no value validation: nothing to check.)
  if (s.allOf === undefined && s.anyOf === undefined && s.oneOf === undefined && s.not === undefined) return;
  const skipAnyOf = isIntOrStringPattern(s.anyOf);
  const allOf = Array.isArray(s.allOf) ? s.allOf : [];
  const skipFirstAllOfAnyOf = isObject(allOf[0]) && isIntOrStringPattern(allOf[0].anyOf);
  for (const k of COMBINATORS) {
    const list = s[k];
    if (!Array.isArray(list)) continue;
    if (k === 'anyOf' && skipAnyOf) continue;
    list.forEach((e, i) => {
      if (isObject(e)) nestedValidation(e, `${at}.${k}[${i}]`, errs, k === 'allOf' && i === 0 && skipFirstAllOfAnyOf);
    });
  }
  if (isObject(s.not)) nestedValidation(s.not, `${at}.not`, errs, false);
  if (!nested) completeness(s, s, at, at, errs);
}

function nestedValidation(v: Json, at: string, errs: FieldError[], skipAnyOf: boolean): void {
  // Its keywords have JSONSchemaProps' types as anywhere else (kube-apiserver could not decode it otherwise).
  if (!keywordTypes(v, at, errs)) return;
  const forbid = (k: string, detail: string) => errs.push(fieldError.forbidden(`${at}.${k}`, detail));
  if (typeof v.pattern === 'string') {
    const re = cel().regex.compileRegex(v.pattern);
    if (typeof re === 'string') errs.push(fieldError.invalid(`${at}.pattern`, v.pattern, `must be a valid regular expression, but isn't: ${re}`));
  }
  const inner = skipAnyOf ? { ...v, anyOf: undefined } : v;
  combinators(inner, at, errs, true);
  if (isObject(v.items)) nestedValidation(v.items, `${at}.items`, errs, false);
  if (isObject(v.properties)) for (const [k, p] of Object.entries(v.properties)) if (isObject(p)) nestedValidation(p, `${at}.properties[${k}]`, errs, false);
  if (typeof v.type === 'string' && v.type !== '') forbid('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural');
  if (v.default != null) forbid('default', 'must be undefined to be structural');
  if (typeof v.title === 'string' && v.title !== '') forbid('title', 'must be empty to be structural');
  if (typeof v.description === 'string' && v.description !== '') forbid('description', 'must be empty to be structural');
  if (v.nullable === true) forbid('nullable', 'must be false to be structural');
  if (v.externalDocs !== undefined) forbid('externalDocs', 'must be undefined to be structural');
  if (v['x-kubernetes-preserve-unknown-fields'] === true) forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v['x-kubernetes-embedded-resource'] === true) forbid('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v['x-kubernetes-int-or-string'] === true) forbid('x-kubernetes-int-or-string', 'must be false to be structural');
  if (Array.isArray(v['x-kubernetes-list-map-keys']) && v['x-kubernetes-list-map-keys'].length > 0) forbid('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (v['x-kubernetes-list-type'] !== undefined) forbid('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v['x-kubernetes-map-type'] !== undefined) forbid('x-kubernetes-map-type', 'must be undefined to be structural');
  if (Array.isArray(v['x-kubernetes-validations']) && v['x-kubernetes-validations'].length > 0) forbid('x-kubernetes-validations', 'must be empty to be structural');
  if (isObject(v.properties) && v.properties.metadata !== undefined) errs.push(fieldError.forbidden(`${at}.properties[metadata]`, 'must not be specified in a nested context'));
}

/** Every field or item a value validation names is specified by the structural schema too. */
function completeness(v: Json, s: Json | undefined, sAt: string, vAt: string, errs: FieldError[], nested = false): void {
  if (s === undefined) {
    errs.push(fieldError.required(sAt, `because it is defined in ${vAt}`));
    return;
  }
  const entries: [Json, string][] = [];
  if (isObject(v.not)) entries.push([v.not, `${vAt}.not`]);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(v[k])) (v[k] as unknown[]).forEach((e, i) => isObject(e) && entries.push([e, `${vAt}.${k}[${i}]`]));
  for (const [e, eAt] of entries) nestedCompleteness(e, s, sAt, eAt, errs);
  void nested;
}

function nestedCompleteness(v: Json, s: Json, sAt: string, vAt: string, errs: FieldError[]): void {
  completeness(v, s, sAt, vAt, errs, true);
  if (isObject(v.items)) {
    if (!isObject(s.items)) errs.push(fieldError.required(`${sAt}.items`, `because it is defined in ${vAt}.items`));
    else nestedCompleteness(v.items, s.items, `${sAt}.items`, `${vAt}.items`, errs);
  }
  if (isObject(v.properties)) {
    const sProps = isObject(s.properties) ? s.properties : {};
    for (const [k, p] of Object.entries(v.properties)) {
      if (!isObject(p)) continue;
      const sp = sProps[k];
      if (!isObject(sp)) errs.push(fieldError.required(`${sAt}.properties[${k}]`, `because it is defined in ${vAt}.properties[${k}]`));
      else nestedCompleteness(p, sp, `${sAt}.properties[${k}]`, `${vAt}.properties[${k}]`, errs);
    }
  }
}

/**
 * Every `default` checked against the schema of its node, as kube-apiserver does when a CRD is
 * written: it must not hold fields the schema would prune, and it must be valid there.
 */
function validateDefaults(root: Json, at: string, objectMeta: Schema | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const checkAgainstSchema = (s: Json, dAt: string, pruned: boolean): void => {
    const schema: Schema = { ...toSchema(s, objectMeta), [ERROR_WORDING]: 'openapi' };
    delete schema.default;
    if (pruned) {
      const copy = structuredClone(s.default);
      pruneUnknownFields(copy, schema);
      if (!isDeepStrictEqual(copy, s.default)) return void errs.push(fieldError.invalid(dAt, s.default, 'must not have unknown fields'));
    }
    for (const e of validateAgainstSchema(s.default, schema).errors) {
      const field = e.field === '<nil>' || e.field === '' ? dAt : `${dAt}.${e.field}`;
      const body = e.field && e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
      errs.push({ ...e, field, message: `${field}: ${body}` });
    }
  };
  /**
   * `surround` is set inside an embedded resource's apiVersion, kind or metadata: it puts a value
   * of the node where it belongs in an object of that embedded resource (kind `Validation`), as
   * kube-apiserver checks such a default: the object's header must be valid with it.
   */
  const visit = (s: Json, sAt: string, surround: ((v: unknown) => Json) | undefined): void => {
    if (s.default != null && !surround) checkAgainstSchema(s, `${sAt}.default`, true);
    else if (s.default != null && surround) {
      const dAt = `${sAt}.default`;
      const problems = embeddedResourceErrors(surround(structuredClone(s.default)), '');
      if (problems.length) {
        const text = problems.length === 1 ? problems[0]!.message : `[${problems.map((e) => e.message).join(', ')}]`;
        errs.push(fieldError.invalid(dAt, s.default, `must result in valid metadata: ${text}`));
      } else checkAgainstSchema(s, dAt, false);
    }
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (isObject(s.items)) visit(s.items, `${sAt}.items`, surround && ((v) => surround([v])));
    if (isObject(s.properties))
      for (const [k, p] of Object.entries(s.properties)) {
        if (!isObject(p)) continue;
        const inner = embedded && ['metadata', 'apiVersion', 'kind'].includes(k) ? (v: unknown): Json => ({ apiVersion: 'validation/v1', kind: 'Validation', [k]: v }) : surround && ((v: unknown) => surround({ [k]: v }));
        visit(p, `${sAt}.properties[${k}]`, inner);
      }
  };
  visit(root, at, undefined);
  return errs;
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
  'minProperties',
  'multipleOf',
  'pattern',
  'required',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
] as const;

/**
 * An embedded resource's header, as every object's: apiVersion and kind required, metadata
 * ObjectMeta; what the CRD declares of them (defaults, value checks) applies as well.
 */
function embeddedHeader(out: Record<string, unknown>, objectMeta: Schema | undefined): void {
  const declared = out.properties as Record<string, Schema> | undefined;
  const header = (name: string, base: Schema): Schema => (declared?.[name] ? overlay(base, declared[name]) : base);
  out.properties = {
    ...declared,
    apiVersion: header('apiVersion', { type: 'string' }),
    kind: header('kind', { type: 'string' }),
    ...(objectMeta ? { metadata: header('metadata', objectMeta) } : {}),
  };
  out.required = [...new Set([...((out.required as string[] | undefined) ?? []), 'apiVersion', 'kind'])];
}

/** `over`'s keywords on `base`'s, property by property. */
function overlay(base: Schema, over: Schema): Schema {
  const out: Schema = { ...base, ...over };
  if (base.properties && over.properties) {
    const props: Record<string, Schema> = { ...base.properties };
    for (const [k, v] of Object.entries(over.properties)) props[k] = props[k] ? overlay(props[k], v) : v;
    out.properties = props;
  } else if (base.properties) out.properties = base.properties;
  return out;
}

/** A CRD's JSON schema node as a Schema: the keywords the generic machinery knows, children converted. */
function toSchema(s: Json, objectMeta?: Schema): Schema {
  const out: Record<string, unknown> = {};
  // `default: null` is no default (Kubernetes decodes it as none).
  for (const k of KEYWORDS) if (s[k] !== undefined && !(k === 'default' && s[k] === null)) out[k] = s[k];
  if (isObject(s.properties)) {
    const properties: Record<string, Schema> = {};
    for (const k of Object.keys(s.properties)) {
      const v = s.properties[k];
      if (!isObject(v)) continue;
      // (Defined, not assigned: a property named `__proto__` is a property.)
      if (k === '__proto__') Object.defineProperty(properties, k, { value: toSchema(v, objectMeta), enumerable: true, writable: true, configurable: true });
      else properties[k] = toSchema(v, objectMeta);
    }
    out.properties = properties;
  }
  if (isObject(s.items)) out.items = toSchema(s.items, objectMeta);
  // `additionalProperties: true` keeps any field, as preserving unknown fields does.
  if (isObject(s.additionalProperties)) out.additionalProperties = toSchema(s.additionalProperties, objectMeta);
  else if (s.additionalProperties === true && !isObject(s.properties)) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (Array.isArray(s['x-kubernetes-validations'])) out['x-kubernetes-validations'] = s['x-kubernetes-validations'] as ValidationRule[];
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(s[k])) out[k] = (s[k] as unknown[]).filter(isObject).map((e) => toSchema(e, objectMeta));
  if (isObject(s.not)) out.not = toSchema(s.not, objectMeta);
  if (s['x-kubernetes-embedded-resource'] === true) embeddedHeader(out, objectMeta);
  return out as Schema;
}

/**
 * The whole object's schema of a custom resource: the CRD's schema with the envelope every object
 * has (apiVersion, kind, and the standard metadata, whatever the CRD says of name and
 * generateName) over it.
 */
export function customResourceSchema(json: Json, objectMeta?: Schema): Schema {
  const s = toSchema(json, objectMeta);
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
