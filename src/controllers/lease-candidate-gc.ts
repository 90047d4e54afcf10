// Garbage collection of stale LeaseCandidates. A live candidate renews (`spec.renewTime`) whenever
// the server pings it; one that has not renewed for longer than the threshold belongs to a
// component that is gone, and is deleted. Runs only where LeaseCandidates are served.
//
// Several API servers on one storage may run this at once: a delete carries the resourceVersion
// the decision was made on, so a renewal in between wins (409), and a candidate another server
// removed first (404) is simply skipped.

import type { KObject } from '../machinery/meta.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import { storeKey, type Controller, type ControllerFactory } from './controller.ts';

/** How long a candidate may go without renewing before it is removed (Kubernetes: 30 minutes). */
export const LEASE_CANDIDATE_MAX_AGE_MS = 30 * 60_000;
/** How often the collector looks (Kubernetes: every 30 minutes, first at start). */
export const LEASE_CANDIDATE_GC_INTERVAL_MS = 30 * 60_000;

export interface LeaseCandidateGcOptions {
  maxAgeMs?: number;
  intervalMs?: number;
  /** The clock (ms since the epoch); tests may move it. */
  now?: () => number;
}

/** When the candidate was last known alive: its renewTime, or its creation if it never renewed. */
export function lastRenewal(candidate: KObject): number | undefined {
  const renewTime = (candidate.spec as { renewTime?: unknown } | undefined)?.renewTime;
  const t = typeof renewTime === 'string' && renewTime ? Date.parse(renewTime) : Date.parse(candidate.metadata.creationTimestamp ?? '');
  return Number.isNaN(t) ? undefined : t;
}

/** Whether a candidate has gone unrenewed for longer than `maxAgeMs` at `now`. */
export function isStaleLeaseCandidate(candidate: KObject, now: number, maxAgeMs = LEASE_CANDIDATE_MAX_AGE_MS): boolean {
  const t = lastRenewal(candidate);
  return t !== undefined && t + maxAgeMs < now;
}

export class LeaseCandidateGarbageCollector implements Controller {
  readonly name = 'lease-candidate-gc';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly maxAgeMs: number;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly candidates: RegistryStore,
    private readonly log: (message: string) => void,
    opts: LeaseCandidateGcOptions = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? LEASE_CANDIDATE_MAX_AGE_MS;
    this.intervalMs = opts.intervalMs ?? LEASE_CANDIDATE_GC_INTERVAL_MS;
    this.now = opts.now ?? Date.now;
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

  /** One pass: delete every stale candidate; resolves with how many this pass removed. */
  async collect(): Promise<number> {
    const list = await this.candidates.list(undefined, matchEverything());
    let deleted = 0;
    for (const c of list.items) {
      if (this.stopped) break;
      if (!isStaleLeaseCandidate(c, this.now(), this.maxAgeMs)) continue;
      try {
        await this.candidates.delete(c.metadata.namespace, c.metadata.name!, {
          dryRun: false,
          preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion },
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
      this.log(`lease-candidate-gc: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runPass().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}

/** The collector with the given threshold and period, where LeaseCandidates are served. */
export function leaseCandidateGcWith(opts: LeaseCandidateGcOptions = {}): ControllerFactory {
  return (ctx) => {
    const store = ctx.stores.get(storeKey(ctx.naming.group('coordination'), 'leasecandidates'));
    return store ? new LeaseCandidateGarbageCollector(store, ctx.log, opts) : undefined;
  };
}

/** The collector with Kubernetes' threshold and period. */
export const leaseCandidateGc: ControllerFactory = leaseCandidateGcWith();
