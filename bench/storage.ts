// Storage benchmark: `npm run bench:storage`. Everything runs in one process against one etcd
// started here on loopback, so every figure is compared with a baseline measured in the same run:
// writes with raw etcd puts through the same gRPC client, lists with a raw etcd range of the same
// keys, watch fan-out with one raw etcd watch.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openLmdbStorage } from '../src/storage/lmdb/lmdb-storage.ts';
import { openEtcdStorage } from '../src/storage/etcd/etcd-storage.ts';
import { EndpointPool } from '../src/storage/etcd/endpoints.ts';
import { openWatchCache } from '../src/storage/cache/watch-cache.ts';
import { prefixEnd, type Storage } from '../src/storage/interface.ts';
import { startEtcd } from '../test/support/etcd.ts';
import { tempDir } from '../test/support/tmp.ts';
import { fmt, load, loadRow, percentiles, row, type LoadResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const value = Buffer.alloc(500, 'v');
const concurrencies = [1, 16, 64];

console.log(`storage benchmark: ${SECONDS}s per figure, 500 B values, node ${process.version}`);
const etcd = await startEtcd();
const pool = new EndpointPool(etcd.endpoints, 10_000);
const etcdStore = await openEtcdStorage({ endpoints: etcd.endpoints, compactionIntervalMs: 0 });
const lmdbStore = await openLmdbStorage({ path: tempDir('bench-lmdb') });

async function median(times: number, fn: () => Promise<unknown>): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < times; i++) {
    const s = performance.now();
    await fn();
    t.push(performance.now() - s);
  }
  return percentiles(t).p50;
}

// ---- writes ----
console.log('\n# durable creates (ratio: raw etcd puts at the same concurrency)');
// Warm up etcd (WAL segment allocation, first compactions of its own) so the baseline is not cold.
await load(16, 1000, (_w, i) => pool.put({ key: Buffer.from(`/bench/warmup/${i}`), value }));
const raw = new Map<number, LoadResult>();
for (const c of concurrencies) {
  const r = await load(c, SECONDS * 1000, (_w, i) => pool.put({ key: Buffer.from(`/bench/raw/${c}/${i}`), value }));
  raw.set(c, r);
  loadRow(`raw etcd put, ${c} clients`, r);
}
const creates = new Map<string, LoadResult>();
for (const [name, store] of [['etcd backend', etcdStore], ['lmdb (embedded)', lmdbStore]] as const) {
  for (const c of concurrencies) {
    const r = await load(c, SECONDS * 1000, (_w, i) => store.create(`/registry/bench/create-${c}/${i}`, value));
    creates.set(`${name}/${c}`, r);
    loadRow(`${name} create, ${c} writers`, r, raw.get(c));
  }
}

// ---- lists ----
console.log('\n# list of 10 000 keys (ratio: a raw etcd range of the same keys; > 1 is slower)');
const N = 10_000;
const listPrefix = '/registry/bench/list/';
for (const store of [etcdStore, lmdbStore] as Storage[]) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < N; i = next++) await store.create(`${listPrefix}${String(i).padStart(6, '0')}`, value);
    }),
  );
}
const rawRangeAll = await median(5, () => pool.range({ key: Buffer.from(listPrefix), range_end: Buffer.from(prefixEnd(listPrefix)) }));
const rawRangePage = await median(20, () =>
  pool.range({ key: Buffer.from(listPrefix), range_end: Buffer.from(prefixEnd(listPrefix)), limit: 500 }),
);
row('raw etcd range, all 10 000', `${fmt(rawRangeAll, 1)} ms`);
row('raw etcd range, first 500', `${fmt(rawRangePage, 1)} ms`);
const cache = await openWatchCache(lmdbStore, { prefix: '/registry/bench/' });
for (const [name, store] of [['etcd backend', etcdStore], ['lmdb (embedded)', lmdbStore], ['watch cache over lmdb', cache]] as const) {
  const all = await median(5, () => store.list(listPrefix));
  const page = await median(20, () => store.list(listPrefix, { limit: 500 }));
  row(`${name} list, all 10 000`, `${fmt(all, 1)} ms`, all / rawRangeAll);
  row(`${name} list, first 500 (+ remaining count)`, `${fmt(page, 1)} ms`, page / rawRangePage);
}

// ---- watch fan-out ----
console.log('\n# watch fan-out: write → the last of 1 000 watchers has the event (ratio: one raw etcd watch)');
async function fanOut(store: Storage, watchers: number, events: number, prefix: string): Promise<{ p50: number; p99: number }> {
  let pending = 0;
  let started = 0;
  let done: () => void = () => {};
  const lat: number[] = [];
  const handles = Array.from({ length: watchers }, () =>
    store.watch(prefix, 0, {
      events: () => {
        if (--pending === 0) {
          lat.push(performance.now() - started);
          done();
        }
      },
      error: (e) => console.error('watch error', e),
    }),
  );
  await new Promise((r) => setTimeout(r, 200));
  for (let i = 0; i < events; i++) {
    pending = watchers;
    const arrived = new Promise<void>((r) => (done = r));
    started = performance.now();
    await store.create(`${prefix}e${i}-${Math.random()}`, value);
    await arrived;
    await new Promise((r) => setTimeout(r, 2));
  }
  for (const h of handles) h.stop();
  return percentiles(lat);
}
const rawWatch = await fanOut(etcdStore, 1, 200, '/registry/bench/fan-raw/');
row('one etcd watch (baseline)', `p50 ${fmt(rawWatch.p50, 2)} ms  p99 ${fmt(rawWatch.p99, 2)} ms`);
const etcdCache = await openWatchCache(etcdStore, { prefix: '/registry/bench/fan-etcd/' });
for (const [name, store, prefix] of [
  ['watch cache over lmdb, 1 000 watchers', cache, '/registry/bench/fan/'],
  ['watch cache over etcd, 1 000 watchers', etcdCache, '/registry/bench/fan-etcd/'],
] as const) {
  const r = await fanOut(store, 1000, 200, prefix);
  row(name, `p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms`, r.p50 / rawWatch.p50);
}
await etcdCache.close();
await cache.close();

// ---- memory ----
console.log('\n# memory: 200 000 writes to 1 000 keys, default retention, lmdb + watch cache (own process)');
const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./storage-memory.ts', import.meta.url))], {
  encoding: 'utf8',
});
const mem = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as { peakRssMB?: number; seconds?: number; peakAnonMB?: number; peakFileMB?: number };
row('peak RSS', `${fmt(mem.peakRssMB ?? NaN)} MB (anon ${fmt(mem.peakAnonMB ?? NaN)}, file ${fmt(mem.peakFileMB ?? NaN)})`);

// ---- summary against the acceptance ----
const l16 = creates.get('lmdb (embedded)/16')!;
const e16 = creates.get('etcd backend/16')!;
console.log('\n# summary');
row('lmdb creates at 16 / raw etcd puts at 16', `${fmt(l16.perSecond / raw.get(16)!.perSecond, 2)}× (goal ≥ 3×), p99 ${fmt(l16.p99, 1)} ms (goal < 20)`);
row('etcd backend creates at 16 / raw etcd puts at 16', `${fmt((e16.perSecond / raw.get(16)!.perSecond) * 100)}% (goal ≥ 85%)`);

await etcdStore.close();
await lmdbStore.close();
pool.close();
await etcd.stop();
