// Table and PartialObjectMetadata conversions of get, list and watch (what `kubectl get` and
// metadata-only clients ask for), over HTTP, and kubectl printing the server's columns.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { toTable } from '../../src/endpoints/transform.ts';
import { humanDuration } from '../../src/registry/printers.ts';
import type { KindDefinition } from '../../src/registry/definition.ts';

const server = await testServer();
const TABLE = 'application/json;as=Table;g=meta.orch.io;v=v1';

const node = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'node-role.orch.io/control-plane': '', 'node-role.orch.io/worker': '' } as Record<string, string> },
  spec: { unschedulable: true },
  status: {
    conditions: [{ type: 'Ready', status: 'True' }],
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: name },
    ],
    nodeInfo: {
      kubeletVersion: 'v1.36.0',
      osImage: 'Debian GNU/Linux 12',
      kernelVersion: '6.1.0',
      containerRuntimeVersion: 'containerd://2.0.0',
      machineID: 'm',
      systemUUID: 'u',
      bootID: 'b',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  },
  ...extra,
});

assert.equal((await api(server, 'POST', '/api/v1/nodes', node('table-node'))).status, 201);

describe('Table', () => {
  test("get: Kubernetes' node columns, wide ones at priority 1, metadata object by default", async () => {
    const r = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: TABLE });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.kind, 'Table');
    assert.equal(r.body.apiVersion, 'meta.orch.io/v1');
    assert.deepEqual(
      r.body.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`),
      ['Name:0', 'Status:0', 'Roles:0', 'Age:0', 'Version:0', 'Internal-IP:1', 'External-IP:1', 'OS-Image:1', 'Kernel-Version:1', 'Container-Runtime:1'],
    );
    assert.equal(r.body.columnDefinitions[0].format, 'name');
    assert.equal(r.body.rows.length, 1);
    const [name, status, roles, age, version, internal, external, os, kernel, runtime] = r.body.rows[0].cells;
    assert.deepEqual([name, status, roles, version, internal, external, os, kernel, runtime], [
      'table-node',
      'Ready,SchedulingDisabled',
      'control-plane,worker',
      'v1.36.0',
      '10.0.0.5',
      '<none>',
      'Debian GNU/Linux 12',
      '6.1.0',
      'containerd://2.0.0',
    ]);
    assert.match(age, /^\d+s$/);
    assert.equal(r.body.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(r.body.rows[0].object.apiVersion, 'meta.orch.io/v1');
    assert.equal(r.body.rows[0].object.metadata.name, 'table-node');
    assert.equal(r.body.rows[0].object.spec, undefined);
    assert.ok(r.body.metadata.resourceVersion);
  });

  test('includeObject=None and =Object; an unknown value is 400', async () => {
    const none = await api(server, 'GET', '/api/v1/nodes/table-node?includeObject=None', undefined, { Accept: TABLE });
    assert.equal(none.body.rows[0].object, undefined);
    const full = await api(server, 'GET', '/api/v1/nodes/table-node?includeObject=Object', undefined, { Accept: TABLE });
    assert.equal(full.body.rows[0].object.kind, 'Node');
    assert.equal(full.body.rows[0].object.spec.unschedulable, true);
    const bad = await api(server, 'GET', '/api/v1/nodes/table-node?includeObject=Everything', undefined, { Accept: TABLE });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
    assert.match(bad.body.message, /^Unable to convert to Table as requested: includeObject: Unsupported value: "Everything"/);
  });

  test('v1beta1 Tables are served too', async () => {
    const r = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=Table;g=meta.orch.io;v=v1beta1' });
    assert.equal(r.body.apiVersion, 'meta.orch.io/v1beta1');
  });

  test('paged list: one row per object, continue and remainingItemCount in the metadata', async () => {
    for (const n of ['a', 'b', 'c']) {
      const c = await api(server, 'POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', { metadata: { name: `tl-${n}` }, spec: { holderIdentity: n === 'a' ? 'holder-a' : undefined } });
      assert.equal(c.status, 201, c.text);
    }
    const r = await api(server, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases?limit=2', undefined, { Accept: TABLE });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Holder', 'Age']);
    assert.deepEqual(r.body.rows.map((row: { cells: unknown[] }) => row.cells.slice(0, 2)), [
      ['tl-a', 'holder-a'],
      ['tl-b', ''],
    ]);
    assert.ok(r.body.metadata.continue);
    assert.equal(r.body.metadata.remainingItemCount, 1);
    const next = await api(server, 'GET', `/apis/coordination.orch.io/v1/namespaces/default/leases?limit=2&continue=${encodeURIComponent(r.body.metadata.continue)}`, undefined, { Accept: TABLE });
    assert.deepEqual(next.body.rows.map((row: { cells: unknown[] }) => row.cells[0]), ['tl-c']);
  });

  test('an empty list is a Table with no rows', async () => {
    const r = await api(server, 'GET', '/apis/coordination.orch.io/v1/namespaces/orch-public/leases', undefined, { Accept: TABLE });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.rows, []);
  });

  test('watch: every event is a Table of one row; only the first carries the column definitions', async () => {
    const list = await api(server, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases');
    const w = readWatch(`${server.url}/apis/coordination.orch.io/v1/namespaces/default/leases?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, { Accept: TABLE });
    try {
      await api(server, 'POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', { metadata: { name: 'tw-1' } });
      await api(server, 'POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', { metadata: { name: 'tw-2' } });
      const [first, second] = await w.next(2);
      assert.equal(first!.type, 'ADDED');
      assert.equal(first!.object.kind, 'Table');
      assert.equal(first!.object.columnDefinitions.length, 3);
      assert.equal(first!.object.rows[0].cells[0], 'tw-1');
      assert.equal(second!.object.columnDefinitions, null);
      assert.equal(second!.object.rows[0].cells[0], 'tw-2');
    } finally {
      w.close();
    }
  });

  test('the default table of a kind without columns: Name and Created At', () => {
    const def = { kind: 'Thing', printerColumns: undefined } as unknown as KindDefinition;
    const t = toTable({ def, apiVersion: 'meta.orch.io/v1', includeObject: 'None' }, [{ apiVersion: 'x/v1', kind: 'Thing', metadata: { name: 'x', creationTimestamp: '2026-01-02T03:04:05Z' } }], { resourceVersion: '7' });
    assert.deepEqual(
      (t.columnDefinitions as { name: string; type: string }[]).map((c) => [c.name, c.type]),
      [
        ['Name', 'string'],
        ['Created At', 'date'],
      ],
    );
    assert.deepEqual(t.rows, [{ cells: ['x', '2026-01-02T03:04:05Z'] }]);
  });

  test('ages print as Kubernetes prints them', () => {
    const s = 1000;
    assert.deepEqual(
      [5 * s, 119 * s, 125 * s, 600 * s, 3 * 3600 * s + 5 * 60 * s, 30 * 3600 * s, 50 * 3600 * s, 3 * 365 * 86400 * s + 86400 * s, -5 * s].map(humanDuration),
      ['5s', '119s', '2m5s', '10m', '3h5m', '30h', '2d2h', '3y1d', '<invalid>'],
    );
  });
});

