// The storage interface every backend implements, modelled on etcd v3's key-value API.
//
// Keys are strings of the form `/registry/<group>/<resource>/[<namespace>/]<name>`; values are opaque
// bytes. There is one store-wide revision that increases by exactly one per committed write; each
// key remembers the revision that created it and the one that last modified it. The API layer
// turns `modRevision` into `metadata.resourceVersion`.

/** One key as stored at some revision. */
export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** Revision of the write that created this incarnation of the key. */
  createRevision: number;
  /** Revision of the write that produced this value. */
  modRevision: number;
}

export interface ListOptions {
  /** Read the state as of this revision (0 or absent: the current revision). */
  atRevision?: number;
  /** At most this many items (0 or absent: no limit). */
  limit?: number;
  /** First key to include (inclusive); must lie inside the prefix. Continue tokens carry it. */
  startKey?: string;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at: every item is as of this revision. */
  revision: number;
  /** True when keys after the last returned item remain in the range. */
  more: boolean;
  /** How many keys remain after the last returned item (0 when `more` is false). */
  remaining: number;
}

export interface GetOptions {
  /** Read the key as of this revision (0 or absent: the current revision). */
  atRevision?: number;
}

export interface WatchEvent {
  type: 'put' | 'delete';
  key: string;
  /** The revision of the write. */
  revision: number;
  /** The new value (put) — absent for delete. */
  value?: Uint8Array;
  /** createRevision of the key after a put; of the deleted incarnation for a delete. */
  createRevision: number;
  /** The value before this write, when the key existed. */
  prevValue?: Uint8Array;
  /** modRevision of the previous value, when the key existed. */
  prevModRevision?: number;
}

/** Receives the events of one watch, in revision order, each exactly once. */
export interface WatchHandler {
  /**
   * A batch of events; revisions strictly increase across all calls. Returning `false` says the
   * consumer is backed up: the source then queues (boundedly) until `Watch.resume()` is called.
   */
  events(events: WatchEvent[]): void | boolean;
  /** Every event with revision ≤ `revision` under the prefix has been delivered. */
  progress?(revision: number): void;
  /** The watch ended with an error (e.g. CompactedError, WatcherTooSlowError); no more calls follow. */
  error(err: Error): void;
}

export interface Watch {
  /** Stop delivering events; idempotent. */
  stop(): void;
  /** The consumer has room again after `events` returned false (sources without queues ignore it). */
  resume?(): void;
}

export interface DeleteResult {
  /** The deleted key as it was just before the delete. */
  prev: KeyValue;
  /** The revision of the delete. */
  revision: number;
}

export interface BackendHealth {
  healthy: boolean;
  message: string;
}

export interface Storage {
  /** Create `key`; throws KeyExistsError when it is present. Resolves once durable. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;
  /** The key's value, or undefined. Throws CompactedError for a compacted revision. */
  get(key: string, opts?: GetOptions): Promise<KeyValue | undefined>;
  /** Keys under `prefix` in key order, one consistent snapshot. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /**
   * Compare-and-swap: replace the value only if the key's modRevision still equals
   * `expectedModRevision`. Throws ConflictError (carrying the current value) or KeyNotFoundError.
   */
  update(key: string, expectedModRevision: number, value: Uint8Array): Promise<KeyValue>;
  /** Delete, optionally only if the modRevision matches. Throws KeyNotFoundError or ConflictError. */
  delete(key: string, expectedModRevision?: number): Promise<DeleteResult>;
  /**
   * Watch every key under `prefix` for writes with revision > `afterRevision` (0: from now).
   * Throws (through handler.error) CompactedError when that history is gone.
   */
  watch(prefix: string, afterRevision: number, handler: WatchHandler): Watch;
  /** Discard history older than `revision`: reads at older revisions fail with CompactedError. */
  compact(revision: number): Promise<void>;
  /**
   * Ask every watch to report progress: each live watch soon receives handler.progress(rev) with
   * the store's revision (etcd's WatchProgressRequest). Used for bookmarks and consistent reads.
   */
  requestProgress(): void;
  /**
   * Whether a progress notification is only sent after every event it covers (etcd ≥ 3.4.31 /
   * 3.5.13). Only then may a cache treat progress as proof that it is up to date.
   */
  watchProgressOrdered(): Promise<boolean>;
  /** The store's current revision (a consistent read: it includes every acknowledged write). */
  currentRevision(): Promise<number>;
  /** The oldest revision whose state is still readable. */
  compactedRevision(): Promise<number>;
  /** Whether the backend is reachable and working, for health checks and ComponentStatus. */
  health(): Promise<BackendHealth>;
  close(): Promise<void>;
}

/** The smallest string greater than every key that starts with `prefix` (etcd's range end). */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '\uffff';
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/** The bytes an event keeps alive: its value and its previous value (for byte bounds on queues). */
export function eventBytes(e: WatchEvent): number {
  return (e.value?.length ?? 0) + (e.prevValue?.length ?? 0);
}
