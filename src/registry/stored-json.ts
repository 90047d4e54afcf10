// The stored layout of an object: its JSON without metadata.resourceVersion, always starting
// with `{"apiVersion":…,"kind":…,"metadata":{`. Because of that fixed head, a read can splice the
// resourceVersion in right after it while copying bytes, without parsing: single objects, watch
// lines and whole list bodies are written straight from the stored values.

import type { KeyValue } from '../storage/interface.ts';
import type { KObject } from '../machinery/meta.ts';
import { encodeItem, encodeObjectFromItem, ENVELOPE_TAIL_LENGTH } from '../wire/protobuf/index.ts';
import { EncodedObject, type Splice } from './encoded.ts';

const LIST_END = Buffer.from(']}');

export class StoredJson {
  private readonly apiVersion: string;
  private readonly kind: string;
  /** `{"apiVersion":…,"kind":…,"metadata":{` */
  readonly head: Buffer;
  /** The head followed by `"resourceVersion":"`: what precedes a list item's revision digits. */
  private readonly headRv: Buffer;
  /** Values known to be in the layout: each is checked once, however often it is read. */
  private readonly laidOut = new WeakSet<Uint8Array>();

  constructor(
    apiVersion: string,
    kind: string,
  ) {
    this.apiVersion = apiVersion;
    this.kind = kind;
    this.head = Buffer.from(`{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},"metadata":{`);
    this.headRv = Buffer.concat([this.head, Buffer.from('"resourceVersion":"')]);
  }

  /** The value to store for an object: apiVersion, kind and metadata first, no resourceVersion. */
  encode(obj: KObject): Uint8Array {
    const { apiVersion: _a, kind: _k, metadata: { resourceVersion: _rv, ...metadata }, ...rest } = obj;
    return Buffer.from(JSON.stringify({ apiVersion: this.apiVersion, kind: this.kind, metadata, ...rest }));
  }

  inLayout(value: Uint8Array): boolean {
    if (this.laidOut.has(value)) return true;
    // The head and the closing brace: a value cut short (or written over) is parsed, and found out.
    if (!startsWith(value, this.head) || value[value.length - 1] !== 0x7d) return false;
    this.laidOut.add(value);
    return true;
  }

  /**
   * Why a stored value does not decode into an object (undefined when it does): a value in the
   * layout is taken as written by this server; any other is parsed, as a read would.
   */
  undecodable(value: Uint8Array): string | undefined {
    if (this.inLayout(value)) return undefined;
    return notAnObject(value);
  }

  /** How to write a stored value as JSON with `metadata.resourceVersion` = `revision`. */
  splice(value: Uint8Array, revision: number): Splice | Buffer[] {
    const stored = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const head = this.head;
    if (!this.inLayout(value)) {
      // Not in the layout (written by another version): parse and re-encode.
      const obj = JSON.parse(stored.toString('utf8')) as KObject;
      obj.metadata.resourceVersion = String(revision);
      return [Buffer.from(JSON.stringify(obj))];
    }
    const emptyMeta = stored[head.length] === 0x7d; // '}'
    return { stored, head, headLength: head.length, field: `"resourceVersion":"${revision}"${emptyMeta ? '' : ','}` };
  }

  /**
   * Protobuf forms of stored versions, made once per version and shared by every read of it: the
   * whole body of a get, and the object's message (a list item, a watch frame's object) as a view
   * into that body, so both cost one allocation.
   */
  private readonly protobuf = new WeakMap<Uint8Array, { revision: number; body: Buffer; item: Buffer }>();

  private protobufOf(kv: KeyValue, revision: number, e?: EncodedObject): { body: Buffer; item: Buffer } {
    const cached = this.protobuf.get(kv.value);
    if (cached && cached.revision === revision) return cached;
    const item = encodeItem((e ?? new EncodedObject(this.splice(kv.value, revision))).view());
    const body = encodeObjectFromItem(this.apiVersion, this.kind, item);
    const entry = { revision, body, item: body.subarray(body.length - ENVELOPE_TAIL_LENGTH - item.length, body.length - ENVELOPE_TAIL_LENGTH) };
    this.protobuf.set(kv.value, entry);
    return entry;
  }

  /** The protobuf message of a stored version (a list item). */
  protobufItem(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.protobufOf(kv, revision).item;
  }

  /** The protobuf body of a stored version (a get's answer). */
  protobufBody(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.protobufOf(kv, revision).body;
  }

  encoded(kv: KeyValue, revision = kv.modRevision): EncodedObject {
    const e: EncodedObject = new EncodedObject(this.splice(kv.value, revision), undefined, () => this.protobufOf(kv, revision, e).item);
    return e;
  }

  /** A list body: the envelope, then every stored value copied once with its revision spliced in. */
  listBody(envelope: { apiVersion: string; kind: string; metadata: object }, kvs: readonly KeyValue[]): Buffer {
    const { head, headRv } = this;
    // Items in the layout are spliced while copied; any other is re-encoded (rare).
    const reencoded = new Map<number, Buffer>();
    const start = `{"apiVersion":${JSON.stringify(envelope.apiVersion)},"kind":${JSON.stringify(envelope.kind)},"metadata":${JSON.stringify(envelope.metadata)},"items":[`;
    let size = Buffer.byteLength(start) + Math.max(0, kvs.length - 1) + LIST_END.length;
    for (let i = 0; i < kvs.length; i++) {
      const kv = kvs[i]!;
      if (this.inLayout(kv.value)) size += kv.value.length + headRv.length - head.length + digits(kv.modRevision) + (kv.value[head.length] === 0x7d ? 1 : 2);
      else {
        const bytes = this.encoded(kv).bytes();
        reencoded.set(i, bytes);
        size += bytes.length;
      }
    }
    // One allocation; per item two block copies and the revision's digits.
    const out = Buffer.allocUnsafe(size);
    let at = out.write(start, 0, 'utf8');
    for (let i = 0; i < kvs.length; i++) {
      if (i > 0) out[at++] = 0x2c; // ','
      const kv = kvs[i]!;
      const other = reencoded.get(i);
      if (other) {
        out.set(other, at);
        at += other.length;
        continue;
      }
      const stored = kv.value;
      const empty = stored[head.length] === 0x7d; // '}': no other metadata field
      const n = digits(kv.modRevision);
      const fieldLength = headRv.length - head.length + n + (empty ? 1 : 2);
      // The stored value shifted right by the field, then the head and the field before its rest.
      out.set(stored, at + fieldLength);
      out.set(headRv, at);
      let d = at + headRv.length + n;
      for (let rev = kv.modRevision; d > at + headRv.length; rev = Math.floor(rev / 10)) out[--d] = 0x30 + (rev % 10);
      d = at + headRv.length + n;
      out[d++] = 0x22; // '"'
      if (!empty) out[d] = 0x2c; // ','
      at += stored.length + fieldLength;
    }
    LIST_END.copy(out, at);
    return out;
  }
}

/** Why `value` is not the JSON of an object with metadata (undefined when it is). */
export function notAnObject(value: Uint8Array): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
  } catch (e) {
    return (e as Error).message;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return `the stored value is not an object but ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}`;
  const meta = (parsed as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return 'the stored object has no metadata';
  return undefined;
}

/** Decimal digits of a positive integer. */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** Byte prefix test; a loop beats Buffer.compare's native call for a head this short. */
function startsWith(buf: Uint8Array, head: Buffer): boolean {
  if (buf.length <= head.length) return false;
  // From the end: the kind and metadata key differ first between kinds.
  for (let i = head.length - 1; i >= 0; i--) if (buf[i] !== head[i]) return false;
  return true;
}
