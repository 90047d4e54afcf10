// JSON objects → protobuf bytes, as Kubernetes' generated Go marshallers write them: fields in
// field-number order; value fields always (zero when the JSON lacks them); pointers, lists,
// maps and bytes only when present; map entries sorted by key; times as { seconds, nanos } with
// Go's zero time as an empty message.
//
// Each message's plan (./schema.ts) is compiled once into a straight-line function (as
// protobufjs compiles its own codecs), so an encode reads every JSON property by a constant
// name and walks no schema.

import type { FieldPlan, MessagePlan } from './schema.ts';
import { parseInstant, ZERO_TIME_SECONDS } from './time.ts';
import type { WireWriter } from './writer.ts';

export type JsonObject = Record<string, unknown>;

/** Writes a message's content (`o` undefined: every field absent). */
type MessageEncoder = (w: WireWriter, o: JsonObject | undefined) => void;

class EncodeError extends Error {
  constructor(plan: MessagePlan, field: FieldPlan, problem: string) {
    super(`protobuf: ${plan.name}.${field.name}: ${problem}`);
    this.name = 'EncodeError';
  }
}

// ---- values with their own JSON form, called from compiled code ----

/** A quantity may be a JSON number (int-or-string); the wire has its string. */
function quantityText(plan: MessagePlan, f: FieldPlan, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  throw new EncodeError(plan, f, `expected a quantity, got ${JSON.stringify(v)}`);
}

