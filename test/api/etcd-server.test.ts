// The API server on etcd (--storage-backend=etcd3), and two API servers sharing one etcd: every
// write through one is seen by reads and watches through the other.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd } from '../support/etcd.ts';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';

const etcd = await startEtcd();
after(() => etcd.stop());
const a = await testServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints });
const b = await testServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints });
const leases = '/apis/coordination.orch.io/v1/namespaces/default/leases';
const lease = (name: string, holder: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: holder } });

test('both servers created the system namespaces once between them', async () => {
  const names = (await api(a, 'GET', '/api/v1/namespaces')).body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
  assert.deepEqual(names, ['default', 'orch-node-lease', 'orch-public', 'orch-system']);
  assert.equal((await api(a, 'GET', '/readyz?verbose')).text.includes('[+]etcd ok'), true);
});

test('a write through one server is read and watched through the other', async () => {
  const w = readWatch(`${b.url}${leases}?watch=1&resourceVersion=0`);
  const created = await api(a, 'POST', leases, lease('shared', 'a'));
  assert.equal(created.status, 201);
  const [added] = await w.next(1);
  assert.equal(added!.type, 'ADDED');
  assert.equal(added!.object.metadata.resourceVersion, created.body.metadata.resourceVersion);
  const read = await api(b, 'GET', `${leases}/shared`);
  assert.equal(read.status, 200);
  assert.equal(read.body.metadata.uid, created.body.metadata.uid);
  // An update through B with A's version succeeds; A's stale copy then conflicts.
  const up = await api(b, 'PUT', `${leases}/shared`, { ...created.body, spec: { holderIdentity: 'b' } });
  assert.equal(up.status, 200);
  const stale = await api(a, 'PUT', `${leases}/shared`, { ...created.body, spec: { holderIdentity: 'a2' } });
  assert.equal(stale.status, 409);
  const [modified] = await w.next(1);
  assert.equal(modified!.type, 'MODIFIED');
  assert.equal(modified!.object.spec.holderIdentity, 'b');
  assert.equal((await api(a, 'DELETE', `${leases}/shared`)).status, 200);
  const [deleted] = await w.next(1);
  assert.equal(deleted!.type, 'DELETED');
  w.close();
});

test('paging, exact reads and namespace deletion on etcd', async () => {
  assert.equal((await api(a, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'etcd-ns' } })).status, 201);
  const path = '/apis/coordination.orch.io/v1/namespaces/etcd-ns/leases';
  for (let i = 0; i < 7; i++) assert.equal((await api(i % 2 ? a : b, 'POST', path, lease(`p${i}`, 'x'))).status, 201);
  const first = await api(b, 'GET', `${path}?limit=3`);
  assert.equal(first.body.items.length, 3);
  assert.equal(first.body.metadata.remainingItemCount, 4);
  await api(a, 'POST', path, lease('late', 'x'));
  const second = await api(a, 'GET', `${path}?limit=10&continue=${encodeURIComponent(first.body.metadata.continue)}`);
  assert.deepEqual(second.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['p3', 'p4', 'p5', 'p6']);
  assert.equal(second.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  assert.equal((await api(b, 'DELETE', '/api/v1/namespaces/etcd-ns')).status, 200);
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 200));
    gone = (await api(a, 'GET', '/api/v1/namespaces/etcd-ns')).status === 404;
  }
  assert.ok(gone, 'the namespace and its leases were removed');
  assert.equal((await api(b, 'GET', path)).body.items.length, 0);
});

test('merge patches of one Lease sent through both servers at once all succeed: a patch that loses the compare-and-swap to the other server is applied again to what it wrote', async () => {
  const created = await api(a, 'POST', leases, lease('contended', 'x'));
  assert.equal(created.status, 201, created.text);
  const N = 12;
  const answers = await Promise.all(
    Array.from({ length: 2 * N }, (_, i) =>
      api(i % 2 ? a : b, 'PATCH', `${leases}/contended`, { metadata: { labels: { [`k${i}`]: 'v' } } }, { 'Content-Type': 'application/merge-patch+json' }),
    ),
  );
  assert.deepEqual(answers.map((r) => r.status), answers.map(() => 200), answers.find((r) => r.status !== 200)?.text);
  const read = await api(b, 'GET', `${leases}/contended`);
  assert.equal(Object.keys(read.body.metadata.labels).length, 2 * N);
  assert.equal(Number(read.body.metadata.resourceVersion) > Number(created.body.metadata.resourceVersion), true);
  assert.equal((await api(a, 'DELETE', `${leases}/contended`)).status, 200);
});
