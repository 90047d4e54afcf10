// The generic registry store: create, get, list, watch, update, delete and deletecollection for
// any kind, driven by its definition. It knows no kind; kinds plug in through their strategy.

import type { Naming } from '../naming.ts';
import {
  CompactedError,
  ConflictError,
  CorruptObjectError,
  FutureRevisionError,
  InsufficientStorageError,
  KeyExistsError,
  KeyNotFoundError,
  UnavailableError,
  untransformableReason,
  WatcherTooSlowError,
} from '../storage/errors.ts';
import type { KeyValue, Watch, WatchEvent } from '../storage/interface.ts';
import type { WatchCache } from '../storage/cache/watch-cache.ts';
import { CacheDelegator } from '../storage/cache/delegator.ts';
import { DryRunnableStorage } from '../storage/dry-run.ts';
import { decodeContinue, encodeContinue } from '../machinery/continue-token.ts';
import { nowTimestamp, type KObject } from '../machinery/meta.ts';
import { errors, StatusError, successStatus, type QualifiedResource, type StatusBody } from '../machinery/status.ts';
import { parseResourceVersion, type ListOptions } from '../machinery/list-options.ts';
import { apiVersionOf, storagePrefix, type KindDefinition, type SubresourceDefinition } from './definition.ts';
import type { Admission } from './admission.ts';
import type { UserInfo } from '../request/user.ts';
import { EncodedObject, type BodyEncoding } from './encoded.ts';
import { encodeListFromItems } from '../wire/protobuf/index.ts';
import { WatchStream, type WatchSink } from './watch-stream.ts';
import type { FieldManager } from './field-manager.ts';
import { ConvertingWatch, type ObjectCodec } from './converted-json.ts';
import type { DeclarativeValidation } from './declarative-validation.ts';
import { selectorMatcher } from './selection.ts';
import { checkPreconditions, isWriteInput, kindKey, subresourcesOf, WritePreparation, type DescribeRequested, type PreparationJob, type PreparationOffload, type PreparedWrite, type WriteInput, type Answered } from './preparation.ts';

export interface WriteOptions {
  dryRun: boolean;
  /**
   * The field manager of the write (fieldManager, or the User-Agent's): the object's managedFields
   * record what it changed. An apply computes them itself and says `applied`.
   */
  manager?: string;
  applied?: boolean;
  /** Where the strategy's warnings about the written object go (the response's Warning headers). */
  warn?: (message: string) => void;
  /** When the request must be answered by (epoch ms): a write prepared in a worker stops then. */
  deadline?: number;
  /** The user the request acts as: the kind's guardWrite checks the write against it. */
  user?: UserInfo;
  /**
   * Told the identity the request's own object gives as soon as it is decoded, even when the
   * write is then refused (a create's or update's body: audit's objectRef).
   */
  describe?: DescribeRequested;
  /**
   * When the request has been answered: a worker that prepared a large write collects its garbage
   * then, not while this thread is still storing and answering it.
   */
  answered?: Answered;
}

export interface UpdateOptions extends WriteOptions {
  subresource?: SubresourceDefinition;
  /** An update of a missing object creates it (a PUT of a kind that allows it, an apply). */
  allowCreate?: boolean;
  /** The uid of the object the input gives is a precondition (a PUT's body). */
  uidFromInput?: boolean;
}

export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Deprecated form of propagationPolicy: true is Orphan, false Background. */
  orphanDependents?: boolean;
  /**
   * ignoreStoreReadErrorWithClusterBreakingPotential (gate AllowUnsafeMalformedObjectDeletion,
   * authorized by the caller): remove an object whose stored value cannot be read.
   */
  unsafeIgnoreReadError?: boolean;
}

/** The most corrupt objects a list names before it says there are more (kube-apiserver's). */
const MAX_CORRUPT_LISTED = 100;

/** The finalizers through which the garbage collector carries out a propagation policy. */
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

function propagationFinalizer(opts: DeleteOptions): string | undefined {
  const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : undefined);
  return policy === 'Orphan' ? ORPHAN_FINALIZER : policy === 'Foreground' ? FOREGROUND_FINALIZER : undefined;
}

export interface ListResponse {
  apiVersion: string;
  kind: string;
  /** resourceVersion is absent only for computed kinds (nothing stored, nothing to resume). */
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: KObject[];
}

/**
 * What the get and list handlers need of a store: RegistryStore for stored kinds, ComputedStore
 * for kinds computed on every read.
 */
export interface ReadableStore {
  readonly def: KindDefinition;
  readonly qualified: QualifiedResource;
  readonly apiVersion: string;
  getEncoded(namespace: string | undefined, name: string, resourceVersion?: string): Promise<EncodedObject>;
  /** A get's answer in `enc`; undefined when the object has no form in it (the answer is JSON). */
  getBody(namespace: string | undefined, name: string, resourceVersion: string | undefined, enc: BodyEncoding): Promise<Buffer | undefined>;
  list(namespace: string | undefined, opts: ListOptions): Promise<ListResponse>;
  /** A list's answer in `enc`; undefined when the list has no form in it (the answer is JSON). */
  listBody(namespace: string | undefined, opts: ListOptions, enc: BodyEncoding): Promise<Buffer | undefined>;
}

