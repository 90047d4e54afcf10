// Garbage collection of stale LeaseCandidates. A live candidate renews (`spec.renewTime`) whenever
// the server pings it; one that has not renewed for longer than the threshold belongs to a
// component that is gone, and is deleted (see ExpiryCollector). Runs only where LeaseCandidates
// are served.

import type { KObject } from '../machinery/meta.ts';
import type { RegistryStore } from '../registry/store.ts';
import { storeKey, type ControllerFactory } from './controller.ts';
import { ExpiryCollector, isExpired } from './expiry.ts';

/** How long a candidate may go without renewing before it is removed (Kubernetes: 30 minutes). */
export const LEASE_CANDIDATE_MAX_AGE_MS = 30 * 60_000;
/** How often the collector looks (Kubernetes: every 30 minutes, first at start). */
export const LEASE_CANDIDATE_GC_INTERVAL_MS = 30 * 60_000;

interface LeaseCandidateGcOptions {
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
  return isExpired(lastRenewal(candidate), maxAgeMs, now);
}

/** The collector of stale candidates. */
export class LeaseCandidateGarbageCollector extends ExpiryCollector {
  constructor(candidates: RegistryStore, log: (message: string) => void, opts: LeaseCandidateGcOptions = {}) {
    super('lease-candidate-gc', candidates, lastRenewal, log, {
      maxAgeMs: opts.maxAgeMs ?? LEASE_CANDIDATE_MAX_AGE_MS,
      intervalMs: opts.intervalMs ?? LEASE_CANDIDATE_GC_INTERVAL_MS,
      now: opts.now,
    });
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
