// The store of a kind whose objects are computed on every read (ComponentStatus): get and list,
// nothing stored, no watch cache, no resourceVersion (there is nothing to resume from), as
// kube-apiserver serves such a kind through a REST storage of its own rather than the generic one.

import type { KObject } from '../machinery/meta.ts';
import type { ListOptions } from '../machinery/list-options.ts';
import { errors, type QualifiedResource } from '../machinery/status.ts';
import { encodeObject } from '../wire/protobuf/index.ts';
import { apiVersionOf, type KindDefinition } from './definition.ts';
import { EncodedObject, type BodyEncoding } from './encoded.ts';
import { selectorMatcher } from './selection.ts';
import { asBytes, type ListResponse, type ReadableStore } from './store.ts';

export class ComputedStore implements ReadableStore {
  readonly def: KindDefinition;
  private readonly compute: () => Promise<KObject[]>;
  readonly qualified: QualifiedResource;
  readonly apiVersion: string;

  constructor(
    def: KindDefinition,
    compute: () => Promise<KObject[]>,
  ) {
    this.def = def;
    this.compute = compute;
    this.qualified = { group: def.group, resource: def.resource };
    this.apiVersion = apiVersionOf(def);
  }

  /** Every resourceVersion reads the same: the objects as they are now. */
  async getEncoded(namespace: string | undefined, name: string): Promise<EncodedObject> {
    return EncodedObject.of(await this.object(namespace, name));
  }

  async getBody(namespace: string | undefined, name: string, _resourceVersion: string | undefined, enc: BodyEncoding): Promise<Buffer | undefined> {
    const obj = await this.object(namespace, name);
    if (enc.stored === 'protobuf') return encodeObject(obj);
    return this.encodedAs(Buffer.from(JSON.stringify(obj)), enc);
  }

  /** Other encodings encode the value the JSON reads as, as for stored kinds. */
  private encodedAs(json: Buffer, enc: BodyEncoding): Buffer | undefined {
    return enc.stored === 'json' ? json : asBytes(enc.encode(JSON.parse(json.toString('utf8'))));
  }

  private async object(namespace: string | undefined, name: string): Promise<KObject> {
    const found = (await this.compute()).find((o) => o.metadata.name === name && o.metadata.namespace === namespace);
    if (!found) throw errors.notFound(this.qualified, name);
    return found;
  }

  /** Every object the selectors match, in name order, without paging. */
  async list(namespace: string | undefined, opts: ListOptions): Promise<ListResponse> {
    const match = selectorMatcher(this.def, opts);
    const items = (await this.compute())
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .filter((o) => !match || match(o))
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
    return { apiVersion: this.apiVersion, kind: `${this.def.kind}List`, metadata: {}, items };
  }

  /** Built whole on every read: nothing is kept for a computed kind. */
  async listBody(namespace: string | undefined, opts: ListOptions, enc: BodyEncoding): Promise<Buffer | undefined> {
    return this.encodedAs(Buffer.from(JSON.stringify(await this.list(namespace, opts))), enc);
  }
}
