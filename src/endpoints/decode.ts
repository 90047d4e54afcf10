// Decoding of request objects against the kind's schema, with field validation: type errors are
// fatal (400); unknown and duplicate fields are dropped, warned about or rejected per
// `fieldValidation`; other schema violations are 422 Invalid.

import { findDuplicateKeys, jsonNestingExceeds } from '../machinery/json-duplicates.ts';
import { isPlainObject, type KObject } from '../machinery/meta.ts';
import { applyDefaults, dropNonNullableNulls, pruneUnknownFields, validateAgainstSchema } from '../machinery/schema-validate.ts';
import type { Tags } from 'yaml';
import { yaml } from '../machinery/yaml.ts';
import { readYamlFast, YamlAliasError, type FastRead } from '../machinery/yaml-read.ts';
import { checkYamlTags } from './yaml-tags.ts';
import { decodeObject as decodeProtobuf } from '../wire/protobuf/index.ts';
import { decodeCbor } from '../wire/cbor.ts';
import { leftToDeclarative } from '../registry/declarative-validation.ts';
import { errors } from '../machinery/status.ts';
import { normalizeGoTypes, QuantityDecodeError } from '../machinery/normalize.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { isUnstructured, type Schema } from '../machinery/schema.ts';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function parseFieldValidation(v: string | null): FieldValidation {
  if (v === null || v === '') return 'Warn';
  if (v === 'Ignore' || v === 'Warn' || v === 'Strict') return v;
  throw errors.badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got: ${JSON.stringify(v)}`);
}

/** Deeper documents are refused before any recursive code sees them. */
const MAX_JSON_DEPTH = 1000;

/**
 * A JSON.parse message without the piece of the input V8 quotes (`Unexpected token 'h', "…" is
 * not valid JSON`): the body may hold secret values, and Go's decoder names the offending
 * character only.
 */
function withoutQuotedInput(message: string): string {
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' in JSON');
}

/** JSON.parse with the parse failure (and hostile nesting) as a 400. */
export function parseJson(text: string, what = "couldn't get version/kind; json parse error"): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`${what}: ${withoutQuotedInput((e as Error).message)}`);
  }
  checkJsonDepth(text, what);
  return value;
}

const tooDeep = (what: string) => errors.badRequest(`${what}: exceeded max depth of ${MAX_JSON_DEPTH}`);

/** Nesting deeper than MAX_JSON_DEPTH is refused (each level takes at least two characters of text). */
function checkJsonDepth(text: string, what: string): void {
  if (text.length > 2 * MAX_JSON_DEPTH && jsonNestingExceeds(text, MAX_JSON_DEPTH)) throw tooDeep(what);
}

/** The same for a value parsed from another format (`size` is its encoded length). */
function checkDepth(size: number, value: unknown, what: string): void {
  if (size > 2 * MAX_JSON_DEPTH && depthExceeds(value, MAX_JSON_DEPTH)) throw tooDeep(what);
}

/** Whether nesting goes deeper than `max`, walked without recursion or per-object allocation. */
function depthExceeds(value: unknown, max: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d >= max) return true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(d + 1);
        }
      }
    } else {
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const c = o[k];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(d + 1);
        }
      }
    }
  }
  return false;
}

/**
 * Kubernetes' decoder keeps at most this many strict errors (unknown and duplicate fields), each
 * text once: they become the Strict error's message or the Warn warnings.
 */
export const MAX_STRICT_ERRORS = 100;

/** The strict-decoding problems of a document: unknown fields, then duplicate fields, deduped and bounded. */
export function strictProblems(unknownFields: readonly string[], duplicates: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const [what, paths] of [['unknown', unknownFields], ['duplicate', duplicates]] as const) {
    for (const f of paths) {
      if (seen.size >= MAX_STRICT_ERRORS) return [...seen];
      seen.add(`${what} field "${f}"`);
    }
  }
  return [...seen];
}

export interface Decoded {
  obj: KObject;
  warnings: string[];
}

/**
 * Check a request object (already parsed from `text`, or produced by a patch of it) against the
 * definition. `duplicates` are the duplicate keys of the request document. Like kube-apiserver's
 * typed decoding, an object without apiVersion/kind takes the endpoint's.
 */
/** A type-meta field the client actually set. */
export const given = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

export function checkObject(value: unknown, def: KindDefinition, validation: FieldValidation, duplicates: string[]): Decoded {
  const apiVersion = apiVersionOf(def);
  if (!isPlainObject(value)) throw errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: the request body must be a JSON object`);
  if (given(value.apiVersion) && value.apiVersion !== apiVersion)
    throw errors.badRequest(`the API version in the data (${String(value.apiVersion)}) does not match the expected API version (${apiVersion})`);
  if (given(value.kind) && value.kind !== def.kind) throw errors.badRequest(`the kind in the data (${String(value.kind)}) does not match the expected kind (${def.kind})`);
  normalizeDecoded(value, def);
  const checked = validateAgainstSchema(value, def.schema);
  const unknownFields = checked.unknownFields;
  // A migrated kind's own value rules are declarative validation: they run with the strategy's
  // checks at validation time, under the DeclarativeValidation gates, not here. An unstructured
  // kind's (a custom resource's) schema errors, type errors included, are all found at validation
  // time (where an update's unchanged values ratchet).
  const unstructured = isUnstructured(def.schema);
  const errs = unstructured ? [] : def.declarativeValidation ? checked.errors.filter((e) => !leftToDeclarative(def, e)) : checked.errors;
  const typeError = errs.find((e) => e.type === 'FieldValueTypeInvalid');
  if (typeError) throw errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${typeError.message}`);
  const problems = validation === 'Ignore' ? [] : strictProblems(unknownFields, duplicates);
  if (validation === 'Strict' && problems.length) throw errors.badRequest(`strict decoding error: ${problems.join(', ')}`);
  const obj = value as KObject;
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  if (errs.length) throw errors.invalid(def.group, def.kind, typeof obj.metadata.name === 'string' ? obj.metadata.name : '', errs);
  if (unknownFields.length) pruneUnknownFields(obj, def.schema);
  // As Kubernetes decodes a custom resource: pruned, its non-nullable nulls dropped, then defaulted.
  if (unstructured) dropNonNullableNulls(obj, def.schema);
  if (hasDefaults(def.schema)) applyDefaults(obj, def.schema);
  obj.apiVersion = apiVersion;
  obj.kind = def.kind;
  return { obj, warnings: problems };
}

/**
 * Times and quantities in the form Kubernetes' Go types write them back; a quantity they cannot
 * decode fails decoding (400), as in Kubernetes.
 */
export function normalizeDecoded(value: unknown, def: KindDefinition): void {
  try {
    normalizeGoTypes(value, def.schema);
  } catch (e) {
    if (e instanceof QuantityDecodeError) throw errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${e.message}`);
    throw e;
  }
}

