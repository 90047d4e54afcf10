// Removal of objects that expired: one pass at start, then periodically, every object whose last
// sign of life is older than the maximum age is deleted through the normal delete path. Used for
// stale LeaseCandidates and for Events past their time to live.
//
// Several API servers on one storage may run this at once: a delete carries the uid and
// resourceVersion the decision was made on, so a renewal in between wins (409), and an object
// another server removed first (404) is simply skipped.

import type { KObject } from '../machinery/meta.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import type { Controller } from './controller.ts';

interface ExpiryOptions {
  maxAgeMs: number;
  intervalMs: number;
  /** The clock (ms since the epoch); tests may move it. */
  now?: () => number;
}

/** Whether something last alive at `lastAlive` (undefined: never expires) is older than `maxAgeMs` at `now`. */
export function isExpired(lastAlive: number | undefined, maxAgeMs: number, now: number): boolean {
  return lastAlive !== undefined && lastAlive + maxAgeMs < now;
}

export class ExpiryCollector implements Controller {
  readonly name: string;
  private readonly store: RegistryStore;
  /** When the object was last known alive (ms since the epoch); undefined: never expires. */
  private readonly lastAlive: (obj: KObject) => number | undefined;
  private readonly log: (message: string) => void;
  private readonly opts: ExpiryOptions;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(
    name: string,
    store: RegistryStore,
    lastAlive: (obj: KObject) => number | undefined,
    log: (message: string) => void,
    opts: ExpiryOptions,
  ) {
    this.name = name;
    this.store = store;
    this.lastAlive = lastAlive;
    this.log = log;
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  /** Whether the object is past its maximum age at `now`. */
  expired(obj: KObject, now = this.now()): boolean {
    return isExpired(this.lastAlive(obj), this.opts.maxAgeMs, now);
  }

  async start(): Promise<void> {
    await this.runPass();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One pass: delete every expired object; resolves with how many this pass removed. */
  async collect(): Promise<number> {
    const list = await this.store.list(undefined, matchEverything());
    let deleted = 0;
    for (const o of list.items) {
      if (this.stopped) break;
      if (!this.expired(o)) continue;
      try {
        await this.store.delete(o.metadata.namespace, o.metadata.name!, {
          dryRun: false,
          preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion },
        });
        deleted++;
      } catch (e) {
        // Renewed since it was read (409), or already gone (404): nothing to do.
        if (isStatusError(e) && (e.code === 409 || e.code === 404)) continue;
        throw e;
      }
    }
    return deleted;
  }

  private async runPass(): Promise<void> {
    try {
      await this.collect();
    } catch (e) {
      this.log(`${this.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runPass().finally(() => this.schedule());
    }, this.opts.intervalMs);
    this.timer.unref();
  }
}

/** The latest of the given timestamps (RFC 3339 texts), undefined when none parses. */
export function latestTime(...texts: unknown[]): number | undefined {
  let best: number | undefined;
  for (const t of texts) {
    if (typeof t !== 'string' || !t) continue;
    const ms = Date.parse(t);
    if (!Number.isNaN(ms) && (best === undefined || ms > best)) best = ms;
  }
  return best;
}
