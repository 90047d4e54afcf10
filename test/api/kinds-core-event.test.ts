// Core v1 Event over real HTTP, served from the same storage as events.orch.io/v1 Event: each
// group reads, lists, patches, applies, deletes and watches what the other wrote (same name, uid
// and resourceVersion, fields mapped as Kubernetes converts them), core's own validation and field
// selectors, managed fields per version, the garbage and namespace controllers, Tables, discovery,
// OpenAPI, protobuf, client-node's CoreV1Api in both naming profiles, kubectl (newest and 1.20) and
// the Python client.

import { describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import type * as K8s from '@kubernetes/client-node';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { kubeConfigFor, loadClientNode } from '../support/client-node.ts';
import { kubectl120, kubectlFor, newestKubectl } from '../support/kubectl.ts';
import { decodeObject, encodeObject } from '../../src/wire/protobuf/index.ts';

// Everything awaited before the first test is registered: a top-level await between
// registrations lets a filtered run finish the file (and close its servers) too early.
const server = await testServer();
const k8s: typeof K8s = await loadClientNode();
const EVENTS_V1 = 'events.orch.io/v1';
const core = (ns: string) => `/api/v1/namespaces/${ns}/events`;
const group = (ns: string) => `/apis/${EVENTS_V1}/namespaces/${ns}/events`;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.orch.io' };

type Json = Record<string, any>;

async function namespace(name: string): Promise<string> {
  const r = await api(server, 'POST', '/api/v1/namespaces', { metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return name;
}

/** A legacy core Event (no eventTime), as kubelet and client-go's recorder write them. */
function coreEvent(ns: string, name: string, extra: Json = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    involvedObject: { kind: 'Pod', namespace: ns, name: 'web-1', uid: 'uid-web-1', apiVersion: 'v1', resourceVersion: '42', fieldPath: 'spec.containers{web}' },
    reason: 'Pulled',
    message: 'Container image pulled',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2024-05-01T10:00:00Z',
    lastTimestamp: '2024-05-01T10:05:00Z',
    count: 3,
    type: 'Normal',
    ...extra,
  };
}

/** A new-style events/v1 Event. */
function groupEvent(ns: string, name: string, extra: Json = {}): Json {
  return {
    apiVersion: EVENTS_V1,
    kind: 'Event',
    metadata: { name },
    eventTime: '2024-05-01T10:00:00.123456Z',
    reportingController: 'orch.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    type: 'Warning',
    note: 'Assigned to node-2',
    regarding: { kind: 'Lease', namespace: ns, name: 'leader', uid: 'uid-leader', apiVersion: 'coordination.orch.io/v1' },
    related: { kind: 'Pod', namespace: ns, name: 'web-2' },
    ...extra,
  };
}

const stripMeta = ({ metadata: _m, apiVersion: _a, kind: _k, ...rest }: Json) => rest;

describe('one object, two groups', () => {
  test('a core Event reads through events.orch.io/v1 with every field mapped, same name, uid and resourceVersion', async () => {
    const ns = await namespace('ce-map-core');
    const created = await api(server, 'POST', core(ns), coreEvent(ns, 'pulled', { action: 'Pull', reportingComponent: 'kubelet', reportingInstance: 'node-1', related: { kind: 'Node', name: 'node-1' } }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.apiVersion, 'v1');
    const viaGroup = await api(server, 'GET', `${group(ns)}/pulled`);
    assert.equal(viaGroup.status, 200);
    assert.equal(viaGroup.body.apiVersion, EVENTS_V1);
    for (const f of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp'] as const) assert.equal(viaGroup.body.metadata[f], created.body.metadata[f], f);
    assert.deepEqual(stripMeta(viaGroup.body), {
      regarding: { kind: 'Pod', namespace: ns, name: 'web-1', uid: 'uid-web-1', apiVersion: 'v1', resourceVersion: '42', fieldPath: 'spec.containers{web}' },
      reason: 'Pulled',
      note: 'Container image pulled',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2024-05-01T10:00:00Z',
      deprecatedLastTimestamp: '2024-05-01T10:05:00Z',
      deprecatedCount: 3,
      type: 'Normal',
      action: 'Pull',
      related: { kind: 'Node', name: 'node-1' },
      reportingController: 'kubelet',
      reportingInstance: 'node-1',
    });
    const back = await api(server, 'GET', `${core(ns)}/pulled`);
    assert.deepEqual(back.body, created.body);
  });

  test('an events.orch.io/v1 Event reads through core v1 with every field mapped', async () => {
    const ns = await namespace('ce-map-group');
    const created = await api(server, 'POST', group(ns), groupEvent(ns, 'scheduled', { series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.5Z' } }));
    assert.equal(created.status, 201, created.text);
    const viaCore = await api(server, 'GET', `${core(ns)}/scheduled`);
    assert.equal(viaCore.status, 200);
    assert.equal(viaCore.body.apiVersion, 'v1');
    assert.equal(viaCore.body.kind, 'Event');
    assert.equal(viaCore.body.metadata.uid, created.body.metadata.uid);
    assert.equal(viaCore.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
    assert.deepEqual(stripMeta(viaCore.body), {
      involvedObject: { kind: 'Lease', namespace: ns, name: 'leader', uid: 'uid-leader', apiVersion: 'coordination.orch.io/v1' },
      reason: 'Scheduled',
      message: 'Assigned to node-2',
      source: {},
      type: 'Warning',
      eventTime: '2024-05-01T10:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.500000Z' },
      action: 'Binding',
      related: { kind: 'Pod', namespace: ns, name: 'web-2' },
      reportingComponent: 'orch.io/scheduler',
      reportingInstance: 'scheduler-1',
    });
    // Core field order is core's, as a typed client writes it.
    assert.deepEqual(Object.keys(viaCore.body).slice(3, 6), ['involvedObject', 'reason', 'message']);
  });

  test('an event without an involved object still has involvedObject through core, and nothing through the group', async () => {
    // Without an involved object's namespace a legacy event belongs in default.
    const ns = 'default';
    const created = await api(server, 'POST', core(ns), { metadata: { name: 'bare' }, reason: 'Started' });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.involvedObject, {});
    // Core always writes its structs and reporting strings, as Kubernetes does.
    assert.deepEqual([created.body.source, created.body.reportingComponent, created.body.reportingInstance], [{}, '', '']);
    assert.deepEqual(Object.keys(created.body), ['apiVersion', 'kind', 'metadata', 'involvedObject', 'reason', 'source', 'reportingComponent', 'reportingInstance']);
    // A dry run answers the same form, in JSON and YAML alike.
    const dry = await api(server, 'POST', `${core(ns)}?dryRun=All`, { metadata: { name: 'bare-dry' }, reason: 'Started' });
    assert.equal(dry.status, 201, dry.text);
    assert.deepEqual(Object.keys(dry.body), Object.keys(created.body));
    const yaml = await api(server, 'PATCH', `${core(ns)}/bare?dryRun=All`, { message: 'm' }, { ...MERGE, Accept: 'application/yaml' });
    assert.match(yaml.text, /^involvedObject: \{\}$/m);
    assert.equal((await api(server, 'GET', `${core(ns)}/bare-dry`)).status, 404);
    assert.equal('regarding' in (await api(server, 'GET', `${group(ns)}/bare`)).body, false);
    // A PUT of what was read changes nothing: same resourceVersion.
    const put = await api(server, 'PUT', `${core(ns)}/bare`, created.body);
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
  });

  test('list in both groups, in a namespace and across namespaces', async () => {
    const ns = await namespace('ce-list');
    await api(server, 'POST', core(ns), coreEvent(ns, 'a'));
    await api(server, 'POST', group(ns), groupEvent(ns, 'b'));
    const viaCore = await api(server, 'GET', core(ns));
    assert.equal(viaCore.body.kind, 'EventList');
    assert.equal(viaCore.body.apiVersion, 'v1');
    assert.deepEqual(viaCore.body.items.map((e: Json) => [e.apiVersion, e.metadata.name, e.message]), [
      ['v1', 'a', 'Container image pulled'],
      ['v1', 'b', 'Assigned to node-2'],
    ]);
    const viaGroup = await api(server, 'GET', group(ns));
    assert.deepEqual(viaGroup.body.items.map((e: Json) => [e.apiVersion, e.metadata.name, e.note]), [
      [EVENTS_V1, 'a', 'Container image pulled'],
      [EVENTS_V1, 'b', 'Assigned to node-2'],
    ]);
    assert.equal(viaCore.body.metadata.resourceVersion, viaGroup.body.metadata.resourceVersion);
    const all = await api(server, 'GET', `/api/v1/events?fieldSelector=metadata.namespace=${ns}`);
    assert.deepEqual(all.body.items.map((e: Json) => e.metadata.name), ['a', 'b']);
    const paged = await api(server, 'GET', `${core(ns)}?limit=1`);
    assert.equal(paged.body.items.length, 1);
    const rest = await api(server, 'GET', `${core(ns)}?limit=1&continue=${encodeURIComponent(paged.body.metadata.continue)}`);
    assert.deepEqual(rest.body.items.map((e: Json) => e.metadata.name), ['b']);
  });

  test('patch, apply and delete through core what the group wrote, and the other way round', async () => {
    const ns = await namespace('ce-writes');
    await api(server, 'POST', group(ns), groupEvent(ns, 'g'));
    // A series heartbeat through core: legacy rules only, the group sees it.
    const patched = await api(server, 'PATCH', `${core(ns)}/g?fieldManager=recorder`, { series: { count: 2, lastObservedTime: '2024-05-01T10:02:00Z' } }, MERGE);
    assert.equal(patched.status, 200, patched.text);
    const seen = await api(server, 'GET', `${group(ns)}/g`);
    assert.deepEqual(seen.body.series, { count: 2, lastObservedTime: '2024-05-01T10:02:00.000000Z' });
    assert.equal(seen.body.metadata.resourceVersion, patched.body.metadata.resourceVersion);
    const managers = (o: Json) => (o.metadata.managedFields as Json[]).map((m) => [m.manager, m.operation, m.apiVersion]);
    assert.deepEqual(managers(seen.body).sort(), [
      ['node', 'Update', EVENTS_V1],
      ['recorder', 'Update', 'v1'],
    ]);
    const recorder = (seen.body.metadata.managedFields as Json[]).find((m) => m.manager === 'recorder')!;
    assert.deepEqual(Object.keys(recorder.fieldsV1), ['f:series']);

    // Server-side apply through core of an event the group wrote.
    const applied = await api(server, 'PATCH', `${core(ns)}/g?fieldManager=applier`, JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'g', labels: { applied: 'yes' } } }), APPLY);
    assert.equal(applied.status, 200, applied.text);
    assert.equal((await api(server, 'GET', `${group(ns)}/g`)).body.metadata.labels.applied, 'yes');
    assert.ok(managers(applied.body).some(([m, op, v]) => m === 'applier' && op === 'Apply' && v === 'v1'));

    // The group patches what core wrote (the deprecated fields are immutable there).
    await api(server, 'POST', core(ns), coreEvent(ns, 'c'));
    const viaGroup = await api(server, 'PATCH', `${group(ns)}/c`, { metadata: { labels: { seen: 'group' } } }, MERGE);
    assert.equal(viaGroup.status, 200, viaGroup.text);
    assert.equal((await api(server, 'GET', `${core(ns)}/c`)).body.metadata.labels.seen, 'group');
    const refused = await api(server, 'PATCH', `${group(ns)}/c`, { note: 'changed' }, MERGE);
    assert.equal(refused.status, 422);
    // Core may change the message: its update has no immutability rules.
    const changed = await api(server, 'PATCH', `${core(ns)}/c`, { message: 'changed', count: 4 }, MERGE);
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await api(server, 'GET', `${group(ns)}/c`)).body.deprecatedCount, 4);

    // Delete through each group what the other wrote.
    const del = await api(server, 'DELETE', `${core(ns)}/g`);
    assert.equal(del.status, 200, del.text);
    assert.equal((await api(server, 'GET', `${group(ns)}/g`)).status, 404);
    assert.equal((await api(server, 'DELETE', `${group(ns)}/c`)).status, 200);
    assert.equal((await api(server, 'GET', `${core(ns)}/c`)).status, 404);
    const missing = await api(server, 'GET', `${core(ns)}/c`);
    assert.equal(missing.body.reason, 'NotFound');
    assert.equal(missing.body.message, 'events "c" not found');
  });

  test('managed fields are compared in each manager\'s own version: a core write takes the renamed field from the group\'s manager', async () => {
    const ns = await namespace('ce-managers');
    await api(server, 'POST', `${group(ns)}?fieldManager=scheduler`, groupEvent(ns, 'm'));
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'm' }, message: 'rewritten', count: 5 });
    // message is the group's note, which the scheduler owns: a conflict named in its version.
    const conflict = await api(server, 'PATCH', `${core(ns)}/m?fieldManager=fixer`, body, APPLY);
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.body.message, `Apply failed with 1 conflict: conflict with "scheduler" using ${EVENTS_V1}: .note`);
    assert.equal((await api(server, 'GET', `${group(ns)}/m`)).body.note, 'Assigned to node-2');
    const forced = await api(server, 'PATCH', `${core(ns)}/m?fieldManager=fixer&force=true`, body, APPLY);
    assert.equal(forced.status, 200, forced.text);
    const entries = Object.fromEntries((forced.body.metadata.managedFields as Json[]).map((m) => [m.manager, [m.operation, m.apiVersion, Object.keys(m.fieldsV1).sort()]]));
    assert.deepEqual(entries.fixer, ['Apply', 'v1', ['f:count', 'f:message']]);
    assert.equal(entries.scheduler[1], EVENTS_V1);
    assert.equal(entries.scheduler[2].includes('f:note'), false);
    assert.ok(entries.scheduler[2].includes('f:regarding'));
    // A non-apply core write takes fields from the group's manager the same way.
    await api(server, 'POST', `${group(ns)}?fieldManager=scheduler`, groupEvent(ns, 'm2'));
    const updated = await api(server, 'PATCH', `${core(ns)}/m2?fieldManager=editor`, { message: 'edited' }, MERGE);
    const byManager = Object.fromEntries((updated.body.metadata.managedFields as Json[]).map((m) => [m.manager, Object.keys(m.fieldsV1)]));
    assert.deepEqual(byManager.editor, ['f:message']);
    assert.equal(byManager.scheduler.includes('f:note'), false);
  });

  test('a core PUT of a missing event creates it; the group reads it', async () => {
    const ns = await namespace('ce-put');
    const r = await api(server, 'PUT', `${core(ns)}/made`, coreEvent(ns, 'made'));
    assert.equal(r.status, 201, r.text);
    assert.equal((await api(server, 'GET', `${group(ns)}/made`)).body.note, 'Container image pulled');
  });

  test('watch through one group while writing through the other', async () => {
    const ns = await namespace('ce-watch');
    const start = (await api(server, 'GET', core(ns))).body.metadata.resourceVersion;
    const coreWatch = readWatch(`${server.url}${core(ns)}?watch=true&resourceVersion=${start}`);
    const groupWatch = readWatch(`${server.url}${group(ns)}?watch=true&resourceVersion=${start}&fieldSelector=regarding.name=web-1`);
    try {
      await api(server, 'POST', group(ns), groupEvent(ns, 'w1'));
      await api(server, 'POST', core(ns), coreEvent(ns, 'w2'));
      await api(server, 'PATCH', `${group(ns)}/w1`, { metadata: { labels: { x: 'y' } } }, MERGE);
      await api(server, 'DELETE', `${core(ns)}/w2`);
      const fromCore = await coreWatch.next(4);
      assert.deepEqual(fromCore.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name]), [
        ['ADDED', 'v1', 'w1'],
        ['ADDED', 'v1', 'w2'],
        ['MODIFIED', 'v1', 'w1'],
        ['DELETED', 'v1', 'w2'],
      ]);
      assert.equal(fromCore[0]!.object.message, 'Assigned to node-2');
      assert.equal(fromCore[0]!.object.reportingComponent, 'orch.io/scheduler');
      // The group's watch, with its own field selector, sees only the core event about web-1.
      const fromGroup = await groupWatch.next(2);
      assert.deepEqual(fromGroup.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.note]), [
        ['ADDED', EVENTS_V1, 'w2', 'Container image pulled'],
        ['DELETED', EVENTS_V1, 'w2', 'Container image pulled'],
      ]);
    } finally {
      coreWatch.close();
      groupWatch.close();
    }
  });
});

