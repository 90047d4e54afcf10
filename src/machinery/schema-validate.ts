// Validation, pruning and defaulting of decoded JSON against a structural schema, the way the
// Kubernetes API server treats custom resources: type errors, value constraints, list semantics,
// unknown fields (reported for fieldValidation=Strict/Warn, pruned before storage) and defaults.
//
// All three walks use an explicit work stack rather than recursion: request bodies are
// attacker-controlled and a recursive walk over 100 000 nested arrays would overflow the stack.
// Inside known schema the walk also stops at MAX_SCHEMA_DEPTH, which only a recursive schema can
// reach; below x-kubernetes-preserve-unknown-fields nothing is walked at all.

import { isDeepStrictEqual } from 'node:util';
import { re2, type RE2JS } from './re2.ts';
import { child, fieldError, type FieldError } from './field-errors.ts';
import { ERROR_WORDING, type Schema } from './schema.ts';
import { formatProblem } from './schema-formats.ts';
import { dns1123Label, pathSegmentName, validateAnnotations, validateFinalizers, validateLabels, validateManagedFields, validateOwnerReferences } from './meta.ts';

/** Containers nested deeper than this inside known schema are rejected, not walked. */
export const MAX_SCHEMA_DEPTH = 100;

interface SchemaValidationResult {
  errors: FieldError[];
  /** Paths of object keys the schema does not declare, e.g. `spec.foo`, in document order. */
  unknownFields: string[];
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** The JSON type name Kubernetes uses in "must be of type" messages. */
function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v; // string, boolean, object
}

/** The expected type as written in error texts, or undefined when any type is acceptable. */
function expectedType(schema: Schema): string | undefined {
  if (schema['x-kubernetes-int-or-string']) return 'integer,string';
  return schema.type;
}

function typeMatches(v: unknown, schema: Schema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof v === 'string' || isInteger(v);
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
  }
}

// Stands for "anything goes, nothing to walk" (preserve-unknown-fields values, embedded
// resource headers); compared by identity so the walks can skip such values without a task.
const ANY: Schema = { 'x-kubernetes-preserve-unknown-fields': true };

// An embedded resource (x-kubernetes-embedded-resource) implicitly declares the object header;
// its metadata is validated as ObjectMeta elsewhere, not by this schema.
const EMBEDDED_HEADER = new Set(['apiVersion', 'kind', 'metadata']);

/** Whether object values under this schema have their keys walked at all. */
function walksKeys(schema: Schema): boolean {
  // An object schema with neither properties nor additionalProperties is free-form here (the
  // project's schemas write `{ type: 'object' }` for opaque maps), so keys are not inspected.
  return schema.properties !== undefined || schema.additionalProperties !== undefined;
}

/**
 * The schema governing `key` of an object under `schema`: its property schema, the map value
 * schema, ANY when the key is tolerated without being described, or undefined when unknown.
 */
function keySchema(schema: Schema, key: string): Schema | undefined {
  const props = schema.properties;
  // Own-property check: a key such as `constructor` must not resolve through Object.prototype.
  if (props !== undefined && Object.hasOwn(props, key)) return props[key];
  if (schema.additionalProperties !== undefined) return schema.additionalProperties;
  if (schema['x-kubernetes-preserve-unknown-fields']) return ANY;
  if (schema['x-kubernetes-embedded-resource'] && EMBEDDED_HEADER.has(key)) return ANY;
  return undefined;
}

