// What a CRD's openAPIV3Schema means for its custom resources, over HTTP (kubernetes profile):
// values checked as kube-apiserver checks them (anyOf / oneOf / not, formats, nullable,
// int-or-string, embedded resources, list types, type errors as 422 Invalid), defaults on write
// and on read, ratcheting of unchanged invalid values, and the CRD validation around the schema.
// One server for the file; each test its own group.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;
type Response = { status: number; body: any; text: string };

const server = await testServer({ naming: 'kubernetes' });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

/** A namespaced-less (cluster-scoped) Thing CRD in `group` whose `spec` has the given schema. */
function thingCrd(group: string, spec: Body, extra: { status?: boolean; root?: Body; version?: Body } = {}): Body {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, ...extra.root } },
          ...(extra.status ? { subresources: { status: {} } } : {}),
          ...extra.version,
        },
      ],
    },
  };
}

async function establish(crd: Body): Promise<Body> {
  const r = await api(server, 'POST', CRDS, crd);
  assert.equal(r.status, 201, r.text);
  let got: Body = r.body;
  await waitFor(`${crd.metadata.name} established`, async () => {
    got = (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body;
    return got.status?.conditions?.some((c: Body) => c.type === 'Established' && c.status === 'True') ?? false;
  });
  return got;
}

/** The causes of a 422 as [reason, field, message]. */
function causes(r: Response): [string, string, string][] {
  assert.equal(r.status, 422, r.text);
  return (r.body.details.causes as Body[]).map((c) => [c.reason, c.field, c.message]);
}

const thing = (group: string, name: string, spec: unknown, more: Body = {}): Body => ({ apiVersion: `${group}/v1`, kind: 'Thing', metadata: { name }, spec, ...more });
const things = (group: string) => `/apis/${group}/v1/things`;

describe('custom resources are validated by their schema as kube-apiserver validates them', () => {
  test('a value of the wrong type is 422 Invalid with its field path, and nothing is stored', async () => {
    const g = 'types.example.com';
    await establish(thingCrd(g, { type: 'object', properties: { size: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, port: { 'x-kubernetes-int-or-string': true } } }));
    const r = await api(server, 'POST', things(g), thing(g, 't1', { size: 'big', tags: ['a', 3], port: true }));
    assert.deepEqual(causes(r), [
      ['FieldValueTypeInvalid', 'spec.size', 'Invalid value: "string": spec.size in body must be of type integer: "string"'],
      ['FieldValueTypeInvalid', 'spec.tags[1]', 'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"'],
      ['FieldValueTypeInvalid', 'spec.port', 'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'],
    ]);
    assert.equal(r.body.message.startsWith('Thing.types.example.com "t1" is invalid: ['), true, r.body.message);
    assert.equal((await api(server, 'GET', `${things(g)}/t1`)).status, 404);
    // int-or-string takes either; a patch to a wrong type is refused the same way.
    assert.equal((await api(server, 'POST', things(g), thing(g, 't2', { size: 1, port: 'http' }))).status, 201);
    const p = await api(server, 'PATCH', `${things(g)}/t2`, { spec: { size: [1] } }, MERGE);
    assert.deepEqual(causes(p).map(([r, f]) => `${r} ${f}`), ['FieldValueTypeInvalid spec.size']);
  });

  test('anyOf, oneOf, not and allOf are enforced with kube-openapi\'s messages', async () => {
    const g = 'junctors.example.com';
    await establish(
      thingCrd(g, {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'integer' } },
        anyOf: [{ required: ['a'] }, { required: ['b'] }],
        oneOf: [{ required: ['a'] }, { required: ['c'] }],
        not: { required: ['b', 'c'] },
        allOf: [{ properties: { c: { maximum: 5 } } }],
      }),
    );
    const found = (spec: Body) => api(server, 'POST', things(g), thing(g, 'x', spec)).then(causes);
    assert.deepEqual(await found({ c: 1, b: 'x' }), [
      ['FieldValueInvalid', '<nil>', 'Invalid value: "": "spec" must not validate the schema (not)'],
    ]);
    assert.deepEqual(await found({ c: 1 }), [
      ['FieldValueInvalid', '<nil>', 'Invalid value: "": "spec" must validate at least one schema (anyOf)'],
      ['FieldValueRequired', 'spec.a', 'Required value'],
    ]);
    assert.deepEqual(await found({ a: 'x', c: 1 }), [['FieldValueInvalid', '<nil>', 'Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives']]);
    assert.deepEqual(await found({ a: 'x', c: 7 }), [
      ['FieldValueInvalid', '<nil>', 'Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives'],
      ['FieldValueInvalid', 'spec.c', 'Invalid value: 7: spec.c in body should be less than or equal to 5'],
      ['FieldValueInvalid', '<nil>', 'Invalid value: "": "spec" must validate all the schemas (allOf). None validated'],
    ]);
    assert.equal((await api(server, 'POST', things(g), thing(g, 'ok', { a: 'x' }))).status, 201);
  });

  test('every format kube-apiserver knows is checked; unknown formats are ignored', async () => {
    const g = 'formats.example.com';
    const formats = ['email', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'hostname', 'uri', 'date', 'date-time', 'duration', 'byte', 'k8s-short-name', 'not-a-format'];
    await establish(thingCrd(g, { type: 'object', properties: Object.fromEntries(formats.map((f) => [f.replaceAll('-', ''), { type: 'string', format: f }])) }));
    const good = { email: 'a@b.example', ipv4: '10.0.0.1', ipv6: 'fd00::1', cidr: '10.0.0.0/8', mac: '00:1a:2b:3c:4d:5e', uuid: '123e4567-e89b-12d3-a456-426614174000', hostname: 'api.example.com', uri: 'https://example.com/x', date: '2024-02-29', datetime: '2024-02-29T10:00:00Z', duration: '1h30m', byte: 'aGVsbG8=', k8sshortname: 'web-1', notaformat: 'anything' };
    const ok = await api(server, 'POST', things(g), thing(g, 'good', good));
    assert.equal(ok.status, 201, ok.text);
    const bad = { email: 'nope', ipv4: '10.0.0.300', ipv6: '10.0.0.1', cidr: '10.0.0.0/33', mac: '00:1a', uuid: 'xyz', hostname: '-bad-', uri: 'no scheme', date: '2023-02-29', datetime: 'yesterday', duration: 'soon', byte: 'not base64!', k8sshortname: 'Web_1', notaformat: 'anything' };
    const found = causes(await api(server, 'POST', things(g), thing(g, 'bad', bad)));
    assert.deepEqual(
      found.map(([r, f]) => `${r} ${f}`),
      formats.filter((f) => f !== 'not-a-format').map((f) => `FieldValueTypeInvalid spec.${f.replaceAll('-', '')}`),
    );
    assert.ok(found.some(([, , m]) => m === 'Invalid value: "nope": spec.email in body must be of type email: "nope"'), JSON.stringify(found));
  });

  test('nullable: null is kept where nullable, dropped where not, refused as an array item', async () => {
    const g = 'nullable.example.com';
    await establish(thingCrd(g, { type: 'object', properties: { maybe: { type: 'string', nullable: true }, never: { type: 'string' }, list: { type: 'array', items: { type: 'string' } } } }));
    const r = await api(server, 'POST', things(g), thing(g, 'n1', { maybe: null, never: null }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, { maybe: null });
    assert.deepEqual((await api(server, 'GET', `${things(g)}/n1`)).body.spec, { maybe: null });
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'n2', { list: ['a', null] }))), [
      ['FieldValueTypeInvalid', 'spec.list[1]', 'Invalid value: "null": spec.list[1] in body must be of type string: "null"'],
    ]);
  });

  test('embedded resources need apiVersion and kind; their metadata is ObjectMeta, unknown fields pruned', async () => {
    const g = 'embedded.example.com';
    await establish(thingCrd(g, { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } }));
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'e1', { template: { metadata: { name: 'x' } } }))).map(([r, f]) => `${r} ${f}`), [
      'FieldValueRequired spec.template.apiVersion',
      'FieldValueRequired spec.template.kind',
    ]);
    const ok = await api(server, 'POST', things(g), thing(g, 'e2', { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' }, bogus: 1 }, spec: { free: true } } }));
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { free: true } });
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'e3', { template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: 'x' } } }))).map(([r, f]) => `${r} ${f}`), [
      'FieldValueTypeInvalid spec.template.metadata.labels',
    ]);
  });

  test('nested x-kubernetes-preserve-unknown-fields keeps what it covers and prunes around it', async () => {
    const g = 'preserve.example.com';
    await establish(thingCrd(g, { type: 'object', properties: { open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { shut: { type: 'object', properties: { a: { type: 'integer' } } } } } } }));
    const r = await api(server, 'POST', things(g), thing(g, 'p1', { open: { any: { deep: [1] }, shut: { a: 1, gone: 2 } }, gone: true }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, { open: { any: { deep: [1] }, shut: { a: 1 } } });
  });

  test('list types: set items unique, map-list keys unique and present; map-type accepted', async () => {
    const g = 'lists.example.com';
    await establish(
      thingCrd(g, {
        type: 'object',
        properties: {
          set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          map: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', required: ['k'], properties: { k: { type: 'string' }, v: { type: 'integer' } } } },
          labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        },
      }),
    );
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'l1', { set: ['a', 'a'], map: [{ k: 'x' }, { k: 'x', v: 1 }, { v: 2 }] }))), [
      ['FieldValueDuplicate', 'spec.set[1]', 'Duplicate value: "a"'],
      ['FieldValueDuplicate', 'spec.map[1]', 'Duplicate value: {"k":"x"}'],
      ['FieldValueRequired', 'spec.map[2].k', 'Required value'],
    ]);
    assert.equal((await api(server, 'POST', things(g), thing(g, 'l2', { set: ['a', 'b'], map: [{ k: 'x' }], labels: { a: 'b' } }))).status, 201);
  });
});

