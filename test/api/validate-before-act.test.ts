// Every request is validated whole before it acts: a refused request (list options of a
// deletecollection, a DeleteOptions body, strategic-merge directives, immutable deletion fields,
// generateName, controller references, an unparsable Content-Type) changes nothing stored, and an
// update or patch whose result equals the stored object writes nothing (no new resourceVersion, no
// watch event). Each refusal is checked against the stored bytes and resourceVersions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';

const server = await testServer();
const k8s = await testServer({ naming: 'kubernetes' });

type Server = { url: string };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const JSONPATCH = { 'Content-Type': 'application/json-patch+json' };
const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

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

// ---- 2. DeleteOptions bodies ----

const badDeleteBodies: { what: string; body: string; headers?: Record<string, string>; code: number; message?: string | RegExp }[] = [
  { what: 'orphanDependents of the wrong type', body: '{"orphanDependents":"yes"}', code: 400, message: /orphanDependents: Invalid value: "yes": orphanDependents in body must be of type boolean/ },
  { what: 'a Lease as the body', body: '{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"x"}}', code: 400, message: 'error decoding DeleteOptions: no kind "Lease" is registered for version "coordination.orch.io/v1"' },
  { what: 'an unknown apiVersion', body: '{"apiVersion":"foo/v9","kind":"DeleteOptions","dryRun":["All"]}', code: 400, message: 'error decoding DeleteOptions: no kind "DeleteOptions" is registered for version "foo/v9"' },
  { what: 'another group', body: '{"apiVersion":"networking.orch.io/v1","kind":"DeleteOptions"}', code: 400, message: /no kind "DeleteOptions" is registered for version "networking.orch.io\/v1"/ },
  { what: 'a kind that is not a string', body: '{"kind":5}', code: 400, message: /cannot unmarshal number into Go struct field .kind of type string/ },
  { what: 'gracePeriodSeconds as a string', body: '{"gracePeriodSeconds":"5"}', code: 400, message: /gracePeriodSeconds in body must be of type integer/ },
  { what: 'preconditions not an object', body: '{"preconditions":"x"}', code: 400, message: /preconditions in body must be of type object/ },
  { what: 'a precondition uid of the wrong type', body: '{"preconditions":{"uid":5}}', code: 400, message: /preconditions.uid in body must be of type string/ },
  {
    what: 'an unknown propagationPolicy',
    body: '{"propagationPolicy":"Sideways"}',
    code: 422,
    message: 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
  },
  { what: 'a propagationPolicy that is not a string', body: '{"propagationPolicy":5}', code: 400, message: /propagationPolicy in body must be of type string/ },
  { what: 'dryRun not a list', body: '{"dryRun":"All"}', code: 400, message: /dryRun in body must be of type array of strings/ },
  { what: 'a body that is a list', body: '[]', code: 400 },
  { what: 'a body in a type the server does not read', body: '{"dryRun":["All"]}', headers: { 'Content-Type': 'text/plain' }, code: 415 },
  { what: 'a Content-Type that is no media type', body: '{"dryRun":["All"]}', headers: { 'Content-Type': 'application/json/extra' }, code: 415 },
];

test('a DELETE whose body is not a valid DeleteOptions is refused and deletes nothing, for delete and deletecollection', async () => {
  const ns = 'del-options';
  await namespace(server, ns);
  await lease(server, ns, 'victim');
  for (const b of badDeleteBodies) {
    const headers = b.headers ?? { 'Content-Type': 'application/json' };
    await refusedChangingNothing(server, ns, `delete: ${b.what}`, () => api(server, 'DELETE', `${leasesIn(ns)}/victim`, b.body, headers), b.code, b.message);
    await refusedChangingNothing(server, ns, `deletecollection: ${b.what}`, () => api(server, 'DELETE', leasesIn(ns), b.body, headers), b.code, b.message);
  }
});

