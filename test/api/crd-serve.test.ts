// Serving custom resources (kubernetes profile): printer columns evaluated with kube's JSONPath,
// each served version's own columns and subresources, the `scale` subresource as autoscaling/v1
// Scale, `selectableFields` for field selectors, and CRDs loaded from files at start. One server
// for the file; each test its own group.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { api, startTrusted, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { widgetCrd, establishCrd } from '../support/crd.ts';
import { startServerProcess } from '../support/server-process.ts';
import { kubectl120, kubectlFor } from '../support/kubectl.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const server = await testServer({ naming: 'kubernetes' });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

const establish = (crd: Body): Promise<void> => establishCrd(server, crd);

/** A cluster-scoped Widget CRD whose schema keeps every field (`x-kubernetes-preserve-unknown-fields`). */
function openCrd(group: string, version: Body = {}): Body {
  const crd = widgetCrd(group, { scope: 'Cluster' });
  const v = crd.spec.versions[0];
  v.schema.openAPIV3Schema = {
    type: 'object',
    properties: {
      spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { replicas: { type: 'integer', maximum: 10 }, color: { type: 'string' }, size: { type: 'integer' }, big: { type: 'boolean' } } },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
  Object.assign(v, version);
  return crd;
}

const cells = (table: Body, name: string): unknown[] => table.rows.find((r: Body) => r.cells[0] === name)?.cells;

describe('printer columns', () => {
  test('evaluated with kube\'s JSONPath: filters, wildcards (first value), recursion, slices; typed cells, null when missing', async () => {
    const crd = openCrd('columns.example.com', {
      additionalPrinterColumns: [
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'First', type: 'string', jsonPath: '.spec.list[*].name' },
        { name: 'Second', type: 'string', jsonPath: '.spec.list[1:2].name' },
        { name: 'Deep', type: 'string', jsonPath: '..deepest' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Ratio', type: 'number', jsonPath: '.spec.ratio' },
        { name: 'Big', type: 'boolean', jsonPath: '.spec.big' },
        { name: 'Object', type: 'string', jsonPath: '.spec.obj', priority: 1 },
        { name: 'Missing', type: 'string', jsonPath: '.status.nothing' },
        { name: 'WrongType', type: 'integer', jsonPath: '.spec.color' },
        { name: 'Null', type: 'string', jsonPath: '.spec.nothing' },
        { name: 'Since', type: 'date', jsonPath: '.spec.since' },
      ],
    });
    await establish(crd);
    const base = '/apis/columns.example.com/v1/widgets';
    const spec = { replicas: 3, ratio: 1.5, big: true, color: 'red', nothing: null, since: 'yesterday', list: [{ name: 'a' }, { name: 'b' }], obj: { z: 1, a: '<x>' }, deep: { er: { deepest: 'found' } } };
    assert.equal((await api(server, 'POST', base, { apiVersion: 'columns.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec })).status, 201);
    const st = await api(server, 'PATCH', `${base}/w/status`, { status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] } }, MERGE);
    assert.equal(st.status, 200, st.text);
    const table = (await api(server, 'GET', base, undefined, TABLE)).body;
    assert.deepEqual(
      table.columnDefinitions.map((c: Body) => [c.name, c.type, c.priority]),
      [['Name', 'string', 0], ['Ready', 'string', 0], ['First', 'string', 0], ['Second', 'string', 0], ['Deep', 'string', 0], ['Replicas', 'integer', 0], ['Ratio', 'number', 0], ['Big', 'boolean', 0], ['Object', 'string', 1], ['Missing', 'string', 0], ['WrongType', 'integer', 0], ['Null', 'string', 0], ['Since', 'date', 0]],
    );
    assert.equal(table.columnDefinitions[1].description, 'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status');
    // Objects print as Go's encoding/json does (keys sorted, HTML escaped); a null value as <no value>.
    assert.deepEqual(cells(table, 'w'), ['w', 'True', 'a', 'b', 'found', 3, 1.5, true, '{"a":"\\u003cx\\u003e","z":1}', null, null, '<no value>', '<invalid>']);
  });

  test('a column path that is not JSONPath is accepted, as kube-apiserver accepts it (only the leading dot is checked); columns stop at the first such path', async () => {
    const crd = openCrd('badcolumn.example.com', {
      additionalPrinterColumns: [
        { name: 'Good', type: 'string', jsonPath: '.spec.color' },
        { name: 'Bad', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready"].status' },
        { name: 'After', type: 'string', jsonPath: '.spec.color' },
      ],
    });
    await establish(crd);
    const bad = await api(server, 'POST', CRDS, openCrd('nodot.example.com', { additionalPrinterColumns: [{ name: 'NoDot', type: 'string', jsonPath: 'spec.color' }] }));
    assert.equal(bad.status, 422, 'a path without its leading dot is refused');
    const base = '/apis/badcolumn.example.com/v1/widgets';
    assert.equal((await api(server, 'POST', base, { apiVersion: 'badcolumn.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { color: 'red' } })).status, 201);
    const table = (await api(server, 'GET', base, undefined, TABLE)).body;
    assert.deepEqual(table.columnDefinitions.map((c: Body) => c.name), ['Name', 'Good']);
  });
});

describe('per-version serving', () => {
  test('each served version has its own columns and subresources', async () => {
    const crd = openCrd('perversion.example.com', { additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }] });
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [v1, { ...structuredClone(v1), name: 'v2', storage: false, subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } }, additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }] }];
    await establish(crd);
    assert.equal((await api(server, 'POST', '/apis/perversion.example.com/v1/widgets', { apiVersion: 'perversion.example.com/v1', kind: 'Widget', metadata: { name: 'p' }, spec: { color: 'blue', size: 4, replicas: 1 } })).status, 201);
    const t1 = (await api(server, 'GET', '/apis/perversion.example.com/v1/widgets', undefined, TABLE)).body;
    const t2 = (await api(server, 'GET', '/apis/perversion.example.com/v2/widgets', undefined, TABLE)).body;
    assert.deepEqual([t1.columnDefinitions.map((c: Body) => c.name), cells(t1, 'p')], [['Name', 'Color'], ['p', 'blue']]);
    assert.deepEqual([t2.columnDefinitions.map((c: Body) => c.name), cells(t2, 'p')], [['Name', 'Size'], ['p', 4]]);
    // v1 has status and no scale; v2 the other way round.
    assert.equal((await api(server, 'GET', '/apis/perversion.example.com/v1/widgets/p/status')).status, 200);
    assert.equal((await api(server, 'GET', '/apis/perversion.example.com/v1/widgets/p/scale')).status, 404);
    assert.equal((await api(server, 'GET', '/apis/perversion.example.com/v2/widgets/p/status')).status, 404);
    assert.equal((await api(server, 'GET', '/apis/perversion.example.com/v2/widgets/p/scale')).body.spec.replicas, 1);
    // Without a status subresource, a write at v2 may set status.
    const put = await api(server, 'PATCH', '/apis/perversion.example.com/v2/widgets/p', { status: { replicas: 2 } }, MERGE);
    assert.equal(put.body.status?.replicas, 2, put.text);
    const names = async (v: string) => (await api(server, 'GET', `/apis/perversion.example.com/${v}`)).body.resources.map((r: Body) => r.name);
    assert.deepEqual(await names('v1'), ['widgets', 'widgets/status']);
    assert.deepEqual(await names('v2'), ['widgets', 'widgets/scale']);
  });
});

describe('the scale subresource', () => {
  const scaled = (group: string) =>
    openCrd(group, { subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } } });

  test('GET, PUT and PATCH as autoscaling/v1 Scale; the replicas land in the custom resource', async () => {
    await establish(scaled('scale.example.com'));
    const base = '/apis/scale.example.com/v1/widgets';
    const created = await api(server, 'POST', base, { apiVersion: 'scale.example.com/v1', kind: 'Widget', metadata: { name: 's' }, spec: { replicas: 2 } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await api(server, 'PATCH', `${base}/s/status`, { status: { replicas: 1, selector: 'app=s' } }, MERGE)).status, 200);
    const got = await api(server, 'GET', `${base}/s/scale`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual({ ...got.body, metadata: { name: got.body.metadata.name, uid: got.body.metadata.uid } }, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 's', uid: created.body.metadata.uid },
      spec: { replicas: 2 },
      status: { replicas: 1, selector: 'app=s' },
    });
    const put = await api(server, 'PUT', `${base}/s/scale`, { ...got.body, spec: { replicas: 5 } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual([put.body.kind, put.body.spec.replicas], ['Scale', 5]);
    const cr = (await api(server, 'GET', `${base}/s`)).body;
    assert.equal(cr.spec.replicas, 5);
    assert.ok(cr.metadata.managedFields.some((m: Body) => m.subresource === 'scale'), JSON.stringify(cr.metadata.managedFields));
    const patched = await api(server, 'PATCH', `${base}/s/scale`, { spec: { replicas: 7 } }, MERGE);
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await api(server, 'GET', `${base}/s`)).body.spec.replicas, 7);
    // A stale resourceVersion conflicts; the CR's own schema still holds; negative counts are refused.
    const stale = await api(server, 'PUT', `${base}/s/scale`, { ...got.body, spec: { replicas: 3 } });
    assert.equal(stale.status, 409, stale.text);
    const tooMany = await api(server, 'PATCH', `${base}/s/scale`, { spec: { replicas: 11 } }, MERGE);
    assert.equal(tooMany.status, 422, tooMany.text);
    assert.match(tooMany.body.message, /spec\.replicas: Invalid value: 11: spec\.replicas in body should be less than or equal to 10/);
    const negative = await api(server, 'PATCH', `${base}/s/scale`, { spec: { replicas: -1 } }, MERGE);
    assert.equal(negative.status, 422, negative.text);
    assert.equal(negative.body.message, 'Widget.scale.example.com "s" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer');
    const smp = await api(server, 'PATCH', `${base}/s/scale`, { spec: { replicas: 1 } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415, smp.text);
    assert.equal((await api(server, 'GET', `${base}/s`)).body.spec.replicas, 7);
    assert.equal((await api(server, 'GET', `${base}/nope/scale`)).status, 404);
  });

  test('server-side apply of the Scale: ownership of the replicas maps to and from the object, conflicts, force', async () => {
    await establish(scaled('applyscale.example.com'));
    const base = '/apis/applyscale.example.com/v1/widgets';
    const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
    const scale = (replicas: number) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'a' }, spec: { replicas } });
    const managers = async () =>
      ((await api(server, 'GET', `${base}/a`)).body.metadata.managedFields as Body[]).map(({ time, ...e }): Body => ({ ...e, timed: time !== undefined }));
    const created = await api(server, 'POST', `${base}?fieldManager=creator`, { apiVersion: 'applyscale.example.com/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { replicas: 2, color: 'red' } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await api(server, 'PATCH', `${base}/a/status?fieldManager=status-writer`, { status: { replicas: 2 } }, MERGE)).status, 200);

    // The creator owns the object's replicas, so it owns the Scale's: a different count conflicts.
    const conflict = await api(server, 'PATCH', `${base}/a/scale?fieldManager=scaler`, JSON.stringify(scale(3)), APPLY);
    assert.equal(conflict.status, 409, conflict.text);
    assert.deepEqual([conflict.body.reason, conflict.body.message], ['Conflict', 'Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.replicas']);
    assert.deepEqual(conflict.body.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "creator" using autoscaling/v1', field: '.spec.replicas' }]);
    assert.equal((await api(server, 'GET', `${base}/a`)).body.spec.replicas, 2);

    // Forced: the applier takes the replicas; the creator keeps the rest of what it wrote.
    const forced = await api(server, 'PATCH', `${base}/a/scale?fieldManager=scaler&force=true`, JSON.stringify(scale(3)), APPLY);
    assert.equal(forced.status, 200, forced.text);
    assert.deepEqual([forced.body.kind, forced.body.spec, forced.body.status], ['Scale', { replicas: 3 }, { replicas: 2 }]);
    assert.equal(forced.body.metadata.managedFields, undefined);
    assert.equal((await api(server, 'GET', `${base}/a`)).body.spec.replicas, 3);
    assert.deepEqual(await managers(), [
      { manager: 'scaler', operation: 'Apply', apiVersion: 'applyscale.example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } }, subresource: 'scale', timed: false },
      { manager: 'creator', operation: 'Update', apiVersion: 'applyscale.example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:color': {} } }, timed: true },
      { manager: 'status-writer', operation: 'Update', apiVersion: 'applyscale.example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { '.': {}, 'f:replicas': {} } }, subresource: 'status', timed: true },
    ]);

    // Another applier conflicts with the one that applied through /scale.
    const other = await api(server, 'PATCH', `${base}/a/scale?fieldManager=other`, JSON.stringify(scale(5)), APPLY);
    assert.equal(other.status, 409, other.text);
    assert.equal(other.body.message, 'Apply failed with 1 conflict: conflict with "scaler" with subresource "scale": .spec.replicas');
    // The owner applies again freely; on the main resource the creator now conflicts with it.
    assert.equal((await api(server, 'PATCH', `${base}/a/scale?fieldManager=scaler`, JSON.stringify(scale(4)), APPLY)).status, 200);
    const main = await api(server, 'PATCH', `${base}/a?fieldManager=creator`, JSON.stringify({ apiVersion: 'applyscale.example.com/v1', kind: 'Widget', metadata: { name: 'a' }, spec: { replicas: 1 } }), APPLY);
    assert.equal(main.status, 409, main.text);
    assert.equal(main.body.message, 'Apply failed with 1 conflict: conflict with "scaler" with subresource "scale": .spec.replicas');

    // An update through /scale (kubectl scale) takes the replicas from the applier.
    const scaled2 = await api(server, 'PATCH', `${base}/a/scale?fieldManager=kubectl`, { spec: { replicas: 6 } }, MERGE);
    assert.equal(scaled2.status, 200, scaled2.text);
    const after = await managers();
    assert.equal(after.find((e) => e.manager === 'scaler'), undefined, JSON.stringify(after));
    assert.deepEqual(
      after.find((e) => e.manager === 'kubectl'),
      { manager: 'kubectl', operation: 'Update', apiVersion: 'applyscale.example.com/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } }, subresource: 'scale', timed: false },
    );
    assert.equal((await api(server, 'GET', `${base}/a`)).body.spec.replicas, 6);

    // The Scale's version, kind and name are checked as for any apply; strategic merge stays refused.
    const wrongVersion = await api(server, 'PATCH', `${base}/a/scale?fieldManager=scaler`, JSON.stringify({ ...scale(2), apiVersion: 'applyscale.example.com/v1' }), APPLY);
    assert.deepEqual([wrongVersion.status, wrongVersion.body.message], [400, 'Incorrect version specified in apply patch. Specified patch version: applyscale.example.com/v1, expected: autoscaling/v1']);
    const noManager = await api(server, 'PATCH', `${base}/a/scale`, JSON.stringify(scale(2)), APPLY);
    assert.equal(noManager.status, 422, noManager.text);
    const smp = await api(server, 'PATCH', `${base}/a/scale`, { spec: { replicas: 1 } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 415, smp.text);
    assert.match(smp.body.message, /application\/apply-patch\+yaml/);
    assert.equal((await api(server, 'GET', `${base}/a`)).body.spec.replicas, 6);
  });

  test('replicas ownership through /scale as kube-apiserver keeps it: apply, force, replace, co-owning, scale again, status only', async () => {
    const crd = widgetCrd('owners.example.com');
    const v = crd.spec.versions[0];
    v.schema.openAPIV3Schema.properties.spec.properties.replicas = { type: 'integer' };
    v.schema.openAPIV3Schema.properties.status.properties.replicas = { type: 'integer' };
    v.subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    await establish(crd);
    const item = '/apis/owners.example.com/v1/namespaces/default/widgets/test';
    const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
    const widget = JSON.stringify({ apiVersion: 'owners.example.com/v1', kind: 'Widget', metadata: { name: 'test' }, spec: { size: 1, replicas: 1 } });
    const scale = (replicas: number) => JSON.stringify({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'test', namespace: 'default' }, spec: { replicas } });
    const ok = async (r: Promise<{ status: number; text: string }>) => {
      const got = await r;
      assert.equal(got.status, 200, got.text);
    };
    const owners = async (replicas: number) => {
      const cr = (await api(server, 'GET', item)).body;
      assert.equal(cr.spec.replicas, replicas);
      return (cr.metadata.managedFields as Body[]).filter((e) => e.fieldsV1['f:spec']?.['f:replicas']).map((e) => e.manager).sort();
    };
    assert.equal((await api(server, 'PATCH', `${item}?fieldManager=apply_test`, widget, APPLY)).status, 201);
    assert.deepEqual(await owners(1), ['apply_test']);
    await ok(api(server, 'PATCH', `${item}/scale?fieldManager=scale_test`, { spec: { replicas: 5 } }, MERGE));
    assert.deepEqual(await owners(5), ['scale_test']);
    // Re-applying the object conflicts over the replicas; forced, the applier owns them again.
    const again = await api(server, 'PATCH', `${item}?fieldManager=apply_test`, widget, APPLY);
    assert.deepEqual([again.status, again.body.message], [409, 'Apply failed with 1 conflict: conflict with "scale_test" with subresource "scale" using owners.example.com/v1: .spec.replicas']);
    await ok(api(server, 'PATCH', `${item}?fieldManager=apply_test&force=true`, widget, APPLY));
    assert.deepEqual(await owners(1), ['apply_test']);
    // An applied Scale with other replicas conflicts with the object's applier; forced, it owns them.
    const applied = await api(server, 'PATCH', `${item}/scale?fieldManager=apply_scale`, scale(17), APPLY);
    assert.deepEqual([applied.status, applied.body.message], [409, 'Apply failed with 1 conflict: conflict with "apply_test": .spec.replicas']);
    await ok(api(server, 'PATCH', `${item}/scale?fieldManager=apply_scale&force=true`, scale(17), APPLY));
    assert.deepEqual(await owners(17), ['apply_scale']);
    await ok(api(server, 'PUT', `${item}/scale?fieldManager=replace_test`, scale(7)));
    assert.deepEqual(await owners(7), ['replace_test']);
    // The same count applied: both own it. Scaling again: one owner.
    await ok(api(server, 'PATCH', `${item}/scale?fieldManager=co_owning_test`, scale(7), APPLY));
    assert.deepEqual(await owners(7), ['co_owning_test', 'replace_test']);
    await ok(api(server, 'PATCH', `${item}/scale?fieldManager=scale_test`, { spec: { replicas: 5 } }, MERGE));
    assert.deepEqual(await owners(5), ['scale_test']);
    // A write of the Scale's status alone changes neither the replicas nor their owner.
    await ok(api(server, 'PATCH', `${item}/scale?fieldManager=status_test`, { status: { replicas: 42 } }, MERGE));
    assert.deepEqual(await owners(5), ['scale_test']);
  });

  test('an object without desired replicas: GET is an internal error, a PATCH that sets them works', async () => {
    await establish(scaled('noreplicas.example.com'));
    const base = '/apis/noreplicas.example.com/v1/widgets';
    assert.equal((await api(server, 'POST', base, { apiVersion: 'noreplicas.example.com/v1', kind: 'Widget', metadata: { name: 'n' }, spec: {} })).status, 201);
    const got = await api(server, 'GET', `${base}/n/scale`);
    assert.deepEqual([got.status, got.body.reason, got.body.message], [500, 'InternalError', 'Internal error occurred: the spec replicas field ".spec.replicas" does not exist']);
    const empty = await api(server, 'PATCH', `${base}/n/scale`, { metadata: { labels: { a: 'b' } } }, MERGE);
    assert.deepEqual([empty.status, empty.body.message], [400, 'the spec replicas field ".spec.replicas" cannot be empty']);
    const set = await api(server, 'PATCH', `${base}/n/scale`, { spec: { replicas: 2 } }, MERGE);
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.status, { replicas: 0 });
  });

  test('discovery names the subresource\'s kind autoscaling/v1 Scale, legacy and aggregated', async () => {
    await establish(scaled('scalediscovery.example.com'));
    const legacy = (await api(server, 'GET', '/apis/scalediscovery.example.com/v1')).body.resources.find((r: Body) => r.name === 'widgets/scale');
    assert.deepEqual(legacy, { name: 'widgets/scale', singularName: '', namespaced: false, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    const aggregated = (await api(server, 'GET', '/apis', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).body;
    const group = aggregated.items.find((g: Body) => g.metadata.name === 'scalediscovery.example.com');
    const sub = group.versions[0].resources[0].subresources.find((s: Body) => s.subresource === 'scale');
    assert.deepEqual(sub.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
    // OpenAPI: the subresource's operations read and write the Scale.
    const v3 = (await api(server, 'GET', '/openapi/v3/apis/scalediscovery.example.com/v1')).body;
    const path = v3.paths['/apis/scalediscovery.example.com/v1/widgets/{name}/scale'];
    assert.equal(path.get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/io.k8s.autoscaling.v1.Scale');
    assert.deepEqual(Object.keys(path.patch.requestBody.content), ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    assert.deepEqual(Object.keys(v3.components.schemas['io.k8s.autoscaling.v1.Scale'].properties).sort(), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  });
});

describe('selectable fields', () => {
  const shirts = () =>
    openCrd('selectable.example.com', { selectableFields: [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.size' }, { jsonPath: '.spec.big' }] });

  test('list, watch and deletecollection by the fields the version lists; others are refused as kube refuses them', async () => {
    await establish(shirts());
    const base = '/apis/selectable.example.com/v1/widgets';
    const w = readWatch(`${server.url}${base}?watch=1&fieldSelector=spec.color%3Dblue`);
    try {
      for (const [name, color, size, big] of [['one', 'blue', 2, true], ['two', 'blue', 3, false], ['three', 'green', 2, false]] as const)
        assert.equal((await api(server, 'POST', base, { apiVersion: 'selectable.example.com/v1', kind: 'Widget', metadata: { name }, spec: { color, size, big } })).status, 201);
      const list = async (sel: string) => ((await api(server, 'GET', `${base}?fieldSelector=${encodeURIComponent(sel)}`)).body.items as Body[]).map((i) => i.metadata.name).sort();
      assert.deepEqual(await list('spec.color=blue'), ['one', 'two']);
      assert.deepEqual(await list('spec.size=2'), ['one', 'three']);
      assert.deepEqual(await list('spec.big=false,spec.color!=green'), ['two']);
      const events = await w.next(2);
      assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'one'], ['ADDED', 'two']]);
    } finally {
      w.close();
    }
    const bad = await api(server, 'GET', `${base}?fieldSelector=spec.nosuchfield%3Dxyz`);
    assert.deepEqual([bad.status, bad.body.reason, bad.body.message], [400, 'BadRequest', 'field label not supported: spec.nosuchfield']);
    const badWatch = await api(server, 'GET', `${base}?watch=1&fieldSelector=spec.nosuchfield%3Dxyz`);
    assert.equal(badWatch.status, 400, badWatch.text);
    assert.equal((await api(server, 'DELETE', `${base}?fieldSelector=spec.color%3Dgreen`)).status, 200);
    assert.deepEqual(((await api(server, 'GET', base)).body.items as Body[]).map((i) => i.metadata.name).sort(), ['one', 'two']);
  });

  test('published in OpenAPI v3 and v2 as x-kubernetes-selectable-fields', async () => {
    const crd = shirts();
    crd.metadata.name = 'widgets.selectableapi.example.com';
    crd.spec.group = 'selectableapi.example.com';
    await establish(crd);
    const v3 = await api(server, 'GET', '/openapi/v3/apis/selectableapi.example.com/v1');
    assert.deepEqual(v3.body.components.schemas['com.example.selectableapi.v1.Widget']['x-kubernetes-selectable-fields'], [{ fieldPath: 'spec.color' }, { fieldPath: 'spec.size' }, { fieldPath: 'spec.big' }]);
    const v2 = await api(server, 'GET', '/openapi/v2');
    assert.deepEqual(v2.body.definitions['com.example.selectableapi.v1.Widget']['x-kubernetes-selectable-fields'], [{ fieldPath: 'spec.color' }, { fieldPath: 'spec.size' }, { fieldPath: 'spec.big' }]);
  });

  test('a CRD\'s selectable fields must be string, integer or boolean fields of its schema, outside metadata, once each', async () => {
    const crd = openCrd('badselect.example.com', { selectableFields: [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.color' }, { jsonPath: '.spec.nope' }, { jsonPath: '.status' }, { jsonPath: '.metadata.name' }] });
    const r = await api(server, 'POST', CRDS, crd);
    assert.equal(r.status, 422, r.text);
    const at = 'spec.versions[0].selectableFields';
    assert.deepEqual(r.body.details.causes.map((c: Body) => [c.field, c.message]), [
      [`${at}[1].jsonPath`, 'Duplicate value: ".spec.color"'],
      [`${at}[2].jsonPath`, 'Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field'],
      [`${at}[3].jsonPath`, 'Invalid value: ".status": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'],
      [`${at}[4].jsonPath`, 'Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field'],
    ]);
  });
});

describe('OpenAPI', () => {
  test('a custom resource\'s schema is published inline, as kube-apiserver publishes it: only ObjectMeta is a reference, at the top and in embedded resources', async () => {
    const group = 'inlineapi.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    props.template = { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } } };
    props.limit = { 'x-kubernetes-int-or-string': true, pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' };
    await establish(crd);
    const meta = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
    const v3 = (await api(server, 'GET', `/openapi/v3/apis/${group}/v1`)).body;
    assert.deepEqual(Object.keys(v3.components.schemas).filter((n) => n.startsWith('com.example.')).sort(), ['com.example.inlineapi.v1.Widget', 'com.example.inlineapi.v1.WidgetList']);
    const widget = v3.components.schemas['com.example.inlineapi.v1.Widget'];
    assert.equal(JSON.stringify(widget.properties.metadata).includes(meta), true, JSON.stringify(widget.properties.metadata));
    const spec = widget.properties.spec;
    assert.equal(spec.type, 'object');
    assert.equal(spec.properties.ports.items.properties.number.type, 'integer');
    assert.deepEqual(spec.properties.template.properties.metadata, { $ref: meta });
    assert.equal(spec.properties.template.properties.spec.properties.image.type, 'string');
    assert.equal(spec.properties.limit.$ref, undefined, JSON.stringify(spec.properties.limit));
    const v2 = (await api(server, 'GET', '/openapi/v2')).body;
    assert.deepEqual(Object.keys(v2.definitions).filter((n) => n.startsWith('com.example.inlineapi.')).sort(), ['com.example.inlineapi.v1.Widget', 'com.example.inlineapi.v1.WidgetList']);
    assert.equal(v2.definitions['com.example.inlineapi.v1.Widget'].properties.spec.properties.template.properties.spec.properties.image.type, 'string');
    // kubectl explain says what kube's says: a nested field is an Object.
    const out = await kubectlFor(server, { label: 'explain-crd' }).ok(['explain', `widgets.${group}.spec.template`]);
    assert.match(out, /FIELD: +template <Object>/);
  });
});

describe('OpenAPI v2', () => {
  test('a custom resource is published for kubectl\'s client-side validation as kube-apiserver publishes it: nullable and unknown-keeping nodes open, a root keeping unknown fields only an object', async () => {
    const group = 'v2api.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const specSchema = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    specSchema.required = ['size', 'maybe'];
    specSchema.properties.maybe = { type: 'string', nullable: true };
    specSchema.properties.free = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } };
    specSchema.properties.template = { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, properties: { spec: { type: 'object' } } };
    await establish(crd);
    const open = openCrd('v2open.example.com');
    open.spec.versions[0].schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] = true;
    await establish(open);
    const defs = (await api(server, 'GET', '/openapi/v2')).body.definitions;
    const spec = defs['com.example.v2api.v1.Widget'].properties.spec;
    assert.deepEqual(spec.required, ['size']);
    assert.deepEqual(spec.properties.maybe, {});
    assert.deepEqual(spec.properties.free, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(Object.keys(spec.properties.template.properties).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual([...spec.properties.template.required].sort(), ['apiVersion', 'kind']);
    assert.equal(spec.properties.size.type, 'integer');
    const openKind = defs['com.example.v2open.v1.Widget'];
    assert.equal(openKind.type, 'object');
    assert.equal(openKind.properties, undefined);
    // v3 keeps the schema as written.
    const v3 = (await api(server, 'GET', `/openapi/v3/apis/${group}/v1`)).body.components.schemas['com.example.v2api.v1.Widget'].properties.spec;
    assert.deepEqual([v3.required, v3.properties.maybe.type, v3.properties.free.properties.known.type], [['size', 'maybe'], 'string', 'string']);

    // kubectl 1.20 validates against v2 before it sends: what the server takes, it lets through.
    const k = kubectlFor(server, { bin: kubectl120(), label: 'v2-validation' });
    const manifest = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 2, maybe: null, free: { known: 'a', other: 1 }, template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } } };
    await k.ok(['apply', '-f', '-'], JSON.stringify(manifest));
    assert.equal((await api(server, 'GET', `/apis/${group}/v1/widgets/w`)).body.spec.free.other, 1);
  });
});

describe('CRD files at start', () => {
  test('startServer({ crds }) loads files and directories of YAML and JSON (several documents in one) and returns with every CRD established', async () => {
    const dir = tempDir('crd-files');
    mkdirSync(join(dir, 'more'));
    const a = widgetCrd('files-a.example.com');
    const b = widgetCrd('files-b.example.com', { scope: 'Cluster' });
    const c = widgetCrd('files-c.example.com');
    writeFileSync(join(dir, 'two.yaml'), `${stringify(a)}---\n${stringify(b)}`);
    writeFileSync(join(dir, 'more', 'c.json'), JSON.stringify(c));
    writeFileSync(join(dir, 'more', 'notes.txt'), 'not a manifest');
    const s = await startTrusted({ naming: 'kubernetes', crds: [join(dir, 'two.yaml'), join(dir, 'more')] });
    try {
      for (const g of ['files-a', 'files-b', 'files-c']) assert.equal((await api(s, 'GET', `/apis/${g}.example.com/v1/widgets`)).status, 200, g);
    } finally {
      await s.close();
    }
  });

  test('the command: --crd-dir, and it says it serves only once the CRDs are established', async () => {
    const dir = tempDir('crd-cli');
    writeFileSync(join(dir, 'cli.yaml'), stringify(widgetCrd('cli.example.com', { scope: 'Cluster' })));
    const p = await startServerProcess([`--data-dir=${join(dir, 'data')}`, '--naming=kubernetes', `--crd-dir=${dir}`]);
    try {
      // Ready means served: the first request after the banner finds the kind.
      assert.equal((await api(p, 'GET', '/apis/cli.example.com/v1/widgets')).status, 200);
    } finally {
      await p.kill();
    }
  });

  test('a restart on the same data with a changed file serves the file\'s CRD, as stored before, updated', async () => {
    const dir = tempDir('crd-restart');
    const crd = widgetCrd('restart.example.com', { scope: 'Cluster' });
    writeFileSync(join(dir, 'crd.yaml'), stringify(crd));
    const args = [`--data-dir=${join(dir, 'data')}`, '--naming=kubernetes', `--crd-dir=${dir}`];
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    let first = await startServerProcess(args);
    let uid: string;
    try {
      const stored = (await api(first, 'GET', path)).body as { metadata: { uid: string } };
      uid = stored.metadata.uid;
    } finally {
      await first.kill();
    }
    crd.spec.versions[0].additionalPrinterColumns.push({ name: 'Colour', type: 'string', jsonPath: '.spec.colour' });
    writeFileSync(join(dir, 'crd.yaml'), stringify(crd));
    first = await startServerProcess(args);
    try {
      const r = await api(first, 'GET', path);
      const again = r.body as { metadata: { uid: string }; spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } };
      assert.equal(again.metadata.uid, uid, 'the stored CRD was updated, not made anew');
      assert.ok(again.spec.versions[0]!.additionalPrinterColumns.some((c) => c.name === 'Colour'), JSON.stringify(again.spec.versions[0]));
      assert.equal((await api(first, 'GET', '/apis/restart.example.com/v1/widgets')).status, 200);
    } finally {
      await first.kill();
    }
  });

  test('a bad file is a start-up error with one clear line', async () => {
    const dir = tempDir('crd-bad');
    writeFileSync(join(dir, 'bad.yaml'), stringify({ ...widgetCrd('bad.example.com'), metadata: { name: 'wrong.example.com' } }));
    // (A server that starts anyway is closed, so the file still ends.)
    const starting = (crds: string[]) => startTrusted({ naming: 'kubernetes', crds }).then(async (s) => void (await s.close()));
    await assert.rejects(starting([dir]), (e: Error) => {
      assert.match(e.message, /^CRD file .*bad\.yaml: CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: metadata.name: Invalid value/);
      assert.ok(!e.message.includes('\n'), e.message);
      return true;
    });
    await assert.rejects(starting([join(dir, 'missing.yaml')]), /^Error: CRD file .*missing\.yaml: no such file or directory$/);
  });
});
