// The server driven by the real, unmodified @kubernetes/client-node (v2): the typed CoreV1Api,
// the discovery-driven KubernetesObjectApi, Watch, informers, namespace deletion, dryRun and
// fieldValidation. What a client library sees is what is asserted: ApiException codes and the
// Status bodies they carry, watch events as the Watch callback receives them, informer caches.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as K8s from '@kubernetes/client-node';
import { testServer } from '../support/server.ts';
import { kubeConfigFor, loadClientNode } from '../support/client-node.ts';
import type { RunningServer } from '../../src/server/server.ts';

const k8s: typeof K8s = await loadClientNode();

// ---- types and helpers ----

const LEASE_API = 'coordination.orch.io/v1';

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  renewTime?: string;
}
interface Lease extends K8s.KubernetesObject {
  spec?: LeaseSpec;
}
interface StatusBody {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string };
}
/** The object of a watch event as the Watch callback gets it: raw JSON (a Lease or a Status). */
type WatchObject = Lease & StatusBody;
interface WatchEventRecord {
  type: string;
  object: WatchObject;
}
interface RawListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll until `fn` returns something other than undefined/false; fail after `timeoutMs`. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(intervalMs);
  }
}

/** The call must fail with an ApiException of `code`; returns the Status body it carries. */
async function apiError(p: Promise<unknown>, code: number): Promise<StatusBody> {
  let result: unknown;
  try {
    result = await p;
  } catch (e) {
    assert.ok(e instanceof k8s.ApiException, `expected an ApiException, got ${String(e)}`);
    assert.equal(e.code, code, `HTTP status; body: ${String(e.body)}`);
    const body: unknown = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
    assert.ok(body && typeof body === 'object', `a Status body, got ${String(e.body)}`);
    return body as StatusBody;
  }
  assert.fail(`expected HTTP ${code}, the call succeeded with ${JSON.stringify(result)}`);
}

const kubeConfig = (url: string): K8s.KubeConfig => kubeConfigFor(k8s, url);

/**
 * A KubernetesObjectApi whose configuration records the raw JSON of every list response. The
 * generic client deserializes a list of a kind outside the built-in *.k8s.io groups as a plain
 * KubernetesObject whose `metadata` is typed V1ObjectMeta, which has no `continue` or
 * `remainingItemCount`: those two only survive in the response body the middleware sees.
 */
function recordingObjectApi(kc: K8s.KubeConfig, url: string): { client: K8s.KubernetesObjectApi; lists: RawListMeta[] } {
  const lists: RawListMeta[] = [];
  const recorder: K8s.Middleware = {
    pre: async (ctx) => ctx,
    post: async (rsp) => {
      const text = await rsp.body.text();
      try {
        const parsed = JSON.parse(text) as { kind?: string; metadata?: RawListMeta };
        if (parsed.kind?.endsWith('List') && parsed.kind !== 'APIResourceList') lists.push(parsed.metadata ?? {});
      } catch {
        /* not JSON: nothing to record */
      }
      rsp.body = new k8s.SelfDecodingBody(Promise.resolve(Buffer.from(text)));
      return rsp;
    },
  };
  const config = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(url, {}),
    authMethods: { default: kc },
    promiseMiddleware: [recorder],
  });
  return { client: new k8s.KubernetesObjectApi(config), lists };
}

const leasePath = (ns: string) => `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
const lease = (ns: string, name: string, spec: LeaseSpec = { holderIdentity: 'alice' }, extra: Partial<K8s.V1ObjectMeta> = {}): Lease => ({
  apiVersion: LEASE_API,
  kind: 'Lease',
  metadata: { name, namespace: ns, ...extra },
  spec,
});
const rvOf = (o: K8s.KubernetesObject | undefined): number => {
  const rv = o?.metadata?.resourceVersion;
  assert.ok(rv && /^[1-9][0-9]*$/.test(rv), `a positive integer resourceVersion, got ${String(rv)}`);
  return Number(rv);
};

/** A client-node Watch with its events and the done callback recorded. */
class WatchRecorder {
  readonly events: WatchEventRecord[] = [];
  doneCalled = false;
  doneError: unknown;
  private controller: AbortController | undefined;

  private constructor() {}

  static async start(kc: K8s.KubeConfig, path: string, params: Record<string, string | number | boolean | undefined>): Promise<WatchRecorder> {
    const w = new WatchRecorder();
    w.controller = await new k8s.Watch(kc).watch(
      path,
      params,
      (type: string, object: WatchObject) => w.events.push({ type, object }),
      (err: unknown) => {
        w.doneCalled = true;
        w.doneError = err;
      },
    );
    return w;
  }

  /** Wait for at least `n` events (other than BOOKMARK unless asked for) and return them. */
  async next(n: number, timeoutMs = 5000, includeBookmarks = false): Promise<WatchEventRecord[]> {
    return eventually(`${n} watch events (have ${JSON.stringify(this.summary())})`, () => {
      const evs = includeBookmarks ? this.events : this.events.filter((e) => e.type !== 'BOOKMARK');
      return evs.length >= n ? evs : undefined;
    }, timeoutMs);
  }

  changes(): WatchEventRecord[] {
    return this.events.filter((e) => e.type !== 'BOOKMARK');
  }

  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.object.metadata?.name ?? e.object.reason ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`);
  }

  stop(): void {
    this.controller?.abort();
  }
}

