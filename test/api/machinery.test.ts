// Generic API machinery over real HTTP: create/update/delete semantics, dry run, finalizers,
// selectors, watch behaviour, field validation levels, discovery, health and the filter chain.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { api, startTrusted, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';

const server = await testServer();
const NS = 'mach';
const leases = (ns = NS) => `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
const lease = (name: string, extra: Record<string, unknown> = {}, spec: Record<string, unknown> = { holderIdentity: 'a' }) => ({
  apiVersion: 'coordination.orch.io/v1',
  kind: 'Lease',
  metadata: { name, ...extra },
  spec,
});
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${NS}-2` } })).status, 201);

const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);

describe('create', () => {
  test('sets uid, creationTimestamp and resourceVersion; 201 with the object', async () => {
    const r = await api(server, 'POST', leases(), lease('c1'));
    assert.equal(r.status, 201);
    assert.match(r.body.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(r.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(r.body.metadata.resourceVersion, /^\d+$/);
    assert.equal(r.body.metadata.namespace, NS);
    const again = await api(server, 'POST', leases(), lease('c1'));
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
    assert.equal(again.body.message, 'leases.coordination.orch.io "c1" already exists');
  });
  test('generateName makes a unique name from the prefix', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const r = await api(server, 'POST', leases(), { ...lease(''), metadata: { generateName: 'gen-' } });
      assert.equal(r.status, 201);
      assert.match(r.body.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      made.add(r.body.metadata.name);
    }
    assert.equal(made.size, 5);
  });
  test('name or generateName is required', async () => {
    const r = await api(server, 'POST', leases(), { ...lease(''), metadata: {} });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.details.causes[0].field, 'metadata.name');
  });
  test('a body namespace must match the URL', async () => {
    const r = await api(server, 'POST', leases(), lease('c2', { namespace: 'other' }));
    assert.equal(r.status, 400);
    assert.equal(r.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
  });
  test('dryRun=All: same code and shape, nothing stored', async () => {
    const r = await api(server, 'POST', `${leases()}?dryRun=All`, lease('dry'));
    assert.equal(r.status, 201);
    assert.equal(r.body.metadata.name, 'dry');
    assert.ok(r.body.metadata.uid);
    assert.equal((await api(server, 'GET', `${leases()}/dry`)).status, 404);
  });
});

describe('update and patch', () => {
  test('PUT with the current resourceVersion updates; stale is 409; without one is unconditional', async () => {
    const c = (await api(server, 'POST', leases(), lease('u1'))).body;
    const up = await api(server, 'PUT', `${leases()}/u1`, { ...c, spec: { holderIdentity: 'b' } });
    assert.equal(up.status, 200);
    assert.notEqual(up.body.metadata.resourceVersion, c.metadata.resourceVersion);
    assert.equal(up.body.metadata.uid, c.metadata.uid);
    assert.equal(up.body.metadata.creationTimestamp, c.metadata.creationTimestamp);
    const stale = await api(server, 'PUT', `${leases()}/u1`, { ...c, spec: { holderIdentity: 'c' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(stale.body.message, 'Operation cannot be fulfilled on leases.coordination.orch.io "u1": the object has been modified; please apply your changes to the latest version and try again');
    const { resourceVersion: _rv, ...metaNoRv } = c.metadata;
    const uncond = await api(server, 'PUT', `${leases()}/u1`, { ...c, metadata: metaNoRv, spec: { holderIdentity: 'd' } });
    assert.equal(uncond.status, 200);
    assert.equal(uncond.body.spec.holderIdentity, 'd');
  });
  test('an identical update writes nothing', async () => {
    const c = (await api(server, 'GET', `${leases()}/u1`)).body;
    const same = await api(server, 'PUT', `${leases()}/u1`, c);
    assert.equal(same.status, 200);
    assert.equal(same.body.metadata.resourceVersion, c.metadata.resourceVersion);
  });
  test('PUT of a missing object: a Lease is created (201), a Node is 404', async () => {
    const r = await api(server, 'PUT', `${leases()}/put-created`, lease('put-created'));
    assert.equal(r.status, 201);
    assert.ok(r.body.metadata.uid);
    assert.equal((await api(server, 'GET', `${leases()}/put-created`)).status, 200);
    const dry = await api(server, 'PUT', `${leases()}/put-dry?dryRun=All`, lease('put-dry'));
    assert.equal(dry.status, 201);
    assert.equal((await api(server, 'GET', `${leases()}/put-dry`)).status, 404);
    const n = await api(server, 'PUT', '/api/v1/nodes/absent', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'absent' } });
    assert.equal(n.status, 404);
    assert.equal(n.body.reason, 'NotFound');
  });
  test('merge patch, JSON patch and a resourceVersion precondition inside a patch', async () => {
    const c = (await api(server, 'POST', leases(), lease('p1', { labels: { a: '1' } }))).body;
    const mp = await api(server, 'PATCH', `${leases()}/p1`, { metadata: { labels: { b: '2' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(mp.status, 200);
    assert.deepEqual(mp.body.metadata.labels, { a: '1', b: '2' });
    const jp = await api(server, 'PATCH', `${leases()}/p1`, [{ op: 'test', path: '/spec/holderIdentity', value: 'a' }, { op: 'replace', path: '/spec/holderIdentity', value: 'z' }], {
      'Content-Type': 'application/json-patch+json',
    });
    assert.equal(jp.status, 200);
    assert.equal(jp.body.spec.holderIdentity, 'z');
    const stale = await api(server, 'PATCH', `${leases()}/p1`, { metadata: { resourceVersion: c.metadata.resourceVersion }, spec: { holderIdentity: 'y' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(stale.status, 409);
    const fresh = await api(server, 'PATCH', `${leases()}/p1`, { metadata: { resourceVersion: jp.body.metadata.resourceVersion }, spec: { holderIdentity: 'y' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.spec.holderIdentity, 'y');
  });
  test('dryRun on update and patch stores nothing', async () => {
    const before = (await api(server, 'GET', `${leases()}/p1`)).body;
    const put = await api(server, 'PUT', `${leases()}/p1?dryRun=All`, { ...before, spec: { holderIdentity: 'dry' } });
    assert.equal(put.status, 200);
    assert.equal(put.body.spec.holderIdentity, 'dry');
    const patch = await api(server, 'PATCH', `${leases()}/p1?dryRun=All`, { spec: { holderIdentity: 'dry2' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patch.status, 200);
    assert.equal(patch.body.spec.holderIdentity, 'dry2');
    const after = (await api(server, 'GET', `${leases()}/p1`)).body;
    assert.deepEqual(after, before);
  });
  test('strategic merge patch merges lists by their merge key', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'smp-node' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.equal((await api(server, 'POST', '/api/v1/nodes', node)).status, 201);
    const r = await api(server, 'PATCH', '/api/v1/nodes/smp-node/status', { status: { conditions: [{ type: 'DiskPressure', status: 'False' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    // A new item goes before the ones only the server has, as Kubernetes' strategicpatch orders them.
    assert.deepEqual(r.body.status.conditions.map((c: { type: string }) => c.type), ['DiskPressure', 'Ready']);
    const del = await api(server, 'PATCH', '/api/v1/nodes/smp-node/status', { status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.deepEqual(del.body.status.conditions.map((c: { type: string }) => c.type), ['DiskPressure']);
  });
});

describe('field validation', () => {
  test('Warn (default): one Warning header per unknown or duplicate field; unknown fields dropped', async () => {
    const body = '{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"fv1","name":"fv1"},"spec":{"holderIdentity":"a","x":1,"y":2}}';
    const r = await api(server, 'POST', leases(), body);
    assert.equal(r.status, 201);
    const warnings = r.headers.get('warning') ?? '';
    assert.match(warnings, /299 - "unknown field \\"spec.x\\""/);
    assert.match(warnings, /299 - "unknown field \\"spec.y\\""/);
    assert.match(warnings, /299 - "duplicate field \\"metadata.name\\""/);
    assert.equal(r.body.spec.x, undefined);
  });
  test('Ignore: no warnings, unknown fields dropped', async () => {
    const r = await api(server, 'POST', `${leases()}?fieldValidation=Ignore`, lease('fv2', {}, { holderIdentity: 'a', x: 1 }));
    assert.equal(r.status, 201);
    assert.equal(r.headers.get('warning'), null);
    assert.equal(r.body.spec.x, undefined);
  });
  test('Strict: 400 listing every unknown and duplicate field, nothing stored', async () => {
    const body = '{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"fv3"},"spec":{"holderIdentity":"a","x":1,"holderIdentity":"b"},"extra":true}';
    const r = await api(server, 'POST', `${leases()}?fieldValidation=Strict`, body);
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.match(r.body.message, /^strict decoding error: /);
    for (const f of ['spec.x', 'extra']) assert.match(r.body.message, new RegExp(`unknown field "${f}"`));
    assert.match(r.body.message, /duplicate field "spec.holderIdentity"/);
    assert.equal((await api(server, 'GET', `${leases()}/fv3`)).status, 404);
  });
  test('Strict on a merge patch', async () => {
    const r = await api(server, 'PATCH', `${leases()}/fv2?fieldValidation=Strict`, { spec: { nope: 1 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r.status, 400);
    assert.match(r.body.message, /unknown field "spec.nope"/);
  });
  test('a wrong type is 400 naming the field', async () => {
    const r = await api(server, 'POST', leases(), lease('fv4', {}, { leaseDurationSeconds: 'ten' }));
    assert.equal(r.status, 400);
    assert.match(r.body.message, /spec.leaseDurationSeconds/);
  });
});

describe('delete', () => {
  test('without finalizers: 200 Status Success naming the object', async () => {
    await api(server, 'POST', leases(), lease('d1'));
    const r = await api(server, 'DELETE', `${leases()}/d1`);
    assert.equal(r.status, 200);
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.status, 'Success');
    assert.equal(r.body.details.name, 'd1');
    assert.equal(r.body.details.kind, 'leases');
    assert.equal(r.body.details.group, 'coordination.orch.io');
    assert.equal((await api(server, 'GET', `${leases()}/d1`)).status, 404);
  });
  test('with finalizers: deletionTimestamp set, object stays until the last finalizer goes', async () => {
    await api(server, 'POST', leases(), lease('d2', { finalizers: ['example.com/a', 'example.com/b'] }));
    const r = await api(server, 'DELETE', `${leases()}/d2`);
    assert.equal(r.status, 200);
    assert.equal(r.body.kind, 'Lease');
    assert.ok(r.body.metadata.deletionTimestamp);
    assert.equal(r.body.metadata.deletionGracePeriodSeconds, 0);
    const again = await api(server, 'DELETE', `${leases()}/d2`);
    assert.equal(again.status, 200);
    assert.equal(again.body.metadata.deletionTimestamp, r.body.metadata.deletionTimestamp);
    const one = await api(server, 'PATCH', `${leases()}/d2`, { metadata: { finalizers: ['example.com/b'] } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(one.status, 200);
    assert.equal((await api(server, 'GET', `${leases()}/d2`)).status, 200);
    const last = await api(server, 'PATCH', `${leases()}/d2`, [{ op: 'remove', path: '/metadata/finalizers' }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(last.status, 200);
    assert.equal((await api(server, 'GET', `${leases()}/d2`)).status, 404);
  });
  test('an update cannot clear deletionTimestamp', async () => {
    await api(server, 'POST', leases(), lease('d3', { finalizers: ['example.com/a'] }));
    const del = (await api(server, 'DELETE', `${leases()}/d3`)).body;
    const { deletionTimestamp: _d, ...meta } = del.metadata;
    const up = await api(server, 'PUT', `${leases()}/d3`, { ...del, metadata: meta, spec: { holderIdentity: 'q' } });
    assert.equal(up.status, 200);
    assert.equal(up.body.metadata.deletionTimestamp, del.metadata.deletionTimestamp);
    await api(server, 'PATCH', `${leases()}/d3`, { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
  });
  test('preconditions on uid and resourceVersion', async () => {
    const c = (await api(server, 'POST', leases(), lease('d4'))).body;
    const wrong = await api(server, 'DELETE', `${leases()}/d4`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } });
    assert.equal(wrong.status, 409);
    assert.match(wrong.body.message, /Precondition failed: UID in precondition: nope/);
    const right = await api(server, 'DELETE', `${leases()}/d4`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } });
    assert.equal(right.status, 200);
  });
  test('dryRun delete keeps the object; propagationPolicy and gracePeriodSeconds are accepted', async () => {
    await api(server, 'POST', leases(), lease('d5'));
    const dry = await api(server, 'DELETE', `${leases()}/d5?dryRun=All`);
    assert.equal(dry.status, 200);
    assert.equal(dry.body.status, 'Success');
    assert.equal((await api(server, 'GET', `${leases()}/d5`)).status, 200);
    const real = await api(server, 'DELETE', `${leases()}/d5?gracePeriodSeconds=0&propagationPolicy=Background`);
    assert.equal(real.status, 200);
    assert.equal((await api(server, 'GET', `${leases()}/d5`)).status, 404);
  });
  test('deletecollection deletes what the selector picks, 200 Status Success', async () => {
    for (const [n, tier] of [['dc1', 'x'], ['dc2', 'x'], ['dc3', 'y']]) await api(server, 'POST', leases(`${NS}-2`), lease(n!, { labels: { tier: tier! } }));
    const dry = await api(server, 'DELETE', `${leases(`${NS}-2`)}?labelSelector=tier%3Dx&dryRun=All`);
    assert.equal(dry.status, 200);
    assert.equal(names((await api(server, 'GET', leases(`${NS}-2`))).body).length, 3);
    const r = await api(server, 'DELETE', `${leases(`${NS}-2`)}?labelSelector=tier%3Dx`);
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'Success');
    assert.deepEqual(names((await api(server, 'GET', leases(`${NS}-2`))).body), ['dc3']);
  });
});

describe('list', () => {
  const NSL = 'sel';
  test('label selectors: =, ==, !=, in, notin, exists, !', async () => {
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NSL } });
    const items: [string, Record<string, string>][] = [
      ['l1', { env: 'prod', tier: 'web' }],
      ['l2', { env: 'dev', tier: 'web' }],
      ['l3', { env: 'prod' }],
      ['l4', {}],
    ];
    for (const [n, labels] of items) await api(server, 'POST', leases(NSL), lease(n, { labels }));
    const sel = async (s: string) => names((await api(server, 'GET', `${leases(NSL)}?labelSelector=${encodeURIComponent(s)}`)).body);
    assert.deepEqual(await sel('env=prod'), ['l1', 'l3']);
    assert.deepEqual(await sel('env==prod'), ['l1', 'l3']);
    assert.deepEqual(await sel('env!=prod'), ['l2', 'l4']);
    assert.deepEqual(await sel('env in (dev, test)'), ['l2']);
    assert.deepEqual(await sel('env notin (dev)'), ['l1', 'l3', 'l4']);
    assert.deepEqual(await sel('tier'), ['l1', 'l2']);
    assert.deepEqual(await sel('!tier'), ['l3', 'l4']);
    assert.deepEqual(await sel('env=prod,tier=web'), ['l1']);
  });
  test('field selectors: metadata.name, metadata.namespace across namespaces, kind-specific fields', async () => {
    const byName = await api(server, 'GET', `${leases(NSL)}?fieldSelector=metadata.name%3Dl2`);
    assert.deepEqual(names(byName.body), ['l2']);
    const notName = await api(server, 'GET', `${leases(NSL)}?fieldSelector=metadata.name!%3Dl2`);
    assert.deepEqual(names(notName.body), ['l1', 'l3', 'l4']);
    const all = await api(server, 'GET', `/apis/coordination.orch.io/v1/leases?fieldSelector=metadata.namespace%3D${NSL}`);
    assert.deepEqual(names(all.body), ['l1', 'l2', 'l3', 'l4']);
    const unknown = await api(server, 'GET', `${leases(NSL)}?fieldSelector=spec.holderIdentity%3Da`);
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.message, 'field label not supported: spec.holderIdentity');
    const phase = await api(server, 'GET', `/api/v1/namespaces?fieldSelector=status.phase%3DActive`);
    assert.ok(names(phase.body).includes(NSL));
  });
  test('paging with a selector: full pages, no remainingItemCount', async () => {
    const p1 = await api(server, 'GET', `${leases(NSL)}?labelSelector=env&limit=1`);
    assert.deepEqual(names(p1.body), ['l1']);
    assert.equal(p1.body.metadata.remainingItemCount, undefined);
    const p2 = await api(server, 'GET', `${leases(NSL)}?labelSelector=env&limit=1&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    assert.deepEqual(names(p2.body), ['l2']);
    const p3 = await api(server, 'GET', `${leases(NSL)}?labelSelector=env&limit=1&continue=${encodeURIComponent(p2.body.metadata.continue)}`);
    assert.deepEqual(names(p3.body), ['l3']);
    assert.equal(p3.body.metadata.continue, undefined);
  });
  test('a list across all namespaces', async () => {
    const r = await api(server, 'GET', '/apis/coordination.orch.io/v1/leases');
    assert.equal(r.status, 200);
    assert.equal(r.body.kind, 'LeaseList');
    const namespaces = new Set(r.body.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace));
    assert.ok(namespaces.has(NS) && namespaces.has(NSL));
  });
  test('pretty=true indents', async () => {
    const r = await api(server, 'GET', `${leases(NSL)}/l1?pretty=true`);
    assert.match(r.text, /^\{\n {2}"apiVersion"/);
  });
});

describe('watch', () => {
  test('label selector transitions: leaving the selection is DELETED, entering is ADDED', async () => {
    await api(server, 'POST', leases(), lease('wt', { labels: { watch: 'yes' } }));
    const rv = (await api(server, 'GET', leases())).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${leases()}?watch=1&resourceVersion=${rv}&labelSelector=watch%3Dyes`);
    await api(server, 'PATCH', `${leases()}/wt`, { spec: { holderIdentity: 'm' } }, { 'Content-Type': 'application/merge-patch+json' });
    await api(server, 'PATCH', `${leases()}/wt`, { metadata: { labels: { watch: 'no' } } }, { 'Content-Type': 'application/merge-patch+json' });
    await api(server, 'PATCH', `${leases()}/wt`, { spec: { holderIdentity: 'unseen' } }, { 'Content-Type': 'application/merge-patch+json' });
    await api(server, 'PATCH', `${leases()}/wt`, { metadata: { labels: { watch: 'yes' } } }, { 'Content-Type': 'application/merge-patch+json' });
    await api(server, 'DELETE', `${leases()}/wt`);
    const evs = await w.next(4);
    assert.deepEqual(evs.map((e) => e.type), ['MODIFIED', 'DELETED', 'ADDED', 'DELETED']);
    w.close();
  });
  test('timeoutSeconds ends the stream cleanly', async () => {
    const w = readWatch(`${server.url}${leases()}?watch=1&timeoutSeconds=1&resourceVersion=0`);
    assert.equal(await w.status, 200);
    const t = Date.now();
    await w.ended;
    assert.ok(Date.now() - t < 5000);
  });
  test('DELETED carries the last state at the delete revision; bookmarks when asked', async () => {
    const c = (await api(server, 'POST', leases(), lease('wd'))).body;
    const w = readWatch(`${server.url}${leases()}?watch=1&resourceVersion=${c.metadata.resourceVersion}&allowWatchBookmarks=true`);
    await api(server, 'DELETE', `${leases()}/wd`);
    const [del] = await w.next(1);
    assert.equal(del!.type, 'DELETED');
    assert.equal(del!.object.spec.holderIdentity, 'a');
    assert.ok(Number(del!.object.metadata.resourceVersion) > Number(c.metadata.resourceVersion));
    // A later write elsewhere moves the revision; the next progress notification is a bookmark.
    await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bookmark-mover' } });
    const [bm] = await w.next(1, 12_000);
    assert.equal(bm!.type, 'BOOKMARK');
    assert.deepEqual(Object.keys(bm!.object.metadata), ['resourceVersion']);
    assert.equal(bm!.object.kind, 'Lease');
    w.close();
  });
});

describe('discovery', () => {
  test('/api, /apis, /api/v1 and /apis/<group>/<version>', async () => {
    const apiDoc = (await api(server, 'GET', '/api')).body;
    assert.equal(apiDoc.kind, 'APIVersions');
    assert.deepEqual(apiDoc.versions, ['v1']);
    const apis = (await api(server, 'GET', '/apis')).body;
    assert.equal(apis.kind, 'APIGroupList');
    const coord = apis.groups.find((g: { name: string }) => g.name === 'coordination.orch.io');
    assert.deepEqual(coord.preferredVersion, { groupVersion: 'coordination.orch.io/v1', version: 'v1' });
    const v1 = (await api(server, 'GET', '/api/v1')).body;
    assert.equal(v1.kind, 'APIResourceList');
    const ns = v1.resources.find((r: { name: string }) => r.name === 'namespaces');
    assert.deepEqual(ns, { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ns'], storageVersionHash: 'Q3oi5N2YM8M=' });
    assert.ok(v1.resources.some((r: { name: string }) => r.name === 'namespaces/finalize'));
    assert.ok(v1.resources.some((r: { name: string }) => r.name === 'nodes/status'));
    const group = (await api(server, 'GET', '/apis/coordination.orch.io')).body;
    assert.equal(group.kind, 'APIGroup');
    const gv = (await api(server, 'GET', '/apis/coordination.orch.io/v1')).body;
    assert.equal(gv.resources[0].name, 'leases');
    assert.equal(gv.resources[0].namespaced, true);
  });
  test('aggregated discovery only when asked, echoing the media type', async () => {
    const accept = 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const r = await api(server, 'GET', '/apis', undefined, { Accept: accept });
    assert.equal(r.headers.get('content-type'), 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(r.body.kind, 'APIGroupDiscoveryList');
    const lease = r.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'coordination.orch.io').versions[0].resources[0];
    assert.equal(lease.resource, 'leases');
    assert.equal(lease.scope, 'Namespaced');
    assert.deepEqual(lease.responseKind, { group: 'coordination.orch.io', version: 'v1', kind: 'Lease' });
    const core = await api(server, 'GET', '/api', undefined, { Accept: accept });
    assert.equal(core.body.items[0].versions[0].version, 'v1');
    const plain = await api(server, 'GET', '/apis');
    assert.equal(plain.body.kind, 'APIGroupList');
    const etag = r.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${server.url}/apis`, { headers: { Accept: accept, 'If-None-Match': etag } });
    assert.equal(again.status, 304);
  });
  test('/version', async () => {
    const v = (await api(server, 'GET', '/version')).body;
    assert.equal(v.major, '1');
    assert.match(v.gitVersion, /^v1\.\d+\.\d+/);
  });
});

describe('health', () => {
  test('/livez, /readyz, /healthz; verbose; exclude; single checks', async () => {
    for (const p of ['/livez', '/readyz', '/healthz']) {
      const r = await api(server, 'GET', p);
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
    }
    const v = await api(server, 'GET', '/readyz?verbose');
    assert.match(v.text, /^\[\+\]ping ok$/m);
    assert.match(v.text, /readyz check passed\n$/);
    const ex = await api(server, 'GET', '/livez?verbose&exclude=ping&exclude=nope');
    assert.match(ex.text, /^\[\+\]ping excluded: ok$/m);
    assert.match(ex.text, /warn: some health checks cannot be excluded: no matches for "nope"/);
    assert.equal((await api(server, 'GET', '/livez/ping')).text, 'ok');
    assert.equal((await api(server, 'GET', '/readyz/shutdown')).status, 200);
    const missing = await api(server, 'GET', '/readyz/nope');
    assert.equal(missing.status, 404);
  });
});

describe('filter chain', () => {
  test('a bug answers 500 with a Status and the server keeps serving', async () => {
    let boom = true;
    const s = await testServer({
      authorizer: {
        async authorize() {
          if (boom) throw new Error('authorizer exploded');
          return { decision: 'allow' };
        },
      },
      log: () => {},
    });
    const r = await api(s, 'GET', '/api/v1/namespaces');
    assert.equal(r.status, 500);
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, 'InternalError');
    boom = false;
    assert.equal((await api(s, 'GET', '/api/v1/namespaces')).status, 200);
  });
  test('max-in-flight: 429 with Retry-After beyond the limit; watches are not counted', async () => {
    const s = await testServer({ maxRequestsInflight: 1 });
    const w = readWatch(`${s.url}/api/v1/namespaces?watch=1`);
    await w.next(1);
    // A read of a future resourceVersion holds the only slot for about 3 s.
    const slow = api(s, 'GET', '/api/v1/namespaces/default?resourceVersion=999999');
    await new Promise((r) => setTimeout(r, 200));
    const r = await api(s, 'GET', '/api/v1/namespaces');
    assert.equal(r.status, 429);
    assert.equal(r.body.reason, 'TooManyRequests');
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal((await slow).status, 504);
    assert.equal((await api(s, 'GET', '/api/v1/namespaces')).status, 200);
    w.close();
  });
  test('request timeout: 504 Timeout', async () => {
    const s = await testServer({ requestTimeoutMs: 300 });
    const r = await api(s, 'GET', '/api/v1/namespaces/default?resourceVersion=999999');
    assert.equal(r.status, 504);
    assert.equal(r.body.reason, 'Timeout');
  });
  test('warnings are Warning: 299 headers, one per message', async () => {
    const r = await api(server, 'POST', leases(), lease('warn1', {}, { holderIdentity: 'a', x: 1 }));
    assert.deepEqual(r.headers.get('warning'), '299 - "unknown field \\"spec.x\\""');
  });
});

describe('shutdown', () => {
  test('readyz fails first, open watches end cleanly, then the listener closes', async () => {
    const s = await startTrusted({ shutdownDelayMs: 600, log: () => {} });
    const w = readWatch(`${s.url}/api/v1/namespaces?watch=1`);
    await w.next(4);
    const closing = s.close();
    await new Promise((r) => setTimeout(r, 200));
    const ready = await api(s, 'GET', '/readyz?verbose');
    assert.equal(ready.status, 500);
    assert.match(ready.text, /\[-\]shutdown failed: reason withheld/);
    assert.match(ready.text, /readyz check failed/);
    assert.equal((await api(s, 'GET', '/livez')).status, 200);
    await closing;
    await w.ended;
    await assert.rejects(fetch(`${s.url}/livez`));
  });
  test('a connection accepted before the shutdown whose TLS handshake ends after it began does not hold the shutdown', async () => {
    const s = await startTrusted({ log: () => {} });
    const raw = connect(s.port, '127.0.0.1');
    raw.on('error', () => {});
    await once(raw, 'connect');
    await new Promise((r) => setTimeout(r, 50));
    const t = performance.now();
    const closing = s.close();
    await new Promise((r) => setTimeout(r, 100));
    const secure = tlsConnect({ socket: raw, rejectUnauthorized: false, servername: 'localhost' });
    secure.on('error', () => {});
    await once(secure, 'secureConnect');
    await closing;
    const ms = performance.now() - t;
    secure.destroy();
    // Without ending it the shutdown waits its grace period: the request timeout and 5 s more.
    assert.ok(ms < 10_000, `the shutdown took ${Math.round(ms)} ms`);
  });
  test('an in-process server starts on an ephemeral port with throw-away storage', async () => {
    const t = performance.now();
    const s = await startTrusted({ log: () => {} });
    const ms = performance.now() - t;
    assert.ok(s.port > 0);
    console.log(`in-process start-up: ${ms.toFixed(0)} ms`);
    assert.equal((await api(s, 'GET', '/readyz')).status, 200);
    await s.close();
  });
});

describe('warnings with non-ASCII text', () => {
  test('an unknown field with a non-ASCII name is warned about in an escaped header', async () => {
    const r = await api(server, 'POST', leases(), lease('warn2', {}, { holderIdentity: 'a', 'grün✓': 1 }));
    assert.equal(r.status, 201);
    assert.equal(r.headers.get('warning'), '299 - "unknown field \\"spec.gr\\u00fcn\\u2713\\""');
  });
});

describe('runtime config and feature gates', () => {
  test('--runtime-config disables a group version: gone from discovery and its paths 404', async () => {
    const s = await testServer({ runtimeConfig: 'coordination.orch.io/v1=false' });
    const apis = (await api(s, 'GET', '/apis')).body;
    assert.equal(apis.groups.some((g: { name: string }) => g.name === 'coordination.orch.io'), false);
    const r = await api(s, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases');
    assert.equal(r.status, 404);
    assert.equal(r.body.reason, 'NotFound');
    assert.equal((await api(s, 'GET', '/api/v1/nodes')).status, 200);
  });
  test('WatchList=false refuses sendInitialEvents', async () => {
    const s = await testServer({ featureGates: 'WatchList=false' });
    const r = await api(s, 'GET', '/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
    assert.equal(r.status, 400);
    assert.match(r.body.message, /unless the WatchList feature gate is enabled/);
  });
  test('ConsistentListFromCache is GA and locked on: turning it off is a start-up error', async () => {
    await assert.rejects(testServer({ featureGates: 'ConsistentListFromCache=false' }), { message: 'cannot set feature gate ConsistentListFromCache to false, feature is locked to true' });
  });
});

describe('type meta', () => {
  test('a body without apiVersion and kind takes the endpoint’s, as kube-apiserver decodes typed objects', async () => {
    const r = await api(server, 'POST', leases(), { metadata: { name: 'no-kind' }, spec: { holderIdentity: 'a' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.kind, 'Lease');
    assert.equal(r.body.apiVersion, 'coordination.orch.io/v1');
    const ns = await api(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'no-kind-ns' } });
    assert.equal(ns.status, 201);
    assert.equal(ns.body.kind, 'Namespace');
  });
  test('a wrong kind or apiVersion is 400', async () => {
    const k = await api(server, 'POST', leases(), { apiVersion: 'coordination.orch.io/v1', kind: 'Node', metadata: { name: 'wrong-kind' } });
    assert.equal(k.status, 400);
    const v = await api(server, 'POST', leases(), { apiVersion: 'coordination.orch.io/v2', kind: 'Lease', metadata: { name: 'wrong-version' } });
    assert.equal(v.status, 400);
  });
});

describe('list bodies', () => {
  test('every item of a list carries its own resourceVersion, metadata otherwise intact', async () => {
    const ns = 'list-bodies';
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // Revisions cross digit boundaries as the store grows; objects with and without other metadata.
    for (let i = 0; i < 120; i++) await api(server, 'POST', leases(ns), lease(`b${String(i).padStart(3, '0')}`, i % 3 ? { labels: { i: String(i) } } : {}));
    const list = await api(server, 'GET', leases(ns));
    assert.equal(list.body.items.length, 120);
    for (const item of list.body.items.slice(0, 120)) {
      const one = await api(server, 'GET', `${leases(ns)}/${item.metadata.name}`);
      assert.deepEqual(item, one.body);
      assert.match(item.metadata.resourceVersion, /^[1-9]\d*$/);
    }
  });
});

describe('watch timeout bookmark', () => {
  test('a bookmark comes shortly before a watch with allowWatchBookmarks times out', async () => {
    // The file's server: the watch starts at the current revision, so nothing written before shows.
    const s = server;
    const path = '/apis/coordination.orch.io/v1/namespaces/default/leases';
    const rv = (await api(s, 'GET', path)).body.metadata.resourceVersion;
    const w = readWatch(`${s.url}${path}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`);
    assert.equal(await w.status, 200);
    // A write elsewhere moves the store's revision past what this watch has seen.
    await api(s, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'mover' } });
    const [bm] = await w.next(1, 5000);
    assert.equal(bm!.type, 'BOOKMARK');
    assert.ok(Number(bm!.object.metadata.resourceVersion) > Number(rv));
    await w.ended;
  });
});

describe('lease validation', () => {
  const coordinated = testServer({ featureGates: 'CoordinatedLeaderElection=true' });
  for (const [what, spec, field] of [
    ['a zero leaseDurationSeconds', { leaseDurationSeconds: 0 }, 'spec.leaseDurationSeconds'],
    ['negative leaseTransitions', { leaseTransitions: -1 }, 'spec.leaseTransitions'],
    ['preferredHolder without strategy', { preferredHolder: 'b' }, 'spec.preferredHolder'],
  ] as const) {
    test(`${what} is 422 naming the field, nothing stored`, async () => {
      const server = await coordinated;
      const r = await api(server, 'POST', leases(), lease('invalid-lease', {}, spec));
      assert.equal(r.status, 422);
      assert.equal(r.body.reason, 'Invalid');
      assert.equal(r.body.details.causes[0].field, field);
      assert.equal((await api(server, 'GET', `${leases()}/invalid-lease`)).status, 404);
    });
  }

  test('with CoordinatedLeaderElection off (the default), strategy and preferredHolder are dropped on create and cannot be added', async () => {
    const c = await api(server, 'POST', leases(), lease('cle-off', {}, { holderIdentity: 'a', strategy: 'OldestEmulationVersion', preferredHolder: 'b' }));
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.spec, { holderIdentity: 'a' });
    const u = await api(server, 'PATCH', `${leases()}/cle-off`, { spec: { strategy: 'OldestEmulationVersion' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(u.status, 200);
    assert.equal(u.body.spec.strategy, undefined);
    const on = await coordinated;
    const kept = await api(on, 'POST', leases('default'), lease('cle-on', {}, { strategy: 'OldestEmulationVersion', preferredHolder: 'b' }));
    assert.equal(kept.status, 201, kept.text);
    assert.equal(kept.body.spec.preferredHolder, 'b');
  });
});

describe('watch timeoutSeconds=0', () => {
  test('means no timeout given: the stream stays open', async () => {
    const w = readWatch(`${server.url}${leases()}?watch=1&timeoutSeconds=0&resourceVersion=0`);
    assert.equal(await w.status, 200);
    const ended = await Promise.race([w.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1500))]);
    assert.equal(ended, false);
    w.close();
  });
});