test('DeleteOptions is read in the meta group (both spellings), core v1 and the resource group, as JSON or YAML, in both naming profiles', async () => {
  const cases: { s: Server; group: string; versions: string[] }[] = [
    { s: server, group: 'coordination.orch.io', versions: ['meta.orch.io/v1', 'meta.k8s.io/v1', 'v1', 'coordination.orch.io/v1', ''] },
    { s: k8s, group: 'coordination.k8s.io', versions: ['meta.k8s.io/v1', 'meta.orch.io/v1', 'v1', 'coordination.k8s.io/v1', ''] },
  ];
  for (const { s, group, versions } of cases) {
    const ns = 'del-versions';
    await namespace(s, ns);
    await lease(s, ns, 'kept', {}, group);
    const before = await stored(s, ns, group);
    for (const v of versions) {
      const body = JSON.stringify({ ...(v ? { apiVersion: v } : {}), kind: 'DeleteOptions', dryRun: ['All'] });
      const one = await api(s, 'DELETE', `${leasesIn(ns, group)}/kept`, body);
      assert.equal(one.status, 200, `${v}: ${one.text}`);
      const all = await api(s, 'DELETE', leasesIn(ns, group), body);
      assert.equal(all.status, 200, `${v}: ${all.text}`);
    }
    // The dry run was read from a YAML body too: nothing deleted.
    const yaml = await api(s, 'DELETE', `${leasesIn(ns, group)}/kept`, 'kind: DeleteOptions\ndryRun: [All]\n', { 'Content-Type': 'application/yaml' });
    assert.equal(yaml.status, 200, yaml.text);
    assert.deepEqual(await stored(s, ns, group), before);
    const wrongGroup = await api(s, 'DELETE', `${leasesIn(ns, group)}/kept`, JSON.stringify({ apiVersion: 'meta.example.com/v1', kind: 'DeleteOptions' }));
    assert.equal(wrongGroup.status, 400, wrongGroup.text);
    assert.deepEqual(await stored(s, ns, group), before);
  }
});

// ---- 3. strategic-merge directives of the wrong type ----

test('strategic-merge directives of the wrong type are 400 with Kubernetes messages and change nothing', async () => {
  const ns = 'smp-directives';
  await namespace(server, ns);
  await lease(server, ns, 'held', {
    finalizers: ['example.com/a', 'example.com/b'],
    labels: { keep: 'me' },
    ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'o', uid: 'u-1' }],
  });
  const path = `${leasesIn(ns)}/held`;
  const LIST = 'expected a []interface {}, but received a map[string]interface {}';
  const cases: [string, unknown, string][] = [
    ['$patch: replace given for finalizers', { metadata: { finalizers: { $patch: 'replace' } } }, LIST],
    ['$patch: delete given for finalizers', { metadata: { finalizers: { $patch: 'delete' } } }, LIST],
    ['$patch: merge given for finalizers', { metadata: { finalizers: { $patch: 'merge' } } }, 'unknown patch type: merge in map: map[$patch:merge]'],
    ['$patch: replace given for ownerReferences', { metadata: { ownerReferences: { $patch: 'replace' } } }, LIST],
    ['$retainKeys of numbers', { metadata: { $retainKeys: [1] } }, 'invalid patch format of retainKeys'],
    ['$retainKeys of maps', { spec: { $retainKeys: [{ holderIdentity: 1 }] } }, 'invalid patch format of retainKeys'],
    ['$retainKeys not a list', { spec: { $retainKeys: 'holderIdentity' } }, 'invalid patch format of retainKeys'],
    ['$deleteFromPrimitiveList not a list', { metadata: { '$deleteFromPrimitiveList/finalizers': 'example.com/a' } }, 'invalid patch format of primitive list'],
    ['$deleteFromPrimitiveList null', { metadata: { '$deleteFromPrimitiveList/finalizers': null } }, 'invalid patch format of primitive list'],
    ['$deleteFromPrimitiveList a map', { metadata: { '$deleteFromPrimitiveList/finalizers': { a: 1 } } }, 'invalid patch format of primitive list'],
    ['$setElementOrder not a list', { metadata: { '$setElementOrder/finalizers': 'example.com/a' } }, 'expected a []interface {}, but received a string'],
    ['an unknown $patch', { spec: { $patch: 'bogus' } }, 'unknown patch type: bogus in map: map[$patch:bogus]'],
  ];
  for (const [what, patch, message] of cases) await refusedChangingNothing(server, ns, what, () => api(server, 'PATCH', path, patch, SMP), 400, message);
  // The directives themselves still work where they are valid.
  const removed = await api(server, 'PATCH', path, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } }, SMP);
  assert.equal(removed.status, 200, removed.text);
  assert.deepEqual(removed.body.metadata.finalizers, ['example.com/b']);
  assert.equal((await api(server, 'PATCH', path, { metadata: { finalizers: null } }, SMP)).status, 200);
});

// ---- 4. deletionTimestamp, deletionGracePeriodSeconds and uid through updates ----