const runtime = {
  /**
   * Time: { seconds (1), nanos (2) }, both always written; Time's nanos is 0, MicroTime's is
   * truncated to microseconds. Go's zero time is an empty message.
   */
  time(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    const instant = typeof v === 'string' ? parseInstant(v) : undefined;
    if (instant === undefined) throw new EncodeError(plan, f, `not an RFC 3339 time: ${JSON.stringify(v)}`);
    const { seconds, nanos } = instant;
    w.uint32(f.tag);
    const mark = w.fork();
    if (!(seconds === ZERO_TIME_SECONDS && nanos === 0)) w.uint32(0x08).int64(seconds).uint32(0x10).uint32(f.kind === 'microtime' ? nanos - (nanos % 1000) : 0);
    w.ldelim(mark);
  },

  /** Quantity: { string (1) }. */
  quantity(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    const text = quantityText(plan, f, v);
    w.uint32(f.tag);
    const mark = w.fork();
    w.uint32(0x0a).string(text);
    w.ldelim(mark);
  },

  /** FieldsV1: { Raw (1) }, the JSON text of the field set. */
  fieldsV1(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new EncodeError(plan, f, 'expected an object');
    w.uint32(f.tag);
    const reserve = f.reserve;
    const mark = w.fork(reserve);
    w.byte(0x0a);
    const raw = w.fork(reserve);
    w.fieldSet(v);
    w.ldelim(raw, reserve);
    f.reserve = w.ldelim(mark, reserve);
  },

  /** IntOrString: { type (0 int, 1 string), intVal, strVal }, all three always written. */
  intOrString(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    w.uint32(f.tag);
    const mark = w.fork();
    if (typeof v === 'number' && Number.isInteger(v)) w.uint32(0x08).uint32(0).uint32(0x10).int32(v).uint32(0x1a).uint32(0);
    else if (typeof v === 'string') w.uint32(0x08).uint32(1).uint32(0x10).uint32(0).uint32(0x1a).string(v);
    else throw new EncodeError(plan, f, `expected an integer or a string, got ${JSON.stringify(v)}`);
    w.ldelim(mark);
  },

  /** RawExtension: { raw (1) }. */
  rawExtension(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    if (!(v instanceof Uint8Array)) throw new EncodeError(plan, f, 'expected bytes');
    w.uint32(f.tag);
    const mark = w.fork();
    w.uint32(0x0a).bytes(v);
    w.ldelim(mark);
  },

  /** JSON carries []byte as base64. */
  bytes(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    // The value may be secret: the message does not show it.
    if (typeof v !== 'string') throw new EncodeError(plan, f, 'expected base64 text');
    w.uint32(f.tag).bytes(Buffer.from(v, 'base64'));
  },

  /** A map: one { key = 1, value = 2 } entry per key, both always written, keys sorted. */
  map(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new EncodeError(plan, f, 'expected an object');
    const o = v as JsonObject;
    const keys = sortedKeys(o);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const value = o[key];
      w.uint32(f.tag);
      const mark = w.fork();
      w.uint32(0x0a).string(key);
      if (f.kind === 'string') {
        if (typeof value !== 'string') throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected a string, got ${JSON.stringify(value)}`);
        w.uint32(0x12).string(value);
      } else if (f.kind === 'bytes') {
        // Values of byte maps may be secret: the message names the key only.
        if (typeof value !== 'string') throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected base64 text`);
        w.uint32(0x12).bytes(Buffer.from(value, 'base64'));
      } else if (f.kind === 'message') {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected an object, got ${JSON.stringify(value)}`);
        w.uint32(0x12);
        const inner = w.fork();
        writeMessage(w, f.message!, value as JsonObject);
        w.ldelim(inner);
      } else if (f.kind === 'schemaorstringarray') {
        if (value === null) throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected a schema or a list of strings, got null`);
        runtime.schemaOrStringArray(w, plan, { ...f, tag: 0x12 }, value);
      } else if (f.kind === 'stringlist') {
        if (!Array.isArray(value)) throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected a list of strings, got ${JSON.stringify(value)}`);
        w.uint32(0x12);
        const inner = w.fork();
        for (const item of value as unknown[]) {
          if (typeof item !== 'string') throw new EncodeError(plan, f, `${JSON.stringify(key)}: expected a string, got ${JSON.stringify(item)}`);
          w.uint32(0x0a).string(item);
        }
        w.ldelim(inner);
      } else {
        const text = quantityText(plan, f, value);
        w.uint32(0x12);
        const inner = w.fork();
        w.uint32(0x0a).string(text);
        w.ldelim(inner);
      }
      w.ldelim(mark);
    }
  },

  /** apiextensions JSON { raw (1) }: the value's JSON text; null has no raw. */
  json(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    w.uint32(f.tag);
    const mark = w.fork();
    // The text is written as the raw bytes are: length-prefixed UTF-8.
    if (v !== null) w.uint32(0x0a).string(JSON.stringify(v));
    w.ldelim(mark);
  },

  /** JSONSchemaPropsOrArray: a schema object as { schema (1) }, a list as { jSONSchemas (2) … }. */
  schemaOrArray(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    const schema = schemaPlan(f);
    w.uint32(f.tag);
    const mark = w.fork();
    if (Array.isArray(v)) for (const e of v as unknown[]) writeSchema(w, plan, f, 0x12, schema, e);
    else writeSchema(w, plan, f, 0x0a, schema, v);
    w.ldelim(mark);
  },

  /** JSONSchemaPropsOrBool: a boolean as { allows }, a schema object as { allows true, schema (2) }. */
  schemaOrBool(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    const schema = schemaPlan(f);
    w.uint32(f.tag);
    const mark = w.fork();
    if (typeof v === 'boolean') w.uint32(0x08).bool(v);
    else {
      w.uint32(0x08).bool(true);
      writeSchema(w, plan, f, 0x12, schema, v);
    }
    w.ldelim(mark);
  },

  /** JSONSchemaPropsOrStringArray: a list of strings as { property (2) … }, a schema object as { schema (1) }. */
  schemaOrStringArray(w: WireWriter, plan: MessagePlan, f: FieldPlan, v: unknown): void {
    const schema = schemaPlan(f);
    w.uint32(f.tag);
    const mark = w.fork();
    if (Array.isArray(v))
      for (const e of v as unknown[]) {
        if (typeof e !== 'string') throw new EncodeError(plan, f, `expected a string, got ${JSON.stringify(e)}`);
        w.uint32(0x12).string(e);
      }
    else writeSchema(w, plan, f, 0x0a, schema, v);
    w.ldelim(mark);
  },

  fail(plan: MessagePlan, f: FieldPlan, expected: string, v: unknown): never {
    throw new EncodeError(plan, f, `expected ${expected}, got ${JSON.stringify(v)}`);
  },
};

/** The JSONSchemaProps a schema wrapper (FieldPlan.message) holds in its field `schema`. */
function schemaPlan(f: FieldPlan): MessagePlan {
  return f.message!.declared.find((x) => x.name === 'schema')!.message!;
}

/** One schema object as the field `tag` of a wrapper. */
function writeSchema(w: WireWriter, plan: MessagePlan, f: FieldPlan, tag: number, schema: MessagePlan, v: unknown): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new EncodeError(plan, f, `expected a schema object, got ${JSON.stringify(v)}`);
  w.uint32(tag);
  const mark = w.fork();
  writeMessage(w, schema, v as JsonObject);
  w.ldelim(mark);
}

function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Keys in Go's string order (bytewise UTF-8), which differs from UTF-16 order only past U+D7FF. */
function sortedKeys(o: JsonObject): string[] {
  const keys = Object.keys(o);
  if (keys.length < 2) return keys;
  let sorted = true;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0xd800) return keys.sort(utf8Compare);
    if (k > 0 && keys[k - 1]! > key) sorted = false;
  }
  return sorted ? keys : keys.sort();
}

// ---- compilation ----

const EMPTY: JsonObject = Object.freeze({}) as JsonObject;
const compiled = new Map<MessagePlan, MessageEncoder>();

/** `w.uint32(tag)`, or a one-byte write for the common one-byte tags. */
const tagCall = (tag: number): string => (tag < 0x80 ? `w.byte(${tag})` : `w.uint32(${tag})`);

/** Statements writing one element `e` of field `f` (index `i` in `F`). */
function elementCode(f: FieldPlan, i: number, subIndex: number, e: string): string {
  const t = tagCall(f.tag);
  switch (f.kind) {
    case 'string':
      return `if (typeof ${e} !== 'string') rt.fail(P, F[${i}], 'a string', ${e}); ${t}; w.string(${e});`;
    case 'int32':
      return `if (typeof ${e} !== 'number' || (${e} | 0) !== ${e}) rt.fail(P, F[${i}], 'a 32-bit integer', ${e}); ${t}; w.int32(${e});`;
    case 'int64':
      return `if (!Number.isInteger(${e})) rt.fail(P, F[${i}], 'an integer', ${e}); ${t}; w.int64(${e});`;
    case 'bool':
      return `if (typeof ${e} !== 'boolean') rt.fail(P, F[${i}], 'a boolean', ${e}); ${t}; w.bool(${e});`;
    case 'bytes':
      return `rt.bytes(w, P, F[${i}], ${e});`;
    case 'double':
      return `if (typeof ${e} !== 'number') rt.fail(P, F[${i}], 'a number', ${e}); ${t}; w.double(${e});`;
    case 'json':
      return `rt.json(w, P, F[${i}], ${e});`;
    case 'schemaorarray':
      return `rt.schemaOrArray(w, P, F[${i}], ${e});`;
    case 'schemaorbool':
      return `rt.schemaOrBool(w, P, F[${i}], ${e});`;
    case 'schemaorstringarray':
      return `rt.schemaOrStringArray(w, P, F[${i}], ${e});`;
    case 'message':
      return `if (typeof ${e} !== 'object' || Array.isArray(${e})) rt.fail(P, F[${i}], 'an object', ${e}); ${t}; f = F[${i}]; r = f.reserve; m = w.fork(r); E[${subIndex}](w, ${e}); f.reserve = w.ldelim(m, r);`;
    case 'time':
    case 'microtime':
      return `rt.time(w, P, F[${i}], ${e});`;
    case 'quantity':
      return `rt.quantity(w, P, F[${i}], ${e});`;
    case 'fieldsv1':
      return `rt.fieldsV1(w, P, F[${i}], ${e});`;
    case 'intorstring':
      return `rt.intOrString(w, P, F[${i}], ${e});`;
    case 'rawext':
      return `rt.rawExtension(w, P, F[${i}], ${e});`;
    case 'stringlist':
      // Map values only (the schema refuses it elsewhere): written by rt.map.
      throw new Error(`protobuf schema: ${f.name}: a string list is supported as a map value only`);
  }
}

/** Statements for a value field the JSON lacks: its zero value, as Go writes an unset value field. */
function zeroCode(f: FieldPlan, i: number, subIndex: number): string {
  const t = tagCall(f.tag);
  switch (f.kind) {
    case 'string':
    case 'int32':
    case 'int64':
    case 'bool':
    case 'time':
    case 'microtime':
    case 'rawext':
      // A zero scalar is one 0 byte; an empty string, a zero time or an empty raw is a 0 length.
      return `${t}; w.byte(0);`;
    case 'message':
      return `${t}; f = F[${i}]; r = f.reserve; m = w.fork(r); E[${subIndex}](w, undefined); f.reserve = w.ldelim(m, r);`;
    case 'double':
      return `${t}; w.double(0);`;
    case 'json':
      // A JSON value is a pointer or a list element in every message here.
      return `rt.json(w, P, F[${i}], null);`;
    case 'schemaorarray':
    case 'schemaorbool':
    case 'schemaorstringarray':
      // Pointers in every message here.
      return '';
    case 'quantity':
      // A zero Quantity prints as "0".
      return `rt.quantity(w, P, F[${i}], '0');`;
    case 'intorstring':
      return `rt.intOrString(w, P, F[${i}], 0);`;
    case 'bytes':
    case 'fieldsv1':
      // Nil slices and pointers are not written.
      return '';
    case 'stringlist':
      return '';
  }
}

/** The compiled encoder of a message (compiled on first use, then cached). */
function encoderOf(plan: MessagePlan): MessageEncoder {
  const known = compiled.get(plan);
  if (known) return known;
  const subs: MessageEncoder[] = [];
  const subPlans: MessagePlan[] = [];
  // `r` holds the reserve a nested message was started with: a recursive message (JSONSchemaProps)
  // updates its field's reserve while it is still open.
  const lines: string[] = ['if (o === undefined) o = EMPTY;', 'let v, m, e, j, f, r;'];
  for (const f of plan.fields) {
    const i = f.index;
    let subIndex = -1;
    if (f.kind === 'message' && !f.map) {
      subIndex = subPlans.length;
      subPlans.push(f.message!);
    }
    const get = `v = o[${JSON.stringify(f.name)}];`;
    if (f.map) lines.push(`${get} if (v != null) rt.map(w, P, F[${i}], v);`);
    else if (f.repeated)
      lines.push(
        // A JSON value may be null (an `enum` of a nullable schema).
        `${get} if (v != null) { if (!Array.isArray(v)) rt.fail(P, F[${i}], 'a list', v); for (j = 0; j < v.length; j++) { e = v[j]; ${f.kind === 'json' ? '' : `if (e == null) rt.fail(P, F[${i}], 'no null element', e); `}${elementCode(f, i, subIndex, 'e')} } }`,
      );
    else if (f.pointer) lines.push(`${get} if (v != null) { ${elementCode(f, i, subIndex, 'v')} }`);
    else {
      const zero = zeroCode(f, i, subIndex);
      lines.push(`${get} if (v != null) { ${elementCode(f, i, subIndex, 'v')} }${zero ? ` else { ${zero} }` : ''}`);
    }
  }
  // The source is built from the plan only (field names are .proto identifiers, quoted).
  const factory = new Function('rt', 'P', 'F', 'E', 'EMPTY', `return function encode(w, o) {\n${lines.join('\n')}\n};`) as (
    rt: typeof runtime,
    plan: MessagePlan,
    fields: readonly FieldPlan[],
    subs: MessageEncoder[],
    empty: JsonObject,
  ) => MessageEncoder;
  const encoder = factory(runtime, plan, plan.declared, subs, EMPTY);
  compiled.set(plan, encoder);
  for (const sub of subPlans) subs.push(encoderOf(sub));
  return encoder;
}

/** Writes the fields of `obj` (undefined: an empty object) as a message's content. */
export function writeMessage(w: WireWriter, plan: MessagePlan, obj: JsonObject | undefined): void {
  encoderOf(plan)(w, obj);
}
