// ConfigMap, Secret and ServiceAccount (core v1) over real HTTP: every validation rule (422 Invalid
// naming the field, nothing stored), binary values in JSON, YAML and protobuf, the write-only
// stringData, immutability, the type rules of Secrets in both naming profiles, secret values kept
// out of every error, Tables, field selectors, server-side apply, discovery and OpenAPI, kubectl,
// and the service-account controller's `default` account in every active namespace.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';
import { kubectlFor, tableRows } from '../support/kubectl.ts';
import { decodeObject, encodeObject } from '../../src/wire/protobuf/index.ts';
import { Encoder as CborEncoder, Tag } from 'cbor-x';
import { decodeCbor } from '../../src/wire/cbor.ts';
import type { KObject } from '../../src/machinery/meta.ts';

const server = await testServer({ featureGates: 'CBORServingAndStorage=true' });
const kube = await testServer({ naming: 'kubernetes' });

type Body = Record<string, any>;

interface Cause {
  field: string;
  reason: string;
  message: string;
}

let nsCount = 0;
/** A fresh namespace for one test. */
async function namespace(s: { url: string } = server): Promise<string> {
  const name = `cfg-${++nsCount}`;
  const r = await api(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return name;
}

const b64 = (s: string | Buffer): string => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');

const configMap = (name: string, fields: Body = {}): Body => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...fields });
const secret = (name: string, fields: Body = {}): Body => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...fields });

/** A write that must fail validation: 422 Invalid with exactly these cause fields; nothing is stored. */
async function expectInvalid(s: { url: string }, method: string, path: string, body: unknown, fields: string[], headers: Record<string, string> = {}): Promise<Cause[]> {
  const r = await api(s, method, path, body, headers);
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.reason, 'Invalid');
  const causes = r.body.details.causes as Cause[];
  assert.deepEqual(causes.map((c) => c.field).sort(), [...fields].sort(), r.text);
  return causes;
}