test('patches and updates never set or move a deletion nor add a finalizer to it, and a removed uid is filled in again without a write', async () => {
  const ns = 'deletion-fields';
  await namespace(server, ns);
  const live = await lease(server, ns, 'live');
  const path = `${leasesIn(ns)}/live`;
  const rv = live.metadata.resourceVersion;
  await refusedChangingNothing(
    server,
    ns,
    'merge patch setting deletionTimestamp',
    () => api(server, 'PATCH', path, { metadata: { deletionTimestamp: '2020-01-01T00:00:00Z' } }, MERGE),
    422,
    'Lease.coordination.orch.io "live" is invalid: metadata.deletionTimestamp: Invalid value: "2020-01-01T00:00:00Z": field is immutable',
  );
  await refusedChangingNothing(
    server,
    ns,
    'JSON patch setting deletionGracePeriodSeconds',
    () => api(server, 'PATCH', path, [{ op: 'add', path: '/metadata/deletionGracePeriodSeconds', value: 30 }], JSONPATCH),
    422,
    'Lease.coordination.orch.io "live" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
  );
  const current = (await api(server, 'GET', path)).body;
  await refusedChangingNothing(
    server,
    ns,
    'PUT setting deletionTimestamp',
    () => api(server, 'PUT', path, { ...current, metadata: { ...current.metadata, deletionTimestamp: '2020-01-01T00:00:00Z' } }),
    422,
    /metadata.deletionTimestamp: Invalid value: "2020-01-01T00:00:00Z": field is immutable/,
  );
  const noUid = await api(server, 'PATCH', path, [{ op: 'remove', path: '/metadata/uid' }], JSONPATCH);
  assert.equal(noUid.status, 200, noUid.text);
  assert.equal(noUid.body.metadata.uid, live.metadata.uid);
  assert.equal(noUid.body.metadata.resourceVersion, rv);

  // Being deleted (held by a finalizer): the deletion stays as it is.
  await lease(server, ns, 'going', { finalizers: ['example.com/hold'] });
  const gPath = `${leasesIn(ns)}/going`;
  const deleting = await api(server, 'DELETE', gPath);
  assert.equal(deleting.status, 200, deleting.text);
  const { deletionTimestamp, deletionGracePeriodSeconds, resourceVersion } = deleting.body.metadata;
  assert.ok(deletionTimestamp);
  for (const patch of [{ metadata: { deletionTimestamp: '2020-01-01T00:00:00Z' } }, { metadata: { deletionTimestamp: null, deletionGracePeriodSeconds: null } }]) {
    const r = await api(server, 'PATCH', gPath, patch, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.metadata.deletionTimestamp, deletionTimestamp);
    assert.equal(r.body.metadata.deletionGracePeriodSeconds, deletionGracePeriodSeconds);
    assert.equal(r.body.metadata.resourceVersion, resourceVersion, `${JSON.stringify(patch)} wrote`);
  }
  await refusedChangingNothing(
    server,
    ns,
    'a new finalizer on an object being deleted',
    () => api(server, 'PATCH', gPath, { metadata: { finalizers: ['example.com/hold', 'example.com/late', 'example.com/also'] } }, MERGE),
    422,
    'Lease.coordination.orch.io "going" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/also", "example.com/late"}',
  );
  await refusedChangingNothing(
    server,
    ns,
    'another grace period for an object being deleted',
    () => api(server, 'PATCH', gPath, { metadata: { deletionGracePeriodSeconds: 30 } }, MERGE),
    422,
    /metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable/,
  );
  assert.equal((await api(server, 'PATCH', gPath, { metadata: { finalizers: null } }, MERGE)).status, 200);
});

// ---- 5. generateName and controller references ----