describe('controllers', () => {
  /** Polls `path` until it answers 404. */
  async function gone(path: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await api(server, 'GET', path)).status === 404) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`${path} still exists`);
  }

  test('an owned core Event goes with its owner; a namespace goes with the events of both groups', async () => {
    const ns = await namespace('ce-controllers');
    const lease = (await api(server, 'POST', `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`, { metadata: { name: 'owner' }, spec: {} })).body;
    const ownerReferences = [{ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', name: 'owner', uid: lease.metadata.uid }];
    assert.equal((await api(server, 'POST', core(ns), coreEvent(ns, 'owned', { metadata: { name: 'owned', ownerReferences } }))).status, 201);
    await api(server, 'POST', group(ns), groupEvent(ns, 'kept'));
    await api(server, 'DELETE', `/apis/coordination.orch.io/v1/namespaces/${ns}/leases/owner`);
    await gone(`${core(ns)}/owned`);
    assert.equal((await api(server, 'GET', `${core(ns)}/kept`)).status, 200);
    await api(server, 'POST', core(ns), coreEvent(ns, 'legacy'));
    await api(server, 'DELETE', `/api/v1/namespaces/${ns}`);
    await gone(`/api/v1/namespaces/${ns}`);
    assert.deepEqual((await api(server, 'GET', `/api/v1/events?fieldSelector=metadata.namespace=${ns}`)).body.items, []);
  });
});