// ---- the server and clients for the file ----

// Started at module level: testServer() registers its `after` where it is called, and called
// inside a before() hook that `after` would run (and close the server) as soon as the hook ends.
const server: RunningServer = await testServer();
/** A second server whose watch cache keeps only 50 ms of history (too-old resourceVersions). */
const shortHistory: RunningServer = await testServer({ watchCacheRetentionMs: 50 });
const kc = kubeConfig(server.url);
const core = kc.makeApiClient(k8s.CoreV1Api);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);

async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<K8s.V1Namespace> {
  return core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } });
}

/** Whether reading the namespace gives 404 (any other failure is thrown). */
async function namespaceGone(name: string): Promise<boolean> {
  try {
    await core.readNamespace({ name });
    return false;
  } catch (e) {
    if (e instanceof k8s.ApiException && e.code === 404) return true;
    throw e;
  }
}

// ---- CoreV1Api ----

describe('CoreV1Api: namespaces', () => {
  test('create, read, list, replace, patch (default and merge), stale replace, delete, 404', async () => {
    const name = 'cn-core-ns';
    const created = await createNamespace(name, { suite: 'client-node', a: '1' });
    assert.equal(created.kind, 'Namespace');
    assert.equal(created.apiVersion, 'v1');
    assert.equal(created.metadata?.name, name);
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date, 'creationTimestamp parses as a date');
    assert.equal(created.status?.phase, 'Active');
    assert.deepEqual(created.spec?.finalizers, ['orch'], 'the orch profile names the namespace finalizer after its product');
    const rv1 = rvOf(created);

    const read = await core.readNamespace({ name });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.deepEqual(read.metadata?.labels, { suite: 'client-node', a: '1', 'orch.io/metadata.name': name });

    const list = await core.listNamespace({ labelSelector: 'suite=client-node' });
    assert.deepEqual(
      list.items.map((n) => n.metadata?.name),
      [name],
    );
    assert.ok(Number(list.metadata?.resourceVersion) >= rv1, 'list resourceVersion is not older than the create');
    const all = await core.listNamespace();
    for (const sys of ['default', 'orch-system', 'orch-public', 'orch-node-lease', name]) assert.ok(all.items.some((n) => n.metadata?.name === sys), sys);

    // replace: the full object back with a changed label
    const toReplace: K8s.V1Namespace = { ...read, metadata: { ...read.metadata, labels: { ...read.metadata?.labels, a: '2' } } };
    const replaced = await core.replaceNamespace({ name, body: toReplace });
    const rv2 = rvOf(replaced);
    assert.ok(rv2 > rv1, 'replace bumps resourceVersion');
    assert.equal(replaced.metadata?.labels?.a, '2');
    assert.equal(replaced.metadata?.uid, created.metadata?.uid);
    assert.equal(replaced.status?.phase, 'Active');

    // stale replace: the object read before the replace still carries rv1
    const stale = await apiError(core.replaceNamespace({ name, body: { ...read, metadata: { ...read.metadata, labels: { a: 'stale' } } } }), 409);
    assert.equal(stale.kind, 'Status');
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.code, 409);
    assert.match(stale.message ?? '', /the object has been modified/);
    assert.equal((await core.readNamespace({ name })).metadata?.labels?.a, '2', 'the stale replace changed nothing');

    // default patch type of the typed client: JSON patch (an array body; a merge patch would be rejected)
    const jsonPatched = await core.patchNamespace({ name, body: [{ op: 'add', path: '/metadata/labels/b', value: 'json' }] });
    assert.equal(jsonPatched.metadata?.labels?.b, 'json');
    assert.ok(rvOf(jsonPatched) > rv2);

    // merge patch through the PatchStrategy / options mechanism: null deletes a key
    const merged = await core.patchNamespace(
      { name, body: { metadata: { labels: { b: null, c: 'merge' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.metadata?.labels, { suite: 'client-node', a: '2', c: 'merge', 'orch.io/metadata.name': name });

    // a JSON patch whose test op fails is rejected and changes nothing
    const failedTest = await apiError(core.patchNamespace({ name, body: [{ op: 'test', path: '/metadata/labels/c', value: 'other' }, { op: 'remove', path: '/metadata/labels/c' }] }), 422);
    assert.equal(failedTest.reason, 'Invalid');
    assert.equal((await core.readNamespace({ name })).metadata?.labels?.c, 'merge');

    // delete: a namespace is finalized by the namespace controller, then gone
    const deleted = await core.deleteNamespace({ name });
    assert.equal(deleted.kind, 'Namespace', 'a namespace delete answers with the terminating namespace');
    await eventually('namespace gone', async () => (await namespaceGone(name)) || undefined);
    const notFound = await apiError(core.readNamespace({ name }), 404);
    assert.equal(notFound.kind, 'Status');
    assert.equal(notFound.apiVersion, 'v1');
    assert.equal(notFound.status, 'Failure');
    assert.equal(notFound.reason, 'NotFound');
    assert.equal(notFound.code, 404);
    assert.equal(notFound.details?.name, name);
    assert.equal(notFound.details?.kind, 'namespaces');
    assert.equal(notFound.message, `namespaces "${name}" not found`);
  });

  test('system namespaces cannot be deleted (403 through the client)', async () => {
    const body = await apiError(core.deleteNamespace({ name: 'default' }), 403);
    assert.equal(body.reason, 'Forbidden');
    assert.equal((await core.readNamespace({ name: 'default' })).status?.phase, 'Active');
  });
});

describe('CoreV1Api: nodes', () => {
  test('create, read, list, replace, patch, status, stale replace, dryRun delete, delete, 404', async () => {
    const name = 'cn-node-1';
    const created = await core.createNode({
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { pool: 'a' } },
        spec: { podCIDR: '10.1.0.0/24', taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] },
        status: { capacity: { cpu: '4' } },
      },
    });
    assert.equal(created.kind, 'Node');
    assert.equal(created.metadata?.name, name);
    assert.equal(created.metadata?.namespace, undefined);
    assert.equal(created.spec?.podCIDR, '10.1.0.0/24');
    assert.deepEqual(
      created.spec?.taints?.map((t) => [t.key, t.value, t.effect]),
      [['dedicated', 'x', 'NoSchedule']],
    );
    assert.deepEqual(created.status?.capacity, { cpu: '4' }, 'a node registers with its status');
    const rv1 = rvOf(created);

    const read = await core.readNode({ name });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

    const byName = await core.listNode({ fieldSelector: `metadata.name=${name}` });
    assert.deepEqual(
      byName.items.map((n) => n.metadata?.name),
      [name],
    );
    const byLabel = await core.listNode({ labelSelector: 'pool=b' });
    assert.deepEqual(byLabel.items, []);

    // replace: spec changes, status in the body is ignored (status goes through /status)
    const replaced = await core.replaceNode({ name, body: { ...read, spec: { ...read.spec, unschedulable: true }, status: { capacity: { cpu: '64' } } } });
    const rv2 = rvOf(replaced);
    assert.ok(rv2 > rv1);
    assert.equal(replaced.spec?.unschedulable, true);
    assert.deepEqual(replaced.status?.capacity, { cpu: '4' }, 'the stored status is kept');
    const unschedulable = await core.listNode({ fieldSelector: 'spec.unschedulable=true' });
    assert.ok(unschedulable.items.some((n) => n.metadata?.name === name));

    const stale = await apiError(core.replaceNode({ name, body: { ...read, metadata: { ...read.metadata, labels: { pool: 'stale' } } } }), 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.details?.name, name);

    // default (JSON) patch and merge patch
    const jp = await core.patchNode({ name, body: [{ op: 'replace', path: '/metadata/labels/pool', value: 'b' }] });
    assert.equal(jp.metadata?.labels?.pool, 'b');
    const mp = await core.patchNode({ name, body: { spec: { unschedulable: null, taints: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    assert.equal(mp.spec?.unschedulable, undefined);
    assert.equal(mp.spec?.taints, undefined);
    assert.equal(mp.spec?.podCIDR, '10.1.0.0/24');
    const rv3 = rvOf(mp);

    // status subresource via merge patch
    const st = await core.patchNodeStatus({ name, body: { status: { capacity: { cpu: '8' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    assert.equal(st.status?.capacity?.cpu, '8');
    assert.ok(rvOf(st) > rv3);
    assert.equal((await core.readNodeStatus({ name })).status?.capacity?.cpu, '8');

    // dryRun delete leaves the node in place
    const dry = await core.deleteNode({ name, dryRun: 'All' });
    assert.equal(dry.status, 'Success');
    assert.equal((await core.readNode({ name })).metadata?.uid, created.metadata?.uid);

    const gone = await core.deleteNode({ name });
    assert.equal(gone.kind, 'Status');
    assert.equal(gone.status, 'Success');
    assert.equal(gone.details?.name, name);
    assert.equal(gone.details?.uid, created.metadata?.uid);
    const nf = await apiError(core.readNode({ name }), 404);
    assert.equal(nf.reason, 'NotFound');
    assert.equal(nf.details?.kind, 'nodes');
    await apiError(core.deleteNode({ name }), 404);
  });

  test('create of an existing node: 409 AlreadyExists', async () => {
    await core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cn-node-dup' } } });
    const body = await apiError(core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cn-node-dup' } } }), 409);
    assert.equal(body.reason, 'AlreadyExists');
    await core.deleteNode({ name: 'cn-node-dup' });
  });
});

// ---- KubernetesObjectApi (generic, discovery-driven) ----

describe('KubernetesObjectApi: leases', () => {
  const ns = 'cn-generic';
  before(async () => {
    await createNamespace(ns);
  });

  test('create, read, list, replace, patch (default strategic and merge), stale replace, delete', async () => {
    const created = await objects.create<Lease>(lease(ns, 'gl-1', { holderIdentity: 'alice', leaseDurationSeconds: 15, renewTime: '2024-01-02T03:04:05.123456Z' }));
    assert.equal(created.apiVersion, LEASE_API);
    assert.equal(created.kind, 'Lease');
    assert.equal(created.metadata?.namespace, ns);
    assert.deepEqual(created.spec, { holderIdentity: 'alice', leaseDurationSeconds: 15, renewTime: '2024-01-02T03:04:05.123456Z' });
    const rv1 = rvOf(created);

    const read = await objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns } });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.deepEqual(read.spec, created.spec);

    // a lease without a namespace goes to the context's default namespace ("default")
    const inDefault = await objects.create<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'cn-generic-default' }, spec: {} });
    assert.equal(inDefault.metadata?.namespace, 'default');
    await objects.delete(inDefault);

    const replaced = await objects.replace<Lease>({ ...read, spec: { ...read.spec, holderIdentity: 'bob', leaseTransitions: 1 } });
    const rv2 = rvOf(replaced);
    assert.ok(rv2 > rv1);
    assert.equal(replaced.spec?.holderIdentity, 'bob');
    assert.equal(replaced.spec?.leaseTransitions, 1);

    const stale = await apiError(objects.replace<Lease>({ ...read, spec: { holderIdentity: 'mallory' } }), 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.details?.group, 'coordination.orch.io');
    assert.equal(stale.details?.kind, 'leases');

    // default patch strategy of the generic client: strategic merge
    const smp = await objects.patch<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns }, spec: { holderIdentity: 'carol' } });
    assert.equal(smp.spec?.holderIdentity, 'carol');
    assert.equal(smp.spec?.leaseDurationSeconds, 15, 'a merge keeps untouched fields');
    const rv3 = rvOf(smp);
    assert.ok(rv3 > rv2);

    const mp = await objects.patch<Lease>(
      { apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns, labels: { patched: 'merge' } }, spec: { leaseDurationSeconds: 30 } },
      undefined,
      undefined,
      undefined,
      undefined,
      k8s.PatchStrategy.MergePatch,
    );
    assert.equal(mp.spec?.leaseDurationSeconds, 30);
    assert.equal(mp.spec?.holderIdentity, 'carol');
    assert.deepEqual(mp.metadata?.labels, { patched: 'merge' });

    await objects.create<Lease>(lease(ns, 'gl-2'));
    const list = await objects.list<Lease>(LEASE_API, 'Lease', ns);
    assert.equal(list.kind, 'LeaseList');
    assert.deepEqual(
      list.items.map((l) => l.metadata?.name),
      ['gl-1', 'gl-2'],
    );
    assert.ok(Number(list.metadata?.resourceVersion) >= rv3);
    const selected = await objects.list<Lease>(LEASE_API, 'Lease', ns, undefined, undefined, undefined, undefined, 'patched=merge');
    assert.deepEqual(
      selected.items.map((l) => l.metadata?.name),
      ['gl-1'],
    );

    const status = await objects.delete({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns } });
    assert.equal(status.status, 'Success');
    assert.equal(status.details?.name, 'gl-1');
    const nf = await apiError(objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns } }), 404);
    assert.equal(nf.reason, 'NotFound');
    assert.equal(nf.details?.group, 'coordination.orch.io');
    assert.equal(nf.details?.kind, 'leases');
    assert.equal(nf.message, 'leases.coordination.orch.io "gl-1" not found');
    await apiError(objects.delete({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'gl-1', namespace: ns } }), 404);

    // a create in a namespace that does not exist: 404 for the namespace
    const noNs = await apiError(objects.create<Lease>(lease('cn-no-such-namespace', 'x')), 404);
    assert.equal(noNs.details?.kind, 'namespaces');
    assert.equal(noNs.details?.name, 'cn-no-such-namespace');
  });

  test('list with limit and continue: 25 leases in pages of 10, one snapshot', async () => {
    const pns = 'cn-paging';
    await createNamespace(pns);
    const names = Array.from({ length: 25 }, (_, i) => `page-${String(i).padStart(2, '0')}`);
    for (const n of names) await objects.create<Lease>(lease(pns, n, { holderIdentity: n }));

    const { client, lists } = recordingObjectApi(kc, server.url);
    const seen: string[] = [];
    const pages: { count: number; meta: RawListMeta; rv: string | undefined }[] = [];
    let token: string | undefined;
    do {
      const recorded = lists.length;
      const page = await client.list<Lease>(LEASE_API, 'Lease', pns, undefined, undefined, undefined, undefined, undefined, 10, token);
      assert.equal(lists.length, recorded + 1, 'the list response was recorded');
      const meta = lists[lists.length - 1]!;
      assert.equal(page.metadata?.resourceVersion, meta.resourceVersion, 'the client returns the list resourceVersion');
      for (const item of page.items) {
        assert.equal(item.metadata?.namespace, pns);
        assert.equal(item.spec?.holderIdentity, item.metadata?.name);
        seen.push(item.metadata!.name!);
      }
      pages.push({ count: page.items.length, meta, rv: page.metadata?.resourceVersion });
      token = meta.continue;
      // A write between pages is not part of the snapshot the pages are read from.
      if (pages.length === 1) await objects.create<Lease>(lease(pns, 'page-99-late'));
      assert.ok(pages.length <= 3, 'no more than three pages');
    } while (token);

    assert.deepEqual(
      pages.map((p) => p.count),
      [10, 10, 5],
    );
    assert.deepEqual(
      pages.map((p) => p.meta.remainingItemCount),
      [15, 5, undefined],
    );
    assert.equal(pages[2]!.meta.continue, undefined, 'the last page has no continue token');
    assert.equal(new Set(pages.map((p) => p.rv)).size, 1, `one resourceVersion across pages: ${pages.map((p) => p.rv).join(',')}`);
    assert.deepEqual(seen, names, 'every lease once, in key order, and not the one created between pages');

    // A fresh list sees the late lease too.
    const fresh = await objects.list<Lease>(LEASE_API, 'Lease', pns);
    assert.equal(fresh.items.length, 26);
    assert.ok(Number(fresh.metadata?.resourceVersion) > Number(pages[0]!.rv));

    // limit without a continue token: just the first page
    const first = await objects.list<Lease>(LEASE_API, 'Lease', pns, undefined, undefined, undefined, undefined, undefined, 3);
    assert.deepEqual(
      first.items.map((l) => l.metadata?.name),
      names.slice(0, 3),
    );
  });

  test('CustomObjectsApi pages too, and keeps continue/remainingItemCount in what it returns', async () => {
    const pns = 'cn-paging';
    const page1 = (await custom.listNamespacedCustomObject({ group: 'coordination.orch.io', version: 'v1', namespace: pns, plural: 'leases', limit: 20 })) as { metadata: RawListMeta; items: Lease[] };
    assert.equal(page1.items.length, 20);
    assert.equal(page1.metadata.remainingItemCount, 6);
    assert.ok(page1.metadata.continue);
    const page2 = (await custom.listNamespacedCustomObject({ group: 'coordination.orch.io', version: 'v1', namespace: pns, plural: 'leases', limit: 20, _continue: page1.metadata.continue })) as {
      metadata: RawListMeta;
      items: Lease[];
    };
    assert.equal(page2.items.length, 6);
    assert.equal(page2.metadata.continue, undefined);
    assert.equal(page2.metadata.resourceVersion, page1.metadata.resourceVersion);
    assert.equal(new Set([...page1.items, ...page2.items].map((l) => l.metadata?.name)).size, 26);
  });
});

