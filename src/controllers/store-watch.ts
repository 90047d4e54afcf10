// A controller's watch of one store: every event handed to `observe` (bookmarks aside), and a
// watch that ends started again after a pause, followed by `missed` (a full pass for what went by
// while it was down).

import { matchEverything } from '../machinery/list-options.ts';
import type { KObject } from '../machinery/meta.ts';
import type { RegistryStore } from '../registry/store.ts';

/** What the watching controller offers: whether it stopped, its timers, and where open watches go (to be stopped with it). */
export interface StoreWatchHost {
  readonly stopped: boolean;
  later(ms: number, fn: () => void): void;
  keep(watch: { stop(): void }): void;
}

export type StoreEvent = 'ADDED' | 'MODIFIED' | 'DELETED';

const WATCH_RESTART_MS = 1_000;

/** Resolves once the watch is open (or, when it could not be opened, once its restart is planned). */
export async function watchStore(host: StoreWatchHost, store: RegistryStore, observe: (type: StoreEvent, view: () => KObject) => void, missed: () => Promise<void>): Promise<void> {
  if (host.stopped) return;
  const restart = () =>
    host.later(WATCH_RESTART_MS, () => {
      void watchStore(host, store, observe, missed).then(missed);
    });
  try {
    const w = await store.watch(undefined, matchEverything(true), {
      send: (type, encoded) => {
        if (type !== 'BOOKMARK') observe(type, () => encoded.view());
        return true;
      },
      error: () => {},
      end: restart,
      onDrain: () => {},
    });
    if (host.stopped) w.stop();
    else host.keep(w);
  } catch {
    restart();
  }
}
