// The output side of one watch: what it owes its client (the initial objects, then events) and
// how fast it may hand them over. Nothing is written faster than the client reads: the initial
// objects are encoded one at a time as the sink drains, and when the sink pushes back the rest of
// an event batch waits here while the watch cache queues what follows (boundedly: past its bound
// the watch ends and the client starts over, as with kube-apiserver's slow watchers).
import { eventBytes, type WatchEvent, type WatchHandler } from '../storage/interface.ts';
import type { EncodedObject } from './encoded.ts';
import type { StatusBody } from '../machinery/status.ts';

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

/** Where a watch sends its stream; `send` returns false when the consumer is backed up. */
export interface WatchSink {
  send(type: WatchEventType, object: EncodedObject): boolean;
  error(status: StatusBody): void;
  /** The watch ended (the caller closes the stream). */
  end(): void;
  onDrain(resume: () => void): void;
}

/** Events (and their bytes) a backed-up watch may hold before it is ended as too slow. */
const MAX_HELD_EVENTS = 10_000;
const MAX_HELD_BYTES = 32 * 1024 * 1024;
/** Bytes of initial objects one watch writes per event-loop turn. */
const REPLAY_BYTES_PER_TURN = 64 * 1024;
/** Bytes of initial objects all watches together write per event-loop turn. */
const ALL_REPLAYS_BYTES_PER_TURN = 1024 * 1024;

/**
 * A socket takes megabytes before it pushes back, so a crowd of new watchers would otherwise fill
 * every socket buffer in one go and hold the event loop (and /readyz) for seconds.
 */
const replayBudget = new (class {
  private left = ALL_REPLAYS_BYTES_PER_TURN;
  private refill: NodeJS.Immediate | undefined;
  take(): boolean {
    if (this.left > 0) return true;
    this.refill ??= setImmediate(() => {
      this.refill = undefined;
      this.left = ALL_REPLAYS_BYTES_PER_TURN;
    });
    return false;
  }
  spend(bytes: number): void {
    this.left -= bytes;
  }
})();

interface WatchStreamOptions {
  sink: WatchSink;
  /** The revision the stream starts after: events at or before it are not sent. */
  after: number;
  /** What a storage event is to this watch (selectors applied), or undefined when nothing. */
  describe(ev: WatchEvent): { type: WatchEventType; object: EncodedObject } | undefined;
  /** A BOOKMARK object at a revision; progress notes become bookmarks only when it is given. */
  bookmark?: (revision: number) => EncodedObject;
  /** Translates the source's terminal error into what the client is told (undefined: nothing). */
  errorStatus(err: Error): StatusBody | undefined;
}

export class WatchStream implements WatchHandler {
  private readonly o: WatchStreamOptions;
  /** Asks the source for more after the stream pushed back (the source's Watch.resume). */
  resumeSource: () => void = () => {};
  private lastSent: number;
  private stopped = false;
  /** The sink pushed back: nothing more is written until it drains. */
  private blocked = false;
  private waiting = false;
  /** A heartbeat bookmark is due in the next turn (see heartbeat). */
  private heartbeatOwed = false;
  /** The backlog stopped for its turn's budget, not for push-back: go on in the next turn. */
  private yieldTurn = false;
  /** What must go out before any event, each step true once complete. */
  private backlog: (() => boolean)[] = [];
  /** Events handed over by the source but not yet written. */
  private held: WatchEvent[] = [];
  private heldBytes = 0;

  constructor(o: WatchStreamOptions) {
    this.o = o;
    this.lastSent = o.after;
  }

  /** Owe the client these objects as ADDED, encoded only as each goes out, then `last` if given. */
  owe<T>(items: readonly T[], encode: (item: T) => EncodedObject, last?: { type: WatchEventType; object: EncodedObject }): void {
    let next = 0;
    if (items.length) {
      this.backlog.push(() => {
        let budget = REPLAY_BYTES_PER_TURN;
        while (next < items.length) {
          if (budget <= 0 || !replayBudget.take()) {
            this.yieldTurn = true;
            return false;
          }
          const obj = encode(items[next++]!);
          budget -= obj.byteLength();
          replayBudget.spend(obj.byteLength());
          if (!this.send(obj, 'ADDED')) return next >= items.length;
        }
        return true;
      });
    }
    if (last) {
      this.backlog.push(() => {
        this.send(last.object, last.type);
        return true;
      });
    }
  }