// ---- Watch ----

describe('Watch on leases', () => {
  const ns = 'cn-watch';
  before(async () => {
    await createNamespace(ns);
  });

  test('ADDED, MODIFIED, DELETED with the resourceVersions the writes returned', async () => {
    const list = await objects.list<Lease>(LEASE_API, 'Lease', ns);
    const w = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: list.metadata?.resourceVersion });
    try {
      const created = await objects.create<Lease>(lease(ns, 'w-1'));
      const modified = await objects.replace<Lease>({ ...created, spec: { holderIdentity: 'bob' } });
      await objects.delete(created);
      const evs = await w.next(3);
      assert.deepEqual(
        evs.map((e) => [e.type, e.object.metadata?.name]),
        [
          ['ADDED', 'w-1'],
          ['MODIFIED', 'w-1'],
          ['DELETED', 'w-1'],
        ],
      );
      assert.equal(evs[0]!.object.metadata?.resourceVersion, created.metadata?.resourceVersion);
      assert.equal(evs[0]!.object.spec?.holderIdentity, 'alice');
      assert.equal(evs[0]!.object.apiVersion, LEASE_API);
      assert.equal(evs[0]!.object.kind, 'Lease');
      assert.equal(evs[1]!.object.metadata?.resourceVersion, modified.metadata?.resourceVersion);
      assert.equal(evs[1]!.object.spec?.holderIdentity, 'bob');
      assert.ok(rvOf(evs[2]!.object) > rvOf(modified), 'DELETED carries the deletion revision');
      assert.equal(evs[2]!.object.spec?.holderIdentity, 'bob', 'DELETED carries the last state');
      assert.equal(w.doneCalled, false);
    } finally {
      w.stop();
    }
  });

  test('resume from the last event and from a list resourceVersion: nothing lost, nothing twice', async () => {
    const list0 = await objects.list<Lease>(LEASE_API, 'Lease', ns);
    const w1 = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: list0.metadata?.resourceVersion });
    let lastRv: string;
    try {
      const r1 = await objects.create<Lease>(lease(ns, 'r-1'));
      await objects.replace<Lease>({ ...r1, spec: { holderIdentity: 'r1-v2' } });
      const evs = await w1.next(2);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'MODIFIED'],
      );
      lastRv = evs[1]!.object.metadata!.resourceVersion!;
    } finally {
      w1.stop();
    }
    await sleep(50);

    // Changes while nobody watches.
    const r2 = await objects.create<Lease>(lease(ns, 'r-2'));
    const r1Read = await objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'r-1', namespace: ns } });
    const r1v3 = await objects.replace<Lease>({ ...r1Read, spec: { holderIdentity: 'r1-v3' } });
    await objects.delete(r1v3);
    const r3 = await objects.create<Lease>(lease(ns, 'r-3'));

    const w2 = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: lastRv });
    try {
      const evs = await w2.next(4);
      await sleep(300);
      const all = w2.changes();
      assert.deepEqual(
        all.map((e) => [e.type, e.object.metadata?.name]),
        [
          ['ADDED', 'r-2'],
          ['MODIFIED', 'r-1'],
          ['DELETED', 'r-1'],
          ['ADDED', 'r-3'],
        ],
        `exactly the missed events, in order: ${w2.summary().join(', ')}`,
      );
      assert.equal(evs[0]!.object.metadata?.resourceVersion, r2.metadata?.resourceVersion);
      assert.equal(evs[1]!.object.metadata?.resourceVersion, r1v3.metadata?.resourceVersion);
      assert.equal(evs[1]!.object.spec?.holderIdentity, 'r1-v3');
      assert.equal(evs[3]!.object.metadata?.resourceVersion, r3.metadata?.resourceVersion);
      const rvs = all.map((e) => rvOf(e.object));
      assert.ok(rvs[0]! > Number(lastRv), 'nothing at or before the resume point');
      for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i]! > rvs[i - 1]!, `strictly increasing: ${rvs.join(',')}`);
    } finally {
      w2.stop();
    }

    // Resume from a list's resourceVersion.
    const list1 = await objects.list<Lease>(LEASE_API, 'Lease', ns);
    assert.deepEqual(
      list1.items.map((l) => l.metadata?.name),
      ['r-2', 'r-3'],
    );
    const r2v2 = await objects.replace<Lease>({ ...list1.items[0]!, spec: { holderIdentity: 'r2-v2' } });
    const r4 = await objects.create<Lease>(lease(ns, 'r-4'));
    const w3 = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: list1.metadata?.resourceVersion });
    try {
      await w3.next(2);
      await sleep(300);
      assert.deepEqual(
        w3.changes().map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.resourceVersion]),
        [
          ['MODIFIED', 'r-2', r2v2.metadata?.resourceVersion],
          ['ADDED', 'r-4', r4.metadata?.resourceVersion],
        ],
      );
    } finally {
      w3.stop();
    }
    for (const name of ['r-2', 'r-3', 'r-4']) await objects.delete({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name, namespace: ns } });
  });

  test('watch without resourceVersion: ADDED for what exists, then changes', async () => {
    const a = await objects.create<Lease>(lease(ns, 'i-1'));
    const w = await WatchRecorder.start(kc, leasePath(ns), {});
    try {
      const initial = await w.next(1);
      assert.deepEqual(
        initial.map((e) => [e.type, e.object.metadata?.name, e.object.metadata?.resourceVersion]),
        [['ADDED', 'i-1', a.metadata?.resourceVersion]],
      );
      await objects.delete(a);
      const evs = await w.next(2);
      assert.equal(evs[1]!.type, 'DELETED');
      assert.equal(evs[1]!.object.metadata?.name, 'i-1');
    } finally {
      w.stop();
    }
  });

  test('allowWatchBookmarks: BOOKMARK events (progress), none without it; resume from a bookmark', async () => {
    const base = await objects.create<Lease>(lease(ns, 'b-1'));
    const baseRv = base.metadata!.resourceVersion!;
    const withBm = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: baseRv, allowWatchBookmarks: true });
    const without = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: baseRv });
    let bookmarkRv: string;
    try {
      // Progress is reported at the store's newest revision, and only when that is newer than what
      // the watch has sent (as Kubernetes filters bookmarks): move the revision with a write the
      // watches do not see, a Node.
      const node = await core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cn-bookmark-node' } } });
      const [bm] = (await eventually('a BOOKMARK event within 12 s', () => {
        const b = withBm.events.filter((e) => e.type === 'BOOKMARK');
        return b.length ? b : undefined;
      }, 12_000, 100))!;
      assert.equal(bm!.object.kind, 'Lease');
      assert.equal(bm!.object.apiVersion, LEASE_API);
      assert.equal(bm!.object.metadata?.name, undefined, 'a bookmark carries only a resourceVersion');
      assert.ok(rvOf(bm!.object) >= rvOf(node), `bookmark at ${bm!.object.metadata?.resourceVersion}, newest write at ${node.metadata?.resourceVersion}`);
      await core.deleteNode({ name: 'cn-bookmark-node' });
      bookmarkRv = bm!.object.metadata!.resourceVersion!;
      // Both watches got the same progress tick; the one that did not ask gets no bookmark.
      await sleep(300);
      assert.deepEqual(
        without.events.filter((e) => e.type === 'BOOKMARK'),
        [],
      );
      assert.equal(withBm.changes().length, 0, 'no change events');
      // A change after the bookmark comes with a newer resourceVersion.
      const mod = await objects.replace<Lease>({ ...base, spec: { holderIdentity: 'after-bookmark' } });
      const [ev] = await withBm.next(1);
      assert.equal(ev!.type, 'MODIFIED');
      assert.equal(ev!.object.metadata?.resourceVersion, mod.metadata?.resourceVersion);
      assert.ok(rvOf(ev!.object) > Number(bookmarkRv));
    } finally {
      withBm.stop();
      without.stop();
    }
    // Resuming from the bookmark's resourceVersion delivers what came after it, once.
    const w = await WatchRecorder.start(kc, leasePath(ns), { resourceVersion: bookmarkRv });
    try {
      const evs = await w.next(1);
      await sleep(200);
      assert.deepEqual(
        w.changes().map((e) => [e.type, e.object.metadata?.name, e.object.spec?.holderIdentity]),
        [['MODIFIED', 'b-1', 'after-bookmark']],
      );
      assert.ok(rvOf(evs[0]!.object) > Number(bookmarkRv));
    } finally {
      w.stop();
    }
    await objects.delete({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'b-1', namespace: ns } });
  });
});

