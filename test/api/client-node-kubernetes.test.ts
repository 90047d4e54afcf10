// @kubernetes/client-node's typed APIs, which hard-code Kubernetes group names, against a server in
// the kubernetes naming profile: CoordinationV1Api and CoreV1Api CRUD, an informer on Leases, and
// leader election on a Lease the way controllers run it (acquire, renew, take over an expired
// lease) with two contenders and compare-and-swap on resourceVersion. Then client-node as users
// other than the administrator: with a token-file token and with a client certificate made here,
// each seen as who it is by AuthenticationV1Api's SelfSubjectReview.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as K8s from '@kubernetes/client-node';
import { testServer, waitFor } from '../support/server.ts';
import { kubeConfigFor, loadClientNode } from '../support/client-node.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { tempDir } from '../support/tmp.ts';

const k8s: typeof K8s = await loadClientNode();
// The server's CA is made here (kept in its certificate directory), so the test can issue client
// certificates under it; a token file gives a bearer token.
const dir = tempDir('client-node-kubernetes');
const ca = await makeCa('client-node-ca');
mkdirSync(join(dir, 'pki'));
writeFileSync(join(dir, 'pki', 'ca.crt'), ca.cert);
writeFileSync(join(dir, 'pki', 'ca.key'), ca.key);
writeFileSync(join(dir, 'tokens.csv'), 'client-node-token,token-user,4001,"readers,writers"\n');
// The users are for authentication: every authenticated request is allowed.
const server = await testServer({ naming: 'kubernetes', secureServing: { certDir: join(dir, 'pki') }, authentication: { tokenAuthFile: join(dir, 'tokens.csv') }, authorization: { modes: ['AlwaysAllow'] } });
const kc = kubeConfigFor(k8s, server.url);
const coord = kc.makeApiClient(k8s.CoordinationV1Api);
const core = kc.makeApiClient(k8s.CoreV1Api);
const NS = 'kube-system';

const code = (e: unknown) => (e as { code?: number }).code;
const microNow = () => new Date();

describe('typed APIs (kubernetes profile)', () => {
  test('CoordinationV1Api: create, read, replace with a stale resourceVersion (409), list across namespaces, delete', async () => {
    const created = await coord.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'typed' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 10 } } });
    assert.equal(created.apiVersion, 'coordination.k8s.io/v1');
    const read = await coord.readNamespacedLease({ name: 'typed', namespace: NS });
    assert.equal(read.spec?.holderIdentity, 'a');
    const replaced = await coord.replaceNamespacedLease({ name: 'typed', namespace: NS, body: { ...read, spec: { ...read.spec, holderIdentity: 'b' } } });
    assert.equal(replaced.spec?.holderIdentity, 'b');
    await assert.rejects(coord.replaceNamespacedLease({ name: 'typed', namespace: NS, body: { ...read, spec: { ...read.spec, holderIdentity: 'c' } } }), (e) => code(e) === 409);
    const all = await coord.listLeaseForAllNamespaces({});
    assert.ok(all.items.some((l) => l.metadata?.name === 'typed' && l.metadata.namespace === NS));
    await coord.deleteNamespacedLease({ name: 'typed', namespace: NS });
    await assert.rejects(coord.readNamespacedLease({ name: 'typed', namespace: NS }), (e) => code(e) === 404);
  });

  test('CoreV1Api: namespaces, nodes and the node status subresource', async () => {
    await core.createNamespace({ body: { metadata: { name: 'typed-ns' } } });
    const ns = await core.readNamespace({ name: 'typed-ns' });
    assert.equal(ns.status?.phase, 'Active');
    const node = await core.createNode({ body: { metadata: { name: 'typed-node' }, spec: { podCIDR: '10.1.2.0/24' } } });
    assert.deepEqual(node.spec?.podCIDRs, ['10.1.2.0/24']);
    const withStatus = await core.replaceNodeStatus({ name: 'typed-node', body: { ...node, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    assert.equal(withStatus.status?.conditions?.[0]?.status, 'True');
    const listed = await core.listNode({ fieldSelector: 'metadata.name=typed-node' });
    assert.deepEqual(listed.items.map((n) => n.metadata?.name), ['typed-node']);
    await core.deleteNode({ name: 'typed-node' });
    await core.deleteNamespace({ name: 'typed-ns' });
  });
});

describe('informer on Leases (kubernetes profile)', () => {
  test('sees adds, updates and deletes, and keeps its cache', async () => {
    const informer = k8s.makeInformer<K8s.V1Lease>(kc, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, () => coord.listNamespacedLease({ namespace: NS }));
    const seen: string[] = [];
    informer.on(k8s.ADD, (l) => seen.push(`add ${l.metadata?.name}`));
    informer.on(k8s.UPDATE, (l) => seen.push(`update ${l.metadata?.name} ${l.spec?.holderIdentity}`));
    informer.on(k8s.DELETE, (l) => seen.push(`delete ${l.metadata?.name}`));
    await informer.start();
    try {
      await coord.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'inf' }, spec: { holderIdentity: 'x' } } });
      const l = await coord.readNamespacedLease({ name: 'inf', namespace: NS });
      await coord.replaceNamespacedLease({ name: 'inf', namespace: NS, body: { ...l, spec: { holderIdentity: 'y' } } });
      await coord.deleteNamespacedLease({ name: 'inf', namespace: NS });
      const deadline = Date.now() + 5000;
      while (!seen.includes('delete inf') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(seen.filter((s) => s.includes('inf')), ['add inf', 'update inf y', 'delete inf']);
      assert.equal(informer.get('inf', NS), undefined);
    } finally {
      await informer.stop();
    }
  });
});

