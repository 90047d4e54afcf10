// The stored values of a kind kept in another kind's storage (KindDefinition.storedAs): every
// write is converted to the storage kind's form and every read back to the served form. Reads
// cannot splice stored bytes as StoredJson does, so each stored version is converted once and
// its served JSON (and protobuf) kept while the value is alive, shared by lists and watchers.

import type { KeyValue, WatchEvent, WatchHandler } from '../storage/interface.ts';
import type { KObject } from '../machinery/meta.ts';
import type { Schema } from '../machinery/schema.ts';
import { applyDefaults } from '../machinery/schema-validate.ts';
import { errors } from '../machinery/status.ts';
import { apiVersionOf, type StorageConversion, type VersionConversion } from './definition.ts';
import { encodeItem, encodeObjectFromItem } from '../wire/protobuf/index.ts';
import { EncodedObject, type Splice } from './encoded.ts';
import { notAnObject, StoredJson } from './stored-json.ts';

/** What the store needs of a kind's stored values: StoredJson, or this for a converted kind. */
export interface ObjectCodec {
  encode(obj: KObject): Uint8Array;
  splice(value: Uint8Array, revision: number): Splice | Buffer[];
  encoded(kv: KeyValue, revision?: number): EncodedObject;
  protobufItem(kv: KeyValue, revision?: number): Buffer;
  protobufBody(kv: KeyValue, revision?: number): Buffer;
  listBody(envelope: { apiVersion: string; kind: string; metadata: object }, kvs: readonly KeyValue[]): Buffer;
  /** Why a stored value does not decode into an object; undefined when it does. */
  undecodable(value: Uint8Array, revision: number): string | undefined;
  /**
   * Present when converting stored values is asynchronous (a conversion webhook): converts, in one
   * batch, every value of `values` not converted yet, so that the methods above then find them.
   * The store awaits it before reading values; it rejects with the Status the request fails with.
   */
  load?(values: readonly Uint8Array[]): Promise<void>;
  /** With `load`: whether `value` is readable now (converted, or at the served version already). */
  ready?(value: Uint8Array): boolean;
  /** With `load`: the value to store for an object at the served version, converted to the storage version. */
  encodeAsync?(obj: KObject): Promise<Uint8Array>;
}

interface Served {
  revision: number;
  json: Buffer;
  protobuf?: { body: Buffer; item: Buffer };
}

export class ConvertedJson implements ObjectCodec {
  private readonly apiVersion: string;
  private readonly kind: string;
  private readonly conversion: StorageConversion;
  private readonly storage: StoredJson;
  private readonly served = new WeakMap<Uint8Array, Served>();

  constructor(
    apiVersion: string,
    kind: string,
    conversion: StorageConversion,
  ) {
    this.apiVersion = apiVersion;
    this.kind = kind;
    this.conversion = conversion;
    this.storage = new StoredJson(apiVersionOf(conversion), conversion.kind);
  }

  encode(obj: KObject): Uint8Array {
    return this.storage.encode(this.conversion.toStorage(obj));
  }

  /** The served JSON of a stored value at `revision`, converted once per version. */
  private servedOf(value: Uint8Array, revision: number): Served {
    const cached = this.served.get(value);
    if (cached && cached.revision === revision) return cached;
    const stored = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')) as KObject;
    const { apiVersion: _a, kind: _k, metadata, ...rest } = this.conversion.fromStorage(stored);
    // resourceVersion first in metadata, where StoredJson splices it for every other kind.
    const obj = { apiVersion: this.apiVersion, kind: this.kind, metadata: { resourceVersion: String(revision), ...metadata }, ...rest };
    const entry: Served = { revision, json: Buffer.from(JSON.stringify(obj)) };
    this.served.set(value, entry);
    return entry;
  }

