// Fan-out of the watch cache: every watcher has its own queue, bounded in events and in bytes, so
// one slow consumer is closed (WatcherTooSlowError) instead of stalling the others or growing
// memory without bound. Queued events share their values with the cache's ring, but a queue may
// outlive the ring's window, so its bytes count.
import type { Watch, WatchEvent, WatchHandler } from '../interface.ts';
import { eventBytes, prefixEnd } from '../interface.ts';
import { WatcherTooSlowError } from '../errors.ts';

const NONE: WatchEvent[] = [];

class CacheWatcher implements Watch {
  private readonly owner: CacheWatchers;
  readonly prefix: string;
  private readonly handler: WatchHandler;
  private readonly bufferSize: number;
  private readonly bufferBytes: number;
  readonly end: string;
  /** Events accepted from the cache but not yet taken by the consumer. */
  private queue: WatchEvent[] = [];
  /** The queue may hold this many; the initial replay is allowed on top of the live bound. */
  private limit: number;
  /** Bytes of the queued events, and their bound (like `limit`, the initial replay comes on top). */
  private queuedBytes = 0;
  private limitBytes: number;
  private paused = false;
  stopped = false;
  /** Every event with revision ≤ next has been queued or delivered (or did not match). */
  next: number;

  constructor(
    owner: CacheWatchers,
    prefix: string,
    after: number,
    handler: WatchHandler,
    bufferSize: number,
    bufferBytes: number,
  ) {
    this.owner = owner;
    this.prefix = prefix;
    this.handler = handler;
    this.bufferSize = bufferSize;
    this.bufferBytes = bufferBytes;
    this.end = prefixEnd(prefix);
    this.next = after;
    this.limit = bufferSize;
    this.limitBytes = bufferBytes;
  }

  matches(key: string): boolean {
    return key >= this.prefix && key < this.end;
  }

  /**
   * Queue the initial replay and deliver it (with anything queued meanwhile) on the next microtask:
   * the caller of watch() holds its handle before the first event arrives.
   */
  start(backlog: WatchEvent[]): void {
    this.limit = this.bufferSize + backlog.length;
    this.queue = backlog;
    this.queuedBytes = backlog.reduce((n, e) => n + eventBytes(e), 0);
    this.limitBytes = this.bufferBytes + this.queuedBytes;
    if (backlog.length) this.next = backlog[backlog.length - 1].revision;
    this.paused = true;
    queueMicrotask(() => this.resume());
  }

  /** Events already filtered for this watcher, in order; `rev` is the revision they bring it to. */
  offer(events: WatchEvent[], rev: number): void {
    if (this.stopped) return;
    if (rev > this.next) this.next = rev;
    if (!events.length) return;
    if (this.paused) {
      let bytes = this.queuedBytes;
      for (const e of events) bytes += eventBytes(e);
      if (this.queue.length + events.length > this.limit || bytes > this.limitBytes) {
        this.fail(new WatcherTooSlowError(this.bufferSize));
        return;
      }
      for (const e of events) this.queue.push(e);
      this.queuedBytes = bytes;
      return;
    }
    this.deliver(events);
  }

  private deliver(events: WatchEvent[]): void {
    let more: void | boolean;
    try {
      more = this.handler.events(events);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if (more === false) this.paused = true;
    this.limit = this.bufferSize;
    this.limitBytes = this.bufferBytes;
  }

  resume(): void {
    if (this.stopped || !this.paused) return;
    this.paused = false;
    if (this.queue.length) {
      const queued = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      this.deliver(queued);
    }
  }

  progress(rev: number): void {
    // A paused watcher still owes queued events: a progress note now would jump ahead of them.
    if (this.stopped || this.paused || !this.handler.progress || rev < this.next) return;
    this.next = rev;
    try {
      this.handler.progress(rev);
    } catch (err) {
      this.fail(err as Error);
    }
  }

  fail(err: Error): void {
    if (this.stopped) return;
    this.stop();
    this.queue = [];
    this.queuedBytes = 0;
    this.handler.error(err);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.owner.remove(this);
  }
}

export class CacheWatchers {
  private readonly bufferSize: number;
  private readonly bufferBytes: number;
  private readonly all = new Set<CacheWatcher>();

  constructor(
    bufferSize: number,
    bufferBytes: number,
  ) {
    this.bufferSize = bufferSize;
    this.bufferBytes = bufferBytes;
  }

  get size(): number {
    return this.all.size;
  }

  add(prefix: string, after: number, handler: WatchHandler, backlog: WatchEvent[]): Watch {
    const w = new CacheWatcher(this, prefix, after, handler, this.bufferSize, this.bufferBytes);
    this.all.add(w);
    w.start(backlog.filter((e) => e.revision > after && w.matches(e.key)));
    return w;
  }

  remove(w: CacheWatcher): void {
    this.all.delete(w);
  }

  /** One batch of events from the backend, in revision order, ending at `rev`. */
  dispatch(events: WatchEvent[], rev: number): void {
    for (const w of this.all) {
      let mine: WatchEvent[] | undefined;
      for (const e of events) {
        if (e.revision > w.next && w.matches(e.key)) (mine ??= []).push(e);
      }
      w.offer(mine ?? NONE, rev);
    }
  }

  progress(rev: number): void {
    for (const w of this.all) w.progress(rev);
  }

  failAll(errFor: (next: number) => Error): void {
    for (const w of [...this.all]) w.fail(errFor(w.next));
  }
}
