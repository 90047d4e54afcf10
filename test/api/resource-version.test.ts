// Every row of the resourceVersion rules of get, list and watch (docs/rulings.md#r1), over real HTTP.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import type { RunningServer } from '../../src/server/server.ts';

const NS = 'rvtable';
const base = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
const lease = (name: string, holder = 'a') => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: holder } });

let server: RunningServer;
/** resourceVersion after the first three leases were created, before the fourth. */
let rvBefore: string;
let rvAfter: string;

before(async () => {
  server = await testServer();
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  for (const n of ['a', 'b', 'c']) assert.equal((await api(server, 'POST', base, lease(n))).status, 201);
  rvBefore = (await api(server, 'GET', base)).body.metadata.resourceVersion;
  const d = await api(server, 'POST', base, lease('d'));
  rvAfter = d.body.metadata.resourceVersion;
});

const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);
const list = (q: string) => api(server, 'GET', `${base}?${q}`);
const expect400 = async (q: string, fragment: string) => {
  const r = await list(q);
  assert.equal(r.status, 400, `${q}: ${r.text}`);
  assert.equal(r.body.reason, 'BadRequest');
  assert.equal(r.body.kind, 'Status');
  assert.match(r.body.message, new RegExp(fragment));
};

describe('get', () => {
  test('unset: most recent', async () => {
    const r = await api(server, 'GET', `${base}/d`);
    assert.equal(r.status, 200);
    assert.equal(r.body.metadata.resourceVersion, rvAfter);
  });
  test('"0": any version', async () => {
    const r = await api(server, 'GET', `${base}/a?resourceVersion=0`);
    assert.equal(r.status, 200);
    assert.equal(r.body.metadata.name, 'a');
  });
  test('non-zero: not older than', async () => {
    const r = await api(server, 'GET', `${base}/d?resourceVersion=${rvAfter}`);
    assert.equal(r.status, 200);
    assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvAfter) - 0);
  });
  test('too large: 504 Timeout with Retry-After', async () => {
    const r = await api(server, 'GET', `${base}/a?resourceVersion=${Number(rvAfter) + 1000}`);
    assert.equal(r.status, 504);
    assert.equal(r.body.reason, 'Timeout');
    assert.match(r.body.message, /Too large resource version/);
    assert.equal(r.headers.get('retry-after'), '1');
  });
  test('not a number: 400', async () => {
    const r = await api(server, 'GET', `${base}/a?resourceVersion=abc`);
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
  });
});

describe('list: resourceVersionMatch unset', () => {
  test('limit unset, rv unset: most recent', async () => {
    const r = await list('');
    assert.deepEqual(names(r.body), ['a', 'b', 'c', 'd']);
    assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvAfter));
  });
  test('limit unset, rv "0": any', async () => {
    const r = await list('resourceVersion=0');
    assert.equal(r.status, 200);
    assert.ok(names(r.body).includes('a'));
  });
  test('limit unset, rv non-zero: not older than (current state)', async () => {
    const r = await list(`resourceVersion=${rvBefore}`);
    assert.equal(r.status, 200);
    assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvBefore));
    assert.deepEqual(names(r.body), ['a', 'b', 'c', 'd']);
  });
  test('limit unset, rv too large: 504', async () => {
    const r = await list(`resourceVersion=${Number(rvAfter) + 1000}`);
    assert.equal(r.status, 504);
    assert.match(r.body.message, /Too large resource version/);
  });
  test('limit=n, rv unset: most recent, paged', async () => {
    const r = await list('limit=2');
    assert.deepEqual(names(r.body), ['a', 'b']);
    assert.equal(r.body.metadata.remainingItemCount, 2);
    assert.ok(r.body.metadata.continue);
  });
  test('limit=n, rv "0": any', async () => {
    const r = await list('limit=2&resourceVersion=0');
    assert.equal(r.status, 200);
    assert.equal(r.body.items.length, 2);
  });
  test('limit=n, rv non-zero: exact', async () => {
    const r = await list(`limit=10&resourceVersion=${rvBefore}`);
    assert.equal(r.status, 200);
    assert.deepEqual(names(r.body), ['a', 'b', 'c']);
    assert.equal(r.body.metadata.resourceVersion, rvBefore);
  });
  test('continue, rv unset: continue token, exact', async () => {
    const first = await list('limit=2');
    await api(server, 'POST', base, lease('bb'));
    const second = await list(`limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    assert.equal(second.status, 200);
    assert.deepEqual(names(second.body), ['c', 'd'], 'a write after the first chunk is not shown');
    assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
    assert.equal(second.body.metadata.continue, undefined);
    assert.equal(second.body.metadata.remainingItemCount, undefined);
    await api(server, 'DELETE', `${base}/bb`);
  });
  test('continue, rv "0": treated as continue token', async () => {
    const first = await list('limit=3');
    const second = await list(`limit=3&resourceVersion=0&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    assert.equal(second.status, 200);
    assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  });
  test('continue, rv non-zero: 400', async () => {
    const first = await list('limit=2');
    await expect400(`limit=2&resourceVersion=${rvAfter}&continue=${encodeURIComponent(first.body.metadata.continue)}`, 'specifying resource version is not allowed when using continue');
  });
});

