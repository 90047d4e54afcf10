// Events live for a limited time (`--event-ttl`, default one hour, as in Kubernetes): an event
// that has not been written for that long is removed. Its last write is the latest of its
// creation, its observation time and its series heartbeat (a repeated event is kept alive by
// updating `series`).

import type { KObject } from '../machinery/meta.ts';
import { storeKey, type ControllerFactory } from './controller.ts';
import { ExpiryCollector, latestTime } from './expiry.ts';

const DEFAULT_EVENT_TTL_MS = 60 * 60_000;

interface EventTimes {
  eventTime?: unknown;
  series?: { lastObservedTime?: unknown };
  deprecatedLastTimestamp?: unknown;
}

/** When the event was last written, as far as its own fields tell. */
function lastEventWrite(e: KObject): number | undefined {
  const ev = e as KObject & EventTimes;
  return latestTime(e.metadata.creationTimestamp, ev.eventTime, ev.series?.lastObservedTime, ev.deprecatedLastTimestamp);
}

export const eventTtl: ControllerFactory = (ctx) => {
  const store = ctx.stores.get(storeKey(ctx.naming.group('events'), 'events'));
  if (!store) return undefined;
  const ttl = ctx.eventTtlMs ?? DEFAULT_EVENT_TTL_MS;
  // Looked at ten times per TTL, at most once a minute and at least once a second.
  const interval = Math.min(60_000, Math.max(1000, Math.floor(ttl / 10)));
  return new ExpiryCollector('event-ttl', store, lastEventWrite, ctx.log, { maxAgeMs: ttl, intervalMs: interval });
};