/** The own property `key` of `obj` (never one inherited from Object.prototype). */
function own(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Null under a non-nullable property counts as absent, as Kubernetes drops such nulls. */
function isAbsent(v: unknown, schema: Schema | undefined): boolean {
  return v === undefined || (v === null && !schema?.nullable);
}

/** Standard base64 with padding, as Go's encoding/json reads []byte. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Where Go's base64 decoder stops on text BASE64 rejects: the first character outside the
 * alphabet (padding too early counts), else the start of the incomplete last group.
 */
function base64ErrorOffset(v: string): number {
  const end = v.length - (v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0);
  for (let i = 0; i < end; i++) if (!/[A-Za-z0-9+/]/.test(v[i]!)) return i;
  return end - (end % 4);
}

/** Unicode code points, as Go counts characters (runes) for minLength/maxLength. */
function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const patternCache = new Map<string, RE2JS | null>();

/**
 * Compiled once per distinct pattern, by an RE2 engine: schema patterns are Go RE2 syntax (`(?i)`
 * flags, ASCII `\d`), matched in linear time whatever the input, as kube-apiserver matches them;
 * a backtracking engine would let one pattern and one string hold the event loop. Null when RE2
 * refuses it (a schema bug, caught when the schema is written: rejecting every request because
 * of it would help nobody).
 */
function compiledPattern(pattern: string): RE2JS | null {
  let re = patternCache.get(pattern);
  if (re !== undefined) return re;
  try {
    re = re2().compile(pattern);
  } catch {
    re = null;
  }
  patternCache.set(pattern, re);
  return re;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 with a valid date and time, as Go's time.Parse reads it. */
export function isDateTime(s: string): boolean {
  const m = RFC3339.exec(s);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day > days) return false;
  // Go's time.Parse (behind Kubernetes' date-time check) rejects second 60 as well.
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return true;
}

const INT_RANGES: Record<string, { min: number; max: number; text: string }> = {
  int32: { min: -2147483648, max: 2147483647, text: 'between -2147483648 and 2147483647' },
  // 2^63 is exactly representable, and every double below it is a valid int64.
  int64: { min: -(2 ** 63), max: 2 ** 63 - 1, text: 'between -9223372036854775808 and 9223372036854775807' },
};

function intOutOfRange(v: number, format: string): string | undefined {
  const range = Object.hasOwn(INT_RANGES, format) ? INT_RANGES[format] : undefined;
  if (range === undefined) return undefined;
  if (!Number.isInteger(v) || v < range.min || v >= range.max + 1) return `must be a valid ${format} (${range.text})`;
  return undefined;
}

// Values above this nesting are not echoed in error texts: rendering them (showValue,
// JSON.stringify) recurses and would overflow on hostile input.
const SHOWN_DEPTH = 32;

/** The value itself when it is safe to render, else a placeholder. */
function shown(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const stack: { v: unknown; d: number }[] = [{ v, d: 1 }];
  while (stack.length > 0) {
    const top = stack.pop() as { v: unknown; d: number };
    if (top.d > SHOWN_DEPTH) return '…';
    const values = Array.isArray(top.v) ? top.v : Object.values(top.v as JsonObject);
    for (const x of values) if (typeof x === 'object' && x !== null) stack.push({ v: x, d: top.d + 1 });
  }
  return v;
}

// Literal text inside canonical()'s work stack; a class so parsed JSON can never look like one.
class Lit {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * A string equal for deeply equal JSON values, object keys sorted. Iterative for the same reason
 * as the walks: set items may hold arbitrarily deep preserved values.
 */
function canonical(v: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x instanceof Lit) {
      out.push(x.text);
    } else if (Array.isArray(x)) {
      out.push('[');
      stack.push(new Lit(']'));
      for (let i = x.length - 1; i >= 0; i--) {
        stack.push(x[i]);
        if (i > 0) stack.push(new Lit(','));
      }
    } else if (isObject(x)) {
      out.push('{');
      stack.push(new Lit('}'));
      const keys = Object.keys(x).sort();
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push(x[keys[i]]);
        stack.push(new Lit(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`));
      }
    } else {
      out.push(x === undefined ? 'null' : JSON.stringify(x));
    }
  }
  return out.join('');
}

interface Node {
  value: unknown;
  schema: Schema;
  path: string;
  depth: number;
  /** Array items and the root: null is a value to type-check, not an absent field. */
  item: boolean;
  /** Errors computed by the parent list (duplicates, missing keys), emitted in document order. */
  pre?: FieldError[];
  /**
   * A value validation under `allOf`: it checks the value a second time against the entry's
   * constraints, walks only the keys the entry describes, and records no unknown fields.
   */
  nested?: boolean;
  /**
   * Ratcheting (an update): the node's old value when it correlates with one (an object's field
   * by name, a map-type list's item by its keys). An unchanged node reports no errors.
   */
  old?: { value: unknown };
}

/** Work items: a node to validate, or (a bare string) the path of an unknown field to record. */
type Work = Node | string;

/** ROOT_FIELD of the rules validator: how Kubernetes prints the nil field path of an error about the whole object. */
const NIL_FIELD = '<nil>';

/** Validates `value` against `schema`; errors and unknown fields come out in document order. */
export function validateAgainstSchema(value: unknown, schema: Schema, options: { path?: string; old?: unknown } = {}): SchemaValidationResult {
  const errors: FieldError[] = [];
  const unknownFields: string[] = [];
  const wording = schema[ERROR_WORDING] === 'openapi' ? OPENAPI_WORDING : OWN_WORDING;
  const root: Node = { value, schema, path: options.path ?? '', depth: 0, item: true };
  if (options.old !== undefined) root.old = { value: options.old };
  walk(root, wording, errors, unknownFields);
  return { errors, unknownFields };
}

/** The errors of one value against a value validation (an anyOf / oneOf / not / allOf entry). */
function entryErrors(v: unknown, entry: Schema, path: string, depth: number, item: boolean, wording: Wording): FieldError[] {
  const errors: FieldError[] = [];
  walk({ value: v, schema: entry, path, depth, item, nested: true }, wording, errors, []);
  return errors;
}

/** Of failed entries' errors, those kube-openapi reports with its summary: the closest miss. */
function closest(results: FieldError[][]): FieldError[] {
  let best: FieldError[] | undefined;
  for (const r of results) if (r.length > 0 && (best === undefined || r.length < best.length)) best = r;
  return best ?? [];
}

/**
 * `anyOf`, `oneOf`, `not` (and, worded as kube-openapi does, `allOf`) of a node whose type
 * matched: a summary error at the nil path, as Kubernetes reports them, with the entries' own errors.
 */
function combinatorErrors(v: unknown, s: Schema, path: string, depth: number, item: boolean, wording: Wording, errors: FieldError[]): void {
  const quoted = JSON.stringify(path);
  if (s.anyOf !== undefined && s.anyOf.length > 0) {
    const results = s.anyOf.map((e) => entryErrors(v, e, path, depth, item, wording));
    if (!results.some((r) => r.length === 0)) {
      errors.push(fieldError.invalid(NIL_FIELD, '', `${quoted} must validate at least one schema (anyOf)`));
      for (const e of closest(results)) errors.push(e);
    }
  }
  if (s.oneOf !== undefined && s.oneOf.length > 0) {
    const results = s.oneOf.map((e) => entryErrors(v, e, path, depth, item, wording));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      errors.push(fieldError.invalid(NIL_FIELD, '', `${quoted} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`));
      if (valid === 0) for (const e of closest(results)) errors.push(e);
    }
  }
  if (wording === OPENAPI_WORDING && s.allOf !== undefined && s.allOf.length > 0) {
    const results = s.allOf.map((e) => entryErrors(v, e, path, depth, item, wording));
    const valid = results.filter((r) => r.length === 0).length;
    for (const r of results) for (const e of r) errors.push(e);
    if (valid !== results.length) errors.push(fieldError.invalid(NIL_FIELD, '', `${quoted} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`));
  }
  if (s.not !== undefined && entryErrors(v, s.not, path, depth, item, wording).length === 0) {
    errors.push(fieldError.invalid(NIL_FIELD, '', `${quoted} must not validate the schema (not)`));
  }
}

/** The old value of an object's field, when the old object has it. */
function oldField(old: Node['old'], key: string): Node['old'] {
  if (old === undefined || !isObject(old.value) || !Object.hasOwn(old.value, key)) return undefined;
  return { value: old.value[key] };
}

/** The old items of a map-type list by their keys (other lists' items do not correlate). */
function oldItems(old: Node['old'], s: Schema): ((item: unknown) => Node['old']) | undefined {
  const keys = s['x-kubernetes-list-map-keys'];
  if (old === undefined || !Array.isArray(old.value) || s['x-kubernetes-list-type'] !== 'map' || !keys?.length) return undefined;
  const keyOf = (item: unknown): string | undefined => (isObject(item) ? canonical(keys.map((k) => own(item, k) ?? null)) : undefined);
  const byKey = new Map<string, unknown>();
  for (const o of old.value) {
    const k = keyOf(o);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, o);
  }
  return (item) => {
    const k = keyOf(item);
    return k !== undefined && byKey.has(k) ? { value: byKey.get(k) } : undefined;
  };
}

function walk(start: Node, wording: Wording, errors: FieldError[], unknownFields: string[]): void {
  const openapi = wording === OPENAPI_WORDING;
  const stack: Work[] = [start];
  // Children are collected in document order, then pushed reversed so they pop in order.
  const next: Work[] = [];
  while (stack.length > 0) {
    const work = stack.pop() as Work;
    if (typeof work === 'string') {
      unknownFields.push(work);
      continue;
    }
    const { value: v, schema: s, path, depth } = work;
    // Ratcheting: a value the update left as it was keeps its errors to itself (but for the
    // metadata of the resources it embeds, which Kubernetes checks on every write).
    if (work.old !== undefined && isDeepStrictEqual(v, work.old.value)) {
      if (openapi && !work.nested && embedsResources(s)) embeddedErrorsBelow(v, s, path, depth, errors);
      continue;
    }
    if (work.pre !== undefined) for (const x of work.pre) errors.push(x);
    if (v === null || v === undefined) {
      if (s.nullable || !work.item) continue;
    }
    if (!typeMatches(v, s)) {
      const actual = typeName(v);
      // Like Kubernetes, the offending type name (not the value) is what is shown.
      errors.push(fieldError.typeInvalid(path, actual, `${path} in body must be of type ${expectedType(s)}: "${actual}"`));
      continue;
    }
    if (v === null || v === undefined) continue; // untyped schema: null is as good as anything
    if (s.anyOf !== undefined || s.oneOf !== undefined || s.not !== undefined || (openapi && s.allOf !== undefined)) combinatorErrors(v, s, path, depth, work.item, wording, errors);
    if (!openapi && s.allOf !== undefined) {
      // Kubernetes validates each allOf entry against the same value, at the same path.
      for (let i = s.allOf.length - 1; i >= 0; i--) stack.push({ value: v, schema: s.allOf[i]!, path, depth, item: work.item, nested: true });
    }

    if (typeof v !== 'object') {
      validateScalar(v, s, path, errors, wording);
      continue;
    }
    if (s.enum !== undefined) {
      const key = canonical(v);
      if (!s.enum.some((e) => canonical(e) === key)) errors.push(fieldError.notSupported(path, shown(v), s.enum.map(String)));
    }

    if (Array.isArray(v)) {
      if (s.maxItems !== undefined && v.length > s.maxItems) errors.push(fieldError.tooMany(path, v.length, s.maxItems));
      if (s.minItems !== undefined && v.length < s.minItems) errors.push(fieldError.invalid(path, shown(v), wording.minItems(path, s.minItems)));
      const items = s.items;
      if (items === undefined || v.length === 0) continue;
      if (depth >= MAX_SCHEMA_DEPTH) {
        if (!work.nested) errors.push(fieldError.invalid(path, '…', 'nesting too deep'));
        continue;
      }
      const pre = listErrors(v, s, path);
      const oldItem = oldItems(work.old, s);
      for (let i = 0; i < v.length; i++) {
        const node: Node = { value: v[i], schema: items, path: child(path, i), depth: depth + 1, item: true, nested: work.nested };
        if (pre?.[i] !== undefined) node.pre = pre[i];
        if (oldItem !== undefined) node.old = oldItem(v[i]);
        next.push(node);
      }
    } else {
      const obj = v as JsonObject;
      const props = s.properties;
      if (openapi && !work.nested && s['x-kubernetes-embedded-resource']) embeddedErrors(obj, path, errors);
      if (s.maxProperties !== undefined || s.minProperties !== undefined) {
        const count = Object.keys(obj).length;
        if (s.maxProperties !== undefined && count > s.maxProperties) errors.push(fieldError.tooMany(path, count, s.maxProperties));
        if (s.minProperties !== undefined && count < s.minProperties) errors.push(fieldError.invalid(path, count, wording.minProperties(path, s.minProperties)));
      }
      if (s.required !== undefined) {
        for (const name of s.required) {
          const prop = props !== undefined && Object.hasOwn(props, name) ? props[name] : undefined;
          // A field with a default is never missing: decoding fills it in (before validation, as
          // Kubernetes defaults while decoding).
          if (isAbsent(own(obj, name), prop) && prop?.default === undefined) errors.push(fieldError.required(child(path, name)));
        }
      }
      if (work.nested) {
        // Only the keys the entry describes; the node's own walk reports unknown fields (and too
        // deep a nesting).
        if (depth >= MAX_SCHEMA_DEPTH) continue;
        for (const [key, sub] of Object.entries(s.properties ?? {})) {
          if (Object.hasOwn(obj, key)) next.push({ value: obj[key], schema: sub, path: child(path, key), depth: depth + 1, item: false, nested: true });
        }
        const values = s.additionalProperties;
        if (values !== undefined) {
          for (const key of Object.keys(obj)) if (!Object.hasOwn(s.properties ?? {}, key)) next.push({ value: obj[key], schema: values, path: child(path, key), depth: depth + 1, item: false, nested: true });
        }
        while (next.length > 0) stack.push(next.pop() as Work);
        continue;
      }
      if (!walksKeys(s)) continue;
      const keys = Object.keys(obj);
      if (keys.length === 0) continue;
      if (depth >= MAX_SCHEMA_DEPTH) {
        errors.push(fieldError.invalid(path, '…', 'nesting too deep'));
        continue;
      }
      for (const key of keys) {
        const sub = keySchema(s, key);
        if (sub === undefined) next.push(child(path, key));
        else if (sub !== ANY) {
          const node: Node = { value: obj[key], schema: sub, path: child(path, key), depth: depth + 1, item: false };
          if (work.old !== undefined) node.old = oldField(work.old, key);
          next.push(node);
        }
      }
    }
    while (next.length > 0) stack.push(next.pop() as Work);
  }
}

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

const embedding = new WeakMap<Schema, boolean>();

/** Whether a value under this schema may hold an embedded resource (a recursive schema is followed once). */
function embedsResources(schema: Schema): boolean {
  const known = embedding.get(schema);
  if (known !== undefined) return known;
  const seen = new Set<Schema>();
  const stack = [schema];
  let found = false;
  while (stack.length > 0 && !found) {
    const s = stack.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (s['x-kubernetes-embedded-resource']) found = true;
    for (const sub of Object.values(s.properties ?? {})) stack.push(sub);
    if (s.additionalProperties !== undefined) stack.push(s.additionalProperties);
    if (s.items !== undefined) stack.push(s.items);
  }
  embedding.set(schema, found);
  return found;
}

/**
 * The header checks of every embedded resource in a value the schema walk skipped (an update left
 * it as it was): Kubernetes checks embedded metadata on updates as on creates. The value is
 * followed where the schema describes it (properties, map values, items), as kube-apiserver does.
 */
function embeddedErrorsBelow(value: unknown, schema: Schema, path: string, depth: number, errors: FieldError[]): void {
  const stack: { v: unknown; s: Schema; path: string; depth: number }[] = [{ v: value, s: schema, path, depth }];
  while (stack.length > 0) {
    const { v, s, path: at, depth: d } = stack.pop()!;
    if (d > MAX_SCHEMA_DEPTH) continue;
    const found: typeof stack = [];
    if (Array.isArray(v)) {
      if (s.items !== undefined) for (let i = 0; i < v.length; i++) found.push({ v: v[i], s: s.items, path: child(at, i), depth: d + 1 });
    } else if (isObject(v)) {
      if (s['x-kubernetes-embedded-resource']) embeddedErrors(v, at, errors);
      for (const key of Object.keys(v)) {
        const sub = s.properties !== undefined && Object.hasOwn(s.properties, key) ? s.properties[key] : s.additionalProperties;
        if (sub !== undefined) found.push({ v: v[key], s: sub, path: child(at, key), depth: d + 1 });
      }
    }
    for (let i = found.length - 1; i >= 0; i--) stack.push(found[i]!);
  }
}

/**
 * An embedded resource's header, as Kubernetes checks it beside the schema: a kind that is a
 * (mixed-case) DNS-1035 label, an apiVersion of at most one slash, a metadata name usable as a
 * path segment. Their presence and types are the schema's (an embedded node declares them).
 */
function embeddedErrors(obj: JsonObject, path: string, errors: FieldError[]): void {
  const kind = own(obj, 'kind');
  if (kind === '') errors.push(fieldError.invalid(child(path, 'kind'), kind, 'must not be empty'));
  else if (typeof kind === 'string') {
    const problems = [...(kind.length > 63 ? ['must be no more than 63 characters'] : []), ...(DNS1035_LABEL.test(kind.toLowerCase()) ? [] : [DNS1035_MESSAGE])];
    if (problems.length) errors.push(fieldError.invalid(child(path, 'kind'), kind, `may have mixed case, but should otherwise match: ${problems.join(',')}`));
  }
  const apiVersion = own(obj, 'apiVersion');
  if (apiVersion === '') errors.push(fieldError.invalid(child(path, 'apiVersion'), apiVersion, 'must not be empty'));
  else if (typeof apiVersion === 'string' && apiVersion !== '/' && apiVersion.split('/').length > 2)
    errors.push(fieldError.invalid(child(path, 'apiVersion'), apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  const meta = own(obj, 'metadata');
  if (isObject(meta)) for (const e of embeddedObjectMetaErrors(meta, child(path, 'metadata'))) errors.push(e);
}

/** What the checks beside the schema find wrong in an embedded resource's header (a CRD's defaults are checked with them). */
export function embeddedResourceErrors(obj: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (isObject(obj)) embeddedErrors(obj, path, errors);
  return errors;
}

/**
 * An embedded resource's metadata, checked as ObjectMeta is on a create (kube-apiserver's
 * ValidateObjectMeta, with path-segment names, managed fields included): a name is not required (one is made up when
 * absent), a namespace only checked when given. Values of the wrong type are the schema's to report.
 */
function embeddedObjectMetaErrors(meta: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = own(meta, 'generateName');
  if (typeof generateName === 'string' && generateName !== '')
    for (const bad of ['/', '%']) if (generateName.includes(bad)) errs.push(fieldError.invalid(child(path, 'generateName'), generateName, `may not contain '${bad}'`));
  const name = own(meta, 'name');
  if (typeof name === 'string' && name !== '') for (const m of pathSegmentName(name)) errs.push(fieldError.invalid(child(path, 'name'), name, m));
  const namespace = own(meta, 'namespace');
  if (typeof namespace === 'string' && namespace !== '') for (const m of dns1123Label(namespace)) errs.push(fieldError.invalid(child(path, 'namespace'), namespace, m));
  const generation = own(meta, 'generation');
  if (typeof generation === 'number' && generation < 0) errs.push(fieldError.invalid(child(path, 'generation'), generation, 'must be greater than or equal to 0'));
  const ofType = (v: unknown, isType: (x: unknown) => boolean) => (isType(v) ? v : undefined);
  errs.push(...validateLabels(ofType(own(meta, 'labels'), isObject), child(path, 'labels')));
  errs.push(...validateAnnotations(ofType(own(meta, 'annotations'), isObject), child(path, 'annotations')));
  errs.push(...validateOwnerReferences(own(meta, 'ownerReferences'), child(path, 'ownerReferences')));
  errs.push(...validateFinalizers(ofType(own(meta, 'finalizers'), Array.isArray), child(path, 'finalizers')));
  errs.push(...validateManagedFields(own(meta, 'managedFields'), child(path, 'managedFields')));
  return errs;
}

/** The details of value errors, in one of the two wordings Kubernetes uses (ERROR_WORDING). */
interface Wording {
  minItems(path: string, n: number): string;
  minLength(path: string, n: number): string;
  pattern(path: string, p: string): string;
  minimum(path: string, n: number, exclusive: boolean): string;
  maximum(path: string, n: number, exclusive: boolean): string;
  minProperties(path: string, n: number): string;
  multipleOf(path: string, n: number): string;
}

const OWN_WORDING: Wording = {
  minItems: (_p, n) => `must have at least ${n} items`,
  minLength: (_p, n) => `must be at least ${n} characters long`,
  pattern: (_p, re) => `must match the pattern ${re}`,
  minimum: (_p, n, ex) => (ex ? `must be greater than ${n}` : `must be greater than or equal to ${n}`),
  maximum: (_p, n, ex) => (ex ? `must be less than ${n}` : `must be less than or equal to ${n}`),
  minProperties: (_p, n) => `must have at least ${n} properties`,
  multipleOf: (_p, n) => `must be a multiple of ${n}`,
};

/** kube-openapi's validator, as custom resources' errors read. */
const OPENAPI_WORDING: Wording = {
  minItems: (p, n) => `${p} in body should have at least ${n} items`,
  minLength: (p, n) => `${p} in body should be at least ${n} chars long`,
  pattern: (p, re) => `${p} in body should match '${re}'`,
  minimum: (p, n, ex) => `${p} in body should be greater than ${ex ? '' : 'or equal to '}${n}`,
  maximum: (p, n, ex) => `${p} in body should be less than ${ex ? '' : 'or equal to '}${n}`,
  minProperties: (p, n) => `${p} in body should have at least ${n} properties`,
  multipleOf: (p, n) => `${p} in body should be a multiple of ${n}`,
};

function validateScalar(v: unknown, s: Schema, path: string, errors: FieldError[], wording: Wording): void {
  if (s.enum !== undefined && !s.enum.some((e) => e === v)) {
    errors.push(fieldError.notSupported(path, v, s.enum.map(String)));
  }
  if (typeof v === 'string') {
    if (s.maxLength !== undefined || s.minLength !== undefined) {
      const len = charCount(v);
      if (s.maxLength !== undefined && len > s.maxLength) errors.push(fieldError.tooLong(path, v, s.maxLength));
      if (s.minLength !== undefined && len < s.minLength) errors.push(fieldError.invalid(path, v, wording.minLength(path, s.minLength)));
    }
    if (s.pattern !== undefined) {
      const re = compiledPattern(s.pattern);
      if (re !== null && !re.test(v)) errors.push(fieldError.invalid(path, v, wording.pattern(path, s.pattern!)));
    }
    if (wording === OPENAPI_WORDING) {
      // kube-openapi's formats: a value not of its format is of the wrong type.
      if (s.format !== undefined && formatProblem(s.format, v)) errors.push(fieldError.typeInvalid(path, v, `${path} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
    } else if (s.format === 'byte' && !BASE64.test(v)) {
      // Go decodes []byte from base64 while decoding the body: a decoding error, like a wrong type.
      // Its message gives the position only, never the text (bytes are often secret).
      errors.push({ type: 'FieldValueTypeInvalid', field: path, message: `illegal base64 data at input byte ${base64ErrorOffset(v)}` });
    }
    if (wording !== OPENAPI_WORDING && s.format === 'date-time' && !isDateTime(v)) {
      errors.push(fieldError.typeInvalid(path, v, `${path} in body must be of type date-time: ${JSON.stringify(v)}`));
    }
  } else if (typeof v === 'number') {
    if (s.minimum !== undefined) {
      if (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)
        errors.push(fieldError.invalid(path, v, wording.minimum(path, s.minimum, s.exclusiveMinimum === true)));
    }
    if (s.maximum !== undefined) {
      if (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)
        errors.push(fieldError.invalid(path, v, wording.maximum(path, s.maximum, s.exclusiveMaximum === true)));
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !isMultiple(v, s.multipleOf)) errors.push(fieldError.invalid(path, v, wording.multipleOf(path, s.multipleOf)));
    // Custom resources' integers are JSON numbers: kube-openapi checks no range for int32 / int64.
    if (s.format !== undefined && wording !== OPENAPI_WORDING) {
      const detail = intOutOfRange(v, s.format);
      // Out of the Go type's range: a decoding error, like a wrong type.
      if (detail !== undefined) errors.push(fieldError.typeInvalid(path, v, detail));
    }
  }
}

/** Whether `v` is a multiple of `m`, within float precision (as kube-openapi's check). */
function isMultiple(v: number, m: number): boolean {
  const q = v / m;
  return Math.abs(q - Math.round(q)) < 1e-9 * Math.max(1, Math.abs(q));
}

/**
 * Per-item errors from x-kubernetes-list-type: repeated items of a set, and for a map, items
 * missing a key field or repeating an earlier item's key tuple. Undefined when there are none.
 */
function listErrors(list: unknown[], s: Schema, path: string): FieldError[][] | undefined {
  const listType = s['x-kubernetes-list-type'];
  let out: FieldError[][] | undefined;
  const add = (i: number, e: FieldError): void => {
    out ??= [];
    (out[i] ??= []).push(e);
  };
  if (listType === 'set') {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const k = canonical(item);
      if (seen.has(k)) add(i, fieldError.duplicate(child(path, i), shown(item)));
      else seen.add(k);
    });
  } else if (listType === 'map') {
    const keyFields = s['x-kubernetes-list-map-keys'] ?? [];
    if (keyFields.length === 0) return undefined;
    const items = s.items;
    const itemProps = items?.properties;
    // A key field the item schema already requires is reported by the item's own walk.
    const selfRequired = new Set(items?.required ?? []);
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (!isObject(item)) return; // the item's type error says it all
      const tuple: JsonObject = {};
      let complete = true;
      for (const f of keyFields) {
        const prop = itemProps !== undefined && Object.hasOwn(itemProps, f) ? itemProps[f] : undefined;
        if (isAbsent(own(item, f), prop)) {
          complete = false;
          if (!selfRequired.has(f)) add(i, fieldError.required(child(child(path, i), f)));
        } else {
          tuple[f] = item[f];
        }
      }
      if (!complete) return;
      const k = canonical(keyFields.map((f) => tuple[f]));
      if (seen.has(k)) add(i, fieldError.duplicate(child(path, i), shown(tuple)));
      else seen.add(k);
    });
  }
  return out;
}

