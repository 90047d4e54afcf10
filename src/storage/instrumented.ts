// A Storage that times each request to the one it wraps: what kube-apiserver reports as
// etcd_request_duration_seconds{operation, type}, for either backend. The type is the resource's
// key prefix (`/registry/<group>/<resource>`), so the number of series stays that of the kinds.
// Everything else passes through unchanged.

import type { Storage } from './interface.ts';

/** Receives one storage request: its operation (get, list, create, update, delete), its type and its duration. */
export type StorageObserver = (operation: string, type: string, seconds: number) => void;

/** `/registry/<group>/<resource>` of a key or prefix; `other` for keys outside that layout. */
export function storageType(key: string): string {
  if (!key.startsWith('/registry/')) return 'other';
  const group = key.indexOf('/', 10);
  const resource = group < 0 ? -1 : key.indexOf('/', group + 1);
  return resource < 0 ? (group < 0 ? 'other' : key.replace(/\/$/, '')) : key.slice(0, resource);
}

export function instrumentStorage(inner: Storage, observe: StorageObserver): Storage {
  const timed = async <T>(operation: string, key: string, run: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await run();
    } finally {
      observe(operation, storageType(key), (performance.now() - start) / 1000);
    }
  };
  return {
    create: (key, value) => timed('create', key, () => inner.create(key, value)),
    get: (key, opts) => timed('get', key, () => inner.get(key, opts)),
    list: (prefix, opts) => timed('list', prefix, () => inner.list(prefix, opts)),
    update: (key, rev, value) => timed('update', key, () => inner.update(key, rev, value)),
    delete: (key, rev) => timed('delete', key, () => inner.delete(key, rev)),
    watch: (prefix, after, handler) => inner.watch(prefix, after, handler),
    compact: (revision) => inner.compact(revision),
    requestProgress: () => inner.requestProgress(),
    watchProgressOrdered: () => inner.watchProgressOrdered(),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    health: () => inner.health(),
    close: () => inner.close(),
  };
}
