// Places where a request-by-request comparison found the server answering differently from
// kube-apiserver (issue "Protocol fidelity"): each case over HTTP, and a refused request changes
// nothing stored. One server for the file, a namespace per test.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, auditIDOf, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';

// Idle watches get a bookmark every 1.5 s here instead of every minute.
const server = await testServer({ watchBookmarkIntervalMs: 1_500 });
let seq = 0;
async function namespace(prefix: string): Promise<string> {
  const name = `${prefix}-${++seq}`;
  const r = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return name;
}

describe('a cluster-scoped resource is never reached through a namespace path', () => {
  test('namespaces under a namespace: every verb is 404 and acts on nothing', async () => {
    const t1 = await namespace('outer');
    const t2 = await namespace('inner');
    const before = (await api(server, 'GET', `/api/v1/namespaces/${t2}`)).body;
    const cases: [string, string, unknown?, Record<string, string>?][] = [
      ['GET', `/api/v1/namespaces/${t1}/namespaces`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces?watch=true&timeoutSeconds=1`],
      ['POST', `/api/v1/namespaces/${t1}/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${t2}-new` } }],
      ['DELETE', `/api/v1/namespaces/${t1}/namespaces`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces/${t2}`],
      ['PUT', `/api/v1/namespaces/${t1}/namespaces/${t2}`, { ...before, metadata: { ...before.metadata, labels: { x: 'y' } } }],
      ['PATCH', `/api/v1/namespaces/${t1}/namespaces/${t2}`, { metadata: { labels: { x: 'y' } } }, { 'Content-Type': 'application/merge-patch+json' }],
      ['DELETE', `/api/v1/namespaces/${t1}/namespaces/${t2}`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces/${t2}/status`],
      ['PUT', `/api/v1/namespaces/${t1}/namespaces/${t2}/finalize`, before],
      ['GET', `/api/v1/namespaces/${t2}/namespaces/${t2}`],
      ['GET', `/apis/node.orch.io/v1/namespaces/${t1}/runtimeclasses`],
    ];
    for (const [method, path, body, headers] of cases) {
      const r = await api(server, method, path, body, headers);
      assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.kind, 'Status');
      assert.equal(r.body.reason, 'NotFound');
    }
    const after = await api(server, 'GET', `/api/v1/namespaces/${t2}`);
    assert.equal(after.status, 200);
    assert.deepEqual(after.body, before);
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${t2}-new`)).status, 404);
    // The namespace object's own paths still work.
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${t2}/status`)).status, 200);
    assert.equal((await api(server, 'GET', '/api/v1/namespaces')).status, 200);
  });
});

/** A Content-Type's media type and parameters (order aside). */
function mediaType(header: string | null): { type: string; params: Record<string, string> } {
  const [type, ...rest] = (header ?? '').split(';').map((p) => p.trim());
  return { type: type!, params: Object.fromEntries(rest.map((p) => p.split('=') as [string, string])) };
}

describe('Table and PartialObjectMetadata answers name their form in Content-Type', () => {
  for (const [profile, metaGroup] of [['orch', 'meta.orch.io'], ['kubernetes dialect', 'meta.k8s.io']] as const) {
    test(`get and list, JSON, YAML and protobuf, ${metaGroup} (${profile})`, async () => {
      const ns = await namespace('table');
      const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
      assert.equal((await api(server, 'POST', leases, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: {} })).status, 201);
      const cases: [string, string, string, string][] = [
        [`application/json;as=Table;v=v1;g=${metaGroup}`, leases, 'application/json', 'Table'],
        [`application/json;as=Table;v=v1;g=${metaGroup}`, `${leases}/l1`, 'application/json', 'Table'],
        // kubectl's Accept: Table first, plain JSON as the fallback.
        [`application/json;as=Table;v=v1;g=${metaGroup},application/json;as=Table;v=v1beta1;g=${metaGroup},application/json`, leases, 'application/json', 'Table'],
        [`application/yaml;as=Table;v=v1;g=${metaGroup}`, leases, 'application/yaml', 'Table'],
        [`application/json;as=PartialObjectMetadata;v=v1;g=${metaGroup}`, `${leases}/l1`, 'application/json', 'PartialObjectMetadata'],
        [`application/json;as=PartialObjectMetadataList;v=v1;g=${metaGroup}`, leases, 'application/json', 'PartialObjectMetadataList'],
        [`application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=${metaGroup}`, leases, 'application/vnd.kubernetes.protobuf', 'PartialObjectMetadataList'],
      ];
      for (const [accept, path, type, as] of cases) {
        const r = await api(server, 'GET', path, undefined, { Accept: accept });
        assert.equal(r.status, 200, `${accept}: ${r.text}`);
        assert.deepEqual(mediaType(r.headers.get('content-type')), { type, params: { g: metaGroup, v: 'v1', as } }, accept);
      }
      // The plain forms and errors carry no conversion.
      assert.equal((await api(server, 'GET', leases, undefined, { Accept: 'application/json' })).headers.get('content-type'), 'application/json');
      const missing = await api(server, 'GET', `${leases}/none`, undefined, { Accept: `application/json;as=Table;v=v1;g=${metaGroup}` });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('content-type'), 'application/json');
    });
  }
});

describe('invalid write and delete options are 422 Invalid naming the options kind', () => {
  const MERGE = { 'Content-Type': 'application/merge-patch+json' };
  const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
  test('create, update, patch, apply and delete', async () => {
    const ns = await namespace('options');
    const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
    const lease = (name: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'h' } });
    const created = await api(server, 'POST', leases, lease('l1'));
    assert.equal(created.status, 201);
    const stored = () => api(server, 'GET', `${leases}/l1`).then((r) => r.body);
    const before = await stored();
    const long = 'm'.repeat(129);
    const cases: [string, string, string, unknown, Record<string, string> | undefined, string, string[]][] = [
      ['apply without fieldManager', 'PATCH', `${leases}/l1`, { metadata: { labels: { a: 'b' } } }, APPLY, 'PatchOptions', ['fieldManager: Required value: is required for apply patch']],
      ['dryRun=Foo on create', 'POST', `${leases}?dryRun=Foo`, lease('l2'), undefined, 'CreateOptions', ['dryRun: Unsupported value: []string{"Foo"}: supported values: "All"']],
      ['dryRun=Foo on update', 'PUT', `${leases}/l1?dryRun=Foo`, before, undefined, 'UpdateOptions', ['dryRun: Unsupported value: []string{"Foo"}: supported values: "All"']],
      ['dryRun=Foo on patch', 'PATCH', `${leases}/l1?dryRun=Foo`, { metadata: { labels: { a: 'b' } } }, MERGE, 'PatchOptions', ['dryRun: Unsupported value: []string{"Foo"}: supported values: "All"']],
      ['a fieldManager over 128 bytes', 'POST', `${leases}?fieldManager=${long}`, lease('l3'), undefined, 'CreateOptions', ['fieldManager: Too long: may not be more than 128 bytes']],
      ['a fieldManager with a control character', 'POST', `${leases}?fieldManager=a%09b`, lease('l4'), undefined, 'CreateOptions', ['fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)']],
      ['force on a merge patch', 'PATCH', `${leases}/l1?force=true`, { metadata: { labels: { a: 'b' } } }, MERGE, 'PatchOptions', ['force: Forbidden: may not be specified for non-apply patch']],
      ['fieldValidation=Foo', 'POST', `${leases}?fieldValidation=Foo`, lease('l5'), undefined, 'CreateOptions', ['fieldValidation: Unsupported value: "Foo": supported values: "", "Ignore", "Strict", "Warn"']],
      ['propagationPolicy=Bogus', 'DELETE', `${leases}/l1?propagationPolicy=Bogus`, undefined, undefined, 'DeleteOptions', ['propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"']],
      ['dryRun=Foo on delete', 'DELETE', `${leases}/l1?dryRun=Foo`, undefined, undefined, 'DeleteOptions', ['dryRun: Unsupported value: []string{"Foo"}: supported values: "All"']],
      ['dryRun=Foo on delete of a collection', 'DELETE', `${leases}?dryRun=Foo`, undefined, undefined, 'DeleteOptions', ['dryRun: Unsupported value: []string{"Foo"}: supported values: "All"']],
    ];
    for (const [what, method, path, body, headers, kind, causes] of cases) {
      const r = await api(server, method, path, body, headers);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.equal(r.body.reason, 'Invalid', what);
      assert.equal(r.body.details.group, 'meta.orch.io', what);
      assert.equal(r.body.details.kind, kind, what);
      assert.deepEqual(r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`), causes, what);
      assert.equal(r.body.message, `${kind}.meta.orch.io "" is invalid: ${causes.length === 1 ? causes[0] : `[${causes.join(', ')}]`}`, what);
    }
    // Nothing was stored, changed or deleted.
    assert.deepEqual(await stored(), before);
    assert.deepEqual((await api(server, 'GET', leases)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['l1']);
    // A non-ASCII printable manager is a manager (Go's unicode.IsPrint), and force is no create option.
    assert.equal((await api(server, 'POST', `${leases}?fieldManager=${encodeURIComponent('café')}&force=true`, lease('l6'))).status, 201);
    // Values that do not decode stay 400 BadRequest.
    for (const [method, path, body, headers] of [
      ['GET', `${leases}?timeoutSeconds=abc`],
      ['GET', `${leases}?limit=x`],
      ['PATCH', `${leases}/l1?fieldManager=m&force=maybe`, 'metadata: {labels: {a: b}}', APPLY],
      ['DELETE', `${leases}/l1`, { gracePeriodSeconds: 'soon' }],
    ] as [string, string, unknown?, Record<string, string>?][]) {
      const r = await api(server, method, path, body, headers);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.reason, 'BadRequest');
    }
    assert.deepEqual(await stored(), before);
  });
});

