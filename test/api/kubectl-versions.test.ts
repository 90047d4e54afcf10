// Unmodified kubectl, old and new, against the kubernetes naming profile: Debian's kubectl 1.20
// (OpenAPI v2 as protobuf, client-side validation) and the newest kubectl on this machine (see
// test/support/kubectl.ts). The same suite runs with each: tables, watch, typed commands that speak
// protobuf, manifests, server-side apply, patches, explain, raw reads and namespace deletion.
//
// kubectl talks to the server through a recording proxy, so the suite also shows which media
// types each kubectl really used: the newest kubectl's typed commands (create namespace, cordon)
// send and accept protobuf, kubectl 1.20 reads /openapi/v2 as protobuf; `get --raw` always asks
// for JSON (`Accept: application/json, */*`, and no flag changes that).

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { api, testServer, waitFor } from '../support/server.ts';
import { kubectl120, kubectlFor, newestKubectl, tableRows } from '../support/kubectl.ts';
import { recordingProxy } from '../support/recording-proxy.ts';

const server = await testServer({ naming: 'kubernetes' });
const PB = 'application/vnd.kubernetes.protobuf';
const OPENAPI_V2_PB = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

// The two kubectl builds run side by side: each has its own namespace, proxy and node names, and
// most of each suite's time is kubectl starting and waiting on the server.
describe('kubectl 1.20 and the newest kubectl', { concurrency: true }, () => {
  for (const [label, bin] of [['kubectl 1.20', kubectl120()], ['the newest kubectl', newestKubectl()]] as const) {
    describe(`${label}, kubernetes profile`, { concurrency: false }, async () => {
      const proxy = await recordingProxy(server.url);
      after(() => proxy.close());
      const tag = label === 'kubectl 1.20' ? 'v120' : 'newest';
      // Newer kubectl's typed commands speak protobuf; 1.20 uses protobuf only for /openapi/v2.
      const typedProtobuf = tag === 'newest';
      const ns = `kv-${tag}`;
      const k = kubectlFor(proxy, { bin, namespace: ns, label: `kubectl-${tag}` });
      const exchanges = proxy.exchanges;

      test('create namespace: a protobuf body, a protobuf answer', async (t) => {
        t.diagnostic(`${k.bin}: ${k.version}`);
        assert.equal(await k.ok(['create', 'namespace', ns]), `namespace/${ns} created\n`);
        const [post] = exchanges('POST', /^\/api\/v1\/namespaces$/);
        assert.ok(post, 'kubectl posted the namespace');
        assert.equal(post.status, 201);
        if (typedProtobuf) {
          assert.equal(post.contentType, PB);
          assert.equal(post.responseType, PB);
        } else {
          // kubectl 1.20 sends JSON without a Content-Type, which kube-apiserver reads as JSON.
          assert.equal(post.contentType, '');
          assert.equal(post.responseType, 'application/json');
        }
        const got = JSON.parse(await k.ok(['get', 'namespace', ns, '-o', 'json']));
        assert.equal(got.status.phase, 'Active');
        assert.deepEqual(got.spec.finalizers, ['kubernetes']);
        assert.equal(got.metadata.labels['kubernetes.io/metadata.name'], ns);
      });

      test('create -f a manifest (a Node and a Lease), get -o yaml / jsonpath', async () => {
        const file = k.file(
          'objects.yaml',
          [
            'apiVersion: v1',
            'kind: Node',
            `metadata: {name: ${tag}-node, labels: {node-role.kubernetes.io/worker: ""}}`,
            'status:',
            '  addresses: [{type: InternalIP, address: 10.1.2.3}]',
            '  nodeInfo: {kubeletVersion: v1.36.0, osImage: Debian GNU/Linux 12, kernelVersion: 6.1.0, containerRuntimeVersion: "containerd://2.0.0",',
            '    machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}',
            '  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ready}]',
            '---',
            'apiVersion: coordination.k8s.io/v1',
            'kind: Lease',
            `metadata: {name: ${tag}-lease, labels: {app: demo}}`,
            'spec: {holderIdentity: first, leaseDurationSeconds: 15}',
            '',
          ].join('\n'),
        );
        const out = await k.ok(['create', '-f', file]);
        assert.match(out, new RegExp(`^node/${tag}-node created$`, 'm'));
        assert.match(out, new RegExp(`^lease.coordination.k8s.io/${tag}-lease created$`, 'm'));
        const yaml = parseYaml(await k.ok(['get', 'lease', `${tag}-lease`, '-o', 'yaml']));
        const stored = (await api(server, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-lease`)).body;
        // kubectl ≥ 1.21 leaves managedFields out unless --show-managed-fields.
        if (!yaml.metadata.managedFields) delete stored.metadata.managedFields;
        assert.deepEqual(yaml, stored);
        assert.equal(await k.ok(['get', 'lease', `${tag}-lease`, '-o', 'jsonpath={.spec.holderIdentity}']), 'first');
      });

      test('get nodes -o wide and get leases print the server columns', async () => {
        const wide = tableRows(await k.ok(['get', 'nodes', '-o', 'wide']));
        assert.deepEqual(wide[0], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
        const row = wide.find((r) => r[0] === `${tag}-node`);
        assert.ok(row, `a row for ${tag}-node`);
        assert.deepEqual([row[1], row[2], row[4], ...row.slice(5)], ['Ready', 'worker', 'v1.36.0', '10.1.2.3', '<none>', 'Debian GNU/Linux 12', '6.1.0', 'containerd://2.0.0']);
        const leases = tableRows(await k.ok(['get', 'leases']));
        assert.deepEqual(leases[0], ['NAME', 'HOLDER', 'AGE']);
        assert.deepEqual(leases[1]!.slice(0, 2), [`${tag}-lease`, 'first']);
        assert.ok(exchanges('GET', /^\/api\/v1\/nodes$/).some((e) => e.accept.includes('as=Table;v=v1;g=meta.k8s.io') && e.responseType.startsWith('application/json')));
      });

      test('cordon and uncordon (typed client: a strategic merge patch)', async () => {
        assert.match(await k.ok(['cordon', `${tag}-node`]), new RegExp(`node/${tag}-node cordoned`));
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${tag}-node`)).body.spec.unschedulable, true);
        assert.deepEqual(tableRows(await k.ok(['get', 'node', `${tag}-node`]))[1]![1], 'Ready,SchedulingDisabled');
        assert.match(await k.ok(['uncordon', `${tag}-node`]), new RegExp(`node/${tag}-node uncordoned`));
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${tag}-node`)).body.spec.unschedulable, undefined);
        const patches = exchanges('PATCH', new RegExp(`^/api/v1/nodes/${tag}-node$`));
        assert.equal(patches.length, 2);
        for (const p of patches) {
          assert.equal(p.contentType, 'application/strategic-merge-patch+json');
          assert.equal(p.status, 200);
          // Each answer is in the first type kubectl accepts (protobuf for the newer typed clients).
          assert.equal(p.responseType, p.accept.startsWith(PB) ? PB : 'application/json', `${p.accept} → ${p.responseType}`);
        }
      });

      test('get leases -w --output-watch-events: a new lease and its deletion arrive', async () => {
        const child = k.spawn(['get', 'leases', '-w', '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name} {.object.spec.holderIdentity}{"\\n"}']);
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        try {
          await waitFor(`the first event (stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)})`, () => out.includes(`ADDED ${tag}-lease first`));
          assert.equal((await api(server, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { metadata: { name: `${tag}-watched` }, spec: { holderIdentity: 'w' } })).status, 201);
          await waitFor(`the new lease (stdout ${JSON.stringify(out)})`, () => out.includes(`ADDED ${tag}-watched w`));
          assert.equal((await api(server, 'DELETE', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-watched`)).status, 200);
          await waitFor(`the deletion (stdout ${JSON.stringify(out)})`, () => out.includes(`DELETED ${tag}-watched w`));
        } finally {
          child.kill();
          await exited;
        }
      });

      test('get leases -w prints table rows as they change (a Table watch)', async () => {
        const child = k.spawn(['get', 'leases', '-w']);
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        const rows = () => tableRows(out);
        try {
          await waitFor(`the header and the first row (stdout ${JSON.stringify(out)})`, () => rows().some((r) => r[0] === `${tag}-lease`));
          assert.deepEqual(rows()[0], ['NAME', 'HOLDER', 'AGE']);
          assert.equal((await api(server, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { metadata: { name: `${tag}-rows` }, spec: { holderIdentity: 'r1' } })).status, 201);
          await waitFor(`the new row (stdout ${JSON.stringify(out)})`, () => rows().some((r) => r[0] === `${tag}-rows` && r[1] === 'r1'));
          const patched = await api(server, 'PATCH', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-rows`, { spec: { holderIdentity: 'r2' } }, { 'Content-Type': 'application/merge-patch+json' });
          assert.equal(patched.status, 200);
          await waitFor(`the changed row (stdout ${JSON.stringify(out)})`, () => rows().some((r) => r[0] === `${tag}-rows` && r[1] === 'r2'));
          // One header: later rows come without the column definitions, as from kube-apiserver.
          assert.equal(rows().filter((r) => r[0] === 'NAME').length, 1);
          assert.equal((await api(server, 'DELETE', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-rows`)).status, 200);
        } finally {
          child.kill();
          await exited;
        }
        const watches = exchanges('GET', new RegExp(`^/apis/coordination.k8s.io/v1/namespaces/${ns}/leases$`)).filter((e) => e.path.includes('watch=true'));
        assert.ok(watches.some((e) => e.accept.includes('as=Table') && e.responseType.startsWith('application/json')), JSON.stringify(watches));
      });

      test('apply --server-side, label, annotate, patch, replace', async () => {
        const intent = JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `${tag}-applied` }, spec: { holderIdentity: 'ssa', leaseDurationSeconds: 20 } });
        assert.match(await k.ok(['apply', '--server-side', '-f', '-'], intent), /serverside-applied/);
        const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-applied`;
        const applied = (await api(server, 'GET', path)).body;
        assert.deepEqual(
          applied.metadata.managedFields.map((e: { manager: string; operation: string }) => [e.manager, e.operation]),
          [['kubectl', 'Apply']],
        );
        await k.ok(['label', 'lease', `${tag}-applied`, 'tier=gold']);
        await k.ok(['annotate', 'lease', `${tag}-applied`, 'note=hello']);
        await k.ok(['patch', 'lease', `${tag}-applied`, '--type=merge', '-p', '{"spec":{"leaseTransitions":3}}']);
        const patched = (await api(server, 'GET', path)).body;
        assert.equal(patched.metadata.labels.tier, 'gold');
        assert.equal(patched.metadata.annotations.note, 'hello');
        assert.equal(patched.spec.leaseTransitions, 3);
        assert.equal(patched.spec.holderIdentity, 'ssa');
        const replaced = { ...patched, spec: { ...patched.spec, holderIdentity: 'replaced' } };
        await k.ok(['replace', '-f', '-'], JSON.stringify(replaced));
        assert.equal((await api(server, 'GET', path)).body.spec.holderIdentity, 'replaced');
        const stale = await k.fails(['replace', '-f', '-'], JSON.stringify(replaced));
        assert.match(stale.stderr, /Conflict|the object has been modified/);
      });

      test('explain, api-resources and get --raw', async () => {
        const explained = await k.ok(['explain', 'lease.spec']);
        assert.match(explained, /holderIdentity\s+<string>/);
        const resources = tableRows(await k.ok(['api-resources', '--api-group=coordination.k8s.io']));
        assert.deepEqual(resources[0], ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
        assert.ok(resources.some((r) => r.join(' ') === 'leases coordination.k8s.io/v1 true Lease'), JSON.stringify(resources));
        const raw = JSON.parse(await k.ok(['get', '--raw', `/api/v1/namespaces/${ns}`]));
        assert.equal(raw.metadata.name, ns);
        const rawGet = exchanges('GET', new RegExp(`^/api/v1/namespaces/${ns}$`)).at(-1);
        assert.equal(rawGet?.responseType, 'application/json');
      });

      test('delete a lease, then the namespace: its content goes with it', async () => {
        assert.match(await k.ok(['delete', 'lease', `${tag}-applied`]), /deleted/);
        assert.equal((await api(server, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${tag}-applied`)).status, 404);
        assert.match(await k.ok(['delete', 'namespace', ns]), new RegExp(`namespace "${ns}" deleted`));
        assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}`)).status, 404);
        assert.equal((await api(server, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`)).body.items.length, 0);
        const missing = await k.fails(['get', 'namespace', ns]);
        assert.match(missing.stderr, new RegExp(`namespaces "${ns}" not found`));
        const protobufAnswers = proxy.log.filter((e) => e.responseType === PB || e.responseType === OPENAPI_V2_PB).map((e) => `${e.method} ${e.path.split('?')[0]}`);
        if (typedProtobuf) assert.ok(protobufAnswers.includes('POST /api/v1/namespaces'), JSON.stringify(protobufAnswers));
        else assert.deepEqual([...new Set(protobufAnswers)], ['GET /openapi/v2']);
      });
    });
  }
});