describe('Watch from a resourceVersion that is too old', () => {
  // A server whose watch cache keeps 50 ms of history: the first lease's revision falls out of
  // the window once a later lease is written.
  const okc = kubeConfig(shortHistory.url);
  let w: WatchRecorder | undefined;
  let tooOldRv: number;

  before(async () => {
    const o = k8s.KubernetesObjectApi.makeApiClient(okc);
    const first = await o.create<Lease>(lease('default', 'old-1'));
    await sleep(200);
    await o.create<Lease>(lease('default', 'old-2'));
    tooOldRv = rvOf(first) - 1;
    w = await WatchRecorder.start(okc, leasePath('default'), { resourceVersion: tooOldRv });
  });
  after(() => w?.stop());

  test('the watch callback gets an ERROR event carrying a 410 Expired Status', async () => {
    const [ev] = await w!.next(1);
    assert.equal(ev!.type, 'ERROR');
    assert.equal(ev!.object.kind, 'Status');
    assert.equal(ev!.object.status, 'Failure');
    assert.equal(ev!.object.code, 410);
    assert.equal(ev!.object.reason, 'Expired');
    assert.match(ev!.object.message ?? '', /too old resource version/);
    assert.equal(w!.events.length, 1, `only the ERROR event: ${w!.summary().join(', ')}`);
  });

  test('the server then ends the stream, so the done callback runs (without an error)', async () => {
    // client-node's informer only relists after `done`; Kubernetes closes a watch after its ERROR.
    await eventually('the done callback after the 410 ERROR event', () => w!.doneCalled || undefined, 3000);
    assert.equal(w!.doneError ?? null, null);
  });
});

