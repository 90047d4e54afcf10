// The Kubernetes protobuf wire format for every kind this server serves, their lists, Status and
// watch events. Pure: bytes in, bytes out; content negotiation lives elsewhere.
//
// API
//   supportsProtobuf(apiVersion, kind)   a served kind, its `<Kind>List`, or `v1` Status
//   encodeObject(obj)                    a body for one object, by its apiVersion and kind
//   encodeList(list)                     a body for `<Kind>List` { metadata, items }
//   encodeStatus(status)                 a body for a Status
//   encodeWatchEvent(type, object)       one watch frame's payload (the caller adds the 4-byte
//                                        big-endian length in front of each)
//   decodeObject(bytes, expected?)       the JSON object of a body; throws DecodeError on a
//                                        wrong magic prefix, kind or apiVersion, or bad data
//   decodeWatchEvent(payload)            { type, object } of a watch frame's payload
//   encodeItem(obj) + encodeObjectFromItem / encodeListFromItems / encodeWatchEventFromItem:
//                                        the same bodies from an object's message encoded once
//                                        and kept (it changes only with the object), so a read
//                                        copies bytes instead of encoding
// Encoding throws EncodeError for a value of the wrong JSON type, or Error for a kind without a
// protobuf form.
//
// Wire format
// A body is the magic `k8s\0` (6b 38 73 00) followed by a `runtime.Unknown` message:
//   typeMeta (1) { apiVersion (1), kind (2) }, raw (2: the object's own message),
//   contentEncoding (3), contentType (4) — the last two written empty, as Kubernetes does.
// A watch frame's payload is a `WatchEvent` { type (1), object (2): RawExtension { raw (1) } }
// whose raw is a whole body as above (magic included).
//
// Field numbers are Kubernetes' own, in the .proto files beside this file, which also state
// how a JSON object maps onto them (see apimachinery.proto). In short, the bytes are those of
// Kubernetes' generated Go marshallers for the same object: fields in number order; Go value
// fields always written (zero when absent); pointers, lists, maps and bytes only when set; map
// entries sorted by key; Time as { seconds, nanos = 0 }, MicroTime with microseconds in nanos,
// Go's zero time as an empty message; Quantity as { string }; FieldsV1 as its JSON text; a
// CRD schema's JSON values (`default`, `enum`) as their JSON text; bytes from the JSON's
// base64. Decoding gives the JSON object our server stores: the same field
// names in JSON order, times as RFC 3339 (`2026-01-02T03:04:05Z`, MicroTime
// `2026-01-02T03:04:05.123456Z`), quantities as strings, bytes as base64, and absent optional
// fields omitted — a pointer field is present exactly when it was on the wire, a value field
// when it is non-zero (or its JSON name has no omitempty), a struct always, as Go's JSON would.
// List items, which carry no type on the wire, get the list's apiVersion and their kind.
//
// The kind's message set is chosen by the first segment of the apiVersion's group (`coordination`
// for `coordination.orch.io/v1` or `coordination.k8s.io/v1`; the core group for `v1`), under
// whichever naming profile the server runs; `autoscaling` (a Scale) has no domain in any profile.

import type { KObject } from '../../machinery/meta.ts';
import { closed, DecodeError, endOf, readBytes, readerOf, readMessage, readString } from './decode.ts';
import { writeMessage, type JsonObject } from './encode.ts';
import { kindPlan, messagePlan, type MessagePlan } from './schema.ts';
import { WireWriter } from './writer.ts';

export { DecodeError } from './decode.ts';

/** The four bytes every protobuf body starts with: `k8s\0`. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** Status's plan, looked up on first use (the schemas are parsed then). */
let statusPlan: MessagePlan | undefined;
const STATUS = () => (statusPlan ??= messagePlan('wire.apimachinery.Status'));
const writer = new WireWriter();

/** Whether `apiVersion`/`kind` (a served kind, its `<Kind>List`, or `v1` Status) has a protobuf form. */
export function supportsProtobuf(apiVersion: string, kind: string): boolean {
  return kindPlan(apiVersion, kind) !== undefined;
}

