// Unmodified kubectl, old and new, against a server started with no naming option (the `orch`
// profile): kubectl 1.20 and the newest kubectl on this machine (test/support/kubectl.ts) run the
// same cases. kubectl hard-codes `application/vnd.kubernetes.protobuf` and `g=meta.k8s.io`
// Tables; the server accepts those spellings in every profile and answers in them
// (docs/wire-names.md), so kubectl needs no flags.
//
// kubectl talks through a recording proxy, so each case also checks what went over the wire: the
// Table requests (`as=Table;v=v1;g=meta.k8s.io`) answered with a `meta.k8s.io/v1` Table, and the
// newest kubectl's typed commands (create namespace, cordon) answered in protobuf. kubectl 1.20
// sends JSON from its typed commands and has no `wait --for=jsonpath`.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { api, testServer, waitFor } from '../support/server.ts';
import { kubectl120, kubectlFor, newestKubectl, tableRows } from '../support/kubectl.ts';
import { recordingProxy, type Exchange } from '../support/recording-proxy.ts';
import { decodeObject } from '../../src/wire/protobuf/index.ts';

const server = await testServer();
const PB = 'application/vnd.kubernetes.protobuf';
const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const LEASES = '/apis/coordination.orch.io/v1';

/** The JSON Table objects of an answer: one body, or a watch stream's events. */
function tablesOf(e: Exchange): { kind: string; apiVersion: string; columnDefinitions: { name: string }[] | null; rows: { object: { apiVersion: string } }[] }[] {
  const text = e.body.toString('utf8').trim();
  if (!e.path.includes('watch=true')) return [JSON.parse(text)];
  return text.split('\n').map((l) => JSON.parse(l).object);
}

/** Every Table request of `path` asked for meta.k8s.io first and got a meta.k8s.io/v1 Table. */
function assertKubernetesTables(exchanges: Exchange[], what: string): void {
  assert.ok(exchanges.length > 0, `kubectl asked for ${what}`);
  for (const e of exchanges) {
    assert.ok(e.accept.startsWith(TABLE_V1), `${what}: Accept ${e.accept}`);
    assert.equal(e.status, 200);
    // A get or list names the conversion after the media type; a watch stream does not (as kube-apiserver).
    const watch = /[?&]watch=(1|true)/.test(e.path);
    assert.equal(e.responseType, watch ? 'application/json' : 'application/json;g=meta.k8s.io;v=v1;as=Table', e.path);
    for (const t of tablesOf(e)) {
      assert.deepEqual([t.kind, t.apiVersion], ['Table', 'meta.k8s.io/v1'], `${what}: ${e.body.toString('utf8').slice(0, 200)}`);
      for (const r of t.rows) assert.equal(r.object.apiVersion, 'meta.k8s.io/v1');
    }
  }
}

