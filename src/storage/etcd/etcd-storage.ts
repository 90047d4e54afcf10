// Storage backed by an etcd v3 cluster, spoken to over raw gRPC.
//
// Every write is a single Txn whose compare clause carries the precondition (absent for create,
// modRevision for update/delete), so the check and the write are one atomic step in etcd and a
// retried write can never apply twice. The failure branch reads the key back so a lost race costs
// one round trip, not two.
import type {
  BackendHealth,
  DeleteResult,
  GetOptions,
  KeyValue,
  ListOptions,
  ListResult,
  Storage,
  Watch,
  WatchHandler,
} from '../interface.ts';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  UnavailableError,
} from '../errors.ts';
import { COMPACT_KEY, compactStep, compactTo, readCompactKey } from './compactor.ts';
import { EndpointPool, isServiceError, progressRequestIsOrdered } from './endpoints.ts';
import { CompareResult, CompareTarget, type Compare, type PbKeyValue, type RangeResponse } from './proto.ts';
import { WatchMux } from './watch-mux.ts';

interface EtcdStorageOptions {
  /** kube-apiserver style URLs, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[];
  /** Deadline of every request, failover retries included. Default 10 s. */
  requestTimeoutMs?: number;
  /** Auto-compaction period; 0 turns it off. Default 5 min (kube-apiserver's default). */
  compactionIntervalMs?: number;
}

const HEALTH_TIMEOUT_MS = 2_000;

export class EtcdStorage implements Storage {
  private readonly pool: EndpointPool;
  private readonly watches: WatchMux;
  private compactTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(opts: EtcdStorageOptions) {
    this.pool = new EndpointPool(opts.endpoints, opts.requestTimeoutMs ?? 10_000);
    this.watches = new WatchMux(this.pool, COMPACT_KEY);
    const interval = opts.compactionIntervalMs ?? 5 * 60_000;
    if (interval > 0) this.startCompactor(interval);
  }

  /** The endpoint unary requests currently go to (failover moves it). */
  get activeEndpoint(): string {
    return this.pool.current.url;
  }

  /** The endpoint the shared watch stream is connected to, if one is open. */
  get watchEndpoint(): string | undefined {
    return this.watches.endpoint;
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const k = enc(key);
    const res = await this.pool.txn({
      compare: [cmp(k, CompareTarget.CREATE, CompareResult.EQUAL, 0)],
      success: [{ request_put: { key: k, value: buf(value) } }],
      failure: [],
    });
    if (!res.succeeded) throw new KeyExistsError(key);
    const rev = res.header.revision;
    return { key, value, createRevision: rev, modRevision: rev };
  }

  async get(key: string, opts: GetOptions = {}): Promise<KeyValue | undefined> {
    const res = await this.read({ key: enc(key), revision: opts.atRevision ?? 0 });
    const kv = res.kvs[0];
    return kv ? toKV(kv) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    // A start key before the prefix must not widen the range beyond it (the other backends agree).
    const start = opts.startKey && opts.startKey > prefix ? opts.startKey : prefix;
    const res = await this.read({
      key: start === '' ? Buffer.from([0]) : enc(start),
      range_end: rangeEnd(prefix),
      limit: opts.limit ?? 0,
      revision: opts.atRevision ?? 0,
    });
    const revision = opts.atRevision || res.header.revision;
    let items = res.kvs.map(toKV);
    let count = res.count;
    // Only a prefix that is itself a prefix of the bookkeeping key (e.g. '') can see it.
    if (COMPACT_KEY.startsWith(prefix) && COMPACT_KEY >= start) {
      const n = items.length;
      items = items.filter((kv) => kv.key !== COMPACT_KEY);
      if (items.length < n) count--;
      else if (res.more) {
        const hidden = await this.read({ key: enc(COMPACT_KEY), revision, count_only: true });
        count -= hidden.count;
      }
    }
    const remaining = Math.max(0, count - items.length);
    return { items, revision, more: remaining > 0, remaining };
  }

