// The embedded backend: an MVCC key-value store on LMDB.
//
// Layout (four named databases in one LMDB environment):
//   log      rev → LogEntry            every write with its value, in revision order (append-only,
//                                      so its pages stay full); a delete is a tombstone entry
//   index    [key, rev] → 0 | 1        which revisions of a key the log holds (1: a tombstone)
//   current  key → Pointer             the live keys only, with their create and mod revisions
//   meta     'revision' | 'compacted'  the store-wide revision and the oldest readable revision
// Compaction removes the log entries (and their index rows) that no read at or after the compact
// revision can need; everything else stays exact.
//
// Writes run as lmdb-js asynchronous transactions: the callbacks of every write issued in one event
// turn run in one LMDB write transaction (group commit: one disk sync for all of them), on the
// main thread but only for the few microseconds of the callback; the commit and the sync happen on
// lmdb-js's writer thread, so the event loop never waits for the disk. A write is acknowledged
// (its promise resolves, its watch event is published) only after its transaction is committed
// with a synchronous flush, so an acknowledged write survives a crash.
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { mkdirSync } from 'node:fs';
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
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  UnavailableError,
} from '../errors.ts';
import { LocalWatchers } from './local-watchers.ts';
import { commitFailure, ignoreCommitFailure } from './commit-failure.ts';
import { HistorySizes } from './history-sizes.ts';

/** Where the live value of a key is: its create and mod revisions. */
interface Pointer {
  c: number;
  m: number;
}

/**
 * What happened at one revision: key `k` got value `v` (or was deleted: `d`); `c` is its create
 * revision, `p` the revision of its previous value (0: none).
 */
interface LogEntry {
  k: string;
  v?: Uint8Array;
  c: number;
  p: number;
  d?: 1;
  /** Wall-clock time of the write (ms), for time-based retention. */
  t: number;
}

type IndexKey = [string, number];

interface LmdbStorageOptions {
  /** Directory of the LMDB environment (created if missing). */
  path: string;
  /** History younger than this is kept for reads at old revisions and watch resumes. Default 5 min. */
  retentionMs?: number;
  /** How often automatic compaction runs. Default: a tenth of the retention, between 1 s and 30 s. */
  compactionIntervalMs?: number;
  /** Most log entries removed in one compaction transaction, so no transaction runs long. */
  compactionBatch?: number;
  /**
   * History is also kept to at most about this many bytes of values (default 128 MiB): repeated
   * writes of large objects shorten the window instead of growing the disk. Compaction frees the
   * pages, and LMDB reuses freed pages, so the data file stops growing.
   */
  maxHistoryBytes?: number;
  /**
   * Whether a commit is synced to disk before its write is acknowledged (default true). A
   * throw-away store, removed when it closes and never opened again, has nothing to keep across a
   * crash: it skips the sync, which costs each of the writes a start makes one after the other a
   * disk flush.
   */
  durable?: boolean;
}

const META_REVISION = 'revision';
/**
 * Revisions only grow: appending keeps log pages full. Inside a transaction callback putSync writes
 * into that (asynchronously committed) transaction; it is the put that takes LMDB's flags.
 */
const APPEND = { append: true };
const META_COMPACTED = 'compacted';

export async function openLmdbStorage(opts: LmdbStorageOptions): Promise<LmdbStorage> {
  mkdirSync(opts.path, { recursive: true });
  return new LmdbStorage(opts);
}

export class LmdbStorage implements Storage {
  private readonly env: RootDatabase;
  private readonly log: Database<LogEntry, number>;
  private readonly index: Database<0 | 1, IndexKey>;
  private readonly current: Database<Pointer, string>;
  private readonly meta: Database<number, string>;
  /** The last revision assigned to a write (inside a transaction callback). */
  private assigned: number;
  /** The last revision whose write is durable and whose event has been published. */
  private published: number;
  private compacted: number;
  /** Events assigned but not yet durable, in revision order. */
  private unpublished: WatchEvent[] = [];
  private readonly watchers: LocalWatchers;
  private readonly retentionMs: number;
  private readonly compactionBatch: number;
  private readonly maxHistoryBytes: number;
  /** Revisions written by this process after the compacted one, with their value sizes. */
  private readonly history = new HistorySizes();
  private compactionTimer?: NodeJS.Timeout;
  private readonly path: string;
  private compacting?: Promise<void>;
  private closed = false;

