// One conformance suite for every implementation of `Storage`: each backend's test file calls
// `runConformance` with a factory, so lmdb, etcd and the watch cache are held to the same contract.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Storage, WatchEvent, KeyValue } from '../../src/storage/interface.ts';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
} from '../../src/storage/errors.ts';

export interface Subject {
  storage: Storage;
  /** A prefix no other test writes under. */
  prefix: string;
}

export interface ConformanceOptions {
  /** A fresh subject per test (sharing the backend is fine, sharing the prefix is not). */
  subject(): Promise<Subject>;
  /** Called once after the suite. */
  teardown?(): Promise<void>;
  /** Whether watches from before a compaction fail (backends), or are served from memory (cache). */
  watchFailsAfterCompaction: boolean;
}

export const bytes = (s: string): Uint8Array => Buffer.from(s);
export const text = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString() : undefined);

/** Watch until an event with revision ≥ until (or matching it) arrives; fails on timeout or error. */
export function collect(
  storage: Storage,
  prefix: string,
  after: number,
  until: number | ((e: WatchEvent) => boolean),
  timeoutMs = 5000,
): Promise<WatchEvent[]> {
  const done = typeof until === 'number' ? (e: WatchEvent) => e.revision >= until : until;
  return new Promise((resolve, reject) => {
    const got: WatchEvent[] = [];
    const timer = setTimeout(() => {
      w.stop();
      reject(new Error(`watch after ${after}: timed out waiting for ${until}; got ${got.map((e) => e.revision).join(',')}`));
    }, timeoutMs);
    const w = storage.watch(prefix, after, {
      events(events) {
        got.push(...events);
        if (got.length && done(got[got.length - 1])) {
          clearTimeout(timer);
          w.stop();
          resolve(got);
        }
      },
      error(err) {
        clearTimeout(timer);
        reject(err);
      },
    });
  });
}

/** The first error a watch reports (or a failure if it reports events instead). */
export function watchError(storage: Storage, prefix: string, after: number, timeoutMs = 5000): Promise<Error> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no watch error')), timeoutMs);
    const w = storage.watch(prefix, after, {
      events(events) {
        clearTimeout(timer);
        w.stop();
        reject(new Error(`expected an error, got events at ${events.map((e) => e.revision).join(',')}`));
      },
      error(err) {
        clearTimeout(timer);
        resolve(err);
      },
    });
  });
}