describe('field selectors', () => {
  test('every core field kubectl and controllers use, and the group keeps its own', async () => {
    const ns = await namespace('ce-fields');
    await api(server, 'POST', core(ns), coreEvent(ns, 'legacy'));
    await api(server, 'POST', group(ns), groupEvent(ns, 'modern'));
    await api(server, 'POST', core(ns), coreEvent(ns, 'other', { involvedObject: { kind: 'Lease', namespace: ns, name: 'l1' }, reason: 'Renewed', type: 'Warning', source: {}, reportingComponent: 'lease-ctl' }));
    const names = async (path: string, selector: string) => {
      const r = await api(server, 'GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
      assert.equal(r.status, 200, `${selector}: ${r.text}`);
      return r.body.items.map((e: Json) => e.metadata.name);
    };
    const cases: [string, string[]][] = [
      ['involvedObject.kind=Pod', ['legacy']],
      ['involvedObject.kind=Lease', ['modern', 'other']],
      [`involvedObject.namespace=${ns}`, ['legacy', 'modern', 'other']],
      ['involvedObject.name=l1', ['other']],
      ['involvedObject.uid=uid-leader', ['modern']],
      ['involvedObject.apiVersion=v1', ['legacy']],
      ['involvedObject.resourceVersion=42', ['legacy']],
      ['involvedObject.fieldPath=spec.containers{web}', ['legacy']],
      ['reason=Scheduled', ['modern']],
      ['reportingComponent=orch.io/scheduler', ['modern']],
      // source: the deprecated source component, else the reporting component.
      ['source=kubelet', ['legacy']],
      ['source=lease-ctl', ['other']],
      ['source=orch.io/scheduler', ['modern']],
      ['type=Warning', ['modern', 'other']],
      ['type!=Warning,involvedObject.kind=Pod', ['legacy']],
      ['metadata.name=other', ['other']],
    ];
    for (const [selector, want] of cases) assert.deepEqual(await names(core(ns), selector), want, selector);
    assert.deepEqual(await names(`/api/v1/events`, `involvedObject.name=l1,metadata.namespace=${ns}`), ['other']);
    for (const [selector, want] of [
      ['regarding.kind=Lease', ['modern', 'other']],
      ['reportingController=lease-ctl', ['other']],
      ['source=kubelet', ['legacy']],
    ] as const)
      assert.deepEqual(await names(group(ns), selector), want, selector);
    // Each group accepts only its own labels.
    for (const [path, selector] of [
      [core(ns), 'regarding.kind=Pod'],
      [group(ns), 'involvedObject.kind=Pod'],
      [core(ns), 'note=x'],
    ] as const) {
      const r = await api(server, 'GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
      assert.equal(r.status, 400, selector);
      assert.equal(r.body.reason, 'BadRequest');
      assert.match(r.body.message, /field label not supported/);
    }
  });
});

describe('validation of core Events', () => {
  /** A 422 for `name` whose causes are exactly `fields`; nothing is stored under that name. */
  async function invalid(ns: string, body: Json, fields: string[]): Promise<Json[]> {
    const r = await api(server, 'POST', core(ns), body);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.details.kind, 'Event');
    assert.equal(r.body.details.group, undefined);
    assert.deepEqual(r.body.details.causes.map((c: Json) => c.field), fields, r.text);
    assert.match(r.body.message, new RegExp(`^Event "${body.metadata.name}" is invalid: `));
    assert.equal((await api(server, 'GET', `${core(ns)}/${body.metadata.name}`)).status, 404);
    return r.body.details.causes;
  }

  test('legacy events (no eventTime): only namespace agreement; the deprecated fields are allowed', async () => {
    const ns = await namespace('ce-valid-legacy');
    const causes = await invalid(ns, coreEvent(ns, 'elsewhere', { involvedObject: { kind: 'Pod', namespace: 'other', name: 'p' } }), ['involvedObject.namespace']);
    assert.equal(causes[0]!.message, 'Invalid value: "other": does not match event.namespace');
    await invalid(ns, coreEvent(ns, 'no-ns', { involvedObject: { kind: 'Node', name: 'n' } }), ['involvedObject.namespace']);
    // No type, no reporting fields, count and timestamps: all fine for core (not for the group).
    const ok = await api(server, 'POST', core(ns), { metadata: { name: 'minimal' }, involvedObject: { namespace: ns }, count: 1, firstTimestamp: '2024-01-01T00:00:00Z' });
    assert.equal(ok.status, 201, ok.text);
    const viaGroup = await api(server, 'POST', group(ns), { metadata: { name: 'minimal-group' }, regarding: { namespace: ns }, deprecatedCount: 1 });
    assert.equal(viaGroup.status, 422);
    // A cluster-scoped object's legacy event lives in default.
    assert.equal((await api(server, 'POST', core('default'), coreEvent('default', 'node-event', { involvedObject: { kind: 'Node', name: 'n' } }))).status, 201);
  });

  test('new-style events (eventTime set): reporting fields under their core names, lengths, message limit', async () => {
    const ns = await namespace('ce-valid-new');
    const base = { metadata: { name: 'n1' }, eventTime: '2024-05-01T10:00:00.000000Z', involvedObject: { kind: 'Pod', namespace: ns, name: 'p' } };
    const causes = await invalid(ns, base, ['reportingComponent', 'reportingComponent', 'reportingInstance', 'action', 'reason']);
    assert.deepEqual(causes.map((c) => c.reason), ['FieldValueRequired', 'FieldValueInvalid', 'FieldValueRequired', 'FieldValueRequired', 'FieldValueRequired']);
    const long = 'x'.repeat(129);
    await invalid(
      ns,
      { ...base, reportingComponent: 'orch.io/c', reportingInstance: long, action: long, reason: long, message: 'm'.repeat(1025) },
      ['reportingInstance', 'action', 'reason', 'message'],
    );
    await invalid(ns, { ...base, reportingComponent: 'not a name', reportingInstance: 'i', action: 'a', reason: 'r' }, ['reportingComponent']);
    await invalid(ns, { ...base, involvedObject: { kind: 'Node', name: 'n' }, reportingComponent: 'c', reportingInstance: 'i', action: 'a', reason: 'r' }, ['involvedObject.namespace']);
    // Core does not require type, nor forbid the deprecated fields, for new-style events either.
    const ok = await api(server, 'POST', core(ns), { ...base, reportingComponent: 'c', reportingInstance: 'i', action: 'a', reason: 'r', count: 2, source: { component: 'c' } });
    assert.equal(ok.status, 201, ok.text);
  });

  test('updates through core get the legacy rules; bad input changes nothing', async () => {
    const ns = await namespace('ce-valid-update');
    const created = (await api(server, 'POST', core(ns), coreEvent(ns, 'u'))).body;
    const r = await api(server, 'PATCH', `${core(ns)}/u`, { involvedObject: { namespace: 'elsewhere' } }, MERGE);
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body.details.causes.map((c: Json) => c.field), ['involvedObject.namespace']);
    const after = await api(server, 'GET', `${core(ns)}/u`);
    assert.equal(after.body.metadata.resourceVersion, created.metadata.resourceVersion);
    const unknown = await api(server, 'POST', `${core(ns)}?fieldValidation=Strict`, coreEvent(ns, 'strict', { note: 'group field' }));
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.body.message, /unknown field "note"/);
    const wrongType = await api(server, 'POST', core(ns), coreEvent(ns, 'typed', { count: 'three' }));
    assert.equal(wrongType.status, 400, wrongType.text);
    assert.equal((await api(server, 'GET', `${core(ns)}/typed`)).status, 404);
  });
});

