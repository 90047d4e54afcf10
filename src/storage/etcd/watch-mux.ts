// All watches of one EtcdStorage share a single gRPC Watch stream (as etcd's Go client does): one
// HTTP/2 stream per watch would cost a server goroutine pair and a sync slot each.
//
// etcd assigns watch ids in the order it processes create requests and echoes them only in the
// `created` response, so creates are sent one at a time: the next create goes out only after the
// previous one's response has told us its id.
//
// When the stream breaks (member died, lost its leader, ...) every live watch is re-created on the
// next endpoint from (last delivered revision + 1), so the handler sees neither a gap nor a repeat.
import * as grpc from '@grpc/grpc-js';
import type { Watch, WatchEvent, WatchHandler } from '../interface.ts';
import { CompactedError, StorageError, UnavailableError } from '../errors.ts';
import { progressRequestIsOrdered, type Endpoint, type EndpointPool } from './endpoints.ts';
import { EventType, type PbEvent, type PbKeyValue, type WatchRequest, type WatchResponse } from './proto.ts';

interface Watcher {
  prefix: string;
  key: Buffer;
  rangeEnd: Buffer;
  handler: WatchHandler;
  /** First revision not delivered yet; 0 while a "from now" watch has not been created. */
  nextRev: number;
  etcdId?: number;
  /** Started by watch(prefix, 0) and nothing delivered yet (see onCanceled). */
  fromNow: boolean;
  /**
   * A watch created from a past revision is "unsynced" on the server until it has caught up with
   * the revision current at creation (`catchUpTo`; 0 once caught up). etcd < 3.4.31 / 3.5.13
   * answers a WatchProgressRequest without waiting for that catch-up (etcd-io/etcd#15220), so
   * there broadcast progress is withheld from such a watch until an event or an ordered
   * notification shows it caught up, or until `catchUpUntil` (etcd syncs lagging watchers every
   * 100 ms; without this bound a quiet prefix would never see progress).
   */
  catchUpTo: number;
  catchUpUntil: number;
  /** start_revision of the latest create request. */
  startedAt: number;
  done: boolean;
}

type Stream = grpc.ClientDuplexStream<WatchRequest, WatchResponse>;

const CATCH_UP_GRACE_MS = 1_000;

export class WatchMux {
  private readonly pool: EndpointPool;
  /** Internal bookkeeping key (compaction) that must not surface as an event. */
  private readonly hiddenKey: string;
  /** Insertion order = re-creation order after a reconnect. */
  private readonly watchers = new Set<Watcher>();
  private readonly byId = new Map<number, Watcher>();
  private queue: Watcher[] = [];
  private inflight?: Watcher;
  private createTimer?: NodeJS.Timeout;
  private stream?: Stream;
  private streamEp?: Endpoint;
  private reconnectTimer?: NodeJS.Timeout;
  private brokenSince?: number;
  private backoffMs = 50;
  private closed = false;

  constructor(
    pool: EndpointPool,
    hiddenKey: string,
  ) {
    this.pool = pool;
    this.hiddenKey = hiddenKey;
  }

  get endpoint(): string | undefined {
    return this.streamEp?.url;
  }

  watch(prefix: string, key: Buffer, rangeEnd: Buffer, afterRevision: number, handler: WatchHandler): Watch {
    const fromNow = afterRevision <= 0;
    const w: Watcher = {
      prefix,
      key,
      rangeEnd,
      handler,
      // "From now" means after the last revision we know of, not after whatever etcd's revision is
      // when the create request finally gets there (possibly after a failover).
      nextRev: fromNow ? (this.pool.observedRevision > 0 ? this.pool.observedRevision + 1 : 0) : afterRevision + 1,
      fromNow,
      catchUpTo: 0,
      catchUpUntil: 0,
      startedAt: 0,
      done: false,
    };
    if (this.closed) {
      queueMicrotask(() => handler.error(new UnavailableError('etcd storage is closed')));
      return { stop: () => {} };
    }
    this.watchers.add(w);
    this.queue.push(w);
    if (this.stream) this.pump();
    else if (!this.reconnectTimer) {
      // Not in a reconnect cycle: a fresh stream gets a fresh give-up clock.
      this.brokenSince = undefined;
      this.open();
    }
    return { stop: () => this.stop(w) };
  }

