// An object as the store holds it: its JSON bytes (with metadata.resourceVersion spliced in) and,
// only when someone needs to look inside, its parsed form. Reads and watch fan-out pass stored
// bytes through without parsing or re-encoding; one watch event is serialized once however many
// watchers get it.

import type { KObject } from '../machinery/meta.ts';
import { encodeItem, encodeWatchEventFromItem } from '../wire/protobuf/index.ts';

/**
 * What the store needs of a response's encoder to answer stored versions in it. The encoder is
 * negotiated above the registry and handed down; the store asks it rather than knowing formats.
 */
export interface BodyEncoding {
  /**
   * `json`: the stored JSON bytes as they are; `protobuf`: the protobuf forms kept per stored
   * version; `value`: the encoder encodes the parsed object (YAML, CBOR).
   */
  readonly stored: 'json' | 'protobuf' | 'value';
  /** An object or list in this encoding; undefined when it has none (the answer is then JSON). */
  encode(value: unknown): string | Buffer | undefined;
  /** One watch event as a frame of the stream. */
  event(type: string, object: object): string | Buffer;
}

/**
 * A stored value in the store's layout and the resourceVersion to splice in after its head
 * (`{"apiVersion":…,"kind":…,"metadata":{`): enough to write the object's JSON without parsing.
 */
export interface Splice {
  stored: Buffer;
  /** The head every stored value of the kind starts with (shared). */
  head: Buffer;
  headLength: number;
  /** `"resourceVersion":"<rv>"` plus a comma unless metadata is otherwise empty. */
  field: string;
}

export class EncodedObject {
  /** The object's protobuf message, shared by every read of this stored version (see StoredJson). */
  private readonly protobufSource?: () => Buffer;
  /** The JSON as consecutive byte ranges (zero-copy slices of the stored value). */
  private chunks: Buffer[] | undefined;
  private splice: Splice | undefined;
  /** Produces the chunks on first use (previous states that most watchers never show). */
  private produce: (() => Buffer[]) | undefined;
  private whole: Buffer | undefined;
  private parsed: KObject | undefined;
  private lines: Map<string, Buffer> | undefined;
  private frames: Map<string, Buffer> | undefined;
  /** Frames in encodings of the parsed object, per encoder and event type. */
  private valueEvents: Map<BodyEncoding, Map<string, string | Buffer>> | undefined;
  private item: Buffer | undefined;

  constructor(
    chunks: Buffer[] | (() => Buffer[]) | Splice | undefined,
    parsed?: KObject,
    protobufSource?: () => Buffer,
  ) {
    this.protobufSource = protobufSource;
    if (typeof chunks === 'function') this.produce = chunks;
    else if (Array.isArray(chunks) || chunks === undefined) this.chunks = chunks;
    else this.splice = chunks;
    this.parsed = parsed;
  }

  /** The object's protobuf message (no envelope), made once. */
  protobufItem(): Buffer {
    return (this.item ??= this.protobufSource ? this.protobufSource() : encodeItem(this.view()));
  }

  /**
   * This event's frame in `enc`, made once per (event type, encoder) and shared by every watcher
   * that wants it: JSON lines from the stored bytes, protobuf frames from the kept message.
   */
  event(type: string, enc: BodyEncoding): string | Buffer {
    if (enc.stored === 'json') return this.watchLine(type);
    if (enc.stored === 'protobuf') return this.watchFrame(type);
    this.valueEvents ??= new Map();
    let frames = this.valueEvents.get(enc);
    if (frames === undefined) {
      frames = new Map();
      this.valueEvents.set(enc, frames);
    }
    let frame = frames.get(type);
    if (frame === undefined) {
      frame = enc.event(type, this.view());
      frames.set(type, frame);
    }
    return frame;
  }

  /** One protobuf watch frame (length prefix and WatchEvent), made once per event type. */
  private watchFrame(type: string): Buffer {
    this.frames ??= new Map();
    let frame = this.frames.get(type);
    if (frame === undefined) {
      const o = this.view();
      frame = lengthPrefixed(encodeWatchEventFromItem(type, o.apiVersion ?? '', o.kind ?? '', this.protobufItem()));
      this.frames.set(type, frame);
    }
    return frame;
  }

  /** Whether the JSON contains these bytes (a cheap test before parsing). */
  contains(needle: Buffer): boolean {
    // The spliced-in resourceVersion field cannot complete a needle that names a field.
    if (this.splice) return this.splice.stored.indexOf(needle) >= 0;
    return this.bytes().indexOf(needle) >= 0;
  }

  /** Bytes of the JSON. */
  byteLength(): number {
    if (this.splice) return this.splice.stored.length + this.splice.field.length;
    if (this.whole) return this.whole.length;
    return this.parts().reduce((n, p) => n + p.length, 0);
  }

  /** Copy the JSON into `out` at `offset`; returns the offset after it. */
  writeTo(out: Buffer, offset: number): number {
    const s = this.splice;
    if (s) return spliceInto(out, offset, s.stored, s.head, s.field);
    for (const p of this.parts()) offset += p.copy(out, offset);
    return offset;
  }

  static of(obj: KObject): EncodedObject {
    return new EncodedObject(undefined, obj);
  }

  parts(): Buffer[] {
    if (this.chunks === undefined) {
      const s = this.splice;
      if (s) this.chunks = [s.stored.subarray(0, s.headLength), Buffer.from(s.field, 'latin1'), s.stored.subarray(s.headLength)];
      else this.chunks = this.produce ? this.produce() : [Buffer.from(JSON.stringify(this.parsed))];
      this.produce = undefined;
    }
    return this.chunks;
  }

  bytes(): Buffer {
    if (this.whole === undefined) {
      if (this.splice) {
        this.whole = Buffer.allocUnsafe(this.byteLength());
        this.writeTo(this.whole, 0);
      } else {
        const parts = this.parts();
        this.whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      }
    }
    return this.whole;
  }

  json(): string {
    return this.bytes().toString('utf8');
  }

  /** The parsed object, shared: callers must not modify it (use `copy()` for that). */
  view(): KObject {
    return (this.parsed ??= JSON.parse(this.json()) as KObject);
  }

  copy(): KObject {
    return JSON.parse(this.json()) as KObject;
  }

  /** `{"type":…,"object":…}\n` as bytes, made once per event type. */
  private watchLine(type: string): Buffer {
    this.lines ??= new Map();
    let line = this.lines.get(type);
    if (line === undefined) {
      const start = `{"type":"${type}","object":`;
      line = Buffer.allocUnsafe(start.length + this.byteLength() + LINE_END.length);
      const at = this.writeTo(line, line.write(start, 0, 'latin1'));
      LINE_END.copy(line, at);
      this.lines.set(type, line);
    }
    return line;
  }
}

const LINE_END = Buffer.from('}\n');

/** A protobuf watch frame: the payload's length (4 bytes, big-endian), then the payload. */
export function lengthPrefixed(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

/**
 * Write `stored` (which starts with `head`) into `out` at `offset` with the ASCII `field` right
 * after the head: the stored value is copied shifted right by the field, the head is put in
 * front, the field between them — two block copies and a short write, no slices. Returns the
 * offset after it.
 */
function spliceInto(out: Buffer, offset: number, stored: Uint8Array, head: Uint8Array, field: string): number {
  out.set(stored, offset + field.length);
  out.set(head, offset);
  out.write(field, offset + head.length, 'latin1');
  return offset + stored.length + field.length;
}