const schemasWithDefaults = new WeakMap<Schema, boolean>();

/** Whether any field of the schema has a default (schemas are ours, so recursion is safe). */
function hasDefaults(s: Schema): boolean {
  let known = schemasWithDefaults.get(s);
  if (known === undefined) {
    known = s.default !== undefined || Object.values(s.properties ?? {}).some(hasDefaults) || (s.items ? hasDefaults(s.items) : false) || (s.additionalProperties ? hasDefaults(s.additionalProperties) : false);
    schemasWithDefaults.set(s, known);
  }
  return known;
}

/**
 * YAML 1.1 as Kubernetes' YAML library reads it into untyped JSON: timestamps stay the strings they
 * were written as (2026-01-02T03:04:05.123456Z keeps its microseconds, 2026-01-02 is no date), and
 * there are no base-60 numbers (1:20 is a string, not 80).
 */
const YAML_1_1 = {
  version: '1.1',
  prettyErrors: false,
  customTags: (tags: Tags) =>
    tags
      .filter((t) => (typeof t === 'string' ? !['timestamp', 'intTime', 'floatTime'].includes(t) : t.tag !== 'tag:yaml.org,2002:timestamp' && t.format !== 'TIME'))
      .map((t) => (typeof t !== 'string' && t.tag === FLOAT_TAG && t.test ? { ...t, test: t.format === 'EXP' ? FLOAT_EXP : t.test.test('.5') ? FLOAT_FRACTION : t.test } : t)),
} as const;

/**
 * Floats need a digit, as in Kubernetes' YAML library: `e1`, `.e1` and `.` are strings there, where
 * the YAML 1.1 patterns of the `yaml` package read them as NaN (so `name: e1` failed as a number).
 */
const FLOAT_TAG = 'tag:yaml.org,2002:float';
const FLOAT_EXP = /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_FRACTION = /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*\.[0-9_]*)$/;

const YAML_DUPLICATE_KEY = 'Map keys must be unique';

/**
 * A YAML request body as kube-apiserver reads it (YAML 1.1, as its YAML library): the value, and
 * the first duplicate key when fieldValidation asks for them (YAML has no position-free path for
 * it, so the parser's message is what is reported). Aliases expand at most 100 times, so a small
 * body cannot grow into a huge one.
 */