describe('serving', () => {
  test('discovery lists core events with shortName ev, and OpenAPI describes them', async () => {
    const v1 = await api(server, 'GET', '/api/v1');
    const ev = v1.body.resources.find((r: Json) => r.name === 'events');
    assert.deepEqual(ev, { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ev'], storageVersionHash: 'r2yiGXH7wu8=' });
    // kube-apiserver's hash of the version both groups' events are kept at (core v1 Event), the same in the events group.
    const group = await api(server, 'GET', '/apis/events.orch.io/v1');
    assert.equal(group.body.resources.find((r: Json) => r.name === 'events').storageVersionHash, 'r2yiGXH7wu8=');
    const v3 = await api(server, 'GET', '/openapi/v3/api/v1');
    const schema = v3.body.components.schemas['io.orch.core.v1.Event'];
    assert.deepEqual(Object.keys(schema.properties), ['apiVersion', 'kind', 'metadata', ...['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime', 'series', 'action', 'related', 'reportingComponent', 'reportingInstance']]);
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: '', version: 'v1', kind: 'Event' }]);
    assert.ok(v3.body.paths['/api/v1/namespaces/{namespace}/events/{name}']);
    const v2 = await api(server, 'GET', '/openapi/v2');
    assert.ok(v2.body.definitions['io.orch.core.v1.Event']);
    assert.ok(v2.body.paths['/api/v1/events']);
  });

  test('Table: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; wide columns as priority 1', async () => {
    const ns = await namespace('ce-table');
    await api(server, 'POST', core(ns), coreEvent(ns, 't1'));
    const t = await api(server, 'GET', core(ns), undefined, TABLE);
    assert.equal(t.status, 200, t.text);
    assert.equal(t.body.kind, 'Table');
    assert.deepEqual(
      t.body.columnDefinitions.map((c: Json) => [c.name, c.priority]),
      [
        ['Last Seen', 0],
        ['Type', 0],
        ['Reason', 0],
        ['Object', 0],
        ['Subobject', 1],
        ['Source', 1],
        ['Message', 0],
        ['First Seen', 1],
        ['Count', 1],
        ['Name', 1],
      ],
    );
    const [lastSeen, ...cells] = t.body.rows[0].cells;
    assert.match(lastSeen, /^\d+y\d*d?$/);
    assert.deepEqual(cells.slice(0, 6), ['Normal', 'Pulled', 'pod/web-1', 'spec.containers{web}', 'kubelet, node-1', 'Container image pulled']);
    assert.deepEqual(cells.slice(7), [3, 't1']);
    assert.equal(t.body.rows[0].object.metadata.name, 't1');
  });

  test('protobuf: core/v1 Event field numbers, same content as JSON', async () => {
    const ns = await namespace('ce-proto');
    await api(server, 'POST', group(ns), groupEvent(ns, 'p1', { series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } }));
    const json = (await api(server, 'GET', `${core(ns)}/p1`)).body;
    const res = await fetch(`${server.url}${core(ns)}/p1`, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(decodeObject(bytes), json);
    // involvedObject is field 2 and reportingComponent field 14 of core/v1 Event.
    const message = 'Assigned to node-2';
    assert.ok(bytes.includes(Buffer.concat([Buffer.from([0x22, message.length]), Buffer.from(message)])), 'message as field 4');
    assert.ok(bytes.includes(Buffer.concat([Buffer.from([0x72, 'orch.io/scheduler'.length]), Buffer.from('orch.io/scheduler')])), 'reportingComponent as field 14');
    const list = await fetch(`${server.url}${core(ns)}`, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    const decoded = decodeObject(Buffer.from(await list.arrayBuffer())) as unknown as Json;
    assert.equal(decoded.kind, 'EventList');
    assert.deepEqual(decoded.items[0].involvedObject, json.involvedObject);
    // client-go's recorders send core Events as protobuf.
    const body = encodeObject(coreEvent(ns, 'from-proto') as unknown as Parameters<typeof encodeObject>[0]);
    const posted = await fetch(`${server.url}${core(ns)}`, { method: 'POST', headers: { 'Content-Type': 'application/vnd.orch.protobuf', Accept: 'application/json' }, body });
    assert.equal(posted.status, 201, await posted.clone().text());
    const viaGroup = (await api(server, 'GET', `${group(ns)}/from-proto`)).body;
    assert.deepEqual([viaGroup.note, viaGroup.deprecatedCount, viaGroup.deprecatedSource, viaGroup.regarding.fieldPath], ['Container image pulled', 3, { component: 'kubelet', host: 'node-1' }, 'spec.containers{web}']);
  });
});