  /** Start writing what is owed, from the next turn (the caller finishes setting up first). */
  start(): void {
    if (!this.backlog.length) return;
    this.yieldTurn = true;
    this.waitForRoom();
  }

  stop(): void {
    this.stopped = true;
    this.backlog = [];
    this.held = [];
    this.heldBytes = 0;
  }

  // ---- WatchHandler ----

  events(events: WatchEvent[]): boolean {
    if (this.stopped) return true;
    for (const ev of events) {
      this.held.push(ev);
      this.heldBytes += eventBytes(ev);
    }
    // A source that does not queue for us (a watch the cache does not cover) is bounded here.
    if (this.held.length > MAX_HELD_EVENTS || this.heldBytes > MAX_HELD_BYTES) {
      this.stop();
      this.o.sink.end();
      return true;
    }
    if (this.waiting) return false;
    if (this.flush()) return true;
    this.waitForRoom();
    return false;
  }

  progress(revision: number): void {
    if (this.stopped || !this.o.bookmark || revision <= this.lastSent || this.waiting) return;
    this.lastSent = revision;
    this.heartbeatOwed = false;
    this.o.sink.send('BOOKMARK', this.o.bookmark(revision));
  }

  /**
   * A bookmark is owed now whether or not the revision moved (before a timeout, and about every
   * minute, as kube-apiserver sends them): unless a progress bookmark at a newer revision goes out
   * first (`progress`, asked for at the same time), one at the last revision this watch delivered
   * goes out in the next turn. Never ahead of what was delivered, never while events are held.
   */
  heartbeat(): void {
    if (this.stopped || !this.o.bookmark || this.heartbeatOwed) return;
    this.heartbeatOwed = true;
    setImmediate(() => {
      if (!this.heartbeatOwed) return;
      this.heartbeatOwed = false;
      if (this.stopped || this.waiting || this.held.length) return;
      this.o.sink.send('BOOKMARK', this.o.bookmark!(this.lastSent));
    });
  }

  error(err: Error): void {
    if (this.stopped) return;
    this.stop();
    const status = this.o.errorStatus(err);
    if (status) this.o.sink.error(status);
    this.o.sink.end();
  }

  // ---- pacing ----

  private send(object: EncodedObject, type: WatchEventType): boolean {
    const ok = this.o.sink.send(type, object);
    if (!ok) this.blocked = true;
    return ok;
  }

  private sendEvent(ev: WatchEvent): void {
    if (ev.revision <= this.lastSent) return;
    this.lastSent = ev.revision;
    let out: ReturnType<WatchStreamOptions['describe']>;
    try {
      out = this.o.describe(ev);
    } catch (e) {
      // An event this watch cannot describe (its object is unreadable) ends it with the error.
      this.error(e as Error);
      return;
    }
    if (out) this.send(out.object, out.type);
  }

  /** Write what is owed until the sink pushes back; true when everything owed went out. */
  private flush(): boolean {
    this.blocked = false;
    while (this.backlog.length && !this.stopped && !this.blocked) {
      if (!this.backlog[0]!()) return false;
      this.backlog.shift();
    }
    let i = 0;
    while (i < this.held.length && !this.stopped && !this.blocked) this.sendEvent(this.held[i++]!);
    this.held = i >= this.held.length ? [] : this.held.slice(i);
    this.heldBytes = this.held.reduce((n, e) => n + eventBytes(e), 0);
    return !this.stopped && !this.blocked && this.held.length === 0 && this.backlog.length === 0;
  }

  private waitForRoom(): void {
    if (this.waiting || this.stopped) return;
    this.waiting = true;
    const resume = () => {
      this.waiting = false;
      if (this.stopped) return;
      if (this.flush()) this.resumeSource();
      else this.waitForRoom();
    };
    if (this.yieldTurn) {
      this.yieldTurn = false;
      setImmediate(resume);
    } else this.o.sink.onDrain(resume);
  }
}
