// Protobuf bytes → JSON objects, by plan (./schema.ts), yielding what Kubernetes' JSON encoding
// of the same Go value holds, minus its nulls:
// - a pointer field is present exactly when it was on the wire, zero values included;
// - a value scalar ("" / 0 / false) is dropped when zero unless its JSON name lacks omitempty;
// - a value message is always present (Go writes a struct even when empty);
// - lists and maps are present when they have entries; zero times (Go's null) are dropped.
// Fields appear in declaration order, which is the JSON order; unknown fields are skipped.

import type * as protobuf from 'protobufjs';
import { protobufjs } from './library.ts';
import type { FieldPlan, MessagePlan } from './schema.ts';
import { formatMicroTime, formatTime } from './time.ts';

type Reader = protobuf.Reader;
type JsonObject = Record<string, unknown>;

export class DecodeError extends Error {
  constructor(message: string) {
    super(`protobuf: ${message}`);
    this.name = 'DecodeError';
  }
}

/** A Reader over `bytes` (a Buffer view, so strings decode natively). */
export function readerOf(bytes: Uint8Array): Reader {
  return protobufjs().Reader.create(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

/** The end of the length-delimited value starting at the reader's position (after its length). */
export function endOf(r: Reader): number {
  const len = r.uint32();
  const end = r.pos + len;
  if (end > r.len) throw new DecodeError(`a value of ${len} bytes runs past the end of the data`);
  return end;
}

/** A length-prefixed UTF-8 string, checked against the data's end. */
export function readString(r: Reader): string {
  const end = endOf(r);
  const text = (r.buf as Buffer).toString('utf8', r.pos, end);
  r.pos = end;
  return text;
}

/** Length-prefixed bytes, checked against the data's end (a view, not a copy). */
export function readBytes(r: Reader): Buffer {
  const end = endOf(r);
  const buf = r.buf as Buffer;
  const out = buf.subarray(r.pos, end);
  r.pos = end;
  return out;
}

/** Checks that a message's fields ended exactly at its end. */
export function closed(r: Reader, end: number, what: string): void {
  if (r.pos !== end) throw new DecodeError(`${what}: a field runs past the end of the message`);
}

function toNumber(v: number | protobuf.Long): number {
  return typeof v === 'number' ? v : protobufjs().util.LongBits.from(v).toNumber(false);
}

const VARINT = 0;
const LENGTH_DELIMITED = 2;

/**
 * How deep messages may nest: a recursive message (a CRD's JSONSchemaProps) could otherwise be
 * nested by a body until the stack runs out; JSON bodies have the same limit.
 */
const MAX_MESSAGE_DEPTH = 1000;
let depth = 0;

/** Reads a message's content up to `end` (within the data). */
export function readMessage(r: Reader, plan: MessagePlan, end: number): JsonObject {
  if (depth >= MAX_MESSAGE_DEPTH) throw new DecodeError(`messages nested deeper than ${MAX_MESSAGE_DEPTH}`);
  depth++;
  try {
    return readFields(r, plan, end);
  } finally {
    depth--;
  }
}

function readFields(r: Reader, plan: MessagePlan, end: number): JsonObject {
  const declared = plan.declared;
  const values: unknown[] = new Array<unknown>(declared.length);
  const byId = plan.byId;
  while (r.pos < end) {
    const tag = r.uint32();
    const f = byId[tag >>> 3];
    const wireType = tag & 7;
    if (f === undefined) {
      r.skipType(wireType);
      continue;
    }
    if (wireType !== (f.tag & 7)) {
      // A packed list of varints (proto3 writers) is accepted too.
      if (f.repeated && !f.map && wireType === LENGTH_DELIMITED && (f.tag & 7) === VARINT) {
        const stop = endOf(r);
        const list = (values[f.index] ??= []) as unknown[];
        while (r.pos < stop) list.push(readScalar(r, f));
        closed(r, stop, `${plan.name}.${f.name}`);
        continue;
      }
      throw new DecodeError(`${plan.name}.${f.name}: wire type ${wireType}, expected ${f.tag & 7}`);
    }
    if (f.map) {
      const [key, value] = readEntry(r, plan, f);
      const map = (values[f.index] ??= {}) as JsonObject;
      // As JSON.parse would: `__proto__` is an ordinary key.
      if (key === '__proto__') Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
      else map[key] = value;
    } else if (f.repeated) ((values[f.index] ??= []) as unknown[]).push(readValue(r, f));
    else values[f.index] = readValue(r, f);
  }
  closed(r, end, plan.name);
  return assemble(plan, values);
}

/** The JSON object of a message from its fields' values (undefined: not on the wire). */
function assemble(plan: MessagePlan, values: unknown[]): JsonObject {
  const out: JsonObject = {};
  const declared = plan.declared;
  for (let i = 0; i < declared.length; i++) {
    const f = declared[i]!;
    let v = values[i];
    if (v === undefined) {
      if (f.pointer || f.repeated) continue;
      if (f.kind === 'message') v = assemble(f.message!, new Array<unknown>(f.message!.declared.length));
      else if (f.jsonZero) v = zeroOf(f);
      if (v === undefined) continue;
    } else if (!f.pointer && !f.jsonZero && isZero(v)) continue;
    // A zero time or empty field set is Go's null.
    if (v === GO_NULL) continue;
    out[f.name] = v;
  }
  return out;
}

/** Marks a value Go writes as JSON null: a zero Time or MicroTime, an empty FieldsV1. */
const GO_NULL = Symbol('null');

function zeroOf(f: FieldPlan): unknown {
  switch (f.kind) {
    case 'string':
      return '';
    case 'int32':
    case 'int64':
      return 0;
    case 'bool':
      return false;
    default:
      return undefined;
  }
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function readScalar(r: Reader, f: FieldPlan): unknown {
  switch (f.kind) {
    case 'int32':
      return r.int32();
    case 'int64':
      return toNumber(r.int64());
    case 'bool':
      return r.bool();
    default:
      throw new DecodeError(`${f.name}: not a scalar`);
  }
}

function readValue(r: Reader, f: FieldPlan): unknown {
  switch (f.kind) {
    case 'string':
      return readString(r);
    case 'int32':
    case 'int64':
    case 'bool':
      return readScalar(r, f);
    case 'bytes':
      // JSON carries []byte as base64.
      return readBytes(r).toString('base64');
    case 'message':
      return readMessage(r, f.message!, endOf(r));
    case 'time':
    case 'microtime':
      return readTime(r, f.kind === 'microtime');
    case 'quantity':
      return readQuantity(r);
    case 'fieldsv1': {
      const raw = readSingleBytes(r);
      return raw === undefined || raw.length === 0 ? GO_NULL : (JSON.parse(raw.toString('utf8')) as unknown);
    }
    case 'intorstring':
      return readIntOrString(r);
    case 'rawext':
      return readSingleBytes(r) ?? Buffer.alloc(0);
    case 'double':
      return r.double();
    case 'json':
      return readJson(r);
    case 'schemaorarray':
    case 'schemaorbool':
    case 'schemaorstringarray':
      return schemaWrapperValue(f, readMessage(r, f.message!, endOf(r)));
  }
}

/** apiextensions JSON { raw }: the value its JSON text holds; no raw is null. */
function readJson(r: Reader): unknown {
  const raw = readSingleBytes(r);
  if (raw === undefined || raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new DecodeError('a JSON value that does not parse');
  }
}

/**
 * The JSON form of a schema wrapper from its decoded message: a schema (any wrapper's field
 * `schema`), a list of schemas or of strings, or a boolean (`allows`); null when it holds nothing.
 */
function schemaWrapperValue(f: FieldPlan, m: JsonObject): unknown {
  if (f.kind === 'schemaorbool') return m.schema ?? m.allows ?? false;
  if (f.kind === 'schemaorarray') return m.jSONSchemas ?? m.schema ?? null;
  return m.property ?? m.schema ?? null;
}

/** Field 1 of a message holding one bytes field (FieldsV1, RawExtension). */
function readSingleBytes(r: Reader): Buffer | undefined {
  const end = endOf(r);
  let raw: Buffer | undefined;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) raw = readBytes(r);
    else r.skipType(tag & 7);
  }
  closed(r, end, 'bytes');
  return raw;
}

function readTime(r: Reader, micro: boolean): string | symbol {
  const end = endOf(r);
  if (r.pos === end) return GO_NULL;
  let seconds = 0;
  let nanos = 0;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x08) seconds = toNumber(r.int64());
    else if (tag === 0x10) nanos = r.int32();
    else r.skipType(tag & 7);
  }
  closed(r, end, 'time');
  // Kubernetes reads a Time's seconds only.
  return micro ? formatMicroTime(seconds, nanos) : formatTime(seconds);
}