/**
 * Deletes, in place, exactly the unknown fields validateAgainstSchema reports (same walk, same
 * depth limit), as done for fieldValidation=Ignore/Warn before an object is stored.
 */
export function pruneUnknownFields(value: unknown, schema: Schema): void {
  const stack: { value: unknown; schema: Schema; depth: number }[] = [{ value, schema, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, schema: s, depth } = stack.pop() as { value: unknown; schema: Schema; depth: number };
    // Values the validator rejects by type are not walked by it either.
    if (v === null || typeof v !== 'object' || !typeMatches(v, s)) continue;
    if (Array.isArray(v)) {
      if (s.items === undefined || v.length === 0 || depth >= MAX_SCHEMA_DEPTH) continue;
      for (const item of v) stack.push({ value: item, schema: s.items, depth: depth + 1 });
      continue;
    }
    const obj = v as JsonObject;
    if (!walksKeys(s) || depth >= MAX_SCHEMA_DEPTH) continue;
    for (const key of Object.keys(obj)) {
      const sub = keySchema(s, key);
      if (sub === undefined) delete obj[key];
      else if (sub !== ANY) stack.push({ value: obj[key], schema: sub, depth: depth + 1 });
    }
  }
}

/**
 * Fills in `default`s, in place: a property that is absent (or null while not nullable) in an
 * existing object gets a copy of its default, and null array items get the item default. The
 * walk then continues into the filled-in values, so defaults nest. Returns whether anything was filled in.
 */
