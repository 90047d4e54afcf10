// Event (events.orch.io/v1) over real HTTP: the verbs, the cross-namespace list, watch, the
// validation rules of events.k8s.io/v1 on create and update (each violation is 422 Invalid naming
// its field, and nothing is stored), stored time forms, and field selectors.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';

const server = await testServer();
const GROUP = 'events.orch.io';
const API_VERSION = `${GROUP}/v1`;
const NS = 'ev-main';
const events = (ns = NS) => `/apis/${API_VERSION}/namespaces/${ns}/events`;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

type Json = Record<string, unknown>;

/** A valid new-style event about a Pod in `ns`; `extra` replaces top-level fields. */
function event(name: string, extra: Json = {}, ns = NS): Json {
  return {
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { name },
    eventTime: '2024-05-01T10:00:00.000000Z',
    reportingController: 'orch.io/test-controller',
    reportingInstance: 'controller-1',
    action: 'Scheduling',
    reason: 'Scheduled',
    type: 'Normal',
    note: 'Successfully assigned the pod',
    regarding: { kind: 'Pod', namespace: ns, name: 'web-1', uid: 'uid-web-1', apiVersion: 'v1', resourceVersion: '42', fieldPath: 'spec.containers{web}' },
    ...extra,
  };
}

/** The event without the named top-level fields. */
function without(body: Json, ...fields: string[]): Json {
  const copy = { ...body };
  for (const f of fields) delete copy[f];
  return copy;
}

interface Cause {
  reason: string;
  field: string;
  message: string;
}

/** A 422 Invalid Status for the Event kind whose causes name exactly `fields` (in any order, with repeats). */
function assertInvalid(res: Awaited<ReturnType<typeof api>>, name: string, fields: string[]): Cause[] {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.kind, 'Status');
  assert.equal(res.body.reason, 'Invalid');
  assert.equal(res.body.details.kind, 'Event');
  assert.equal(res.body.details.group, GROUP);
  assert.equal(res.body.details.name, name);
  const causes = res.body.details.causes as Cause[];
  assert.deepEqual(causes.map((c) => c.field).sort(), [...fields].sort(), JSON.stringify(causes));
  assert.match(res.body.message, new RegExp(`^Event\\.${GROUP.replace(/\./g, '\\.')} "${name}" is invalid: `));
  // As in Kubernetes, a cause's message is the error without its field, which the cause names.
  for (const c of causes) assert.ok(res.body.message.includes(`${c.field}: ${c.message}`), c.message);
  return causes;
}

/** POST of a bad event: 422 naming `fields`, and no object by that name afterwards. */
async function rejectCreate(body: Json, fields: string[], ns = NS): Promise<Cause[]> {
  const name = (body.metadata as { name: string }).name;
  const causes = assertInvalid(await api(server, 'POST', events(ns), body), name, fields);
  const get = await api(server, 'GET', `${events(ns)}/${name}`);
  assert.equal(get.status, 404, `${name} must not be stored`);
  assert.equal(get.body.reason, 'NotFound');
  return causes;
}

/** Creates a valid event and returns it as stored. */
async function created(name: string, extra: Json = {}, ns = NS): Promise<Json & { metadata: Json }> {
  const res = await api(server, 'POST', events(ns), event(name, extra, ns));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** PUT of a changed copy of a stored event: 422 naming `fields`, and the stored object unchanged. */
async function rejectUpdate(name: string, change: (stored: Json) => Json, fields: string[], ns = NS): Promise<Cause[]> {
  const stored = (await api(server, 'GET', `${events(ns)}/${name}`)).body;
  const causes = assertInvalid(await api(server, 'PUT', `${events(ns)}/${name}`, change(structuredClone(stored))), name, fields);
  assert.deepEqual((await api(server, 'GET', `${events(ns)}/${name}`)).body, stored, `${name} must be unchanged`);
  return causes;
}

const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name).sort();

