// What a CRD's openAPIV3Schema means for its custom resources, over HTTP (kubernetes profile):
// values checked as kube-apiserver checks them (anyOf / oneOf / not, formats, nullable,
// int-or-string, embedded resources, list types, type errors as 422 Invalid), defaults on write
// and on read, ratcheting of unchanged invalid values, and the CRD validation around the schema.
// One server for the file; each test its own group.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTrusted, testServer, waitFor } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';

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
    // And a pattern only RE2 reads (a flag group), enforced as Go's regexp enforces it.
    await establish(thingCrd(g, { type: 'object', properties: { ...Object.fromEntries(formats.map((f) => [f.replaceAll('-', ''), { type: 'string', format: f }])), word: { type: 'string', pattern: '(?i)^[a-z]+$' } } }));
    const good = { email: 'a@b.example', ipv4: '10.0.0.1', ipv6: 'fd00::1', cidr: '10.0.0.0/8', mac: '00:1a:2b:3c:4d:5e', uuid: '123e4567-e89b-12d3-a456-426614174000', hostname: 'api.example.com', uri: 'https://example.com/x', date: '2024-02-29', datetime: '2024-02-29T10:00:00Z', duration: '1h30m', byte: 'aGVsbG8=', k8sshortname: 'web-1', notaformat: 'anything', word: 'Hello' };
    const ok = await api(server, 'POST', things(g), thing(g, 'good', good));
    assert.equal(ok.status, 201, ok.text);
    const bad = { email: 'nope', ipv4: '10.0.0.300', ipv6: '10.0.0.1', cidr: '10.0.0.0/33', mac: '00:1a', uuid: 'xyz', hostname: '-bad-', uri: 'no scheme', date: '2023-02-29', datetime: 'yesterday', duration: 'soon', byte: 'not base64!', k8sshortname: 'Web_1', notaformat: 'anything', word: 'he llo' };
    const found = causes(await api(server, 'POST', things(g), thing(g, 'bad', bad)));
    assert.deepEqual(
      found.map(([r, f]) => `${r} ${f}`),
      [...formats.filter((f) => f !== 'not-a-format').map((f) => `FieldValueTypeInvalid spec.${f.replaceAll('-', '')}`), 'FieldValueInvalid spec.word'],
    );
    assert.deepEqual(found.at(-1), ['FieldValueInvalid', 'spec.word', "Invalid value: \"he llo\": spec.word in body should match '(?i)^[a-z]+$'"]);
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
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'e4', { template: { apiVersion: 'a/b/c', kind: 'Bad_Kind', metadata: { name: 'x/y' } } }))), [
      ['FieldValueInvalid', 'spec.template.kind', `Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`],
      ['FieldValueInvalid', 'spec.template.apiVersion', 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'],
      ['FieldValueInvalid', 'spec.template.metadata.name', 'Invalid value: "x/y": may not contain \'/\''],
    ]);
  });

  test('nested x-kubernetes-preserve-unknown-fields keeps what it covers and prunes around it', async () => {
    const g = 'preserve.example.com';
    await establish(thingCrd(g, { type: 'object', properties: { open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { shut: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } } } } }));
    // Pruned, and the null of a known non-nullable field dropped, while unknown nulls are kept.
    const r = await api(server, 'POST', things(g), thing(g, 'p1', { open: { any: { deep: [1], none: null }, shut: { a: 1, b: null, gone: 2 } }, gone: true }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, { open: { any: { deep: [1], none: null }, shut: { a: 1 } } });
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
    // Duplicates and missing keys are reported with type errors, all Invalid causes.
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'l1', { set: ['a', 'a', 5], map: [{ k: 'x' }, { k: 'x', v: 1 }, { v: 2 }] }))), [
      ['FieldValueDuplicate', 'spec.set[1]', 'Duplicate value: "a"'],
      ['FieldValueTypeInvalid', 'spec.set[2]', 'Invalid value: "integer": spec.set[2] in body must be of type string: "integer"'],
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
      limits: { type: 'object', additionalProperties: { type: 'string', default: 'none' } },
      // A null default is no default: absent stays absent, null stays null.
      optional: { type: 'string', nullable: true, default: null },
      other: { type: 'string', nullable: true, default: null },
      ...(withLate ? { late: { type: 'string', default: 'added-later' } } : {}),
    },
  });

  test('defaults apply on create and update, in array items and under preserved fields, after pruning', async () => {
    await establish(thingCrd(g, schema(false)));
    const r = await api(server, 'POST', things(g), thing(g, 'd1', { mode: null, ports: [{ name: 'http' }], open: { free: 1 }, maybe: null, replicas: 2, unknown: 1, limits: { cpu: null, mem: '1Gi' }, other: null }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, { replicas: 2, mode: 'auto', ports: [{ name: 'http', protocol: 'TCP' }], open: { free: 1, level: 3 }, maybe: null, limits: { cpu: 'none', mem: '1Gi' }, other: null });
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

describe('CustomResourceDefinition validation of schemas and settings', () => {
  const at = 'spec.versions[0].schema.openAPIV3Schema';
  /** The CRD is refused with (at least) these [field, message] causes. */
  async function refused(crd: Body, expected: [string, string][]): Promise<void> {
    const found = causes(await api(server, 'POST', CRDS, crd)).map(([, f, m]) => [f, m]);
    for (const [f, m] of expected) assert.ok(found.some(([ff, mm]) => ff === f && mm === m), `${f}: ${m}\nin ${JSON.stringify(found, null, 1)}`);
    assert.equal((await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).status, 404);
  }

  test('value validations (anyOf, oneOf, not, allOf) may not declare types, defaults or markers, and name only specified fields', async () => {
    await refused(
      thingCrd('structural.example.com', {
        type: 'object',
        properties: { a: { type: 'string' }, n: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } },
        anyOf: [{ type: 'object' }, { properties: { b: { maxLength: 3 } } }],
        oneOf: [{ default: 'x' }, { nullable: true, 'x-kubernetes-list-type': 'set' }],
        not: { description: 'no', properties: { metadata: {} } },
        allOf: [{ 'x-kubernetes-validations': [{ rule: 'true' }] }],
      }),
      [
        [`${at}.properties[spec].anyOf[0].type`, 'Forbidden: must be empty to be structural'],
        [`${at}.properties[spec].properties[b]`, `Required value: because it is defined in ${at}.properties[spec].anyOf[1].properties[b]`],
        [`${at}.properties[spec].oneOf[0].default`, 'Forbidden: must be undefined to be structural'],
        [`${at}.properties[spec].oneOf[1].nullable`, 'Forbidden: must be false to be structural'],
        [`${at}.properties[spec].oneOf[1].x-kubernetes-list-type`, 'Forbidden: must be undefined to be structural'],
        [`${at}.properties[spec].not.description`, 'Forbidden: must be empty to be structural'],
        [`${at}.properties[spec].not.properties[metadata]`, 'Forbidden: must not be specified in a nested context'],
        [`${at}.properties[spec].allOf[0].x-kubernetes-validations`, 'Forbidden: must be empty to be structural'],
      ],
    );
  });

  test('the x-kubernetes markers: list and map types, set items atomic, map-list keys required and not nullable', async () => {
    await refused(
      thingCrd('markers.example.com', {
        type: 'object',
        properties: {
          notList: { type: 'string', 'x-kubernetes-list-type': 'set' },
          notMap: { type: 'string', 'x-kubernetes-map-type': 'atomic' },
          badMap: { type: 'object', 'x-kubernetes-map-type': 'sometimes' },
          sets: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', nullable: true, properties: { a: { type: 'string' } } } },
          maps: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['k', 'o', 'missing'],
            items: { type: 'object', properties: { k: { type: 'string', nullable: true }, o: { type: 'object' } } },
          },
          keysOnly: { type: 'array', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' } } } },
          keep: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
        },
      }),
      [
        [`${at}.properties[spec].properties[notList].type`, 'Invalid value: "string": must be array if x-kubernetes-list-type is specified'],
        [`${at}.properties[spec].properties[notMap].type`, 'Invalid value: "string": must be object if x-kubernetes-map-type is specified'],
        [`${at}.properties[spec].properties[badMap].x-kubernetes-map-type`, 'Unsupported value: "sometimes": supported values: "atomic", "granular"'],
        [`${at}.properties[spec].properties[sets].items.x-kubernetes-map-type`, 'Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set'],
        [`${at}.properties[spec].properties[sets].items.nullable`, 'Forbidden: cannot be nullable when x-kubernetes-list-type is set'],
        [`${at}.properties[spec].properties[maps].items.properties[o].type`, 'Invalid value: "object": must be a scalar type if parent array\'s x-kubernetes-list-type is map'],
        [`${at}.properties[spec].properties[maps].x-kubernetes-list-map-keys`, 'Invalid value: []string{"k", "o", "missing"}: entries must all be names of item properties'],
        [`${at}.properties[spec].properties[maps].items.properties[k].default`, 'Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'],
        [`${at}.properties[spec].properties[maps].items.properties[k].nullable`, 'Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable'],
        [`${at}.properties[spec].properties[keysOnly].x-kubernetes-list-type`, 'Required value: must be map if x-kubernetes-list-map-keys is non-empty'],
        [`${at}.properties[spec].properties[keep].x-kubernetes-preserve-unknown-fields`, 'Invalid value: false: must be true or undefined'],
      ],
    );
  });

  test('defaults must be pruned and valid; patterns must be RE2; only some fields at the root with a status subresource', async () => {
    const d = `${at}.properties[spec].properties`;
    await refused(
      thingCrd('defaults-invalid.example.com', {
        type: 'object',
        properties: {
          size: { type: 'integer', maximum: 5, default: 7 },
          kind: { type: 'string', default: 3 },
          nested: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'unknown' } },
          obj: { type: 'object', properties: { n: { type: 'integer' } }, default: { n: 'str' } },
        },
      }),
      [
        [`${d}[size].default`, 'Invalid value: 7:  in body should be less than or equal to 5'],
        [`${d}[kind].default`, 'Invalid value: "integer":  in body must be of type string: "integer"'],
        [`${d}[nested].default`, 'Invalid value: {"a":"x","b":"unknown"}: must not have unknown fields'],
        [`${d}[obj].default.n`, 'Invalid value: "string": n in body must be of type integer: "string"'],
      ],
    );
    await refused(thingCrd('pattern-invalid.example.com', { type: 'object', properties: { named: { type: 'string', pattern: '^(?=lookahead)' } } }), [
      [`${d}[named].pattern`, 'Invalid value: "^(?=lookahead)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ]);
    await refused(thingCrd('root-status.example.com', { type: 'object' }, { status: true, root: { nullable: false, enum: [{}], additionalProperties: false } }), [
      [
        at,
        `Invalid value: {"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},"nullable":false,"enum":[{}],"additionalProperties":false}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`,
      ],
    ]);
  });

  test('a rule under lists without maxItems costs what one request can hold of its node, as Kubernetes estimates it', async () => {
    // Two unbounded lists above a cheap rule (as the Prometheus operator's AlertmanagerConfig has):
    // accepted, where multiplying the lists' estimated lengths would refuse it.
    const nested = {
      type: 'object',
      properties: {
        receivers: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              configs: {
                type: 'array',
                items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: '!has(self.a) || has(self.b)', message: 'a needs b' }] },
              },
            },
          },
        },
      },
    };
    await establish(thingCrd('unbounded-rules.example.com', nested));
    const g = 'unbounded-rules.example.com';
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'u1', { receivers: [{ configs: [{ b: 'x' }, { a: 'x' }] }] }))), [
      ['FieldValueInvalid', 'spec.receivers[0].configs[1]', 'Invalid value: "object": a needs b'],
    ]);
  });

  test('rules may use two-variable comprehensions; an unbounded one is refused by its estimated cost', async () => {
    const g = 'comprehensions.example.com';
    const steps = (extra: Body = {}): Body => ({
      type: 'array',
      items: { type: 'string', ...extra.items },
      'x-kubernetes-validations': [{ rule: 'self.all(i, s, self.all(j, t, i == j || s != t))', message: 'steps must differ' }],
      ...extra.list,
    });
    // Pairwise over a list without bounds: refused when written, as Kubernetes refuses it.
    const tooDear = thingCrd(g, { type: 'object', properties: { steps: steps() } });
    // The rule, and with it the CRD's total.
    const found = causes(await api(server, 'POST', CRDS, tooDear));
    assert.deepEqual(
      found.map(([, f, m]) => [f, m.replace(/ \(try simplifying.*$/, '')]),
      [
        [`${at}.properties[spec].properties[steps].x-kubernetes-validations[0].rule`, 'Forbidden: estimated rule cost exceeds budget by factor of more than 100x'],
        [`${at}.x-kubernetes-validations`, 'Forbidden: total CRD cost exceeds budget by factor of more than 100x'],
      ],
    );
    // With bounds it is accepted, beside map rules over keys and values and a transform.
    const spec = {
      type: 'object',
      properties: {
        steps: steps({ items: { maxLength: 32 }, list: { maxItems: 16 } }),
        ports: {
          type: 'object',
          maxProperties: 16,
          additionalProperties: { type: 'integer' },
          'x-kubernetes-validations': [
            { rule: "self.all(name, port, port > 0 && !name.startsWith('-'))", message: 'ports need a positive number and a name' },
            { rule: 'self.transformMapEntry(name, port, {string(port): name}).size() == self.size()', message: 'one name per port' },
          ],
        },
      },
    };
    await establish(thingCrd(g, spec));
    const ok = await api(server, 'POST', things(g), thing(g, 'ok', { steps: ['a', 'b'], ports: { http: 80, https: 443 } }));
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'bad', { steps: ['a', 'b', 'a'], ports: { http: 0, '-x': 1 } }))), [
      ['FieldValueInvalid', 'spec.steps', 'Invalid value: "array": steps must differ'],
      ['FieldValueInvalid', 'spec.ports', 'Invalid value: "object": ports need a positive number and a name'],
    ]);
    // Two names for one port: transformMapEntry fails on the repeated key, an evaluation error.
    const twice = causes(await api(server, 'POST', things(g), thing(g, 'twice', { steps: [], ports: { http: 80, web: 80 } })));
    assert.equal(twice.length, 1);
    assert.equal(twice[0]![1], 'spec.ports');
    assert.match(twice[0]![2], /^Invalid value: "object": insert failed: key 80 already exists evaluating rule: /);
  });

  test('a rule may compare an optional, a duration, a timestamp or an object with null (the checker\'s legacy nullness); none equals null, an object fails', async () => {
    const g = 'null-compare.example.com';
    const spec = {
      type: 'object',
      properties: {
        // The format library's validate() is an optional list of problems: compared with null, as
        // Gateway API's experimental CRDs write it, it is never equal.
        name: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: 'size(self) == 0 || format.dns1123Label().validate(self) == null', message: 'only an empty name' }] },
        other: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: 'format.dns1123Label().validate(self) != null', message: 'never' }] },
        wait: { type: 'string', format: 'duration', 'x-kubernetes-validations': [{ rule: "duration(self) != null && null != timestamp('2020-01-01T00:00:00Z')", message: 'never' }] },
      },
    };
    await establish(thingCrd(g, spec));
    assert.equal((await api(server, 'POST', things(g), thing(g, 'ok', { name: '', other: 'x', wait: '1s' }))).status, 201);
    assert.deepEqual(causes(await api(server, 'POST', things(g), thing(g, 'named', { name: 'web' }))), [['FieldValueInvalid', 'spec.name', 'Invalid value: "string": only an empty name']]);
    // An object of the schema compared with null compiles, and fails when evaluated, as in Kubernetes.
    const objects = 'null-compare-objects.example.com';
    await establish(thingCrd(objects, { type: 'object', properties: { obj: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self != null' }] } } }));
    assert.deepEqual(causes(await api(server, 'POST', things(objects), thing(objects, 'o', { obj: { a: 'x' } }))), [
      ['FieldValueInvalid', 'spec.obj', "Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self != null"],
    ]);
    // A list or a string is not comparable with null: still a compile error, as in Kubernetes.
    const refused = causes(await api(server, 'POST', CRDS, thingCrd('null-compare-bad.example.com', { type: 'object', properties: { s: { type: 'string', maxLength: 8, 'x-kubernetes-validations': [{ rule: 'self == null' }] } } })));
    assert.equal(refused.length, 1);
    assert.match(refused[0]![2], /compilation failed: ERROR: <input>:1:1: found no matching overload for '_==_' applied to '\(string, null\)'/);
  });

  test('a node whose rules were compiled for another CRD is costed under its own lists, its errors naming its own rules', async () => {
    // The same item schema under a list of one item, then under a list without maxItems: the
    // second CRD's compiled rules may be the first's, its cost and field paths are its own.
    const item = {
      type: 'object',
      properties: { xs: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 10 } } },
      'x-kubernetes-validations': [{ rule: 'true' }, { rule: 'self.xs.all(a, self.xs.all(b, a == b))' }],
    };
    const under = (maxItems?: number) => ({ type: 'object', properties: { list: { type: 'array', ...(maxItems === undefined ? {} : { maxItems }), items: item } } });
    await establish(thingCrd('shared-rules-a.example.com', under(1)));
    const r = await api(server, 'POST', CRDS, thingCrd('shared-rules-b.example.com', under()));
    const fields = causes(r).map(([, f]) => f);
    const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].items.x-kubernetes-validations';
    assert.ok(fields.includes(`${at}[1].rule`), JSON.stringify(fields));
    assert.ok(!fields.some((f) => f.startsWith(`${at}[0]`) || f.includes('[-1]')), JSON.stringify(fields));
  });

  test('conversion settings: a webhook needs one of url or service, known review versions; None takes no webhook', async () => {
    const withConversion = (group: string, conversion: Body) => ({ ...thingCrd(group, { type: 'object' }), spec: { ...thingCrd(group, { type: 'object' }).spec, conversion } });
    await refused(withConversion('conv1.example.com', { strategy: 'Webhook' }), [
      ['spec.conversion.webhookClientConfig', 'Required value: required when strategy is set to Webhook'],
      ['spec.conversion.conversionReviewVersions', 'Required value'],
    ]);
    await refused(withConversion('conv2.example.com', { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://user@h/x?q=1', service: { name: 's', namespace: 'n' } }, conversionReviewVersions: ['v2', 'v2'] } }), [
      ['spec.conversion.webhookClientConfig', 'Required value: exactly one of url or service is required'],
      ['spec.conversion.conversionReviewVersions[1]', 'Invalid value: "v2": duplicate version'],
      ['spec.conversion.conversionReviewVersions', 'Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1'],
    ]);
    await refused(withConversion('conv3.example.com', { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://h/x?q=1' }, conversionReviewVersions: ['v1'] } }), [
      ['spec.conversion.webhookClientConfig.url', "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"],
      ['spec.conversion.webhookClientConfig.url', 'Invalid value: "q=1": query parameters are not permitted in the URL'],
    ]);
    await refused(withConversion('conv4.example.com', { strategy: 'Webhook', webhook: { clientConfig: { service: { name: '', namespace: 'n', path: 'x//y', port: 70000 } }, conversionReviewVersions: ['v1'] } }), [
      ['spec.conversion.webhookClientConfig.service.name', 'Required value: service name is required'],
      ['spec.conversion.webhookClientConfig.service.port', 'Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive'],
      ['spec.conversion.webhookClientConfig.service.path', 'Invalid value: "x//y": must start with a \'/\''],
    ]);
    await refused(withConversion('conv5.example.com', { strategy: 'None', webhook: { clientConfig: { url: 'https://h' }, conversionReviewVersions: ['v1'] } }), [
      ['spec.conversion.webhookClientConfig', 'Forbidden: should not be set when strategy is not set to Webhook'],
      ['spec.conversion.conversionReviewVersions', 'Forbidden: should not be set when strategy is not set to Webhook'],
    ]);
    // An invalid caBundle is accepted until the CRD is established; then only while it stays invalid.
    const bad = Buffer.from('not a certificate').toString('base64');
    const crd = await establish(withConversion('conv6.example.com', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/convert', caBundle: bad }, conversionReviewVersions: ['v1'] } }));
    crd.metadata.labels = { touched: 'yes' };
    const kept = await api(server, 'PUT', `${CRDS}/things.conv6.example.com`, crd);
    assert.equal(kept.status, 200, kept.text);
    const good = await establish(withConversion('conv7.example.com', { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://h/convert' }, conversionReviewVersions: ['v1'] } }));
    good.spec.conversion.webhook.clientConfig.caBundle = Buffer.from('no').toString('base64');
    assert.deepEqual(causes(await api(server, 'PUT', `${CRDS}/things.conv7.example.com`, good)), [
      ['FieldValueInvalid', 'spec.conversion.webhookClientConfig.caBundle', 'Invalid value: []byte{0x6e, 0x6f}: data does not contain any valid RSA or ECDSA certificates'],
    ]);
  });

  test('groups under the protected domains need the API approval annotation', async () => {
    const crd = thingCrd('widgets.x-k8s.io', { type: 'object' });
    crd.spec.group = 'widgets.k8s.io';
    crd.metadata.name = 'things.widgets.k8s.io';
    const key = 'metadata.annotations[api-approved.kubernetes.io]';
    await refused(crd, [[key, 'Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111']]);
    crd.metadata.annotations = { 'api-approved.kubernetes.io': 'maybe' };
    await refused(crd, [[key, 'Invalid value: "maybe": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111']]);
    crd.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, experimental' };
    assert.equal((await api(server, 'POST', CRDS, crd)).status, 201);
  });

  test('selectable fields: existing scalar fields outside metadata, each once, at most eight', async () => {
    const props = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, { type: 'string' }]));
    const fields = (paths: string[]) => ({ selectableFields: paths.map((jsonPath) => ({ jsonPath })) });
    await refused(thingCrd('select1.example.com', { type: 'object', properties: { ...props, obj: { type: 'object' }, list: { type: 'array', items: { type: 'string' } } } }, { version: fields(['.spec.missing', '.spec.obj', '.spec.f0', '.spec.f0', '.spec.list[0]']) }), [
      ['spec.versions[0].selectableFields[0].jsonPath', 'Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field'],
      ['spec.versions[0].selectableFields[1].jsonPath', 'Invalid value: ".spec.obj": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'],
      ['spec.versions[0].selectableFields[3].jsonPath', 'Duplicate value: ".spec.f0"'],
      ['spec.versions[0].selectableFields[4].jsonPath', 'Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed'],
    ]);
    await refused(thingCrd('select2.example.com', { type: 'object', properties: props }, { version: fields(Object.keys(props).map((k) => `.spec.${k}`)) }), [['spec.versions[0].selectableFields', 'Too many: 9: must have at most 8 items']]);
  });
});

describe('a CRD stored before its schema was checked', () => {
  test('is NonStructuralSchema; an update must make it structural but may keep the kinds of problems it had', async () => {
    const dataDir = tempDir('crd-schema-stored');
    const g = 'stored.example.com';
    const name = `things.${g}`;
    const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec]';
    const first = await startTrusted({ naming: 'kubernetes', dataDir });
    try {
      assert.equal((await api(first, 'POST', CRDS, thingCrd(g, { type: 'object', properties: { a: { type: 'string' } } }))).status, 201);
    } finally {
      await first.close();
    }
    // What an older server may have stored: a field without a type, set items that are not
    // atomic, a map-list key neither required nor defaulted, a rule over today's cost limit.
    const storage = await openLmdbStorage({ path: dataDir });
    try {
      const key = `/registry/apiextensions.k8s.io/customresourcedefinitions/${name}`;
      const kv = (await storage.get(key))!;
      const crd = JSON.parse(Buffer.from(kv.value).toString('utf8')) as Body;
      const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
      Object.assign(spec.properties, {
        loose: { minimum: 1 },
        set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', properties: { x: { type: 'string' } } } },
        map: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' } } } },
        list: { type: 'array', maxItems: 3000, items: { type: 'string', maxLength: 5 } },
      });
      spec['x-kubernetes-validations'] = [{ rule: 'self.list.all(x, self.list.all(y, x == y))' }];
      await storage.update(key, kv.modRevision, Buffer.from(JSON.stringify(crd)));
    } finally {
      await storage.close();
    }
    const second = await startTrusted({ naming: 'kubernetes', dataDir });
    try {
      const loose = `${at}.properties[loose].type: Required value: must not be empty for specified object fields`;
      let crd: Body = {};
      await waitFor('NonStructuralSchema', async () => {
        crd = (await api(second, 'GET', `${CRDS}/${name}`)).body;
        return crd.status?.conditions?.some((c: Body) => c.type === 'NonStructuralSchema') ?? false;
      });
      assert.deepEqual(
        (({ type, status, reason, message }) => ({ type, status, reason, message }))(crd.status.conditions.find((c: Body) => c.type === 'NonStructuralSchema')),
        { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message: loose },
      );
      // A schema must be structural, even unchanged; the other problems are not reported, the
      // rule's cost not while the schema is unchanged.
      crd.metadata.labels = { touched: 'yes' };
      assert.deepEqual(causes(await api(second, 'PUT', `${CRDS}/${name}`, crd)).map(([, f]) => f), [`${at}.properties[loose].type`]);
      const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
      props.loose = { type: 'integer', minimum: 1 };
      assert.deepEqual(causes(await api(second, 'PUT', `${CRDS}/${name}`, crd)).map(([, f]) => f), [`${at}.x-kubernetes-validations[0].rule`]);
      delete crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'];
      props.b = { type: 'string' };
      const fixed = await api(second, 'PUT', `${CRDS}/${name}`, crd);
      assert.equal(fixed.status, 200, fixed.text);
      await waitFor('NonStructuralSchema gone', async () => !(await api(second, 'GET', `${CRDS}/${name}`)).body.status?.conditions?.some((c: Body) => c.type === 'NonStructuralSchema'));
    } finally {
      await second.close();
    }
  });
});