describe('ratcheting', () => {
  test('an invalid value stored before a stricter schema does not block updates that leave it alone', async () => {
    const g = 'ratchet.example.com';
    const crd = await establish(thingCrd(g, { type: 'object', properties: { label: { type: 'string' }, size: { type: 'integer' }, kind: { type: 'string' } } }));
    assert.equal((await api(server, 'POST', things(g), thing(g, 'r1', { label: 'much-too-long', size: 1, kind: 'other' }))).status, 201);
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties = {
      label: { type: 'string', maxLength: 4 },
      size: { type: 'integer' },
      kind: { type: 'string', enum: ['a', 'b'] },
    };
    const updated = await api(server, 'PUT', `${CRDS}/things.${g}`, crd);
    assert.equal(updated.status, 200, updated.text);
    // The new schema applies once the changed CRD is served again.
    await waitFor('stricter schema served', async () => (await api(server, 'POST', things(g), thing(g, 'probe', { label: 'far-too-long' }))).status === 422);
    const other = await api(server, 'PATCH', `${things(g)}/r1`, { spec: { size: 2 } }, MERGE);
    assert.equal(other.status, 200, other.text);
    const changed = await api(server, 'PATCH', `${things(g)}/r1`, { spec: { label: 'also-too-long' } }, MERGE);
    assert.deepEqual(causes(changed).map(([r, f]) => `${r} ${f}`), ['FieldValueTooLong spec.label']);
    const fixed = await api(server, 'PATCH', `${things(g)}/r1`, { spec: { label: 'ok', kind: 'a' } }, MERGE);
    assert.equal(fixed.status, 200, fixed.text);
  });
});

