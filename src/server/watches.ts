// The open watches of a server, so shutdown can end them cleanly, and the timeout a watch gets
// when its client names none.

import type { WatchRegistry } from '../endpoints/handlers.ts';

export interface OpenWatches extends WatchRegistry {
  /** Ends every open watch. */
  endAll(): void;
}

/**
 * Watches without timeoutSeconds end after a random time in [min, 2·min), as in kube-apiserver;
 * an ended watch whose client does not take what is left is cut after `endFlushMs`.
 */
export function openWatches(minRequestTimeoutSeconds = 1800, endFlushMs = 5_000, bookmarkIntervalMs = 60_000): OpenWatches {
  const enders = new Set<() => void>();
  const minTimeout = minRequestTimeoutSeconds * 1000;
  return {
    add(end) {
      enders.add(end);
      return () => enders.delete(end);
    },
    defaultTimeoutMs: () => minTimeout * (1 + Math.random()),
    endFlushMs,
    bookmarkIntervalMs,
    endAll() {
      for (const end of [...enders]) end();
    },
  };
}