/** A leader elector as controllers run one on a Lease: acquire when free or expired, renew while leading. */
class Elector {
  readonly id: string;
  private readonly name: string;
  private readonly durationSeconds: number;
  leading = false;
  stopped = false;
  private timer?: NodeJS.Timeout;
  constructor(
    id: string,
    name: string,
    durationSeconds: number,
  ) {
    this.id = id;
    this.name = name;
    this.durationSeconds = durationSeconds;
  }

  async tryAcquireOrRenew(): Promise<void> {
    const now = microNow();
    let lease: K8s.V1Lease;
    try {
      lease = await coord.readNamespacedLease({ name: this.name, namespace: NS });
    } catch (e) {
      if (code(e) !== 404) throw e;
      try {
        await coord.createNamespacedLease({ namespace: NS, body: { metadata: { name: this.name }, spec: { holderIdentity: this.id, leaseDurationSeconds: this.durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 } } });
        this.leading = true;
      } catch (err) {
        if (code(err) !== 409) throw err;
      }
      return;
    }
    const spec = lease.spec ?? {};
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? this.durationSeconds) * 1000 < now.getTime();
    if (spec.holderIdentity !== this.id && !expired) {
      this.leading = false;
      return;
    }
    const takeover = spec.holderIdentity !== this.id;
    try {
      // The resourceVersion read is a precondition: two contenders cannot both win.
      await coord.replaceNamespacedLease({
        name: this.name,
        namespace: NS,
        body: {
          ...lease,
          spec: { ...spec, holderIdentity: this.id, renewTime: now, ...(takeover ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}) },
        },
      });
      this.leading = true;
    } catch (e) {
      if (code(e) !== 409) throw e;
      this.leading = false;
    }
  }

  run(periodMs: number): void {
    const tick = async () => {
      if (this.stopped) return;
      await this.tryAcquireOrRenew().catch(() => (this.leading = false));
      this.timer = setTimeout(tick, periodMs);
    };
    void tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

describe('leader election on a Lease (kubernetes profile)', () => {
  test('one leader at a time; the other takes over once the leader stops renewing', async () => {
    const a = new Elector('a', 'leader', 1);
    const b = new Elector('b', 'leader', 1);
    a.run(200);
    await new Promise((r) => setTimeout(r, 300));
    b.run(200);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(!(a.leading && b.leading), 'never two leaders');
    }
    assert.ok(a.leading && !b.leading, 'the first contender leads');
    a.stop();
    const deadline = Date.now() + 5000;
    while (!b.leading && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    b.stop();
    assert.ok(b.leading, 'the second took over');
    const lease = await coord.readNamespacedLease({ name: 'leader', namespace: NS });
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
  });
});

describe('client-node as other users (kubernetes profile)', () => {
  /** A KubeConfig for the server with this user and no administrator certificate. */
  const as = (user: K8s.User) => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 't', server: server.url, caData: Buffer.from(server.ca!).toString('base64'), skipTLSVerify: false }],
      users: [user],
      contexts: [{ name: 't', cluster: 't', user: user.name }],
      currentContext: 't',
    });
    return kc;
  };
  const whoami = async (kc: K8s.KubeConfig) => (await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })).status?.userInfo;

  test('with a token-file token and with a client certificate: SelfSubjectReview says who each is, and typed calls work', async () => {
    const byToken = as({ name: 'token-user', token: 'client-node-token' });
    const tokenUser = await whoami(byToken);
    assert.deepEqual([tokenUser?.username, tokenUser?.uid, tokenUser?.groups, tokenUser?.extra], ['token-user', '4001', ['readers', 'writers', 'system:authenticated'], undefined]);
    assert.equal((await byToken.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' })).metadata?.name, 'default');

    const user = await issueCert(ca, { subject: 'CN=cert-user, O=builders' });
    const byCert = as({ name: 'cert-user', certData: Buffer.from(user.cert).toString('base64'), keyData: Buffer.from(user.key).toString('base64') });
    const certified = await whoami(byCert);
    assert.deepEqual([certified?.username, certified?.groups, certified?.uid], ['cert-user', ['builders', 'system:authenticated'], undefined]);
    // The certificate's fingerprint is its credential id, as kube-apiserver gives it.
    assert.match(Object.values(certified?.extra ?? {}).flat().join(), /^X509SHA256=[0-9a-f]{64}$/);
    assert.equal((await byCert.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' })).metadata?.name, 'default');

    // A token the server does not know is refused (401), not served as anyone.
    await assert.rejects(whoami(as({ name: 'stranger', token: 'not-a-known-token' })), (e) => code(e) === 401);
  });
});

describe('custom resources (kubernetes profile)', () => {
  test('a CRD created with ApiextensionsV1Api is established; its objects are created, patched, listed and refused through CustomObjectsApi', async () => {
    const { widgetCrd } = await import('../support/crd.ts');
    const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await extensions.createCustomResourceDefinition({ body: widgetCrd('client.example.com') as K8s.V1CustomResourceDefinition });
    await waitFor('established', async () => {
      const crd = await extensions.readCustomResourceDefinition({ name: 'widgets.client.example.com' });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
    const objects = kc.makeApiClient(k8s.CustomObjectsApi);
    const at = { group: 'client.example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
    type Widget = { metadata: { name: string }; spec: { size: number } };
    const created = (await objects.createNamespacedCustomObject({ ...at, body: { apiVersion: 'client.example.com/v1', kind: 'Widget', metadata: { name: 'n' }, spec: { size: 5 } } })) as Widget;
    assert.equal(created.spec.size, 5);
    const patched = (await objects.patchNamespacedCustomObject({ ...at, name: 'n', body: [{ op: 'replace', path: '/spec/size', value: 6 }] })) as Widget;
    assert.equal(patched.spec.size, 6);
    const list = (await objects.listNamespacedCustomObject(at)) as { items: Widget[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.spec.size]), [['n', 6]]);
    await assert.rejects(objects.createNamespacedCustomObject({ ...at, body: { apiVersion: 'client.example.com/v1', kind: 'Widget', metadata: { name: 'm' }, spec: { size: 0 } } }), (e) => code(e) === 422);
  });
});
