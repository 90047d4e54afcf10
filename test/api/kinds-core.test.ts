// Node, Namespace, ComponentStatus and APIService: their rules (each violation is 422 Invalid
// naming the field, and stores nothing), subresources, controllers and columns, over HTTP.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();
type Body = Record<string, unknown>;
type Reply = Awaited<ReturnType<typeof api>>;

const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const NODES = '/api/v1/nodes';
const AS = '/apis/apiregistration.orch.io/v1/apiservices';

function assertInvalid(r: Reply, fields: string[]): void {
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.reason, 'Invalid');
  const got = (r.body.details.causes as { field: string }[]).map((c) => c.field);
  for (const f of fields) assert.ok(got.includes(f), `cause for ${f} in ${JSON.stringify(got)}`);
}

async function eventually(check: () => Promise<boolean>, what: string, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

// ---------------------------------------------------------------------------------------------

const node = (name: string, spec: Body = {}, status?: Body): Body => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec, ...(status ? { status } : {}) });

async function rejectNode(body: Body, fields: string[]): Promise<void> {
  assertInvalid(await api(server, 'POST', NODES, body), fields);
  const name = (body.metadata as { name: string }).name;
  assert.equal((await api(server, 'GET', `${NODES}/${name}`)).status, 404, 'nothing stored');
}

async function rejectNodeUpdate(name: string, change: (n: Body) => void, fields: string[]): Promise<void> {
  const before = (await api(server, 'GET', `${NODES}/${name}`)).body;
  const body = structuredClone(before);
  change(body);
  assertInvalid(await api(server, 'PUT', `${NODES}/${name}`, body), fields);
  assert.deepEqual((await api(server, 'GET', `${NODES}/${name}`)).body, before, 'unchanged');
}