// ---- informer ----

describe('informer (makeInformer) on leases', () => {
  test('add, update, delete; the cache matches the server at the end', async () => {
    const ns = 'cn-informer';
    await createNamespace(ns);
    await objects.create<Lease>(lease(ns, 'inf-1'));
    await objects.create<Lease>(lease(ns, 'inf-2'));

    const informer = k8s.makeInformer<Lease>(kc, leasePath(ns), () => objects.list<Lease>(LEASE_API, 'Lease', ns));
    const log: string[] = [];
    const errors: unknown[] = [];
    informer.on(k8s.ADD, (l) => log.push(`add ${l.metadata?.name}@${l.metadata?.resourceVersion}`));
    informer.on(k8s.UPDATE, (l) => log.push(`update ${l.metadata?.name}@${l.metadata?.resourceVersion} ${l.spec?.holderIdentity}`));
    informer.on(k8s.DELETE, (l) => log.push(`delete ${l.metadata?.name}`));
    informer.on(k8s.ERROR, (e) => errors.push(e));
    await informer.start();
    try {
      await eventually('two initial adds', () => (log.length >= 2 ? true : undefined));
      assert.deepEqual(
        log.map((l) => l.split('@')[0]).sort(),
        ['add inf-1', 'add inf-2'],
      );

      const c = await objects.create<Lease>(lease(ns, 'inf-3'));
      await eventually('add inf-3', () => log.includes(`add inf-3@${c.metadata?.resourceVersion}`) || undefined);

      const cur = informer.get('inf-1', ns);
      assert.ok(cur, 'inf-1 is in the cache');
      const upd = await objects.replace<Lease>({ ...cur, spec: { holderIdentity: 'bob' } });
      await eventually('update inf-1', () => log.includes(`update inf-1@${upd.metadata?.resourceVersion} bob`) || undefined);
      assert.equal(informer.get('inf-1', ns)?.spec?.holderIdentity, 'bob');

      await objects.delete({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'inf-2', namespace: ns } });
      await eventually('delete inf-2', () => log.includes('delete inf-2') || undefined);
      assert.equal(informer.get('inf-2', ns), undefined);

      const onServer = await objects.list<Lease>(LEASE_API, 'Lease', ns);
      const fromServer = Object.fromEntries(onServer.items.map((l) => [l.metadata!.name!, l.metadata!.resourceVersion]));
      const fromCache = Object.fromEntries(informer.list(ns).map((l) => [l.metadata!.name!, l.metadata!.resourceVersion]));
      assert.deepEqual(fromCache, fromServer);
      assert.deepEqual(Object.keys(fromServer).sort(), ['inf-1', 'inf-3']);
      assert.equal(log.length, 5, `no spurious notifications: ${log.join('; ')}`);
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});

// ---- namespace deletion ----

describe('namespace deletion', () => {
  const leaseNames = async (ns: string) => (await objects.list<Lease>(LEASE_API, 'Lease', ns)).items.map((l) => l.metadata!.name!);

  test('deleting a namespace removes its leases, then the namespace', async () => {
    const ns = 'cn-del-plain';
    await createNamespace(ns);
    for (const n of ['d-1', 'd-2', 'd-3']) await objects.create<Lease>(lease(ns, n));
    assert.deepEqual(await leaseNames(ns), ['d-1', 'd-2', 'd-3']);

    await core.deleteNamespace({ name: ns });
    await eventually('namespace gone', async () => (await namespaceGone(ns)) || undefined, 10_000);
    assert.deepEqual(await leaseNames(ns), []);
    for (const n of ['d-1', 'd-2', 'd-3']) await apiError(objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: n, namespace: ns } }), 404);
  });

  test('a lease finalizer holds the namespace until it is removed', async () => {
    const ns = 'cn-del-held';
    await createNamespace(ns);
    await objects.create<Lease>(lease(ns, 'held', { holderIdentity: 'x' }, { finalizers: ['example.com/hold'] }));
    await objects.create<Lease>(lease(ns, 'free'));

    await core.deleteNamespace({ name: ns });
    const ns1 = await core.readNamespace({ name: ns });
    assert.equal(ns1.status?.phase, 'Terminating');
    assert.ok(ns1.metadata?.deletionTimestamp instanceof Date);

    // New content is refused while the namespace terminates.
    const refused = await apiError(objects.create<Lease>(lease(ns, 'late')), 403);
    assert.equal(refused.reason, 'Forbidden');
    assert.match(refused.message ?? '', /being terminated/);

    const held = await eventually(
      'free deleted and held marked for deletion',
      async () => {
        const names = await leaseNames(ns);
        if (names.includes('free')) return undefined;
        const h = await objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'held', namespace: ns } });
        return h.metadata?.deletionTimestamp ? h : undefined;
      },
      10_000,
    );
    assert.deepEqual(held.metadata?.finalizers, ['example.com/hold']);

    // Several controller passes later, the namespace is still there.
    await sleep(1000);
    assert.equal((await core.readNamespace({ name: ns })).status?.phase, 'Terminating');
    assert.deepEqual(await leaseNames(ns), ['held']);

    // Remove the finalizer (replace with the finalizer list emptied): the lease goes, then the namespace.
    const current = await objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'held', namespace: ns } });
    await objects.replace<Lease>({ ...current, metadata: { ...current.metadata, finalizers: [] } });
    await apiError(objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'held', namespace: ns } }), 404);
    await eventually('namespace gone after the finalizer was removed', async () => (await namespaceGone(ns)) || undefined, 10_000);
  });
});

