// Cascading deletion by ownerReferences: Background, Orphan and Foreground propagation, several
// owners, and dependents whose owner never existed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';
import { pollReadyz } from '../support/readyz.ts';

const server = await testServer();
const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases';
const merge = { 'Content-Type': 'application/merge-patch+json' };

async function node(name: string): Promise<{ uid: string }> {
  const r = await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return { uid: r.body.metadata.uid };
}

const ref = (name: string, uid: string) => ({ apiVersion: 'v1', kind: 'Node', name, uid });

async function lease(name: string, owners: object[]): Promise<void> {
  const r = await api(server, 'POST', leases, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, ownerReferences: owners }, spec: { holderIdentity: 'x' } });
  assert.equal(r.status, 201, r.text);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting until ${what}`);
}

const status = async (path: string) => (await api(server, 'GET', path)).status;

test('Background (the default): dependents go after their owner', async () => {
  const owner = await node('gc-bg');
  await lease('gc-bg-1', [ref('gc-bg', owner.uid)]);
  await lease('gc-bg-2', [ref('gc-bg', owner.uid)]);
  assert.equal((await api(server, 'DELETE', '/api/v1/nodes/gc-bg')).status, 200);
  await until('the dependents are gone', async () => (await status(`${leases}/gc-bg-1`)) === 404 && (await status(`${leases}/gc-bg-2`)) === 404);
});

test('Orphan: the owner goes, dependents stay without the reference', async () => {
  const owner = await node('gc-orphan');
  await lease('gc-orphan-1', [ref('gc-orphan', owner.uid)]);
  const r = await api(server, 'DELETE', '/api/v1/nodes/gc-orphan?propagationPolicy=Orphan');
  assert.equal(r.status, 200);
  assert.ok(r.body.metadata.finalizers.includes('orphan'));
  await until('the owner is gone', async () => (await status('/api/v1/nodes/gc-orphan')) === 404);
  const dep = await api(server, 'GET', `${leases}/gc-orphan-1`);
  assert.equal(dep.status, 200);
  assert.equal(dep.body.metadata.ownerReferences, undefined);
});

test('Foreground: 202, the owner waits with foregroundDeletion until its dependents are gone', async () => {
  const owner = await node('gc-fg');
  await lease('gc-fg-1', [ref('gc-fg', owner.uid)]);
  // A finalizer on the dependent holds the owner in foreground deletion.
  await api(server, 'PATCH', `${leases}/gc-fg-1`, { metadata: { finalizers: ['example.com/hold'] } }, merge);
  const r = await api(server, 'DELETE', '/api/v1/nodes/gc-fg', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
  assert.equal(r.status, 202);
  assert.ok(r.body.metadata.deletionTimestamp);
  assert.ok(r.body.metadata.finalizers.includes('foregroundDeletion'));
  await until('the dependent is terminating', async () => Boolean((await api(server, 'GET', `${leases}/gc-fg-1`)).body.metadata.deletionTimestamp));
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(await status('/api/v1/nodes/gc-fg'), 200, 'the owner waits for its dependent');
  await api(server, 'PATCH', `${leases}/gc-fg-1`, { metadata: { finalizers: null } }, merge);
  await until('dependent and owner are gone', async () => (await status(`${leases}/gc-fg-1`)) === 404 && (await status('/api/v1/nodes/gc-fg')) === 404);
});

test('Foreground with no dependents: the owner goes at once', async () => {
  await node('gc-fg-empty');
  const r = await api(server, 'DELETE', '/api/v1/nodes/gc-fg-empty?propagationPolicy=Foreground');
  assert.equal(r.status, 202);
  await until('the owner is gone', async () => (await status('/api/v1/nodes/gc-fg-empty')) === 404);
});

test('several owners: losing one keeps the dependent and drops that reference', async () => {
  const a = await node('gc-a');
  const b = await node('gc-b');
  await lease('gc-ab', [ref('gc-a', a.uid), ref('gc-b', b.uid)]);
  await api(server, 'DELETE', '/api/v1/nodes/gc-a');
  await until('the reference to a is dropped', async () => {
    const l = await api(server, 'GET', `${leases}/gc-ab`);
    return l.status === 200 && l.body.metadata.ownerReferences?.length === 1;
  });
  const l = await api(server, 'GET', `${leases}/gc-ab`);
  assert.equal(l.body.metadata.ownerReferences[0].uid, b.uid);
  await api(server, 'DELETE', '/api/v1/nodes/gc-b');
  await until('the dependent is gone with its last owner', async () => (await status(`${leases}/gc-ab`)) === 404);
});

test('an owner that does not exist (or has another uid) makes its dependent garbage; an unknown kind does not', async () => {
  await node('gc-real');
  await lease('gc-wrong-uid', [ref('gc-real', '00000000-0000-0000-0000-000000000000')]);
  await lease('gc-unknown-kind', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '11111111-1111-1111-1111-111111111111' }]);
  await until('the dependent of a missing owner is gone', async () => (await status(`${leases}/gc-wrong-uid`)) === 404);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await status(`${leases}/gc-unknown-kind`), 200);
});

test('orphanDependents=true in DeleteOptions is Orphan; both it and propagationPolicy is 422 Invalid', async () => {
  const owner = await node('gc-od');
  await lease('gc-od-1', [ref('gc-od', owner.uid)]);
  const both = await api(server, 'DELETE', '/api/v1/nodes/gc-od', { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: true, propagationPolicy: 'Background' });
  assert.equal(both.status, 422);
  const r = await api(server, 'DELETE', '/api/v1/nodes/gc-od', { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: true });
  assert.equal(r.status, 200);
  await until('the owner is gone', async () => (await status('/api/v1/nodes/gc-od')) === 404);
  assert.equal(await status(`${leases}/gc-od-1`), 200);
});

test('4,000 owner references to objects that do not exist beside a live one: all dangling references go at once, without holding up other clients', async () => {
  // Each dangling reference names a kind the server serves, so each is looked up (and found
  // missing); the live owner keeps the dependent, so the dangling references are removed. The
  // collector's work is linear in the references; /readyz from another client (polled from a
  // worker thread) must answer within 1 s throughout: the bound, generous on a shared
  // machine for work that takes well under that.
  const live = await node('gc-many-live');
  const dangling = Array.from({ length: 4000 }, (_, i) => ({
    apiVersion: 'coordination.orch.io/v1',
    kind: 'Lease',
    name: `gone-${i}`,
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  }));
  const poller = await pollReadyz(server.url);
  let worstMs = NaN;
  try {
    await lease('gc-many-owners', [...dangling, ref('gc-many-live', live.uid)]);
    await waitFor(
      'the dangling references are dropped',
      async () => {
        const l = await api(server, 'GET', `${leases}/gc-many-owners`);
        return l.status === 200 && l.body.metadata.ownerReferences?.length === 1;
      },
      30_000,
    );
  } finally {
    ({ worstMs } = await poller.stop());
  }
  const l = await api(server, 'GET', `${leases}/gc-many-owners`);
  assert.deepEqual(l.body.metadata.ownerReferences, [ref('gc-many-live', live.uid)]);
  assert.ok(worstMs < 1000, `/readyz waited ${Math.round(worstMs)} ms behind the collector`);
});