describe('defaulting', () => {
  const g = 'defaults.example.com';
  const schema = (withLate: boolean): Body => ({
    type: 'object',
    properties: {
      replicas: { type: 'integer', default: 1 },
      mode: { type: 'string', default: 'auto' },
      ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } } } },
      open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { level: { type: 'integer', default: 3 } } },
      maybe: { type: 'string', nullable: true, default: 'set' },
      ...(withLate ? { late: { type: 'string', default: 'added-later' } } : {}),
    },
  });

  test('defaults apply on create and update, in array items and under preserved fields, after pruning', async () => {
    await establish(thingCrd(g, schema(false)));
    const r = await api(server, 'POST', things(g), thing(g, 'd1', { mode: null, ports: [{ name: 'http' }], open: { free: 1 }, maybe: null, replicas: 2, unknown: 1 }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, { replicas: 2, mode: 'auto', ports: [{ name: 'http', protocol: 'TCP' }], open: { free: 1, level: 3 }, maybe: null });
    const put = await api(server, 'PUT', `${things(g)}/d1`, { ...r.body, spec: { ports: [{ name: 'a' }, { name: 'b', protocol: 'UDP' }] } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.spec, { replicas: 1, mode: 'auto', ports: [{ name: 'a', protocol: 'TCP' }, { name: 'b', protocol: 'UDP' }], maybe: 'set' });
  });

  test('objects stored before a default was added come back defaulted when read', async () => {
    const before = await api(server, 'POST', things(g), thing(g, 'old', {}));
    assert.equal(before.status, 201, before.text);
    assert.equal(before.body.spec.late, undefined);
    const crd = (await api(server, 'GET', `${CRDS}/things.${g}`)).body;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = schema(true);
    assert.equal((await api(server, 'PUT', `${CRDS}/things.${g}`, crd)).status, 200);
    await waitFor('the new default is served', async () => (await api(server, 'GET', `${things(g)}/old`)).body.spec?.late === 'added-later');
    const got = await api(server, 'GET', `${things(g)}/old`);
    assert.equal(got.body.metadata.resourceVersion, before.body.metadata.resourceVersion);
    const list = await api(server, 'GET', things(g));
    assert.equal(list.body.items.find((i: Body) => i.metadata.name === 'old').spec.late, 'added-later');
  });
});
