// etcd-specific behaviour of EtcdStorage: failover, unreachable clusters, compaction bookkeeping,
// several API servers on one etcd, progress requests. The generic Storage contract (CAS, paging,
// watch ordering, ...) is covered by the shared conformance suite.
//
// Run: node --import tsx --test test/storage/etcd-backend.test.ts
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import { CompactedError, ConflictError, FutureRevisionError, KeyExistsError, UnavailableError } from '../../src/storage/errors.ts';
import type { Watch, WatchEvent } from '../../src/storage/interface.ts';
import { COMPACT_KEY, readCompactKey } from '../../src/storage/etcd/compactor.ts';
import { Endpoint, EndpointPool, progressRequestIsOrdered } from '../../src/storage/etcd/endpoints.ts';
import type { StatusResponse } from '../../src/storage/etcd/proto.ts';
import { openEtcdStorage, type EtcdStorage } from '../../src/storage/etcd/etcd-storage.ts';
import { startEtcd, type EtcdCluster } from '../support/etcd.ts';

const enc = (s: string) => Buffer.from(s);
let seq = 0;
/** A prefix no other test touches, so tests can share one etcd. */
const freshPrefix = (name: string) => `/registry/etcdtest/${name}-${process.pid}-${++seq}/`;

/** An address nothing listens on: connecting is refused at once. */
async function deadEndpoint(): Promise<string> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/** Collects a watch's output and lets a test wait for a condition on it. */
class Recorder {
  events: WatchEvent[] = [];
  progress: number[] = [];
  errors: Error[] = [];
  private waiters: (() => void)[] = [];
  readonly handler = {
    events: (evs: WatchEvent[]) => {
      this.events.push(...evs);
      this.wake();
    },
    progress: (rev: number) => {
      this.progress.push(rev);
      this.wake();
    },
    error: (err: Error) => {
      this.errors.push(err);
      this.wake();
    },
  };
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
}

function assertStrictlyIncreasing(events: WatchEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    assert.ok(events[i].revision > events[i - 1].revision, `event ${i} revision ${events[i].revision} after ${events[i - 1].revision}`);
  }
}

