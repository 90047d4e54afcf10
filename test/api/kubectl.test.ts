// The real kubectl against an in-process server: reads, writes, apply, patch, watch, discovery,
// health and errors. Every write is checked again over plain HTTP, independently of kubectl.
//
// The newest kubectl this machine has (test/support/kubectl.ts picks it: KUBECTL if set, otherwise
// the newest of `kubectl` on PATH and the versioned binaries beside it; scripts/test-setup.sh
// installs Debian's kubernetes-client when kubectl is missing). kubectl runs with its own
// kubeconfig and HOME in a throw-away directory, so the user's ~/.kube is never read or written.
//
// Client versions: written against kubectl 1.32; passes with 1.32 and 1.33. `patch --subresource` needs
// kubectl ≥ 1.24. kubectl < 1.27 (Debian bookworm's kubernetes-client is 1.20) downloads
// /openapi/v2 as protobuf for create/apply/replace/explain; test/api/openapi.test.ts drives that kubectl.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { testServer, waitFor } from '../support/server.ts';
import { kubectlFor } from '../support/kubectl.ts';

// ---------------------------------------------------------------------------------------------
// kubectl and a server

const server = await testServer();
const k = kubectlFor(server, { label: 'kubectl', namespace: 'default', timeoutMs: 30_000 });
const kubectl = (args: readonly string[], input?: string) => k.run(args, input);
/** Run kubectl, assert it succeeded, return its stdout. */
const ok = (args: readonly string[], input?: string) => k.ok(args, input);
/** Run kubectl, assert it failed, return the run. */
const fails = (args: readonly string[], input?: string) => k.fails(args, input);

const lines = (s: string): string[] => s.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');

// ---------------------------------------------------------------------------------------------
// The server over plain HTTP

interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  managedFields?: unknown[];
}

interface KObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

interface KList {
  kind: string;
  metadata: { resourceVersion?: string };
  items: KObject[];
}

interface Reply {
  status: number;
  text: string;
  json: unknown;
}

async function http(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

const LEASES = '/apis/coordination.orch.io/v1';
const leasePath = (ns: string, name = ''): string => `${LEASES}/namespaces/${ns}/leases${name ? `/${name}` : ''}`;
const nodePath = (name = ''): string => `/api/v1/nodes${name ? `/${name}` : ''}`;
const nsPath = (name = ''): string => `/api/v1/namespaces${name ? `/${name}` : ''}`;

/** The object at path, or undefined on 404. */
async function fetchObject(path: string): Promise<KObject | undefined> {
  const r = await http('GET', path);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, `GET ${path}: ${r.text}`);
  return r.json as KObject;
}

async function mustFetch(path: string): Promise<KObject> {
  const o = await fetchObject(path);
  assert.ok(o, `GET ${path}: expected the object to exist`);
  return o;
}

async function fetchList(path: string): Promise<KList> {
  const r = await http('GET', path);
  assert.equal(r.status, 200, `GET ${path}: ${r.text}`);
  return r.json as KList;
}

async function createOver(path: string, obj: unknown): Promise<KObject> {
  const r = await http('POST', path, obj);
  assert.equal(r.status, 201, `POST ${path}: ${r.text}`);
  return r.json as KObject;
}

const lease = (name: string, ns = 'default', spec: Record<string, unknown> = { holderIdentity: 'h0' }, labels?: Record<string, string>) => ({
  apiVersion: 'coordination.orch.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  spec,
});
const node = (name: string, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, ...(labels ? { labels } : {}) } });
const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

// ---------------------------------------------------------------------------------------------
// Reads

test('kubectl get ns lists the system namespaces', async () => {
  const out = lines(await ok(['get', 'ns']));
  // The server's columns: kubectl asks for a meta.k8s.io Table, which every profile answers.
  assert.match(out[0]!, /^NAME\s+STATUS\s+AGE$/);
  const names = out.slice(1).map((l) => l.split(/\s+/)[0]);
  for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) assert.ok(names.includes(ns), `${ns} in ${out.join(' | ')}`);

  const byName = lines(await ok(['get', 'namespaces', '-o', 'name'])).sort();
  const fromServer = (await fetchList(nsPath())).items.map((n) => `namespace/${n.metadata.name}`).sort();
  assert.deepEqual(byName, fromServer);
});

