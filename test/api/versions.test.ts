// A kind served at several versions with one storage version: conversion on every read, write,
// list and watch; discovery (every version, the preferred one, storageVersionHash); OpenAPI per
// version; managed fields across versions; --runtime-config's keys and their precedence; removed
// versions answer 404.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { ALL_VERBS, apiVersionOf, type KindDefinition } from '../../src/registry/definition.ts';
import { int64, obj, objectSchema, str } from '../../src/registry/schemas.ts';
import { fieldError } from '../../src/machinery/field-errors.ts';
import type { KObject } from '../../src/machinery/meta.ts';
import { servedKinds } from '../../src/server/served-kinds.ts';
import { storageVersionHash } from '../../src/registry/versions.ts';
import { parsePrometheusText } from '../support/prometheus.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { namingProfile } from '../../src/naming.ts';

const GROUP = 'versions.example.com';

/** v2's spec.paint is v1's spec.color; v1 is the storage version. */
const rename = (o: KObject, from: string, to: string): KObject => {
  const spec = o.spec as Record<string, unknown> | undefined;
  if (!spec || !(from in spec)) return o;
  const { [from]: value, ...rest } = spec;
  return { ...o, spec: { ...rest, [to]: value } } as KObject;
};

const visible = (o: KObject) => ((o.spec as { color?: string } | undefined)?.color === 'invisible' ? [fieldError.invalid('spec.color', 'invisible', 'must be seen')] : []);

const widgetKind: KindDefinition = {
  group: GROUP,
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  singular: 'widget',
  namespaced: true,
  verbs: ALL_VERBS,
  nameRule: 'dns-subdomain',
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  schema: objectSchema({ spec: obj({ color: str(), size: int64() }) }),
  selectableFields: { 'spec.color': (o) => String((o.spec as { color?: string } | undefined)?.color ?? '') },
  strategy: {
    validate: (o) => visible(o),
    validateUpdate: (o) => visible(o),
  },
  versions: [
    {
      version: 'v2',
      schema: objectSchema({ spec: obj({ paint: str(), size: int64() }) }),
      toStorage: (o) => rename(o, 'paint', 'color'),
      fromStorage: (o) => rename(o, 'color', 'paint'),
    },
    { version: 'v3alpha1' },
  ],
};

const RUNTIME_CONFIG = `coordination.orch.io/v1beta1=true,coordination.orch.io/v1alpha2=true,${GROUP}/v3alpha1`;
const server = await testServer({ extraKinds: [widgetKind], runtimeConfig: RUNTIME_CONFIG });
test.after(() => server.close());

let nsCount = 0;
async function namespace(): Promise<string> {
  const ns = `versions-${++nsCount}`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  return ns;
}

const widgets = (ns: string, version: string) => `/apis/${GROUP}/${version}/namespaces/${ns}/widgets`;
const widget = (ns: string, version: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: `${GROUP}/${version}`, kind: 'Widget', metadata: { name, namespace: ns }, spec });
const hashOf = (gvk: string) => createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64');

