// Watchers of the embedded backend. A new watcher whose start lies in the past first replays the
// log ("unsynced", in bounded chunks so a long replay never blocks the event loop), then joins the
// live ("synced") set; both steps run on the one JS thread, so the switch has no gap and no overlap.
import type { Watch, WatchEvent, WatchHandler } from '../interface.ts';
import { prefixEnd } from '../interface.ts';

type Replay = (
  after: number,
  upTo: number,
  prefix: string,
  max: number,
) => { events: WatchEvent[]; next: number };

interface Watcher {
  prefix: string;
  end: string;
  handler: WatchHandler;
  /** Every event with revision ≤ next has been delivered (or did not match). */
  next: number;
  live: boolean;
  stopped: boolean;
}

const REPLAY_CHUNK = 1000;

export class LocalWatchers {
  private readonly replay: Replay;
  private readonly synced = new Set<Watcher>();
  private published = 0;

  constructor(replay: Replay) {
    this.replay = replay;
  }

  add(prefix: string, after: number, published: number, handler: WatchHandler): Watch {
    this.published = Math.max(this.published, published);
    const w: Watcher = { prefix, end: prefixEnd(prefix), handler, next: after, live: false, stopped: false };
    if (after >= this.published) {
      w.live = true;
      this.synced.add(w);
    } else {
      setImmediate(() => this.catchUp(w));
    }
    return {
      stop: () => {
        w.stopped = true;
        this.synced.delete(w);
      },
    };
  }

  private catchUp(w: Watcher): void {
    if (w.stopped) return;
    try {
      const { events, next } = this.replay(w.next, this.published, w.prefix, REPLAY_CHUNK);
      w.next = next;
      if (events.length) w.handler.events(events);
    } catch (err) {
      this.fail(w, err as Error);
      return;
    }
    if (w.stopped) return;
    if (w.next >= this.published) {
      w.live = true;
      this.synced.add(w);
    } else {
      setImmediate(() => this.catchUp(w));
    }
  }

  /** Deliver newly durable events (in revision order) up to `rev` to every live watcher. */
  publish(events: WatchEvent[], rev: number): void {
    this.published = rev;
    for (const w of this.synced) {
      let batch: WatchEvent[] | undefined;
      for (const e of events) {
        if (e.revision <= w.next || e.key < w.prefix || e.key >= w.end) continue;
        (batch ??= []).push(e);
      }
      if (rev > w.next) w.next = rev;
      if (batch) this.deliver(w, batch);
    }
  }

  progress(rev: number): void {
    for (const w of this.synced) {
      if (!w.handler.progress || w.next > rev) continue;
      try {
        w.handler.progress(rev);
      } catch (err) {
        this.fail(w, err as Error);
      }
    }
  }

  private deliver(w: Watcher, batch: WatchEvent[]): void {
    try {
      w.handler.events(batch);
    } catch (err) {
      this.fail(w, err as Error);
    }
  }

  private fail(w: Watcher, err: Error): void {
    if (w.stopped) return;
    w.stopped = true;
    this.synced.delete(w);
    w.handler.error(err);
  }

  closeAll(err: Error): void {
    for (const w of [...this.synced]) this.fail(w, err);
  }
}