/** Writes magic + Unknown { typeMeta, raw = the message of `obj`, "", "" } into `w`. */
function writeEnvelope(w: WireWriter, apiVersion: string, kind: string, plan: MessagePlan, obj: JsonObject): void {
  writeEnvelopeHead(w, apiVersion, kind);
  const raw = w.fork(plan.reserve);
  writeMessage(w, plan, obj);
  plan.reserve = w.ldelim(raw, plan.reserve);
  writeEnvelopeTail(w);
}

/** Magic, typeMeta and the raw field's tag: the length of raw comes next. */
function writeEnvelopeHead(w: WireWriter, apiVersion: string, kind: string): void {
  w.raw(PROTOBUF_MAGIC);
  w.byte(0x0a);
  const typeMeta = w.fork();
  w.byte(0x0a).string(apiVersion).byte(0x12).string(kind);
  w.ldelim(typeMeta);
  w.byte(0x12);
}

/** contentEncoding and contentType: Go value strings, always written (empty). */
function writeEnvelopeTail(w: WireWriter): void {
  w.raw(ENVELOPE_TAIL);
}

function typeOf(obj: { apiVersion?: unknown; kind?: unknown }, what: string): { apiVersion: string; kind: string } {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || !apiVersion || typeof kind !== 'string' || !kind) throw new Error(`protobuf: ${what} needs apiVersion and kind`);
  return { apiVersion, kind };
}

/** Runs `write` on the shared writer and returns a copy of the bytes. */
function produce(write: (w: WireWriter) => void): Buffer {
  writer.reset();
  write(writer);
  return writer.finish();
}

/** An object as a protobuf body (magic + envelope), by its apiVersion and kind. */
export function encodeObject(obj: KObject): Buffer {
  const { apiVersion, kind } = typeOf(obj, 'an object');
  const plan = kindPlan(apiVersion, kind);
  if (!plan) throw new Error(`protobuf: no protobuf form for ${apiVersion} ${kind}`);
  return produce((w) => writeEnvelope(w, apiVersion, kind, plan, obj));
}

/** A list (`<Kind>List`: metadata, items) as a protobuf body. */
export function encodeList(list: { apiVersion: string; kind: string; metadata: object; items: KObject[] }): Buffer {
  const { apiVersion, kind } = typeOf(list, 'a list');
  const plan = kindPlan(apiVersion, kind);
  if (!plan) throw new Error(`protobuf: no protobuf form for ${apiVersion} ${kind}`);
  return produce((w) => writeEnvelope(w, apiVersion, kind, plan, list as unknown as JsonObject));
}

/** A Status as a protobuf body (apiVersion `v1` unless it says otherwise). */
export function encodeStatus(status: object): Buffer {
  const s = status as JsonObject;
  const apiVersion = typeof s.apiVersion === 'string' && s.apiVersion ? s.apiVersion : 'v1';
  return produce((w) => writeEnvelope(w, apiVersion, 'Status', STATUS(), s));
}

/**
 * One watch frame's payload: WatchEvent { type, object: RawExtension { raw: the object's body } }.
 * The object is any object with a protobuf form, or a Status (ERROR events).
 */
export function encodeWatchEvent(type: string, object: KObject | object): Buffer {
  const o = object as JsonObject;
  const { apiVersion, kind } = o.kind === 'Status' ? { apiVersion: typeof o.apiVersion === 'string' && o.apiVersion ? o.apiVersion : 'v1', kind: 'Status' } : typeOf(o, 'a watch event object');
  const plan = kind === 'Status' ? STATUS() : kindPlan(apiVersion, kind);
  if (!plan) throw new Error(`protobuf: no protobuf form for ${apiVersion} ${kind}`);
  return produce((w) => {
    w.uint32(0x0a).string(type);
    w.uint32(0x12);
    const rawExtension = w.fork();
    w.uint32(0x0a);
    const raw = w.fork();
    writeEnvelope(w, apiVersion, kind, plan, o);
    w.ldelim(raw);
    w.ldelim(rawExtension);
  });
}