test('an object written at one version reads at every other, stored once at the storage version', async () => {
  const ns = await namespace();
  const created = await api(server, 'POST', widgets(ns, 'v1'), widget(ns, 'v1', 'a', { color: 'red', size: 2 }));
  assert.equal(created.status, 201, created.text);
  const v2 = await api(server, 'GET', `${widgets(ns, 'v2')}/a`);
  assert.equal(v2.status, 200);
  assert.equal(v2.body.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(v2.body.spec, { paint: 'red', size: 2 });
  assert.equal(v2.body.metadata.uid, created.body.metadata.uid);
  assert.equal(v2.body.metadata.resourceVersion, created.body.metadata.resourceVersion);

  // Written at v2: answered at v2, read back at v1 in v1's form.
  const b = await api(server, 'POST', widgets(ns, 'v2'), widget(ns, 'v2', 'b', { paint: 'blue' }));
  assert.equal(b.status, 201, b.text);
  assert.equal(b.body.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(b.body.spec, { paint: 'blue' });
  const bv1 = await api(server, 'GET', `${widgets(ns, 'v1')}/b`);
  assert.deepEqual(bv1.body.spec, { color: 'blue' });
  // A version with the same form: only the apiVersion differs.
  const bv3 = await api(server, 'GET', `${widgets(ns, 'v3alpha1')}/b`);
  assert.equal(bv3.status, 200);
  assert.equal(bv3.body.apiVersion, `${GROUP}/v3alpha1`);
  assert.deepEqual(bv3.body.spec, { color: 'blue' });

  // Update and merge patch at v2 of an object written at v1; generation counts the change once.
  const put = await api(server, 'PUT', `${widgets(ns, 'v2')}/a`, { ...v2.body, spec: { paint: 'green', size: 2 } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.body.spec, { paint: 'green', size: 2 });
  assert.equal(put.body.metadata.generation, 2);
  const patched = await api(server, 'PATCH', `${widgets(ns, 'v2')}/a`, { spec: { paint: 'teal' } }, { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual((await api(server, 'GET', `${widgets(ns, 'v1')}/a`)).body.spec, { color: 'teal', size: 2 });

  // The storage version's rules run on the converted object; a refused write changes nothing.
  const refused = await api(server, 'PATCH', `${widgets(ns, 'v2')}/a`, { spec: { paint: 'invisible' } }, { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.reason, 'Invalid');
  assert.deepEqual((await api(server, 'GET', `${widgets(ns, 'v2')}/a`)).body.spec, { paint: 'teal', size: 2 });

  // Lists at each version: items in the list's version, selectable fields by the stored value.
  const list = await api(server, 'GET', widgets(ns, 'v2'));
  assert.equal(list.body.apiVersion, `${GROUP}/v2`);
  assert.equal(list.body.kind, 'WidgetList');
  assert.deepEqual(
    list.body.items.map((i: KObject) => [i.apiVersion, i.metadata.name, i.spec]),
    [
      [`${GROUP}/v2`, 'a', { paint: 'teal', size: 2 }],
      [`${GROUP}/v2`, 'b', { paint: 'blue' }],
    ],
  );
  const selected = await api(server, 'GET', `${widgets(ns, 'v2')}?fieldSelector=spec.color%3Dblue`);
  assert.deepEqual(selected.body.items.map((i: KObject) => i.metadata.name), ['b']);
  // Deleted through one version, gone at the other.
  assert.equal((await api(server, 'DELETE', `${widgets(ns, 'v2')}/b`)).status, 200);
  assert.equal((await api(server, 'GET', `${widgets(ns, 'v1')}/b`)).status, 404);
});

test('watches at each version: initial events and later changes in the watched version', async () => {
  const ns = await namespace();
  assert.equal((await api(server, 'POST', widgets(ns, 'v1'), widget(ns, 'v1', 'w', { color: 'red' }))).status, 201);
  const v2 = readWatch(`${server.url}${widgets(ns, 'v2')}?watch=true&resourceVersion=0`);
  const v1 = readWatch(`${server.url}${widgets(ns, 'v1')}?watch=true&resourceVersion=0`);
  try {
    const [initial] = await v2.next(1);
    assert.equal(initial!.type, 'ADDED');
    assert.equal(initial!.object.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(initial!.object.spec, { paint: 'red' });
    assert.deepEqual((await v1.next(1))[0]!.object.spec, { color: 'red' });
    assert.equal((await api(server, 'POST', widgets(ns, 'v2'), widget(ns, 'v2', 'x', { paint: 'gold' }))).status, 201);
    const [added] = await v2.next(1);
    assert.equal(added!.type, 'ADDED');
    assert.equal(added!.object.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(added!.object.spec, { paint: 'gold' });
    const [seenAtV1] = await v1.next(1);
    assert.equal(seenAtV1!.object.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(seenAtV1!.object.spec, { color: 'gold' });
  } finally {
    v1.close();
    v2.close();
  }
});

test('managed fields: an apply at v1 reads at v2 with its version kept; the same manager applies at v2 without conflict', async () => {
  const ns = await namespace();
  const applyAt = (version: string, manager: string, spec: Record<string, unknown>, force = false) =>
    api(server, 'PATCH', `${widgets(ns, version)}/m?fieldManager=${manager}${force ? '&force=true' : ''}`, widget(ns, version, 'm', spec), {
      'Content-Type': 'application/apply-patch+yaml',
    });
  const first = await applyAt('v1', 'alice', { color: 'red', size: 1 });
  assert.equal(first.status, 201, first.text);
  const read = await api(server, 'GET', `${widgets(ns, 'v2')}/m`);
  const [entry] = read.body.metadata.managedFields;
  assert.equal(read.body.metadata.managedFields.length, 1);
  assert.equal(entry.manager, 'alice');
  assert.equal(entry.operation, 'Apply');
  assert.equal(entry.apiVersion, `${GROUP}/v1`, 'an entry keeps the version it was written at');
  assert.deepEqual(entry.fieldsV1, { 'f:spec': { 'f:color': {}, 'f:size': {} } });

  // The same manager at v2, the same values under v2's names: no conflict, one entry, now at v2.
  const again = await applyAt('v2', 'alice', { paint: 'red', size: 1 });
  assert.equal(again.status, 200, again.text);
  const entries = again.body.metadata.managedFields;
  assert.equal(entries.length, 1, JSON.stringify(entries));
  assert.equal(entries[0].apiVersion, `${GROUP}/v2`);
  assert.deepEqual(entries[0].fieldsV1, { 'f:spec': { 'f:paint': {}, 'f:size': {} } });

  // Ownership carried over: another manager changing the field at v1 conflicts with alice, named
  // in alice's version, as Kubernetes compares each manager's fields in its own version.
  const other = await applyAt('v1', 'bob', { color: 'blue' });
  assert.equal(other.status, 409, other.text);
  assert.match(other.body.message, /conflict with "alice": \.spec\.paint/);
  // Dropping a field at v2 releases it (alice applies without size): it is removed.
  const dropped = await applyAt('v2', 'alice', { paint: 'red' });
  assert.equal(dropped.status, 200, dropped.text);
  assert.deepEqual((await api(server, 'GET', `${widgets(ns, 'v1')}/m`)).body.spec, { color: 'red' });
});

test('discovery: every served version, the preferred one, and storageVersionHash of the storage version', async () => {
  const group = await api(server, 'GET', `/apis/${GROUP}`);
  assert.deepEqual(
    group.body.versions.map((v: { version: string }) => v.version),
    ['v2', 'v1', 'v3alpha1'],
    'by Kubernetes version order: GA, then alpha',
  );
  assert.equal(group.body.preferredVersion.version, 'v2');
  const storageHash = hashOf(`${GROUP}/v1/Widget`);
  for (const version of ['v1', 'v2', 'v3alpha1']) {
    const list = await api(server, 'GET', `/apis/${GROUP}/${version}`);
    const r = list.body.resources.find((x: { name: string }) => x.name === 'widgets');
    assert.equal(r.storageVersionHash, storageHash, `${version}: the hash of the storage version, whatever the served one`);
  }
  // kube-apiserver's own values for the core group (hash of "/v1/<Kind>").
  const core = await api(server, 'GET', '/api/v1');
  const byName = new Map(core.body.resources.map((x: { name: string; storageVersionHash?: string }) => [x.name, x.storageVersionHash]));
  assert.equal(byName.get('configmaps'), 'qFsyl6wFWjQ=');
  assert.equal(byName.get('namespaces'), 'Q3oi5N2YM8M=');
  assert.equal(byName.get('componentstatuses'), undefined, 'a computed kind stores nothing');
  assert.equal(byName.get('namespaces/status'), undefined, 'subresources have none');
  // Events of both groups are one store, core v1 Event in kube-apiserver: both report its hash.
  const events = await api(server, 'GET', '/apis/events.orch.io/v1');
  assert.equal(byName.get('events'), 'r2yiGXH7wu8=');
  assert.equal(events.body.resources.find((x: { name: string }) => x.name === 'events').storageVersionHash, 'r2yiGXH7wu8=');
  // The coordination group with both LeaseCandidate versions on: v1beta1 preferred after v1.
  const coordination = await api(server, 'GET', '/apis/coordination.orch.io');
  assert.deepEqual(
    coordination.body.versions.map((v: { version: string }) => v.version),
    ['v1', 'v1beta1', 'v1alpha2'],
  );
  const candidates = await api(server, 'GET', '/apis/coordination.orch.io/v1alpha2');
  assert.equal(candidates.body.resources[0].storageVersionHash, hashOf('coordination.orch.io/v1beta1/LeaseCandidate'));

  // Aggregated discovery lists every version (its resources carry no hash in Kubernetes' v2 type).
  const aggregated = await api(server, 'GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList' });
  const item = aggregated.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP);
  assert.deepEqual(
    item.versions.map((v: { version: string; resources: { responseKind: { version: string } }[] }) => [v.version, v.resources[0]!.responseKind.version]),
    [
      ['v2', 'v2'],
      ['v1', 'v1'],
      ['v3alpha1', 'v3alpha1'],
    ],
  );
});

test('OpenAPI: each version documents its own schema', async () => {
  const v2 = await api(server, 'GET', `/openapi/v3/apis/${GROUP}/v2`);
  const v1 = await api(server, 'GET', `/openapi/v3/apis/${GROUP}/v1`);
  assert.equal(v2.status, 200);
  assert.equal(v1.status, 200);
  const specOf = (doc: { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } }, version: string) => {
    const [, schema] = Object.entries(doc.components.schemas).find(([name]) => name.endsWith(`${version}.WidgetSpec`))!;
    return schema;
  };
  assert.match(JSON.stringify(specOf(v2.body, 'v2')), /paint/);
  assert.doesNotMatch(JSON.stringify(specOf(v2.body, 'v2')), /color/);
  assert.match(JSON.stringify(specOf(v1.body, 'v1')), /color/);
});

test('LeaseCandidate at v1alpha2 and v1beta1: one object; kubectl reads it at an explicit version', async () => {
  const ns = await namespace();
  const spec = { leaseName: 'l', binaryVersion: '1.36.0', emulationVersion: '1.36.0', strategy: 'OldestEmulationVersion' };
  const created = await api(server, 'POST', `/apis/coordination.orch.io/v1alpha2/namespaces/${ns}/leasecandidates`, {
    apiVersion: 'coordination.orch.io/v1alpha2',
    kind: 'LeaseCandidate',
    metadata: { name: 'c' },
    spec,
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.apiVersion, 'coordination.orch.io/v1alpha2');
  const beta = await api(server, 'GET', `/apis/coordination.orch.io/v1beta1/namespaces/${ns}/leasecandidates/c`);
  assert.equal(beta.body.apiVersion, 'coordination.orch.io/v1beta1');
  assert.deepEqual(beta.body.spec, spec);
  assert.equal(beta.body.metadata.managedFields[0].apiVersion, 'coordination.orch.io/v1alpha2');
  const kubectl = kubectlFor(server, { namespace: ns, label: 'versions' });
  const alpha = JSON.parse(await kubectl.ok(['get', 'leasecandidates.v1alpha2.coordination.orch.io', 'c', '-o', 'json']));
  assert.equal(alpha.apiVersion, 'coordination.orch.io/v1alpha2');
});

test('removed versions answer 404 as versions the server does not serve', async () => {
  for (const path of [
    '/apis/coordination.orch.io/v1beta1/leases',
    '/apis/coordination.orch.io/v1beta1/namespaces/default/leases/x',
    '/apis/rbac.authorization.orch.io/v1beta1/clusterroles',
    '/apis/events.orch.io/v1beta1/namespaces/default/events',
    '/apis/node.orch.io/v1beta1/runtimeclasses',
    '/apis/rbac.authorization.orch.io/v1beta1',
  ]) {
    const r = await api(server, 'GET', path);
    assert.equal(r.status, 404, path);
    assert.equal(r.body.kind, 'Status', path);
    assert.equal(r.body.reason, 'NotFound', path);
  }
});

test("a deprecated version with a removal release: kube-apiserver's warning and the metric's removed_release", async () => {
  const ns = await namespace();
  const r = await api(server, 'GET', `/apis/coordination.orch.io/v1alpha2/namespaces/${ns}/leasecandidates`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('warning'), '299 - "coordination.orch.io/v1alpha2 LeaseCandidate is deprecated in v1.35+, unavailable in v1.38+"');
  const metrics = await api(server, 'GET', '/metrics');
  const series = parsePrometheusText(metrics.text)
    .get('apiserver_requested_deprecated_apis')
    ?.samples.filter((m) => m.labels.resource === 'leasecandidates');
  assert.deepEqual(
    series?.map((m) => [m.labels, m.value]),
    [[{ group: 'coordination.orch.io', version: 'v1alpha2', resource: 'leasecandidates', subresource: '', removed_release: '1.38' }, 1]],
  );
});

test("storageVersionHash in both naming profiles: kube-apiserver's values for the kinds stored as it stores them", () => {
  for (const profile of ['orch', 'kubernetes'] as const) {
    const naming = namingProfile(profile);
    const defs = servedKinds({ naming, featureGates: parseFeatureGates(undefined), storageComponent: 'etcd-0', storage: () => undefined, runtimeConfig: undefined });
    const hash = (group: string, resource: string) => storageVersionHash(defs.find((d) => d.group === group && d.resource === resource)!);
    // Events of core v1 and of the events group are one store: core v1 Event in kube-apiserver.
    assert.equal(hash('', 'events'), 'r2yiGXH7wu8=', profile);
    assert.equal(hash(naming.group('events'), 'events'), 'r2yiGXH7wu8=', profile);
    assert.equal(hash('', 'configmaps'), 'qFsyl6wFWjQ=', profile);
  }
  // The kubernetes profile's group names are kube-apiserver's: its hash of Lease.
  assert.equal(storageVersionHash(servedKinds({ naming: namingProfile('kubernetes'), featureGates: parseFeatureGates(undefined), storageComponent: 'etcd-0', storage: () => undefined, runtimeConfig: undefined }).find((d) => d.resource === 'leases')!), 'gqkMMb/YqFM=');
});

test('--runtime-config: level keys, group versions and resources with kube-apiserver precedence; bad keys are errors', () => {
  const naming = namingProfile('orch');
  const sorted = (keys: string[]) => [...keys].sort();
  const served = (runtimeConfig?: string) =>
    servedKinds({ naming, featureGates: parseFeatureGates(undefined), runtimeConfig, storageComponent: 'etcd-0', storage: () => undefined, extraKinds: [widgetKind] })
      .map((d) => `${apiVersionOf(d)}/${d.resource}`)
      .filter((k) => /widgets|leasecandidates|\/v1\/configmaps|^v1\/configmaps/.test(k))
      .sort();
  // Defaults: GA on; alpha off; LeaseCandidate's beta off (introduced after 1.22).
  assert.deepEqual(served(), sorted([`${GROUP}/v1/widgets`, `${GROUP}/v2/widgets`, 'v1/configmaps']));
  assert.deepEqual(served('api/alpha=true'), sorted([`coordination.orch.io/v1alpha2/leasecandidates`, `${GROUP}/v1/widgets`, `${GROUP}/v2/widgets`, `${GROUP}/v3alpha1/widgets`, 'v1/configmaps']));
  // A value defaults to true; api/all on, then api/alpha off (later level keys win).
  assert.deepEqual(served('api/all,api/alpha=false'), sorted(['coordination.orch.io/v1beta1/leasecandidates', `${GROUP}/v1/widgets`, `${GROUP}/v2/widgets`, 'v1/configmaps']));
  // A group version beats the level keys; a resource beats its group version.
  assert.deepEqual(served(`api/ga=false,api/v1=true,${GROUP}/v2=true,${GROUP}/v3alpha1/widgets=1`), sorted([`${GROUP}/v2/widgets`, `${GROUP}/v3alpha1/widgets`, 'v1/configmaps']));
  assert.deepEqual(served(`${GROUP}/v1=false,${GROUP}/v1/widgets=true,api/v1/configmaps=false`), sorted([`${GROUP}/v1/widgets`, `${GROUP}/v2/widgets`]));
  // Removed versions Kubernetes still registers: accepted, and they serve nothing.
  assert.deepEqual(served('rbac.authorization.orch.io/v1beta1=true,coordination.orch.io/v1alpha1=true'), served());
  const bad: [string, RegExp][] = [
    ['nope.orch.io/v1=false', /unknown api groups nope\.orch\.io$/],
    ['coordination.orch.io/v9=true', /group version coordination\.orch\.io\/v9 that has not been registered$/],
    [`${GROUP}/v1=maybe`, /invalid value of versions\.example\.com\/v1: maybe/],
    ['api/beta=yes', /invalid value api\/beta=yes$/],
    [`${GROUP}/v1/Widgets=true`, /resource is always lowercase plural, not "Widgets"/],
    [`${GROUP}/v1/gadgets=true`, /invalid key versions\.example\.com\/v1\/gadgets/],
    ['a/b/c/d=true', /runtime-config invalid key a\/b\/c\/d$/],
    ['api/all=false', /invalid key with only api\/all=false$/],
  ];
  for (const [flag, message] of bad) assert.throws(() => served(flag), message, flag);
});

test('the Python dynamic client reads and writes one object at two versions', async () => {
  const ns = await namespace();
  const script = [
    'import sys',
    'from kubernetes import client, config, dynamic',
    'c = client.Configuration(); config.load_kube_config(config_file=sys.argv[2], client_configuration=c); c.host = sys.argv[1]',
    'dyn = dynamic.DynamicClient(client.ApiClient(c))',
    `v1 = dyn.resources.get(api_version='${GROUP}/v1', kind='Widget')`,
    `v2 = dyn.resources.get(api_version='${GROUP}/v2', kind='Widget')`,
    `made = v2.create(namespace=sys.argv[3], body={'apiVersion': '${GROUP}/v2', 'kind': 'Widget', 'metadata': {'name': 'py'}, 'spec': {'paint': 'plum'}})`,
    'print(made.apiVersion, made.spec.paint)',
    "got = v1.get(namespace=sys.argv[3], name='py')",
    'print(got.apiVersion, got.spec.color, got.metadata.managedFields[0].apiVersion)',
  ].join('\n');
  const python = process.env.PYTHON_FOR_KUBERNETES || '/usr/bin/python3';
  const out = await new Promise<string>((resolve, reject) =>
    execFile(python, ['-c', script, server.url, server.kubeconfigPath!, ns], { timeout: 60_000, encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout))),
  );
  assert.deepEqual(out.trim().split('\n'), [`${GROUP}/v2 plum`, `${GROUP}/v1 plum ${GROUP}/v2`]);
});
