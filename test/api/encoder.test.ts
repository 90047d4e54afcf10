// Errors answered by a handler use the encoding that handler negotiated, even where negotiating
// the Accept header for errors alone would choose another (a conversion asked in protobuf, YAML
// on a write); errors before any negotiation negotiate the Accept header once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { testServer } from '../support/server.ts';
import { decodeObject } from '../../src/wire/protobuf/index.ts';

const orch = await testServer();
const PB = 'application/vnd.orch.protobuf';
const K8S_PB = 'application/vnd.kubernetes.protobuf';
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';

async function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(orch.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

test('a 404 after a PartialObjectMetadata conversion was negotiated in protobuf is a protobuf Status, in the spelling asked', async () => {
  for (const spelling of [PB, K8S_PB]) {
    const r = await raw('GET', `${LEASES}/missing`, { Accept: `${spelling};as=PartialObjectMetadata;g=meta.orch.io;v=v1` });
    assert.equal(r.status, 404);
    assert.equal(r.type, spelling);
    const status = decodeObject(r.bytes) as unknown as { kind: string; reason: string };
    assert.deepEqual([status.kind, status.reason], ['Status', 'NotFound']);
  }
});

test('a 415 on a write whose answer was negotiated as YAML is a YAML Status', async () => {
  const r = await raw('POST', LEASES, { Accept: 'application/yaml', 'Content-Type': 'text/plain' }, 'x');
  assert.equal(r.status, 415);
  assert.equal(r.type, 'application/yaml');
  const status = parseYaml(r.bytes.toString('utf8')) as { kind: string; reason: string; code: number };
  assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'UnsupportedMediaType', 415]);
});

test('an error before negotiation answers in what the Accept header asks for errors, JSON when it asks for nothing producible', async () => {
  const yaml = await raw('GET', '/apis/nothing.orch.io/v1/things', { Accept: 'application/yaml' });
  assert.deepEqual([yaml.status, yaml.type], [404, 'application/yaml']);
  const none = await raw('GET', '/apis/nothing.orch.io/v1/things', { Accept: 'text/html' });
  assert.deepEqual([none.status, none.type], [404, 'application/json']);
  assert.equal((JSON.parse(none.bytes.toString('utf8')) as { reason: string }).reason, 'NotFound');
  assert.ok(none.bytes.toString('utf8').endsWith('}\n'), 'a JSON answer ends with a newline');
});

test('an answer kept per stored version and encoder follows the object: a YAML get after an update shows the update', async () => {
  const path = `${LEASES}/kept`;
  const created = await raw('POST', LEASES, { 'Content-Type': 'application/json' }, JSON.stringify({ metadata: { name: 'kept' }, spec: { holderIdentity: 'a' } }));
  assert.equal(created.status, 201);
  const first = parseYaml((await raw('GET', path, { Accept: 'application/yaml' })).bytes.toString('utf8')) as { metadata: { resourceVersion: string }; spec: { holderIdentity: string } };
  const again = await raw('GET', path, { Accept: 'application/yaml' });
  assert.deepEqual(parseYaml(again.bytes.toString('utf8')), first, 'the same stored version reads the same');
  const updated = await raw('PATCH', path, { 'Content-Type': 'application/merge-patch+json' }, JSON.stringify({ spec: { holderIdentity: 'b' } }));
  assert.equal(updated.status, 200);
  const second = parseYaml((await raw('GET', path, { Accept: 'application/yaml' })).bytes.toString('utf8')) as typeof first;
  assert.equal(second.spec.holderIdentity, 'b');
  assert.notEqual(second.metadata.resourceVersion, first.metadata.resourceVersion);
});