async function createNamespace(name: string): Promise<void> {
  const r = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

before(async () => {
  await createNamespace(NS);
  await createNamespace(`${NS}-2`);
  await createNamespace('ev-sel');
  await createNamespace('ev-upd');
  // The system namespace is made by the server at start; wait for it.
  for (let i = 0; i < 50 && (await api(server, 'GET', '/api/v1/namespaces/orch-system')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
});

describe('verbs', () => {
  test('create answers 201 with the object; get returns it; no generation is kept', async () => {
    const r = await api(server, 'POST', events(), event('v-create', { metadata: { name: 'v-create', generation: 7, labels: { app: 'web' } } }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.apiVersion, API_VERSION);
    assert.equal(r.body.kind, 'Event');
    assert.equal(r.body.metadata.namespace, NS);
    assert.match(r.body.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(r.body.metadata.resourceVersion, /^\d+$/);
    assert.equal(r.body.metadata.generation, undefined);
    for (const [k, v] of Object.entries(without(event('v-create'), 'apiVersion', 'kind', 'metadata'))) assert.deepEqual(r.body[k], v, k);
    assert.equal(r.body.spec, undefined);
    const get = await api(server, 'GET', `${events()}/v-create`);
    assert.equal(get.status, 200);
    assert.deepEqual(get.body, r.body);
    const again = await api(server, 'POST', events(), event('v-create'));
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
    assert.equal(again.body.message, `events.${GROUP} "v-create" already exists`);
  });

  test('every field round-trips, series and related included', async () => {
    const body = event('v-full', {
      series: { count: 3, lastObservedTime: '2024-05-01T10:05:00.123456Z' },
      related: { kind: 'Node', name: 'node-1', apiVersion: 'v1', uid: 'uid-node-1' },
      deprecatedSource: {},
      deprecatedCount: 0,
    });
    const r = await api(server, 'POST', events(), body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.series, { count: 3, lastObservedTime: '2024-05-01T10:05:00.123456Z' });
    assert.deepEqual(r.body.related, { kind: 'Node', name: 'node-1', apiVersion: 'v1', uid: 'uid-node-1' });
    assert.deepEqual(r.body.regarding, body.regarding);
  });

  test('times are stored as Kubernetes writes them: MicroTime in UTC with six fraction digits', async () => {
    const r = await api(server, 'POST', events(), event('v-times', { eventTime: '2024-05-01T12:00:00.500000+02:00', series: { count: 2, lastObservedTime: '2024-05-01T09:31:00.000001-00:30' } }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.eventTime, '2024-05-01T10:00:00.500000Z');
    assert.equal(r.body.series.lastObservedTime, '2024-05-01T10:01:00.000001Z');
  });

  test('explicit nulls are not stored: an unset field is absent', async () => {
    const r = await api(server, 'POST', events(), event('v-nulls', { series: null, related: null, deprecatedFirstTimestamp: null, deprecatedSource: null }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    for (const f of ['series', 'related', 'deprecatedFirstTimestamp', 'deprecatedSource']) assert.equal(f in r.body, false, f);
  });

  test('list in a namespace and across namespaces at /apis/events.orch.io/v1/events', async () => {
    await created('x-one', {}, `${NS}-2`);
    await created('x-two', {}, `${NS}-2`);
    const inNs = await api(server, 'GET', events(`${NS}-2`));
    assert.equal(inNs.status, 200);
    assert.equal(inNs.body.kind, 'EventList');
    assert.equal(inNs.body.apiVersion, API_VERSION);
    assert.deepEqual(names(inNs.body), ['x-one', 'x-two']);
    const all = await api(server, 'GET', `/apis/${API_VERSION}/events`);
    assert.equal(all.status, 200);
    assert.equal(all.body.kind, 'EventList');
    const where = all.body.items.map((i: { metadata: { namespace: string; name: string } }) => `${i.metadata.namespace}/${i.metadata.name}`);
    for (const want of [`${NS}-2/x-one`, `${NS}-2/x-two`, `${NS}/v-create`]) assert.ok(where.includes(want), want);
    const filtered = await api(server, 'GET', `/apis/${API_VERSION}/events?fieldSelector=${encodeURIComponent(`metadata.namespace=${NS}-2`)}`);
    assert.deepEqual(names(filtered.body), ['x-one', 'x-two']);
  });

  test('update (PUT) changes the series and labels; an unchanged PUT writes nothing', async () => {
    const c = await created('v-update');
    const up = await api(server, 'PUT', `${events()}/v-update`, { ...c, metadata: { ...c.metadata, labels: { seen: 'twice' } }, series: { count: 2, lastObservedTime: '2024-05-01T10:02:00.000000Z' } });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual(up.body.series, { count: 2, lastObservedTime: '2024-05-01T10:02:00.000000Z' });
    assert.deepEqual(up.body.metadata.labels, { seen: 'twice' });
    assert.notEqual(up.body.metadata.resourceVersion, c.metadata.resourceVersion);
    assert.equal(up.body.metadata.generation, undefined);
    const same = await api(server, 'PUT', `${events()}/v-update`, up.body);
    assert.equal(same.status, 200);
    assert.equal(same.body.metadata.resourceVersion, up.body.metadata.resourceVersion);
    const stale = await api(server, 'PUT', `${events()}/v-update`, { ...c, series: { count: 5, lastObservedTime: '2024-05-01T10:03:00.000000Z' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
  });

  test('PUT of a missing event creates it (201), validated as a create', async () => {
    const r = await api(server, 'PUT', `${events()}/v-put-created`, event('v-put-created'));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal((await api(server, 'GET', `${events()}/v-put-created`)).status, 200);
    const bad = await api(server, 'PUT', `${events()}/v-put-bad`, event('v-put-bad', { deprecatedCount: 2 }));
    assertInvalid(bad, 'v-put-bad', ['count']);
    assert.equal((await api(server, 'GET', `${events()}/v-put-bad`)).status, 404);
  });

  test('merge patch bumps the series; a merge patch of an immutable field is refused', async () => {
    await created('v-patch');
    const p = await api(server, 'PATCH', `${events()}/v-patch`, { series: { count: 4, lastObservedTime: '2024-05-01T10:04:00.000000Z' }, metadata: { labels: { a: '1' } } }, MERGE);
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal(p.body.series.count, 4);
    assert.equal(p.body.note, 'Successfully assigned the pod');
    assert.deepEqual(p.body.metadata.labels, { a: '1' });
    const p2 = await api(server, 'PATCH', `${events()}/v-patch`, { series: { count: 5 } }, MERGE);
    assert.equal(p2.status, 200);
    assert.deepEqual(p2.body.series, { count: 5, lastObservedTime: '2024-05-01T10:04:00.000000Z' });
    const before = (await api(server, 'GET', `${events()}/v-patch`)).body;
    assertInvalid(await api(server, 'PATCH', `${events()}/v-patch`, { note: 'rewritten' }, MERGE), 'v-patch', ['message']);
    assertInvalid(await api(server, 'PATCH', `${events()}/v-patch`, { regarding: { name: 'web-2' } }, MERGE), 'v-patch', ['involvedObject']);
    assert.deepEqual((await api(server, 'GET', `${events()}/v-patch`)).body, before);
  });

  test('delete removes the event; a second delete is 404', async () => {
    await created('v-delete');
    const d = await api(server, 'DELETE', `${events()}/v-delete`);
    assert.equal(d.status, 200);
    assert.equal(d.body.kind, 'Status');
    assert.equal(d.body.status, 'Success');
    assert.equal((await api(server, 'GET', `${events()}/v-delete`)).status, 404);
    const again = await api(server, 'DELETE', `${events()}/v-delete`);
    assert.equal(again.status, 404);
    assert.equal(again.body.reason, 'NotFound');
  });

  test('a propagation policy is ignored: events have no garbage collection and go at once', async () => {
    for (const policy of ['Foreground', 'Orphan']) {
      const name = `v-policy-${policy.toLowerCase()}`;
      await created(name);
      const d = await api(server, 'DELETE', `${events()}/${name}?propagationPolicy=${policy}`);
      assert.equal(d.status, 200, d.text);
      assert.equal(d.body.kind, 'Status');
      assert.equal((await api(server, 'GET', `${events()}/${name}`)).status, 404);
    }
  });

  test('deletecollection removes the selected events of the namespace only', async () => {
    const ns = 'ev-dc';
    await createNamespace(ns);
    await created('dc-1', { metadata: { name: 'dc-1', labels: { batch: 'x' } } }, ns);
    await created('dc-2', { metadata: { name: 'dc-2', labels: { batch: 'x' } } }, ns);
    await created('dc-keep', {}, ns);
    const dc = await api(server, 'DELETE', `${events(ns)}?labelSelector=batch%3Dx`);
    assert.equal(dc.status, 200, JSON.stringify(dc.body));
    assert.equal(dc.body.kind, 'Status');
    assert.deepEqual(names((await api(server, 'GET', events(ns))).body), ['dc-keep']);
    assert.equal((await api(server, 'DELETE', events(ns))).status, 200);
    assert.deepEqual(names((await api(server, 'GET', events(ns))).body), []);
    assert.ok(names((await api(server, 'GET', events())).body).includes('v-create'), 'other namespaces keep their events');
  });

  test('watch streams ADDED, MODIFIED and DELETED', async () => {
    const ns = 'ev-watch';
    await createNamespace(ns);
    const list = await api(server, 'GET', events(ns));
    const w = readWatch(`${server.url}${events(ns)}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    try {
      await created('w-1', {}, ns);
      const p = await api(server, 'PATCH', `${events(ns)}/w-1`, { series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }, MERGE);
      assert.equal(p.status, 200);
      assert.equal((await api(server, 'DELETE', `${events(ns)}/w-1`)).status, 200);
      const got = await w.next(3);
      assert.deepEqual(got.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.equal(got[0]!.object.kind, 'Event');
      assert.equal(got[0]!.object.reason, 'Scheduled');
      assert.equal(got[1]!.object.series.count, 2);
      assert.equal(got[2]!.object.metadata.name, 'w-1');
    } finally {
      w.close();
    }
  });

  test('watch across namespaces with a field selector sees only matching events', async () => {
    const list = await api(server, 'GET', `/apis/${API_VERSION}/events`);
    const w = readWatch(`${server.url}/apis/${API_VERSION}/events?watch=true&resourceVersion=${list.body.metadata.resourceVersion}&fieldSelector=${encodeURIComponent('type=Warning')}`);
    try {
      await created('w-normal', {}, `${NS}-2`);
      await created('w-warning', { type: 'Warning' }, `${NS}-2`);
      const [e] = await w.next(1);
      assert.equal(e!.type, 'ADDED');
      assert.equal(e!.object.metadata.name, 'w-warning');
    } finally {
      w.close();
    }
  });

  test('discovery lists events with the short name ev and every verb', async () => {
    const r = await api(server, 'GET', `/apis/${API_VERSION}`);
    assert.equal(r.status, 200);
    const res = r.body.resources.find((x: { name: string }) => x.name === 'events');
    assert.ok(res);
    assert.equal(res.kind, 'Event');
    assert.equal(res.namespaced, true);
    assert.equal(res.singularName, 'event');
    assert.deepEqual(res.shortNames, ['ev']);
    assert.deepEqual([...res.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  });
});

describe('validation on create', () => {
  test('eventTime is required', async () => {
    const [cause] = await rejectCreate(without(event('c-no-time'), 'eventTime'), ['eventTime']);
    assert.equal(cause!.reason, 'FieldValueRequired');
    assert.equal(cause!.message, 'Required value');
    await rejectCreate(event('c-null-time', { eventTime: null }), ['eventTime']);
  });

  test('series.count must be at least 2', async () => {
    const [cause] = await rejectCreate(event('c-series-count', { series: { count: 1, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }), ['series.count']);
    assert.equal(cause!.reason, 'FieldValueInvalid');
    assert.equal(cause!.message, 'Invalid value: "": should be at least 2');
    await rejectCreate(event('c-series-nocount', { series: { lastObservedTime: '2024-05-01T10:01:00.000000Z' } }), ['series.count']);
  });

  test('series.lastObservedTime is required in a series', async () => {
    const [cause] = await rejectCreate(event('c-series-time', { series: { count: 2 } }), ['series.lastObservedTime']);
    assert.equal(cause!.reason, 'FieldValueRequired');
    await rejectCreate(event('c-series-empty', { series: {} }), ['series.count', 'series.lastObservedTime']);
  });

  test('reportingController is required and a qualified name', async () => {
    const causes = await rejectCreate(without(event('c-no-controller'), 'reportingController'), ['reportingController', 'reportingController']);
    assert.deepEqual(causes.map((c) => c.reason).sort(), ['FieldValueInvalid', 'FieldValueRequired']);
    const [bad] = await rejectCreate(event('c-bad-controller', { reportingController: 'not a controller!' }), ['reportingController']);
    assert.equal(bad!.reason, 'FieldValueInvalid');
    assert.match(bad!.message, /^Invalid value: "not a controller!": name part must consist of alphanumeric characters/);
    await rejectCreate(event('c-bad-prefix', { reportingController: 'Bad_Prefix/controller' }), ['reportingController']);
    assert.equal((await api(server, 'POST', events(), event('c-plain-controller', { reportingController: 'kubelet' }))).status, 201);
  });

  test('reportingInstance is required and at most 128 bytes', async () => {
    const [req] = await rejectCreate(without(event('c-no-instance'), 'reportingInstance'), ['reportingInstance']);
    assert.equal(req!.reason, 'FieldValueRequired');
    const [long] = await rejectCreate(event('c-long-instance', { reportingInstance: 'i'.repeat(129) }), ['reportingInstance']);
    assert.equal(long!.message, 'Invalid value: "": can have at most 128 characters');
    // Lengths are bytes: 43 three-byte characters are 129 bytes.
    await rejectCreate(event('c-wide-instance', { reportingInstance: '€'.repeat(43) }), ['reportingInstance']);
    assert.equal((await api(server, 'POST', events(), event('c-max-instance', { reportingInstance: 'i'.repeat(128) }))).status, 201);
  });

  test('action is required and at most 128 bytes', async () => {
    const [req] = await rejectCreate(without(event('c-no-action'), 'action'), ['action']);
    assert.equal(req!.reason, 'FieldValueRequired');
    await rejectCreate(event('c-empty-action', { action: '' }), ['action']);
    const [long] = await rejectCreate(event('c-long-action', { action: 'a'.repeat(129) }), ['action']);
    assert.equal(long!.message, 'Invalid value: "": can have at most 128 characters');
    assert.equal((await api(server, 'POST', events(), event('c-max-action', { action: 'a'.repeat(128) }))).status, 201);
  });

  test('reason is required and at most 128 bytes', async () => {
    const [req] = await rejectCreate(without(event('c-no-reason'), 'reason'), ['reason']);
    assert.equal(req!.reason, 'FieldValueRequired');
    const [long] = await rejectCreate(event('c-long-reason', { reason: 'r'.repeat(129) }), ['reason']);
    assert.equal(long!.message, 'Invalid value: "": can have at most 128 characters');
    assert.equal((await api(server, 'POST', events(), event('c-max-reason', { reason: 'r'.repeat(128) }))).status, 201);
  });

  test('type is Normal or Warning', async () => {
    const [missing] = await rejectCreate(without(event('c-no-type'), 'type'), ['type']);
    assert.equal(missing!.reason, 'FieldValueInvalid');
    assert.equal(missing!.message, 'Invalid value: "": has invalid value: ');
    const [other] = await rejectCreate(event('c-info-type', { type: 'Info' }), ['type']);
    assert.equal(other!.message, 'Invalid value: "": has invalid value: Info');
    await rejectCreate(event('c-lower-type', { type: 'normal' }), ['type']);
    assert.equal((await api(server, 'POST', events(), event('c-warning', { type: 'Warning' }))).status, 201);
  });

  test('note is at most 1024 bytes (reported on the core field name, message)', async () => {
    const [long] = await rejectCreate(event('c-long-note', { note: 'n'.repeat(1025) }), ['message']);
    assert.equal(long!.message, 'Invalid value: "": can have at most 1024 characters');
    // 342 three-byte characters are 1026 bytes.
    await rejectCreate(event('c-wide-note', { note: '€'.repeat(342) }), ['message']);
    assert.equal((await api(server, 'POST', events(), event('c-max-note', { note: 'n'.repeat(1024) }))).status, 201);
    assert.equal((await api(server, 'POST', events(), without(event('c-no-note'), 'note'))).status, 201);
  });

  test('the deprecated fields cannot be set on a new event (core field names)', async () => {
    const [src] = await rejectCreate(event('c-dep-source', { deprecatedSource: { component: 'kubelet' } }), ['source']);
    assert.equal(src!.message, 'Invalid value: "": needs to be unset');
    await rejectCreate(event('c-dep-host', { deprecatedSource: { host: 'node-1' } }), ['source']);
    await rejectCreate(event('c-dep-first', { deprecatedFirstTimestamp: '2024-05-01T10:00:00Z' }), ['firstTimestamp']);
    await rejectCreate(event('c-dep-last', { deprecatedLastTimestamp: '2024-05-01T10:00:00Z' }), ['lastTimestamp']);
    const [count] = await rejectCreate(event('c-dep-count', { deprecatedCount: 3 }), ['count']);
    assert.equal(count!.message, 'Invalid value: "": needs to be unset');
    // Their zero values are as good as absent.
    const zero = await api(server, 'POST', events(), event('c-dep-zero', { deprecatedSource: { component: '', host: '' }, deprecatedCount: 0, deprecatedFirstTimestamp: null }));
    assert.equal(zero.status, 201, JSON.stringify(zero.body));
  });

  test('an event outside default and the system namespace must name the namespace of regarding', async () => {
    const noNs = { kind: 'Node', name: 'node-1', apiVersion: 'v1' };
    const [cause] = await rejectCreate(event('c-ns', { regarding: noNs }), ['involvedObject.namespace']);
    assert.equal(cause!.message, 'Invalid value: "": does not match event.namespace');
    await rejectCreate(without(event('c-ns-absent'), 'regarding'), ['involvedObject.namespace']);
    for (const ns of ['default', 'orch-system']) {
      const r = await api(server, 'POST', events(ns), event('c-cluster-scoped', { regarding: noNs }, ns));
      assert.equal(r.status, 201, `${ns}: ${JSON.stringify(r.body)}`);
    }
    // A new-style event may live in another namespace than its regarding object.
    assert.equal((await api(server, 'POST', events(), event('c-ns-other', { regarding: { kind: 'Pod', namespace: 'elsewhere', name: 'p' } }))).status, 201);
  });

  test('an event without eventTime must agree with regarding.namespace exactly', async () => {
    await rejectCreate(without(event('c-old-ns', { regarding: { kind: 'Pod', namespace: 'elsewhere', name: 'p' } }), 'eventTime'), ['involvedObject.namespace', 'eventTime']);
    await rejectCreate(without(event('c-old-empty', { regarding: { kind: 'Node', name: 'n' } }), 'eventTime'), ['involvedObject.namespace', 'eventTime']);
    // Without eventTime the new-style requirements are not checked, only eventTime itself.
    await rejectCreate(without(event('c-old-bare'), 'eventTime', 'reportingController', 'reportingInstance', 'action', 'reason'), ['eventTime']);
  });

  test('every violation is reported at once', async () => {
    const body = event('c-many', {
      reportingController: '',
      reportingInstance: 'i'.repeat(200),
      action: '',
      reason: 'r'.repeat(200),
      note: 'n'.repeat(2000),
      type: 'Bad',
      series: { count: 0 },
      deprecatedCount: 1,
      deprecatedSource: { component: 'c' },
      regarding: { kind: 'Pod', name: 'p' },
    });
    await rejectCreate(body, [
      'involvedObject.namespace',
      'reportingController',
      'reportingController',
      'reportingInstance',
      'action',
      'reason',
      'message',
      'series.count',
      'series.lastObservedTime',
      'type',
      'count',
      'source',
    ]);
  });

  test('the name is a DNS subdomain', async () => {
    await rejectCreate(event('Bad_Name'), ['metadata.name']);
  });

  test('wrong types are refused at decoding with 400 BadRequest', async () => {
    for (const [name, extra] of [
      ['c-type-count', { series: { count: 'two', lastObservedTime: '2024-05-01T10:01:00.000000Z' } }],
      ['c-type-time', { eventTime: 'yesterday' }],
      ['c-type-note', { note: 42 }],
      ['c-type-regarding', { regarding: 'pod/web-1' }],
      ['c-type-int32', { deprecatedCount: 2 ** 31 }],
    ] as const) {
      const r = await api(server, 'POST', events(), event(name, extra as Json));
      assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.reason, 'BadRequest');
      assert.equal((await api(server, 'GET', `${events()}/${name}`)).status, 404);
    }
  });
});

describe('validation on update', () => {
  const ns = 'ev-upd';
  const base = (name: string) => created(name, { related: { kind: 'Node', name: 'node-1', apiVersion: 'v1' } }, ns);

  test('regarding is immutable (core field name involvedObject)', async () => {
    await base('u-regarding');
    const [cause] = await rejectUpdate('u-regarding', (e) => ({ ...e, regarding: { ...(e.regarding as Json), name: 'web-2' } }), ['involvedObject'], ns);
    assert.match(cause!.message, /^Invalid value: core\.ObjectReference\{Kind:"Pod", Namespace:"ev-upd", Name:"web-2", .*\}: field is immutable$/);
  });

  test('reason is immutable (Kubernetes reports it twice)', async () => {
    await base('u-reason');
    const causes = await rejectUpdate('u-reason', (e) => ({ ...e, reason: 'Rescheduled' }), ['reason', 'reason'], ns);
    assert.equal(causes[0]!.message, 'Invalid value: "Rescheduled": field is immutable');
  });

  test('note is immutable (core field name message)', async () => {
    await base('u-note');
    await rejectUpdate('u-note', (e) => ({ ...e, note: 'changed' }), ['message'], ns);
    await rejectUpdate('u-note', (e) => without(e, 'note'), ['message'], ns);
  });

  test('type, action, reportingController and reportingInstance are immutable', async () => {
    await base('u-fields');
    await rejectUpdate('u-fields', (e) => ({ ...e, type: 'Warning' }), ['type'], ns);
    await rejectUpdate('u-fields', (e) => ({ ...e, action: 'Binding' }), ['action'], ns);
    await rejectUpdate('u-fields', (e) => ({ ...e, reportingController: 'orch.io/other' }), ['reportingController'], ns);
    await rejectUpdate('u-fields', (e) => ({ ...e, reportingInstance: 'controller-2' }), ['reportingInstance'], ns);
  });

  test('related is immutable, also when added or removed', async () => {
    await base('u-related');
    await rejectUpdate('u-related', (e) => ({ ...e, related: { kind: 'Node', name: 'node-2', apiVersion: 'v1' } }), ['related'], ns);
    const [removed] = await rejectUpdate('u-related', (e) => without(e, 'related'), ['related'], ns);
    assert.equal(removed!.message, 'Invalid value: null: field is immutable');
    await created('u-related-add', {}, ns);
    await rejectUpdate('u-related-add', (e) => ({ ...e, related: { kind: 'Node', name: 'n' } }), ['related'], ns);
  });

  test('the deprecated fields are immutable (core field names)', async () => {
    await base('u-deprecated');
    const [src] = await rejectUpdate('u-deprecated', (e) => ({ ...e, deprecatedSource: { component: 'kubelet', host: 'node-1' } }), ['source'], ns);
    assert.equal(src!.message, 'Invalid value: core.EventSource{Component:"kubelet", Host:"node-1"}: field is immutable');
    const [first] = await rejectUpdate('u-deprecated', (e) => ({ ...e, deprecatedFirstTimestamp: '2024-05-01T10:00:00Z' }), ['firstTimestamp'], ns);
    assert.equal(first!.message, 'Invalid value: 2024-05-01 10:00:00 +0000 UTC: field is immutable');
    await rejectUpdate('u-deprecated', (e) => ({ ...e, deprecatedLastTimestamp: '2024-05-01T10:00:00Z' }), ['lastTimestamp'], ns);
    const [count] = await rejectUpdate('u-deprecated', (e) => ({ ...e, deprecatedCount: 2 }), ['count'], ns);
    assert.equal(count!.message, 'Invalid value: 2: field is immutable');
  });

  test('eventTime is immutable; the same instant written another way is no change', async () => {
    await base('u-time');
    const [cause] = await rejectUpdate('u-time', (e) => ({ ...e, eventTime: '2024-05-01T10:00:00.000001Z' }), ['eventTime'], ns);
    assert.equal(cause!.message, 'Invalid value: 2024-05-01 10:00:00.000001 +0000 UTC: field is immutable');
    // Removing it also makes the event old-style, whose namespace rule it still meets.
    await rejectUpdate('u-time', (e) => without(e, 'eventTime'), ['eventTime'], ns);
    const stored = (await api(server, 'GET', `${events(ns)}/u-time`)).body;
    for (const same of ['2024-05-01T12:00:00.000000+02:00', '2024-05-01T10:00:00.000000+00:00']) {
      const r = await api(server, 'PUT', `${events(ns)}/u-time`, { ...stored, eventTime: same });
      assert.equal(r.status, 200, `${same}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.eventTime, '2024-05-01T10:00:00.000000Z');
      assert.equal(r.body.metadata.resourceVersion, stored.metadata.resourceVersion, 'nothing changed');
    }
  });

  test('a changed series is validated again', async () => {
    await base('u-series');
    await rejectUpdate('u-series', (e) => ({ ...e, series: { count: 1, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }), ['series.count'], ns);
    await rejectUpdate('u-series', (e) => ({ ...e, series: { count: 2 } }), ['series.lastObservedTime'], ns);
    const ok = await api(server, 'PATCH', `${events(ns)}/u-series`, { series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }, MERGE);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await rejectUpdate('u-series', (e) => ({ ...e, series: { ...(e.series as Json), count: 0 } }), ['series.count'], ns);
    // Removing the series is a change that passes.
    const removed = await api(server, 'PATCH', `${events(ns)}/u-series`, { series: null }, MERGE);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal('series' in removed.body, false);
  });

  test('the create-time rules hold on update too', async () => {
    await base('u-common');
    // Emptying reportingInstance breaks both the requirement and immutability.
    await rejectUpdate('u-common', (e) => ({ ...e, reportingInstance: '' }), ['reportingInstance', 'reportingInstance'], ns);
    await rejectUpdate('u-common', (e) => ({ ...e, regarding: { kind: 'Pod', name: 'web-1' } }), ['involvedObject.namespace', 'involvedObject'], ns);
  });

  test('labels and annotations may change', async () => {
    const c = await base('u-meta');
    const r = await api(server, 'PUT', `${events(ns)}/u-meta`, { ...c, metadata: { ...c.metadata, labels: { a: 'b' }, annotations: { note: 'x' } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.metadata.labels, { a: 'b' });
  });
});

describe('field selectors', () => {
  const ns = 'ev-sel';
  before(async () => {
    await created('s-pod', { reason: 'Pulled', type: 'Normal' }, ns);
    await created(
      's-node',
      {
        reason: 'NodeNotReady',
        type: 'Warning',
        reportingController: 'orch.io/node-controller',
        regarding: { kind: 'Node', namespace: ns, name: 'node-1', uid: 'uid-node-1', apiVersion: 'v1', resourceVersion: '7', fieldPath: '' },
      },
      ns,
    );
    await created('s-svc', { reason: 'Pulled', type: 'Warning', regarding: { kind: 'Service', namespace: ns, name: 'web-1', apiVersion: 'v1' } }, ns);
  });
  const select = async (selector: string, path = events(ns)) => {
    const r = await api(server, 'GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
    assert.equal(r.status, 200, `${selector}: ${JSON.stringify(r.body)}`);
    return names(r.body);
  };

  test('regarding.* fields', async () => {
    assert.deepEqual(await select('regarding.name=web-1'), ['s-pod', 's-svc']);
    assert.deepEqual(await select('regarding.kind=Node'), ['s-node']);
    assert.deepEqual(await select(`regarding.namespace=${ns}`), ['s-node', 's-pod', 's-svc']);
    assert.deepEqual(await select('regarding.uid=uid-web-1'), ['s-pod']);
    assert.deepEqual(await select('regarding.apiVersion=v1,regarding.kind!=Pod'), ['s-node', 's-svc']);
    assert.deepEqual(await select('regarding.resourceVersion=7'), ['s-node']);
    assert.deepEqual(await select('regarding.fieldPath=spec.containers{web}'), ['s-pod']);
    assert.deepEqual(await select('regarding.fieldPath='), ['s-node', 's-svc']);
  });

  test('reason, type, reportingController and source', async () => {
    assert.deepEqual(await select('reason=Pulled'), ['s-pod', 's-svc']);
    assert.deepEqual(await select('type=Warning'), ['s-node', 's-svc']);
    assert.deepEqual(await select('type=Warning,reason=Pulled'), ['s-svc']);
    assert.deepEqual(await select('reportingController=orch.io/node-controller'), ['s-node']);
    // source falls back to the reporting controller when no deprecated source is set.
    assert.deepEqual(await select('source=orch.io/test-controller'), ['s-pod', 's-svc']);
    assert.deepEqual(await select('metadata.name=s-node'), ['s-node']);
  });

  test('across namespaces', async () => {
    assert.deepEqual(await select(`regarding.kind=Node,metadata.namespace=${ns}`, `/apis/${API_VERSION}/events`), ['s-node']);
  });

  test('core and unknown field names are refused with 400', async () => {
    for (const field of ['involvedObject.name', 'reportingComponent', 'note', 'action', 'series.count', 'spec.foo']) {
      const r = await api(server, 'GET', `${events(ns)}?fieldSelector=${encodeURIComponent(`${field}=x`)}`);
      assert.equal(r.status, 400, field);
      assert.equal(r.body.reason, 'BadRequest');
      assert.equal(r.body.message, `field label not supported: ${field}`);
    }
  });
});


describe('time to live (--event-ttl)', () => {
  test('an event goes once its last write is older than the TTL; a series heartbeat keeps it', async () => {
    const short = await testServer({ eventTtlMs: 1500 });
    const path = `/apis/${API_VERSION}/namespaces/default/events`;
    const mk = (name: string, extra: Json = {}) => event(name, { ...extra, regarding: { kind: 'Pod', namespace: 'default', name: 'web-1' } }, 'default');
    assert.equal((await api(short, 'POST', path, mk('ttl-old'))).status, 201);
    // Observed again far in the future: alive until then as far as its fields tell.
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    assert.equal((await api(short, 'POST', path, mk('ttl-beat', { series: { count: 2, lastObservedTime: future } }))).status, 201);
    const deadline = Date.now() + 8000;
    while ((await api(short, 'GET', `${path}/ttl-old`)).status !== 404) {
      assert.ok(Date.now() < deadline, 'the expired event is removed');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal((await api(short, 'GET', `${path}/ttl-beat`)).status, 200);
    // The default server keeps events for an hour.
    assert.equal((await api(server, 'GET', `${events()}`)).status, 200);
  });
});