export function runConformance(name: string, opts: ConformanceOptions): void {
  describe(`storage conformance: ${name}`, () => {
    let s: Storage;
    let p: string;
    const fresh = async () => {
      const subject = await opts.subject();
      s = subject.storage;
      p = subject.prefix;
    };
    after(async () => {
      await opts.teardown?.();
    });

    it('create, get and the revision counter', async () => {
      await fresh();
      const before = await s.currentRevision();
      const a = await s.create(`${p}a`, bytes('one'));
      assert.equal(a.modRevision, before + 1, 'one write advances the revision by exactly one');
      assert.equal(a.createRevision, a.modRevision);
      assert.equal(await s.currentRevision(), a.modRevision);
      const got = await s.get(`${p}a`);
      assert.equal(text(got?.value), 'one');
      assert.equal(got?.modRevision, a.modRevision);
      await assert.rejects(s.create(`${p}a`, bytes('two')), KeyExistsError);
      assert.equal(await s.currentRevision(), a.modRevision, 'a failed create writes nothing');
      assert.equal(text((await s.get(`${p}a`))?.value), 'one');
      assert.equal(await s.get(`${p}missing`), undefined);
    });

    it('update is compare-and-swap on the mod revision', async () => {
      await fresh();
      const a = await s.create(`${p}k`, bytes('v1'));
      const b = await s.update(`${p}k`, a.modRevision, bytes('v2'));
      assert.equal(b.modRevision, a.modRevision + 1);
      assert.equal(b.createRevision, a.createRevision);
      const err = await s.update(`${p}k`, a.modRevision, bytes('v3')).catch((e: unknown) => e);
      assert.ok(err instanceof ConflictError, `expected ConflictError, got ${err}`);
      assert.equal(err.current.modRevision, b.modRevision, 'the conflict carries the current value');
      assert.equal(text(err.current.value), 'v2');
      assert.equal(text((await s.get(`${p}k`))?.value), 'v2');
      await assert.rejects(s.update(`${p}none`, 1, bytes('x')), KeyNotFoundError);
      assert.equal(await s.currentRevision(), b.modRevision, 'failed updates write nothing');
    });

    it('delete honours its precondition and reports the previous value', async () => {
      await fresh();
      const a = await s.create(`${p}d`, bytes('x'));
      const b = await s.update(`${p}d`, a.modRevision, bytes('y'));
      await assert.rejects(s.delete(`${p}d`, a.modRevision), ConflictError);
      assert.equal(text((await s.get(`${p}d`))?.value), 'y', 'a failed delete deletes nothing');
      const del = await s.delete(`${p}d`, b.modRevision);
      assert.equal(text(del.prev.value), 'y');
      assert.equal(del.prev.modRevision, b.modRevision);
      assert.equal(del.revision, b.modRevision + 1);
      assert.equal(await s.get(`${p}d`), undefined);
      await assert.rejects(s.delete(`${p}d`), KeyNotFoundError);
      // Without a precondition, delete is unconditional; a re-created key starts a new incarnation.
      const c = await s.create(`${p}d`, bytes('z'));
      assert.equal(c.createRevision, c.modRevision);
      const del2 = await s.delete(`${p}d`);
      assert.equal(del2.prev.createRevision, c.createRevision);
    });

    it('get and list at an older revision see exactly that state', async () => {
      await fresh();
      const a = await s.create(`${p}a`, bytes('a1'));
      const b = await s.create(`${p}b`, bytes('b1'));
      const snap = b.modRevision;
      await s.update(`${p}a`, a.modRevision, bytes('a2'));
      await s.delete(`${p}b`);
      await s.create(`${p}c`, bytes('c1'));
      const now = await s.list(p);
      assert.deepEqual(now.items.map((i) => [i.key.slice(p.length), text(i.value)]), [['a', 'a2'], ['c', 'c1']]);
      const old = await s.list(p, { atRevision: snap });
      assert.equal(old.revision, snap);
      assert.deepEqual(old.items.map((i) => [i.key.slice(p.length), text(i.value), i.modRevision]), [
        ['a', 'a1', a.modRevision],
        ['b', 'b1', b.modRevision],
      ]);
      assert.equal(text((await s.get(`${p}a`, { atRevision: snap }))?.value), 'a1');
      assert.equal(text((await s.get(`${p}b`, { atRevision: snap }))?.value), 'b1');
      assert.equal(await s.get(`${p}c`, { atRevision: snap }), undefined);
      assert.equal(await s.get(`${p}a`, { atRevision: a.modRevision - 1 }), undefined);
      const future = (await s.currentRevision()) + 1000;
      await assert.rejects(s.get(`${p}a`, { atRevision: future }), FutureRevisionError);
    });

    it('list honours the prefix, limit, start key and counts what remains', async () => {
      await fresh();
      for (const k of ['a', 'b', 'c', 'd', 'e']) await s.create(`${p}ns/${k}`, bytes(k));
      await s.create(`${p}nsx/z`, bytes('outside'));
      const all = await s.list(`${p}ns/`);
      assert.deepEqual(all.items.map((i) => text(i.value)), ['a', 'b', 'c', 'd', 'e']);
      assert.equal(all.more, false);
      assert.equal(all.remaining, 0);
      const page = await s.list(`${p}ns/`, { limit: 2 });
      assert.deepEqual(page.items.map((i) => text(i.value)), ['a', 'b']);
      assert.equal(page.more, true);
      assert.equal(page.remaining, 3);
      const next = await s.list(`${p}ns/`, { limit: 2, startKey: `${p}ns/b\0`, atRevision: page.revision });
      assert.deepEqual(next.items.map((i) => text(i.value)), ['c', 'd']);
      assert.equal(next.remaining, 1);
      const last = await s.list(`${p}ns/`, { limit: 2, startKey: `${p}ns/d\0`, atRevision: page.revision });
      assert.deepEqual(last.items.map((i) => text(i.value)), ['e']);
      assert.equal(last.more, false);
      const before = await s.list(`${p}ns/`, { startKey: `${p}a` });
      assert.deepEqual(before.items.map((i) => text(i.value)), ['a', 'b', 'c', 'd', 'e'], 'a start key before the prefix stays inside it');
      const exact = await s.list(`${p}ns/`, { limit: 5 });
      assert.equal(exact.more, false, 'a limit equal to the count leaves nothing remaining');
    });

    it('a paged list is one consistent snapshot while writers run', async () => {
      await fresh();
      const n = 60;
      for (let i = 0; i < n; i++) await s.create(`${p}${String(i).padStart(3, '0')}`, bytes(`v0-${i}`));
      let stop = false;
      const writers = (async () => {
        let round = 1;
        while (!stop) {
          const i = Math.floor(Math.random() * n);
          const key = `${p}${String(i).padStart(3, '0')}`;
          const cur = await s.get(key);
          if (cur && round % 5 === 0) await s.delete(key, cur.modRevision).catch(() => {});
          else if (cur) await s.update(key, cur.modRevision, bytes(`v${round}-${i}`)).catch(() => {});
          else await s.create(key, bytes(`v${round}-${i}`)).catch(() => {});
          await s.create(`${p}${String(n + round).padStart(3, '0')}`, bytes('new')).catch(() => {});
          round++;
        }
      })();
      const first = await s.list(p, { limit: 7 });
      const at = first.revision;
      const pages: KeyValue[] = [...first.items];
      let page = first;
      let expectRemaining = first.remaining;
      while (page.more) {
        await new Promise((r) => setTimeout(r, 5));
        page = await s.list(p, { limit: 7, atRevision: at, startKey: pages[pages.length - 1].key + '\0' });
        assert.equal(page.revision, at, 'every page is read at the first page revision');
        assert.equal(page.items.length + page.remaining, expectRemaining, 'remaining counts are consistent');
        expectRemaining = page.remaining;
        pages.push(...page.items);
      }
      stop = true;
      await writers;
      assert.ok((await s.currentRevision()) > at, 'writers ran while paging');
      const whole = await s.list(p, { atRevision: at });
      assert.deepEqual(
        pages.map((i) => [i.key, text(i.value), i.modRevision]),
        whole.items.map((i) => [i.key, text(i.value), i.modRevision]),
      );
      assert.equal(first.items.length + first.remaining, whole.items.length);
    });

    it('watch from every revision in the window: no gap, no duplicate, previous values', async () => {
      await fresh();
      const start = await s.currentRevision();
      const a = await s.create(`${p}a`, bytes('a1'));
      const b = await s.create(`${p}b`, bytes('b1'));
      const a2 = await s.update(`${p}a`, a.modRevision, bytes('a2'));
      await s.delete(`${p}b`, b.modRevision);
      await s.create(`${p}b`, bytes('b2'));
      await s.create(`${p.slice(0, -1)}-outside/k`, bytes('not mine'));
      const last = await s.create(`${p}c`, bytes('c1'));
      const mine = (await collect(s, p, start, last.modRevision)).filter((e) => e.key.startsWith(p));
      assert.deepEqual(
        mine.map((e) => [e.type, e.key.slice(p.length), text(e.value), text(e.prevValue)]),
        [
          ['put', 'a', 'a1', undefined],
          ['put', 'b', 'b1', undefined],
          ['put', 'a', 'a2', 'a1'],
          ['delete', 'b', undefined, 'b1'],
          ['put', 'b', 'b2', undefined],
          ['put', 'c', 'c1', undefined],
        ],
      );
      assert.equal(mine[2].prevModRevision, a.modRevision);
      assert.equal(mine[2].createRevision, a.createRevision);
      assert.equal(mine[2].revision, a2.modRevision);
      for (let r = start; r < last.modRevision; r++) {
        const got = await collect(s, p, r, last.modRevision);
        const expected = mine.filter((e) => e.revision > r);
        assert.deepEqual(got.map((e) => e.revision), expected.map((e) => e.revision), `watch after ${r}`);
      }
    });

    it('a watch started while writes run misses nothing and repeats nothing', async () => {
      await fresh();
      const start = await s.currentRevision();
      const total = 200;
      const writes = (async () => {
        let lastRev = 0;
        for (let i = 0; i < total; i++) lastRev = (await s.create(`${p}w${i}`, bytes(String(i)))).modRevision;
        return lastRev;
      })();
      await new Promise((r) => setTimeout(r, 2));
      const midway = await s.currentRevision();
      const watched = collect(s, p, midway, (e) => e.key === `${p}w${total - 1}`, 10_000);
      const lastRev = await writes;
      const events = await watched;
      const revs = events.map((e) => e.revision);
      assert.equal(new Set(revs).size, revs.length, 'no duplicates');
      for (let i = 1; i < revs.length; i++) assert.equal(revs[i], revs[i - 1] + 1, 'contiguous');
      assert.equal(revs[0], midway + 1);
      assert.equal(revs[revs.length - 1], lastRev);
      assert.equal(lastRev - start, total);
    });

    it('watch from now sees only later writes, and progress reports the revision', async () => {
      await fresh();
      await s.create(`${p}old`, bytes('old'));
      const progress: number[] = [];
      const events: WatchEvent[] = [];
      const w = s.watch(p, 0, {
        events: (e) => void events.push(...e),
        progress: (r) => void progress.push(r),
        error: (e) => assert.fail(e),
      });
      await new Promise((r) => setTimeout(r, 50));
      const n = await s.create(`${p}new`, bytes('new'));
      for (let i = 0; i < 100 && !events.length; i++) await new Promise((r) => setTimeout(r, 10));
      s.requestProgress();
      for (let i = 0; i < 100 && !progress.some((r) => r >= n.modRevision); i++) {
        await new Promise((r) => setTimeout(r, 20));
        if (i % 10 === 9) s.requestProgress();
      }
      w.stop();
      assert.deepEqual(events.map((e) => e.key.slice(p.length)), ['new']);
      assert.ok(progress.some((r) => r >= n.modRevision), `progress ${progress} reaches ${n.modRevision}`);
    });

    it('compaction: older reads fail with the oldest available revision', async () => {
      await fresh();
      const a = await s.create(`${p}a`, bytes('1'));
      const b = await s.update(`${p}a`, a.modRevision, bytes('2'));
      const c = await s.update(`${p}a`, b.modRevision, bytes('3'));
      // Compaction in production runs minutes behind the head; here it follows at once, so first let
      // every watcher (a cache's own backend watch) catch up, as it would have long since.
      await collect(s, p, a.modRevision - 1, c.modRevision);
      await s.compact(b.modRevision);
      assert.ok((await s.compactedRevision()) >= b.modRevision);
      const err = await s.get(`${p}a`, { atRevision: a.modRevision }).catch((e: unknown) => e);
      assert.ok(err instanceof CompactedError, `expected CompactedError, got ${err}`);
      assert.equal(err.compactRevision, b.modRevision);
      await assert.rejects(s.list(p, { atRevision: a.modRevision }), CompactedError);
      assert.equal(text((await s.get(`${p}a`, { atRevision: b.modRevision }))?.value), '2', 'the compaction revision itself stays readable');
      assert.equal(text((await s.list(p, { atRevision: b.modRevision })).items[0]?.value), '2');
      assert.equal(text((await s.get(`${p}a`))?.value), '3');
      const events = await collect(s, p, b.modRevision, c.modRevision);
      assert.deepEqual(events.map((e) => e.revision), [c.modRevision]);
      assert.equal(text(events[0].prevValue), '2');
      if (opts.watchFailsAfterCompaction) {
        const werr = await watchError(s, p, a.modRevision);
        assert.ok(werr instanceof CompactedError, `expected CompactedError, got ${werr}`);
      }
    });

    it('100 concurrent writers on one key: one winner per round, no lost update', async () => {
      await fresh();
      const key = `${p}counter`;
      const first = await s.create(key, bytes('0'));
      // Rounds: everybody tries to replace the same revision; exactly one may succeed.
      let rev = first.modRevision;
      for (let round = 0; round < 5; round++) {
        const results = await Promise.allSettled(
          Array.from({ length: 100 }, (_, i) => s.update(key, rev, bytes(`r${round}-w${i}`))),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `round ${round}: exactly one winner`);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError);
        rev = (won[0] as PromiseFulfilledResult<KeyValue>).value.modRevision;
      }
      // Read-modify-write with retries: every increment lands.
      const perWriter = 3;
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          for (let i = 0; i < perWriter; i++) {
            let cur = (await s.get(key))!;
            for (;;) {
              const n = Number(text(cur.value)?.startsWith('r') ? 0 : text(cur.value));
              try {
                await s.update(key, cur.modRevision, bytes(String(n + 1)));
                break;
              } catch (err) {
                if (!(err instanceof ConflictError)) throw err;
                cur = err.current;
              }
            }
          }
        }),
      );
      assert.equal(text((await s.get(key))?.value), String(100 * perWriter));
    });
  });
}