describe('no new finalizers on an object that is being deleted', () => {
  test('update, merge patch, JSON patch and apply that add one are 422; removing one and other changes work', async () => {
    const ns = await namespace('finalizers');
    const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
    const created = await api(server, 'POST', leases, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1', finalizers: ['example.com/a'] }, spec: { holderIdentity: 'h' } });
    assert.equal(created.status, 201, created.text);
    const deleting = await api(server, 'DELETE', `${leases}/l1`);
    assert.equal(deleting.status, 200);
    assert.ok(deleting.body.metadata.deletionTimestamp);
    const current = (await api(server, 'GET', `${leases}/l1`)).body;
    const message = 'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}';
    const attempts: [string, unknown, Record<string, string> | undefined, string][] = [
      ['PUT', { ...current, metadata: { ...current.metadata, finalizers: ['example.com/a', 'example.com/b'] } }, undefined, ''],
      ['PATCH', { metadata: { finalizers: ['example.com/a', 'example.com/b'] } }, { 'Content-Type': 'application/merge-patch+json' }, ''],
      ['PATCH', [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/b' }], { 'Content-Type': 'application/json-patch+json' }, ''],
      ['PATCH', { metadata: { finalizers: ['example.com/b'] } }, { 'Content-Type': 'application/strategic-merge-patch+json' }, ''],
      ['PATCH', JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1', finalizers: ['example.com/b'] } }), { 'Content-Type': 'application/apply-patch+yaml' }, '?fieldManager=other'],
    ];
    for (const [method, body, headers, query] of attempts) {
      const r = await api(server, method, `${leases}/l1${query}`, body, headers);
      assert.equal(r.status, 422, `${method} ${headers?.['Content-Type'] ?? 'json'}: ${r.text}`);
      assert.equal(r.body.reason, 'Invalid');
      assert.match(r.body.message, /no new finalizers can be added if the object is being deleted/);
      assert.ok(r.body.details.causes.some((c: { field: string; message: string }) => `${c.field}: ${c.message}` === message), r.text);
    }
    assert.deepEqual((await api(server, 'GET', `${leases}/l1`)).body, current);
    // Other changes go on; removing the last finalizer lets the deletion finish.
    const relabeled = await api(server, 'PATCH', `${leases}/l1`, { metadata: { labels: { x: 'y' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(relabeled.status, 200, relabeled.text);
    const released = await api(server, 'PATCH', `${leases}/l1`, { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(released.status, 200, released.text);
    assert.equal((await api(server, 'GET', `${leases}/l1`)).status, 404);
  });
});

// The two cases wait on timers (a watch's timeout, the bookmark interval), not on each other: they
// run side by side, each in its own namespace.
describe('bookmarks on a watch that allows them', { concurrency: true }, () => {
  test('an idle watch gets one about two seconds before its timeout ends it, at the version it started from', async () => {
    const ns = await namespace('bookmarks');
    const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
    const rv = (await api(server, 'GET', leases)).body.metadata.resourceVersion;
    const started = Date.now();
    const w = readWatch(`${server.url}${leases}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=5`);
    const [bookmark] = await w.next(1, 8_000);
    const at = Date.now() - started;
    assert.equal(bookmark!.type, 'BOOKMARK');
    assert.equal(bookmark!.object.kind, 'Lease');
    assert.equal(bookmark!.object.apiVersion, 'coordination.orch.io/v1');
    assert.ok(Number(bookmark!.object.metadata.resourceVersion) >= Number(rv), JSON.stringify(bookmark));
    // The first is the periodic one (1.5 s here) or the one before the timeout (3 s); it comes before the end.
    assert.ok(at < 4_800, `the bookmark came after ${at} ms`);
    await w.ended;
    assert.ok(Date.now() - started >= 4_500, 'the watch ran to its timeout');
  });

  test('an idle watch gets one periodically, and none without allowWatchBookmarks', async () => {
    const ns = await namespace('heartbeat');
    const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
    const rv = (await api(server, 'GET', leases)).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${leases}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=60`);
    const plain = readWatch(`${server.url}${leases}?watch=true&resourceVersion=${rv}&timeoutSeconds=4`);
    const events = await w.next(2, 6_000);
    assert.deepEqual(events.map((e) => e.type), ['BOOKMARK', 'BOOKMARK']);
    // A change in between: the next bookmark is not older than it.
    const created = await api(server, 'POST', leases, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: {} });
    const [added, after] = await w.next(2, 6_000);
    assert.equal(added!.type, 'ADDED');
    assert.equal(after!.type, 'BOOKMARK');
    assert.ok(Number(after!.object.metadata.resourceVersion) >= Number(created.body.metadata.resourceVersion));
    w.close();
    const [only] = await plain.next(1, 6_000);
    assert.equal(only!.type, 'ADDED');
    await plain.ended;
    await assert.rejects(plain.next(1, 100), /watch ended after 0 of 1 events/);
  });
});

describe('every answer carries an Audit-ID, with no audit configured (kube-apiserver WithAuditInit)', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const idOf = (path: string, headers: Record<string, string> = {}) => auditIDOf(server, path, headers);

  test('a new random UUID per request, on successes, errors and a watch alike', async () => {
    const ns = await namespace('audit-id');
    const answers = [
      await idOf(`/api/v1/namespaces/${ns}/configmaps`),
      await idOf(`/api/v1/namespaces/${ns}/configmaps`),
      await idOf(`/api/v1/namespaces/${ns}/configmaps/missing`),
      await idOf('/api/v1/namespaces/%zz'),
      await idOf('/version'),
      await idOf(`/api/v1/namespaces/${ns}/configmaps?watch=true`),
    ];
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 404, 400, 200, 200]);
    for (const a of answers) assert.match(a.id ?? '', UUID);
    assert.equal(new Set(answers.map((a) => a.id)).size, answers.length, 'each request its own');
  });

  test("the client's own Audit-ID is answered as sent; one too long is replaced", async () => {
    assert.equal((await idOf('/version', { 'Audit-ID': 'my-request-7' })).id, 'my-request-7');
    assert.equal((await idOf('/api/v1/namespaces/none-such', { 'Audit-ID': 'the-404' })).id, 'the-404');
    assert.match((await idOf('/version', { 'Audit-ID': 'x'.repeat(129) })).id ?? '', UUID);
  });
});