let kubernetesProfile: Promise<{ url: string; kubeconfigPath?: string }> | undefined;
/** One server in the kubernetes naming profile for the tests that need Kubernetes' own names. */
const kubernetesServer = () => (kubernetesProfile ??= testServer({ naming: 'kubernetes' }));

for (const profile of ['orch', 'kubernetes'] as const) {
  describe(`client-node CoreV1Api (${profile} profile)`, () => {
    test('createNamespacedEvent and listNamespacedEvent with an involvedObject selector', async () => {
      const s = profile === 'orch' ? server : await kubernetesServer();
      const coreApi = kubeConfigFor(k8s, s.url).makeApiClient(k8s.CoreV1Api);
      const ns = `ce-client-${profile}`;
      await coreApi.createNamespace({ body: { metadata: { name: ns } } });
      const created = await coreApi.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { name: 'client-event' },
          involvedObject: { kind: 'Lease', namespace: ns, name: 'leader' },
          reason: 'LeaderElection',
          message: 'a became leader',
          source: { component: 'ctl' },
          firstTimestamp: new Date('2024-05-01T10:00:00Z'),
          lastTimestamp: new Date('2024-05-01T10:00:00Z'),
          count: 1,
          type: 'Normal',
        },
      });
      assert.equal(created.metadata?.name, 'client-event');
      assert.equal(created.involvedObject.name, 'leader');
      assert.ok(created.firstTimestamp instanceof Date);
      const listed = await coreApi.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.kind=Lease,involvedObject.name=leader' });
      assert.deepEqual(listed.items.map((e) => [e.metadata?.name, e.message, e.source?.component, e.count]), [['client-event', 'a became leader', 'ctl', 1]]);
      const all = await coreApi.listEventForAllNamespaces({ fieldSelector: `metadata.namespace=${ns}` });
      assert.equal(all.items.length, 1);
      const groupPath = `/apis/${profile === 'orch' ? EVENTS_V1 : 'events.k8s.io/v1'}/namespaces/${ns}/events/client-event`;
      assert.equal((await api(s, 'GET', groupPath)).body.note, 'a became leader');
      await coreApi.deleteNamespacedEvent({ name: 'client-event', namespace: ns });
      assert.equal((await api(s, 'GET', groupPath)).status, 404);
    });
  });
}