export function parseYaml(text: string, validation: FieldValidation, what = 'error decoding YAML'): { value: unknown; duplicate?: string } {
  // JSON is valid YAML and what most clients send (kubectl's apply does): read it as JSON, which
  // gives the same value many times faster.
  const first = /\S/.exec(text)?.[0];
  if (first === '{' || first === '[') {
    let value: unknown;
    let json = true;
    try {
      value = JSON.parse(text);
    } catch {
      json = false;
    }
    if (json) {
      checkJsonDepth(text, what);
      const duplicates = validation === 'Ignore' ? [] : findDuplicateKeys(text, MAX_STRICT_ERRORS);
      return { value, duplicate: duplicates.length ? `duplicate field "${duplicates[0]}"` : undefined };
    }
  }
  // Most YAML (no tags or merge keys) is read by the fast reader, which gives the same value and
  // bounds aliases the same way; the rest, malformed text included, by the `yaml` library.
  let fast: FastRead | undefined;
  try {
    fast = readYamlFast(text, { scalars: '1.1', multi: false, duplicates: validation !== 'Ignore', maxDepth: MAX_JSON_DEPTH + 1, aliasErrors: true });
  } catch (e) {
    if (e instanceof YamlAliasError) throw errors.badRequest(`${what}: ${e.message}`);
    throw e;
  }
  if (fast) {
    const value = fast.documents[0];
    checkDepth(text.length, value, what);
    return { value, duplicate: fast.repeated ? YAML_DUPLICATE_KEY : undefined };
  }
  return parseYamlWithLibrary(text, validation, what);
}

/** A YAML body read by the `yaml` library: what `parseYaml` gives for any text (the fast reader gives the same). */
export function parseYamlWithLibrary(text: string, validation: FieldValidation, what = 'error decoding YAML'): { value: unknown; duplicate?: string } {
  // One parse: repeated keys are found in the walk that checks tags, not by a second parse with
  // the library's `uniqueKeys`, whose check is quadratic in a map's size.
  const doc = yaml().parseDocument(text, { ...YAML_1_1, uniqueKeys: false });
  if (doc.errors.length) throw errors.badRequest(`${what}: ${doc.errors[0]!.message}`);
  const repeated = checkYamlTags(doc, what, validation !== 'Ignore');
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw errors.badRequest(`${what}: ${(e as Error).message}`);
  }
  checkDepth(text.length, value, what);
  // The library's text for a repeated key, which is what clients have been told so far.
  return { value, duplicate: repeated ? YAML_DUPLICATE_KEY : undefined };
}

/** A CBOR body; malformed or refused input (duplicate keys, limits) is 400. */
export function decodeCborBody(body: Uint8Array, what: string): unknown {
  try {
    return decodeCbor(body);
  } catch (e) {
    throw errors.badRequest(`${what}: ${(e as Error).message}`);
  }
}

export type BodyType = 'json' | 'yaml' | 'protobuf' | 'cbor';

/** A create or update body in JSON, YAML, protobuf or CBOR. */
export function decodeBody(body: Buffer, type: BodyType, def: KindDefinition, validation: FieldValidation): Decoded {
  if (type === 'cbor') return checkObject(decodeCborBody(body, `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}`), def, validation, []);
  if (type === 'protobuf') {
    let value: KObject;
    try {
      value = decodeProtobuf(body, { apiVersion: apiVersionOf(def), kind: def.kind });
    } catch (e) {
      throw errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${(e as Error).message}`);
    }
    return checkObject(value, def, validation, []);
  }
  const text = body.toString('utf8');
  if (type === 'json') return decodeObject(text, def, validation);
  const { value, duplicate } = parseYaml(text, validation);
  if (duplicate && validation === 'Strict') throw errors.badRequest(`error strict decoding YAML: ${duplicate}`);
  const decoded = checkObject(value, def, validation, []);
  if (duplicate) decoded.warnings.unshift(duplicate);
  return decoded;
}

function decodeObject(text: string, def: KindDefinition, validation: FieldValidation): Decoded {
  const value = parseJson(text);
  const duplicates = validation === 'Ignore' ? [] : findDuplicateKeys(text, MAX_STRICT_ERRORS);
  return checkObject(value, def, validation, duplicates);
}

/**
 * The apiVersion a body names, read without checking anything else (to pick the spelling to
 * decode it in); undefined when it names none or does not parse, which decoding then reports.
 */
export function bodyApiVersion(body: Buffer, type: BodyType): string | undefined {
  try {
    const value =
      type === 'protobuf'
        ? decodeProtobuf(body)
        : type === 'cbor'
          ? decodeCborBody(body, 'error decoding CBOR')
          : type === 'json'
            ? (JSON.parse(body.toString('utf8')) as unknown)
            : parseYaml(body.toString('utf8'), 'Ignore').value;
    return isPlainObject(value) && typeof value.apiVersion === 'string' ? value.apiVersion : undefined;
  } catch {
    return undefined;
  }
}
