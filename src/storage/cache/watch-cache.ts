// The watch cache: the current objects under one prefix in memory (a B+ tree in key order) plus a
// ring of recent events, kept in step with the backend by one backend watch. It implements
// `Storage`, so callers use it like a backend: writes pass through; consistent reads wait until the
// cache has seen the backend's current revision (KEP-2340 style, with progress requests while
// waiting) and are then served from memory; reads at older revisions go to the backend, which
// keeps exact history; watches are served from the ring and fanned out here, so the backend
// carries one watch per cache however many clients watch.
import BTreeModule from 'sorted-btree';
import type {
  BackendHealth,
  DeleteResult,
  GetOptions,
  KeyValue,
  ListOptions,
  ListResult,
  Storage,
  Watch,
  WatchEvent,
  WatchHandler,
} from '../interface.ts';
import { prefixEnd } from '../interface.ts';
import { CompactedError, UnavailableError } from '../errors.ts';
import { CacheWatchers } from './cache-watchers.ts';
import { EventRing } from './event-ring.ts';

// sorted-btree is CommonJS: under Node's ESM interop its class is the module's `default` property.
const BTree = BTreeModule.default;
type Tree = InstanceType<typeof BTree<string, KeyValue>>;

export interface WatchCacheOptions {
  /** The keys this cache holds; reads and watches outside it go straight to the backend. */
  prefix: string;
  /** Events younger than this stay in the ring (default 75 s). */
  retentionMs?: number;
  /**
   * The ring never holds more events than this (default 10 000: 75 s of 1 000 nodes renewing their
   * Leases every 10 s, in about 15 MB; a faster write storm shortens the window and resumes older
   * than it get 410, as with Kubernetes' bounded cache).
   */
  maxEvents?: number;
  /**
   * The ring never keeps values of more than this many bytes alive (default 64 MiB): with large
   * objects the window is shortened rather than memory grown.
   */
  maxEventBytes?: number;
  /** Events a watcher may have queued while its consumer is backed up (default 1000). */
  watcherBufferSize?: number;
  /** Bytes of values a watcher may have queued while its consumer is backed up (default 32 MiB). */
  watcherBufferBytes?: number;
  /** How often watchers get a progress notification (default 5 s; 0 turns it off). */
  progressIntervalMs?: number;
  /** How long a consistent read waits for the cache before reading the backend (default 3 s). */
  freshnessTimeoutMs?: number;
  /** Items per page while loading the initial state. */
  loadPageSize?: number;
  /**
   * Serve consistent reads from memory once the cache has caught up (default: when the backend's
   * progress notifications are ordered, see Storage.watchProgressOrdered); otherwise they go to
   * the backend, as kube-apiserver does with etcd older than 3.4.31.
   */
  consistentReadsFromCache?: boolean;
}

export async function openWatchCache(backend: Storage, opts: WatchCacheOptions): Promise<WatchCache> {
  const consistentReadsFromCache = opts.consistentReadsFromCache ?? (await backend.watchProgressOrdered());
  const cache = new WatchCache(backend, { ...opts, consistentReadsFromCache });
  await cache.ready;
  return cache;
}

export class WatchCache implements Storage {
  private readonly backend: Storage;
  readonly prefix: string;
  private readonly end: string;
  private tree: Tree = new BTree<string, KeyValue>();
  private readonly ring: EventRing;
  private readonly watchers: CacheWatchers;
  /** The cache reflects every backend write up to this revision. */
  private rev = 0;
  /** The newest revision a write through this cache was acknowledged at. */
  private written = 0;
  private backendWatch?: Watch;
  private waiters: { rev: number; resolve: () => void }[] = [];
  private waitTimer?: NodeJS.Timeout;
  private progressTimer?: NodeJS.Timeout;
  private readonly freshnessTimeoutMs: number;
  private readonly loadPageSize: number;
  private readonly consistentReadsFromCache: boolean;
  private closed = false;
  readonly ready: Promise<void>;