// ---- dryRun and fieldValidation ----

describe('dryRun and fieldValidation through the client', () => {
  test('dryRun=All on create stores nothing', async () => {
    const ns = await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cn-dry' } }, dryRun: 'All' });
    assert.equal(ns.metadata?.name, 'cn-dry');
    assert.equal(ns.status?.phase, 'Active', 'the dry-run answer is the object as it would be stored');
    assert.ok(!ns.metadata?.resourceVersion, 'a dry-run object has no resourceVersion');
    await apiError(core.readNamespace({ name: 'cn-dry' }), 404);
    assert.ok(!(await core.listNamespace()).items.some((n) => n.metadata?.name === 'cn-dry'));

    const l = await objects.create<Lease>(lease('default', 'cn-dry-lease'), undefined, 'All');
    assert.equal(l.metadata?.name, 'cn-dry-lease');
    assert.equal(l.spec?.holderIdentity, 'alice');
    await apiError(objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'cn-dry-lease', namespace: 'default' } }), 404);

    const node = await core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cn-dry-node' } }, dryRun: 'All' });
    assert.equal(node.metadata?.name, 'cn-dry-node');
    await apiError(core.readNode({ name: 'cn-dry-node' }), 404);

    const bad = await apiError(core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cn-dry2' } }, dryRun: 'Some' }), 422);
    assert.match(bad.message ?? '', /dryRun/);
  });

  test('fieldValidation=Strict rejects an unknown field with 400; Ignore drops it', async () => {
    await core.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'cn-fv-node' }, spec: { podCIDR: '10.9.0.0/24' } } });
    const original = await core.readNode({ name: 'cn-fv-node' });
    const strict = await apiError(
      core.patchNode({ name: 'cn-fv-node', body: { spec: { bogusField: true } }, fieldValidation: 'Strict' }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)),
      400,
    );
    assert.equal(strict.reason, 'BadRequest');
    assert.match(strict.message ?? '', /unknown field "spec\.bogusField"/);
    assert.equal((await core.readNode({ name: 'cn-fv-node' })).metadata?.resourceVersion, original.metadata?.resourceVersion);

    const ignored = await core.patchNode(
      { name: 'cn-fv-node', body: { spec: { bogusField: true } }, fieldValidation: 'Ignore' },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.equal(ignored.metadata?.resourceVersion, original.metadata?.resourceVersion, 'nothing to change once the field is dropped');
    assert.equal(ignored.spec?.podCIDR, '10.9.0.0/24');
    await core.deleteNode({ name: 'cn-fv-node' });

    // A create with an unknown field through CustomObjectsApi (which sends the body as given).
    const body = { apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'cn-fv-lease' }, spec: { holderIdentity: 'x', bogus: 1 } };
    const rejected = await apiError(custom.createNamespacedCustomObject({ group: 'coordination.orch.io', version: 'v1', namespace: 'default', plural: 'leases', body, fieldValidation: 'Strict' }), 400);
    assert.equal(rejected.reason, 'BadRequest');
    assert.match(rejected.message ?? '', /strict decoding error: unknown field "spec\.bogus"/);
    await apiError(objects.read<Lease>({ apiVersion: LEASE_API, kind: 'Lease', metadata: { name: 'cn-fv-lease', namespace: 'default' } }), 404);

    const accepted = (await custom.createNamespacedCustomObject({ group: 'coordination.orch.io', version: 'v1', namespace: 'default', plural: 'leases', body, fieldValidation: 'Ignore' })) as Lease;
    assert.deepEqual(accepted.spec, { holderIdentity: 'x' });
    await objects.delete(accepted);

    const invalid = await apiError(core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cn-fv-ns' } }, fieldValidation: 'Sloppy' }), 422);
    assert.match(invalid.message ?? '', /fieldValidation/);
  });
});