describe('etcd backend: one member', () => {
  let etcd: EtcdCluster;
  const open: EtcdStorage[] = [];
  const openStorage = async (extra: { endpoints?: string[]; requestTimeoutMs?: number; compactionIntervalMs?: number } = {}) => {
    const s = await openEtcdStorage({ endpoints: etcd.endpoints, compactionIntervalMs: 0, ...extra });
    open.push(s);
    return s;
  };

  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await Promise.all(open.map((s) => s.close()));
    await etcd?.stop();
  });

  test('an endpoint list whose first address is dead still works', async () => {
    const dead = await deadEndpoint();
    const s = await openStorage({ endpoints: [dead, ...etcd.endpoints], requestTimeoutMs: 5_000 });
    const p = freshPrefix('firstdead');
    const rec = new Recorder();
    const w = s.watch(p, 0, rec.handler);
    const kv = await s.create(`${p}a`, enc('1'));
    assert.equal((await s.get(`${p}a`))?.modRevision, kv.modRevision);
    assert.equal(s.activeEndpoint, etcd.endpoints[0]);
    await rec.until('the event', () => rec.events.length === 1);
    assert.equal(rec.events[0].revision, kv.modRevision);
    assert.equal((await s.health()).healthy, true);
    w.stop();
  });

  test('every endpoint dead: UnavailableError within the deadline, never a hang', async () => {
    const timeout = 1_500;
    const s = await openStorage({ endpoints: [await deadEndpoint(), await deadEndpoint()], requestTimeoutMs: timeout });
    // All at once, to keep the test short; each is timed on its own.
    const timed = async (op: () => Promise<unknown>) => {
      const t0 = Date.now();
      await assert.rejects(op(), UnavailableError);
      return Date.now() - t0;
    };
    const rec = new Recorder();
    const [took, h] = await Promise.all([
      Promise.all([() => s.create('/registry/x', enc('1')), () => s.get('/registry/x'), () => s.list('/registry/'), () => s.currentRevision()].map(timed)),
      s.health(),
      // A watch cannot be established either: it ends with UnavailableError instead of waiting forever.
      (async () => {
        s.watch('/registry/', 0, rec.handler);
        await rec.until('the watch error', () => rec.errors.length > 0, timeout + 3_000);
      })(),
    ]);
    for (const ms of took) assert.ok(ms < timeout + 1_000, `rejected after ${ms} ms`);
    assert.equal(h.healthy, false);
    assert.ok(h.message.length > 0);
    assert.ok(rec.errors[0] instanceof UnavailableError, String(rec.errors[0]));
  });

  test('compaction: CompactedError with the compact revision for get, list and watch', async () => {
    const s = await openStorage();
    const other = await openStorage();
    const p = freshPrefix('compact');
    const a1 = await s.create(`${p}a`, enc('1'));
    const a2 = await s.update(`${p}a`, a1.modRevision, enc('2'));
    const b = await s.create(`${p}b`, enc('b'));
    const a3 = await s.update(`${p}a`, a2.modRevision, enc('3'));
    const target = b.modRevision;

    await s.compact(target);
    assert.equal(await s.compactedRevision(), target);
    // The bookkeeping key is shared: another API server knows the compact revision too.
    assert.equal(await other.compactedRevision(), target);

    const err = await s.get(`${p}a`, { atRevision: a2.modRevision }).catch((e: unknown) => e);
    assert.ok(err instanceof CompactedError, String(err));
    assert.equal(err.requestedRevision, a2.modRevision);
    assert.equal(err.compactRevision, target);
    // The compact revision itself stays readable, as in etcd.
    assert.deepEqual((await s.get(`${p}a`, { atRevision: target }))?.value, enc('2'));

    const lerr = await other.list(p, { atRevision: a1.modRevision }).catch((e: unknown) => e);
    assert.ok(lerr instanceof CompactedError, String(lerr));
    assert.equal(lerr.compactRevision, target);
    assert.equal(lerr.requestedRevision, a1.modRevision);

    const rec = new Recorder();
    s.watch(p, a1.modRevision, rec.handler);
    await rec.until('the watch error', () => rec.errors.length > 0);
    const werr = rec.errors[0];
    assert.ok(werr instanceof CompactedError, String(werr));
    assert.equal(werr.compactRevision, target);
    assert.equal(werr.requestedRevision, a1.modRevision);
    assert.equal(rec.events.length, 0);

    // Watching needs the state at its start to be readable, like a read: from `target` it works
    // (and every event carries its prevValue); from just before it, it is refused too.
    const ok = new Recorder();
    const w = s.watch(p, target, ok.handler);
    await ok.until('replayed events', () => ok.events.length === 1);
    assert.equal(ok.events[0].revision, a3.modRevision);
    assert.deepEqual(ok.events[0].prevValue, enc('2'));
    w.stop();
    const edge = new Recorder();
    s.watch(p, target - 1, edge.handler);
    await edge.until('the watch error', () => edge.errors.length > 0);
    assert.ok(edge.errors[0] instanceof CompactedError);
    assert.equal((edge.errors[0] as CompactedError).compactRevision, target);

    // Compacting to an older revision is a no-op; a future one is refused.
    await s.compact(a1.modRevision);
    assert.equal(await s.compactedRevision(), target);
    await assert.rejects(s.compact((await s.currentRevision()) + 100), FutureRevisionError);
    await assert.rejects(s.get(`${p}a`, { atRevision: (await s.currentRevision()) + 100 }), FutureRevisionError);
  });

  test('the compaction bookkeeping key never shows up in lists or watches', async () => {
    const s = await openStorage();
    const rec = new Recorder();
    const w = s.watch('', 0, rec.handler);
    await s.compact(await s.currentRevision()); // writes the key
    const k = await s.create(`${freshPrefix('hidden')}k`, enc('v'));
    await rec.until('the create event', () => rec.events.some((e) => e.key === k.key));
    assert.ok(rec.events.every((e) => e.key !== COMPACT_KEY));
    const all = await s.list('');
    assert.ok(all.items.every((i) => i.key !== COMPACT_KEY));
    assert.ok(all.items.some((i) => i.key === k.key));
    w.stop();
  });

  test('two API servers on one etcd see each other’s writes and events', async () => {
    const s1 = await openStorage();
    const s2 = await openStorage();
    const p = freshPrefix('two');
    const r1 = new Recorder();
    const r2 = new Recorder();
    const w1 = s1.watch(p, 0, r1.handler);
    const w2 = s2.watch(p, 0, r2.handler);
    // Make sure both watches are established before writing: a "from now" watch starts at creation.
    s1.requestProgress();
    s2.requestProgress();
    await r1.until('watch 1 up', () => r1.progress.length > 0);
    await r2.until('watch 2 up', () => r2.progress.length > 0);

    const a = await s1.create(`${p}a`, enc('from-1'));
    assert.deepEqual((await s2.get(`${p}a`))?.value, enc('from-1'));
    const a2 = await s2.update(`${p}a`, a.modRevision, enc('from-2'));
    // s1's stale CAS loses to s2's write and learns the current value.
    const conflict = await s1.update(`${p}a`, a.modRevision, enc('stale')).catch((e: unknown) => e);
    assert.ok(conflict instanceof ConflictError);
    assert.equal(conflict.current.modRevision, a2.modRevision);
    const del = await s1.delete(`${p}a`, a2.modRevision);

    for (const r of [r1, r2]) {
      await r.until('three events', () => r.events.length === 3);
      assert.deepEqual(
        r.events.map((e) => [e.type, e.revision]),
        [
          ['put', a.modRevision],
          ['put', a2.modRevision],
          ['delete', del.revision],
        ],
      );
      assert.deepEqual(r.events[1].prevValue, enc('from-1'));
      assert.equal(r.events[2].createRevision, a.modRevision);
    }
    assert.equal(await s1.currentRevision(), await s2.currentRevision());
    w1.stop();
    w2.stop();
  });

  test('requestProgress triggers handler.progress, after the events it covers', async () => {
    const s = await openStorage();
    const p = freshPrefix('progress');
    const a = await s.create(`${p}a`, enc('1'));
    const b = await s.create(`${p}b`, enc('2'));
    // A watch resuming from the past: progress must not be reported ahead of its replay.
    const rec = new Recorder();
    const order: string[] = [];
    const w = s.watch(p, a.modRevision - 1, {
      events: (evs) => {
        order.push(...evs.map((e) => `event ${e.revision}`));
        rec.handler.events(evs);
      },
      progress: (rev) => {
        order.push(`progress ${rev}`);
        rec.handler.progress(rev);
      },
      error: rec.handler.error,
    });
    await rec.until('the replay', () => rec.events.length === 2);
    const current = await s.currentRevision();
    s.requestProgress();
    await rec.until('a progress notification', () => rec.progress.length > 0);
    assert.ok(rec.progress[0] >= current, `progress ${rec.progress[0]} < current ${current}`);
    assert.deepEqual(order.slice(0, 2), [`event ${a.modRevision}`, `event ${b.modRevision}`]);
    assert.deepEqual(rec.errors, []);
    w.stop();

    assert.equal(progressRequestIsOrdered('3.4.23'), false);
    assert.equal(progressRequestIsOrdered('3.4.31'), true);
    assert.equal(progressRequestIsOrdered('3.5.12'), false);
    assert.equal(progressRequestIsOrdered('3.5.13'), true);
    assert.equal(progressRequestIsOrdered('3.6.0'), true);
    assert.equal(await s.watchProgressOrdered(), progressRequestIsOrdered(await s.serverVersion()));
  });

  test('auto compaction: servers sharing an etcd compact once per interval between them', async () => {
    const interval = 300;
    const pool = new EndpointPool(etcd.endpoints, 5_000);
    try {
      const before = await readCompactKey(pool);
      const s1 = await openStorage({ compactionIntervalMs: interval });
      const s2 = await openStorage({ compactionIntervalMs: interval });
      const p = freshPrefix('auto');
      const t0 = Date.now();
      const first = await s1.create(`${p}k`, enc('0'));
      let last = first;
      while (Date.now() - t0 < 6 * interval) {
        last = await s1.update(`${p}k`, last.modRevision, enc(String(Date.now())));
        await new Promise((r) => setTimeout(r, 20));
      }
      const elapsed = Date.now() - t0;
      const afterState = await readCompactKey(pool);
      const writes = afterState.version - before.version;
      // One winner per interval (plus slack for timer drift); two uncoordinated compactors would double it.
      assert.ok(writes >= 2, `only ${writes} compaction rounds`);
      assert.ok(writes <= Math.ceil(elapsed / interval) + 1, `${writes} compaction rounds in ${elapsed} ms`);
      const compacted = await s2.compactedRevision();
      assert.ok(compacted > first.modRevision, `compacted to ${compacted}`);
      await assert.rejects(s2.get(`${p}k`, { atRevision: first.modRevision }), CompactedError);
      await s1.close();
      await s2.close();
    } finally {
      pool.close();
    }
  });
});

