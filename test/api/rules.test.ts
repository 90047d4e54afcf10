// Resource rules of the served kinds as kube-apiserver applies them, over HTTP, in both naming profiles:
// JSON answers end with a newline, the namespace finalizer is the profile's, names held by
// terminating objects, deprecation warnings, value normalization (times, quantities), Node
// defaults and discovery order from APIService priorities. Every rejected request stores nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';
import type { RunningServer } from '../../src/server/server.ts';
import { decodeObject, encodeObject } from '../../src/wire/protobuf/index.ts';
import { decodeCbor, encodeCbor } from '../../src/wire/cbor.ts';
import { parse as parseYaml } from 'yaml';

// Two coordination versions, so discovery has a group whose versions can reorder.
const orch = await testServer({ featureGates: 'CBORServingAndStorage=true', runtimeConfig: 'coordination.orch.io/v1beta1=true' });
const kube = await testServer({ naming: 'kubernetes', runtimeConfig: 'coordination.k8s.io/v1beta1=true' });
const profiles: [string, RunningServer][] = [
  ['orch', orch],
  ['kubernetes', kube],
];
type Body = Record<string, unknown>;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
const STRATEGIC = { 'Content-Type': 'application/strategic-merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

async function raw(server: RunningServer, method: string, path: string, headers: Record<string, string>, body?: Uint8Array | string) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
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
    };
    for (const [what, r] of Object.entries(replies)) {
      assert.ok(r.status < 500, `${what}: ${r.status}`);
      assert.match(r.headers.get('content-type') ?? '', /json/, what);
      assert.ok(r.text.endsWith('}\n'), `${what} ends with one newline: ${JSON.stringify(r.text.slice(-20))}`);
      assert.equal(Number(r.headers.get('content-length')), Buffer.byteLength(r.text), `${what}: Content-Length counts the newline`);
    }
    // /version and the root path list are raw JSON in kube-apiserver: indented, no newline after.
    for (const path of ['/version', '/']) {
      const r = await api(orch, 'GET', path);
      assert.equal(r.text, JSON.stringify(r.body, null, 2), path);
    }
    // The same stored bytes answer again: the newline is not added to them twice.
    const again = await api(orch, 'GET', '/api/v1/nodes');
    assert.ok(again.text.endsWith('}\n') && !again.text.endsWith('\n\n'));
  });

  test('a conflict reads byte for byte as the Python client\'s e2e test expects (kubernetes profile)', async () => {
    const apiservices = '/apis/apiregistration.k8s.io/v1/apiservices';
    const body = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.wardle.k8s.io
spec:
  insecureSkipTLSVerify: true
  group: wardle.k8s.io
  groupPriorityMinimum: 1000
  versionPriority: 15
  service:
    name: api
    namespace: wardle
  version: v1alpha1
`;
    const yaml = { 'Content-Type': 'application/yaml' };
    assert.equal((await api(kube, 'POST', apiservices, body, yaml)).status, 201);
    const again = await api(kube, 'POST', apiservices, body, yaml);
    assert.equal(
      again.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"apiservices.apiregistration.k8s.io \\"v1alpha1.wardle.k8s.io\\" already exists","reason":"AlreadyExists","details":{"name":"v1alpha1.wardle.k8s.io","group":"apiregistration.k8s.io","kind":"apiservices"},"code":409}\n',
    );
    await api(kube, 'DELETE', `${apiservices}/v1alpha1.wardle.k8s.io`);
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
      await waitFor('the controller to remove its finalizer', async () => (await api(server, 'GET', '/api/v1/namespaces/fin')).status === 404, 8000);

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
      // The namespace controller may be writing the lease meanwhile: the patch still applies.
      const released = await api(server, 'PATCH', `${leases}/stays`, { metadata: { finalizers: null } }, MERGE);
      assert.equal(released.status, 200, released.text);
      await waitFor('the namespace to go', async () => (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).status === 404, 8000);
    });
  }
});

describe('Time is written at whole seconds and MicroTime with six fraction digits, in UTC', () => {
  for (const [profile, server] of profiles) {
    test(`${profile}: create, update, every patch type and apply, in JSON, YAML, protobuf and CBOR`, async () => {
      const gv = `${group(server, 'coordination')}/v1`;
      const leases = `/apis/${gv}/namespaces/default/leases`;
      const lease = (name: string, spec: Body): Body => ({ apiVersion: gv, kind: 'Lease', metadata: { name }, spec });
      const c = await api(server, 'POST', leases, lease('times', { acquireTime: '2024-01-01T00:00:00.1Z', renewTime: '2024-01-01T01:00:00.1234567+01:00' }));
      assert.equal(c.status, 201, c.text);
      assert.equal(c.body.spec.acquireTime, '2024-01-01T00:00:00.100000Z');
      assert.equal(c.body.spec.renewTime, '2024-01-01T00:00:00.123456Z');
      assert.match(c.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual((await api(server, 'GET', `${leases}/times`)).body.spec, c.body.spec, 'stored as returned');

      const put = await api(server, 'PUT', `${leases}/times`, { ...c.body, spec: { ...c.body.spec, renewTime: '2024-01-01T00:00:01Z' } });
      assert.equal(put.body.spec.renewTime, '2024-01-01T00:00:01.000000Z', put.text);
      const writes: [string, unknown, Record<string, string>, string][] = [
        ['merge', { spec: { renewTime: '2024-01-01T00:00:02.5Z' } }, MERGE, '2024-01-01T00:00:02.500000Z'],
        ['json', [{ op: 'replace', path: '/spec/renewTime', value: '2024-01-01T00:00:03.25Z' }], JSON_PATCH, '2024-01-01T00:00:03.250000Z'],
        ['strategic', { spec: { renewTime: '2024-01-01T00:00:04.000001Z' } }, STRATEGIC, '2024-01-01T00:00:04.000001Z'],
        ['strategic', { spec: { renewTime: '2024-01-01T00:00:05+00:00' } }, STRATEGIC, '2024-01-01T00:00:05.000000Z'],
      ];
      for (const [what, patch, headers, want] of writes) {
        const r = await api(server, 'PATCH', `${leases}/times`, patch, headers);
        assert.equal(r.status, 200, `${what}: ${r.text}`);
        assert.equal(r.body.spec.renewTime, want, what);
      }
      const applied = await api(server, 'PATCH', `${leases}/applied?fieldManager=rules`, lease('applied', { renewTime: '2024-01-01T00:00:06.7Z' }), APPLY);
      assert.equal(applied.status, 201, applied.text);
      assert.equal(applied.body.spec.renewTime, '2024-01-01T00:00:06.700000Z');
      // The same intent again changes nothing: the applied value and the stored one are equal.
      const again = await api(server, 'PATCH', `${leases}/applied?fieldManager=rules`, lease('applied', { renewTime: '2024-01-01T00:00:06.7Z' }), APPLY);
      assert.equal(again.body.metadata.resourceVersion, applied.body.metadata.resourceVersion);

      const yaml = await raw(server, 'POST', leases, { 'Content-Type': 'application/yaml', Accept: 'application/yaml' }, `apiVersion: ${gv}\nkind: Lease\nmetadata:\n  name: yaml-times\nspec:\n  renewTime: "2024-01-01T00:00:07.5Z"\n`);
      assert.equal(yaml.status, 201, yaml.bytes.toString());
      assert.equal((parseYaml(yaml.bytes.toString()) as { spec: { renewTime: string } }).spec.renewTime, '2024-01-01T00:00:07.500000Z');

      const pb = server.naming.protobufMediaType;
      const proto = await raw(server, 'POST', leases, { 'Content-Type': pb, Accept: pb }, encodeObject(lease('pb-times', { renewTime: '2024-01-01T00:00:08.5Z' }) as Parameters<typeof encodeObject>[0]));
      assert.equal(proto.status, 201, proto.bytes.toString());
      assert.equal((decodeObject(proto.bytes) as unknown as { spec: { renewTime: string } }).spec.renewTime, '2024-01-01T00:00:08.500000Z');

      // Conditions' lastTransitionTime and a taint's timeAdded are Time.
      const ns = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `times-${profile}` } });
      const st = await api(server, 'PATCH', `/api/v1/namespaces/${ns.body.metadata.name}/status`, { status: { conditions: [{ type: 'Custom', status: 'True', lastTransitionTime: '2024-01-01T00:00:00.7Z' }] } }, STRATEGIC);
      assert.equal(st.status, 200, st.text);
      assert.equal(st.body.status.conditions.find((x: { type: string }) => x.type === 'Custom').lastTransitionTime, '2024-01-01T00:00:00Z');
      const n = await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'times' }, spec: { taints: [{ key: 'k', effect: 'NoSchedule', timeAdded: '2024-01-01T00:00:09.999Z' }] } });
      assert.equal(n.status, 201, n.text);
      assert.equal(n.body.spec.taints[0].timeAdded, '2024-01-01T00:00:09Z');
    });

    test(`${profile}: Event eventTime and series.lastObservedTime are MicroTime`, async () => {
      const gv = `${group(server, 'events')}/v1`;
      const e = await api(server, 'POST', `/apis/${gv}/namespaces/default/events`, {
        apiVersion: gv,
        kind: 'Event',
        metadata: { name: 'times' },
        eventTime: '2024-01-01T00:00:00.1Z',
        series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.25Z' },
        reportingController: `${server.naming.annotationDomain}/test`,
        reportingInstance: 'i',
        action: 'Act',
        reason: 'Why',
        type: 'Normal',
        regarding: { kind: 'Node', name: 'n' },
      });
      assert.equal(e.status, 201, e.text);
      assert.equal(e.body.eventTime, '2024-01-01T00:00:00.100000Z');
      assert.equal(e.body.series.lastObservedTime, '2024-01-01T00:00:01.250000Z');
    });

    test(`${profile}: invalid timestamps are still refused and store nothing`, async () => {
      const gv = `${group(server, 'coordination')}/v1`;
      const leases = `/apis/${gv}/namespaces/default/leases`;
      for (const renewTime of ['yesterday', '2024-02-30T00:00:00Z', '2024-01-01T00:00:60Z']) {
        const r = await api(server, 'POST', leases, { apiVersion: gv, kind: 'Lease', metadata: { name: 'bad-time' }, spec: { renewTime } });
        assert.ok(r.status === 400 || r.status === 422, `${renewTime}: ${r.status}`);
        assert.equal((await api(server, 'GET', `${leases}/bad-time`)).status, 404);
      }
    });
  }

  test('CBOR bodies and answers carry the normalized forms', async () => {
    const gv = `${group(orch, 'coordination')}/v1`;
    const leases = `/apis/${gv}/namespaces/default/leases`;
    const r = await raw(orch, 'POST', leases, { 'Content-Type': 'application/cbor', Accept: 'application/cbor' }, encodeCbor({ apiVersion: gv, kind: 'Lease', metadata: { name: 'cbor-times' }, spec: { renewTime: '2024-01-01T00:00:10.5Z' } }));
    assert.equal(r.status, 201, r.bytes.toString());
    assert.equal((decodeCbor(r.bytes) as { spec: { renewTime: string } }).spec.renewTime, '2024-01-01T00:00:10.500000Z');
    const node = await raw(orch, 'POST', '/api/v1/nodes', { 'Content-Type': 'application/cbor', Accept: 'application/cbor' }, encodeCbor({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'cbor-q' }, status: { capacity: { cpu: '1000m' } } }));
    assert.equal(node.status, 201, node.bytes.toString());
    assert.deepEqual((decodeCbor(node.bytes) as { status: Body }).status.capacity, { cpu: '1' });
  });
});

describe('quantities are written in canonical form; one that cannot be parsed is a 400', () => {
  for (const [profile, server] of profiles) {
    test(`${profile}: Node capacity and allocatable, RuntimeClass overhead, on every write`, async () => {
      const capacity = { cpu: '1000m', memory: '1024Mi', 'ephemeral-storage': '1.5Gi', pods: 110, 'example.com/dev': '1e3', [`hugepages-2Mi`]: '0' };
      const c = await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'quantities' }, status: { capacity, allocatable: { cpu: '0.5', memory: '1Gi' } } });
      assert.equal(c.status, 201, c.text);
      assert.deepEqual(c.body.status.capacity, { cpu: '1', memory: '1Gi', 'ephemeral-storage': '1536Mi', pods: '110', 'example.com/dev': '1e3', 'hugepages-2Mi': '0' });
      assert.deepEqual(c.body.status.allocatable, { cpu: '500m', memory: '1Gi' });
      assert.deepEqual((await api(server, 'GET', '/api/v1/nodes/quantities')).body.status, c.body.status, 'stored as returned');
      const patched = await api(server, 'PATCH', '/api/v1/nodes/quantities/status', { status: { allocatable: { cpu: '1500m', memory: '2048Ki' } } }, MERGE);
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.status.allocatable, { cpu: '1500m', memory: '2Mi' });
      const applied = await api(server, 'PATCH', '/api/v1/nodes/quantities/status?fieldManager=kubelet&force=true', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'quantities' }, status: { capacity: { cpu: '2000m' } } }, APPLY);
      assert.equal(applied.status, 200, applied.text);
      assert.equal(applied.body.status.capacity.cpu, '2');

      const gv = `${group(server, 'node')}/v1`;
      const rc = await api(server, 'POST', `/apis/${gv}/runtimeclasses`, { apiVersion: gv, kind: 'RuntimeClass', metadata: { name: 'quantities' }, handler: 'runc', overhead: { podFixed: { cpu: '0.25', memory: '131072Ki' } } });
      assert.equal(rc.status, 201, rc.text);
      assert.deepEqual(rc.body.overhead.podFixed, { cpu: '250m', memory: '128Mi' });
    });

    test(`${profile}: an unparsable quantity fails decoding (400 BadRequest) and changes nothing`, async () => {
      const before = (await api(server, 'GET', '/api/v1/nodes/quantities')).body;
      for (const cpu of ['lots', '1.1.M', '5i', '1 m']) {
        const create = await api(server, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bad-quantity' }, status: { capacity: { cpu } } });
        assert.equal(create.status, 400, `${cpu}: ${create.text}`);
        assert.equal(create.body.reason, 'BadRequest');
        assert.match(create.body.message, /^Node in version "v1" cannot be handled as a Node: (quantities must match the regular expression|unable to parse quantity's suffix)/);
        const patch = await api(server, 'PATCH', '/api/v1/nodes/quantities/status', { status: { capacity: { cpu } } }, MERGE);
        assert.equal(patch.status, 400, `${cpu}: ${patch.text}`);
      }
      assert.equal((await api(server, 'GET', '/api/v1/nodes/bad-quantity')).status, 404);
      assert.deepEqual((await api(server, 'GET', '/api/v1/nodes/quantities')).body, before, 'unchanged');
    });
  }
});

describe('discovery follows the APIService priorities', () => {
  for (const [profile, server] of profiles) {
    test(`${profile}: patching groupPriorityMinimum and versionPriority reorders /apis and aggregated discovery`, async () => {
      const apiservices = `/apis/${group(server, 'apiregistration')}/v1/apiservices`;
      const aggregated = { Accept: `application/json;g=${server.naming.discoveryGroup};v=v2;as=APIGroupDiscoveryList` };
      const groups = async () => (await api(server, 'GET', '/apis')).body.groups as { name: string; versions: { version: string }[]; preferredVersion: { version: string } }[];
      const aggregatedGroups = async () => ((await api(server, 'GET', '/apis', undefined, aggregated)).body.items as { metadata: { name: string }; versions: { version: string }[] }[]);
      const node = group(server, 'node');
      const coordination = group(server, 'coordination');
      const before = await groups();
      assert.notEqual(before[0]!.name, node, 'node is not first by Kubernetes\' priorities');
      assert.deepEqual(before.find((g) => g.name === coordination)!.versions.map((v) => v.version), ['v1', 'v1beta1']);

      const p = await api(server, 'PATCH', `${apiservices}/v1.${node}`, { spec: { groupPriorityMinimum: 20000 } }, MERGE);
      assert.equal(p.status, 200, p.text);
      await waitFor('the node group to sort first', async () => (await groups())[0]!.name === node, 8000);
      assert.equal((await aggregatedGroups())[0]!.metadata.name, node);
      const v = await api(server, 'PATCH', `${apiservices}/v1beta1.${coordination}`, { spec: { versionPriority: 20 } }, MERGE);
      assert.equal(v.status, 200, v.text);
      await waitFor('v1beta1 to be preferred', async () => (await groups()).find((g) => g.name === coordination)!.preferredVersion.version === 'v1beta1', 8000);
      assert.deepEqual((await groups()).find((g) => g.name === coordination)!.versions.map((x) => x.version), ['v1beta1', 'v1']);
      assert.deepEqual((await aggregatedGroups()).find((g) => g.metadata.name === coordination)!.versions.map((x) => x.version), ['v1beta1', 'v1']);
      assert.deepEqual((await api(server, 'GET', `/apis/${coordination}`)).body.preferredVersion.version, 'v1beta1');

      // Back to Kubernetes' priorities: back to Kubernetes' order.
      await api(server, 'PATCH', `${apiservices}/v1.${node}`, { spec: { groupPriorityMinimum: 16300 } }, MERGE);
      await api(server, 'PATCH', `${apiservices}/v1beta1.${coordination}`, { spec: { versionPriority: 13 } }, MERGE);
      await waitFor('the original order', async () => JSON.stringify(await groups()) === JSON.stringify(before), 8000);
    });
  }
});
