// CustomResourceDefinitions over HTTP (kubernetes profile): a CRD is validated as kube-apiserver
// validates it, the controller accepts its names and establishes it, and the kind it defines is
// served through the generic paths (REST, discovery, OpenAPI) until the CRD is deleted, which
// deletes its custom resources. One server for the file; each test its own group or namespace.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { api, startTrusted, testServer, waitFor } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { widgetCrd } from '../support/crd.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const server = await testServer({ naming: 'kubernetes' });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

const condition = (crd: Body, type: string): Body | undefined => crd.status?.conditions?.find((c: Body) => c.type === type);

/** Creates the CRD and waits until it is Established. */
export async function establish(crd: Body): Promise<Body> {
  const r = await api(server, 'POST', CRDS, crd);
  assert.equal(r.status, 201, r.text);
  let got: Body = r.body;
  await waitFor(`${crd.metadata.name} established`, async () => {
    got = (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body;
    return condition(got, 'Established')?.status === 'True';
  });
  return got;
}

async function ensureNamespace(name: string): Promise<void> {
  const r = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.ok(r.status === 201 || r.status === 409, r.text);
}

function causes(r: { status: number; body: any; text: string }): [string, string, string][] {
  assert.equal(r.status, 422, r.text);
  return (r.body.details.causes as Body[]).map((c) => [c.reason, c.field, c.message]);
}

describe('CustomResourceDefinition validation', () => {
  test('the name must be <plural>.<group>, with kube-apiserver\'s field path and message', async () => {
    const crd = widgetCrd('names.example.com');
    crd.metadata.name = 'wrong.example.com';
    const r = await api(server, 'POST', CRDS, crd);
    assert.deepEqual(causes(r), [['FieldValueInvalid', 'metadata.name', 'Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group']]);
    assert.equal(r.body.message, 'CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group');
    assert.equal((await api(server, 'GET', `${CRDS}/wrong.example.com`)).status, 404);
  });

  test('group, scope, versions and names are checked', async () => {
    const crd = widgetCrd('nodot');
    crd.spec.scope = 'Everywhere';
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'V2' });
    crd.spec.names.shortNames = ['Bad_Name'];
    crd.spec.names.listKind = 'Widget';
    const found = causes(await api(server, 'POST', CRDS, crd));
    const has = (field: string, text: string) => assert.ok(found.some(([, f, m]) => f === field && m.includes(text)), `${field}: ${text} in ${JSON.stringify(found)}`);
    has('spec.group', 'should be a domain with at least one dot');
    has('spec.scope', 'Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"');
    has('spec.versions[1].name', "a DNS-1035 label must consist of lower case alphanumeric characters");
    has('spec.versions', 'must have exactly one version marked as storage version');
    has('spec.names.shortNames[0]', 'Invalid value: "Bad_Name"');
    has('spec.names.listKind', 'kind and listKind may not be the same');
  });

  test('a schema must be structural: types everywhere, items for arrays, metadata left alone', async () => {
    const crd = widgetCrd('structural.example.com');
    const schema = crd.spec.versions[0].schema.openAPIV3Schema;
    schema.properties.spec.properties.size = { minimum: 1 };
    schema.properties.spec.properties.list = { type: 'array' };
    schema.properties.metadata = { type: 'object', properties: { labels: { type: 'object' } } };
    const found = causes(await api(server, 'POST', CRDS, crd));
    const at = 'spec.versions[0].schema.openAPIV3Schema';
    assert.deepEqual(
      found.map(([, f, m]) => [f, m]).sort(),
      [
        [`${at}.properties[metadata]`, 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified'],
        [`${at}.properties[spec].properties[list].items`, 'Required value: must be specified'],
        [`${at}.properties[spec].properties[size].type`, 'Required value: must not be empty for specified object fields'],
      ],
    );
  });

  test('schema keywords of the wrong type are refused when the CRD is written, never left to fail the writes of its objects', async () => {
    const crd = widgetCrd('keywords.example.com');
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    spec.required = 5;
    spec.properties.colour.enum = 'red';
    spec.properties.size.minimum = 'one';
    spec.properties.label.pattern = '(';
    spec.properties.ports.items = [{ type: 'string' }];
    const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec]';
    assert.deepEqual(causes(await api(server, 'POST', CRDS, crd)).map(([r, f]) => `${r} ${f}`).sort(), [
      `FieldValueForbidden ${at}.properties[ports].items`,
      `FieldValueInvalid ${at}.properties[colour].enum`,
      `FieldValueInvalid ${at}.properties[label].pattern`,
      `FieldValueInvalid ${at}.properties[size].minimum`,
      `FieldValueInvalid ${at}.required`,
    ]);
  });

  test('a validation rule that does not compile is refused when the CRD is written', async () => {
    const crd = widgetCrd('rules.example.com');
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.size >' }];
    const found = causes(await api(server, 'POST', CRDS, crd));
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.equal(found[0]![1], 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule');
    assert.match(found[0]![2], /compilation failed/);
  });

  test('defaults: singular, listKind and the None conversion; the storage version is stored', async () => {
    const crd = widgetCrd('defaults.example.com');
    delete crd.spec.names.singular;
    const r = await api(server, 'POST', CRDS, crd);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.spec.names.singular, 'widget');
    assert.equal(r.body.spec.names.listKind, 'WidgetList');
    assert.deepEqual(r.body.spec.conversion, { strategy: 'None' });
    assert.deepEqual(r.body.status.storedVersions, ['v1']);
  });

  test('group and plural cannot change; scope and kind cannot change once established', async () => {
    const got = await establish(widgetCrd('immutable.example.com'));
    const r = await api(server, 'PATCH', `${CRDS}/${got.metadata.name}`, { spec: { scope: 'Cluster', names: { kind: 'Gadget', listKind: 'GadgetList' } } }, MERGE);
    const found = causes(r).map(([, f]) => f).sort();
    assert.deepEqual(found, ['spec.names.kind', 'spec.scope']);
  });
});