describe('ConfigMap', () => {
  test('create, read, list with data and binaryData; binary values round-trip in JSON, YAML and protobuf', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const binary = Buffer.from([0, 1, 2, 250, 255, 10]);
    const c = await api(server, 'POST', path, configMap('one', { data: { 'a.txt': 'hello', 'KEY_2': 'x' }, binaryData: { 'b.bin': b64(binary) } }));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.binaryData['b.bin'], b64(binary));
    // protobuf: the raw bytes on the wire, base64 again in JSON.
    const pb = await fetch(`${server.url}${path}/one`, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    const bytes = Buffer.from(await pb.arrayBuffer());
    assert.ok(bytes.includes(binary), 'the binary value is on the protobuf wire as raw bytes');
    const decoded = decodeObject(bytes) as Body;
    assert.equal(decoded.binaryData['b.bin'], b64(binary));
    assert.equal(decoded.data['a.txt'], 'hello');
    // A protobuf create carries raw bytes too.
    const body = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' }, binaryData: { k: b64(binary) } } as unknown as KObject);
    const created = await fetch(server.url + path, { method: 'POST', headers: { 'Content-Type': 'application/vnd.orch.protobuf', Accept: 'application/json' }, body });
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(((await created.json()) as Body).binaryData.k, b64(binary));
    // YAML: base64 text.
    const yaml = await api(server, 'POST', path, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: three\nbinaryData:\n  k: ${b64(binary)}\ndata:\n  t: text\n`, { 'Content-Type': 'application/yaml' });
    assert.equal(yaml.status, 201, yaml.text);
    assert.equal(yaml.body.binaryData.k, b64(binary));
    const y = await fetch(`${server.url}${path}/three`, { headers: { Accept: 'application/yaml' } });
    assert.match(await y.text(), new RegExp(`binaryData:\\n  k: ${b64(binary).replace(/[+/]/g, (m) => `\\${m}`)}`));
    const list = await api(server, 'GET', path);
    assert.deepEqual(list.body.items.map((i: Body) => i.metadata.name), ['one', 'three', 'two']);
  });

  test('key rules, a key in both maps, bad base64 and the 1 MiB limit are refused; nothing is stored', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const causes = await expectInvalid(server, 'POST', path, configMap('bad', { data: { 'a b': 'x', '.': 'x', '..': 'x', '..x': 'x', [`${'k'.repeat(254)}`]: 'x', ok: 'x' } }), [
      'data[a b]',
      'data[.]',
      'data[..]',
      'data[..x]',
      `data[${'k'.repeat(254)}]`,
    ]);
    assert.match(causes.find((c) => c.field === 'data[a b]')!.message, /a valid config key must consist of alphanumeric characters/);
    assert.match(causes.find((c) => c.field === 'data[.]')!.message, /must not be '\.'/);
    assert.match(causes.find((c) => c.field === 'data[..x]')!.message, /must not start with '\.\.'/);
    assert.match(causes.find((c) => c.field.startsWith('data[kkk'))!.message, /must be no more than 253 characters/);
    const dup = await expectInvalid(server, 'POST', path, configMap('dup', { data: { k: 'x' }, binaryData: { k: b64('y') } }), ['data[k]', 'binaryData[k]']);
    assert.match(dup[0]!.message, /duplicate of key present in/);
    const bad64 = await api(server, 'POST', path, configMap('b64', { binaryData: { k: 'not base64!' } }));
    assert.equal(bad64.status, 400, bad64.text);
    assert.equal(bad64.body.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 3');
    // Exactly 1 MiB is allowed; one byte more is not (text and binary count together).
    const half = 512 * 1024;
    const fits = await api(server, 'POST', path, configMap('fits', { data: { a: 'x'.repeat(half) }, binaryData: { b: b64(Buffer.alloc(half)) } }));
    assert.equal(fits.status, 201, fits.text.slice(0, 300));
    const big = await expectInvalid(server, 'POST', path, configMap('big', { data: { a: 'x'.repeat(half + 1) }, binaryData: { b: b64(Buffer.alloc(half)) } }), ['[]']);
    assert.equal(big[0]!.message, 'Too long: may not be more than 1048576 bytes');
    const whole = await api(server, 'POST', path, configMap('big', { binaryData: { b: b64(Buffer.alloc(2 * half + 1)) } }));
    assert.equal(whole.body.message, 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes');
    // Multi-byte characters count in bytes.
    await expectInvalid(server, 'POST', path, configMap('wide', { data: { a: 'é'.repeat(half + 1) } }), ['[]']);
    const names = (await api(server, 'GET', path)).body.items.map((i: Body) => i.metadata.name);
    assert.deepEqual(names, ['fits']);
  });

  test('immutable: data, binaryData and immutable itself cannot change; metadata can; delete works', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const c = await api(server, 'POST', path, configMap('frozen', { immutable: true, data: { a: '1' }, binaryData: { b: b64('2') } }));
    assert.equal(c.status, 201, c.text);
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const causes = await expectInvalid(server, 'PATCH', `${path}/frozen`, { data: { a: 'changed' } }, ['data'], merge);
    assert.equal(causes[0]!.message, 'Forbidden: field is immutable when `immutable` is set');
    await expectInvalid(server, 'PATCH', `${path}/frozen`, { binaryData: { c: b64('3') } }, ['binaryData'], merge);
    await expectInvalid(server, 'PATCH', `${path}/frozen`, { immutable: false }, ['immutable'], merge);
    await expectInvalid(server, 'PATCH', `${path}/frozen`, { immutable: null }, ['immutable'], merge);
    const put = structuredClone(c.body);
    put.data = {};
    await expectInvalid(server, 'PUT', `${path}/frozen`, put, ['data']);
    const labels = await api(server, 'PATCH', `${path}/frozen`, { metadata: { labels: { x: 'y' } } }, merge);
    assert.equal(labels.status, 200, labels.text);
    const now = (await api(server, 'GET', `${path}/frozen`)).body;
    assert.deepEqual([now.data, now.binaryData, now.immutable, now.metadata.labels], [{ a: '1' }, { b: b64('2') }, true, { x: 'y' }]);
    // A mutable one may become immutable.
    assert.equal((await api(server, 'POST', path, configMap('later', { data: { a: '1' } }))).status, 201);
    assert.equal((await api(server, 'PATCH', `${path}/later`, { immutable: true, data: { a: '2' } }, merge)).status, 200);
    assert.equal((await api(server, 'DELETE', `${path}/frozen`)).status, 200);
  });

  test('Table: Name, Data, Age in both meta group spellings', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    assert.equal((await api(server, 'POST', path, configMap('t', { data: { a: '1', b: '2' }, binaryData: { c: b64('3') } }))).status, 201);
    for (const g of ['meta.orch.io', 'meta.k8s.io']) {
      const t = await api(server, 'GET', path, undefined, { Accept: `application/json;as=Table;v=v1;g=${g}` });
      assert.equal(t.status, 200, t.text);
      assert.equal(t.body.kind, 'Table');
      assert.deepEqual(t.body.columnDefinitions.map((c: Body) => c.name), ['Name', 'Data', 'Age']);
      assert.deepEqual(t.body.rows[0].cells.slice(0, 2), ['t', 3]);
    }
  });
});

describe('Secret', () => {
  test('data round-trips as bytes; stringData is merged into data, wins, and is never stored or returned', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/secrets`;
    const raw = Buffer.from([0, 255, 1, 128]);
    const c = await api(server, 'POST', path, secret('s', { data: { bin: b64(raw), both: b64('old') }, stringData: { both: 'new', text: 'hello' } }));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.type, 'Opaque');
    assert.equal(c.body.stringData, undefined);
    assert.deepEqual(c.body.data, { bin: b64(raw), both: b64('new'), text: b64('hello') });
    const got = (await api(server, 'GET', `${path}/s`)).body;
    assert.equal(got.stringData, undefined);
    assert.equal(JSON.stringify(got.metadata.managedFields).includes('stringData'), false, 'managed fields do not name stringData');
    // Update and patch merge it too.
    const p = await api(server, 'PATCH', `${path}/s`, { stringData: { text: 'patched' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.data.text, b64('patched'));
    assert.equal(p.body.stringData, undefined);
    const put = { ...p.body, stringData: { extra: 'v' } };
    const u = await api(server, 'PUT', `${path}/s`, put);
    assert.equal(u.status, 200, u.text);
    assert.equal(u.body.data.extra, b64('v'));
    // protobuf carries raw bytes.
    const pb = await fetch(`${server.url}${path}/s`, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    const bytes = Buffer.from(await pb.arrayBuffer());
    assert.ok(bytes.includes(raw));
    assert.equal((decodeObject(bytes) as Body).data.bin, b64(raw));
  });

  test('type defaults to Opaque and cannot change; immutable freezes data and itself', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/secrets`;
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    assert.equal((await api(server, 'POST', path, secret('t', { data: { a: b64('1') } }))).status, 201);
    const causes = await expectInvalid(server, 'PATCH', `${path}/t`, { type: 'other' }, ['type'], merge);
    assert.equal(causes[0]!.message, 'Invalid value: "other": field is immutable');
    const f = await api(server, 'POST', path, secret('f', { immutable: true, data: { a: b64('1') } }));
    assert.equal(f.status, 201, f.text);
    await expectInvalid(server, 'PATCH', `${path}/f`, { data: { a: b64('2') } }, ['data'], merge);
    await expectInvalid(server, 'PATCH', `${path}/f`, { stringData: { b: '2' } }, ['data'], merge);
    await expectInvalid(server, 'PATCH', `${path}/f`, { immutable: false }, ['immutable'], merge);
    assert.equal((await api(server, 'PATCH', `${path}/f`, { metadata: { annotations: { a: 'b' } } }, merge)).status, 200);
    assert.deepEqual((await api(server, 'GET', `${path}/f`)).body.data, { a: b64('1') });
  });

  test('every type rule of the default profile', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/secrets`;
    const ok = async (body: Body) => {
      const r = await api(server, 'POST', path, body);
      assert.equal(r.status, 201, r.text);
    };
    // service-account-token: the annotation naming the account.
    await expectInvalid(server, 'POST', path, secret('sa', { type: 'orch.io/service-account-token' }), ['metadata.annotations[orch.io/service-account.name]']);
    await ok({ ...secret('sa'), type: 'orch.io/service-account-token', metadata: { name: 'sa', annotations: { 'orch.io/service-account.name': 'default' } } });
    // dockercfg / dockerconfigjson: the key, holding a JSON object.
    await expectInvalid(server, 'POST', path, secret('d1', { type: 'orch.io/dockercfg' }), ['data[.dockercfg]']);
    await expectInvalid(server, 'POST', path, secret('d1', { type: 'orch.io/dockercfg', data: { '.dockercfg': b64('not json') } }), ['data[.dockercfg]']);
    await expectInvalid(server, 'POST', path, secret('d1', { type: 'orch.io/dockercfg', data: { '.dockercfg': b64('[1]') } }), ['data[.dockercfg]']);
    await ok(secret('d1', { type: 'orch.io/dockercfg', data: { '.dockercfg': b64('{"r.example":{}}') } }));
    await expectInvalid(server, 'POST', path, secret('d2', { type: 'orch.io/dockerconfigjson', stringData: { '.dockercfg': '{}' } }), ['data[.dockerconfigjson]']);
    await expectInvalid(server, 'POST', path, secret('d2', { type: 'orch.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{' } }), ['data[.dockerconfigjson]']);
    await ok(secret('d2', { type: 'orch.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{"auths":{}}' } }));
    // basic-auth: username or password.
    await expectInvalid(server, 'POST', path, secret('b', { type: 'orch.io/basic-auth' }), ['data[username]', 'data[password]']);
    await ok(secret('b', { type: 'orch.io/basic-auth', stringData: { password: '' } }));
    // ssh-auth: a non-empty private key.
    await expectInvalid(server, 'POST', path, secret('ssh', { type: 'orch.io/ssh-auth', stringData: { 'ssh-privatekey': '' } }), ['data[ssh-privatekey]']);
    await ok(secret('ssh', { type: 'orch.io/ssh-auth', stringData: { 'ssh-privatekey': 'k' } }));
    // tls: both keys.
    await expectInvalid(server, 'POST', path, secret('tls', { type: 'orch.io/tls', stringData: { 'tls.crt': 'c' } }), ['data[tls.key]']);
    await expectInvalid(server, 'POST', path, secret('tls', { type: 'orch.io/tls' }), ['data[tls.crt]', 'data[tls.key]']);
    await ok(secret('tls', { type: 'orch.io/tls', stringData: { 'tls.crt': 'c', 'tls.key': 'k' } }));
    // The Kubernetes spellings are just other types here: no rules.
    await ok(secret('k8s-tls', { type: 'kubernetes.io/tls' }));
    // Keys and size, as for ConfigMaps (the limit is reported on data).
    await expectInvalid(server, 'POST', path, secret('keys', { data: { 'no/slash': b64('x') } }), ['data[no/slash]']);
    const big = await expectInvalid(server, 'POST', path, secret('big', { data: { a: b64(Buffer.alloc(1024 * 1024 + 1)) } }), ['data']);
    assert.equal(big[0]!.message, 'Too long: may not be more than 1048576 bytes');
    const names = (await api(server, 'GET', path)).body.items.map((i: Body) => i.metadata.name);
    assert.deepEqual(names, ['b', 'd1', 'd2', 'k8s-tls', 'sa', 'ssh', 'tls']);
  });

  test('bootstrap tokens: name, namespace, token-id and token-secret formats, expiration, usages and extra groups', async () => {
    const path = '/api/v1/namespaces/orch-system/secrets';
    const token = (name: string, data: Record<string, string>): Body => secret(name, { type: 'bootstrap.orch.io/token', stringData: data });
    const good = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', expiration: '2030-01-02T03:04:05Z', 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true', 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:ingress', description: 'any text' };
    const c = await api(server, 'POST', path, token('bootstrap-token-abcdef', good));
    assert.equal(c.status, 201, c.text);
    // Outside the system namespace.
    const ns = await namespace();
    await expectInvalid(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, token('bootstrap-token-abcdef', good), ['metadata.namespace']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-zzzzzz', { ...good, 'token-id': 'zzzzzy' }), ['metadata.name']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-x', { 'token-secret': good['token-secret'] }), ['data[token-id]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-x', { 'token-id': 'ABCDEF', 'token-secret': good['token-secret'] }), ['data[token-id]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-abcdeg', { 'token-id': 'abcdeg' }), ['data[token-secret]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-abcdeg', { 'token-id': 'abcdeg', 'token-secret': 'short' }), ['data[token-secret]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-abcdeg', { ...good, 'token-id': 'abcdeg', expiration: 'tomorrow' }), ['data[expiration]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-abcdeg', { ...good, 'token-id': 'abcdeg', 'usage-bootstrap-everything': 'true' }), ['data[usage-bootstrap-everything]']);
    await expectInvalid(server, 'POST', path, token('bootstrap-token-abcdeg', { ...good, 'token-id': 'abcdeg', 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' }), ['data[auth-extra-groups]']);
    const names = (await api(server, 'GET', path)).body.items.map((i: Body) => i.metadata.name);
    assert.deepEqual(names, ['bootstrap-token-abcdef']);
  });

  test('the kubernetes profile spells the types and the annotation with kubernetes.io', async () => {
    const ns = await namespace(kube);
    const path = `/api/v1/namespaces/${ns}/secrets`;
    await expectInvalid(kube, 'POST', path, secret('sa', { type: 'kubernetes.io/service-account-token' }), ['metadata.annotations[kubernetes.io/service-account.name]']);
    await expectInvalid(kube, 'POST', path, secret('tls', { type: 'kubernetes.io/tls' }), ['data[tls.crt]', 'data[tls.key]']);
    assert.equal((await api(kube, 'POST', path, secret('orch-tls', { type: 'orch.io/tls' }))).status, 201);
    const sys = '/api/v1/namespaces/kube-system/secrets';
    await expectInvalid(kube, 'POST', sys, secret('bootstrap-token-abcdef', { type: 'bootstrap.kubernetes.io/token', stringData: { 'token-id': 'abcdef' } }), ['data[token-secret]']);
    const ok = await api(kube, 'POST', sys, secret('bootstrap-token-abcdef', { type: 'bootstrap.kubernetes.io/token', stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' } }));
    assert.equal(ok.status, 201, ok.text);
  });

  test('no error of any write path shows a secret value', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/secrets`;
    const VALUE = 'hunter2-very-secret-value';
    const apply = { 'Content-Type': 'application/apply-patch+yaml' };
    const bodies: [number, string, string, unknown, Record<string, string>?][] = [
      // Not base64 in data.
      [400, 'POST', path, secret('x', { data: { k: `${VALUE}!` } })],
      // Wrong types under stringData and data.
      [400, 'POST', path, secret('x', { stringData: { k: { nested: VALUE } } })],
      [400, 'POST', path, secret('x', { data: { k: [VALUE] } })],
      // Type rules that look at values.
      [422, 'POST', path, secret('x', { type: 'orch.io/dockercfg', stringData: { '.dockercfg': `{${VALUE}` } })],
      [422, 'POST', path, secret('x', { type: 'orch.io/dockerconfigjson', stringData: { '.dockerconfigjson': `"${VALUE}"` } })],
      [422, 'POST', '/api/v1/namespaces/orch-system/secrets', secret('bootstrap-token-abcdef', { type: 'bootstrap.orch.io/token', stringData: { 'token-id': 'abcdef', 'token-secret': VALUE, expiration: VALUE, 'auth-extra-groups': VALUE } })],
      // Too big.
      [422, 'POST', path, secret('x', { stringData: { k: VALUE.repeat(50_000) } })],
      // Apply without a kind, with bad base64, and with a bad key.
      [400, 'PATCH', `${path}/x?fieldManager=m`, `{"apiVersion":"v1","metadata":{"name":"x"},"stringData":{"k":"${VALUE}"}}`, apply],
      [400, 'PATCH', `${path}/x?fieldManager=m`, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"data":{"k":"${VALUE}"}}`, apply],
      [422, 'PATCH', `${path}/x?fieldManager=m`, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"stringData":{"bad key":"${VALUE}"}}`, apply],
      // YAML, and JSON that does not parse (the parser's message quotes the input around the error).
      [400, 'POST', path, `apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\ndata:\n  k: ${VALUE}!\n`, { 'Content-Type': 'application/yaml' }],
      [400, 'POST', path, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"stringData":{"k":${VALUE}}}`],
      [400, 'PATCH', `${path}/x`, `{"stringData":{"k":${VALUE}}}`, { 'Content-Type': 'application/merge-patch+json' }],
    ];
    for (const [status, method, p, body, headers] of bodies) {
      const r = await api(server, method, p, body, headers);
      assert.equal(r.status, status, `${method} ${p}: ${r.text.slice(0, 300)}`);
      assert.equal(r.body?.kind, 'Status', r.text.slice(0, 300));
      // Any part of it: parsers quote a few characters around an error.
      assert.equal(r.text.includes(VALUE.slice(1, 7)), false, `${method} ${p} ${JSON.stringify(body).slice(0, 120)}: the error shows the value: ${r.text.slice(0, 400)}`);
      assert.equal(r.text.includes(b64(VALUE)), false, 'nor its base64');
    }
    // An immutable secret refuses an update without showing either value.
    assert.equal((await api(server, 'POST', path, secret('frozen', { immutable: true, stringData: { k: VALUE } }))).status, 201);
    const r = await api(server, 'PATCH', `${path}/frozen`, { stringData: { k: `${VALUE}2` } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.text.includes(VALUE) || r.text.includes(b64(VALUE)), false, r.text);
    assert.deepEqual((await api(server, 'GET', path)).body.items.map((i: Body) => i.metadata.name), ['frozen']);
  });

  test('Table: Name, Type, Data, Age; field selector on type', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/secrets`;
    assert.equal((await api(server, 'POST', path, secret('o', { stringData: { a: '1', b: '2' } }))).status, 201);
    assert.equal((await api(server, 'POST', path, secret('t', { type: 'orch.io/tls', stringData: { 'tls.crt': 'c', 'tls.key': 'k' } }))).status, 201);
    for (const g of ['meta.orch.io', 'meta.k8s.io']) {
      const t = await api(server, 'GET', path, undefined, { Accept: `application/json;as=Table;v=v1;g=${g}` });
      assert.equal(t.status, 200, t.text);
      assert.deepEqual(t.body.columnDefinitions.map((c: Body) => c.name), ['Name', 'Type', 'Data', 'Age']);
      assert.deepEqual(t.body.rows.map((r: Body) => r.cells.slice(0, 3)), [['o', 'Opaque', 2], ['t', 'orch.io/tls', 2]]);
    }
    const sel = await api(server, 'GET', `${path}?fieldSelector=${encodeURIComponent('type=orch.io/tls')}`);
    assert.deepEqual(sel.body.items.map((i: Body) => i.metadata.name), ['t']);
    const not = await api(server, 'GET', `${path}?fieldSelector=${encodeURIComponent('type!=orch.io/tls')}`);
    assert.deepEqual(not.body.items.map((i: Body) => i.metadata.name), ['o']);
    const bad = await api(server, 'GET', `${path}?fieldSelector=data.a=x`);
    assert.equal(bad.status, 400, bad.text);
    // ConfigMaps have no type field to select on.
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=type=x`)).status, 400);
  });
});