describe('list: resourceVersionMatch=Exact', () => {
  test('rv unset: 400', () => expect400('resourceVersionMatch=Exact', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  test('rv "0": 400', () => expect400('resourceVersionMatch=Exact&resourceVersion=0', 'forbidden for resourceVersion "0"'));
  test('rv non-zero: exact', async () => {
    const r = await list(`resourceVersionMatch=Exact&resourceVersion=${rvBefore}`);
    assert.deepEqual(names(r.body), ['a', 'b', 'c']);
    assert.equal(r.body.metadata.resourceVersion, rvBefore);
  });
  test('limit=n, rv unset: 400', () => expect400('resourceVersionMatch=Exact&limit=1', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  test('limit=n, rv "0": 400', () => expect400('resourceVersionMatch=Exact&limit=1&resourceVersion=0', 'forbidden for resourceVersion "0"'));
  test('limit=n, rv non-zero: exact, paged', async () => {
    const r = await list(`resourceVersionMatch=Exact&limit=2&resourceVersion=${rvBefore}`);
    assert.deepEqual(names(r.body), ['a', 'b']);
    assert.equal(r.body.metadata.resourceVersion, rvBefore);
    assert.equal(r.body.metadata.remainingItemCount, 1);
  });
  test('too large: 504', async () => {
    const r = await list(`resourceVersionMatch=Exact&resourceVersion=${Number(rvAfter) + 1000}`);
    assert.equal(r.status, 504);
    assert.match(r.body.message, /Too large resource version/);
  });
  test('with continue: 400', async () => {
    const first = await list('limit=2');
    await expect400(`resourceVersionMatch=Exact&resourceVersion=${rvBefore}&continue=${encodeURIComponent(first.body.metadata.continue)}`, 'forbidden when continue is provided');
  });
});

describe('list: resourceVersionMatch=NotOlderThan', () => {
  test('rv unset: 400', () => expect400('resourceVersionMatch=NotOlderThan', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  test('rv "0": any', async () => {
    const r = await list('resourceVersionMatch=NotOlderThan&resourceVersion=0');
    assert.equal(r.status, 200);
    assert.ok(names(r.body).length >= 1);
  });
  test('rv non-zero: not older than', async () => {
    const r = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvBefore}`);
    assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvBefore));
    assert.deepEqual(names(r.body), ['a', 'b', 'c', 'd']);
  });
  test('limit=n, rv unset: 400', () => expect400('resourceVersionMatch=NotOlderThan&limit=1', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  test('limit=n, rv "0": any', async () => {
    const r = await list('resourceVersionMatch=NotOlderThan&limit=1&resourceVersion=0');
    assert.equal(r.body.items.length, 1);
    assert.ok(r.body.metadata.continue);
  });
  test('limit=n, rv non-zero: not older than', async () => {
    const r = await list(`resourceVersionMatch=NotOlderThan&limit=3&resourceVersion=${rvBefore}`);
    assert.ok(Number(r.body.metadata.resourceVersion) >= Number(rvAfter));
    assert.deepEqual(names(r.body), ['a', 'b', 'c']);
  });
  test('unsupported value: 400', () => expect400(`resourceVersionMatch=Newest&resourceVersion=${rvBefore}`, 'Unsupported value'));
});

describe('watch', () => {
  test('rv unset: initial ADDED events, then changes', async () => {
    const w = readWatch(server.url + base + '?watch=1');
    const initial = await w.next(4);
    assert.deepEqual(initial.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'a'], ['ADDED', 'b'], ['ADDED', 'c'], ['ADDED', 'd']]);
    await api(server, 'POST', base, lease('w1'));
    const [ev] = await w.next(1);
    assert.equal(ev!.type, 'ADDED');
    assert.equal(ev!.object.metadata.name, 'w1');
    w.close();
    await api(server, 'DELETE', `${base}/w1`);
  });
  test('rv "0": initial ADDED events from the cache', async () => {
    const w = readWatch(`${server.url}${base}?watch=1&resourceVersion=0`);
    const initial = await w.next(4);
    assert.ok(initial.every((e) => e.type === 'ADDED'));
    w.close();
  });
  test('rv non-zero: starts exactly there, no initial events', async () => {
    const w = readWatch(`${server.url}${base}?watch=1&resourceVersion=${rvBefore}`);
    const [ev] = await w.next(1);
    assert.equal(ev!.type, 'ADDED');
    assert.equal(ev!.object.metadata.name, 'd', 'only the write after rvBefore');
    assert.equal(ev!.object.metadata.resourceVersion, rvAfter);
    w.close();
  });
  test('sendInitialEvents with NotOlderThan: ADDED events then the initial-events-end bookmark', async () => {
    const w = readWatch(`${server.url}${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    const evs = await w.next(5);
    assert.deepEqual(evs.slice(0, 4).map((e) => e.type), ['ADDED', 'ADDED', 'ADDED', 'ADDED']);
    const bm = evs[4]!;
    assert.equal(bm.type, 'BOOKMARK');
    assert.equal(bm.object.metadata.annotations['orch.io/initial-events-end'], 'true');
    assert.equal(bm.object.kind, 'Lease');
    assert.ok(Number(bm.object.metadata.resourceVersion) >= Number(rvAfter));
    w.close();
  });
  test('sendInitialEvents=true with a resourceVersion waits for it and ends with the bookmark', async () => {
    const w = readWatch(`${server.url}${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rvAfter}`);
    const evs = await w.next(5);
    assert.equal(evs[4]!.type, 'BOOKMARK');
    w.close();
  });
  test('sendInitialEvents=false with NotOlderThan: no initial events', async () => {
    const now = (await list('')).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${base}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${now}`);
    await api(server, 'POST', base, lease('w2'));
    const [ev] = await w.next(1);
    assert.equal(ev!.object.metadata.name, 'w2');
    w.close();
    await api(server, 'DELETE', `${base}/w2`);
  });
  for (const [q, fragment] of [
    ['sendInitialEvents=true', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
    ['resourceVersionMatch=NotOlderThan&resourceVersion=1', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
    ['sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 'allowWatchBookmarks must be set to true when sendInitialEvents is true'],
    ['sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true', 'Unsupported value'],
  ] as const) {
    test(`invalid: ${q} → 400`, async () => {
      const r = await api(server, 'GET', `${base}?watch=1&${q}`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.reason, 'BadRequest');
      assert.match(r.body.message, new RegExp(fragment));
    });
  }
  test('sendInitialEvents on a list: 400', () => expect400('sendInitialEvents=true', 'sendInitialEvents is forbidden for list'));
});

describe('history that is gone', () => {
  test('watch from before the window: ERROR event with 410 Expired', async () => {
    const s = await testServer({ storageRetentionMs: 200, watchCacheRetentionMs: 200 });
    const path = '/apis/coordination.orch.io/v1/namespaces/default/leases';
    const first = await api(s, 'POST', path, lease('x'));
    const oldRv = first.body.metadata.resourceVersion;
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 400));
      await api(s, 'PUT', `${path}/x`, { ...lease('x', `h${i}`) });
    }
    // Wait for the store's compaction to pass the old revision.
    let listed = { status: 200, body: {} as { reason?: string; message?: string } };
    for (let i = 0; i < 40 && listed.status !== 410; i++) {
      await new Promise((r) => setTimeout(r, 250));
      listed = await api(s, 'GET', `${path}?limit=1&resourceVersion=${oldRv}`);
    }
    assert.equal(listed.status, 410, 'Exact list of a compacted version is 410');
    // kube-apiserver's words for a list (a watch names the versions, below).
    assert.equal(listed.body.reason, 'Expired');
    assert.equal(listed.body.message, 'The resourceVersion for the provided list is too old.');
    const exact = await api(s, 'GET', `${path}?resourceVersion=${oldRv}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 410);
    assert.equal(exact.body.message, 'The resourceVersion for the provided list is too old.');
    const w = readWatch(`${s.url}${path}?watch=1&resourceVersion=${oldRv}`);
    const [ev] = await w.next(1);
    assert.equal(ev!.type, 'ERROR');
    assert.equal(ev!.object.code, 410);
    assert.equal(ev!.object.reason, 'Expired');
    assert.match(ev!.object.message, /too old resource version/);
    await w.ended;
  });
  test('expired continue token: 410 Expired', async () => {
    const s = await testServer({ storageRetentionMs: 200, watchCacheRetentionMs: 200 });
    const path = '/apis/coordination.orch.io/v1/namespaces/default/leases';
    for (const n of ['p', 'q', 'r']) await api(s, 'POST', path, lease(n));
    const first = await api(s, 'GET', `${path}?limit=1`);
    let r = { status: 200, body: {} as { reason?: string; message?: string } };
    for (let i = 0; i < 40 && r.status !== 410; i++) {
      await new Promise((res) => setTimeout(res, 250));
      await api(s, 'PUT', `${path}/p`, lease('p', `t${i}`));
      r = await api(s, 'GET', `${path}?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    }
    assert.equal(r.status, 410);
    assert.equal(r.body.reason, 'Expired');
    assert.match(r.body.message ?? '', /continue parameter is too old/);
  });
});