describe('etcd backend: three members', () => {
  let etcd: EtcdCluster;
  before(async () => {
    etcd = await startEtcd({ members: 3 });
  });
  after(async () => {
    await etcd?.stop();
  });

  test('killing the member in use (the leader): writes, reads and an open watch continue, nothing lost or repeated', async () => {
    // Put the leader first so the client uses it: its death costs an election, the harder case.
    const leader = await leaderOf(etcd.endpoints);
    const endpoints = [leader, ...etcd.endpoints.filter((e) => e !== leader)];
    const s = await openEtcdStorage({ endpoints, compactionIntervalMs: 0, requestTimeoutMs: 15_000 });
    try {
      const p = freshPrefix('failover');
      const rec = new Recorder();
      let w: Watch = s.watch(p, 0, rec.handler);
      s.requestProgress();
      await rec.until('watch up', () => rec.progress.length > 0);
      assert.equal(s.activeEndpoint, leader);
      assert.equal(s.watchEndpoint, leader, 'the watch shares the member used for requests');

      // One writer keeps going while the member dies, so a write can be in flight at that moment.
      const written: number[] = [];
      let ambiguous = 0;
      let stop = false;
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          const key = `${p}k${String(i).padStart(4, '0')}`;
          try {
            written.push((await s.create(key, enc(`v${i}`))).modRevision);
          } catch (err) {
            // The documented retry caveat: our own write committed, the reply was lost, the retry
            // found the key. It must be our value, and it must still produce exactly one event.
            assert.ok(err instanceof KeyExistsError, String(err));
            const kv = await s.get(key);
            assert.deepEqual(kv?.value, enc(`v${i}`));
            written.push(kv!.modRevision);
            ambiguous++;
          }
        }
      })();
      const waitWrites = async (n: number) => {
        while (written.length < n) await new Promise((r) => setTimeout(r, 10));
      };
      await waitWrites(15);
      await etcd.members.find((m) => m.endpoint === leader)!.kill();
      const atKill = written.length;
      await waitWrites(atKill + 20);
      stop = true;
      await writer;

      assert.notEqual(s.activeEndpoint, leader);
      const listed = await s.list(p);
      assert.equal(listed.items.length, written.length);
      await rec.until('every event', () => rec.events.length >= written.length, 20_000);
      assert.deepEqual(rec.errors, []);
      assert.deepEqual(
        rec.events.map((e) => e.revision),
        written,
      );
      assertStrictlyIncreasing(rec.events);
      assert.notEqual(s.watchEndpoint, leader);
      w.stop();
      if (ambiguous) console.log(`# ${ambiguous} write(s) were retried after committing`);

      // A watch started after the failover replays the same history from the survivors.
      const late = new Recorder();
      w = s.watch(p, written[0] - 1, late.handler);
      await late.until('replay', () => late.events.length === written.length);
      assert.deepEqual(
        late.events.map((e) => e.revision),
        written,
      );
      w.stop();
      assert.equal((await s.health()).healthy, true);
    } finally {
      await s.close();
    }
  });
});

/** The client URL of the current raft leader, from each member's Status. */
async function leaderOf(urls: string[]): Promise<string> {
  for (const url of urls) {
    const ep = new Endpoint(url);
    try {
      const st = await new Promise<StatusResponse>((resolve, reject) =>
        ep.maintenance.Status({}, new Metadata(), { deadline: Date.now() + 5_000 }, (err, res) => (err ? reject(err) : resolve(res!))),
      );
      if (st.leader === st.header.member_id) return url;
    } finally {
      ep.close();
    }
  }
  throw new Error('no leader found');
}