// ---- pre-encoded items ----
//
// An object's message bytes (`encodeItem`) can be kept with the object — they change only when
// the object does — and framed again for every read, so a list or a watch event costs a copy per
// object instead of an encode.

/** The protobuf message of one object (no envelope): what the *FromItem functions frame. */
export function encodeItem(obj: KObject): Buffer {
  const { apiVersion, kind } = typeOf(obj, 'an object');
  const plan = kindPlan(apiVersion, kind);
  if (!plan) throw new Error(`protobuf: no protobuf form for ${apiVersion} ${kind}`);
  return produce((w) => writeMessage(w, plan, obj));
}

/** A body (as encodeObject gives) around an object's message from encodeItem. */
export function encodeObjectFromItem(apiVersion: string, kind: string, item: Uint8Array): Buffer {
  return produce((w) => {
    writeEnvelopeHead(w, apiVersion, kind);
    w.bytes(item);
    writeEnvelopeTail(w);
  });
}

/** A list body (as encodeList gives) from the items' messages from encodeItem, in order. */
export function encodeListFromItems(list: { apiVersion: string; kind: string; metadata: object }, items: readonly Uint8Array[]): Buffer {
  const { apiVersion, kind } = typeOf(list, 'a list');
  const plan = kindPlan(apiVersion, kind);
  const metadata = plan?.byId[1];
  if (!plan || !metadata?.message || !plan.byId[2]) throw new Error(`protobuf: no protobuf form for list ${apiVersion} ${kind}`);
  // The envelope's head and the list metadata are small: written on the scratch writer. The items
  // are most of the body: their sizes are known, so the body is allocated once at its exact size
  // and each item is copied once, straight into it.
  const w = writer;
  w.reset();
  writeEnvelopeHead(w, apiVersion, kind);
  const headEnd = w.pos;
  w.byte(0x0a);
  const meta = w.fork();
  writeMessage(w, metadata.message, list.metadata as JsonObject);
  w.ldelim(meta);
  const metaEnd = w.pos;
  let rawLength = metaEnd - headEnd;
  for (const item of items) rawLength += 1 + varintSize(item.length) + item.length;
  const out = Buffer.allocUnsafe(headEnd + varintSize(rawLength) + rawLength + ENVELOPE_TAIL.length);
  w.buf.copy(out, 0, 0, headEnd);
  let at = writeVarint(out, headEnd, rawLength);
  at += w.buf.copy(out, at, headEnd, metaEnd);
  for (const item of items) {
    out[at++] = 0x12;
    at = writeVarint(out, at, item.length);
    out.set(item, at);
    at += item.length;
  }
  out.set(ENVELOPE_TAIL, at);
  return out;
}

const ENVELOPE_TAIL = Uint8Array.of(0x1a, 0, 0x22, 0);
/** What follows the object's message in a body: the envelope's empty contentEncoding and contentType. */
export const ENVELOPE_TAIL_LENGTH = ENVELOPE_TAIL.length;

function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

function writeVarint(out: Buffer, at: number, n: number): number {
  while (n > 0x7f) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

/** A watch frame's payload (as encodeWatchEvent gives) around an object's message from encodeItem. */
export function encodeWatchEventFromItem(type: string, apiVersion: string, kind: string, item: Uint8Array): Buffer {
  return produce((w) => {
    w.byte(0x0a).string(type);
    w.byte(0x12);
    const rawExtension = w.fork(2);
    w.byte(0x0a);
    const raw = w.fork(2);
    writeEnvelopeHead(w, apiVersion, kind);
    w.bytes(item);
    writeEnvelopeTail(w);
    w.ldelim(raw, 2);
    w.ldelim(rawExtension, 2);
  });
}

// ---- decoding ----

interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Buffer;
  contentEncoding: string;
}