function readQuantity(r: Reader): string {
  const end = endOf(r);
  let text = '0';
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) text = readString(r);
    else r.skipType(tag & 7);
  }
  closed(r, end, 'quantity');
  return text;
}

function readIntOrString(r: Reader): number | string {
  const end = endOf(r);
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x08) type = toNumber(r.int64());
    else if (tag === 0x10) intVal = r.int32();
    else if (tag === 0x1a) strVal = readString(r);
    else r.skipType(tag & 7);
  }
  closed(r, end, 'int-or-string');
  return type === 1 ? strVal : intVal;
}

/** An ExtraValue { repeated string items = 1 } as its JSON list. */
function readStringList(r: Reader): string[] {
  const end = endOf(r);
  const items: string[] = [];
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) items.push(readString(r));
    else r.skipType(tag & 7);
  }
  closed(r, end, 'ExtraValue');
  return items;
}

/** One map entry { key = 1, value = 2 }; a missing part is its zero value. */
function readEntry(r: Reader, plan: MessagePlan, f: FieldPlan): [string, unknown] {
  const end = endOf(r);
  let key = '';
  let value: unknown = f.kind === 'quantity' ? '0' : f.kind === 'stringlist' ? [] : f.kind === 'message' ? undefined : f.kind === 'schemaorstringarray' ? null : '';
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) key = readString(r);
    else if (tag === 0x12) {
      if (f.kind === 'string') value = readString(r);
      else if (f.kind === 'bytes') value = readBytes(r).toString('base64');
      else if (f.kind === 'quantity') value = readQuantity(r);
      else if (f.kind === 'stringlist') value = readStringList(r);
      else if (f.kind === 'message') value = readMessage(r, f.message!, endOf(r));
      else if (f.kind === 'schemaorstringarray') value = schemaWrapperValue(f, readMessage(r, f.message!, endOf(r)));
      else throw new DecodeError(`${plan.name}.${f.name}: maps of ${f.kind} are not supported`);
    } else r.skipType(tag & 7);
  }
  closed(r, end, `${plan.name}.${f.name}`);
  // An entry without its message value holds the message's zero value.
  if (value === undefined) value = readMessage(readerOf(Buffer.alloc(0)), f.message!, 0);
  return [key, value];
}
