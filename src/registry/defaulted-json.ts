// The stored values of a kind whose schema defaults apply on read (KindDefinition.defaultOnRead),
// as kube-apiserver defaults custom resources while decoding them from storage: an object stored
// before its schema had a default is served with it. Each stored value is looked at once; one the
// defaults leave as it is is served by splicing its bytes (StoredJson), one they complete is
// re-encoded once and that form served from then on. Writes store objects with their defaults.

import type { KeyValue } from '../storage/interface.ts';
import type { KObject } from '../machinery/meta.ts';
import type { Schema } from '../machinery/schema.ts';
import { applyDefaults } from '../machinery/schema-validate.ts';
import type { ObjectCodec } from './converted-json.ts';
import type { EncodedObject, Splice } from './encoded.ts';
import { StoredJson } from './stored-json.ts';

export class DefaultedJson implements ObjectCodec {
  private readonly storage: StoredJson;
  private readonly schema: Schema;
  /** A stored value's defaulted form, or null when it is served as stored. */
  private readonly defaulted = new WeakMap<Uint8Array, Uint8Array | null>();

  constructor(apiVersion: string, kind: string, schema: Schema) {
    this.storage = new StoredJson(apiVersion, kind);
    this.schema = schema;
  }

  encode(obj: KObject): Uint8Array {
    // What is read back is the defaulted object: store it so (a write by the server itself, such
    // as the garbage collector's, of an object read without its defaults included).
    applyDefaults(obj, this.schema);
    const bytes = this.storage.encode(obj);
    this.defaulted.set(bytes, null);
    return bytes;
  }

  /** The value to serve for a stored value. */
  private served(value: Uint8Array): Uint8Array {
    let d = this.defaulted.get(value);
    if (d === undefined) {
      d = null;
      try {
        const obj = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')) as KObject;
        if (typeof obj === 'object' && obj !== null && applyDefaults(obj, this.schema)) d = this.storage.encode(obj);
      } catch {
        // Not JSON: served (and reported) as StoredJson serves it.
      }
      this.defaulted.set(value, d);
    }
    return d ?? value;
  }

  private kv(kv: KeyValue): KeyValue {
    const value = kv.value && this.served(kv.value);
    return value === kv.value ? kv : { ...kv, value };
  }

  splice(value: Uint8Array, revision: number): Splice | Buffer[] {
    return this.storage.splice(this.served(value), revision);
  }

  encoded(kv: KeyValue, revision = kv.modRevision): EncodedObject {
    return this.storage.encoded(this.kv(kv), revision);
  }

  protobufItem(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.storage.protobufItem(this.kv(kv), revision);
  }

  protobufBody(kv: KeyValue, revision = kv.modRevision): Buffer {
    return this.storage.protobufBody(this.kv(kv), revision);
  }

  listBody(envelope: { apiVersion: string; kind: string; metadata: object }, kvs: readonly KeyValue[]): Buffer {
    return this.storage.listBody(envelope, kvs.map((kv) => this.kv(kv)));
  }

  undecodable(value: Uint8Array): string | undefined {
    return this.storage.undecodable(value);
  }
}