test('generateName is validated as a name prefix of the kind, and owner references name an owner, at most one of them the controller', async () => {
  const ns = 'meta-rules';
  await namespace(server, ns);
  await lease(server, ns, 'existing');
  const create = (metadata: Record<string, unknown>) => () => api(server, 'POST', leasesIn(ns), { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata, spec: {} });
  const long = 'a'.repeat(254);
  await refusedChangingNothing(server, ns, '254-character generateName', create({ generateName: long }), 422, /metadata.generateName: Invalid value: "a{254}": must be no more than 253 characters/);
  await refusedChangingNothing(server, ns, '1 MiB generateName', create({ generateName: 'a'.repeat(1024 * 1024) }), 422, /must be no more than 253 characters/);
  await refusedChangingNothing(server, ns, 'generateName with capitals', create({ generateName: 'Gen-' }), 422, /metadata.generateName: Invalid value: "Gen-": a lowercase RFC 1123 subdomain/);
  // A trailing '-' is allowed (Kubernetes masks it), even at the length limit.
  const atLimit = await api(server, 'POST', leasesIn(ns), { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { generateName: `${'a'.repeat(253)}-` }, spec: {} });
  assert.equal(atLimit.status, 201, atLimit.text);
  assert.match(atLimit.body.metadata.name, /^a{58}[a-z0-9]{5}$/);
  // The rule is the kind's: a namespace's prefix is a DNS label.
  const before = (await api(server, 'GET', '/api/v1/namespaces')).body.items.length;
  const nsPrefix = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { generateName: 'n'.repeat(64) } });
  assert.equal(nsPrefix.status, 422, nsPrefix.text);
  assert.match(nsPrefix.body.message, /metadata.generateName: Invalid value: "n{64}": must be no more than 63 characters/);
  assert.equal((await api(server, 'GET', '/api/v1/namespaces')).body.items.length, before);

  const owners = [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'first', uid: 'u-1', controller: true },
    { apiVersion: 'v1', kind: 'Secret', name: 'second', uid: 'u-2', controller: true },
  ];
  const message = /metadata.ownerReferences: Invalid value: .*: Only one reference can have Controller set to true. Found "true" in references for ConfigMap\/first and Secret\/second/;
  await refusedChangingNothing(server, ns, 'two controllers on create', create({ name: 'owned', ownerReferences: owners }), 422, message);
  await refusedChangingNothing(server, ns, 'two controllers by patch', () => api(server, 'PATCH', `${leasesIn(ns)}/existing`, { metadata: { ownerReferences: owners } }, MERGE), 422, message);
  await refusedChangingNothing(
    server,
    ns,
    'an owner reference naming no owner',
    create({ name: 'owned', ownerReferences: [{ apiVersion: 'apps', kind: '', name: '', uid: '' }, { apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }] }),
    422,
    'Lease.coordination.orch.io "owned" is invalid: [metadata.ownerReferences.kind: Invalid value: "": must not be empty, metadata.ownerReferences.name: Invalid value: "": must not be empty, metadata.ownerReferences.uid: Invalid value: "": must not be empty, metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty]',
  );
  await refusedChangingNothing(
    server,
    ns,
    'an Event as owner',
    create({ name: 'owned', ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u-e' }] }),
    422,
    /metadata.ownerReferences: Invalid value: .*: \/v1, Kind=Event is disallowed from being an owner/,
  );
  const one = await api(server, 'POST', leasesIn(ns), { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'owned', ownerReferences: [owners[0], { ...owners[1], controller: false }] }, spec: {} });
  assert.equal(one.status, 201, one.text);
});

// ---- 6. Content-Type that is no media type ----

test('a Content-Type that does not parse as a media type is 415, never read as JSON', async () => {
  const ns = 'content-types';
  await namespace(server, ns);
  await lease(server, ns, 'there');
  const body = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'new' }, spec: {} };
  const accepted = /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/;
  for (const type of ['application/json/extra', 'json', 'application/', '/json', 'application/json; charset', 'application/json;;', 'application/json; a=1; a=2', 'application /json', 'application/json; =x']) {
    await refusedChangingNothing(server, ns, `POST as ${type}`, () => api(server, 'POST', leasesIn(ns), body, { 'Content-Type': type }), 415, accepted);
    await refusedChangingNothing(server, ns, `PUT as ${type}`, () => api(server, 'PUT', `${leasesIn(ns)}/there`, { ...body, metadata: { name: 'there' } }, { 'Content-Type': type }), 415, accepted);
  }
  for (const type of ['application/merge-patch+json/x', 'application/merge-patch+json; a', 'application/strategic-merge-patch+json;;']) {
    await refusedChangingNothing(server, ns, `PATCH as ${type}`, () => api(server, 'PATCH', `${leasesIn(ns)}/there`, { metadata: { labels: { a: 'b' } } }, { 'Content-Type': type }), 415, /unknown format/);
  }
  // Well-formed parameters are fine.
  for (const type of ['application/json; charset=utf-8', 'application/json;charset="utf-8";', ' application/json ']) {
    const r = await api(server, 'POST', `${leasesIn(ns)}?dryRun=All`, body, { 'Content-Type': type });
    assert.equal(r.status, 201, `${type}: ${r.text}`);
  }
});

// ---- 7. no write without a change ----