export function applyDefaults(value: unknown, schema: Schema): boolean {
  let changed = false;
  const stack: { value: unknown; schema: Schema; depth: number }[] = [{ value, schema, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, schema: s, depth } = stack.pop() as { value: unknown; schema: Schema; depth: number };
    if (v === null || typeof v !== 'object' || !typeMatches(v, s) || depth >= MAX_SCHEMA_DEPTH) continue;
    if (Array.isArray(v)) {
      const items = s.items;
      if (items === undefined) continue;
      for (let i = 0; i < v.length; i++) {
        // Each item gets its own copy: stored objects must not share (and co-mutate) a default.
        if (v[i] === null && items.default !== undefined && !items.nullable) {
          v[i] = structuredClone(items.default);
          changed = true;
        }
        stack.push({ value: v[i], schema: items, depth: depth + 1 });
      }
      continue;
    }
    const obj = v as JsonObject;
    const props = s.properties;
    if (props !== undefined) {
      for (const [name, prop] of Object.entries(props)) {
        if (prop.default !== undefined && isAbsent(own(obj, name), prop)) {
          obj[name] = structuredClone(prop.default);
          changed = true;
        }
      }
    }
    for (const key of Object.keys(obj)) {
      const sub = keySchema(s, key);
      if (sub === undefined || sub === ANY) continue;
      // A map value that is a non-nullable null gets the values' default, as an array item does.
      if (obj[key] === null && sub === s.additionalProperties && !Object.hasOwn(props ?? {}, key) && sub.default !== undefined && !sub.nullable) {
        obj[key] = structuredClone(sub.default);
        changed = true;
      }
      stack.push({ value: obj[key], schema: sub, depth: depth + 1 });
    }
  }
  return changed;
}

/**
 * Deletes, in place, the nulls of object fields the schema describes as neither nullable nor
 * defaulted, as Kubernetes drops them while decoding a custom resource (a defaulted one is
 * defaulted instead). Array items stay: a null item is a type error.
 */
export function dropNonNullableNulls(value: unknown, schema: Schema): void {
  const stack: { value: unknown; schema: Schema; depth: number }[] = [{ value, schema, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, schema: s, depth } = stack.pop() as { value: unknown; schema: Schema; depth: number };
    if (v === null || typeof v !== 'object' || !typeMatches(v, s) || depth >= MAX_SCHEMA_DEPTH) continue;
    if (Array.isArray(v)) {
      if (s.items !== undefined) for (const item of v) stack.push({ value: item, schema: s.items, depth: depth + 1 });
      continue;
    }
    const obj = v as JsonObject;
    for (const key of Object.keys(obj)) {
      const sub = keySchema(s, key);
      if (sub === undefined || sub === ANY) continue;
      if (obj[key] === null && !sub.nullable && sub.default === undefined) delete obj[key];
      else stack.push({ value: obj[key], schema: sub, depth: depth + 1 });
    }
  }
}
