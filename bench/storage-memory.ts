// Memory bound of the embedded store with its watch cache: 200 000 writes to 1 000 keys with the
// default retention (5 min of history in the store, the cache's default window). Runs in its own process so its RSS is its own; prints a JSON summary.
import { openLmdbStorage } from '../src/storage/lmdb/lmdb-storage.ts';
import { openWatchCache } from '../src/storage/cache/watch-cache.ts';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tempDir } from '../test/support/tmp.ts';

const writes = Number(process.argv[2] ?? 200_000);
const keys = 1000;
const prefix = '/registry/coordination.orch.io/leases/';
const backend = await openLmdbStorage({ path: tempDir('bench-mem') });
const cache = await openWatchCache(backend, { prefix: prefix, ...(process.env.MAX_EVENTS ? { maxEvents: Number(process.env.MAX_EVENTS) } : {}) });
// One watcher, as an informer would have, so the fan-out path is exercised too.
let seen = 0;
cache.watch(prefix, 0, { events: (e) => void (seen += e.length), error: () => {} });
// 200 000 writes to 1 000 keys is what 1 000 nodes renewing their Leases produce: a Lease-shaped
// JSON object (~450 B) whose renewTime and resourceVersion change with every write.
const valueFor = (key: string, i: number) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: {
        name: key.slice(key.lastIndexOf('/') + 1),
        namespace: 'orch-node-lease',
        uid: randomUUID(),
        resourceVersion: String(i),
        creationTimestamp: '2026-11-22T00:00:00Z',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: key.slice(key.lastIndexOf('/') + 1), uid: randomUUID() }],
      },
      spec: {
        holderIdentity: key.slice(key.lastIndexOf('/') + 1),
        leaseDurationSeconds: 40,
        renewTime: new Date().toISOString().replace('Z', '000Z'),
      },
    }),
  );
const revs = new Array<number>(keys).fill(0);
let peak = 0;
let peakAnon = 0;
let peakFile = 0;
let peakHeap = 0;
/** RSS split as Linux reports it: anonymous memory (heap, buffers) and file pages (LMDB's map). */
function sample(): void {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  peak = Math.max(peak, process.memoryUsage().rss);
  peakAnon = Math.max(peakAnon, kb('RssAnon'));
  peakFile = Math.max(peakFile, kb('RssFile') + kb('RssShmem'));
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}
let done = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async (_, w) => {
    for (let i = w; i < writes; i += 16) {
      const k = i % keys;
      const key = `${prefix}orch-node-lease/node-${k}`;
      // Each worker owns its keys (k ≡ w mod 16), so its compare-and-swap never conflicts.
      revs[k] = revs[k] ? (await cache.update(key, revs[k], valueFor(key, i))).modRevision : (await cache.create(key, valueFor(key, i))).modRevision;
      if (++done % 5000 === 0) sample();
    }
  }),
);
sample();
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ writes, keys, seconds, watcherEvents: seen, peakRssMB: peak / 2 ** 20, peakAnonMB: peakAnon / 2 ** 20, peakFileMB: peakFile / 2 ** 20, peakHeapMB: peakHeap / 2 ** 20 }));
await cache.close();
await backend.close();