describe('the controller', () => {
  test('a CRD is established with its accepted names and NamesAccepted', async () => {
    const got = await establish(widgetCrd('established.example.com'));
    assert.equal(condition(got, 'NamesAccepted')?.reason, 'NoConflicts');
    assert.equal(condition(got, 'Established')?.reason, 'InitialNamesAccepted');
    assert.deepEqual(got.status.acceptedNames, { plural: 'widgets', singular: 'widget', shortNames: ['wdg'], kind: 'Widget', listKind: 'WidgetList', categories: ['gadgets'] });
  });

  test('names another CRD of the group holds are not accepted (the last conflict found is reported), and the CRD is not established', async () => {
    await establish(widgetCrd('conflict.example.com'));
    // Another plural, the same kind (and so the same list kind): kube-apiserver checks the kind,
    // then the list kind, and reports the last conflict.
    const other = widgetCrd('conflict.example.com', { plural: 'gizmos', kind: 'Widget', shortNames: [] });
    const r = await api(server, 'POST', CRDS, other);
    assert.equal(r.status, 201, r.text);
    let got: Body = r.body;
    await waitFor('ListKindConflict', async () => {
      got = (await api(server, 'GET', `${CRDS}/gizmos.conflict.example.com`)).body;
      return condition(got, 'NamesAccepted')?.status === 'False';
    });
    assert.equal(condition(got, 'NamesAccepted')?.reason, 'ListKindConflict');
    assert.equal(condition(got, 'NamesAccepted')?.message, '"WidgetList" is already in use');
    assert.equal(got.status.acceptedNames.plural, 'gizmos');
    assert.equal(got.status.acceptedNames.kind, undefined);
    assert.equal(condition(got, 'Established')?.status, 'False');
    assert.equal((await api(server, 'GET', '/apis/conflict.example.com/v1/gizmos')).status, 404);
  });

  test('a CRD may not take the names of a built-in kind of its group', async () => {
    const crd = widgetCrd('rbac.authorization.k8s.io', { plural: 'roles', kind: 'Thing', shortNames: [] });
    crd.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, testing only' };
    const r = await api(server, 'POST', CRDS, crd);
    assert.equal(r.status, 201, r.text);
    await waitFor('PluralConflict', async () => condition((await api(server, 'GET', `${CRDS}/roles.rbac.authorization.k8s.io`)).body, 'NamesAccepted')?.reason === 'PluralConflict');
    assert.equal((await api(server, 'GET', '/apis/rbac.authorization.k8s.io/v1/roles')).status, 200);
  });
});