function readEnvelope(bytes: Uint8Array): Envelope {
  if (bytes.length < 4 || bytes[0] !== 0x6b || bytes[1] !== 0x38 || bytes[2] !== 0x73 || bytes[3] !== 0x00)
    throw new DecodeError('the body does not start with the protobuf magic prefix k8s\\0 (6b 38 73 00)');
  const r = readerOf(bytes.subarray(4));
  const env: Envelope = { apiVersion: '', kind: '', raw: Buffer.alloc(0), contentEncoding: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 0x0a) {
      const end = endOf(r);
      while (r.pos < end) {
        const t = r.uint32();
        if (t === 0x0a) env.apiVersion = readString(r);
        else if (t === 0x12) env.kind = readString(r);
        else r.skipType(t & 7);
      }
      closed(r, end, 'typeMeta');
    } else if (tag === 0x12) env.raw = readBytes(r);
    else if (tag === 0x1a) env.contentEncoding = readString(r);
    else r.skipType(tag & 7);
  }
  return env;
}

/**
 * The JSON object of a protobuf body. Rejects a wrong magic prefix, an encoded (compressed)
 * payload, an unknown kind, and — when `expected` is given — another apiVersion or kind (an
 * envelope that leaves them empty takes the expected ones, as Kubernetes does).
 */
export function decodeObject(bytes: Uint8Array, expected?: { apiVersion: string; kind: string }): KObject {
  return malformedAsDecodeError(() => decodeBody(bytes, expected));
}

/** Errors of the reader (truncated data) and of FieldsV1's JSON text, as DecodeErrors. */
function malformedAsDecodeError<T>(decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    throw new DecodeError(`malformed data: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function decodeBody(bytes: Uint8Array, expected: { apiVersion: string; kind: string } | undefined): KObject {
  const env = readEnvelope(bytes);
  const apiVersion = env.apiVersion || expected?.apiVersion || '';
  const kind = env.kind || expected?.kind || '';
  if (!kind) throw new DecodeError('the envelope names no kind');
  if (!apiVersion) throw new DecodeError(`the envelope names no apiVersion for kind ${kind}`);
  if (expected && (apiVersion !== expected.apiVersion || kind !== expected.kind))
    throw new DecodeError(`expected ${expected.apiVersion} ${expected.kind}, the body holds ${apiVersion} ${kind}`);
  if (env.contentEncoding) throw new DecodeError(`content encoding ${JSON.stringify(env.contentEncoding)} is not supported`);
  const plan = kindPlan(apiVersion, kind);
  if (!plan) throw new DecodeError(`no protobuf form for ${apiVersion} ${kind}`);
  const r = readerOf(env.raw);
  const body = readMessage(r, plan, r.len);
  // List items carry no type on the wire; our JSON lists give each its apiVersion and kind.
  if (kind.endsWith('List') && plan.byId[2]?.name === 'items' && Array.isArray(body.items)) {
    const itemKind = kind.slice(0, -'List'.length);
    body.items = body.items.map((item: JsonObject) => ({ apiVersion, kind: itemKind, ...item }));
  }
  return { apiVersion, kind, ...body } as KObject;
}

/** A watch frame's payload as { type, object } (the object decoded as by decodeObject). */
export function decodeWatchEvent(payload: Uint8Array): { type: string; object: KObject } {
  return malformedAsDecodeError(() => decodeEvent(payload));
}

function decodeEvent(payload: Uint8Array): { type: string; object: KObject } {
  const r = readerOf(payload);
  let type = '';
  let raw: Uint8Array | undefined;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 0x0a) type = readString(r);
    else if (tag === 0x12) {
      const end = endOf(r);
      while (r.pos < end) {
        const t = r.uint32();
        if (t === 0x0a) raw = readBytes(r);
        else r.skipType(t & 7);
      }
      closed(r, end, 'object');
    } else r.skipType(tag & 7);
  }
  if (raw === undefined) throw new DecodeError('the watch event holds no object');
  return { type, object: decodeBody(raw, undefined) };
}