/** A body an encoder produced, as bytes. */
export function asBytes(body: string | Buffer | undefined): Buffer | undefined {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/**
 * What a create or update wrote: the object (decoded when first asked for, if the write was
 * prepared in a worker) and the response body.
 */
export class Written {
  private readonly decode: () => KObject;
  /** The response body; absent: the object as JSON. */
  private readonly body: (() => Buffer) | undefined;
  /** The write created the object (201). */
  readonly created: boolean;
  private decoded: KObject | undefined;

  constructor(
    decode: () => KObject,
    body: (() => Buffer) | undefined,
    created: boolean,
  ) {
    this.decode = decode;
    this.body = body;
    this.created = created;
  }

  get object(): KObject {
    return (this.decoded ??= this.decode());
  }

  /** The response body: the stored JSON with its resourceVersion, parsed nowhere when it can be. */
  responseBody(): Buffer {
    return this.body ? this.body() : Buffer.from(JSON.stringify(this.object));
  }
}

export type DeleteOutcome =
  | { kind: 'deleted'; status: StatusBody; object: KObject }
  | { kind: 'pending'; object: KObject }
  /** An unsafe deletion removed a corrupt object: there is no object to report. */
  | { kind: 'removed'; status: StatusBody };

export type { WatchSink } from './watch-stream.ts';

const MAX_GENERATE_NAME_TRIES = 8;
/** How long an update waits for the update of the same key before it (see `oneAtATime`). */
const KEY_TURN_WAIT_MS = 1000;

export class RegistryStore implements ReadableStore {
  private readonly cache: WatchCache;
  private readonly naming: Naming;
  private readonly admission: Admission;
  readonly def: KindDefinition;
  readonly qualified: QualifiedResource;
  readonly apiVersion: string;
  /** `/registry/<group|core>/<resource>/` */
  readonly prefix: string;

  constructor(
    def: KindDefinition,
    cache: WatchCache,
    naming: Naming,
    admission: Admission,
    /** The server's declarative validation (gates, metrics); absent: hand-written checks only. */
    declarative?: DeclarativeValidation,
  ) {
    this.cache = cache;
    this.naming = naming;
    this.admission = admission;
    this.def = def;
    this.qualified = { group: def.group, resource: def.resource };
    this.apiVersion = apiVersionOf(def);
    this.prefix = storagePrefix(def);
    this.prep = new WritePreparation(def, declarative);
    this.json = this.prep.json;
    this.fields = this.prep.fields;
    this.subresources = subresourcesOf(def);
    this.kindKey = kindKey(def);
    this.reads = new CacheDelegator(cache);
    this.writes = new DryRunnableStorage(cache);
  }

  /**
   * How many objects are stored under this kind's prefix, and how many clients watch it (kinds
   * stored as another share its cache and so its figures).
   */
  get stats(): { objects: number; watchers: number } {
    return { objects: this.cache.objectCount, watchers: this.cache.watcherCount };
  }

  /** Where reads and watches are served: the watch cache, or storage when it cannot answer. */
  private readonly reads: CacheDelegator;
  /** Writes go through the cache to storage; a dry run makes the same reads and checks, and stops there. */
  private readonly writes: DryRunnableStorage;

  /** Field ownership (managedFields) of writes to this kind. */
  readonly fields: FieldManager;

  keyFor(namespace: string | undefined, name: string): string {
    return this.def.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  prefixFor(namespace: string | undefined): string {
    return this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
  }

  // ---- encoding ----

  /**
   * Gate AllowUnsafeMalformedObjectDeletion: a list names every corrupt object it meets (one
   * StoreReadError), as kube-apiserver does with the gate on; off, the list fails on the first.
   */
  unsafeDeletion = false;

  /** Why a stored value cannot be read back (decrypted, or decoded): undefined when it can. */
  corruption(kv: KeyValue): CorruptObjectError | undefined {
    const untransformable = untransformableReason(kv.value);
    if (untransformable !== undefined) return new CorruptObjectError(kv.key, 'untransformable', 0, untransformable);
    const undecodable = this.json.undecodable(kv.value, kv.modRevision);
    return undecodable === undefined ? undefined : new CorruptObjectError(kv.key, 'undecodable', kv.modRevision, undecodable);
  }

  /** What a read of one corrupt object answers: 500 InternalError, in kube-apiserver's words. */
  private corruptRead(err: CorruptObjectError): StatusError {
    // Without the gate kube-apiserver reports the bare transformation or decoding error.
    return errors.internal(this.unsafeDeletion ? err.message : err.failure === 'untransformable' ? err.reason : err.detail);
  }

  /** The object's stored value, or the read's error when it cannot be read back. */
  private readable(kv: KeyValue): KeyValue {
    const bad = this.corruption(kv);
    if (bad) throw this.corruptRead(bad);
    return kv;
  }

  private readonly json: ObjectCodec;

  /**
   * A codec whose conversion is asynchronous (a CRD's conversion webhook) converts the values a
   * request is about to read, in one batch, before its synchronous methods read them; for every
   * other codec this does nothing (and costs no turn of the event loop: callers test `json.load`).
   */
  private async convertValues(values: readonly Uint8Array[]): Promise<void> {
    if (this.json.load && values.length) await this.json.load(values);
  }

  encoded(kv: KeyValue, revision = kv.modRevision): EncodedObject {
    return this.json.encoded(kv, revision);
  }

  decode(kv: KeyValue, revision = kv.modRevision): KObject {
    return this.encoded(kv, revision).copy();
  }

  /**
   * A written object as reads return it: a kind kept in another kind's storage gets what its
   * conversion adds (core Event's always-present fields) in every encoding of the response.
   */
  private served(obj: KObject): KObject {
    const c = this.def.storedAs;
    return c ? c.fromStorage(c.toStorage(obj)) : obj;
  }

  /**
   * The result of a create or update whose stored bytes are `bytes` at `revision` (0: nothing was
   * committed, a dry run's create), with `object` when the write was prepared on this thread.
   * A write prepared in a worker is not parsed here unless its object is asked for: its response
   * is the stored bytes with their resourceVersion spliced in.
   */
  private written(bytes: Uint8Array, revision: number, created: boolean, object?: KObject): Written {
    // Converted through a webhook, the response is the stored object converted back (the caller
    // converted it), as kube-apiserver decodes what it stored: not the request's object.
    if (this.json.load) object = undefined;
    const decode = (): KObject => {
      if (!object) return revision > 0 ? this.prep.decodeStored(bytes, revision) : this.prep.decodeNew(bytes);
      if (revision > 0) object.metadata.resourceVersion = String(revision);
      return this.served(object);
    };
    const body = (): Buffer => {
      if (revision > 0) return new EncodedObject(this.json.splice(bytes, revision)).bytes();
      // Not committed: no version. A kind stored as itself is stored as the JSON it serves.
      if (!object && !this.def.storedAs) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return Buffer.from(JSON.stringify(decode()));
    };
    return new Written(decode, body, created);
  }

  /** The result of a write that changed nothing: the stored object as it is. */
  private unchanged(kv: KeyValue): Written {
    return new Written(() => this.decode(kv), () => this.encoded(kv).bytes(), false);
  }

  // ---- reads ----

  async getEncoded(namespace: string | undefined, name: string, resourceVersion?: string): Promise<EncodedObject> {
    return this.encoded(await this.getKeyValue(namespace, name, resourceVersion));
  }

  /**
   * A get's answer in `enc`: the stored JSON bytes, the protobuf body kept per stored version, or
   * the encoder's encoding of the object, made once per (stored version, encoder).
   */
  async getBody(namespace: string | undefined, name: string, resourceVersion: string | undefined, enc: BodyEncoding): Promise<Buffer | undefined> {
    const kv = await this.getKeyValue(namespace, name, resourceVersion);
    if (enc.stored === 'json') return this.encoded(kv).bytes();
    if (enc.stored === 'protobuf') return this.json.protobufBody(kv);
    return this.valueBody(kv, enc);
  }

  /** Bodies of stored versions in value encodings (YAML, CBOR), per encoder. */
  private readonly valueBodies = new WeakMap<Uint8Array, { revision: number; bodies: Map<BodyEncoding, Buffer | undefined> }>();

  private valueBody(kv: KeyValue, enc: BodyEncoding): Buffer | undefined {
    let kept = this.valueBodies.get(kv.value);
    if (!kept || kept.revision !== kv.modRevision) {
      kept = { revision: kv.modRevision, bodies: new Map() };
      this.valueBodies.set(kv.value, kept);
    }
    if (kept.bodies.has(enc)) return kept.bodies.get(enc);
    const body = asBytes(enc.encode(this.encoded(kv).view()));
    kept.bodies.set(enc, body);
    return body;
  }

  private async getKeyValue(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KeyValue> {
    const key = this.keyFor(namespace, name);
    const rv = resourceVersion ? parseResourceVersion(resourceVersion) : undefined;
    const kv = await this.storageCall(() => this.reads.get(key, rv));
    if (!kv) throw errors.notFound(this.qualified, name);
    this.readable(kv);
    if (this.json.load) await this.convertValues([kv.value]);
    return kv;
  }

  private readonly views = new WeakMap<Uint8Array, KObject>();

  /**
   * The object as the cache holds it, parsed once per version and shared (read-only): for
   * lookups on every request, like admission's namespace check. Undefined when not cached.
   */
  cachedView(namespace: string | undefined, name: string): KObject | undefined {
    const kv = this.reads.getCached(this.keyFor(namespace, name));
    if (!kv) return undefined;
    let view = this.views.get(kv.value);
    if (!view) {
      view = this.decode(this.readable(kv));
      this.views.set(kv.value, view);
    }
    return view;
  }

  async get(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KObject> {
    return (await this.getEncoded(namespace, name, resourceVersion)).copy();
  }

  async list(namespace: string | undefined, opts: ListOptions): Promise<ListResponse> {
    const { items, ...rest } = await this.listKeyValues(namespace, opts);
    return { ...rest, items: items.map((kv) => this.decode(kv)) };
  }

  async listEncoded(namespace: string | undefined, opts: ListOptions): Promise<Omit<ListResponse, 'items'> & { items: EncodedObject[] }> {
    const { items, ...rest } = await this.listKeyValues(namespace, opts);
    return { ...rest, items: items.map((kv) => this.encoded(kv)) };
  }

  /**
   * A list's answer in `enc`. JSON is built from the stored bytes without parsing or copying them
   * twice; protobuf from the items' messages kept per stored version, copied once into a body of
   * exactly their size; other encodings encode the list value.
   */
  async listBody(namespace: string | undefined, opts: ListOptions, enc: BodyEncoding): Promise<Buffer | undefined> {
    const { items, ...envelope } = await this.listKeyValues(namespace, opts);
    if (enc.stored === 'protobuf') return encodeListFromItems(envelope, items.map((kv) => this.json.protobufItem(kv)));
    const json = this.json.listBody(envelope, items);
    if (enc.stored === 'json') return json;
    return asBytes(enc.encode(JSON.parse(json.toString('utf8'))));
  }

  /** The list's stored values (the chunk a list request returns), before any encoding. */
  async listKeyValues(namespace: string | undefined, opts: ListOptions): Promise<Omit<ListResponse, 'items'> & { items: KeyValue[] }> {
    const prefix = this.prefixFor(namespace);
    const match = selectorMatcher(this.def, opts);
    const pos = opts.continue ? decodeContinue(this.naming.metaGroup, opts.continue) : undefined;
    const resourceVersion = !pos && opts.resourceVersion ? parseResourceVersion(opts.resourceVersion) : undefined;
    // A field selector on the name (and namespace) reads one key instead of the range.
    const onlyName = pos ? undefined : opts.fieldSelector.requiresExactMatch('metadata.name');
    const onlyNamespace = namespace ?? opts.fieldSelector.requiresExactMatch('metadata.namespace');
    const onlyKey = onlyName !== undefined && (!this.def.namespaced || onlyNamespace !== undefined) ? this.keyFor(onlyNamespace, onlyName) : undefined;
    // Corrupt objects are collected (a selector cannot test them) and fail the list together.
    const corrupt: CorruptObjectError[] = [];
    const readable = (kv: KeyValue): boolean => {
      const bad = this.corruption(kv);
      if (bad) corrupt.push(bad);
      return !bad;
    };
    // Values that convert through a webhook are tested by the selector once converted, the page's
    // together (one review): the page is then what the limit scanned, as a filtered page may be.
    const converting = this.json.load !== undefined;
    const page = await this.storageCall(
      () =>
        this.reads.list(prefix, {
          resourceVersion,
          resourceVersionMatch: opts.resourceVersionMatch,
          limit: opts.limit ?? 0,
          continueFrom: pos && { revision: pos.revision, key: prefix + pos.start },
          onlyKey,
          // Only a selector makes the value worth parsing.
          filter: match && !converting ? (kv) => readable(kv) && match(this.encoded(kv).view()) : undefined,
        }),
      pos !== undefined ? 'continue' : 'list',
    );
    if (!match || converting) for (const kv of page.items) readable(kv);
    if (corrupt.length) throw this.corruptList(corrupt);
    let items = page.items;
    if (converting) {
      await this.convertValues(items.map((kv) => kv.value));
      if (match) items = items.filter((kv) => match(this.encoded(kv).view()));
    }
    const list: Omit<ListResponse, 'items'> & { items: KeyValue[] } = {
      apiVersion: this.apiVersion,
      kind: `${this.def.kind}List`,
      metadata: { resourceVersion: String(page.revision) },
      items,
    };
    if (page.continueAfter !== undefined) {
      list.metadata.continue = encodeContinue(this.naming.metaGroup, { revision: page.revision, start: `${page.continueAfter.slice(prefix.length)}\0` });
      if (!match) list.metadata.remainingItemCount = page.remaining;
    }
    return list;
  }

  /** What a list that met corrupt objects answers (kube-apiserver's, with the gate on or off). */
  private corruptList(corrupt: readonly CorruptObjectError[]): StatusError {
    if (this.unsafeDeletion)
      return errors.storeReadList(
        this.qualified,
        corrupt.slice(0, MAX_CORRUPT_LISTED).map((c) => ({ key: c.key, message: c.message })),
        corrupt.length > MAX_CORRUPT_LISTED,
      );
    const first = corrupt[0]!;
    return errors.internal(first.failure === 'untransformable' ? `unable to transform key ${JSON.stringify(first.key)}: ${first.reason}` : first.detail);
  }

  /** Translate storage errors into Status errors; `list`: a list's page, or the page a continue token names. */
  private async storageCall<T>(fn: () => Promise<T>, list?: 'list' | 'continue'): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof CompactedError) throw list === 'continue' ? errors.continueExpired() : list === 'list' ? errors.listTooOld() : errors.tooOld(e.requestedRevision, e.compactRevision);
      if (e instanceof FutureRevisionError) throw errors.tooLargeResourceVersion(e.requestedRevision, e.currentRevision);
      if (e instanceof UnavailableError) throw errors.unavailable(`storage is unavailable: ${e.message}`);
      if (e instanceof InsufficientStorageError) throw errors.insufficientStorage(e.message);
      throw e;
    }
  }

  // ---- watch ----

  /**
   * The encodings of one storage event, shared by every watcher of this store: the cache hands
   * the same event object to all of them, so each value is decoded and serialized once.
   */
  private readonly eventEncodings = new WeakMap<WatchEvent, { cur?: EncodedObject; prev?: EncodedObject; deleted?: EncodedObject }>();

  private encodingsOf(ev: WatchEvent) {
    let e = this.eventEncodings.get(ev);
    if (!e) {
      e = {};
      if (ev.type === 'put' && ev.value) e.cur = new EncodedObject(this.json.splice(ev.value, ev.revision));
      if (ev.prevValue) {
        const prevValue = ev.prevValue;
        // The previous state is only parsed when a selector has to test it.
        e.prev = new EncodedObject(() => new EncodedObject(this.json.splice(prevValue, ev.prevModRevision ?? 0)).parts());
        // A deleted object is reported in its last state at the revision of the delete.
        if (ev.type === 'delete') e.deleted = new EncodedObject(() => new EncodedObject(this.json.splice(prevValue, ev.revision)).parts());
      }
      this.eventEncodings.set(ev, e);
    }
    return e;
  }

  /** The watches open through this store: each entry ends its watch. */
  private readonly openWatches = new Set<() => void>();
  private retired = false;

  /** Short requests (every verb but watch) being served through this store, and who waits for none. */
  private requests = 0;
  private idle?: { promise: Promise<void>; resolve: () => void };

  /**
   * A short request is served through this store from now until `requestEnded` (once for each):
   * a store torn down when its definition changed waits for them (`drained`).
   */
  requestStarted(): void {
    this.requests++;
  }

  requestEnded(): void {
    if (--this.requests === 0 && this.idle) {
      this.idle.resolve();
      this.idle = undefined;
    }
  }

  /** Resolves once no short request is served through this store. */
  drained(): Promise<void> {
    if (this.requests === 0) return Promise.resolve();
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }

  /**
   * This store no longer serves its kind (a changed custom resource definition is served by a new
   * store on the same storage): every watch open through it ends as a finished stream, without an
   * ERROR event, as kube-apiserver's teardown of the old storage ends them (the client watches
   * again, through the new definition); a watch still starting here ends once started.
   */
  retire(): void {
    this.retired = true;
    for (const end of [...this.openWatches]) end();
  }

  /**
   * Watch the store. `bookmark()` sends a bookmark now (at the store's revision when it moved past
   * what the watch has sent, else at the last revision sent), e.g. just before the watch times
   * out. The stream is paced by its client (see WatchStream).
   */
  async watch(namespace: string | undefined, opts: ListOptions, sink: WatchSink): Promise<Watch & { bookmark(): void }> {
    const prefix = this.prefixFor(namespace);
    const match = selectorMatcher(this.def, opts);
    const bookmark = (rv: number, annotations?: Record<string, string>) =>
      EncodedObject.of({ kind: this.def.kind, apiVersion: this.apiVersion, metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } });
    const rvText = opts.resourceVersion ?? '';
    const rv = rvText ? parseResourceVersion(rvText) : 0;
    const initial = opts.sendInitialEvents ?? (rvText === '' || rv === 0);
    let after = rv;
    let items: KeyValue[] = [];
    if (initial) {
      const listOpts: ListOptions = { ...opts, limit: undefined, continue: undefined, resourceVersionMatch: rv > 0 ? 'NotOlderThan' : undefined };
      const list = await this.listKeyValues(namespace, listOpts);
      after = Number(list.metadata.resourceVersion);
      items = list.items;
    } else if (rv > this.reads.revision) {
      // A version from the future: wait for it, and answer as a list at it does when it never
      // comes (504 ResourceVersionTooLarge) rather than watch for events that may never exist.
      await this.storageCall(() => this.reads.waitNotOlderThan(rv));
    }
    // A watch that ends (by itself or retired) leaves the list of open watches.
    let ended = false;
    const listed: WatchSink = {
      send: (type, object) => sink.send(type, object),
      error: (status) => sink.error(status),
      end: () => {
        if (ended) return;
        ended = true;
        this.openWatches.delete(end);
        sink.end();
      },
      onDrain: (resume) => sink.onDrain(resume),
    };
    const stream = new WatchStream({
      sink: listed,
      after,
      describe: (ev) => this.describeEvent(ev, match),
      bookmark: opts.allowWatchBookmarks ? (revision) => bookmark(revision) : undefined,
      errorStatus: (err) => {
        if (err instanceof CompactedError) return errors.tooOld(err.requestedRevision, err.compactRevision).status;
        if (err instanceof StatusError) return err.status;
        // A watcher too slow for the cache just ends: the client starts over, as with kube-apiserver.
        return err instanceof WatcherTooSlowError ? undefined : errors.internal(err.message).status;
      },
    });
    const endOfInitial = opts.sendInitialEvents && opts.allowWatchBookmarks ? { type: 'BOOKMARK' as const, object: bookmark(after, { [this.naming.annotation('initial-events-end')]: 'true' }) } : undefined;
    if (initial) stream.owe(items, (kv) => this.encoded(kv), endOfInitial);
    // Events whose values convert through a webhook wait for their conversion, in order.
    const converting = this.json.load ? new ConvertingWatch(this.json, stream) : undefined;
    const watch = this.reads.watch(prefix, after, converting ?? stream);
    if (converting) {
      converting.resumeSource = () => watch.resume?.();
      stream.resumeSource = () => converting.resume();
    } else stream.resumeSource = () => watch.resume?.();
    stream.start();
    const stop = () => {
      this.openWatches.delete(end);
      stream.stop();
      watch.stop();
    };
    function end(): void {
      stop();
      listed.end();
    }
    if (!ended) this.openWatches.add(end);
    if (this.retired) queueMicrotask(end);
    return {
      stop,
      resume: () => watch.resume?.(),
      // A progress bookmark if the store moved past what this watch delivered; otherwise one at that.
      bookmark: () => {
        stream.heartbeat();
        this.reads.requestProgress();
      },
    };
  }

  /** What a storage event is to a watch with this selector: the object is tested before and after. */
  private describeEvent(ev: WatchEvent, match: ((obj: KObject) => boolean) | undefined): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: EncodedObject } | undefined {
    this.checkEvent(ev);
    const { cur, prev, deleted } = this.encodingsOf(ev);
    if (cur) {
      const curMatches = !match || match(cur.view());
      const prevMatches = prev !== undefined && (!match || match(prev.view()));
      if (curMatches) return { type: prevMatches ? 'MODIFIED' : 'ADDED', object: cur };
      if (prevMatches) return { type: 'DELETED', object: cur };
      return undefined;
    }
    if (deleted && (!match || match(deleted.view()))) return { type: 'DELETED', object: deleted };
    return undefined;
  }

  /**
   * A watch cannot report an event whose object it cannot read: as kube-apiserver's storage watch,
   * it ends with an ERROR event, StoreReadError for the deletion of a corrupt object (an unsafe
   * deletion) and InternalError for a corrupt value written.
   */
  private checkEvent(ev: WatchEvent): void {
    const cur = ev.type === 'put' && ev.value ? this.corruption({ key: ev.key, value: ev.value, createRevision: ev.createRevision, modRevision: ev.revision }) : undefined;
    if (cur) throw errors.internal(cur.detail);
    if (ev.type !== 'delete' || !ev.prevValue) return;
    const prev = this.corruption({ key: ev.key, value: ev.prevValue, createRevision: ev.createRevision, modRevision: ev.prevModRevision ?? 0 });
    if (prev) throw errors.storeReadDeleted(prev.detail);
  }

  // ---- create and update ----

  /** Where large writes are prepared off the event loop (the server's worker pool); absent: here. */
  offload: PreparationOffload | undefined;

  /** The kind's write preparation, inline; a worker holds its own, built from the same definition. */
  readonly prep: WritePreparation;

  private readonly subresources: ReadonlyMap<string, SubresourceDefinition>;

  /** The kind as a write job names it (computed once, not per write). */
  private readonly kindKey: string;

  /** Prepares a write in a worker when the offload takes it, else here. */
  private prepareWrite(job: PreparationJob, input: WriteInput, opts: WriteOptions): Promise<PreparedWrite> {
    const warn = opts.warn ?? (() => {});
    const inline = () => this.prep.prepare(job, input.mutate, this.subresources, warn, opts.describe);
    return this.offload?.prepare({ job, input, deadline: opts.deadline, warn, describe: opts.describe, answered: opts.answered, inline }) ?? inline();
  }

  private preparationJob(namespace: string | undefined, name: string | undefined, kv: KeyValue | undefined, opts: UpdateOptions): PreparationJob {
    return {
      kind: this.kindKey,
      namespace,
      name,
      stored: kv && { value: kv.value, revision: kv.modRevision },
      opts: { manager: opts.manager, applied: opts.applied, subresource: opts.subresource?.name, allowCreate: opts.allowCreate, uidFromInput: opts.uidFromInput },
    };
  }

  /**
   * Create an object: `input` is the object (taken as it is: a copy is stored) or a request's
   * input, prepared (named, defaulted, validated) inline or in a worker, then admitted and stored.
   */
  async create(namespace: string | undefined, input: KObject | WriteInput, opts: WriteOptions): Promise<Written> {
    const write = isWriteInput(input) ? input : { mutate: () => structuredClone(input) };
    for (let attempt = 0; ; attempt++) {
      const prepared = await this.prepareWrite(this.preparationJob(namespace, undefined, undefined, opts), write, opts);
      if (prepared.op !== 'create') throw new Error(`a create was prepared as ${prepared.op}`);
      try {
        return await this.commitCreate(prepared, opts);
      } catch (e) {
        if (!(e instanceof KeyExistsError)) throw e;
        const { name } = prepared.meta;
        if (!prepared.generated || attempt + 1 >= MAX_GENERATE_NAME_TRIES) {
          if (prepared.generated) throw errors.serverTimeout(this.qualified, 'POST');
          const held = await this.storageCall(() => this.writes.get(e.key));
          throw held ? this.nameTaken(held, name) : errors.alreadyExists(this.qualified, name);
        }
      }
    }
  }

  /** Admits and stores a prepared new object; a taken name is the storage's KeyExistsError. */
  private async commitCreate(prepared: PreparedWrite & { op: 'create' }, opts: WriteOptions): Promise<Written> {
    const { name, namespace } = prepared.meta;
    if (opts.user && this.def.guardWrite) await this.def.guardWrite({ user: opts.user, namespace, object: prepared.object ?? this.prep.decodeNew(prepared.bytes) });
    await this.admission.admitCreate(this, { name, namespace, object: () => prepared.object ?? this.prep.decodeNew(prepared.bytes), user: opts.user });
    const key = this.keyFor(namespace, name);
    let committed = false;
    const kv = await this.storageCall(() => this.writes.create(key, () => ((committed = true), prepared.bytes), opts.dryRun));
    if (this.json.load) await this.convertValues([prepared.bytes]);
    return this.written(prepared.bytes, committed ? kv.modRevision : 0, true, prepared.object);
  }

  /** AlreadyExists for a name held by `held`, saying when that object is being deleted. */
  private nameTaken(held: KeyValue, name: string): StatusError {
    let beingDeleted = false;
    try {
      beingDeleted = !!this.decode(held).metadata.deletionTimestamp;
    } catch {
      /* unreadable: the plain message */
    }
    return errors.alreadyExists(this.qualified, name, beingDeleted);
  }

  /**
   * Read, transform, validate and compare-and-swap until it sticks (GuaranteedUpdate). `input`
   * gets a copy of the stored object (undefined when absent) and returns the wanted object; a
   * `resourceVersion` it leaves on that object is a precondition.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    input: WriteInput | ((current: KObject | undefined) => KObject | Promise<KObject>),
    opts: UpdateOptions,
  ): Promise<Written> {
    const write: WriteInput = isWriteInput(input) ? input : { mutate: (current) => input(current?.copy()) };
    const key = this.keyFor(namespace, name);
    return this.oneAtATime(key, () => this.updateLoop(key, namespace, name, write, opts));
  }

  /**
   * Updates of one key from this process go one after another: each then reads what the one
   * before it wrote and its compare-and-swap holds the first time, where concurrent writers would
   * each prepare the object again after every lost race (16 patches of one object cost ~9
   * preparations each without this). Only an optimization: the compare-and-swap loop still
   * decides, for writers in other processes sharing the store and for a turn that waited longer
   * than `KEY_TURN_WAIT_MS` (a hung store must not add one timeout per queued writer).
   */
  private readonly keyTurns = new Map<string, Promise<void>>();
  private async oneAtATime<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.keyTurns.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const turn = before ? before.then(() => mine) : mine;
    this.keyTurns.set(key, turn);
    try {
      if (before) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([before, new Promise<void>((resolve) => (timer = setTimeout(resolve, KEY_TURN_WAIT_MS)))]);
        clearTimeout(timer);
      }
      return await fn();
    } finally {
      done();
      if (this.keyTurns.get(key) === turn) this.keyTurns.delete(key);
    }
  }

  private async updateLoop(key: string, namespace: string | undefined, name: string, write: WriteInput, opts: UpdateOptions): Promise<Written> {
    for (;;) {
      const kv = await this.storageCall(() => this.writes.get(key));
      if (kv) this.readable(kv);
      if (kv && this.json.load) await this.convertValues([kv.value]);
      const prepared = await this.prepareWrite(this.preparationJob(namespace, name, kv, opts), write, opts);
      if (prepared.op === 'create') {
        try {
          return await this.commitCreate(prepared, opts);
        } catch (e) {
          // Created by someone else since the read: update it instead.
          if (e instanceof KeyExistsError) continue;
          throw e;
        }
      }
      const stored = kv!;
      if (prepared.op === 'unchanged') return this.unchanged(stored);
      const { object } = prepared;
      if (opts.user && this.def.guardWrite && prepared.op !== 'delete')
        await this.def.guardWrite({ user: opts.user, namespace, object: object ?? this.prep.decodeNew(prepared.bytes), old: this.decode(stored) });
      await this.admission.admitUpdate(this, {
        name,
        namespace,
        object: () => object ?? this.prep.decodeNew(prepared.bytes),
        oldObject: () => this.decode(stored),
        user: opts.user,
      });
      try {
        if (prepared.op === 'delete') {
          await this.storageCall(() => this.writes.delete(key, stored.modRevision, opts.dryRun));
          return new Written(() => object ?? this.prep.decodeStored(prepared.bytes, stored.modRevision), undefined, false);
        }
        const written = await this.storageCall(() => this.writes.update(key, stored.modRevision, prepared.bytes, opts.dryRun));
        if (this.json.load) await this.convertValues([prepared.bytes]);
        return this.written(prepared.bytes, written.modRevision, false, object);
      } catch (e) {
        // Another write won the race: prepare again from what is stored now, as kube-apiserver's
        // GuaranteedUpdate does. A resourceVersion the request itself gave (a PUT's, or one a patch
        // sets) no longer matches, and that attempt refuses it with 409; a patch or apply that gave
        // none applies to the new object. Retries end with the request's deadline.
        if (e instanceof ConflictError || e instanceof KeyNotFoundError) {
          if (opts.deadline !== undefined && Date.now() >= opts.deadline) throw errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded');
          continue;
        }
        throw e;
      }
    }
  }

  // ---- delete ----

  async delete(namespace: string | undefined, name: string, opts: DeleteOptions): Promise<DeleteOutcome> {
    const key = this.keyFor(namespace, name);
    for (;;) {
      const kv = await this.storageCall(() => this.writes.get(key));
      if (!kv) throw errors.notFound(this.qualified, name);
      const corrupt = this.corruption(kv) ?? (opts.unsafeIgnoreReadError ? await this.unconvertible(kv) : undefined);
      if (opts.unsafeIgnoreReadError) {
        const removed = await this.unsafeDelete(kv, name, corrupt, opts.dryRun);
        if (removed) return removed;
        continue;
      }
      if (corrupt) throw this.corruptRead(corrupt);
      if (this.json.load) await this.convertValues([kv.value]);
      const obj = this.decode(kv);
      checkPreconditions(this.qualified, obj, opts.preconditions);
      await this.admission.admitDelete(this, obj, opts.user);
      const refused = obj.metadata.deletionTimestamp ? this.def.strategy.deleteConflict?.(obj) : undefined;
      if (refused) throw errors.conflict(this.qualified, name, refused);
      // Orphan and Foreground are carried out by the garbage collector, through a finalizer.
      // Kinds without garbage collection (Event) ignore the propagation policy and go at once.
      const gcFinalizer = this.def.garbageCollection === false ? undefined : propagationFinalizer(opts);
      const addFinalizer = gcFinalizer !== undefined && !obj.metadata.finalizers?.includes(gcFinalizer);
      if (addFinalizer) obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), gcFinalizer];
      const pending = !!obj.metadata.finalizers?.length || !!this.def.strategy.pendingFinalization?.(obj);
      if (pending) {
        if (obj.metadata.deletionTimestamp && !addFinalizer) return { kind: 'pending', object: obj };
        obj.metadata.deletionTimestamp ??= nowTimestamp();
        obj.metadata.deletionGracePeriodSeconds ??= 0;
        this.def.strategy.prepareForDelete?.(obj);
        try {
          // Converted to the storage version: asynchronously through a webhook.
          const bytes = await this.prep.encodeStored(obj);
          const written = await this.storageCall(() => this.writes.update(key, kv.modRevision, bytes, opts.dryRun));
          obj.metadata.resourceVersion = String(written.modRevision);
          return { kind: 'pending', object: obj };
        } catch (e) {
          if (e instanceof ConflictError || e instanceof KeyNotFoundError) continue;
          throw e;
        }
      }
      const status = successStatus({ name, group: this.def.group || undefined, kind: this.def.resource, uid: obj.metadata.uid });
      try {
        const res = await this.storageCall(() => this.writes.delete(key, kv.modRevision, opts.dryRun));
        obj.metadata.resourceVersion = String(res.revision);
        return { kind: 'deleted', status, object: obj };
      } catch (e) {
        if (e instanceof ConflictError) continue;
        if (e instanceof KeyNotFoundError) throw errors.notFound(this.qualified, name);
        throw e;
      }
    }
  }

  /**
   * A value whose conversion (a webhook's) fails cannot be read either: for an unsafe deletion it
   * is corrupt, as kube-apiserver's decoder reports a conversion error with the gate on.
   */
  private async unconvertible(kv: KeyValue): Promise<CorruptObjectError | undefined> {
    if (!this.json.load) return undefined;
    try {
      await this.convertValues([kv.value]);
      return undefined;
    } catch (e) {
      if (!(e instanceof StatusError)) throw e;
      return new CorruptObjectError(kv.key, 'undecodable', kv.modRevision, e.message);
    }
  }

  /**
   * The unsafe deletion of a corrupt object: its key is removed as stored, without preconditions,
   * finalizers, graceful deletion or admission. An object that reads normally is refused
   * (docs/rulings.md#r7: 400). Undefined: the key changed meanwhile, read it again.
   */
  private async unsafeDelete(kv: KeyValue, name: string, corrupt: CorruptObjectError | undefined, dryRun: boolean): Promise<DeleteOutcome | undefined> {
    if (!corrupt)
      throw errors.badRequest(`StorageError: invalid object, Code: 4, Key: ${kv.key}, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`);
    try {
      await this.storageCall(() => this.writes.delete(kv.key, kv.modRevision, dryRun));
    } catch (e) {
      if (e instanceof ConflictError) return undefined;
      if (e instanceof KeyNotFoundError) throw errors.notFound(this.qualified, name);
      throw e;
    }
    // kube-apiserver's answer when its deleter returns no object: the name and the kind.
    return { kind: 'removed', status: successStatus({ name, kind: this.def.kind }) };
  }

  /** Delete every object the list options select, through the normal delete path. */
  /**
   * Delete what the list options select, as kube-apiserver lists them (a `limit` and `continue`
   * name one page, and a malformed token is a 400). Preconditions hold for every item: one that
   * fails any of them is a 409 before anything is deleted, and each deletion checks them again.
   */
  async deleteCollection(namespace: string | undefined, listOpts: ListOptions, opts: DeleteOptions): Promise<number> {
    const list = await this.list(namespace, listOpts);
    for (const item of list.items) checkPreconditions(this.qualified, item, opts.preconditions);
    // Every object listed reads normally (a corrupt one fails the list): the unsafe option has
    // nothing to do here, as with kube-apiserver, and each goes through the normal deletion.
    opts = { ...opts, unsafeIgnoreReadError: undefined };
    let deleted = 0;
    for (const item of list.items) {
      try {
        await this.delete(item.metadata.namespace, item.metadata.name!, opts);
        deleted++;
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) continue;
        throw e;
      }
    }
    return deleted;
  }
}