describe('custom resources', () => {
  test('create, get, list, update, merge and JSON patch, delete: validated and pruned against the schema', async () => {
    await establish(widgetCrd('crud.example.com'));
    await ensureNamespace('crud');
    const base = '/apis/crud.example.com/v1/namespaces/crud/widgets';
    const created = await api(server, 'POST', base, { apiVersion: 'crud.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3, colour: 'red', unknown: 1, extra: { kept: { deep: true } } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.spec, { size: 3, colour: 'red', extra: { kept: { deep: true } } });
    assert.equal(created.body.metadata.generation, 1);
    assert.equal((await api(server, 'GET', `${base}/w1`)).body.spec.size, 3);
    const list = await api(server, 'GET', base);
    assert.equal(list.body.kind, 'WidgetList');
    assert.deepEqual(list.body.items.map((i: Body) => i.metadata.name), ['w1']);

    const put = await api(server, 'PUT', `${base}/w1`, { ...created.body, spec: { size: 4 } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.metadata.generation, 2);
    const merged = await api(server, 'PATCH', `${base}/w1`, { spec: { colour: 'blue' } }, MERGE);
    assert.equal(merged.status, 200, merged.text);
    assert.deepEqual(merged.body.spec, { size: 4, colour: 'blue' });
    const json = await api(server, 'PATCH', `${base}/w1`, [{ op: 'replace', path: '/spec/size', value: 5 }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.body.spec.size, 5);
    const smp = await api(server, 'PATCH', `${base}/w1`, { spec: { size: 6 } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415, smp.text);

    const bad = await api(server, 'POST', base, { apiVersion: 'crud.example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { size: 11, colour: 'pink', label: 'A1' } });
    // Worded as kube-openapi's validator words custom resources' errors.
    assert.deepEqual(causes(bad).sort((a, b) => a[1].localeCompare(b[1])), [
      ['FieldValueNotSupported', 'spec.colour', 'Unsupported value: "pink": supported values: "red", "green", "blue"'],
      ['FieldValueInvalid', 'spec.label', "Invalid value: \"A1\": spec.label in body should match '^[a-z]+$'"],
      ['FieldValueInvalid', 'spec.size', 'Invalid value: 11: spec.size in body should be less than or equal to 10'],
    ]);
    const missing = await api(server, 'POST', base, { apiVersion: 'crud.example.com/v1', kind: 'Widget', metadata: { name: 'w3' }, spec: {} });
    assert.deepEqual(causes(missing).map(([r, f]) => `${r} ${f}`), ['FieldValueRequired spec.size']);
    assert.equal((await api(server, 'GET', `${base}/w2`)).status, 404);

    const del = await api(server, 'DELETE', `${base}/w1`);
    assert.equal(del.status, 200, del.text);
    assert.equal((await api(server, 'GET', `${base}/w1`)).status, 404);
  });

  test('status is written through /status only', async () => {
    await establish(widgetCrd('status.example.com'));
    await ensureNamespace('status');
    const base = '/apis/status.example.com/v1/namespaces/status/widgets';
    const created = await api(server, 'POST', base, { apiVersion: 'status.example.com/v1', kind: 'Widget', metadata: { name: 's' }, spec: { size: 1 }, status: { ready: true } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, undefined);
    const st = await api(server, 'PATCH', `${base}/s/status`, { status: { ready: true }, spec: { size: 9 } }, MERGE);
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(st.body.status, { ready: true });
    assert.equal(st.body.spec.size, 1);
    assert.equal(st.body.metadata.generation, 1);
  });

  test('without a status subresource, a change of status is a new generation; of metadata, not', async () => {
    await establish(widgetCrd('generation.example.com', { status: false }));
    await ensureNamespace('generation');
    const base = '/apis/generation.example.com/v1/namespaces/generation/widgets';
    const created = await api(server, 'POST', base, { apiVersion: 'generation.example.com/v1', kind: 'Widget', metadata: { name: 'g' }, spec: { size: 1 }, status: { ready: false } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.status, { ready: false });
    assert.equal(created.body.metadata.generation, 1);
    const status = await api(server, 'PATCH', `${base}/g`, { status: { ready: true } }, MERGE);
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.metadata.generation, 2);
    const labels = await api(server, 'PATCH', `${base}/g`, { metadata: { labels: { a: 'b' } } }, MERGE);
    assert.equal(labels.status, 200, labels.text);
    assert.equal(labels.body.metadata.generation, 2);
    const spec = await api(server, 'PATCH', `${base}/g`, { spec: { size: 2 } }, MERGE);
    assert.equal(spec.body.metadata.generation, 3);
  });

  test('each served group version has a local APIService while a CRD serves it, as crdregistration keeps them', async () => {
    const crd = widgetCrd('registered.example.com');
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v2', storage: false });
    await establish(crd);
    const apiServices = '/apis/apiregistration.k8s.io/v1/apiservices';
    for (const version of ['v1', 'v2']) {
      let got: Body = {};
      await waitFor(`${version}.registered.example.com registered`, async () => {
        got = await api(server, 'GET', `${apiServices}/${version}.registered.example.com`);
        return got.status === 200;
      });
      assert.deepEqual(got.body.spec, { group: 'registered.example.com', version, groupPriorityMinimum: 1000, versionPriority: 100 });
      assert.equal(got.body.metadata.labels['kube-aggregator.kubernetes.io/automanaged'], 'true');
    }
    await waitFor('v1.registered.example.com available', async () => {
      const got = await api(server, 'GET', `${apiServices}/v1.registered.example.com`);
      return got.body.status?.conditions?.find((c: Body) => c.type === 'Available')?.status === 'True';
    });
    // A version no longer served loses its APIService; the CRD's deletion takes the rest.
    const v2off = await api(server, 'PATCH', `${CRDS}/${crd.metadata.name}`, [{ op: 'replace', path: '/spec/versions/1/served', value: false }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(v2off.status, 200, v2off.text);
    await waitFor('v2.registered.example.com removed', async () => (await api(server, 'GET', `${apiServices}/v2.registered.example.com`)).status === 404);
    assert.equal((await api(server, 'GET', `${apiServices}/v1.registered.example.com`)).status, 200);
    assert.equal((await api(server, 'DELETE', `${CRDS}/${crd.metadata.name}`)).status, 200);
    await waitFor('v1.registered.example.com removed', async () => (await api(server, 'GET', `${apiServices}/v1.registered.example.com`)).status === 404);
  });

  test('cluster-scoped custom resources', async () => {
    await establish(widgetCrd('cluster.example.com', { scope: 'Cluster' }));
    const created = await api(server, 'POST', '/apis/cluster.example.com/v1/widgets', { apiVersion: 'cluster.example.com/v1', kind: 'Widget', metadata: { name: 'c' }, spec: { size: 2 } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.metadata.namespace, undefined);
    assert.equal((await api(server, 'GET', '/apis/cluster.example.com/v1/namespaces/x/widgets')).status, 404);
  });

  test('two served versions: objects read at either (None conversion), a deprecated version warns', async () => {
    const crd = widgetCrd('versions.example.com', { scope: 'Cluster' });
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [
      { ...v1, name: 'v1beta1', storage: false, deprecated: true, deprecationWarning: 'versions.example.com/v1beta1 Widget is old; use v1' },
      { ...v1, name: 'v1alpha1', storage: false, deprecated: true },
      v1,
    ];
    await establish(crd);
    const created = await api(server, 'POST', '/apis/versions.example.com/v1beta1/widgets', { apiVersion: 'versions.example.com/v1beta1', kind: 'Widget', metadata: { name: 'v' }, spec: { size: 2 } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.apiVersion, 'versions.example.com/v1beta1');
    assert.equal(created.headers.get('warning'), '299 - "versions.example.com/v1beta1 Widget is old; use v1"');
    const read = await api(server, 'GET', '/apis/versions.example.com/v1/widgets/v');
    assert.equal(read.status, 200, read.text);
    assert.deepEqual([read.body.apiVersion, read.body.spec.size, read.headers.get('warning')], ['versions.example.com/v1', 2, null]);
    const alpha = await api(server, 'GET', '/apis/versions.example.com/v1alpha1/widgets/v');
    assert.deepEqual([alpha.body.apiVersion, alpha.headers.get('warning')], ['versions.example.com/v1alpha1', '299 - "versions.example.com/v1alpha1 Widget is deprecated"']);
    const got = (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body;
    assert.deepEqual(got.status.storedVersions, ['v1']);
  });

  test('a storage version that is not served: objects are kept in its form, its path answers 404', async () => {
    const crd = widgetCrd('unserved.example.com', { scope: 'Cluster' });
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [{ ...v1, name: 'v1beta1', storage: false }, { ...v1, served: false }];
    await establish(crd);
    const created = await api(server, 'POST', '/apis/unserved.example.com/v1beta1/widgets', { apiVersion: 'unserved.example.com/v1beta1', kind: 'Widget', metadata: { name: 'u' }, spec: { size: 3 } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await api(server, 'GET', '/apis/unserved.example.com/v1beta1/widgets/u')).body.spec.size, 3);
    assert.equal((await api(server, 'GET', '/apis/unserved.example.com/v1/widgets/u')).status, 404);
    assert.deepEqual((await api(server, 'GET', '/apis/unserved.example.com')).body.versions.map((v: Body) => v.version), ['v1beta1']);
    // Discovery's storage version hash names the version objects are stored at: v1.
    const resources = (await api(server, 'GET', '/apis/unserved.example.com/v1beta1')).body.resources as Body[];
    const hash = createHash('sha256').update('unserved.example.com/v1/Widget').digest().subarray(0, 8).toString('base64');
    assert.equal(resources.find((r) => r.name === 'widgets')?.storageVersionHash, hash);
  });


  test('managers recorded at a version the CRD no longer lists are dropped on the next write; at a listed version not served, kept', async () => {
    const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
    const crd = widgetCrd('recorded.example.com', { scope: 'Cluster' });
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [{ ...v1, name: 'v1beta1', storage: false }, { ...v1, name: 'v1alpha1', storage: false }, v1];
    await establish(crd);
    const apply = (version: string, manager: string, spec: Body, force = false) =>
      api(server, 'PATCH', `/apis/recorded.example.com/${version}/widgets/w?fieldManager=${manager}${force ? '&force=true' : ''}`, { apiVersion: `recorded.example.com/${version}`, kind: 'Widget', metadata: { name: 'w' }, spec }, APPLY);
    assert.equal((await apply('v1beta1', 'beta', { size: 2 })).status, 201);
    assert.equal((await apply('v1alpha1', 'alpha', { colour: 'red' })).status, 200);
    assert.equal((await apply('v1', 'now', { label: 'a' })).status, 200);
    const managers = async () => ((await api(server, 'GET', '/apis/recorded.example.com/v1/widgets/w')).body.metadata.managedFields as Body[]).map((m) => `${m.manager}@${m.apiVersion}`).sort();
    assert.deepEqual(await managers(), ['alpha@recorded.example.com/v1alpha1', 'beta@recorded.example.com/v1beta1', 'now@recorded.example.com/v1']);

    // v1beta1 leaves the CRD; v1alpha1 stays listed but is no longer served.
    const current = (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body;
    current.spec.versions = current.spec.versions.filter((v: Body) => v.name !== 'v1beta1').map((v: Body) => (v.name === 'v1alpha1' ? { ...v, served: false } : v));
    const updated = await api(server, 'PUT', `${CRDS}/${crd.metadata.name}`, current);
    assert.equal(updated.status, 200, updated.text);
    await waitFor('v1beta1 and v1alpha1 no longer served', async () => (await api(server, 'GET', '/apis/recorded.example.com/v1beta1/widgets/w')).status === 404 && (await api(server, 'GET', '/apis/recorded.example.com/v1alpha1/widgets/w')).status === 404);

    // The beta manager's size is no one's now: another manager takes it without a conflict. The
    // alpha manager still owns the colour: taking it is a conflict naming it.
    const taken = await apply('v1', 'other', { size: 3 });
    assert.equal(taken.status, 200, taken.text);
    assert.deepEqual(await managers(), ['alpha@recorded.example.com/v1alpha1', 'now@recorded.example.com/v1', 'other@recorded.example.com/v1']);
    const conflict = await apply('v1', 'other', { size: 3, colour: 'blue' });
    assert.equal(conflict.status, 409, conflict.text);
    assert.match(conflict.body.message, /conflict with "alpha".*\.spec\.colour/s);
  });
  test('discovery and OpenAPI list the kind once established', async () => {
    await establish(widgetCrd('discovery.example.com'));
    const list = await api(server, 'GET', '/apis/discovery.example.com/v1');
    assert.equal(list.status, 200, list.text);
    const widgets = list.body.resources.find((r: Body) => r.name === 'widgets');
    assert.deepEqual([widgets.kind, widgets.namespaced, widgets.shortNames, widgets.categories], ['Widget', true, ['wdg'], ['gadgets']]);
    assert.ok(list.body.resources.some((r: Body) => r.name === 'widgets/status'));
    const groups = await api(server, 'GET', '/apis');
    assert.ok(groups.body.groups.some((g: Body) => g.name === 'discovery.example.com'));
    const aggregated = await api(server, 'GET', '/apis', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    assert.ok(aggregated.body.items.some((g: Body) => g.metadata.name === 'discovery.example.com'), aggregated.text);
    const v3 = await api(server, 'GET', '/openapi/v3/apis/discovery.example.com/v1');
    assert.equal(v3.status, 200, v3.text);
    assert.ok(v3.text.includes('/apis/discovery.example.com/v1/namespaces/{namespace}/widgets'));
  });

  test('watch: events of custom resources, from the list\'s resourceVersion on', async () => {
    await establish(widgetCrd('watch.example.com'));
    await ensureNamespace('watch');
    const base = '/apis/watch.example.com/v1/namespaces/watch/widgets';
    const rv = (await api(server, 'GET', base)).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${base}?watch=1&resourceVersion=${rv}`);
    try {
      assert.equal((await api(server, 'POST', base, { apiVersion: 'watch.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } })).status, 201);
      assert.equal((await api(server, 'PATCH', `${base}/w`, { spec: { size: 2 } }, MERGE)).status, 200);
      assert.equal((await api(server, 'DELETE', `${base}/w`)).status, 200);
      const events = await w.next(3);
      assert.deepEqual(events.map((e) => [e.type, e.object.kind, e.object.spec.size]), [['ADDED', 'Widget', 1], ['MODIFIED', 'Widget', 2], ['DELETED', 'Widget', 2]]);
    } finally {
      w.close();
    }
  });

  test('server-side apply merges a map-type list of the schema by its key', async () => {
    await establish(widgetCrd('apply.example.com'));
    await ensureNamespace('apply');
    const url = (manager: string) => `/apis/apply.example.com/v1/namespaces/apply/widgets/a?fieldManager=${manager}`;
    const body = (ports: Body[]) => ({ apiVersion: 'apply.example.com/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { size: 1, ports } });
    const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
    assert.equal((await api(server, 'PATCH', url('one'), body([{ name: 'http', number: 80 }]), APPLY)).status, 201);
    const second = await api(server, 'PATCH', url('two'), { apiVersion: 'apply.example.com/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { ports: [{ name: 'https', number: 443 }] } }, APPLY);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body.spec.ports, [{ name: 'http', number: 80 }, { name: 'https', number: 443 }]);
  });

  test('the garbage collector deletes a custom resource whose owner is gone; deleting a namespace deletes its custom resources', async () => {
    await establish(widgetCrd('owned.example.com'));
    await ensureNamespace('owned');
    const cm = await api(server, 'POST', '/api/v1/namespaces/owned/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    assert.equal(cm.status, 201, cm.text);
    const base = '/apis/owned.example.com/v1/namespaces/owned/widgets';
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: cm.body.metadata.uid }];
    assert.equal((await api(server, 'POST', base, { apiVersion: 'owned.example.com/v1', kind: 'Widget', metadata: { name: 'dependent', ownerReferences }, spec: { size: 1 } })).status, 201);
    assert.equal((await api(server, 'POST', base, { apiVersion: 'owned.example.com/v1', kind: 'Widget', metadata: { name: 'free' }, spec: { size: 1 } })).status, 201);
    assert.equal((await api(server, 'DELETE', '/api/v1/namespaces/owned/configmaps/owner')).status, 200);
    await waitFor('the dependent is collected', async () => (await api(server, 'GET', `${base}/dependent`)).status === 404);
    assert.equal((await api(server, 'GET', `${base}/free`)).status, 200);
    assert.equal((await api(server, 'DELETE', '/api/v1/namespaces/owned')).status, 200);
    await waitFor('the namespace is gone', async () => (await api(server, 'GET', '/api/v1/namespaces/owned')).status === 404);
    assert.deepEqual((await api(server, 'GET', '/apis/owned.example.com/v1/widgets')).body.items, []);
  });

  test('deleting the CRD deletes its custom resources and its paths; a new CRD starts empty', async () => {
    const crd = widgetCrd('deleted.example.com');
    await establish(crd);
    await ensureNamespace('deleted');
    const base = '/apis/deleted.example.com/v1/namespaces/deleted/widgets';
    for (const name of ['a', 'b']) assert.equal((await api(server, 'POST', base, { apiVersion: 'deleted.example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } })).status, 201);
    const del = await api(server, 'DELETE', `${CRDS}/${crd.metadata.name}`);
    assert.equal(del.status, 200, del.text);
    assert.equal(condition(del.body, 'Terminating')?.reason, 'InstanceDeletionPending');
    assert.deepEqual(del.body.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    await waitFor('the CRD is gone', async () => (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).status === 404);
    assert.equal((await api(server, 'GET', base)).status, 404);
    assert.equal((await api(server, 'GET', '/apis/deleted.example.com/v1')).status, 404);
    assert.ok(!(await api(server, 'GET', '/apis')).body.groups.some((g: Body) => g.name === 'deleted.example.com'));
    await establish(crd);
    const list = await api(server, 'GET', base);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items, []);
  });
});

describe('a CRD being deleted', () => {
  test('waits for custom resources with finalizers; meanwhile it is Terminating and creates are refused with 405', async () => {
    const crd = widgetCrd('terminating.example.com', { scope: 'Cluster' });
    await establish(crd);
    const base = '/apis/terminating.example.com/v1/widgets';
    const held = await api(server, 'POST', base, { apiVersion: 'terminating.example.com/v1', kind: 'Widget', metadata: { name: 'held', finalizers: ['example.com/hold'] }, spec: { size: 1 } });
    assert.equal(held.status, 201, held.text);
    assert.equal((await api(server, 'DELETE', `${CRDS}/${crd.metadata.name}`)).status, 200);
    await waitFor('deletion in progress', async () => condition((await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body, 'Terminating')?.reason === 'InstanceDeletionInProgress');
    const refused = await api(server, 'POST', base, { apiVersion: 'terminating.example.com/v1', kind: 'Widget', metadata: { name: 'late' }, spec: { size: 1 } });
    assert.equal(refused.status, 405, refused.text);
    assert.equal(refused.body.message, 'create not allowed while custom resource definition is terminating');
    assert.equal((await api(server, 'GET', `${base}/held`)).body.metadata.deletionTimestamp !== undefined, true);
    assert.equal((await api(server, 'PATCH', `${base}/held`, { metadata: { finalizers: null } }, MERGE)).status, 200);
    await waitFor('the CRD is gone', async () => (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).status === 404);
  });
});

describe('restart', () => {
  test('CRDs in storage are served again before a restarted server reports itself started', async () => {
    const dataDir = tempDir('crd-restart');
    const first = await startTrusted({ naming: 'kubernetes', dataDir });
    try {
      const crd = widgetCrd('restart.example.com', { scope: 'Cluster' });
      assert.equal((await api(first, 'POST', CRDS, crd)).status, 201);
      await waitFor('established', async () => condition((await api(first, 'GET', `${CRDS}/${crd.metadata.name}`)).body, 'Established')?.status === 'True');
      assert.equal((await api(first, 'POST', '/apis/restart.example.com/v1/widgets', { apiVersion: 'restart.example.com/v1', kind: 'Widget', metadata: { name: 'kept' }, spec: { size: 4 } })).status, 201);
    } finally {
      await first.close();
    }
    const second = await startTrusted({ naming: 'kubernetes', dataDir });
    try {
      const r = await api(second, 'GET', '/apis/restart.example.com/v1/widgets/kept');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.spec.size, 4);
    } finally {
      await second.close();
    }
  });
});
