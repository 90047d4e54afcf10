// A computed kind (ComponentStatus) over real HTTP: its read-only store answers get and list in
// every encoding, refuses every other verb with 405, and keeps its place in discovery.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();
const CS = '/api/v1/componentstatuses';
const PROTOBUF = { Accept: 'application/vnd.kubernetes.protobuf' };

test('writes, patches and watches are 405 MethodNotAllowed', async () => {
  const body = { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'lmdb-0' } };
  for (const [method, path, headers] of [
    ['PUT', `${CS}/lmdb-0`, {}],
    ['PATCH', `${CS}/lmdb-0`, { 'Content-Type': 'application/merge-patch+json' }],
    ['DELETE', CS, {}],
    ['GET', `${CS}?watch=true&resourceVersion=0`, {}],
  ] as const) {
    const r = await api(server, method, path, method === 'GET' || method === 'DELETE' ? undefined : body, headers);
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.body.reason, 'MethodNotAllowed');
  }
});

test('get and list ignore resourceVersion (nothing is stored, nothing waits) and answer protobuf', async () => {
  const start = Date.now();
  const one = await api(server, 'GET', `${CS}/lmdb-0?resourceVersion=999999999`);
  assert.equal(one.status, 200);
  const list = await api(server, 'GET', `${CS}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.metadata, {});
  assert.ok(Date.now() - start < 2000, 'a computed kind never waits for a revision');
  for (const path of [`${CS}/lmdb-0`, CS]) {
    const res = await fetch(server.url + path, { headers: PROTOBUF });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-type'), PROTOBUF.Accept);
    assert.ok((await res.arrayBuffer()).byteLength > 0);
  }
});

test('discovery lists it where its definition stands, between namespaces and nodes', async () => {
  const names = ((await api(server, 'GET', '/api/v1')).body.resources as { name: string }[]).map((r) => r.name).filter((n) => !n.includes('/'));
  assert.deepEqual(names.slice(0, 3), ['namespaces', 'componentstatuses', 'nodes']);
});
