// Resource rules of spec 03 as kube-apiserver applies them, over HTTP, in both naming profiles:
// JSON answers end with a newline, the namespace finalizer is the profile's, names held by
// terminating objects, deprecation warnings, value normalization (times, quantities), Node
// defaults and discovery order from APIService priorities. Every rejected request stores nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import type { RunningServer } from '../../src/server/server.ts';

const orch = await testServer();
const kube = await testServer({ naming: 'kubernetes' });
const profiles: [string, RunningServer][] = [
  ['orch', orch],
  ['kubernetes', kube],
];
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

async function eventually(check: () => Promise<boolean>, what: string, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const group = (s: RunningServer, name: string) => `${name}.${s.naming.groupSuffix}`;

describe('JSON answers end with a newline, as kube-apiserver encodes them', () => {
  test('objects, lists, Status errors, discovery, Tables, writes', async () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'newline' } };
    const created = await api(orch, 'POST', '/api/v1/namespaces', ns);
    assert.equal(created.status, 201);
    const table = { Accept: `application/json;as=Table;v=v1;g=${orch.naming.metaGroup}` };
    const aggregated = { Accept: `application/json;g=${orch.naming.discoveryGroup};v=v2;as=APIGroupDiscoveryList` };
    const replies = {
      created,
      get: await api(orch, 'GET', '/api/v1/namespaces/newline'),
      list: await api(orch, 'GET', '/api/v1/namespaces'),
      listPage: await api(orch, 'GET', '/api/v1/namespaces?limit=1'),
      notFound: await api(orch, 'GET', '/api/v1/namespaces/absent'),
      badRequest: await api(orch, 'POST', '/api/v1/namespaces', '{not json'),
      api: await api(orch, 'GET', '/api'),
      apis: await api(orch, 'GET', '/apis'),
      resources: await api(orch, 'GET', '/api/v1'),
      group: await api(orch, 'GET', `/apis/${group(orch, 'coordination')}`),
      aggregated: await api(orch, 'GET', '/apis', undefined, aggregated),
      table: await api(orch, 'GET', '/api/v1/namespaces', undefined, table),
      patched: await api(orch, 'PATCH', '/api/v1/namespaces/newline', { metadata: { labels: { a: 'b' } } }, MERGE),
      deleted: await api(orch, 'DELETE', '/api/v1/namespaces/newline'),
      version: await api(orch, 'GET', '/version'),
    };
    for (const [what, r] of Object.entries(replies)) {
      assert.ok(r.status < 500, `${what}: ${r.status}`);
      assert.match(r.headers.get('content-type') ?? '', /json/, what);
      assert.ok(r.text.endsWith('}\n'), `${what} ends with one newline: ${JSON.stringify(r.text.slice(-20))}`);
      assert.equal(Number(r.headers.get('content-length')), Buffer.byteLength(r.text), `${what}: Content-Length counts the newline`);
    }
    // The same stored bytes answer again: the newline is not added to them twice.
    const again = await api(orch, 'GET', '/api/v1/nodes');
    assert.ok(again.text.endsWith('}\n') && !again.text.endsWith('\n\n'));
  });

  test('a gzip-compressed answer ends with the newline too', async () => {
    const big = 'x'.repeat(200 * 1024);
    const c = await api(orch, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'newline-big', annotations: { big } } });
    assert.equal(c.status, 201, c.text);
    const res = await fetch(`${orch.url}/api/v1/nodes/newline-big`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const text = await res.text();
    assert.ok(text.endsWith('}\n'));
    assert.equal(JSON.parse(text).metadata.annotations.big.length, big.length);
  });
});

describe('the namespace finalizer is the naming profile\'s', () => {
  for (const [profile, server] of profiles) {
    test(`${profile}: created with it, removed by the namespace controller, refused nowhere`, async () => {
      const want = profile === 'orch' ? 'orch' : 'kubernetes';
      const c = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin' } });
      assert.equal(c.status, 201, c.text);
      assert.deepEqual(c.body.spec.finalizers, [want]);
      const d = await api(server, 'DELETE', '/api/v1/namespaces/fin');
      assert.equal(d.status, 200, d.text);
      assert.deepEqual(d.body.spec.finalizers, [want]);
      await eventually(async () => (await api(server, 'GET', '/api/v1/namespaces/fin')).status === 404, 'the controller to remove its finalizer');

      // /finalize takes it off as well.
      const f = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin-put' } });
      assert.deepEqual(f.body.spec.finalizers, [want]);
      const put = await api(server, 'PUT', '/api/v1/namespaces/fin-put/finalize', { ...f.body, spec: { finalizers: [] } });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.body.spec.finalizers ?? [], []);
    });
  }
});