  async update(key: string, expectedModRevision: number, value: Uint8Array): Promise<KeyValue> {
    const k = enc(key);
    const res = await this.pool.txn({
      // create_revision > 0 keeps an expected modRevision of 0 from matching (and creating) an absent key.
      compare: [cmp(k, CompareTarget.MOD, CompareResult.EQUAL, expectedModRevision), cmp(k, CompareTarget.CREATE, CompareResult.GREATER, 0)],
      // keys_only read-back: the put response lacks create_revision, and the value we already have.
      success: [{ request_put: { key: k, value: buf(value) } }, { request_range: { key: k, keys_only: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.casFailure(key, expectedModRevision, res.responses[0]?.response_range);
    const written = res.responses[1]?.response_range?.kvs[0];
    const rev = res.header.revision;
    return { key, value, createRevision: written?.create_revision ?? rev, modRevision: rev };
  }

  async delete(key: string, expectedModRevision?: number): Promise<DeleteResult> {
    const k = enc(key);
    const compare = [cmp(k, CompareTarget.CREATE, CompareResult.GREATER, 0)];
    if (expectedModRevision !== undefined) compare.push(cmp(k, CompareTarget.MOD, CompareResult.EQUAL, expectedModRevision));
    const res = await this.pool.txn({
      compare,
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.casFailure(key, expectedModRevision ?? 0, res.responses[0]?.response_range);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    if (!prev) throw new KeyNotFoundError(key); // cannot happen: the compare proved the key exists
    return { prev: toKV(prev), revision: res.header.revision };
  }

  watch(prefix: string, afterRevision: number, handler: WatchHandler): Watch {
    return this.watches.watch(prefix, prefix === '' ? Buffer.from([0]) : enc(prefix), rangeEnd(prefix), Math.max(0, afterRevision), handler);
  }

  /**
   * Ask etcd to confirm how far every open watch has got; answered through handler.progress.
   * Before etcd 3.4.31 / 3.5.13 the answer can overtake pending events (see watchProgressOrdered).
   */
  requestProgress(): void {
    this.watches.requestProgress();
  }

  /**
   * Whether handler.progress after requestProgress() can be trusted for consistent reads from a
   * cache, i.e. the watch stream's member runs etcd ≥ 3.4.31 / 3.5.13 (Kubernetes' rule).
   */
  async watchProgressOrdered(): Promise<boolean> {
    return progressRequestIsOrdered(await this.serverVersion());
  }

  /** The etcd version of the member we talk to (for the watch stream, if one is open). */
  async serverVersion(): Promise<string | undefined> {
    const url = this.watches.endpoint ?? this.pool.current.url;
    const ep = this.pool.endpoints.find((e) => e.url === url) ?? this.pool.current;
    return ep.version ?? ep.probeVersion(this.pool.requestTimeoutMs);
  }

  compact(revision: number): Promise<void> {
    this.checkOpen();
    return compactTo(this.pool, revision);
  }

  async currentRevision(): Promise<number> {
    // Any linearizable read returns the store revision in its header; count_only keeps it tiny.
    const res = await this.read({ key: enc(COMPACT_KEY), count_only: true });
    return res.header.revision;
  }

  /**
   * The revision recorded by the last coordinated compaction, i.e. the oldest readable one (etcd
   * keeps the compact revision itself readable). 1 when never compacted: a fresh etcd's first
   * revision, whose (empty) state is readable. Compactions done behind our back (etcdctl, etcd's
   * --auto-compaction-*) do not update the key and are not reflected.
   */
  async compactedRevision(): Promise<number> {
    this.checkOpen();
    return Math.max(1, (await readCompactKey(this.pool)).revision);
  }

  async health(): Promise<BackendHealth> {
    try {
      this.checkOpen();
      // Kubernetes' etcd check: a linearizable read with a short deadline (it needs a leader).
      const timeout = Math.min(HEALTH_TIMEOUT_MS, this.pool.requestTimeoutMs);
      const res = await this.pool.range({ key: Buffer.from('health'), count_only: true }, timeout);
      return { healthy: true, message: `etcd ok at ${this.pool.current.url} (revision ${res.header.revision})` };
    } catch (err) {
      return { healthy: false, message: err instanceof Error ? err.message : String(err) };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.compactTimer);
    // Watches end silently: close is the owner's decision, not an error to report to watchers.
    this.watches.close();
    this.pool.close();
  }

  private startCompactor(intervalMs: number): void {
    let state = { version: 0, revision: 0 };
    const tick = async (): Promise<void> => {
      try {
        state = await compactStep(this.pool, state.version, state.revision);
      } catch (err) {
        // Transient etcd trouble: the next tick retries with the same state, as kube does.
        if (!this.closed) console.warn(`etcd compaction failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!this.closed) this.compactTimer = setTimeout(tick, intervalMs).unref();
    };
    this.compactTimer = setTimeout(tick, intervalMs).unref();
  }

  /** A Range that maps etcd's revision errors to the storage errors. */
  private async read(req: Parameters<EndpointPool['range']>[0]): Promise<RangeResponse> {
    this.checkOpen();
    try {
      return await this.pool.range(req);
    } catch (err) {
      const requested = req.revision ?? 0;
      if (isServiceError(err) && /has been compacted/.test(err.details)) {
        const recorded = (await readCompactKey(this.pool)).revision;
        // The key can lag a compaction done without it; the error itself proves `requested` is gone.
        throw new CompactedError(requested, Math.max(recorded, requested + 1));
      }
      if (isServiceError(err) && /future revision/.test(err.details)) {
        throw new FutureRevisionError(requested, await this.currentRevision().catch(() => 0));
      }
      throw err;
    }
  }

  private casFailure(key: string, expected: number, current: RangeResponse | null | undefined): Error {
    const kv = current?.kvs[0];
    return kv ? new ConflictError(key, expected, toKV(kv)) : new KeyNotFoundError(key);
  }

  private checkOpen(): void {
    if (this.closed) throw new UnavailableError('etcd storage is closed');
  }
}

export async function openEtcdStorage(opts: EtcdStorageOptions): Promise<EtcdStorage> {
  const storage = new EtcdStorage(opts);
  // Learn the revision (the starting point of "from now" watches) and the version (for
  // watchProgressOrdered) up front, but do not fail: an API server may start before its etcd, and
  // every request fails cleanly with UnavailableError until etcd is there.
  await Promise.all([storage.currentRevision().catch(() => 0), storage.serverVersion().catch(() => undefined)]);
  return storage;
}

function enc(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

function buf(v: Uint8Array): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** etcd's range end for a prefix, on the UTF-8 bytes: increment the last byte that is not 0xff. */
function rangeEnd(prefix: string): Buffer {
  const b = enc(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]++;
      return end;
    }
  }
  // Empty (or all-0xff) prefix: "\0" means "to the end of the keyspace".
  return Buffer.from([0]);
}

function cmp(key: Buffer, target: Compare['target'], result: Compare['result'], n: number): Compare {
  const c: Compare = { key, target, result };
  if (target === CompareTarget.CREATE) c.create_revision = n;
  else if (target === CompareTarget.MOD) c.mod_revision = n;
  else c.version = n;
  return c;
}

function toKV(kv: PbKeyValue): KeyValue {
  return { key: kv.key.toString('utf8'), value: kv.value, createRevision: kv.create_revision, modRevision: kv.mod_revision };
}