// kubectl reads core Events (JSON lists with field selectors), whichever group wrote them. Its
// describe of a Namespace has no Events section (kubectl's namespace describer lists none, against
// Kubernetes too), and its describe of a Node first lists the node's pods, which this server does
// not serve; the events about those objects are checked through `kubectl events` and field
// selectors instead.
for (const which of ['newest', '1.20'] as const) {
  describe(`kubectl ${which}: Events of a Namespace, a Node and a Lease`, () => {
    test('describe lease shows them; events (or get events) lists them with --for and -A', async () => {
      const kubectl = kubectlFor(server, { bin: which === 'newest' ? newestKubectl() : kubectl120(), label: `core-event-${which}` });
      const ns = await namespace(`ce-kubectl-${which.replace('.', '-')}`);
      const node = (await api(server, 'POST', '/api/v1/nodes', { metadata: { name: `ce-node-${which.replace('.', '-')}` } })).body;
      const lease = (await api(server, 'POST', `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`, { metadata: { name: 'leader' }, spec: { holderIdentity: 'a' } })).body;
      const nsObj = (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).body;
      const now = new Date();
      const seconds = `${now.toISOString().slice(0, 19)}Z`;
      const legacy = (name: string, extra: Json) => ({ metadata: { name }, type: 'Normal', source: { component: 'test-controller' }, firstTimestamp: seconds, lastTimestamp: seconds, count: 1, ...extra });
      const modern = (name: string, extra: Json) => ({ metadata: { name }, eventTime: now.toISOString(), reportingController: 'orch.io/test', reportingInstance: 'i-1', action: 'Check', type: 'Warning', ...extra });
      const ok = async (r: Promise<Awaited<ReturnType<typeof api>>>) => assert.equal((await r).status, 201, (await r).text);
      // About the lease: one through each group.
      await ok(api(server, 'POST', core(ns), legacy('lease-core', { involvedObject: { kind: 'Lease', apiVersion: 'coordination.orch.io/v1', namespace: ns, name: 'leader', uid: lease.metadata.uid }, reason: 'LeaderElected', message: 'a became leader' })));
      await ok(api(server, 'POST', group(ns), modern('lease-group', { regarding: { kind: 'Lease', apiVersion: 'coordination.orch.io/v1', namespace: ns, name: 'leader', uid: lease.metadata.uid }, reason: 'LeaseExpired', note: 'the lease ran out' })));
      // About the cluster-scoped node and namespace: in default, as Kubernetes' recorders put them.
      await ok(api(server, 'POST', group('default'), modern(`node-${which}`, { regarding: { kind: 'Node', apiVersion: 'v1', name: node.metadata.name, uid: node.metadata.uid }, reason: 'NodeNotReady', note: `node ${which} not ready` })));
      await ok(api(server, 'POST', core('default'), legacy(`ns-${which}`, { involvedObject: { kind: 'Namespace', apiVersion: 'v1', name: ns, uid: nsObj.metadata.uid }, reason: 'NamespaceChecked', message: `namespace ${which} checked` })));

      const described = await kubectl.ok(['describe', 'lease', '-n', ns, 'leader']);
      const eventsSection = described.slice(described.indexOf('Events:'));
      assert.ok(described.includes('Events:'), described);
      assert.match(eventsSection, /Normal\s+LeaderElected\s+\S+\s+test-controller\s+a became leader/);
      assert.match(eventsSection, /Warning\s+LeaseExpired\s+\S+\s+orch\.io\/test\s+the lease ran out/);
      assert.match(await kubectl.ok(['describe', 'namespace', ns]), new RegExp(`Name:\\s+${ns}`));

      const rows = (out: string) => out.trim().split('\n').slice(1).map((l) => l.trim().split(/\s{2,}/));
      if (which === 'newest') {
        const forLease = rows(await kubectl.ok(['events', '-n', ns, '--for=lease/leader']));
        assert.deepEqual(forLease.map((r) => r.slice(1)).sort(), [
          ['Normal', 'LeaderElected', 'Lease/leader', 'a became leader'],
          ['Warning', 'LeaseExpired', 'Lease/leader', 'the lease ran out'],
        ]);
        const forNode = rows(await kubectl.ok(['events', '--for', `node/${node.metadata.name}`]));
        assert.deepEqual(forNode.map((r) => r.slice(1)), [['Warning', 'NodeNotReady', `Node/${node.metadata.name}`, `node ${which} not ready`]]);
        const forNamespace = rows(await kubectl.ok(['events', '--for', `namespace/${ns}`]));
        assert.deepEqual(forNamespace.map((r) => r.slice(1)), [['Normal', 'NamespaceChecked', `Namespace/${ns}`, `namespace ${which} checked`]]);
        const all = await kubectl.ok(['events', '-A']);
        assert.match(all.split('\n')[0]!, /^NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
        for (const line of [`${ns} .* LeaderElected .* Lease/leader .* a became leader`, `default .* NodeNotReady .* Node/${node.metadata.name}`, `default .* NamespaceChecked .* Namespace/${ns}`])
          assert.match(all, new RegExp(line.replace(/ \.\* /g, '\\s+.*')));
      } else {
        const columns = ['-o', 'custom-columns=NAMESPACE:.metadata.namespace,TYPE:.type,REASON:.reason,KIND:.involvedObject.kind,NAME:.involvedObject.name,MESSAGE:.message'];
        const forLease = rows(await kubectl.ok(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.kind=Lease,involvedObject.name=leader', ...columns]));
        assert.deepEqual(forLease, [
          [ns, 'Normal', 'LeaderElected', 'Lease', 'leader', 'a became leader'],
          [ns, 'Warning', 'LeaseExpired', 'Lease', 'leader', 'the lease ran out'],
        ]);
        const all = rows(await kubectl.ok(['get', 'events', '-A', '--field-selector', 'involvedObject.kind!=Lease', ...columns]));
        for (const want of [
          ['default', 'Warning', 'NodeNotReady', 'Node', node.metadata.name, `node ${which} not ready`],
          ['default', 'Normal', 'NamespaceChecked', 'Namespace', ns, `namespace ${which} checked`],
        ])
          assert.ok(all.some((r) => JSON.stringify(r) === JSON.stringify(want)), JSON.stringify(all));
      }
    });
  });
}

// Tables through kubectl need Kubernetes' wire names (meta.k8s.io Tables): the kubernetes profile.
describe('kubectl get events prints the core Event columns (kubernetes profile)', () => {
  for (const which of ['newest', '1.20'] as const) {
    test(`kubectl ${which}: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; -o wide adds SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME`, async () => {
      const s = await kubernetesServer();
      const ns = `ce-table-${which.replace('.', '-')}`;
      await api(s, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
      await api(s, 'POST', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, { metadata: { name: 'from-group' }, eventTime: new Date().toISOString(), reportingController: 'k8s.io/test', reportingInstance: 'i', action: 'Check', reason: 'Checked', type: 'Warning', note: 'written through the group', regarding: { kind: 'Lease', namespace: ns, name: 'l' } });
      const kubectl = kubectlFor(s, { bin: which === 'newest' ? newestKubectl() : kubectl120(), label: `core-event-table-${which}` });
      const lines = (out: string) => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
      const [head, row] = lines(await kubectl.ok(['get', 'events', '-n', ns]));
      assert.deepEqual(head, ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      assert.deepEqual(row!.slice(1), ['Warning', 'Checked', 'lease/l', 'written through the group']);
      const [wideHead, wideRow] = lines(await kubectl.ok(['get', 'events', '-n', ns, '-o', 'wide']));
      assert.deepEqual(wideHead, ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
      // No subobject: the cell is empty, so the split joins nothing across it.
      assert.deepEqual(wideRow!.slice(1, 3), ['Warning', 'Checked']);
      assert.ok(wideRow!.includes('k8s.io/test, i'), JSON.stringify(wideRow));
      assert.deepEqual(wideRow!.slice(-2), ['1', 'from-group']);
    });
  }
});

// The Python client's typed models require an involvedObject on every core Event it reads.
describe('python3-kubernetes CoreV1Api (kubernetes profile)', () => {
  test('create_namespaced_event, list_namespaced_event with a field selector, list_event_for_all_namespaces', async () => {
    const s = await kubernetesServer();
    await api(s, 'POST', '/api/v1/namespaces', { metadata: { name: 'ce-python' } });
    await api(s, 'POST', '/apis/events.k8s.io/v1/namespaces/ce-python/events', { metadata: { name: 'group-written' }, eventTime: new Date().toISOString(), reportingController: 'k8s.io/test', reportingInstance: 'i', action: 'Check', reason: 'Checked', type: 'Normal', regarding: { kind: 'Lease', namespace: 'ce-python', name: 'l' } });
    const script = [
      'import sys, datetime',
      'from kubernetes import client, config',
      'c = client.Configuration(); config.load_kube_config(config_file=sys.argv[2], client_configuration=c); c.host = sys.argv[1]',
      'api = client.CoreV1Api(client.ApiClient(c))',
      't = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)',
      "made = api.create_namespaced_event('ce-python', client.CoreV1Event(metadata=client.V1ObjectMeta(name='py'), involved_object=client.V1ObjectReference(kind='Lease', name='l', namespace='ce-python'), reason='R', message='from python', type='Normal', count=1, first_timestamp=t, last_timestamp=t))",
      'print(made.involved_object.name, made.message, made.last_timestamp.isoformat())',
      "print(sorted(e.metadata.name for e in api.list_namespaced_event('ce-python', field_selector='involvedObject.kind=Lease').items))",
      "print(sorted(e.reporting_component for e in api.list_event_for_all_namespaces(field_selector='metadata.namespace=ce-python').items))",
    ].join('\n');
    const python = process.env.PYTHON_FOR_KUBERNETES || '/usr/bin/python3';
    const out = await new Promise<string>((resolve, reject) =>
      execFile(python, ['-c', script, s.url, s.kubeconfigPath!], { timeout: 60_000, encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout))),
    );
    assert.deepEqual(out.trim().split('\n'), ['l from python 2024-01-01T00:00:00+00:00', "['group-written', 'py']", "['', 'k8s.io/test']"]);
  });
});