describe('ComponentStatus is deprecated', () => {
  test('get and list carry kube-apiserver\'s deprecation warning; other kinds none', async () => {
    const WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"';
    const list = await api(orch, 'GET', '/api/v1/componentstatuses');
    assert.equal(list.status, 200, list.text);
    assert.equal(list.headers.get('warning'), WARNING);
    const name = list.body.items[0].metadata.name as string;
    const one = await api(orch, 'GET', `/api/v1/componentstatuses/${name}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.headers.get('warning'), WARNING);
    assert.equal((await api(orch, 'GET', '/api/v1/nodes')).headers.get('warning'), null);
  });
});

describe('names held by objects being deleted', () => {
  for (const [profile, server] of profiles) {
    test(`${profile}: creating over a terminating object is AlreadyExists "object is being deleted"`, async () => {
      const ns = `held-${profile}`;
      assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
      const leases = `/apis/${group(server, 'coordination')}/v1/namespaces/${ns}/leases`;
      const lease = { apiVersion: `${group(server, 'coordination')}/v1`, kind: 'Lease', metadata: { name: 'l', finalizers: ['example.com/keep'] } };
      assert.equal((await api(server, 'POST', leases, lease)).status, 201);
      const d = await api(server, 'DELETE', `${leases}/l`);
      assert.equal(d.status, 200, d.text);
      assert.ok(d.body.metadata.deletionTimestamp);
      const before = (await api(server, 'GET', `${leases}/l`)).body;
      for (const query of ['', '?dryRun=All']) {
        const again = await api(server, 'POST', leases + query, lease);
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.reason, 'AlreadyExists');
        assert.equal(again.body.message, `object is being deleted: leases.${group(server, 'coordination')} "l" already exists`);
        assert.deepEqual(again.body.details, { name: 'l', group: group(server, 'coordination'), kind: 'leases' });
      }
      assert.deepEqual((await api(server, 'GET', `${leases}/l`)).body, before, 'nothing stored');
      // A name held by a live object keeps the plain message.
      assert.equal((await api(server, 'POST', leases, { ...lease, metadata: { name: 'live' } })).status, 201);
      assert.equal((await api(server, 'POST', leases, { ...lease, metadata: { name: 'live' } })).body.message, `leases.${group(server, 'coordination')} "live" already exists`);
      await api(server, 'PATCH', `${leases}/l`, { metadata: { finalizers: null } }, MERGE);
    });

    test(`${profile}: deleting a terminating namespace that still has content is 409 Conflict`, async () => {
      const ns = `terminating-${profile}`;
      assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
      const leases = `/apis/${group(server, 'coordination')}/v1/namespaces/${ns}/leases`;
      const lease = { apiVersion: `${group(server, 'coordination')}/v1`, kind: 'Lease', metadata: { name: 'stays', finalizers: ['example.com/keep'] } };
      assert.equal((await api(server, 'POST', leases, lease)).status, 201);
      const first = await api(server, 'DELETE', `/api/v1/namespaces/${ns}`);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.status.phase, 'Terminating');
      const before = (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).body;
      const second = await api(server, 'DELETE', `/api/v1/namespaces/${ns}`);
      assert.equal(second.status, 409, second.text);
      assert.equal(second.body.reason, 'Conflict');
      assert.equal(
        second.body.message,
        `Operation cannot be fulfilled on namespaces "${ns}": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.`,
      );
      assert.deepEqual(second.body.details, { name: ns, kind: 'namespaces' });
      const after = (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).body;
      assert.equal(after.metadata.deletionTimestamp, before.metadata.deletionTimestamp, 'nothing changed by the refused delete');
      // Once the content is gone, the namespace goes.
      await api(server, 'PATCH', `${leases}/stays`, { metadata: { finalizers: null } }, MERGE);
      await eventually(async () => (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).status === 404, 'the namespace to go');
    });
  }
});