  constructor(opts: LmdbStorageOptions) {
    this.path = opts.path;
    this.env = open({
      path: opts.path,
      // A directory whatever its name: lmdb-js reads a path with a dot in its last segment as a file.
      noSubdir: false,
      // Commits are synced before their promise resolves: acknowledged means durable.
      overlappingSync: false,
      noSync: opts.durable === false,
      // Large enough for any realistic store; LMDB grows the map lazily on disk.
      mapSize: 64 * 1024 ** 3,
    });
    this.log = this.env.openDB<LogEntry, number>({ name: 'log' });
    this.index = this.env.openDB<0 | 1, IndexKey>({ name: 'index' });
    this.current = this.env.openDB<Pointer, string>({ name: 'current' });
    this.meta = this.env.openDB<number, string>({ name: 'meta' });
    // A fresh store starts at revision 1, as etcd does; the first write gets revision 2.
    this.assigned = this.meta.get(META_REVISION) ?? 1;
    this.published = this.assigned;
    this.compacted = this.meta.get(META_COMPACTED) ?? 0;
    this.watchers = new LocalWatchers((after, upTo, prefix, max) => this.replay(after, upTo, prefix, max));
    this.retentionMs = opts.retentionMs ?? 5 * 60_000;
    this.compactionBatch = opts.compactionBatch ?? 2000;
    this.maxHistoryBytes = opts.maxHistoryBytes ?? 128 * 1024 * 1024;
    const interval = opts.compactionIntervalMs ?? Math.min(30_000, Math.max(1000, this.retentionMs / 10));
    if (interval > 0) {
      this.compactionTimer = setInterval(() => void this.compactExpired().catch(() => {}), interval);
      this.compactionTimer.unref();
    }
  }