describe('negotiation of conversions', () => {
  test('a Table of an unknown group is skipped for the next entry; nothing acceptable is 406', async () => {
    const fallback = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=Table;g=meta.example.com;v=v1,application/json' });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.body.kind, 'Node');
    const none = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=Table;g=meta.example.com;v=v1' });
    assert.equal(none.status, 406);
    assert.equal(none.body.reason, 'NotAcceptable');
    const badVersion = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=Table;g=meta.orch.io;v=v2' });
    assert.equal(badVersion.status, 406);
  });

  test('writes do not convert: a create asking only for a Table is 406 and stores nothing', async () => {
    const r = await api(server, 'POST', '/api/v1/nodes', node('table-write'), { Accept: TABLE });
    assert.equal(r.status, 406);
    assert.equal((await api(server, 'GET', '/api/v1/nodes/table-write')).status, 404);
  });
});

describe('PartialObjectMetadata', () => {
  test('get and list; the wrong one of the two is 406', async () => {
    const one = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1' });
    assert.equal(one.status, 200);
    assert.equal(one.body.kind, 'PartialObjectMetadata');
    assert.equal(one.body.metadata.name, 'table-node');
    assert.equal(one.body.status, undefined);
    const list = await api(server, 'GET', '/api/v1/nodes', undefined, { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1' });
    assert.equal(list.status, 200);
    assert.equal(list.body.kind, 'PartialObjectMetadataList');
    assert.ok(list.body.items.some((i: { kind: string; metadata: { name: string } }) => i.kind === 'PartialObjectMetadata' && i.metadata.name === 'table-node'));
    assert.ok(list.body.metadata.resourceVersion);
    const wrongList = await api(server, 'GET', '/api/v1/nodes', undefined, { Accept: 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1' });
    assert.equal(wrongList.status, 406);
    const wrongOne = await api(server, 'GET', '/api/v1/nodes/table-node', undefined, { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1' });
    assert.equal(wrongOne.status, 406);
  });

  test('watch streams PartialObjectMetadata', async () => {
    const list = await api(server, 'GET', '/api/v1/nodes');
    const w = readWatch(`${server.url}/api/v1/nodes?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, { Accept: 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1' });
    try {
      await api(server, 'POST', '/api/v1/nodes', node('pom-watch'));
      const [e] = await w.next(1);
      assert.equal(e!.object.kind, 'PartialObjectMetadata');
      assert.equal(e!.object.metadata.name, 'pom-watch');
    } finally {
      w.close();
    }
  });
});

describe('kubectl prints the server columns (kubernetes naming profile)', () => {
  test('get nodes, get nodes -o wide, get leases -A', async () => {
    const k8s = await testServer({ naming: 'kubernetes' });
    const n = node('kubectl-node');
    n.metadata.labels = { 'node-role.kubernetes.io/control-plane': '' };
    assert.equal((await api(k8s, 'POST', '/api/v1/nodes', n)).status, 201);
    assert.equal((await api(k8s, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', { metadata: { name: 'kubectl-lease' }, spec: { holderIdentity: 'me' } })).status, 201);
    const k = kubectlFor(k8s, { label: 'kubectl-table', timeoutMs: 30_000 });
    const kubectl = (...args: string[]) => k.ok(args);
    const lines = (out: string) => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    const nodes = lines(await kubectl('get', 'nodes'));
    assert.deepEqual(nodes[0], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    assert.deepEqual([nodes[1]![0], nodes[1]![1], nodes[1]![2], nodes[1]![4]], ['kubectl-node', 'Ready,SchedulingDisabled', 'control-plane', 'v1.36.0']);
    const wide = lines(await kubectl('get', 'nodes', '-o', 'wide'));
    assert.deepEqual(wide[0], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
    assert.deepEqual(wide[1]!.slice(5), ['10.0.0.5', '<none>', 'Debian GNU/Linux 12', '6.1.0', 'containerd://2.0.0']);
    const cs = lines(await kubectl('get', 'componentstatuses'));
    assert.deepEqual(cs[0], ['NAME', 'STATUS', 'MESSAGE', 'ERROR']);
    assert.deepEqual(cs[1], ['lmdb-0', 'Healthy', 'ok']);
    const leases = lines(await kubectl('get', 'leases', '-A'));
    assert.deepEqual(leases[0], ['NAMESPACE', 'NAME', 'HOLDER', 'AGE']);
    assert.ok(leases.some((l) => l[0] === 'kube-system' && l[1] === 'kubectl-lease' && l[2] === 'me'), JSON.stringify(leases));
  });
});