describe('ServiceAccount', () => {
  test('fields, secret references keep their names only, Table: Name, Secrets, Age', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const c = await api(server, 'POST', path, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder' },
      secrets: [{ name: 's1', namespace: 'elsewhere', uid: 'u' }, { name: 's2' }],
      imagePullSecrets: [{ name: 'pull' }],
      automountServiceAccountToken: false,
    });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.secrets, [{ name: 's1' }, { name: 's2' }]);
    assert.deepEqual(c.body.imagePullSecrets, [{ name: 'pull' }]);
    assert.equal(c.body.automountServiceAccountToken, false);
    const pb = await fetch(`${server.url}${path}/builder`, { headers: { Accept: 'application/vnd.orch.protobuf' } });
    const decoded = decodeObject(Buffer.from(await pb.arrayBuffer())) as Body;
    assert.deepEqual([decoded.secrets, decoded.imagePullSecrets, decoded.automountServiceAccountToken], [c.body.secrets, c.body.imagePullSecrets, false]);
    await expectInvalid(server, 'POST', path, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'Bad_Name' } }, ['metadata.name']);
    const t = await api(server, 'GET', path, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.deepEqual(t.body.columnDefinitions.map((c: Body) => c.name), ['Name', 'Secrets', 'Age']);
    const rows = Object.fromEntries(t.body.rows.map((r: Body) => [r.cells[0], r.cells[1]]));
    assert.equal(rows.builder, 2);
  });
});