test('an update or patch that changes nothing writes nothing: same resourceVersion, no watch event', async () => {
  const ns = 'no-op';
  await namespace(server, ns);
  const path = `${leasesIn(ns)}/still`;
  await lease(server, ns, 'still', { labels: { a: 'b' }, finalizers: ['example.com/x'] });
  const applied = await api(server, 'PATCH', `${path}?fieldManager=tool`, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'still', annotations: { owner: 'tool' } } }, APPLY);
  assert.equal(applied.status, 200, applied.text);
  const node = await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'no-op-node' }, status: { capacity: { cpu: '1' } } });
  assert.equal(node.status, 201, node.text);
  const nodeStatus = await api(server, 'PUT', '/api/v1/nodes/no-op-node/status', { ...node.body, status: { capacity: { cpu: '2' } } });
  assert.equal(nodeStatus.status, 200, nodeStatus.text);
  const rv = applied.body.metadata.resourceVersion;
  const nodeRv = nodeStatus.body.metadata.resourceVersion;
  const watch = readWatch(`${server.url}${leasesIn(ns)}?watch=1&resourceVersion=${rv}`);
  const nodeWatch = readWatch(`${server.url}/api/v1/nodes?watch=1&resourceVersion=${nodeRv}&fieldSelector=metadata.name%3Dno-op-node`);
  // A second later a manager's timestamp would differ: it must not count as a change.
  await new Promise((r) => setTimeout(r, 1100));
  const current = (await api(server, 'GET', path)).body;
  const { resourceVersion: _rv, ...withoutRv } = current.metadata;
  const noOps: [string, () => Promise<{ status: number; body: any; text: string }>][] = [
    ['merge patch nulling the namespace', () => api(server, 'PATCH', path, { metadata: { namespace: null } }, MERGE)],
    ['merge patch {}', () => api(server, 'PATCH', path, {}, MERGE)],
    ['merge patch setting what is set', () => api(server, 'PATCH', path, { metadata: { labels: { a: 'b' } } }, MERGE)],
    ['merge patch from another manager', () => api(server, 'PATCH', `${path}?fieldManager=other`, { metadata: { labels: { a: 'b' } } }, MERGE)],
    ['JSON patch removing the uid', () => api(server, 'PATCH', path, [{ op: 'remove', path: '/metadata/uid' }], JSONPATCH)],
    ['JSON patch removing the namespace', () => api(server, 'PATCH', path, [{ op: 'remove', path: '/metadata/namespace' }], JSONPATCH)],
    ['strategic merge patch {}', () => api(server, 'PATCH', path, {}, SMP)],
    ['strategic merge patch adding a present finalizer', () => api(server, 'PATCH', path, { metadata: { finalizers: ['example.com/x'] } }, SMP)],
    ['apply of the same configuration', () => api(server, 'PATCH', `${path}?fieldManager=tool`, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'still', annotations: { owner: 'tool' } } }, APPLY)],
    ['PUT of the stored object', () => api(server, 'PUT', path, current)],
    ['PUT without resourceVersion, uid and namespace', () => api(server, 'PUT', path, { ...current, metadata: { ...withoutRv, uid: undefined, namespace: undefined } })],
    ['PUT with the keys in another order', () => api(server, 'PUT', path, { spec: current.spec, metadata: Object.fromEntries(Object.entries(current.metadata).reverse()), kind: 'Lease', apiVersion: current.apiVersion })],
  ];
  for (const [what, run] of noOps) {
    const r = await run();
    assert.equal(r.status, 200, `${what}: ${r.text}`);
    assert.equal(r.body.metadata.resourceVersion, rv, `${what} wrote a new revision`);
  }
  const statusNoOp = await api(server, 'PUT', '/api/v1/nodes/no-op-node/status', nodeStatus.body);
  assert.equal(statusNoOp.status, 200, statusNoOp.text);
  assert.equal(statusNoOp.body.metadata.resourceVersion, nodeRv);
  const statusPatch = await api(server, 'PATCH', '/api/v1/nodes/no-op-node/status', { status: { capacity: { cpu: '2' } } }, MERGE);
  assert.equal(statusPatch.status, 200, statusPatch.text);
  assert.equal(statusPatch.body.metadata.resourceVersion, nodeRv);
  assert.equal((await api(server, 'GET', path)).text, (await api(server, 'GET', path)).text);

  // The first event either watch sees is the first real change.
  const changed = await api(server, 'PATCH', path, { metadata: { labels: { a: 'c' } } }, MERGE);
  assert.equal(changed.status, 200);
  const [event] = await watch.next(1);
  assert.equal(event!.type, 'MODIFIED');
  assert.equal(event!.object.metadata.resourceVersion, changed.body.metadata.resourceVersion);
  const nodeChanged = await api(server, 'PATCH', '/api/v1/nodes/no-op-node/status', { status: { capacity: { cpu: '3' } } }, MERGE);
  assert.equal(nodeChanged.status, 200);
  const [nodeEvent] = await nodeWatch.next(1);
  assert.equal(nodeEvent!.object.metadata.resourceVersion, nodeChanged.body.metadata.resourceVersion);
  watch.close();
  nodeWatch.close();
  await api(server, 'PATCH', path, { metadata: { finalizers: null } }, MERGE);
});