test('kubectl get nodes (and the short name no, and -l)', async () => {
  const empty = await kubectl(['get', 'nodes']);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout, '');
  assert.match(empty.stderr, /No resources found/);

  await createOver(nodePath(), node('kc-get-a', { pool: 'blue' }));
  await createOver(nodePath(), node('kc-get-b', { pool: 'green' }));
  const out = lines(await ok(['get', 'nodes']));
  assert.match(out[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
  assert.deepEqual(out.slice(1).map((l) => l.split(/\s+/)[0]).sort(), ['kc-get-a', 'kc-get-b']);

  const fromServer = (await fetchList(nodePath())).items.map((n) => `node/${n.metadata.name}`).sort();
  assert.deepEqual(lines(await ok(['get', 'no', '-o', 'name'])).sort(), fromServer);
  assert.deepEqual(lines(await ok(['get', 'nodes', '-l', 'pool=green', '-o', 'name'])), ['node/kc-get-b']);
  assert.deepEqual(lines(await ok(['get', 'nodes', '-l', 'pool in (blue,green),pool!=green', '-o', 'name'])), ['node/kc-get-a']);
});

test('kubectl get leases -A lists leases of every namespace', async () => {
  await createOver(leasePath('default'), lease('kc-all-1'));
  await createOver(leasePath('orch-node-lease'), lease('kc-all-2', 'orch-node-lease'));
  const out = lines(await ok(['get', 'leases', '-A']));
  assert.match(out[0]!, /^NAMESPACE\s+NAME\s+HOLDER\s+AGE$/);
  const rows = out.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join('/'));
  assert.ok(rows.includes('default/kc-all-1'), out.join('\n'));
  assert.ok(rows.includes('orch-node-lease/kc-all-2'), out.join('\n'));

  const listed = lines(await ok(['get', 'leases', '--all-namespaces', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}'])).sort();
  const fromServer = (await fetchList(`${LEASES}/leases`)).items.map((l) => `${l.metadata.namespace}/${l.metadata.name}`).sort();
  assert.deepEqual(listed, fromServer);

  // Without -A: only the context's namespace.
  assert.ok(!lines(await ok(['get', 'leases', '-o', 'name'])).includes('lease.coordination.orch.io/kc-all-2'));
  assert.deepEqual(lines(await ok(['get', 'leases', '-n', 'orch-node-lease', '-o', 'name'])), ['lease.coordination.orch.io/kc-all-2']);
});

test('kubectl get lease X -o yaml / -o json / -o jsonpath match the stored object', async () => {
  await createOver(leasePath('default'), lease('kc-out', 'default', { holderIdentity: 'alice', leaseDurationSeconds: 15, leaseTransitions: 2 }, { app: 'out' }));
  const stored = await mustFetch(leasePath('default', 'kc-out'));
  assert.ok(stored.metadata.managedFields?.length, 'the server records managedFields');
  // kubectl hides managedFields unless --show-managed-fields.
  const { managedFields: _mf, ...visibleMeta } = stored.metadata;
  const visible = { ...stored, metadata: visibleMeta };

  const y = parseYaml(await ok(['get', 'lease', 'kc-out', '-o', 'yaml'])) as KObject;
  assert.deepEqual(y, visible);
  const j = JSON.parse(await ok(['get', 'lease', 'kc-out', '-o', 'json'])) as KObject;
  assert.deepEqual(j, visible);
  const shown = JSON.parse(await ok(['get', 'lease', 'kc-out', '-o', 'json', '--show-managed-fields'])) as KObject;
  assert.deepEqual(shown, stored);
  assert.equal(j.apiVersion, 'coordination.orch.io/v1');
  assert.equal(j.kind, 'Lease');

  assert.equal(await ok(['get', 'lease', 'kc-out', '-o', 'jsonpath={.spec.holderIdentity}']), 'alice');
  assert.equal(
    await ok(['get', 'lease', 'kc-out', '-o', 'jsonpath={.metadata.uid} {.metadata.resourceVersion} {.spec.leaseDurationSeconds}']),
    `${stored.metadata.uid} ${stored.metadata.resourceVersion} 15`,
  );
  assert.equal(await ok(['get', 'leases.coordination.orch.io', 'kc-out', '-o', 'name']), 'lease.coordination.orch.io/kc-out\n');
});

// ---------------------------------------------------------------------------------------------
// create, apply, replace

test('kubectl create -f: a YAML file with a Lease and a Node', async () => {
  const file = k.file(
    'create.yaml',
    `apiVersion: coordination.orch.io/v1
kind: Lease
metadata:
  name: kc-created
  namespace: default
  labels: {made-by: kubectl}
spec:
  holderIdentity: creator
  leaseDurationSeconds: 30
---
apiVersion: v1
kind: Node
metadata:
  name: kc-created-node
  labels: {role: worker}
spec:
  podCIDR: 10.1.0.0/24
  taints:
  - key: dedicated
    value: infra
    effect: NoSchedule
`,
  );
  const out = lines(await ok(['create', '-f', file]));
  assert.deepEqual(out, ['lease.coordination.orch.io/kc-created created', 'node/kc-created-node created']);

  const l = await mustFetch(leasePath('default', 'kc-created'));
  assert.deepEqual(l.spec, { holderIdentity: 'creator', leaseDurationSeconds: 30 });
  assert.deepEqual(l.metadata.labels, { 'made-by': 'kubectl' });
  assert.ok(l.metadata.uid && l.metadata.resourceVersion && l.metadata.creationTimestamp);
  const n = await mustFetch(nodePath('kc-created-node'));
  // podCIDRs mirrors podCIDR, as Kubernetes keeps the two.
  assert.deepEqual(n.spec, { podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'], taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] });
  assert.deepEqual(n.metadata.labels, { role: 'worker' });

  // Again: both exist.
  const again = await fails(['create', '-f', file]);
  assert.match(again.stderr, /Error from server \(AlreadyExists\).*leases\.coordination\.orch\.io "kc-created" already exists/);
  assert.match(again.stderr, /Error from server \(AlreadyExists\).*nodes "kc-created-node" already exists/);

  // From stdin.
  assert.equal(await ok(['create', '-f', '-'], JSON.stringify(lease('kc-created-stdin'))), 'lease.coordination.orch.io/kc-created-stdin created\n');
  assert.ok(await fetchObject(leasePath('default', 'kc-created-stdin')));
});

test('kubectl create -f keeps the status of a Node (Nodes may set status on create, as the kubelet does)', async () => {
  const file = k.file(
    'node-status.yaml',
    `apiVersion: v1
kind: Node
metadata:
  name: kc-node-with-status
status:
  capacity: {cpu: "4", memory: 8Gi}
  conditions:
  - type: Ready
    status: "True"
    reason: KubeletReady
`,
  );
  assert.equal(await ok(['create', '-f', file]), 'node/kc-node-with-status created\n');
  const n = await mustFetch(nodePath('kc-node-with-status'));
  assert.deepEqual(n.status?.capacity, { cpu: '4', memory: '8Gi' });
});

test('kubectl create -f --dry-run=server stores nothing', async () => {
  const file = k.file('dry.yaml', JSON.stringify(lease('kc-dry', 'default', { holderIdentity: 'ghost' })));
  const before = (await fetchList(leasePath('default'))).items.length;
  const out = JSON.parse(await ok(['create', '-f', file, '--dry-run=server', '-o', 'json'])) as KObject;
  assert.equal(out.metadata.name, 'kc-dry');
  assert.equal(out.spec?.holderIdentity, 'ghost');
  assert.ok(out.metadata.creationTimestamp, 'a dry run returns the object as it would be stored');
  assert.equal(await fetchObject(leasePath('default', 'kc-dry')), undefined);
  assert.equal((await fetchList(leasePath('default'))).items.length, before);

  const plain = await ok(['create', '-f', file, '--dry-run=server']);
  assert.equal(plain, 'lease.coordination.orch.io/kc-dry created (server dry run)\n');
  assert.equal(await fetchObject(leasePath('default', 'kc-dry')), undefined);
});

test('kubectl apply -f (client-side): create, configure, unchanged, then drop a field', async () => {
  const doc = (spec: string) => `apiVersion: coordination.orch.io/v1
kind: Lease
metadata:
  name: kc-applied
  namespace: default
spec:
${spec}`;
  const file = k.file('apply.yaml', doc('  holderIdentity: bob\n  leaseDurationSeconds: 10\n'));
  assert.equal(await ok(['apply', '-f', file]), 'lease.coordination.orch.io/kc-applied created\n');
  const first = await mustFetch(leasePath('default', 'kc-applied'));
  assert.deepEqual(first.spec, { holderIdentity: 'bob', leaseDurationSeconds: 10 });
  const lastApplied = first.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
  assert.ok(lastApplied, 'apply records the last-applied-configuration annotation');
  assert.deepEqual((JSON.parse(lastApplied) as KObject).spec, { holderIdentity: 'bob', leaseDurationSeconds: 10 });

  k.file('apply.yaml', doc('  holderIdentity: carol\n  leaseDurationSeconds: 10\n'));
  assert.equal(await ok(['apply', '-f', file]), 'lease.coordination.orch.io/kc-applied configured\n');
  const second = await mustFetch(leasePath('default', 'kc-applied'));
  assert.deepEqual(second.spec, { holderIdentity: 'carol', leaseDurationSeconds: 10 });
  assert.equal(second.metadata.uid, first.metadata.uid);
  assert.notEqual(second.metadata.resourceVersion, first.metadata.resourceVersion);

  assert.equal(await ok(['apply', '-f', file]), 'lease.coordination.orch.io/kc-applied unchanged\n');
  const third = await mustFetch(leasePath('default', 'kc-applied'));
  assert.equal(third.metadata.resourceVersion, second.metadata.resourceVersion, 'an unchanged apply writes nothing');

  // A field that was applied before and is no longer in the file is removed (three-way merge).
  k.file('apply.yaml', doc('  holderIdentity: carol\n'));
  assert.equal(await ok(['apply', '-f', file]), 'lease.coordination.orch.io/kc-applied configured\n');
  assert.deepEqual((await mustFetch(leasePath('default', 'kc-applied'))).spec, { holderIdentity: 'carol' });

  // A server-side dry run of an apply changes nothing.
  k.file('apply.yaml', doc('  holderIdentity: dry\n'));
  assert.match(await ok(['apply', '-f', file, '--dry-run=server']), /kc-applied configured \(server dry run\)/);
  assert.equal((await mustFetch(leasePath('default', 'kc-applied'))).spec?.holderIdentity, 'carol');
});

test('kubectl replace -f: replaces, and a stale resourceVersion is a Conflict', async () => {
  await createOver(leasePath('default'), lease('kc-replaced', 'default', { holderIdentity: 'one', leaseDurationSeconds: 5 }));
  const current = JSON.parse(await ok(['get', 'lease', 'kc-replaced', '-o', 'json'])) as KObject;
  const file = k.file('replace.json', JSON.stringify({ ...current, spec: { holderIdentity: 'two' } }));
  assert.equal(await ok(['replace', '-f', file]), 'lease.coordination.orch.io/kc-replaced replaced\n');
  const after = await mustFetch(leasePath('default', 'kc-replaced'));
  assert.deepEqual(after.spec, { holderIdentity: 'two' }, 'replace drops what the new object leaves out');
  assert.equal(after.metadata.uid, current.metadata.uid);

  // The same file again carries the old resourceVersion.
  const stale = await fails(['replace', '-f', file]);
  assert.match(stale.stderr, /Error from server \(Conflict\).*the object has been modified/);
  assert.deepEqual((await mustFetch(leasePath('default', 'kc-replaced'))).spec, { holderIdentity: 'two' });

  // Without a resourceVersion it is unconditional.
  const { resourceVersion: _rv, ...meta } = after.metadata;
  k.file('replace.json', JSON.stringify({ ...after, metadata: meta, spec: { holderIdentity: 'three' } }));
  assert.equal(await ok(['replace', '-f', file]), 'lease.coordination.orch.io/kc-replaced replaced\n');
  assert.equal((await mustFetch(leasePath('default', 'kc-replaced'))).spec?.holderIdentity, 'three');
});

// ---------------------------------------------------------------------------------------------
// label, annotate, patch

test('kubectl label: add, refuse to overwrite, --overwrite, remove with key-', async () => {
  await createOver(leasePath('default'), lease('kc-labelled', 'default', { holderIdentity: 'x' }, { app: 'demo' }));
  const labels = async () => (await mustFetch(leasePath('default', 'kc-labelled'))).metadata.labels;

  assert.equal(await ok(['label', 'lease', 'kc-labelled', 'tier=gold']), 'lease.coordination.orch.io/kc-labelled labeled\n');
  assert.deepEqual(await labels(), { app: 'demo', tier: 'gold' });

  const refused = await fails(['label', 'lease', 'kc-labelled', 'tier=silver']);
  assert.match(refused.stderr, /'tier' already has a value \(gold\), and --overwrite is false/);
  assert.deepEqual(await labels(), { app: 'demo', tier: 'gold' });

  assert.equal(await ok(['label', 'lease', 'kc-labelled', 'tier=silver', '--overwrite']), 'lease.coordination.orch.io/kc-labelled labeled\n');
  assert.deepEqual(await labels(), { app: 'demo', tier: 'silver' });

  // kubectl ≥ 1.22 says "unlabeled", older ones "labeled".
  assert.match(await ok(['label', 'lease', 'kc-labelled', 'tier-']), /^lease\.coordination\.orch\.io\/kc-labelled (un)?labeled\n$/);
  assert.deepEqual(await labels(), { app: 'demo' });

  // On a cluster-scoped object, and several at once.
  await createOver(nodePath(), node('kc-labelled-node'));
  assert.equal(await ok(['label', 'node', 'kc-labelled-node', 'a=1', 'b=2']), 'node/kc-labelled-node labeled\n');
  assert.deepEqual((await mustFetch(nodePath('kc-labelled-node'))).metadata.labels, { a: '1', b: '2' });
  assert.deepEqual(lines(await ok(['get', 'nodes', '-l', 'a=1,b=2', '-o', 'name'])), ['node/kc-labelled-node']);
});

test('kubectl annotate: add, --overwrite, remove', async () => {
  await createOver(leasePath('default'), lease('kc-annotated'));
  const annotations = async () => (await mustFetch(leasePath('default', 'kc-annotated'))).metadata.annotations;

  assert.equal(await ok(['annotate', 'lease', 'kc-annotated', 'note=hello', 'owner=team-a']), 'lease.coordination.orch.io/kc-annotated annotated\n');
  assert.deepEqual(await annotations(), { note: 'hello', owner: 'team-a' });

  const refused = await fails(['annotate', 'lease', 'kc-annotated', 'note=bye']);
  assert.match(refused.stderr, /--overwrite is false/);
  assert.match(refused.stderr, /'note' already has a value \(hello\)/);

  assert.equal(await ok(['annotate', 'lease', 'kc-annotated', 'note=bye', '--overwrite']), 'lease.coordination.orch.io/kc-annotated annotated\n');
  assert.deepEqual(await annotations(), { note: 'bye', owner: 'team-a' });

  assert.equal(await ok(['annotate', 'lease', 'kc-annotated', 'note-']), 'lease.coordination.orch.io/kc-annotated annotated\n');
  assert.deepEqual(await annotations(), { owner: 'team-a' });
});

test('removing the last label or annotation leaves no empty map behind (as Kubernetes omits empty maps)', async () => {
  await createOver(leasePath('default'), lease('kc-emptied', 'default', { holderIdentity: 'x' }, { only: 'one' }));
  await ok(['annotate', 'lease', 'kc-emptied', 'solo=yes']);
  await ok(['label', 'lease', 'kc-emptied', 'only-']);
  await ok(['annotate', 'lease', 'kc-emptied', 'solo-']);
  const meta = (await mustFetch(leasePath('default', 'kc-emptied'))).metadata;
  assert.equal(meta.labels, undefined, `metadata.labels should be omitted, got ${JSON.stringify(meta.labels)}`);
  assert.equal(meta.annotations, undefined, `metadata.annotations should be omitted, got ${JSON.stringify(meta.annotations)}`);
  assert.equal(await ok(['get', 'lease', 'kc-emptied', '-o', 'jsonpath={.metadata.labels}']), '');
});

test('kubectl patch --type=json and --type=merge on a Lease', async () => {
  await createOver(leasePath('default'), lease('kc-patched', 'default', { holderIdentity: 'a', leaseDurationSeconds: 10 }));
  const spec = async () => (await mustFetch(leasePath('default', 'kc-patched'))).spec;

  const jsonPatch = JSON.stringify([
    { op: 'replace', path: '/spec/holderIdentity', value: 'b' },
    { op: 'add', path: '/spec/leaseTransitions', value: 3 },
    { op: 'remove', path: '/spec/leaseDurationSeconds' },
  ]);
  assert.equal(await ok(['patch', 'lease', 'kc-patched', '--type=json', '-p', jsonPatch]), 'lease.coordination.orch.io/kc-patched patched\n');
  assert.deepEqual(await spec(), { holderIdentity: 'b', leaseTransitions: 3 });

  // A failed test operation rejects the whole patch.
  const failed = await fails(['patch', 'lease', 'kc-patched', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/holderIdentity', value: 'z' }, { op: 'test', path: '/spec/leaseTransitions', value: 4 }])]);
  // kubectl ≥ 1.21 prints the server's message; older ones only "The request is invalid".
  assert.match(failed.stderr, /testing value \/spec\/leaseTransitions failed|^The request is invalid$/m);
  assert.deepEqual(await spec(), { holderIdentity: 'b', leaseTransitions: 3 });

  assert.equal(
    await ok(['patch', 'lease', 'kc-patched', '--type=merge', '-p', '{"spec":{"holderIdentity":"c","leaseTransitions":null,"leaseDurationSeconds":20}}']),
    'lease.coordination.orch.io/kc-patched patched\n',
  );
  assert.deepEqual(await spec(), { holderIdentity: 'c', leaseDurationSeconds: 20 });

  // A schema violation is Invalid and changes nothing.
  const invalid = await fails(['patch', 'lease', 'kc-patched', '--type=merge', '-p', '{"spec":{"leaseDurationSeconds":"long"}}']);
  assert.match(invalid.stderr, /Invalid|invalid/);
  assert.deepEqual(await spec(), { holderIdentity: 'c', leaseDurationSeconds: 20 });

  // Patching what does not exist.
  const missing = await fails(['patch', 'lease', 'kc-never', '--type=merge', '-p', '{"spec":{"holderIdentity":"x"}}']);
  assert.match(missing.stderr, /Error from server \(NotFound\): leases\.coordination\.orch\.io "kc-never" not found/);
});

test('kubectl patch with the default (strategic) type on a Node', async () => {
  await createOver(nodePath(), { ...node('kc-smp'), spec: { podCIDR: '10.2.0.0/24' } });
  const before = await mustFetch(nodePath('kc-smp'));
  assert.equal(await ok(['patch', 'node', 'kc-smp', '-p', '{"spec":{"unschedulable":true},"metadata":{"labels":{"zone":"a"}}}']), 'node/kc-smp patched\n');
  const after = await mustFetch(nodePath('kc-smp'));
  assert.deepEqual(after.spec, { podCIDR: '10.2.0.0/24', podCIDRs: ['10.2.0.0/24'], unschedulable: true });
  assert.deepEqual(after.metadata.labels, { zone: 'a' });
  assert.notEqual(after.metadata.resourceVersion, before.metadata.resourceVersion);

  // The same patch again changes nothing: no write.
  assert.equal(await ok(['patch', 'node', 'kc-smp', '-p', '{"spec":{"unschedulable":true}}']), 'node/kc-smp patched (no change)\n');
  assert.equal((await mustFetch(nodePath('kc-smp'))).metadata.resourceVersion, after.metadata.resourceVersion);

  // The taints list is atomic: the patch's list replaces it.
  await ok(['patch', 'node', 'kc-smp', '-p', '{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}}']);
  await ok(['patch', 'node', 'kc-smp', '-p', '{"spec":{"taints":[{"key":"b","effect":"NoExecute"}]}}']);
  assert.deepEqual((await mustFetch(nodePath('kc-smp'))).spec?.taints, [{ key: 'b', effect: 'NoExecute' }]);

  // A field selector on the node's spec sees the change.
  assert.deepEqual(lines(await ok(['get', 'nodes', '--field-selector', 'spec.unschedulable=true', '-o', 'name'])), ['node/kc-smp']);
});

test('strategic merge patch merges node conditions by type (patchMergeKey), on the status subresource', async () => {
  await createOver(nodePath(), node('kc-smp-status'));
  await ok(['patch', 'node', 'kc-smp-status', '--subresource=status', '-p', '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}']);
  await ok(['patch', 'node', 'kc-smp-status', '--subresource=status', '-p', '{"status":{"conditions":[{"type":"MemoryPressure","status":"False"}]}}']);
  const conditions = ((await mustFetch(nodePath('kc-smp-status'))).status?.conditions ?? []) as { type: string; status: string }[];
  assert.deepEqual(
    conditions.map((c) => `${c.type}=${c.status}`).sort(),
    ['MemoryPressure=False', 'Ready=True'],
    'a strategic patch of a list with patchStrategy=merge, patchMergeKey=type merges the entries instead of replacing the list',
  );
});

// ---------------------------------------------------------------------------------------------
// delete

test('kubectl delete: by name, by -f, by -l', async () => {
  // By name.
  await createOver(leasePath('default'), lease('kc-del-name'));
  assert.equal(await ok(['delete', 'lease', 'kc-del-name']), 'lease.coordination.orch.io "kc-del-name" deleted\n');
  assert.equal(await fetchObject(leasePath('default', 'kc-del-name')), undefined);

  // By file: a Lease and a Node.
  const file = k.file('delete.yaml', `${stringifyYaml(lease('kc-del-file'))}---\n${stringifyYaml(node('kc-del-file-node'))}`);
  assert.deepEqual(lines(await ok(['create', '-f', file])), ['lease.coordination.orch.io/kc-del-file created', 'node/kc-del-file-node created']);
  assert.deepEqual(lines(await ok(['delete', '-f', file])), ['lease.coordination.orch.io "kc-del-file" deleted', 'node "kc-del-file-node" deleted']);
  assert.equal(await fetchObject(leasePath('default', 'kc-del-file')), undefined);
  assert.equal(await fetchObject(nodePath('kc-del-file-node')), undefined);

  // By label selector: only the matching ones go.
  await createOver(leasePath('default'), lease('kc-del-l1', 'default', { holderIdentity: 'x' }, { batch: 'doomed' }));
  await createOver(leasePath('default'), lease('kc-del-l2', 'default', { holderIdentity: 'x' }, { batch: 'doomed' }));
  await createOver(leasePath('default'), lease('kc-del-l3', 'default', { holderIdentity: 'x' }, { batch: 'kept' }));
  assert.deepEqual(lines(await ok(['delete', 'leases', '-l', 'batch=doomed'])).sort(), [
    'lease.coordination.orch.io "kc-del-l1" deleted',
    'lease.coordination.orch.io "kc-del-l2" deleted',
  ]);
  assert.equal(await fetchObject(leasePath('default', 'kc-del-l1')), undefined);
  assert.equal(await fetchObject(leasePath('default', 'kc-del-l2')), undefined);
  assert.ok(await fetchObject(leasePath('default', 'kc-del-l3')));
  const none = await kubectl(['delete', 'leases', '-l', 'batch=doomed']);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout + none.stderr, /No resources found/);

  // Server-side dry run keeps it.
  assert.equal(await ok(['delete', 'lease', 'kc-del-l3', '--dry-run=server']), 'lease.coordination.orch.io "kc-del-l3" deleted (server dry run)\n');
  assert.ok(await fetchObject(leasePath('default', 'kc-del-l3')));

  // Missing: NotFound, unless --ignore-not-found.
  const missing = await fails(['delete', 'lease', 'kc-del-name']);
  assert.match(missing.stderr, /Error from server \(NotFound\): leases\.coordination\.orch\.io "kc-del-name" not found/);
  assert.equal(await ok(['delete', 'lease', 'kc-del-name', '--ignore-not-found']), '');
});

// ---------------------------------------------------------------------------------------------
// namespaces

// `kubectl create namespace <name>` sends a protobuf body spelled `application/vnd.kubernetes.protobuf`
// (kubectl's typed client), accepted in every profile; a namespace from a manifest is JSON.
test('kubectl create namespace, and from a manifest', async () => {
  assert.equal(await ok(['create', 'namespace', 'kc-typed']), 'namespace/kc-typed created\n');
  assert.equal((await mustFetch(nsPath('kc-typed'))).status?.phase, 'Active');
  assert.equal(await ok(['create', '-f', '-'], JSON.stringify(namespace('kc-made'))), 'namespace/kc-made created\n');
  const ns = await mustFetch(nsPath('kc-made'));
  assert.equal(ns.status?.phase, 'Active');
  assert.equal(await ok(['get', 'ns', 'kc-made', '-o', 'jsonpath={.status.phase}']), 'Active');
});

test('kubectl delete namespace waits until it and its contents are gone', async () => {
  await createOver(nsPath(), namespace('kc-doomed'));
  await createOver(leasePath('kc-doomed'), lease('inside', 'kc-doomed'));
  assert.equal(await ok(['get', 'lease', 'inside', '-n', 'kc-doomed', '-o', 'name']), 'lease.coordination.orch.io/inside\n');

  assert.equal(await ok(['delete', 'namespace', 'kc-doomed']), 'namespace "kc-doomed" deleted\n');
  // kubectl returned only once the namespace was gone.
  assert.equal(await fetchObject(nsPath('kc-doomed')), undefined);
  assert.equal(await fetchObject(leasePath('kc-doomed', 'inside')), undefined);
  const gone = await fails(['get', 'ns', 'kc-doomed']);
  assert.match(gone.stderr, /Error from server \(NotFound\): namespaces "kc-doomed" not found/);

  // Creating in a namespace that does not exist.
  const noNs = await fails(['create', '-f', '-'], JSON.stringify(lease('orphan', 'kc-doomed')));
  assert.match(noNs.stderr, /NotFound.*namespaces "kc-doomed" not found/);
});

// ---------------------------------------------------------------------------------------------
// watch

test('kubectl get leases -w --output-watch-events prints changes made over HTTP', async () => {
  await createOver(nsPath(), namespace('kc-watch'));
  await createOver(leasePath('kc-watch'), lease('pre', 'kc-watch', { holderIdentity: 'h0' }));

  const child = k.spawn(['get', 'leases', '-n', 'kc-watch', '-w', '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name} {.object.spec.holderIdentity}{"\\n"}']);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const seen = (line: string) => () => out.split('\n').includes(line);
  try {
    await waitFor(`the initial "ADDED pre h0" (stdout: ${JSON.stringify(out)}, stderr: ${JSON.stringify(err)})`, seen('ADDED pre h0'));

    await createOver(leasePath('kc-watch'), lease('w1', 'kc-watch', { holderIdentity: 'x' }));
    const patched = await http('PATCH', leasePath('kc-watch', 'w1'), { spec: { holderIdentity: 'y' } }, 'application/merge-patch+json');
    assert.equal(patched.status, 200, patched.text);
    const deleted = await http('DELETE', leasePath('kc-watch', 'w1'));
    assert.equal(deleted.status, 200, deleted.text);

    await waitFor(`DELETED w1 (stdout: ${JSON.stringify(out)}, stderr: ${JSON.stringify(err)})`, seen('DELETED w1 y'));
    assert.deepEqual(lines(out), ['ADDED pre h0', 'ADDED w1 x', 'MODIFIED w1 y', 'DELETED w1 y']);
    assert.equal(child.exitCode, null, 'the watch is still running');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  }
});

test('kubectl get -w --watch-only -o name sees only new changes', async () => {
  await createOver(leasePath('kc-watch'), lease('old', 'kc-watch'));
  const child = k.spawn(['get', 'leases', '-n', 'kc-watch', '--watch-only', '-o', 'name']);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  try {
    // Nothing tells when the watch is established; keep creating until one shows up.
    let i = 0;
    await waitFor(`a watched create (stdout: ${JSON.stringify(out)})`, async () => {
      if (out.includes('lease.coordination.orch.io/new-')) return true;
      await createOver(leasePath('kc-watch'), lease(`new-${i++}`, 'kc-watch'));
      await new Promise((r) => setTimeout(r, 200));
      return out.includes('lease.coordination.orch.io/new-');
    });
    assert.ok(!out.includes('lease.coordination.orch.io/old'), out);
    assert.ok(!out.includes('lease.coordination.orch.io/pre'), out);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  }
});

// ---------------------------------------------------------------------------------------------
// health, discovery, explain, version

test('kubectl get --raw /readyz?verbose and /livez', async () => {
  const ready = lines(await ok(['get', '--raw', '/readyz?verbose']));
  assert.equal(ready.at(-1), 'readyz check passed');
  const checks = ready.slice(0, -1);
  assert.ok(checks.length >= 2, ready.join('\n'));
  for (const l of checks) assert.match(l, /^\[\+\]\S+ ok$/);
  assert.ok(checks.includes('[+]ping ok'), ready.join('\n'));

  assert.equal(await ok(['get', '--raw', '/livez']), 'ok');
  const live = lines(await ok(['get', '--raw', '/livez?verbose']));
  assert.equal(live.at(-1), 'livez check passed');

  // A check excluded by name is reported as excluded.
  const excluded = lines(await ok(['get', '--raw', '/readyz?verbose&exclude=ping']));
  assert.ok(excluded.includes('[+]ping excluded: ok'), excluded.join('\n'));
  assert.equal(excluded.at(-1), 'readyz check passed');
});

test('kubectl api-resources and api-versions', async () => {
  const out = lines(await ok(['api-resources']));
  assert.match(out[0]!, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$/);
  assert.ok(out.some((l) => /^namespaces\s+ns\s+v1\s+false\s+Namespace$/.test(l)), out.join('\n'));
  assert.ok(out.some((l) => /^nodes\s+no\s+v1\s+false\s+Node$/.test(l)), out.join('\n'));
  assert.ok(out.some((l) => /^leases\s+coordination\.orch\.io\/v1\s+true\s+Lease$/.test(l)), out.join('\n'));
  assert.ok(!out.some((l) => l.includes('k8s.io')), 'no k8s.io groups are served');

  assert.deepEqual(lines(await ok(['api-resources', '--api-group=coordination.orch.io', '-o', 'name'])), ['leases.coordination.orch.io']);
  assert.deepEqual(lines(await ok(['api-resources', '--namespaced=false', '-o', 'name'])).sort(), [
    'apiservices.apiregistration.orch.io',
    'clusterrolebindings.rbac.authorization.orch.io',
    'clusterroles.rbac.authorization.orch.io',
    'componentstatuses',
    'customresourcedefinitions.apiextensions.orch.io',
    'ipaddresses.networking.orch.io',
    'namespaces',
    'nodes',
    'runtimeclasses.node.orch.io',
    'selfsubjectaccessreviews.authorization.orch.io',
    'selfsubjectreviews.authentication.orch.io',
    'selfsubjectrulesreviews.authorization.orch.io',
    'servicecidrs.networking.orch.io',
    'subjectaccessreviews.authorization.orch.io',
    'tokenreviews.authentication.orch.io',
  ]);
  const wide = lines(await ok(['api-resources', '--api-group=coordination.orch.io', '-o', 'wide']));
  assert.match(wide[1]!, /\s\[?create[ ,]delete[ ,]deletecollection[ ,]get[ ,]list[ ,]patch[ ,]update[ ,]watch\]?$/);

  const versions = lines(await ok(['api-versions']));
  assert.ok(versions.includes('v1'), versions.join(' '));
  assert.ok(versions.includes('coordination.orch.io/v1'), versions.join(' '));
  assert.ok(!versions.some((v) => v.includes('k8s.io')), versions.join(' '));
});

test('kubectl explain lease.spec', async () => {
  const out = await ok(['explain', 'lease.spec']);
  assert.match(out, /KIND:\s+Lease/);
  assert.match(out, /VERSION:\s+v1/);
  assert.match(out, /(GROUP:\s+coordination\.orch\.io|VERSION:\s+coordination\.orch\.io\/v1)/);
  // The named type, as Kubernetes publishes it (kubectl 1.20 prints <Object>).
  assert.match(out, /FIELD:\s+spec\s+<(LeaseSpec|Object)>/);
  for (const [field, type] of [
    ['holderIdentity', 'string'],
    ['leaseDurationSeconds', 'integer'],
    ['leaseTransitions', 'integer'],
    ['acquireTime', 'string'],
    ['renewTime', 'string'],
    ['strategy', 'string'],
    ['preferredHolder', 'string'],
  ])
    assert.match(out, new RegExp(`^\\s+${field}\\s+<${type}>`, 'm'), `${field} <${type}> in\n${out}`);

  const taints = await ok(['explain', 'node.spec.taints']);
  assert.match(taints, /FIELD:\s+taints\s+<\[\](Taint|Object)>/);
  assert.match(taints, /^\s+key\s+<string> -required-/m);

  const unknown = await fails(['explain', 'lease.spec.nope']);
  assert.match(unknown.stderr, /field "nope" does not exist/);
});

test('kubectl version reaches the server', async (t) => {
  t.diagnostic(`kubectl client ${k.version} (${k.bin})`);
  const v = JSON.parse(await ok(['version', '-o', 'json'])) as { serverVersion?: { gitVersion?: string; major?: string } };
  assert.match(v.serverVersion?.gitVersion ?? '', /orch-apiserver/);
  assert.equal(v.serverVersion?.major, '1');
});

// ---------------------------------------------------------------------------------------------
// errors

test('kubectl get lease nope exits non-zero with NotFound', async () => {
  const r = await fails(['get', 'lease', 'nope']);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /Error from server \(NotFound\): leases\.coordination\.orch\.io "nope" not found/);

  assert.equal(await ok(['get', 'lease', 'nope', '--ignore-not-found']), '');

  const kind = await fails(['get', 'widgets']);
  assert.match(kind.stderr, /the server doesn't have a resource type "widgets"/);

  const badName = await fails(['create', '-f', '-'], JSON.stringify(lease('Not_A_Name')));
  assert.match(badName.stderr, /Invalid/);
  assert.equal(await fetchObject(leasePath('default', 'Not_A_Name')), undefined);

  const unknownField = await fails(['create', '-f', '-'], JSON.stringify({ ...lease('kc-unknown-field'), spec: { holderIdentity: 'x', bogus: 1 } }));
  assert.match(unknownField.stderr, /unknown field "spec\.bogus"/);
  assert.equal(await fetchObject(leasePath('default', 'kc-unknown-field')), undefined);
});
