// Every served kind through the real clients: @kubernetes/client-node's discovery-driven
// KubernetesObjectApi and Watch, and kubectl, each against a fresh server (orch naming profile).
// For each kind: create, get, list, watch, update, patch, delete, and the subresources of its
// endpoint table; ComponentStatus is get and list only. Every result is checked over HTTP too.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as K8s from '@kubernetes/client-node';
import { api, testServer } from '../support/server.ts';
import { kubeConfigFor, loadClientNode } from '../support/client-node.ts';
import { kubectlFor } from '../support/kubectl.ts';

const k8s: typeof K8s = await loadClientNode();
const server = await testServer({ runtimeConfig: 'coordination.orch.io/v1beta1=true' });

type Obj = K8s.KubernetesObject & Record<string, unknown>;

interface KindCase {
  kind: string;
  apiVersion: string;
  /** kubectl's resource name (plural with group). */
  resource: string;
  namespaced: boolean;
  /** A valid new object named `name`. */
  sample(name: string): Obj;
  /** A merge patch that changes something, and how to see it. */
  patch: Record<string, unknown>;
  patched(o: Obj): unknown;
  /** A status change through /status, when the kind has that subresource. */
  status?: Record<string, unknown>;
  /** Names to use (IPAddress names are addresses). */
  names: [string, string];
  /** A controller writes the new object once (APIService availability): wait for that write. */
  settles?: boolean;
}

/** Until a controller has written what it writes to a new object (its Available condition). */
async function settled(c: KindCase, name: string): Promise<void> {
  if (!c.settles) return;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const o = (await api(server, 'GET', pathOf(c, name))).body as Obj & { status?: { conditions?: unknown[] } };
    if (o.status?.conditions?.length) return;
    assert.ok(Date.now() < deadline, `${c.kind} ${name} was never settled by its controller`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const microNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const NS = 'default';

const CASES: KindCase[] = [
  {
    kind: 'Namespace',
    apiVersion: 'v1',
    resource: 'namespaces',
    namespaced: false,
    names: ['kinds-ns-a', 'kinds-ns-b'],
    sample: (name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    patch: { metadata: { labels: { team: 'a' } } },
    patched: (o) => o.metadata?.labels?.team,
    status: { status: { conditions: [{ type: 'Custom', status: 'True', reason: 'Testing', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
  },
  {
    kind: 'Node',
    apiVersion: 'v1',
    resource: 'nodes',
    namespaced: false,
    names: ['kinds-node-a', 'kinds-node-b'],
    sample: (name) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID: `kind://docker/kind/${name}` } }),
    patch: { spec: { unschedulable: true } },
    patched: (o) => (o.spec as { unschedulable?: boolean }).unschedulable,
    status: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }] } },
  },
  {
    kind: 'Lease',
    apiVersion: 'coordination.orch.io/v1',
    resource: 'leases.coordination.orch.io',
    namespaced: true,
    names: ['kinds-lease-a', 'kinds-lease-b'],
    sample: (name) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, namespace: NS }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }),
    patch: { spec: { leaseDurationSeconds: 30 } },
    patched: (o) => (o.spec as { leaseDurationSeconds?: number }).leaseDurationSeconds,
  },
  {
    kind: 'LeaseCandidate',
    apiVersion: 'coordination.orch.io/v1beta1',
    resource: 'leasecandidates.coordination.orch.io',
    namespaced: true,
    names: ['kinds-lc-a', 'kinds-lc-b'],
    sample: (name) => ({
      apiVersion: 'coordination.orch.io/v1beta1',
      kind: 'LeaseCandidate',
      metadata: { name, namespace: NS },
      spec: { leaseName: 'scheduler', binaryVersion: '1.36.0', emulationVersion: '1.36.0', strategy: 'OldestEmulationVersion', renewTime: microNow() },
    }),
    patch: { spec: { binaryVersion: '1.36.1' } },
    patched: (o) => (o.spec as { binaryVersion?: string }).binaryVersion,
  },
  {
    kind: 'Event',
    apiVersion: 'events.orch.io/v1',
    resource: 'events.events.orch.io',
    namespaced: true,
    names: ['kinds-event-a', 'kinds-event-b'],
    sample: (name) => ({
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name, namespace: NS },
      eventTime: microNow(),
      reportingController: 'orch.io/tests',
      reportingInstance: 'tests-1',
      action: 'Testing',
      reason: 'Tested',
      type: 'Normal',
      note: 'a test event',
      regarding: { kind: 'Node', name: 'kinds-node-a', apiVersion: 'v1' },
    }),
    patch: { series: { count: 2, lastObservedTime: microNow() } },
    patched: (o) => (o.series as { count?: number } | undefined)?.count,
  },
  {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    resource: 'configmaps',
    namespaced: true,
    names: ['kinds-cm-a', 'kinds-cm-b'],
    sample: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { mode: 'fast' }, binaryData: { blob: 'AAEC/w==' } }),
    patch: { data: { mode: 'slow' } },
    patched: (o) => (o.data as Record<string, string> | undefined)?.mode,
  },
  {
    kind: 'Secret',
    apiVersion: 'v1',
    resource: 'secrets',
    namespaced: true,
    names: ['kinds-secret-a', 'kinds-secret-b'],
    sample: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, type: 'orch.io/basic-auth', data: { username: 'YWRtaW4=' } }),
    patch: { data: { password: 'czNjcjN0' } },
    patched: (o) => (o.data as Record<string, string> | undefined)?.password,
  },
  {
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    resource: 'serviceaccounts',
    namespaced: true,
    names: ['kinds-sa-a', 'kinds-sa-b'],
    sample: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: NS }, imagePullSecrets: [{ name: 'registry' }] }),
    patch: { automountServiceAccountToken: false },
    patched: (o) => o.automountServiceAccountToken,
  },
  {
    kind: 'IPAddress',
    apiVersion: 'networking.orch.io/v1',
    resource: 'ipaddresses.networking.orch.io',
    namespaced: false,
    names: ['10.0.0.77', '2001:db8::77'],
    sample: (name) => ({ apiVersion: 'networking.orch.io/v1', kind: 'IPAddress', metadata: { name }, spec: { parentRef: { group: '', resource: 'services', namespace: NS, name: 'web' } } }),
    patch: { metadata: { labels: { owner: 'web' } } },
    patched: (o) => o.metadata?.labels?.owner,
  },
  {
    kind: 'ServiceCIDR',
    apiVersion: 'networking.orch.io/v1',
    resource: 'servicecidrs.networking.orch.io',
    namespaced: false,
    names: ['kinds-cidr-a', 'kinds-cidr-b'],
    sample: (name) => ({ apiVersion: 'networking.orch.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs: [name.endsWith('a') ? '10.210.0.0/24' : '10.211.0.0/24'] } }),
    patch: { metadata: { labels: { tier: 'extra' } } },
    patched: (o) => o.metadata?.labels?.tier,
    status: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Tested', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
  },
  {
    kind: 'RuntimeClass',
    apiVersion: 'node.orch.io/v1',
    resource: 'runtimeclasses.node.orch.io',
    namespaced: false,
    names: ['kinds-rc-a', 'kinds-rc-b'],
    sample: (name) => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name }, handler: 'runc' }),
    patch: { scheduling: { nodeSelector: { sandbox: 'true' } } },
    patched: (o) => (o.scheduling as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector?.sandbox,
  },
  {
    kind: 'APIService',
    apiVersion: 'apiregistration.orch.io/v1',
    resource: 'apiservices.apiregistration.orch.io',
    namespaced: false,
    names: ['v1.kinds-a.example.com', 'v1.kinds-b.example.com'],
    settles: true,
    sample: (name) => ({
      apiVersion: 'apiregistration.orch.io/v1',
      kind: 'APIService',
      metadata: { name },
      spec: { group: name.slice(3), version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15 },
    }),
    patch: { spec: { versionPriority: 20 } },
    patched: (o) => (o.spec as { versionPriority?: number }).versionPriority,
    status: { status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
  },
];