  constructor(
    backend: Storage,
    opts: WatchCacheOptions,
  ) {
    this.backend = backend;
    this.prefix = opts.prefix;
    this.end = prefixEnd(opts.prefix);
    this.ring = new EventRing(opts.retentionMs ?? 75_000, opts.maxEvents ?? 10_000, opts.maxEventBytes ?? 64 * 1024 * 1024);
    this.watchers = new CacheWatchers(opts.watcherBufferSize ?? 1000, opts.watcherBufferBytes ?? 32 * 1024 * 1024);
    this.freshnessTimeoutMs = opts.freshnessTimeoutMs ?? 3000;
    this.loadPageSize = opts.loadPageSize ?? 10_000;
    this.consistentReadsFromCache = opts.consistentReadsFromCache ?? true;
    this.ready = this.load();
    const progressMs = opts.progressIntervalMs ?? 5000;
    if (progressMs > 0) {
      this.progressTimer = setInterval(() => this.requestProgress(), progressMs);
      this.progressTimer.unref();
    }
  }

  /** List everything at one revision (page by page), then watch from exactly that revision. */
  private async load(): Promise<void> {
    const tree = new BTree<string, KeyValue>();
    let page = await this.backend.list(this.prefix, { limit: this.loadPageSize });
    const at = page.revision;
    for (;;) {
      for (const kv of page.items) tree.set(kv.key, kv);
      if (!page.more) break;
      const last = page.items[page.items.length - 1].key;
      page = await this.backend.list(this.prefix, { atRevision: at, limit: this.loadPageSize, startKey: last + '\0' });
    }
    if (this.closed) return;
    this.childCounts = new Map();
    tree.forEach((_v, k) => this.countChild(k, 1));
    this.tree = tree;
    this.rev = at;
    this.ring.reset(at);
    this.backendWatch = this.backend.watch(this.prefix, at, {
      events: (events) => this.apply(events),
      progress: (rev) => this.advance(rev),
      error: (err) => this.onBackendError(err),
    });
  }

  private apply(events: WatchEvent[]): void {
    const now = Date.now();
    for (let i = 0; i < events.length; i++) {
      let e = events[i];
      // The previous value is the one the cache already holds: keep that buffer and let the
      // backend's copy go, so each value lives once in memory however many events refer to it.
      const prev = this.tree.get(e.key);
      if (prev && e.prevModRevision === prev.modRevision && e.prevValue !== prev.value) {
        e = events[i] = { ...e, prevValue: prev.value };
      }
      if (e.type === 'put') {
        if (!prev) this.countChild(e.key, 1);
        this.tree.set(e.key, { key: e.key, value: e.value!, createRevision: e.createRevision, modRevision: e.revision });
      } else if (this.tree.delete(e.key)) {
        this.countChild(e.key, -1);
      }
      this.ring.push(e, now);
    }
    const rev = events[events.length - 1].revision;
    this.rev = rev;
    this.watchers.dispatch(events, rev);
    this.wake();
  }

  /**
   * Keys per first path segment below the prefix (a namespace, for namespaced resources), so the
   * first page of a list knows how many items remain without walking them.
   */
  private childCounts = new Map<string, number>();

  private childPrefix(key: string): string | undefined {
    const slash = key.indexOf('/', this.prefix.length);
    return slash < 0 ? undefined : key.slice(0, slash + 1);
  }

  private countChild(key: string, delta: number): void {
    const child = this.childPrefix(key);
    if (child === undefined) return;
    const n = (this.childCounts.get(child) ?? 0) + delta;
    if (n > 0) this.childCounts.set(child, n);
    else this.childCounts.delete(child);
  }

  /** How many keys lie under `prefix`, when known without a walk. */
  private countUnder(prefix: string): number | undefined {
    if (prefix === this.prefix) return this.tree.size;
    if (prefix.startsWith(this.prefix) && prefix.endsWith('/') && this.childPrefix(prefix) === prefix) return this.childCounts.get(prefix) ?? 0;
    return undefined;
  }