describe('the service-account controller', () => {
  test('every namespace gets a default account, re-created when deleted', async () => {
    for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) {
      await waitFor(`default account in ${ns}`, async () => (await api(server, 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200);
    }
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/serviceaccounts/default`;
    await waitFor('a default account in a new namespace', async () => (await api(server, 'GET', path)).status === 200);
    const before = (await api(server, 'GET', path)).body.metadata.uid;
    assert.equal((await api(server, 'DELETE', path)).status, 200);
    await waitFor('the default account again', async () => {
      const r = await api(server, 'GET', path);
      return r.status === 200 && r.body.metadata.uid !== before;
    });
  });

  test('a terminating namespace gets none', async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/serviceaccounts/default`;
    await waitFor('a default account', async () => (await api(server, 'GET', path)).status === 200);
    // A finalizer on a ConfigMap keeps the namespace terminating while its accounts are removed.
    assert.equal((await api(server, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { ...configMap('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } })).status, 201);
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
    await waitFor('the default account removed', async () => (await api(server, 'GET', path)).status === 404);
    // Give the controller time to (wrongly) put it back.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await api(server, 'GET', path)).status, 404);
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}`)).body.status.phase, 'Terminating');
    const release = await api(server, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/held`, { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(release.status, 200, release.text);
    await waitFor('the namespace gone', async () => (await api(server, 'GET', `/api/v1/namespaces/${ns}`)).status === 404);
  });
});

describe('CBOR', () => {
  test('binaryData and Secret data are byte strings tagged for base64 (22), both ways; text stays text', async () => {
    const ns = await namespace();
    const raw = Buffer.from([0, 1, 2, 0xc3, 0x28, 255]);
    const base = `/api/v1/namespaces/${ns}`;
    assert.equal((await api(server, 'POST', `${base}/configmaps`, configMap('c', { data: { t: 'text' }, binaryData: { b: b64(raw) } }))).status, 201);
    const res = await fetch(`${server.url}${base}/configmaps/c`, { headers: { Accept: 'application/cbor' } });
    const bytes = Buffer.from(await res.arrayBuffer());
    // Tag 22 (0xd6), then a byte string of 6 bytes (0x46), then the raw bytes.
    assert.ok(bytes.includes(Buffer.concat([Buffer.from([0xd6, 0x46]), raw])), bytes.toString('hex'));
    const decoded = decodeCbor(bytes) as Body;
    assert.deepEqual([decoded.binaryData, decoded.data], [{ b: b64(raw) }, { t: 'text' }]);
    // A list of Secrets, and a CBOR create with a tagged byte string.
    // Encoded independently of the server's codec.
    const body = new CborEncoder({ mapsAsObjects: true, useRecords: false, tagUint8Array: false }).encode({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: new Tag(raw, 22) } });
    const created = await fetch(`${server.url}${base}/secrets`, { method: 'POST', headers: { 'Content-Type': 'application/cbor', Accept: 'application/json' }, body });
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(((await created.json()) as Body).data.k, b64(raw));
    const list = await fetch(`${server.url}${base}/secrets`, { headers: { Accept: 'application/cbor' } });
    const listBytes = Buffer.from(await list.arrayBuffer());
    assert.ok(listBytes.includes(Buffer.concat([Buffer.from([0xd6, 0x46]), raw])));
    assert.equal((decodeCbor(listBytes) as Body).items[0].data.k, b64(raw));
  });
});

describe('kubectl', () => {
  for (const [profile, s] of [['orch', server], ['kubernetes', kube]] as const) {
    test(`create configmap / secret generic --from-literal, create serviceaccount, get cm,secret,sa (${profile} profile)`, async () => {
      const ns = await namespace(s);
      const k = kubectlFor(s, { namespace: ns, label: `kubectl-config-${profile}` });
      await k.ok(['create', 'configmap', 'settings', '--from-literal=mode=fast', '--from-literal=level=3']);
      await k.ok(['create', 'secret', 'generic', 'creds', '--from-literal=user=admin', '--from-literal=password=s3cr3t']);
      await k.ok(['create', 'serviceaccount', 'robot']);
      const secretJson = JSON.parse(await k.ok(['get', 'secret', 'creds', '-o', 'json'])) as Body;
      assert.deepEqual(secretJson.data, { password: b64('s3cr3t'), user: b64('admin') });
      assert.equal(secretJson.type, 'Opaque');
      await waitFor('the default account', async () => (await api(s, 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200);
      const rows = tableRows(await k.ok(['get', 'cm,secret,sa']));
      const find = (name: string) => rows.find((r) => r[0] === name);
      assert.deepEqual(find('configmap/settings')?.slice(0, 2), ['configmap/settings', '2'], JSON.stringify(rows));
      assert.deepEqual(find('secret/creds')?.slice(0, 3), ['secret/creds', 'Opaque', '2'], JSON.stringify(rows));
      assert.deepEqual(find('serviceaccount/robot')?.slice(0, 2), ['serviceaccount/robot', '0'], JSON.stringify(rows));
      assert.ok(find('serviceaccount/default'), JSON.stringify(rows));
      // A second create is AlreadyExists; a bad key is refused with the field named.
      const again = await k.fails(['create', 'configmap', 'settings', '--from-literal=a=b']);
      assert.match(again.stderr, /AlreadyExists|already exists/);
      const bad = await k.fails(['create', 'secret', 'generic', 'bad', '--from-literal=no/slash=x']);
      assert.match(bad.stderr, /no\/slash|valid config key/);
    });
  }
});

describe('server-side apply', () => {
  const apply = { 'Content-Type': 'application/apply-patch+yaml' };
  test('of each kind: created, merged by a second manager, conflicts reported, stringData merged into data', async () => {
    const ns = await namespace();
    const base = `/api/v1/namespaces/${ns}`;
    const cm = await api(server, 'PATCH', `${base}/configmaps/a?fieldManager=one`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { x: '1' }, binaryData: { b: b64('bin') } }, apply);
    assert.equal(cm.status, 201, cm.text);
    const cm2 = await api(server, 'PATCH', `${base}/configmaps/a?fieldManager=two`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { y: '2' } }, apply);
    assert.equal(cm2.status, 200, cm2.text);
    assert.deepEqual(cm2.body.data, { x: '1', y: '2' });
    const conflict = await api(server, 'PATCH', `${base}/configmaps/a?fieldManager=two`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { x: 'mine' } }, apply);
    assert.equal(conflict.status, 409, conflict.text);
    // One manager drops its key: it goes.
    const drop = await api(server, 'PATCH', `${base}/configmaps/a?fieldManager=one`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} }, apply);
    assert.equal(drop.status, 200, drop.text);
    assert.deepEqual(drop.body.data, { y: '2' });

    const s = await api(server, 'PATCH', `${base}/secrets/s?fieldManager=one`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque', stringData: { k: 'v' }, data: { d: b64('x') } }, apply);
    assert.equal(s.status, 201, s.text);
    assert.deepEqual(s.body.data, { d: b64('x'), k: b64('v') });
    assert.equal(s.body.stringData, undefined);
    const s2 = await api(server, 'PATCH', `${base}/secrets/s?fieldManager=two`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { e: b64('y') } }, apply);
    assert.equal(s2.status, 200, s2.text);
    assert.deepEqual(Object.keys(s2.body.data).sort(), ['d', 'e', 'k']);

    const sa = await api(server, 'PATCH', `${base}/serviceaccounts/robot?fieldManager=one`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' }, secrets: [{ name: 'a' }], imagePullSecrets: [{ name: 'p' }] }, apply);
    assert.equal(sa.status, 201, sa.text);
    // secrets merge by name; imagePullSecrets is atomic.
    const sa2 = await api(server, 'PATCH', `${base}/serviceaccounts/robot?fieldManager=two`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' }, secrets: [{ name: 'b' }], automountServiceAccountToken: true }, apply);
    assert.equal(sa2.status, 200, sa2.text);
    assert.deepEqual(sa2.body.secrets, [{ name: 'a' }, { name: 'b' }]);
    assert.equal(sa2.body.automountServiceAccountToken, true);
    const sa3 = await api(server, 'PATCH', `${base}/serviceaccounts/robot?fieldManager=two`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' }, imagePullSecrets: [{ name: 'q' }] }, apply);
    assert.equal(sa3.status, 409, sa3.text);
    // Strategic merge patch merges secrets by name too.
    const smp = await api(server, 'PATCH', `${base}/serviceaccounts/robot`, { secrets: [{ name: 'c' }] }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 200, smp.text);
    assert.deepEqual(smp.body.secrets.map((r: Body) => r.name).sort(), ['a', 'b', 'c']);
  });
});

describe('discovery and OpenAPI', () => {
  for (const [profile, s] of [['orch', server], ['kubernetes', kube]] as const) {
    test(`the three kinds are in /api/v1, aggregated discovery and both OpenAPI versions (${profile} profile)`, async () => {
      const v1 = (await api(s, 'GET', '/api/v1')).body;
      const byName = Object.fromEntries(v1.resources.map((r: Body) => [r.name, r]));
      assert.deepEqual([byName.configmaps?.kind, byName.configmaps?.namespaced, byName.configmaps?.shortNames], ['ConfigMap', true, ['cm']]);
      assert.deepEqual([byName.secrets?.kind, byName.secrets?.namespaced, byName.secrets?.shortNames], ['Secret', true, undefined]);
      assert.deepEqual([byName.serviceaccounts?.kind, byName.serviceaccounts?.namespaced, byName.serviceaccounts?.shortNames], ['ServiceAccount', true, ['sa']]);
      for (const r of ['configmaps', 'secrets', 'serviceaccounts']) assert.deepEqual([...byName[r].verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
      const group = profile === 'orch' ? 'apidiscovery.orch.io' : 'apidiscovery.k8s.io';
      const agg = await api(s, 'GET', '/api', undefined, { Accept: `application/json;g=${group};v=v2;as=APIGroupDiscoveryList` });
      assert.equal(agg.status, 200, agg.text);
      const core = agg.body.items[0].versions[0].resources.map((r: Body) => r.resource);
      for (const r of ['configmaps', 'secrets', 'serviceaccounts']) assert.ok(core.includes(r), `${r} in ${core}`);
      const v3 = (await api(s, 'GET', '/openapi/v3/api/v1')).body;
      const prefix = profile === 'orch' ? 'io.orch.core.v1' : 'io.k8s.api.core.v1';
      const names = Object.keys(v3.components.schemas);
      for (const k of ['ConfigMap', 'Secret', 'ServiceAccount']) assert.ok(names.some((n) => n.endsWith(`.v1.${k}`)), `${k} in ${names.filter((n) => n.includes('core')).join(',')}`);
      const secretSchema = v3.components.schemas[names.find((n) => n.endsWith('.v1.Secret'))!];
      assert.equal(secretSchema.properties.data.additionalProperties.format, 'byte');
      const sa = v3.components.schemas[names.find((n) => n.endsWith('.v1.ServiceAccount'))!];
      assert.equal(sa.properties.secrets['x-kubernetes-patch-merge-key'], 'name');
      assert.equal(sa.properties.imagePullSecrets['x-kubernetes-list-type'], 'atomic');
      void prefix;
      const v2 = (await api(s, 'GET', '/openapi/v2', undefined, { Accept: 'application/json' })).body;
      for (const k of ['ConfigMap', 'Secret', 'ServiceAccount']) assert.ok(Object.keys(v2.definitions).some((n) => n.endsWith(`.v1.${k}`)), `${k} in v2`);
    });
  }
});