  // ---- writes ----

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const kv = await this.write((now) => {
      if (this.current.get(key)) throw new KeyExistsError(key);
      const rev = this.put(key, value, 0, undefined, now);
      return { key, value, createRevision: rev, modRevision: rev };
    });
    return kv;
  }

  async update(key: string, expectedModRevision: number, value: Uint8Array): Promise<KeyValue> {
    return this.write((now) => {
      const ptr = this.current.get(key);
      if (!ptr) throw new KeyNotFoundError(key);
      if (ptr.m !== expectedModRevision) {
        throw new ConflictError(key, expectedModRevision, this.keyValue(key, ptr.m, this.log.get(ptr.m)!));
      }
      const rev = this.put(key, value, ptr.c, ptr.m, now);
      return { key, value, createRevision: ptr.c, modRevision: rev };
    });
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    return this.write((now) => {
      const ptr = this.current.get(key);
      if (!ptr) throw new KeyNotFoundError(key);
      const prev = this.keyValue(key, ptr.m, this.log.get(ptr.m)!);
      if (expectedModRevision !== undefined && ptr.m !== expectedModRevision) {
        throw new ConflictError(key, expectedModRevision, prev);
      }
      const rev = ++this.assigned;
      this.log.putSync(rev, { k: key, c: ptr.c, p: ptr.m, d: 1, t: now }, APPEND);
      this.index.put([key, rev], 1);
      this.current.remove(key);
      this.meta.put(META_REVISION, rev);
      this.unpublished.push({
        type: 'delete',
        key,
        revision: rev,
        createRevision: ptr.c,
        prevValue: prev.value,
        prevModRevision: ptr.m,
      });
      return { prev, revision: rev };
    });
  }

  /** Record a put inside a write transaction; returns its revision. */
  private put(key: string, value: Uint8Array, createRev: number, prevRev: number | undefined, now: number): number {
    const rev = ++this.assigned;
    const c = createRev || rev;
    this.log.putSync(rev, { k: key, v: value, c, p: prevRev ?? 0, t: now }, APPEND);
    this.index.put([key, rev], 0);
    this.current.put(key, { c, m: rev });
    this.meta.put(META_REVISION, rev);
    const prevValue = prevRev ? this.log.get(prevRev)?.v : undefined;
    this.unpublished.push({
      type: 'put',
      key,
      revision: rev,
      value,
      createRevision: c,
      prevValue,
      prevModRevision: prevRev,
    });
    return rev;
  }

  /**
   * Run `fn` inside the next batched write transaction, then wait until it is durable and publish
   * the events up to it. A throw inside `fn` writes nothing (it happens before any put).
   */
  private async write<T>(fn: (now: number) => T): Promise<T> {
    if (this.closed) throw new UnavailableError('storage is closed');
    let failure: unknown;
    let lastRev = 0;
    let result: T | undefined;
    let mine: WatchEvent[] = [];
    try {
      result = await this.env.transaction(() => {
        ignoreCommitFailure(this.env);
        // The revision comes from the transaction itself, not from memory: after a failed commit
        // the revisions it had taken are free again, and the next transaction must reuse them.
        this.assigned = this.meta.get(META_REVISION) ?? 1;
        // Events above it belong to a transaction that failed (its rejection may still be on its way).
        if (this.unpublished.length && this.unpublished[this.unpublished.length - 1].revision > this.assigned) {
          this.unpublished = this.unpublished.filter((e) => e.revision <= this.assigned);
        }
        const before = this.unpublished.length;
        try {
          const r = fn(Date.now());
          lastRev = this.assigned;
          return r;
        } catch (err) {
          failure = err;
          return undefined;
        } finally {
          mine = this.unpublished.slice(before);
        }
      });
    } catch (err) {
      // Nothing of this transaction reached the disk: forget its events and report why. The store
      // stays open, so reads and watches go on and writes work again once space is freed.
      if (mine.length) {
        const dropped = new Set(mine);
        this.unpublished = this.unpublished.filter((e) => !dropped.has(e));
      }
      throw await commitFailure(err, this.path);
    }
    if (failure !== undefined) throw failure;
    this.publishUpTo(lastRev);
    return result as T;
  }

  private publishUpTo(rev: number): void {
    if (rev <= this.published) return;
    let n = 0;
    while (n < this.unpublished.length && this.unpublished[n].revision <= rev) n++;
    // Events of a failed transaction whose revisions a later one reused are never published.
    const batch = this.unpublished.splice(0, n).filter((e) => e.revision > this.published);
    this.published = rev;
    for (const e of batch) this.history.push(e.revision, (e.value?.length ?? 0) + e.key.length);
    this.watchers.publish(batch, rev);
    this.compactOversized();
  }

  // ---- reads ----

  async get(key: string, opts: GetOptions = {}): Promise<KeyValue | undefined> {
    return this.withSnapshot((txn, rev) => {
      const at = this.readRevision(opts.atRevision, rev);
      const found = this.revisionAt(key, at, txn);
      return found ? this.keyValue(key, found, this.log.get(found, { transaction: txn })!) : undefined;
    });
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    return this.withSnapshot((txn, rev) => {
      const at = this.readRevision(opts.atRevision, rev);
      const start = opts.startKey && opts.startKey > prefix ? opts.startKey : prefix;
      const end = prefixEnd(prefix);
      const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
      return at === rev ? this.listCurrent(start, end, limit, txn, rev) : this.listAt(start, end, limit, at, txn);
    });
  }

  /** The latest state: walk the live keys only, so a page costs the same however large the store. */
  private listCurrent(start: string, end: string, limit: number, txn: Transaction, rev: number): ListResult {
    const items: KeyValue[] = [];
    let lastKey: string | undefined;
    for (const { key, value } of this.current.getRange({ start, end, transaction: txn, limit: limit === Infinity ? undefined : limit })) {
      items.push(this.keyValue(key, value.m, this.log.get(value.m, { transaction: txn })!));
      lastKey = key;
    }
    let remaining = 0;
    if (items.length === limit && lastKey !== undefined) {
      remaining = this.current.getKeysCount({ start: lastKey, end, exclusiveStart: true, transaction: txn });
    }
    return { items, revision: rev, more: remaining > 0, remaining };
  }

  /** An older revision: walk the index, taking for each key its newest revision at or before `at`. */
  private listAt(start: string, end: string, limit: number, at: number, txn: Transaction): ListResult {
    const items: KeyValue[] = [];
    let remaining = 0;
    let key: string | undefined;
    let best = 0;
    let deleted = false;
    const flush = () => {
      if (key === undefined || !best || deleted) return;
      if (items.length < limit) items.push(this.keyValue(key, best, this.log.get(best, { transaction: txn })!));
      else remaining++;
    };
    for (const { key: ik, value: tombstone } of this.index.getRange({ start: [start], end: [end], transaction: txn })) {
      if (ik[0] !== key) {
        flush();
        key = ik[0];
        best = 0;
      }
      if (ik[1] <= at) {
        best = ik[1];
        deleted = tombstone === 1;
      }
    }
    flush();
    return { items, revision: at, more: remaining > 0, remaining };
  }

  /** The revision of the live value of `key` at `at` (0: absent or deleted then). */
  private revisionAt(key: string, at: number, txn: Transaction): number {
    for (const { key: ik, value: tombstone } of this.index.getRange({ start: [key, at], end: [key], reverse: true, limit: 1, transaction: txn })) {
      return tombstone === 1 ? 0 : ik[1];
    }
    return 0;
  }

  private readRevision(requested: number | undefined, rev: number): number {
    if (!requested) return rev;
    if (requested > rev) throw new FutureRevisionError(requested, rev);
    if (requested < this.compacted) throw new CompactedError(requested, this.compacted);
    return requested;
  }

  /** Run a read against one LMDB snapshot together with the revision that snapshot holds. */
  private withSnapshot<T>(fn: (txn: Transaction, rev: number) => T): T {
    if (this.closed) throw new UnavailableError('storage is closed');
    const txn = this.env.useReadTransaction();
    try {
      const rev = this.meta.get(META_REVISION, { transaction: txn }) ?? 1;
      return fn(txn, rev);
    } finally {
      txn.done();
    }
  }

  private keyValue(key: string, rev: number, e: LogEntry): KeyValue {
    return { key, value: e.v ?? new Uint8Array(0), createRevision: e.c, modRevision: rev };
  }

  async currentRevision(): Promise<number> {
    return this.published;
  }

  async compactedRevision(): Promise<number> {
    return this.compacted;
  }

  // ---- watch ----

  watch(prefix: string, afterRevision: number, handler: WatchHandler): Watch {
    if (this.closed) {
      queueMicrotask(() => handler.error(new UnavailableError('storage is closed')));
      return { stop() {} };
    }
    const after = afterRevision > 0 ? afterRevision : this.published;
    if (after < this.compacted) {
      queueMicrotask(() => handler.error(new CompactedError(after, this.compacted)));
      return { stop() {} };
    }
    return this.watchers.add(prefix, after, this.published, handler);
  }

  requestProgress(): void {
    this.watchers.progress(this.published);
  }

  /** Progress is reported synchronously after every published event: always ordered. */
  async watchProgressOrdered(): Promise<boolean> {
    return true;
  }

  /** Events with revision in (after, upTo] under `prefix`, at most `max` log entries read. */
  private replay(after: number, upTo: number, prefix: string, max: number): { events: WatchEvent[]; next: number } {
    return this.withSnapshot((txn) => {
      if (after < this.compacted) throw new CompactedError(after, this.compacted);
      const events: WatchEvent[] = [];
      const end = prefixEnd(prefix);
      let next = after;
      for (const { key: rev, value: e } of this.log.getRange({ start: after + 1, end: upTo, inclusiveEnd: true, limit: max, transaction: txn })) {
        // Revisions are contiguous: a hole means compaction removed what we still need.
        if (rev !== next + 1) throw new CompactedError(after, this.compacted);
        next = rev;
        if (e.k < prefix || e.k >= end) continue;
        const prevValue = e.p ? this.log.get(e.p, { transaction: txn })?.v : undefined;
        if (e.d) {
          events.push({ type: 'delete', key: e.k, revision: rev, createRevision: e.c, prevValue, prevModRevision: e.p });
        } else {
          events.push({
            type: 'put',
            key: e.k,
            revision: rev,
            value: e.v,
            createRevision: e.c,
            prevValue,
            prevModRevision: e.p || undefined,
          });
        }
      }
      return { events, next };
    });
  }

  // ---- compaction ----

  async compact(revision: number): Promise<void> {
    if (revision > this.published) throw new FutureRevisionError(revision, this.published);
    if (revision <= this.compacted) return;
    // One compaction at a time; a later target simply continues where the last one stopped.
    while (this.compacting) await this.compacting;
    if (revision <= this.compacted) return;
    this.compacting = this.compactTo(revision);
    try {
      await this.compacting;
    } finally {
      this.compacting = undefined;
    }
  }

  /**
   * A write at revision r ≤ target supersedes the key's previous value, so no read at or after the
   * target needs that value; a tombstone at r ≤ target is not needed either. Removing exactly those
   * (log entry and index row) keeps every read at ≥ target exact. Entries that survive are the
   * latest values as of the target; the next compaction starts after the target, so they are
   * visited once.
   */
  private async compactTo(target: number): Promise<void> {
    let done = false;
    while (!done && !this.closed) {
      try {
        await this.compactBatch(target).then((d) => (done = d));
      } catch (err) {
        // The batch was not committed: its entries are still there, so the next compaction must
        // start where the committed state says, not where this attempt got to.
        this.compacted = this.meta.get(META_COMPACTED) ?? 0;
        throw await commitFailure(err, this.path);
      }
    }
  }

  /** Remove one batch of superseded history; true when the target is reached. */
  private compactBatch(target: number): Promise<boolean> {
    let done = false;
    return this.env
      .transaction(() => {
        ignoreCommitFailure(this.env);
        let n = 0;
        let last = this.compacted;
        const range = this.log.getRange({ start: this.compacted + 1, end: target, inclusiveEnd: true, limit: this.compactionBatch });
        for (const { key: rev, value: e } of range) {
          if (e.p) {
            this.index.remove([e.k, e.p]);
            this.log.remove(e.p);
          }
          if (e.d) {
            this.index.remove([e.k, rev]);
            this.log.remove(rev);
          }
          last = rev;
          n++;
        }
        done = n < this.compactionBatch;
        const compacted = done ? target : last;
        this.meta.put(META_COMPACTED, compacted);
        // Readers check this before reading; raising it inside the transaction means nobody reads
        // history that this transaction is removing.
        this.compacted = compacted;
      })
      .then(() => done);
  }

  /**
   * Keep the history within its byte budget: compact to where the newer half of the budget
   * begins. Runs in the background; a failure (a full disk) is retried on a later write.
   */
  private compactOversized(): void {
    this.history.dropThrough(this.compacted);
    if (this.compacting || this.closed || this.history.bytes <= this.maxHistoryBytes) return;
    const target = this.history.revisionKeeping(this.maxHistoryBytes / 2);
    if (target > this.compacted) void this.compact(target).catch(() => {});
  }

  /** Compact away everything older than the retention window. */
  private async compactExpired(): Promise<void> {
    if (this.closed || this.compacting) return;
    const cutoff = Date.now() - this.retentionMs;
    let target = 0;
    for (const { key: rev, value: e } of this.log.getRange({ start: this.compacted + 1 })) {
      if (e.t >= cutoff) break;
      target = rev;
    }
    if (target > this.compacted) await this.compact(target);
  }

  // ---- lifecycle ----

  /**
   * Readable means healthy, as kube-apiserver's etcd check is a read: a full disk (etcd's NOSPACE
   * alarm) leaves reads and watches working, so the server stays ready and only writes fail.
   */
  async health(): Promise<BackendHealth> {
    if (this.closed) return { healthy: false, message: 'storage is closed' };
    try {
      this.meta.get(META_REVISION);
      return { healthy: true, message: 'ok' };
    } catch (err) {
      return { healthy: false, message: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.compactionTimer) clearInterval(this.compactionTimer);
    await this.compacting?.catch(() => {});
    this.watchers.closeAll(new UnavailableError('storage is closed'));
    await this.env.close();
  }
}