describe('Node', () => {
  test('podCIDR and podCIDRs mirror each other, as Kubernetes keeps them', async () => {
    const a = await api(server, 'POST', NODES, node('cidr-one', { podCIDR: '10.244.0.0/24' }));
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(a.body.spec, { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24'] });
    const b = await api(server, 'POST', NODES, node('cidr-two', { podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'] }));
    assert.equal(b.status, 201, b.text);
    assert.equal(b.body.spec.podCIDR, '10.244.1.0/24');
  });

  test('taints: key, value, effect and unique key/effect pairs', async () => {
    await rejectNode(node('t1', { taints: [{ key: 'a' }] }), ['spec.taints[0].effect']);
    await rejectNode(node('t2', { taints: [{ key: 'a', effect: 'Sometimes' }] }), ['spec.taints[0].effect']);
    await rejectNode(node('t3', { taints: [{ key: 'bad key!', effect: 'NoSchedule' }] }), ['spec.taints[0].key']);
    await rejectNode(node('t4', { taints: [{ key: 'a', value: 'x'.repeat(64), effect: 'NoSchedule' }] }), ['spec.taints[0].value']);
    await rejectNode(node('t5', { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', value: 'v', effect: 'NoSchedule' }] }), ['spec.taints[1]']);
    const ok = await api(server, 'POST', NODES, node('t-ok', { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'a', effect: 'NoExecute' }] }));
    assert.equal(ok.status, 201, ok.text);
  });

  test('podCIDRs: valid CIDRs, one per family, no repeats', async () => {
    await rejectNode(node('p1', { podCIDRs: ['10.0.0.1/24'] }), ['spec.podCIDRs[0]']);
    await rejectNode(node('p2', { podCIDRs: ['not-a-cidr'] }), ['spec.podCIDRs[0]']);
    await rejectNode(node('p3', { podCIDRs: ['10.0.0.0/24', '10.1.0.0/24'] }), ['spec.podCIDRs']);
    await rejectNode(node('p4', { podCIDRs: ['10.0.0.0/24', 'fd00::/64', 'fd01::/64'] }), ['spec.podCIDRs']);
    await rejectNode(node('p5', { podCIDR: '10.0.0.0/33' }), ['spec.podCIDRs[0]']);
  });

  test('providerID is <ProviderName>://<ProviderSpecificNodeID>', async () => {
    await rejectNode(node('pid1', { providerID: 'i-0123456789' }), ['spec.providerID']);
    assert.equal((await api(server, 'POST', NODES, node('pid-ok', { providerID: 'aws:///us-east-1a/i-0123' }))).status, 201);
  });

  test('configSource: a config map reference without uid and resourceVersion in spec', async () => {
    const cm = { namespace: 'kube-system', name: 'cfg', kubeletConfigKey: 'kubelet' };
    await rejectNode(node('cs1', { configSource: { configMap: { ...cm, uid: 'u' } } }), ['spec.configSource.configMap.uid']);
    await rejectNode(node('cs2', { configSource: { configMap: { ...cm, resourceVersion: '5' } } }), ['spec.configSource.configMap.resourceVersion']);
    await rejectNode(node('cs3', { configSource: { configMap: { namespace: 'kube-system', name: 'cfg' } } }), ['spec.configSource.configMap.kubeletConfigKey']);
    await rejectNode(node('cs4', { configSource: {} }), ['spec.configSource']);
    assert.equal((await api(server, 'POST', NODES, node('cs-ok', { configSource: { configMap: cm } }))).status, 201);
  });

  test('status: conditions, resources, addresses, node info, phase', async () => {
    await rejectNode(node('s1', {}, { conditions: [{ type: 'Ready', status: 'Maybe' }] }), ['status.conditions[0].status']);
    await rejectNode(node('s2', {}, { conditions: [{ status: 'True' }] }), ['status.conditions[0].type']);
    await rejectNode(node('s3', {}, { capacity: { cpu: '-1' } }), ['status.capacity.cpu']);
    await rejectNode(node('s4', {}, { allocatable: { pods: '1.5' } }), ['status.allocatable.pods']);
    // A quantity Kubernetes cannot decode fails decoding: 400, not 422.
    const notQuantity = await api(server, 'POST', NODES, node('s5', {}, { capacity: { cpu: 'lots' } }));
    assert.equal(notQuantity.status, 400, notQuantity.text);
    assert.equal(notQuantity.body.reason, 'BadRequest');
    assert.equal((await api(server, 'GET', `${NODES}/s5`)).status, 404);
    await rejectNode(node('s6', {}, { addresses: [{ address: '10.0.0.1' }] }), ['status.addresses[0].type']);
    await rejectNode(node('s8', {}, { phase: 'Exploded' }), ['status.phase']);
    await rejectNode(node('s9', {}, { volumesAttached: [{ name: 'v' }] }), ['status.volumesAttached[0].devicePath']);
  });

  test('status defaults: allocatable is capacity unless given; a partial nodeInfo comes back with every field', async () => {
    const c = await api(server, 'POST', NODES, node('dflt', {}, { capacity: { cpu: '4', memory: '8Gi' }, nodeInfo: { machineID: 'm', kubeletVersion: 'v1.36.0' } }));
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.status.allocatable, { cpu: '4', memory: '8Gi' });
    assert.deepEqual(c.body.status.nodeInfo, {
      machineID: 'm',
      systemUUID: '',
      bootID: '',
      kernelVersion: '',
      osImage: '',
      containerRuntimeVersion: '',
      kubeletVersion: 'v1.36.0',
      kubeProxyVersion: '',
      operatingSystem: '',
      architecture: '',
    });
    assert.deepEqual((await api(server, 'GET', `${NODES}/dflt`)).body.status, c.body.status, 'stored as returned');
    // A given allocatable stays; a status write without one gets capacity again.
    const kept = await api(server, 'PATCH', `${NODES}/dflt/status`, { status: { allocatable: { cpu: '3', memory: '8Gi' } } }, MERGE);
    assert.deepEqual(kept.body.status.allocatable, { cpu: '3', memory: '8Gi' });
    const cleared = await api(server, 'PATCH', `${NODES}/dflt/status`, { status: { allocatable: null, nodeInfo: { osImage: 'Debian' } } }, MERGE);
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.status.allocatable, { cpu: '4', memory: '8Gi' });
    assert.equal(cleared.body.status.nodeInfo.osImage, 'Debian');
    assert.equal(cleared.body.status.nodeInfo.machineID, 'm');
    const none = await api(server, 'POST', NODES, node('dflt-none'));
    assert.equal(none.body.status?.allocatable, undefined, 'no capacity, nothing to default from');
  });

  test('updates: pod CIDRs and provider ID are set once; other spec fields are fixed; taints and schedulability change', async () => {
    assert.equal((await api(server, 'POST', NODES, node('upd', { providerID: 'kind://docker/kind/upd', externalID: 'e1' }))).status, 201);
    // From none to some: allowed.
    const set = await api(server, 'PATCH', `${NODES}/upd`, { spec: { podCIDR: '10.9.0.0/24' } }, MERGE);
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.spec.podCIDRs, ['10.9.0.0/24']);
    await rejectNodeUpdate('upd', (n) => ((n.spec as Body).podCIDRs = ['10.8.0.0/24']), ['spec.podCIDRs']);
    await rejectNodeUpdate('upd', (n) => ((n.spec as Body).providerID = 'kind://docker/kind/other'), ['spec.providerID']);
    await rejectNodeUpdate('upd', (n) => ((n.spec as Body).externalID = 'e2'), ['']);
    const taint = await api(server, 'PATCH', `${NODES}/upd`, { spec: { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] } }, MERGE);
    assert.equal(taint.status, 200, taint.text);
  });

  test('/status changes status, labels and annotations, never spec; the main resource never changes status', async () => {
    const c = await api(server, 'POST', NODES, node('st', { unschedulable: false }, { conditions: [{ type: 'Ready', status: 'False' }] }));
    assert.equal(c.status, 201, c.text);
    const body = structuredClone(c.body);
    body.spec.unschedulable = true;
    body.status.conditions = [{ type: 'Ready', status: 'True' }];
    body.metadata.labels = { zone: 'a' };
    const s = await api(server, 'PUT', `${NODES}/st/status`, body);
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.spec.unschedulable, false);
    assert.equal(s.body.status.conditions[0].status, 'True');
    assert.deepEqual(s.body.metadata.labels, { zone: 'a' });
    const main = await api(server, 'PATCH', `${NODES}/st`, { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }, MERGE);
    assert.equal(main.status, 200);
    assert.equal(main.body.status.conditions[0].status, 'True');
    assertInvalid(await api(server, 'PATCH', `${NODES}/st/status`, { status: { conditions: [{ type: 'Ready', status: 'Yes' }] } }, MERGE), ['status.conditions[0].status']);
  });

  test('managedFields: status.nodeInfo and daemonEndpoints are always-present structs, so writers own their fields, not the structs', async () => {
    const info = { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian', containerRuntimeVersion: 'containerd://2.0.0', kubeletVersion: 'v1.36.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' };
    // With a label, so that the create leaves a managedFields entry and later writes are tracked.
    assert.equal((await api(server, 'POST', `${NODES}?fieldManager=kubelet`, { ...node('mf-node'), metadata: { name: 'mf-node', labels: { 'kubernetes.io/os': 'linux' } } })).status, 201);
    const statusOf = (o: Body) => ((o.metadata as { managedFields: { subresource?: string; fieldsV1: Body }[] }).managedFields.find((e) => e.subresource === 'status')!.fieldsV1 as Body)['f:status'];
    const first = await api(server, 'PATCH', `${NODES}/mf-node/status?fieldManager=kubelet`, { status: { nodeInfo: info, addresses: [{ type: 'InternalIP', address: '10.0.0.9' }] } }, MERGE);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(statusOf(first.body), {
      // An atomic list is owned whole.
      'f:addresses': {},
      'f:nodeInfo': Object.fromEntries(Object.keys(info).sort().map((k) => [`f:${k}`, {}])),
    });
    const second = await api(server, 'PATCH', `${NODES}/mf-node/status?fieldManager=kubelet`, { status: { daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } } }, MERGE);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual((statusOf(second.body) as Body)['f:daemonEndpoints'], { 'f:kubeletEndpoint': { 'f:Port': {} } });
  });

  test('fieldSelector spec.unschedulable', async () => {
    const r = await api(server, 'GET', `${NODES}?fieldSelector=spec.unschedulable%3Dtrue`);
    assert.equal(r.status, 200);
    const names = r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    assert.ok(names.includes('upd'));
    assert.ok(!names.includes('cidr-one'));
  });
});

// ---------------------------------------------------------------------------------------------

describe('Namespace', () => {
  test('every namespace carries its name as the orch.io/metadata.name label; clients cannot change or drop it', async () => {
    const LABEL = 'orch.io/metadata.name';
    const c = await api(server, 'POST', '/api/v1/namespaces?fieldManager=maker', { metadata: { generateName: 'ns-label-', labels: { [LABEL]: 'forged', team: 'a' } } });
    assert.equal(c.status, 201);
    const name = c.body.metadata.name as string;
    assert.deepEqual(c.body.metadata.labels, { [LABEL]: name, team: 'a' });
    // Defaulted before the writer's managed fields are computed, as Kubernetes' decoding does.
    assert.deepEqual(c.body.metadata.managedFields[0].fieldsV1['f:metadata']['f:labels'], { '.': {}, [`f:${LABEL}`]: {}, 'f:team': {} });
    const put = await api(server, 'PUT', `/api/v1/namespaces/${name}`, { ...c.body, metadata: { ...c.body.metadata, labels: { team: 'b' } } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.metadata.labels, { [LABEL]: name, team: 'b' });
    const patched = await api(server, 'PATCH', `/api/v1/namespaces/${name}`, { metadata: { labels: { [LABEL]: null } } }, MERGE);
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.metadata.labels, { [LABEL]: name, team: 'b' });
    // /status may change labels, but not this one.
    const viaStatus = await api(server, 'PATCH', `/api/v1/namespaces/${name}/status`, { metadata: { labels: { [LABEL]: 'other' } } }, MERGE);
    assert.equal(viaStatus.status, 200);
    assert.deepEqual(viaStatus.body.metadata.labels, { [LABEL]: name, team: 'b' });
    const selected = await api(server, 'GET', `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${LABEL}=${name}`)}`);
    assert.deepEqual(selected.body.items.map((n: { metadata: { name: string } }) => n.metadata.name), [name]);
    // The system namespaces have it too.
    assert.equal((await api(server, 'GET', '/api/v1/namespaces/default')).body.metadata.labels[LABEL], 'default');
  });

  test('condition statuses are validated on /status', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'ns-cond' } })).status, 201);
    assertInvalid(await api(server, 'PATCH', '/api/v1/namespaces/ns-cond/status', { status: { conditions: [{ type: 'X', status: 'Perhaps' }] } }, MERGE), ['status.conditions[0].status']);
    assertInvalid(await api(server, 'PATCH', '/api/v1/namespaces/ns-cond/status', { status: { phase: 'Gone' } }, MERGE), ['status.phase']);
  });

  test('deletion reports remaining content and finalizers in conditions, then the namespace goes once they are gone', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'ns-del' } })).status, 201);
    const leases = '/apis/coordination.orch.io/v1/namespaces/ns-del/leases';
    assert.equal((await api(server, 'POST', leases, { metadata: { name: 'held', finalizers: ['example.com/hold'] } })).status, 201);
    assert.equal((await api(server, 'POST', leases, { metadata: { name: 'free' } })).status, 201);
    const d = await api(server, 'DELETE', '/api/v1/namespaces/ns-del');
    assert.equal(d.status, 200);
    assert.equal(d.body.status.phase, 'Terminating');
    type Cond = { type: string; status: string; reason: string; message: string; lastTransitionTime: string };
    let conds: Cond[] = [];
    await eventually(async () => {
      conds = (await api(server, 'GET', '/api/v1/namespaces/ns-del')).body.status.conditions ?? [];
      return conds.some((c) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True');
    }, 'the finalizers-remaining condition');
    const by = (t: string) => conds.find((c) => c.type === t)!;
    assert.deepEqual([by('NamespaceContentRemaining').status, by('NamespaceContentRemaining').reason, by('NamespaceContentRemaining').message], [
      'True',
      'SomeResourcesRemain',
      'Some resources are remaining: leases.coordination.orch.io has 1 resource instances',
    ]);
    assert.deepEqual([by('NamespaceFinalizersRemaining').reason, by('NamespaceFinalizersRemaining').message], [
      'SomeFinalizersRemain',
      'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    ]);
    assert.deepEqual([by('NamespaceDeletionContentFailure').status, by('NamespaceDeletionContentFailure').reason], ['False', 'ContentDeleted']);
    assert.deepEqual([by('NamespaceDeletionDiscoveryFailure').status, by('NamespaceDeletionDiscoveryFailure').reason], ['False', 'ResourcesDiscovered']);
    for (const c of conds) assert.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // Creating in a terminating namespace is refused.
    const refused = await api(server, 'POST', leases, { metadata: { name: 'late' } });
    assert.equal(refused.status, 403);
    // The finalizer goes: so does the lease, then the namespace.
    assert.equal((await api(server, 'PATCH', `${leases}/held`, { metadata: { finalizers: null } }, MERGE)).status, 200);
    await eventually(async () => (await api(server, 'GET', '/api/v1/namespaces/ns-del')).status === 404, 'the namespace to disappear');
  });
});

// ---------------------------------------------------------------------------------------------

describe('ComponentStatus', () => {
  test('get and list computed from the storage health; nothing else', async () => {
    const list = await api(server, 'GET', '/api/v1/componentstatuses');
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.kind, 'ComponentStatusList');
    assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['lmdb-0']);
    const one = await api(server, 'GET', '/api/v1/componentstatuses/lmdb-0');
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.conditions[0].type, 'Healthy');
    assert.deepEqual(one.body.conditions[0].status, 'True');
    assert.equal((await api(server, 'GET', '/api/v1/componentstatuses/etcd-0')).status, 404);
    assert.equal((await api(server, 'GET', '/api/v1/componentstatuses?watch=1')).status, 405);
    assert.equal((await api(server, 'POST', '/api/v1/componentstatuses', { metadata: { name: 'x' } })).status, 405);
    assert.equal((await api(server, 'DELETE', '/api/v1/componentstatuses/lmdb-0')).status, 405);
    const sel = await api(server, 'GET', '/api/v1/componentstatuses?fieldSelector=metadata.name%3Dnone');
    assert.deepEqual(sel.body.items, []);
    const table = await api(server, 'GET', '/api/v1/componentstatuses', undefined, { Accept: 'application/json;as=Table;g=meta.orch.io;v=v1' });
    assert.deepEqual(table.body.rows[0].cells, ['lmdb-0', 'Healthy', 'ok', '']);
  });
});

// ---------------------------------------------------------------------------------------------

const apiService = (group: string, version: string, spec: Body = {}): Body => ({
  apiVersion: 'apiregistration.orch.io/v1',
  kind: 'APIService',
  metadata: { name: `${version}.${group}` },
  spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 15, ...spec },
});

async function rejectApiService(body: Body, fields: string[]): Promise<void> {
  assertInvalid(await api(server, 'POST', AS, body), fields);
  assert.equal((await api(server, 'GET', `${AS}/${(body.metadata as { name: string }).name}`)).status, 404);
}

describe('APIService', () => {
  test('every served group version has a local, available APIService with Kubernetes priorities', async () => {
    const list = await api(server, 'GET', AS);
    const byName = new Map<string, Body>(list.body.items.map((i: { metadata: { name: string } }) => [i.metadata.name, i]));
    for (const n of ['v1.', 'v1.coordination.orch.io', 'v1.events.orch.io', 'v1.networking.orch.io', 'v1.node.orch.io', 'v1.apiregistration.orch.io']) assert.ok(byName.has(n), n);
    assert.ok(!byName.has('v1beta1.coordination.orch.io'), 'LeaseCandidate is not served by default');
    const core = byName.get('v1.') as { spec: Body; status: { conditions: { type: string; status: string; reason: string }[] } };
    assert.deepEqual(core.spec, { group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    assert.deepEqual(core.status.conditions.map((c) => [c.type, c.status, c.reason]), [['Available', 'True', 'Local']]);
  });

  test('discovery orders groups by their priorities', async () => {
    const groups = (await api(server, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    assert.deepEqual(groups, ['apiregistration.orch.io', 'events.orch.io', 'authentication.orch.io', 'authorization.orch.io', 'networking.orch.io', 'rbac.authorization.orch.io', 'apiextensions.orch.io', 'coordination.orch.io', 'node.orch.io']);
  });

  test('an APIService backed by a service: port defaults to 443, and it is not available (no such service)', async () => {
    const c = await api(server, 'POST', AS, apiService('metrics.example.com', 'v1beta1', { service: { namespace: 'default', name: 'metrics' } }));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.spec.service.port, 443);
    await eventually(async () => {
      const cond = (await api(server, 'GET', `${AS}/v1beta1.metrics.example.com`)).body.status?.conditions?.[0];
      return cond?.status === 'False' && cond.reason === 'ServiceNotFound' && cond.message === 'service/metrics in "default" is not present';
    }, 'Available=False');
    const table = await api(server, 'GET', `${AS}/v1beta1.metrics.example.com`, undefined, { Accept: 'application/json;as=Table;g=meta.orch.io;v=v1' });
    assert.deepEqual(table.body.rows[0].cells.slice(0, 3), ['v1beta1.metrics.example.com', 'default/metrics', 'False (ServiceNotFound)']);
  });

  test('validation: name, group, version, priorities, service and local forms', async () => {
    await rejectApiService({ ...apiService('a.example.com', 'v1'), metadata: { name: 'v2.a.example.com' } }, ['metadata.name']);
    await rejectApiService(apiService('', 'v2'), ['spec.group']);
    await rejectApiService(apiService('Bad_Group', 'v1'), ['spec.group']);
    await rejectApiService(apiService('b.example.com', 'V1'), ['spec.version']);
    await rejectApiService(apiService('c.example.com', 'v1', { versionPriority: 0 }), ['spec.versionPriority']);
    await rejectApiService(apiService('d.example.com', 'v1', { groupPriorityMinimum: 20001 }), ['spec.groupPriorityMinimum']);
    const noPriority = apiService('e.example.com', 'v1');
    delete (noPriority.spec as Body).groupPriorityMinimum;
    await rejectApiService(noPriority, ['spec.groupPriorityMinimum']);
    await rejectApiService(apiService('f.example.com', 'v1', { service: { namespace: 'default', name: 's', port: 70000 } }), ['spec.service.port']);
    await rejectApiService(apiService('g.example.com', 'v1', { service: { name: 's' } }), ['spec.service.namespace']);
    await rejectApiService(apiService('h.example.com', 'v1', { caBundle: 'AAAA' }), ['spec.caBundle']);
    await rejectApiService(apiService('i.example.com', 'v1', { insecureSkipTLSVerify: true }), ['spec.insecureSkipTLSVerify']);
    await rejectApiService(apiService('j.example.com', 'v1', { service: { namespace: 'd', name: 's' }, caBundle: 'AAAA', insecureSkipTLSVerify: true }), ['spec.insecureSkipTLSVerify']);
    const badBase64 = await api(server, 'POST', AS, apiService('k.example.com', 'v1', { service: { namespace: 'd', name: 's' }, caBundle: 'not base64!' }));
    assert.equal(badBase64.status, 400, badBase64.text);
    assert.equal((await api(server, 'GET', `${AS}/v1.k.example.com`)).status, 404);
  });

  test('/status changes only status; conditions are validated', async () => {
    const c = await api(server, 'POST', AS, apiService('st.example.com', 'v1', { service: { namespace: 'default', name: 'st' } }));
    assert.equal(c.status, 201, c.text);
    // The availability controller writes the new object's condition once; read after that write.
    await eventually(async () => !!(await api(server, 'GET', `${AS}/v1.st.example.com`)).body.status?.conditions?.length, 'the Available condition');
    const body = structuredClone((await api(server, 'GET', `${AS}/v1.st.example.com`)).body);
    body.metadata.labels = { sneaky: 'yes' };
    body.spec.versionPriority = 99;
    body.status = { conditions: [{ type: 'Available', status: 'False', reason: 'Testing', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    const s = await api(server, 'PUT', `${AS}/v1.st.example.com/status`, body);
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.metadata.labels, undefined);
    assert.equal(s.body.spec.versionPriority, 15);
    assertInvalid(
      await api(server, 'PATCH', `${AS}/v1.st.example.com/status`, { status: { conditions: [{ type: 'Available', status: 'Nope' }] } }, MERGE),
      ['status.conditions[0].status'],
    );
    assertInvalid(
      await api(server, 'PATCH', `${AS}/v1.st.example.com/status`, { status: { conditions: [{ type: 'Available', status: 'False', reason: 'not camel case' }] } }, MERGE),
      ['status.conditions[0].reason'],
    );
  });
});
