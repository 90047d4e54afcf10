// The watch cache's recent history: events in revision order, trimmed by age, by count and by the
// bytes of the values they keep alive (so a storm of large objects cannot hold memory unbounded).
import type { WatchEvent } from '../interface.ts';
import { eventBytes } from '../interface.ts';

export class EventRing {
  private readonly retentionMs: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private events: WatchEvent[] = [];
  private times: number[] = [];
  private bytes = 0;
  /** Index of the oldest kept event; the arrays are compacted when half of them is dead. */
  private head = 0;
  /** Every event with revision > windowStart is in the ring. */
  windowStart = 0;

  constructor(
    retentionMs: number,
    maxEvents: number,
    maxBytes: number,
  ) {
    this.retentionMs = retentionMs;
    this.maxEvents = maxEvents;
    this.maxBytes = maxBytes;
  }

  get length(): number {
    return this.events.length - this.head;
  }

  reset(rev: number): void {
    this.events = [];
    this.times = [];
    this.bytes = 0;
    this.head = 0;
    this.windowStart = rev;
  }

  push(e: WatchEvent, now: number): void {
    this.events.push(e);
    this.times.push(now);
    this.bytes += eventBytes(e);
    const cutoff = now - this.retentionMs;
    while (this.length > this.maxEvents || (this.length > 0 && (this.times[this.head] < cutoff || this.bytes > this.maxBytes))) {
      const old = this.events[this.head];
      this.windowStart = old.revision;
      this.bytes -= eventBytes(old);
      // The slot is dead: drop the reference now rather than at the next compaction of the array.
      this.events[this.head] = undefined as unknown as WatchEvent;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** The kept events with revision > after, oldest first (after must be ≥ windowStart). */
  since(after: number): WatchEvent[] {
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid].revision <= after) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo);
  }
}