// The two kubectl builds run side by side: each has its own namespace, proxy and node names, and
// most of each suite's time is kubectl starting and waiting on the server.
describe('kubectl 1.20 and the newest kubectl', { concurrency: true }, () => {
  for (const [label, bin] of [['kubectl 1.20', kubectl120()], ['the newest kubectl', newestKubectl()]] as const) {
    describe(`${label}, default profile`, { concurrency: false }, async () => {
      const proxy = await recordingProxy(server.url);
      after(() => proxy.close());
      const tag = label === 'kubectl 1.20' ? 'v120' : 'newest';
      const newest = tag === 'newest';
      const ns = `kd-${tag}`;
      const k = kubectlFor(proxy, { bin, namespace: ns, label: `kubectl-default-${tag}` });
      const { exchanges } = proxy;
      const leasePath = (name: string) => `${LEASES}/namespaces/${ns}/leases/${name}`;
      const node = `${tag}-node`;
      const lease = `${tag}-lease`;

      test('create namespace (the newest kubectl: a protobuf body and answer); a second create is AlreadyExists', async (t) => {
        t.diagnostic(`${k.bin}: ${k.version}`);
        assert.equal(await k.ok(['create', 'namespace', ns]), `namespace/${ns} created\n`);
        const [post] = exchanges('POST', /^\/api\/v1\/namespaces$/);
        assert.ok(post, 'kubectl posted the namespace');
        assert.equal(post.status, 201);
        if (newest) {
          assert.deepEqual([post.contentType, post.responseType], [PB, PB]);
          assert.equal(decodeObject(post.body).metadata.name, ns);
        } else assert.deepEqual([post.contentType, post.responseType], ['', 'application/json']);
        const again = await k.fails(['create', 'namespace', ns]);
        assert.match(again.stderr, new RegExp(`Error from server \\(AlreadyExists\\): namespaces "${ns}" already exists`));
        // The error came as a Status in the spelling asked for.
        const conflict = exchanges('POST', /^\/api\/v1\/namespaces$/).at(-1)!;
        assert.equal(conflict.status, 409);
        assert.equal(conflict.responseType, newest ? PB : 'application/json');
        assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}`)).body.status.phase, 'Active');
      });

      test('create -f a manifest (a Node with conditions and a Lease)', async () => {
        const file = k.file(
          'objects.yaml',
          [
            'apiVersion: v1',
            'kind: Node',
            `metadata: {name: ${node}, labels: {node-role.orch.io/worker: ""}}`,
            'status:',
            '  addresses: [{type: InternalIP, address: 10.1.2.3}]',
            '  nodeInfo: {kubeletVersion: v1.36.0, osImage: Debian GNU/Linux 12, kernelVersion: 6.1.0, containerRuntimeVersion: "containerd://2.0.0",',
            '    machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}',
            '  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ready}]',
            '---',
            'apiVersion: coordination.orch.io/v1',
            'kind: Lease',
            `metadata: {name: ${lease}, labels: {app: demo}}`,
            'spec: {holderIdentity: first, leaseDurationSeconds: 15}',
            '',
          ].join('\n'),
        );
        const out = await k.ok(['create', '-f', file]);
        assert.match(out, new RegExp(`^node/${node} created$`, 'm'));
        assert.match(out, new RegExp(`^lease.coordination.orch.io/${lease} created$`, 'm'));
        assert.equal((await api(server, 'GET', leasePath(lease))).body.spec.holderIdentity, 'first');
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${node}`)).body.status.conditions[0].type, 'Ready');
      });

      test('get: default table and -o wide print the server columns from meta.k8s.io Tables', async () => {
        const wide = tableRows(await k.ok(['get', 'nodes', '-o', 'wide']));
        assert.deepEqual(wide[0], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
        const row = wide.find((r) => r[0] === node);
        assert.ok(row, `a row for ${node}: ${JSON.stringify(wide)}`);
        assert.deepEqual([row[1], row[2], row[4], ...row.slice(5)], ['Ready', 'worker', 'v1.36.0', '10.1.2.3', '<none>', 'Debian GNU/Linux 12', '6.1.0', 'containerd://2.0.0']);
        const nodes = tableRows(await k.ok(['get', 'nodes']));
        assert.deepEqual(nodes[0], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
        const leases = tableRows(await k.ok(['get', 'leases']));
        assert.deepEqual(leases[0], ['NAME', 'HOLDER', 'AGE']);
        assert.deepEqual(leases.slice(1).map((r) => r.slice(0, 2)), [[lease, 'first']]);
        const namespaces = tableRows(await k.ok(['get', 'namespace', ns]));
        assert.deepEqual(namespaces.map((r) => r.slice(0, 2)), [['NAME', 'STATUS'], [ns, 'Active']]);
        assertKubernetesTables(exchanges('GET', /^\/api\/v1\/nodes$/), 'node Tables');
        assertKubernetesTables(exchanges('GET', new RegExp(`^${LEASES}/namespaces/${ns}/leases$`)), 'lease Tables');
        assertKubernetesTables(exchanges('GET', new RegExp(`^/api/v1/namespaces/${ns}$`)).filter((e) => e.accept.includes('as=Table')), 'a namespace Table');
      });

      test('get -o yaml / json / name / jsonpath / custom-columns', async () => {
        const stored = (await api(server, 'GET', leasePath(lease))).body;
        const yaml = parseYaml(await k.ok(['get', 'lease', lease, '-o', 'yaml']));
        const json = JSON.parse(await k.ok(['get', 'lease', lease, '-o', 'json']));
        // kubectl ≥ 1.21 leaves managedFields out unless --show-managed-fields.
        if (!yaml.metadata.managedFields) delete stored.metadata.managedFields;
        assert.deepEqual(yaml, stored);
        assert.deepEqual(json, stored);
        assert.equal(await k.ok(['get', 'lease', lease, '-o', 'name']), `lease.coordination.orch.io/${lease}\n`);
        assert.equal(await k.ok(['get', 'leases', '-o', 'jsonpath={.items[*].spec.holderIdentity}']), 'first');
        assert.deepEqual(tableRows(await k.ok(['get', 'lease', lease, '-o', 'custom-columns=NAME:.metadata.name,HOLDER:.spec.holderIdentity,APP:.metadata.labels.app'])), [
          ['NAME', 'HOLDER', 'APP'],
          [lease, 'first', 'demo'],
        ]);
        // These forms print the object, so kubectl asked for it plainly (JSON).
        for (const e of exchanges('GET', new RegExp(`^${LEASES}/namespaces/${ns}/leases(/${lease})?$`)).filter((x) => !x.accept.includes('as=Table')))
          assert.equal(e.responseType, 'application/json');
      });

      test('get -w prints Table rows as leases change (a meta.k8s.io Table watch)', async () => {
        const child = k.spawn(['get', 'leases', '-w']);
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        const rows = () => tableRows(out);
        try {
          await waitFor(`the header and the first row (stdout ${JSON.stringify(out)})`, () => rows().some((r) => r[0] === lease));
          assert.deepEqual(rows()[0], ['NAME', 'HOLDER', 'AGE']);
          assert.equal((await api(server, 'POST', `${LEASES}/namespaces/${ns}/leases`, { metadata: { name: `${tag}-watched` }, spec: { holderIdentity: 'w1' } })).status, 201);
          await waitFor(`the new row (stdout ${JSON.stringify(out)})`, () => rows().some((r) => r[0] === `${tag}-watched` && r[1] === 'w1'));
          assert.equal((await api(server, 'DELETE', leasePath(`${tag}-watched`))).status, 200);
        } finally {
          child.kill();
          await exited;
        }
        assert.equal(rows().filter((r) => r[0] === 'NAME').length, 1);
        const watches = exchanges('GET', new RegExp(`^${LEASES}/namespaces/${ns}/leases$`)).filter((e) => e.path.includes('watch=true'));
        assertKubernetesTables(watches, 'a Table watch');
        assert.ok(tablesOf(watches[0]!).some((t) => t.rows.length > 0), 'the watch streamed rows');
      });

      test('explain; describe of a lease does not fail', async () => {
        assert.match(await k.ok(['explain', 'lease.spec']), /holderIdentity\s+<string>/);
        const described = await k.ok(['describe', 'lease', lease]);
        assert.match(described, new RegExp(`^Name:\\s+${lease}$`, 'm'));
        assert.match(described, /Holder Identity:\s+first/);
      });

      test('apply (client-side): create, then configure', async () => {
        const manifest = (holder: string) => JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `${tag}-csa` }, spec: { holderIdentity: holder } });
        assert.match(await k.ok(['apply', '-f', '-'], manifest('one')), new RegExp(`lease.coordination.orch.io/${tag}-csa created`));
        assert.match(await k.ok(['apply', '-f', '-'], manifest('two')), new RegExp(`lease.coordination.orch.io/${tag}-csa configured`));
        const got = (await api(server, 'GET', leasePath(`${tag}-csa`))).body;
        assert.equal(got.spec.holderIdentity, 'two');
        assert.equal(JSON.parse(got.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.holderIdentity, 'two');
      });

      test('apply --server-side', async () => {
        const intent = JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `${tag}-ssa` }, spec: { holderIdentity: 'ssa', leaseDurationSeconds: 20 } });
        assert.match(await k.ok(['apply', '--server-side', '-f', '-'], intent), /serverside-applied/);
        const applied = (await api(server, 'GET', leasePath(`${tag}-ssa`))).body;
        assert.equal(applied.spec.leaseDurationSeconds, 20);
        assert.deepEqual(applied.metadata.managedFields.map((e: { manager: string; operation: string }) => [e.manager, e.operation]), [['kubectl', 'Apply']]);
        const [patch] = exchanges('PATCH', new RegExp(`^${LEASES}/namespaces/${ns}/leases/${tag}-ssa$`));
        assert.equal(patch?.contentType, 'application/apply-patch+yaml');
      });

      test('label, annotate, patch --type=merge and --type=json on a Lease', async () => {
        await k.ok(['label', 'lease', lease, 'tier=gold']);
        await k.ok(['annotate', 'lease', lease, 'note=hello']);
        await k.ok(['patch', 'lease', lease, '--type=merge', '-p', '{"spec":{"leaseTransitions":3}}']);
        await k.ok(['patch', 'lease', lease, '--type=json', '-p', '[{"op":"replace","path":"/spec/holderIdentity","value":"second"}]']);
        const got = (await api(server, 'GET', leasePath(lease))).body;
        assert.deepEqual([got.metadata.labels.tier, got.metadata.annotations.note, got.spec.leaseTransitions, got.spec.holderIdentity], ['gold', 'hello', 3, 'second']);
        const types = exchanges('PATCH', new RegExp(`^${LEASES}/namespaces/${ns}/leases/${lease}$`)).map((e) => e.contentType);
        assert.deepEqual(types.slice(-2), ['application/merge-patch+json', 'application/json-patch+json']);
      });

      test('patch a Node with the default (strategic) type; cordon (the newest kubectl: answered in protobuf)', async () => {
        await k.ok(['patch', 'node', node, '-p', '{"metadata":{"labels":{"zone":"a"}}}']);
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${node}`)).body.metadata.labels.zone, 'a');
        assert.match(await k.ok(['cordon', node]), new RegExp(`node/${node} cordoned`));
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${node}`)).body.spec.unschedulable, true);
        const patches = exchanges('PATCH', new RegExp(`^/api/v1/nodes/${node}$`));
        assert.equal(patches.length, 2);
        for (const p of patches) {
          assert.equal(p.contentType, 'application/strategic-merge-patch+json');
          assert.equal(p.status, 200);
          assert.equal(p.responseType, p.accept.startsWith(PB) ? PB : 'application/json', `${p.accept} → ${p.responseType}`);
        }
        if (newest) assert.ok(patches.some((p) => p.responseType === PB), 'cordon was answered in protobuf');
      });

      test('wait --for=condition (met by a later status change), and --for=jsonpath with the newest kubectl', async () => {
        const waiting = `${tag}-waiting`;
        const notReady = { apiVersion: 'v1', kind: 'Node', metadata: { name: waiting }, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Starting' }] } };
        assert.equal((await api(server, 'POST', '/api/v1/nodes', notReady)).status, 201);
        const done = k.run(['wait', '--for=condition=Ready', `node/${waiting}`, '--timeout=20s']);
        await waitFor('the wait to watch the node', () => exchanges('GET', /^\/api\/v1\/nodes$/).some((e) => e.path.includes('watch=true') && e.path.includes(waiting)));
        const ready = { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } };
        assert.equal((await api(server, 'PATCH', `/api/v1/nodes/${waiting}/status`, ready, { 'Content-Type': 'application/merge-patch+json' })).status, 200);
        const r = await done;
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `node/${waiting} condition met\n`);
        if (newest) assert.equal(await k.ok(['wait', '--for=jsonpath={.spec.holderIdentity}=second', `lease/${lease}`, '--timeout=10s']), `lease.coordination.orch.io/${lease} condition met\n`);
      });

      test('wait --for=delete returns once the lease is gone; delete prints what it deleted', async () => {
        const doomed = `${tag}-doomed`;
        assert.equal((await api(server, 'POST', `${LEASES}/namespaces/${ns}/leases`, { metadata: { name: doomed } })).status, 201);
        const done = k.run(['wait', '--for=delete', `lease/${doomed}`, '--timeout=20s']);
        await waitFor('the wait to watch the lease', () => exchanges('GET', new RegExp(`^${LEASES}/namespaces/${ns}/leases$`)).some((e) => e.path.includes('watch=true') && e.path.includes(doomed)));
        assert.equal(await k.ok(['delete', 'lease', doomed]), `lease.coordination.orch.io "${doomed}" deleted\n`);
        const r = await done;
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`lease.coordination.orch.io/${doomed} condition met`));
        assert.equal((await api(server, 'GET', leasePath(doomed))).status, 404);
      });

      test('delete a node and the namespace with its leases', async () => {
        assert.equal(await k.ok(['delete', 'node', node, `${tag}-waiting`]), `node "${node}" deleted\nnode "${tag}-waiting" deleted\n`);
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${node}`)).status, 404);
        assert.match(await k.ok(['delete', 'namespace', ns]), new RegExp(`namespace "${ns}" deleted`));
        assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}`)).status, 404);
        assert.equal((await api(server, 'GET', `${LEASES}/namespaces/${ns}/leases`)).body.items.length, 0);
        const missing = await k.fails(['get', 'lease', lease]);
        assert.match(missing.stderr, /NotFound|not found/);
      });
    });
  }
});
