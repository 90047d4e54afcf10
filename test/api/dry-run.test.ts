// Dry run over real HTTP: every read and check of the write is made (AlreadyExists, Conflict,
// NotFound, preconditions), the answer is the write's, and nothing is stored.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();
const NS = 'dry';
const leases = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
const lease = (name: string, metadata: Record<string, unknown> = {}) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, ...metadata }, spec: { holderIdentity: 'a' } });
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

/** Creates `name` and returns it as stored. */
async function stored(name: string, metadata: Record<string, unknown> = {}) {
  const r = await api(server, 'POST', leases, lease(name, metadata));
  assert.equal(r.status, 201, r.text);
  return r.body;
}

test('create: no resourceVersion in the answer; a taken name is AlreadyExists, saying when it is being deleted', async () => {
  const fresh = await api(server, 'POST', `${leases}?dryRun=All`, lease('c-new'));
  assert.equal(fresh.status, 201);
  assert.equal(fresh.body.metadata.resourceVersion, undefined);
  assert.equal((await api(server, 'GET', `${leases}/c-new`)).status, 404);

  await stored('c-held', { finalizers: ['example.com/hold'] });
  const taken = await api(server, 'POST', `${leases}?dryRun=All`, lease('c-held'));
  assert.equal(taken.status, 409);
  assert.equal(taken.body.reason, 'AlreadyExists');
  assert.equal(taken.body.message, 'leases.coordination.orch.io "c-held" already exists');
  assert.equal((await api(server, 'DELETE', `${leases}/c-held`)).status, 200);
  const deleting = await api(server, 'POST', `${leases}?dryRun=All`, lease('c-held'));
  assert.equal(deleting.status, 409);
  assert.equal(deleting.body.message, 'object is being deleted: leases.coordination.orch.io "c-held" already exists');

  const generated = await api(server, 'POST', `${leases}?dryRun=All`, { ...lease(''), metadata: { generateName: 'g-' } });
  assert.equal(generated.status, 201);
  assert.match(generated.body.metadata.name, /^g-[a-z0-9]{5}$/);
  assert.equal((await api(server, 'GET', `${leases}/${generated.body.metadata.name}`)).status, 404);
});

test('update and patch: the stored resourceVersion is answered; a stale one is Conflict; a missing object is NotFound', async () => {
  const before = await stored('u1');
  const put = await api(server, 'PUT', `${leases}/u1?dryRun=All`, { ...before, spec: { holderIdentity: 'b' } });
  assert.equal(put.status, 200);
  assert.equal(put.body.spec.holderIdentity, 'b');
  assert.equal(put.body.metadata.resourceVersion, before.metadata.resourceVersion);
  const patch = await api(server, 'PATCH', `${leases}/u1?dryRun=All`, { spec: { holderIdentity: 'c' } }, MERGE);
  assert.equal(patch.status, 200);
  assert.equal(patch.body.metadata.resourceVersion, before.metadata.resourceVersion);

  const moved = (await api(server, 'PATCH', `${leases}/u1`, { spec: { holderIdentity: 'd' } }, MERGE)).body;
  const stale = await api(server, 'PUT', `${leases}/u1?dryRun=All`, { ...before, spec: { holderIdentity: 'e' } });
  assert.equal(stale.status, 409);
  assert.equal(stale.body.reason, 'Conflict');
  assert.deepEqual((await api(server, 'GET', `${leases}/u1`)).body, moved);

  const missing = await api(server, 'PATCH', `${leases}/absent?dryRun=All`, { spec: { holderIdentity: 'x' } }, MERGE);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.reason, 'NotFound');
});

test('removing the last finalizer of a deleting object: answered, and the object stays', async () => {
  await stored('f1', { finalizers: ['example.com/hold'] });
  assert.equal((await api(server, 'DELETE', `${leases}/f1`)).status, 200);
  const deleting = (await api(server, 'GET', `${leases}/f1`)).body;
  assert.ok(deleting.metadata.deletionTimestamp);
  const r = await api(server, 'PATCH', `${leases}/f1?dryRun=All`, { metadata: { finalizers: null } }, MERGE);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((await api(server, 'GET', `${leases}/f1`)).body, deleting);
});

test('delete: preconditions are checked; a finalizer makes it pending; nothing changes', async () => {
  const obj = await stored('d1');
  const wrongRv = await api(server, 'DELETE', `${leases}/d1?dryRun=All`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } });
  assert.equal(wrongRv.status, 409);
  assert.match(wrongRv.body.message, /Precondition failed: ResourceVersion in precondition: 1/);
  const right = await api(server, 'DELETE', `${leases}/d1?dryRun=All`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion } });
  assert.equal(right.status, 200);
  assert.equal(right.body.status, 'Success');
  assert.deepEqual((await api(server, 'GET', `${leases}/d1`)).body, obj);

  const held = await stored('d2', { finalizers: ['example.com/hold'] });
  const pending = await api(server, 'DELETE', `${leases}/d2?dryRun=All`);
  assert.equal(pending.status, 200);
  assert.ok(pending.body.metadata.deletionTimestamp);
  assert.equal(pending.body.metadata.resourceVersion, held.metadata.resourceVersion);
  assert.deepEqual((await api(server, 'GET', `${leases}/d2`)).body, held);

  assert.equal((await api(server, 'DELETE', `${leases}/absent?dryRun=All`)).status, 404);
});
