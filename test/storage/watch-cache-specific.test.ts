// What only the watch cache promises: bounded per-watcher buffers, its own event window, fan-out
// to many watchers from one backend watch, cached lists and consistency with writes that bypass it.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStorage, type LmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { openWatchCache, type WatchCache, type WatchCacheOptions } from '../../src/storage/cache/watch-cache.ts';
import { CompactedError, UnavailableError, WatcherTooSlowError } from '../../src/storage/errors.ts';
import type { Storage, WatchEvent } from '../../src/storage/interface.ts';
import { tempDir } from '../support/tmp.ts';
import { bytes, collect, text, watchError } from './conformance.ts';

const opened: (LmdbStorage | WatchCache)[] = [];
after(async () => {
  for (const s of opened) await s.close();
});

async function setup(opts: Partial<WatchCacheOptions> = {}) {
  const backend = await openLmdbStorage({ path: tempDir('cache-x') });
  const prefix = '/registry/things/';
  const cache = await openWatchCache(backend, { prefix, ...opts });
  opened.push(cache, backend);
  return { backend, cache, prefix };
}

describe('watch cache', () => {
  it('loads what the backend already holds and stays in step with writes that bypass it', async () => {
    const backend = await openLmdbStorage({ path: tempDir('cache-load') });
    for (let i = 0; i < 25; i++) await backend.create(`/registry/things/k${i}`, bytes(String(i)));
    const cache = await openWatchCache(backend, { prefix: '/registry/things/', loadPageSize: 7 });
    opened.push(cache, backend);
    assert.equal((await cache.list('/registry/things/')).items.length, 25);
    const kv = await backend.create('/registry/things/direct', bytes('d'));
    // A consistent read sees a write made straight to the backend a moment ago.
    assert.equal(text((await cache.get('/registry/things/direct'))?.value), 'd');
    assert.equal(cache.revision, kv.modRevision);
    const listed = cache.listCached('/registry/things/', { limit: 10 });
    assert.equal(listed.items.length, 10);
    assert.equal(listed.remaining, 16);
    assert.equal(listed.revision, kv.modRevision);
  });

  it('closes a watcher that falls behind without holding back the others', async () => {
    const { cache, prefix } = await setup({ watcherBufferSize: 10 });
    const slowErrors: Error[] = [];
    let slowGot = 0;
    // The slow consumer says "backed up" after its first batch and never resumes.
    const slow = cache.watch(prefix, 0, {
      events: (e) => {
        slowGot += e.length;
        return false;
      },
      error: (e) => void slowErrors.push(e),
    });
    const fast: WatchEvent[] = [];
    const fastWatch = cache.watch(prefix, 0, { events: (e) => void fast.push(...e), error: (e) => assert.fail(e) });
    for (let i = 0; i < 30; i++) await cache.create(`${prefix}k${i}`, bytes(String(i)));
    assert.equal(fast.length, 30, 'the fast watcher got every event');
    assert.equal(slowErrors.length, 1);
    assert.ok(slowErrors[0] instanceof WatcherTooSlowError);
    assert.ok(slowGot >= 1 && slowGot < 30);
    assert.equal(cache.watcherCount, 1, 'the slow watcher is gone');
    slow.stop();
    fastWatch.stop();
  });

  it('a paused watcher that resumes in time gets everything, in order', async () => {
    const { cache, prefix } = await setup({ watcherBufferSize: 50 });
    const got: number[] = [];
    let paused = true;
    const w = cache.watch(prefix, 0, {
      events: (e) => {
        got.push(...e.map((x) => x.revision));
        return !paused;
      },
      error: (e) => assert.fail(e),
    });
    for (let i = 0; i < 20; i++) await cache.create(`${prefix}k${i}`, bytes(String(i)));
    assert.equal(got.length, 1, 'nothing more is delivered while paused');
    paused = false;
    w.resume!();
    assert.equal(got.length, 20);
    for (let i = 1; i < got.length; i++) assert.equal(got[i], got[i - 1] + 1);
    w.stop();
  });

  it('its event window is bounded: older watches get CompactedError with the window start', async () => {
    const { cache, prefix } = await setup({ maxEvents: 10 });
    const first = await cache.create(`${prefix}a`, bytes('0'));
    let cur = first;
    for (let i = 1; i <= 20; i++) cur = await cache.update(`${prefix}a`, cur.modRevision, bytes(String(i)));
    const err = await watchError(cache, prefix, first.modRevision);
    assert.ok(err instanceof CompactedError);
    assert.equal(err.compactRevision, cur.modRevision - 10);
    const events = await collect(cache, prefix, cur.modRevision - 10, cur.modRevision);
    assert.equal(events.length, 10);
  });

  it('fans one backend event out to 1000 watchers', async () => {
    const { cache, prefix } = await setup();
    let received = 0;
    const watches = Array.from({ length: 1000 }, () =>
      cache.watch(prefix, 0, { events: (e) => void (received += e.length), error: (e) => assert.fail(e) }),
    );
    await cache.create(`${prefix}x`, bytes('x'));
    assert.equal(received, 1000);
    assert.equal(cache.watcherCount, 1000);
    for (const w of watches) w.stop();
    assert.equal(cache.watcherCount, 0);
  });

  it('after its backend watch fails it serves through the backend, then loads again', async () => {
    const real = await openLmdbStorage({ path: tempDir('cache-outage') });
    opened.push(real);
    // The real store, with an outage we control: its watch can be broken and its lists refused.
    let listFailures = 0;
    let breakWatch: (err: Error) => void = () => {};
    const list: Storage['list'] = async (prefix, opts) => {
      if (listFailures > 0) {
        listFailures--;
        throw new UnavailableError('backend down');
      }
      return real.list(prefix, opts);
    };
    const watch: Storage['watch'] = (prefix, after, handler) => {
      const w = real.watch(prefix, after, handler);
      breakWatch = (err) => {
        w.stop();
        handler.error(err);
      };
      return w;
    };
    const flaky = new Proxy(real, {
      get(target, prop) {
        if (prop === 'list') return list;
        if (prop === 'watch') return watch;
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const prefix = '/registry/things/';
    const cache = await openWatchCache(flaky, { prefix });
    opened.unshift(cache);
    await cache.create(`${prefix}a`, bytes('1'));
    const errors: Error[] = [];
    cache.watch(prefix, 0, { events: () => {}, error: (e) => void errors.push(e) });
    listFailures = 2;
    breakWatch(new UnavailableError('stream gone'));
    assert.equal(errors.length, 1, 'its watchers are told to start over');
    assert.ok(errors[0] instanceof UnavailableError);
    // While it reloads, reads reach the backend (here: refused once more, then answered).
    await assert.rejects(cache.list(prefix), UnavailableError);
    // A watch the cache serves itself counts as its watcher; one passed to the backend does not.
    let w = cache.watch(prefix, 0, { events: () => {}, error: () => {} });
    for (let i = 0; i < 100 && cache.watcherCount === 0; i++) {
      w.stop();
      await new Promise((r) => setTimeout(r, 20));
      w = cache.watch(prefix, 0, { events: () => {}, error: () => {} });
    }
    assert.equal(cache.watcherCount, 1, 'the cache serves watches again once it has reloaded');
    const b = await cache.create(`${prefix}b`, bytes('2'));
    assert.deepEqual(cache.listCached(prefix).items.map((i) => text(i.value)), ['1', '2']);
    assert.equal(cache.revision, b.modRevision);
    w.stop();
  });

  it('passes reads and watches outside its prefix to the backend', async () => {
    const { backend, cache } = await setup();
    await backend.create('/registry/other/o', bytes('o'));
    assert.equal(text((await cache.get('/registry/other/o'))?.value), 'o');
    assert.equal((await cache.list('/registry/other/')).items.length, 1);
  });

  it('a read that races its close waits for nothing and leaves no timer behind (a process could not exit)', async () => {
    const { backend, cache, prefix } = await setup({ freshnessTimeoutMs: 400 });
    await cache.create(`${prefix}a`, bytes('a'));
    await cache.close();
    // A revision the closed cache will never see.
    await backend.create(`${prefix}b`, bytes('b'));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const start = performance.now();
    assert.equal(text((await cache.get(`${prefix}b`))?.value), 'b');
    assert.ok(performance.now() - start < 300, `read the backend at once, not after the freshness timeout (${Math.round(performance.now() - start)} ms)`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(timers(), before, 'no progress requests left running');
  });
});