  undecodable(value: Uint8Array, revision: number): string | undefined {
    if (this.served.get(value)) return undefined;
    const bad = notAnObject(value);
    if (bad) return bad;
    try {
      this.servedOf(value, revision);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  splice(value: Uint8Array, revision: number): Buffer[] {
    return [this.servedOf(value, revision).json];
  }

  private protobufOf(kv: KeyValue, revision: number, e?: EncodedObject): { body: Buffer; item: Buffer } {
    const s = this.servedOf(kv.value, revision);
    if (!s.protobuf) {
      const item = encodeItem((e ?? new EncodedObject([s.json])).view());
      s.protobuf = { item, body: encodeObjectFromItem(this.apiVersion, this.kind, item) };
    }
    return s.protobuf;
  }

  encoded(kv: KeyValue, revision = kv.modRevision): EncodedObject {
    const e: EncodedObject = new EncodedObject(this.splice(kv.value, revision), undefined, () => this.protobufOf(kv, revision, e).item);
    return e;
  }

  protobufItem(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.protobufOf(kv, revision).item;
  }

  protobufBody(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.protobufOf(kv, revision).body;
  }

  listBody(envelope: { apiVersion: string; kind: string; metadata: object }, kvs: readonly KeyValue[]): Buffer {
    const start = `{"apiVersion":${JSON.stringify(envelope.apiVersion)},"kind":${JSON.stringify(envelope.kind)},"metadata":${JSON.stringify(envelope.metadata)},"items":[`;
    const parts: Buffer[] = [Buffer.from(start)];
    kvs.forEach((kv, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(this.servedOf(kv.value, kv.modRevision).json);
    });
    parts.push(LIST_END);
    return Buffer.concat(parts);
  }
}

const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');

/** What a VersionedJson converts with and applies on read. */
export interface VersionedOptions {
  /** The served version's schema, whose defaults apply to what is read; absent: none. */
  defaults?: Schema;
  /** The kind's conversion between versions; without `convert`: the None conversion. */
  conversion?: VersionConversion;
}

/** The stored value parsed, or undefined when it is not the JSON of an object with metadata. */
function parsed(value: Uint8Array): KObject | undefined {
  if (notAnObject(value) !== undefined) return undefined;
  return JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')) as KObject;
}

/**
 * The stored values of a kind whose objects may be stored at another of its versions (a custom
 * resource: the CRD's storage version changed, or its versions convert through a webhook), served
 * at one version. A value at the served version is served as stored (spliced, as StoredJson does;
 * with the version's defaults when it has some); any other is converted — with the None conversion
 * here (apiVersion rewritten), with a webhook in batches (`load`), which the store awaits before
 * it reads. Each stored value is converted once and its served form kept while the value lives,
 * shared by gets, lists and watchers.
 */
export class VersionedJson implements ObjectCodec {
  private readonly apiVersion: string;
  private readonly storageApiVersion: string;
  /** The served version's layout: what is served. */
  private readonly served: StoredJson;
  /** The storage version's layout: what is stored. */
  private readonly storage: StoredJson;
  private readonly defaults: Schema | undefined;
  private readonly convert: VersionConversion['convert'];
  /** A stored value's served form (itself when served as stored). */
  private readonly forms = new WeakMap<Uint8Array, Uint8Array>();
  /** Values whose conversion is under way: a second reader waits for the same review. */
  private readonly pending = new WeakMap<Uint8Array, Promise<void>>();
  readonly load: ObjectCodec['load'];
  readonly ready: ObjectCodec['ready'];
  readonly encodeAsync: ObjectCodec['encodeAsync'];

  constructor(apiVersion: string, kind: string, storageApiVersion: string, o: VersionedOptions = {}) {
    this.apiVersion = apiVersion;
    this.storageApiVersion = storageApiVersion;
    this.served = new StoredJson(apiVersion, kind);
    this.storage = apiVersion === storageApiVersion ? this.served : new StoredJson(storageApiVersion, kind);
    this.defaults = o.defaults;
    this.convert = o.conversion?.convert;
    if (this.convert) {
      this.load = (values) => this.loadValues(values);
      this.ready = (value) => this.forms.has(value) || this.atServedVersion(value);
      this.encodeAsync = (obj) => this.encodeConverted(obj);
    }
  }

  /** Whether a value needs no conversion: stored at the served version (or not an object at all). */
  private atServedVersion(value: Uint8Array): boolean {
    if (this.served.inLayout(value)) return true;
    const obj = parsed(value);
    return obj === undefined || obj.apiVersion === this.apiVersion;
  }

  /** Keeps `obj` (at the served version) as `value`'s served form, with the version's defaults. */
  private remember(value: Uint8Array, obj: KObject): Uint8Array {
    if (this.defaults) applyDefaults(obj, this.defaults);
    const form = this.served.encode(obj);
    this.forms.set(value, form);
    return form;
  }

  /** The value to serve for a stored value (converted already when the conversion is a webhook's). */
  private servedValue(value: Uint8Array): Uint8Array {
    if (!this.defaults && this.served.inLayout(value)) return value;
    const known = this.forms.get(value);
    if (known) return known;
    const obj = parsed(value);
    // Not an object: served (and reported) as StoredJson serves it.
    if (!obj) return value;
    if (obj.apiVersion !== this.apiVersion) {
      // The store loads every value before reading it; one that was not is a fault of the server.
      if (this.convert) throw errors.internal(`a stored ${String(obj.kind)} at ${String(obj.apiVersion)} was read before its conversion to ${this.apiVersion}`);
      // The None conversion: only apiVersion changes (remember's encoding sets it).
    }
    return this.remember(value, obj);
  }

  private async loadValues(values: readonly Uint8Array[]): Promise<void> {
    const waits: Promise<void>[] = [];
    const todo: { value: Uint8Array; obj: KObject }[] = [];
    for (const value of new Set(values)) {
      if (this.forms.has(value) || (!this.defaults && this.served.inLayout(value))) continue;
      const under = this.pending.get(value);
      if (under) {
        waits.push(under);
        continue;
      }
      const obj = parsed(value);
      if (!obj) continue;
      if (obj.apiVersion === this.apiVersion) this.remember(value, obj);
      else todo.push({ value, obj });
    }
    if (todo.length) {
      const batch = this.convert!(
        todo.map((t) => t.obj),
        this.apiVersion,
      ).then(
        (converted) => {
          converted.forEach((o, i) => this.remember(todo[i]!.value, o));
          for (const t of todo) this.pending.delete(t.value);
        },
        (e: unknown) => {
          for (const t of todo) this.pending.delete(t.value);
          throw e;
        },
      );
      for (const t of todo) this.pending.set(t.value, batch);
      waits.push(batch);
    }
    await Promise.all(waits);
  }

  encode(obj: KObject): Uint8Array {
    // A webhook conversion cannot run here: the store encodes through encodeAsync.
    if (this.convert && this.apiVersion !== this.storageApiVersion) throw new Error(`${this.apiVersion} is stored at ${this.storageApiVersion} through a webhook: encode it with encodeAsync`);
    // What is read back is the defaulted object: store it so (a write by the server itself, such
    // as the garbage collector's, of an object read without its defaults).
    if (this.defaults) applyDefaults(obj, this.defaults);
    const bytes = this.storage.encode(obj);
    if (this.storage === this.served) this.forms.set(bytes, bytes);
    return bytes;
  }

  private async encodeConverted(obj: KObject): Promise<Uint8Array> {
    if (this.apiVersion === this.storageApiVersion) return this.encode(obj);
    const { resourceVersion: _rv, ...metadata } = obj.metadata;
    const [stored] = await this.convert!([{ ...obj, metadata }], this.storageApiVersion);
    return this.storage.encode(stored!);
  }

  private kv(kv: KeyValue): KeyValue {
    const value = this.servedValue(kv.value);
    return value === kv.value ? kv : { ...kv, value };
  }

  undecodable(value: Uint8Array): string | undefined {
    if (this.forms.has(value) || this.served.inLayout(value)) return undefined;
    return notAnObject(value);
  }

  splice(value: Uint8Array, revision: number): Splice | Buffer[] {
    return this.served.splice(this.servedValue(value), revision);
  }

  encoded(kv: KeyValue, revision = kv.modRevision): EncodedObject {
    return this.served.encoded(this.kv(kv), revision);
  }

  protobufItem(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.served.protobufItem(this.kv(kv), revision);
  }

  protobufBody(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.served.protobufBody(this.kv(kv), revision);
  }

  listBody(envelope: { apiVersion: string; kind: string; metadata: object }, kvs: readonly KeyValue[]): Buffer {
    return this.served.listBody(envelope, kvs.map((kv) => this.kv(kv)));
  }
}

/** The stored values a watch event needs read: its new value and its previous one. */
function eventValues(events: readonly WatchEvent[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const ev of events) {
    if (ev.value) out.push(ev.value);
    if (ev.prevValue) out.push(ev.prevValue);
  }
  return out;
}

/**
 * A watch handler in front of another, for a codec whose conversion is asynchronous: a batch of
 * events whose values are all readable goes straight through; otherwise the batch waits (the
 * source holds what follows, as for a watcher that pushed back) while its values are converted in
 * one batch, then goes on in order. A conversion that fails ends the watch with its Status.
 */
export class ConvertingWatch implements WatchHandler {
  private readonly codec: ObjectCodec;
  private readonly next: WatchHandler;
  /** What waits behind a conversion under way, in order: event batches, a progress note, an error. */
  private queue: ({ events: WatchEvent[] } | { progress: number } | { error: Error })[] = [];
  private converting = false;
  /** The next handler pushed back: the queue waits for its resume. */
  private blocked = false;
  private ended = false;
  /** Asks the source for more (its Watch.resume). */
  resumeSource: () => void = () => {};

  constructor(codec: ObjectCodec, next: WatchHandler) {
    this.codec = codec;
    this.next = next;
  }

  events(events: WatchEvent[]): void | boolean {
    if (this.ended) return;
    if (!this.converting && !this.blocked && this.queue.length === 0 && eventValues(events).every((v) => this.codec.ready!(v))) return this.next.events(events);
    this.queue.push({ events });
    this.pump();
    return false;
  }

  progress(revision: number): void {
    if (this.queue.length === 0 && !this.converting && !this.blocked) return this.next.progress?.(revision);
    this.queue.push({ progress: revision });
  }

  error(err: Error): void {
    if (this.queue.length === 0 && !this.converting && !this.blocked) return this.next.error(err);
    this.queue.push({ error: err });
  }

  /** The next handler has room again. */
  resume(): void {
    this.blocked = false;
    this.pump();
    if (this.queue.length === 0 && !this.converting) this.resumeSource();
  }

  private pump(): void {
    while (!this.converting && !this.blocked && !this.ended && this.queue.length) {
      const head = this.queue[0]!;
      if ('events' in head) {
        const values = eventValues(head.events).filter((v) => !this.codec.ready!(v));
        if (values.length) {
          this.converting = true;
          this.codec.load!(values).then(
            () => {
              this.converting = false;
              this.pump();
              if (!this.blocked && this.queue.length === 0) this.resumeSource();
            },
            (e: unknown) => {
              this.converting = false;
              this.ended = true;
              this.queue = [];
              this.next.error(e as Error);
            },
          );
          return;
        }
        this.queue.shift();
        if (this.next.events(head.events) === false) this.blocked = true;
      } else if ('progress' in head) {
        this.queue.shift();
        this.next.progress?.(head.progress);
      } else {
        this.queue.shift();
        this.ended = true;
        this.next.error(head.error);
      }
    }
  }
}
