// Faults at the storage layer: history bounded in bytes, and a full disk that refuses writes
// without closing the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { openWatchCache } from '../../src/storage/cache/watch-cache.ts';
import { CompactedError, InsufficientStorageError } from '../../src/storage/errors.ts';
import { tempDir } from '../support/tmp.ts';

test('lmdb: history is compacted when its values pass the byte bound', async () => {
  const s = await openLmdbStorage({ path: tempDir('history-bytes'), maxHistoryBytes: 1024 * 1024, compactionIntervalMs: 0 });
  try {
    const value = (n: number) => new Uint8Array(100 * 1024).fill(n);
    let kv = await s.create('/registry/x/a', value(0));
    const first = kv.modRevision;
    for (let i = 1; i <= 40; i++) kv = await s.update('/registry/x/a', kv.modRevision, value(i));
    // Compaction runs in the background after the write that crossed the bound.
    for (let i = 0; i < 50 && (await s.compactedRevision()) <= first; i++) await new Promise((r) => setTimeout(r, 20));
    const compacted = await s.compactedRevision();
    assert.ok(compacted > first, `compacted to ${compacted}`);
    // 4 MB were written; no more than the 1 MB budget (ten values) and the write in flight is kept.
    assert.ok(kv.modRevision - compacted <= 12, `kept ${kv.modRevision - compacted} revisions of 100 KB`);
    await assert.rejects(s.get('/registry/x/a', { atRevision: first }), CompactedError);
    assert.deepEqual(Buffer.from((await s.get('/registry/x/a'))!.value), Buffer.from(value(40)));
  } finally {
    await s.close();
  }
});

test('lmdb: a full disk refuses writes with InsufficientStorageError, keeps reads and watches, and writes again once space is freed', async (t) => {
  const dir = tempDir('full-disk');
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]).status !== 0) {
    t.skip('mounting a tmpfs needs root');
    return;
  }
  t.after(() => spawnSync('umount', [dir]));
  mkdirSync(`${dir}/db`);
  writeFileSync(`${dir}/filler`, Buffer.alloc(1024 * 1024));
  const s = await openLmdbStorage({ path: `${dir}/db` });
  const acknowledged: string[] = [];
  try {
    const seen: number[] = [];
    const watch = s.watch('/registry/', 0, { events: (es) => void seen.push(...es.map((e) => e.revision)), error: () => {} });
    const value = new Uint8Array(50_000).fill(1);
    let refused: unknown;
    // Three at a time, so failures also hit writes that share a transaction.
    for (let i = 0; i < 200 && !refused; i += 3) {
      const keys = [i, i + 1, i + 2].map((k) => `/registry/x/${k}`);
      const results = await Promise.allSettled(keys.map((k) => s.create(k, value)));
      results.forEach((r, j) => (r.status === 'fulfilled' ? acknowledged.push(keys[j]!) : (refused ??= r.reason)));
    }
    assert.ok(refused instanceof InsufficientStorageError, `refused with ${String(refused)}`);
    assert.ok(acknowledged.length > 10);
    assert.equal((await s.list('/registry/x/')).items.length, acknowledged.length);
    assert.equal((await s.health()).healthy, true);
    rmSync(`${dir}/filler`);
    const after = await s.create('/registry/y', value);
    assert.equal(after.modRevision, (await s.currentRevision()));
    // Revisions stay contiguous: the refused write's revision was reused, and watchers saw no hole.
    assert.deepEqual(seen, Array.from({ length: seen.length }, (_, i) => seen[0]! + i));
    assert.equal(seen.at(-1), after.modRevision);
    watch.stop();
  } finally {
    await s.close();
  }
  const reopened = await openLmdbStorage({ path: `${dir}/db` });
  // Every acknowledged write survived, and nothing else did.
  assert.deepEqual((await reopened.list('/registry/x/')).items.map((kv) => kv.key).sort(), [...acknowledged].sort());
  await reopened.close();
});

test('watch cache: the event ring is bounded in bytes, so large objects shorten its window', async () => {
  const backend = await openLmdbStorage({ path: tempDir('ring-bytes'), compactionIntervalMs: 0 });
  const cache = await openWatchCache(backend, { prefix: '/registry/x/', maxEventBytes: 1024 * 1024, progressIntervalMs: 0 });
  try {
    const value = (n: number) => new Uint8Array(100 * 1024).fill(n);
    let kv = await cache.create('/registry/x/a', value(0));
    const first = kv.modRevision;
    for (let i = 1; i <= 30; i++) kv = await cache.update('/registry/x/a', kv.modRevision, value(i));
    await cache.waitForRevision(kv.modRevision);
    const outcome = (after: number) =>
      new Promise<string>((resolve) => {
        const w = cache.watch('/registry/x/', after, {
          events: (es) => {
            w.stop();
            resolve(`events from ${es[0]!.revision}`);
          },
          error: (err) => resolve(err.name),
        });
      });
    // Each event keeps its value and the previous one alive: 200 KB, so about five fit in 1 MB.
    assert.equal(await outcome(first), 'CompactedError');
    assert.equal(await outcome(kv.modRevision - 3), `events from ${kv.modRevision - 2}`);
  } finally {
    await cache.close();
    await backend.close();
  }
});