const pathOf = (c: KindCase, name = ''): string => {
  const base = c.apiVersion === 'v1' ? '/api/v1' : `/apis/${c.apiVersion}`;
  const plural = c.resource.split('.')[0];
  return `${base}${c.namespaced ? `/namespaces/${NS}` : ''}/${plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
};

// ---------------------------------------------------------------------------------------------

describe('@kubernetes/client-node KubernetesObjectApi and Watch, every kind', () => {
  const kc = kubeConfigFor(k8s, server.url);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);

  for (const c of CASES) {
    test(`${c.kind}: create, read, list, watch, replace, patch, delete`, async () => {
      const name = c.names[0];
      const ref = { apiVersion: c.apiVersion, kind: c.kind, metadata: { name, ...(c.namespaced ? { namespace: NS } : {}) } };
      const events: { type: string; name?: string }[] = [];
      const listed = await objects.list(c.apiVersion, c.kind, c.namespaced ? NS : undefined);
      const watch = await new k8s.Watch(kc).watch(
        pathOf(c),
        { resourceVersion: listed.metadata?.resourceVersion },
        (type: string, o: Obj) => events.push({ type, name: o.metadata?.name }),
        () => {},
      );
      try {
        const created = await objects.create(c.sample(name));
        assert.equal(created.metadata?.name, name);
        assert.ok(created.metadata?.uid);
        await settled(c, name);
        const read = await objects.read(ref);
        if (!c.settles) assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
        const list = await objects.list(c.apiVersion, c.kind, c.namespaced ? NS : undefined);
        assert.ok(list.items.some((i) => i.metadata?.name === name));

        const replaced = await objects.replace({ ...(read as Obj), metadata: { ...read.metadata, annotations: { replaced: 'yes' } } });
        assert.equal(replaced.metadata?.annotations?.replaced, 'yes');
        const patch = { ...ref, ...c.patch, metadata: { ...ref.metadata, ...((c.patch.metadata as object | undefined) ?? {}) } } as Obj;
        const patched = await objects.patch(patch, undefined, undefined, undefined, undefined, k8s.PatchStrategy.MergePatch);
        assert.equal(c.patched(patched as Obj), c.patched(patch));
        const overHttp = await api(server, 'GET', pathOf(c, name));
        assert.equal(overHttp.body.metadata.resourceVersion, patched.metadata?.resourceVersion);

        await objects.delete(ref);
        const after = await api(server, 'GET', pathOf(c, name));
        // A namespace is Terminating until its controller has emptied it, which may already be done.
        if (c.kind === 'Namespace' && after.status === 200) assert.ok(after.body.metadata.deletionTimestamp, JSON.stringify(after.body));
        else assert.equal(after.status, 404);
        const deadline = Date.now() + 5000;
        while (!events.some((e) => e.type === 'DELETED' || (c.kind === 'Namespace' && e.type === 'MODIFIED' && events.length >= 4)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const mine = events.filter((e) => e.name === name).map((e) => e.type);
        assert.equal(mine[0], 'ADDED', JSON.stringify(events));
        assert.ok(mine.filter((t) => t === 'MODIFIED').length >= 2, JSON.stringify(events));
      } finally {
        watch.abort();
      }
    });
  }

  test('ComponentStatus: read and list; writes are refused with 405', async () => {
    const list = await objects.list('v1', 'ComponentStatus');
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['lmdb-0']);
    const one = await objects.read({ apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'lmdb-0' } });
    assert.equal((one as Obj & { conditions: { status: string }[] }).conditions[0]!.status, 'True');
    await assert.rejects(objects.create({ apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'x' } }), (e: unknown) => (e as { code?: number }).code === 405);
  });
});

// ---------------------------------------------------------------------------------------------

const k = kubectlFor(server, { namespace: NS, label: 'kinds-kubectl', timeoutMs: 30_000 });
const kubectl = (args: string[], input?: string) => k.run(args, input);
const ok = (args: string[], input?: string) => k.ok(args, input);

// Three kinds at a time: each case has its own kind and names, and most of its time is kubectl
// starting and waiting on the server.
describe('kubectl, every kind', { concurrency: 3 }, () => {
  for (const c of CASES) {
    test(`${c.kind}: create -f, get, get -o json, patch, replace, ${c.status ? 'patch --subresource=status, ' : ''}delete`, async () => {
      const name = c.names[1];
      const target = `${c.resource}/${name}`;
      await ok(['create', '-f', '-'], JSON.stringify(c.sample(name)));
      await settled(c, name);
      const got = JSON.parse(await ok(['get', target, '-o', 'json'])) as Obj;
      assert.equal(got.metadata?.name, name);
      // Event rows (Kubernetes' columns: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE) name the event
      // only in the last column of -o wide.
      const escaped = name.replace(/[.:]/g, '\\$&');
      if (c.kind === 'Event') assert.match(await ok(['get', c.resource, '-o', 'wide']), new RegExp(`\\s${escaped}$`, 'm'));
      else assert.match(await ok(['get', c.resource]), new RegExp(`^${escaped}\\s`, 'm'));
      await ok(['patch', target, '--type=merge', '-p', JSON.stringify(c.patch)]);
      const afterPatch = (await api(server, 'GET', pathOf(c, name))).body as Obj;
      assert.equal(c.patched(afterPatch), c.patched({ ...afterPatch, ...c.patch } as Obj));
      await ok(['replace', '-f', '-'], JSON.stringify({ ...afterPatch, metadata: { ...afterPatch.metadata, annotations: { replaced: 'kubectl' } } }));
      assert.equal(((await api(server, 'GET', pathOf(c, name))).body as Obj).metadata?.annotations?.replaced, 'kubectl');
      if (c.status) {
        await ok(['patch', target, '--subresource=status', '--type=merge', '-p', JSON.stringify(c.status)]);
        const st = (await api(server, 'GET', `${pathOf(c, name)}/status`)).body as Obj;
        const want = (c.status.status as { conditions: { type: string; status: string }[] }).conditions[0]!;
        assert.ok(((st.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).some((x) => x.type === want.type && x.status === want.status), JSON.stringify(st.status));
      }
      await ok(['delete', target, ...(c.kind === 'Namespace' ? ['--wait=false'] : [])]);
      if (c.kind !== 'Namespace') assert.equal((await api(server, 'GET', pathOf(c, name))).status, 404);
    });
  }

  test('ComponentStatus: kubectl get componentstatuses, and get cs/<name>', async () => {
    const list = JSON.parse(await ok(['get', 'componentstatuses', '-o', 'json'])) as { items: Obj[] };
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['lmdb-0']);
    const one = JSON.parse(await ok(['get', 'cs/lmdb-0', '-o', 'json'])) as Obj & { conditions: { type: string; status: string }[] };
    assert.deepEqual(one.conditions.map((c) => `${c.type}=${c.status}`), ['Healthy=True']);
    assert.match((await kubectl(['get', 'cs'])).stderr, /Warning: v1 ComponentStatus is deprecated in v1\.19\+/, 'kubectl shows the deprecation warning');
    const r = await kubectl(['delete', 'cs/lmdb-0']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /MethodNotAllowed|not allowed|405/i);
  });
});