  private advance(rev: number): void {
    if (rev <= this.rev) return;
    this.rev = rev;
    this.wake();
  }

  /**
   * The backend watch broke (compaction, an outage longer than the backend rides out): every
   * watcher must start over, and the cache loads again. Until it has, it covers nothing, so reads
   * and watches go to the backend and fail or succeed there instead of waiting here.
   */
  private onBackendError(err: Error): void {
    if (this.closed) return;
    this.backendWatch = undefined;
    const at = this.rev;
    this.watchers.failAll((next) => (err instanceof CompactedError ? new CompactedError(next, at) : err));
    void this.reload();
  }

  /** Load until it works, backing off: an outage must not leave the cache bypassed for good. */
  private async reload(): Promise<void> {
    for (let delay = 100; !this.closed; delay = Math.min(delay * 2, 5000)) {
      try {
        await this.load();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, delay).unref());
      }
    }
  }

  // ---- freshness ----

  private wake(): void {
    if (!this.waiters.length) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) (w.rev <= this.rev ? w.resolve() : still.push(w));
    this.waiters = still;
    this.stopAskingWhenNoneWait();
  }

  /** The progress requests run only while someone waits. */
  private stopAskingWhenNoneWait(): void {
    if (!this.waiters.length && this.waitTimer) {
      clearInterval(this.waitTimer);
      this.waitTimer = undefined;
    }
  }

  /** Resolve true once the cache has reached `rev`, false if it did not within the timeout. */
  private waitFor(rev: number): Promise<boolean> {
    if (rev <= this.rev) return Promise.resolve(true);
    // A closed cache follows nothing any more (a read that raced its close reads the backend).
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timeout = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.stopAskingWhenNoneWait();
        resolve(false);
      }, this.freshnessTimeoutMs);
      const waiter = {
        rev,
        resolve: () => {
          clearTimeout(timeout);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
      // The backend reports progress only when asked: ask now and every 100 ms while anyone waits.
      this.backend.requestProgress();
      // (Each waiter's own timeout keeps the process up while it waits: the requests need not.)
      this.waitTimer ??= setInterval(() => this.backend.requestProgress(), 100).unref();
    });
  }

  /** Whether a read of `prefix` can be served from memory at the cache's current revision. */
  private covers(prefix: string): boolean {
    return prefix >= this.prefix && prefixEnd(prefix) <= this.end && this.backendWatch !== undefined;
  }

  /** Wait until the cache reflects the backend's current revision; false means read the backend. */
  private async fresh(): Promise<boolean> {
    if (!this.consistentReadsFromCache) return false;
    await this.ready;
    return this.waitFor(await this.backend.currentRevision());
  }

  // ---- reads ----

  async get(key: string, opts: GetOptions = {}): Promise<KeyValue | undefined> {
    if (!this.covers(key) || opts.atRevision) return this.backend.get(key, opts);
    if (!(await this.fresh())) return this.backend.get(key, opts);
    return this.tree.get(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    await this.ready;
    if (!this.covers(prefix)) return this.backend.list(prefix, opts);
    if (opts.atRevision) {
      // A newer revision than the cache has: wait for it. An older one: the backend keeps history.
      if (opts.atRevision > this.rev && !(await this.waitFor(opts.atRevision))) return this.backend.list(prefix, opts);
      if (opts.atRevision !== this.rev) return this.backend.list(prefix, opts);
      return this.listCached(prefix, opts);
    }
    if (!(await this.fresh())) return this.backend.list(prefix, opts);
    return this.listCached(prefix, opts);
  }

  /**
   * Serve a list from memory at the cache's revision with no freshness wait: for reads that accept
   * cached data (resourceVersion "0" / NotOlderThan). Synchronous, so it is one consistent snapshot.
   */
  listCached(prefix: string, opts: Omit<ListOptions, 'atRevision'> = {}): ListResult {
    const end = prefixEnd(prefix);
    const start = opts.startKey && opts.startKey > prefix ? opts.startKey : prefix;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const items: KeyValue[] = [];
    let remaining = 0;
    const total = start === prefix ? this.countUnder(prefix) : undefined;
    if (total !== undefined) {
      // First page with a known count: walk only the page.
      if (limit > 0 && start < end) {
        this.tree.forRange(start, end, false, (_k, kv) => {
          items.push(kv);
          return items.length >= limit ? { break: true } : undefined;
        });
      }
      remaining = total - items.length;
    } else if (start < end) {
      this.tree.forRange(start, end, false, (_k, kv) => {
        if (items.length < limit) {
          items.push(kv);
          return;
        }
        remaining++;
      });
    }
    return { items, revision: this.rev, more: remaining > 0, remaining };
  }

  /**
   * Wait until the cache has reached `rev` (for resourceVersion "not older than" reads); false
   * when it did not within the freshness timeout: the revision is unknown to the store.
   */
  async waitForRevision(rev: number): Promise<boolean> {
    await this.ready;
    return this.waitFor(rev);
  }

  /** One key from memory with no freshness wait (resourceVersion "0" / not-older-than gets). */
  getCached(key: string): KeyValue | undefined {
    return this.covers(key) ? this.tree.get(key) : undefined;
  }

  /** The cache's revision: what a cached read reflects. */
  get revision(): number {
    return this.rev;
  }

  // ---- watch ----

  watch(prefix: string, afterRevision: number, handler: WatchHandler): Watch {
    if (this.closed) {
      queueMicrotask(() => handler.error(new UnavailableError('watch cache is closed')));
      return { stop() {} };
    }
    if (!this.covers(prefix)) return this.backend.watch(prefix, afterRevision, handler);
    // "From now" includes every write this cache has acknowledged, even one it has not yet seen
    // come back from the backend: a caller that wrote and then watched must not see its own write.
    const after = afterRevision > 0 ? afterRevision : Math.max(this.rev, this.written);
    if (after < this.ring.windowStart) {
      queueMicrotask(() => handler.error(new CompactedError(after, this.ring.windowStart)));
      return { stop() {} };
    }
    return this.watchers.add(prefix, after, handler, this.ring.since(after));
  }

  requestProgress(): void {
    this.backend.requestProgress();
    this.watchers.progress(this.rev);
  }

  /** How many clients watch through this cache. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** How many objects the cache holds now (every key under its prefix). */
  get objectCount(): number {
    return this.tree.size;
  }

  // ---- pass-through ----

  private wrote<T>(result: T, rev: number): T {
    if (rev > this.written) this.written = rev;
    return result;
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const kv = await this.backend.create(key, value);
    return this.wrote(kv, kv.modRevision);
  }

  async update(key: string, expectedModRevision: number, value: Uint8Array): Promise<KeyValue> {
    const kv = await this.backend.update(key, expectedModRevision, value);
    return this.wrote(kv, kv.modRevision);
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const res = await this.backend.delete(key, expectedModRevision);
    return this.wrote(res, res.revision);
  }

  compact(revision: number): Promise<void> {
    return this.backend.compact(revision);
  }

  currentRevision(): Promise<number> {
    return this.backend.currentRevision();
  }

  compactedRevision(): Promise<number> {
    return this.backend.compactedRevision();
  }

  watchProgressOrdered(): Promise<boolean> {
    return this.backend.watchProgressOrdered();
  }

  health(): Promise<BackendHealth> {
    return this.backend.health();
  }

  /** Stops the cache (not the backend, which its owner closes). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.backendWatch?.stop();
    if (this.progressTimer) clearInterval(this.progressTimer);
    if (this.waitTimer) clearInterval(this.waitTimer);
    this.watchers.failAll(() => new UnavailableError('watch cache is closed'));
  }
}

