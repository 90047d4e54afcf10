// The stored values of a kind kept in another kind's storage (KindDefinition.storedAs): every
// write is converted to the storage kind's form and every read back to the served form. Reads
// cannot splice stored bytes as StoredJson does, so each stored version is converted once and
// its served JSON (and protobuf) kept while the value is alive, shared by lists and watchers.

import type { KeyValue } from '../storage/interface.ts';
import type { KObject } from '../machinery/meta.ts';
import { apiVersionOf, type StorageConversion } from './definition.ts';
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