  /** Ask etcd for a progress notification on every watch of the stream (answered with watch_id -1). */
  requestProgress(): void {
    this.stream?.write({ progress_request: {} });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.createTimer);
    for (const w of this.watchers) w.done = true;
    this.watchers.clear();
    this.byId.clear();
    this.queue = [];
    this.dropStream();
  }

  private stop(w: Watcher): void {
    if (w.done) return;
    w.done = true;
    this.watchers.delete(w);
    if (w.etcdId !== undefined) {
      this.byId.delete(w.etcdId);
      this.stream?.write({ cancel_request: { watch_id: w.etcdId } });
    }
    // A watch still being created is canceled when its `created` response names its id.
  }

  private open(): void {
    if (this.closed || this.watchers.size === 0) return;
    const ep = this.pool.current;
    const md = new grpc.Metadata();
    // Same as clientv3.WithRequireLeader: a member cut off from the quorum closes the stream instead
    // of leaving us watching a history that no longer advances.
    md.set('hasleader', 'true');
    const stream = ep.watch.Watch(md);
    this.stream = stream;
    this.streamEp = ep;
    if (ep.version === undefined) void ep.probeVersion(this.pool.requestTimeoutMs);
    stream.on('data', (resp: WatchResponse) => {
      if (this.stream === stream) this.onResponse(resp);
    });
    stream.on('error', (err: Error) => {
      if (this.stream === stream) this.broken(`${ep.url}: ${(err as grpc.ServiceError).details || err.message}`);
    });
    stream.on('end', () => {
      if (this.stream === stream) this.broken(`${ep.url}: watch stream ended`);
    });
    this.pump();
  }

  /** Send the next queued create, unless one is in flight (see the header comment). */
  private pump(): void {
    if (!this.stream || this.inflight) return;
    let w: Watcher | undefined;
    while ((w = this.queue.shift()) && w.done);
    if (!w) return;
    this.inflight = w;
    // etcd lets a watch start *at* its compact revision, whose event's prev_kv is already gone. We
    // start one revision early instead (that event is dropped as already delivered), so etcd
    // refuses exactly when the state at the last delivered revision is no longer readable: the
    // same rule as reads, and every event we deliver has its prevValue. A "from now" watch skips the
    // trick: it has no such promise to keep, and starting after etcd's current revision lets etcd
    // count it as caught up at once (see catchUpTo).
    const start = w.fromNow || w.nextRev <= 1 ? w.nextRev : w.nextRev - 1;
    w.startedAt = start;
    this.stream.write({
      create_request: {
        key: w.key,
        range_end: w.rangeEnd,
        // 0 means "from the current revision" to etcd.
        start_revision: start,
        progress_notify: true,
        prev_kv: true,
      },
    });
    // A member that accepts the connection but never answers (frozen, partitioned) must not stall us.
    this.createTimer = setTimeout(() => this.broken(`${this.streamEp?.url}: watch create timed out`), this.pool.requestTimeoutMs);
    this.createTimer.unref();
  }

  private onResponse(resp: WatchResponse): void {
    const rev = resp.header?.revision ?? 0;
    this.pool.observe(rev);
    if (resp.created) {
      clearTimeout(this.createTimer);
      const w = this.inflight;
      this.inflight = undefined;
      if (w) this.onCreated(w, resp, rev);
      // The stream demonstrably works again.
      this.brokenSince = undefined;
      this.backoffMs = 50;
      this.pump();
      return;
    }
    const w = this.byId.get(resp.watch_id);
    if (resp.canceled) {
      if (w) this.onCanceled(w, resp);
      return;
    }
    if (resp.events.length > 0) {
      if (w) this.onEvents(w, resp.events);
      return;
    }
    // An empty response is a progress notification.
    if (resp.watch_id === -1) {
      // Answer to requestProgress, broadcast to every watch of the stream.
      const ordered = progressRequestIsOrdered(this.streamEp?.version);
      const now = Date.now();
      for (const x of [...this.byId.values()]) {
        if (ordered || x.catchUpTo === 0 || now > x.catchUpUntil) this.progress(x, rev, ordered);
      }
    } else if (w) {
      // Periodic per-watch notification: etcd sends it through the watch's own event queue, so it is
      // ordered with the events and also proves the watch has caught up.
      this.progress(w, rev, true);
    }
  }

  private onCreated(w: Watcher, resp: WatchResponse, rev: number): void {
    if (resp.canceled) {
      return this.fail(w, new StorageError(`etcd refused the watch on ${w.prefix}: ${resp.cancel_reason}`));
    }
    if (w.done) {
      this.stream?.write({ cancel_request: { watch_id: resp.watch_id } });
      return;
    }
    w.etcdId = resp.watch_id;
    this.byId.set(resp.watch_id, w);
    // The created header carries the store revision at creation: a "from now" watch starts after it.
    // etcd puts a watch whose start is not after its current revision in the "unsynced" group.
    w.catchUpTo = w.startedAt > 0 && w.startedAt <= rev ? rev : 0;
    if (w.nextRev === 0) w.nextRev = rev + 1;
    w.catchUpUntil = Date.now() + CATCH_UP_GRACE_MS;
  }

  private onCanceled(w: Watcher, resp: WatchResponse): void {
    this.byId.delete(resp.watch_id);
    w.etcdId = undefined;
    if (resp.compact_revision > 0 && w.fromNow && !w.done) {
      // The revision we last knew of was compacted before this "from now" watch got created (an
      // idle client): nothing was delivered, so starting at etcd's current revision is still "now".
      w.fromNow = false;
      w.nextRev = 0;
      this.queue.push(w);
      this.pump();
      return;
    }
    const err =
      resp.compact_revision > 0
        ? new CompactedError(w.nextRev - 1, resp.compact_revision)
        : new StorageError(`etcd canceled the watch on ${w.prefix}: ${resp.cancel_reason || 'no reason given'}`);
    this.fail(w, err);
  }

  private onEvents(w: Watcher, raw: PbEvent[]): void {
    const out: WatchEvent[] = [];
    for (const e of raw) {
      const kv = e.kv;
      if (!kv) continue;
      if (kv.mod_revision >= w.catchUpTo) w.catchUpTo = 0;
      // Already delivered: the one-revision-early start (see pump) or a resend after a reconnect.
      if (kv.mod_revision < w.nextRev) continue;
      w.nextRev = kv.mod_revision + 1;
      w.fromNow = false;
      const key = kv.key.toString('utf8');
      if (key !== this.hiddenKey) out.push(toEvent(e, kv, key));
    }
    if (out.length === 0) return;
    this.deliver(w, () => w.handler.events(out));
  }

  private progress(w: Watcher, rev: number, ordered: boolean): void {
    // Only an ordered notification may move the resume point: a premature broadcast (etcd#15220)
    // must not make a reconnect skip events.
    if (ordered && rev + 1 > w.nextRev) w.nextRev = rev + 1;
    if (ordered) w.catchUpTo = 0;
    if (w.handler.progress) this.deliver(w, () => w.handler.progress?.(rev));
  }

  /** A throwing handler ends its own watch, not the stream shared with every other watch. */
  private deliver(w: Watcher, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.fail(w, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private fail(w: Watcher, err: Error): void {
    if (w.done) return;
    this.stop(w);
    try {
      w.handler.error(err);
    } catch {
      // The watch is over either way.
    }
  }

  /** The stream died: re-create every live watch on the next member, after a short backoff. */
  private broken(reason: string): void {
    if (this.closed) return;
    const ep = this.streamEp;
    this.dropStream();
    if (ep) this.pool.rotateFrom(ep);
    if (this.watchers.size === 0) return; // reopened on demand by the next watch()
    this.brokenSince ??= Date.now();
    this.queue = [...this.watchers];
    for (const w of this.watchers) w.etcdId = undefined;
    if (Date.now() - this.brokenSince > this.pool.requestTimeoutMs) {
      // Give up rather than leave watchers silently stuck: the caller re-lists and re-watches.
      this.brokenSince = undefined;
      const err = new UnavailableError(`etcd watch stream could not be re-established on [${this.pool.urls()}]: ${reason}`);
      for (const w of [...this.watchers]) this.fail(w, err);
      return;
    }
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open();
    }, this.backoffMs);
    this.reconnectTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 1_000);
  }

  private dropStream(): void {
    clearTimeout(this.createTimer);
    this.inflight = undefined;
    this.byId.clear();
    const s = this.stream;
    this.stream = undefined;
    this.streamEp = undefined;
    if (s) {
      s.removeAllListeners('data');
      // cancel() reports CANCELLED through 'error'; the identity check in the handlers ignores it,
      // but a listener must exist or Node treats the error as unhandled.
      s.on('error', () => {});
      s.cancel();
    }
  }
}

function toEvent(e: PbEvent, kv: PbKeyValue, key: string): WatchEvent {
  const prev = e.prev_kv;
  const ev: WatchEvent =
    e.type === EventType.DELETE
      ? // A delete's kv is a tombstone without create_revision: take it from the deleted incarnation.
        { type: 'delete', key, revision: kv.mod_revision, createRevision: prev?.create_revision ?? 0 }
      : { type: 'put', key, revision: kv.mod_revision, value: kv.value, createRevision: kv.create_revision };
  if (prev) {
    ev.prevValue = prev.value;
    ev.prevModRevision = prev.mod_revision;
  }
  return ev;
}
