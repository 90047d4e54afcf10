// Every request is validated whole before it acts: a refused request (list options of a
// deletecollection, a DeleteOptions body, strategic-merge directives, immutable deletion fields,
// generateName, controller references, an unparsable Content-Type) changes nothing stored, and an
// update or patch whose result equals the stored object writes nothing (no new resourceVersion, no
// watch event). Each refusal is checked against the stored bytes and resourceVersions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();

type Server = { url: string };

const leasesIn = (ns: string, group = 'coordination.orch.io') => `/apis/${group}/v1/namespaces/${ns}/leases`;

async function namespace(s: Server, name: string): Promise<void> {
  const r = await api(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
}

async function lease(s: Server, ns: string, name: string, metadata: Record<string, unknown> = {}, group = 'coordination.orch.io') {
  const r = await api(s, 'POST', leasesIn(ns, group), { apiVersion: `${group}/v1`, kind: 'Lease', metadata: { name, ...metadata }, spec: { holderIdentity: 'h' } });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

/** Every stored object of the namespace, as the bytes a get answers (resourceVersions included). */
async function stored(s: Server, ns: string, group = 'coordination.orch.io'): Promise<Record<string, string>> {
  const list = await api(s, 'GET', leasesIn(ns, group));
  assert.equal(list.status, 200, list.text);
  const out: Record<string, string> = {};
  for (const item of list.body.items as { metadata: { name: string } }[]) out[item.metadata.name] = (await api(s, 'GET', `${leasesIn(ns, group)}/${item.metadata.name}`)).text;
  return out;
}

/** `request` is refused with `code` (and `message`, when given), and nothing in `ns` changed. */
async function refusedChangingNothing(
  s: Server,
  ns: string,
  what: string,
  request: () => Promise<{ status: number; body: any; text: string }>,
  code: number,
  message?: string | RegExp,
  group?: string,
): Promise<void> {
  const before = await stored(s, ns, group);
  const r = await request();
  assert.equal(r.status, code, `${what}: ${r.text}`);
  assert.equal(r.body?.kind, 'Status', `${what}: ${r.text}`);
  assert.equal(r.body.code, code, what);
  if (typeof message === 'string') assert.equal(r.body.message, message, what);
  else if (message) assert.match(r.body.message, message, what);
  assert.deepEqual(await stored(s, ns, group), before, `${what} changed what is stored`);
}

// ---- 1. deletecollection validates its list options exactly as a list ----

test('deletecollection answers every malformed list option exactly as a list does, and deletes nothing', async () => {
  const ns = 'dc-options';
  await namespace(server, ns);
  for (const n of ['a', 'b', 'c']) await lease(server, ns, n, { labels: { app: 'x' } });
  const token = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const queries = [
    'continue=garbage',
    `continue=${token({ v: 'meta.orch.io/v1', rv: 1, start: '../other/x' })}`,
    `continue=${token({ v: 'meta.k8s.io/v2', rv: 1, start: 'a' })}`,
    `continue=${token({ v: 'meta.orch.io/v1', rv: 0, start: 'a' })}`,
    `continue=${token({ v: 'meta.orch.io/v1', rv: 1, start: 'a\u0000' })}&resourceVersion=5`,
    'labelSelector=a%20in%20(b',
    'labelSelector=x%3D%3Da%3D%3Db',
    'fieldSelector=spec.holderIdentity%3Dh',
    'fieldSelector=metadata.nam',
    'limit=abc',
    'limit=99999999999999999999',
    'resourceVersion=abc',
    'resourceVersionMatch=Exact',
    'resourceVersionMatch=Bogus&resourceVersion=1',
    'resourceVersionMatch=Exact&resourceVersion=0',
    'resourceVersion=99999999999999999999',
    'sendInitialEvents=false',
    'timeoutSeconds=-1',
    'allowWatchBookmarks=maybe',
    'shardSelector=x',
  ];
  for (const q of queries) {
    const list = await api(server, 'GET', `${leasesIn(ns)}?${q}`);
    assert.ok(list.status >= 400 && list.status < 500, `list ${q}: ${list.text}`);
    await refusedChangingNothing(
      server,
      ns,
      `deletecollection ${q}`,
      () => api(server, 'DELETE', `${leasesIn(ns)}?${q}`),
      list.status,
      list.body.message,
    );
  }
  // A selector a list takes selects the same objects for a deletecollection.
  await lease(server, ns, 'empty-app', { labels: { app: '' } });
  const selected = await api(server, 'GET', `${leasesIn(ns)}?labelSelector=${encodeURIComponent('app notin ()')}`);
  assert.deepEqual(selected.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['a', 'b', 'c']);
  assert.equal((await api(server, 'DELETE', `${leasesIn(ns)}?labelSelector=${encodeURIComponent('app notin ()')}`)).status, 200);
  assert.deepEqual(Object.keys(await stored(server, ns)), ['empty-app']);
});
