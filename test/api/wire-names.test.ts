// The wire-level names Kubernetes clients hard-code (docs/wire-names.md): in every naming profile
// the server accepts both products' spellings of the protobuf media type and of the meta group of
// `as=` conversions, and answers in the spelling the request used. Resource API groups stay the
// profile's own.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { decodeObject, decodeWatchEvent, encodeObject } from '../../src/wire/protobuf/index.ts';

const servers = { orch: await testServer(), kubernetes: await testServer({ naming: 'kubernetes' }) };
const SPELLINGS = [
  { pb: 'application/vnd.orch.protobuf', meta: 'meta.orch.io' },
  { pb: 'application/vnd.kubernetes.protobuf', meta: 'meta.k8s.io' },
] as const;

async function raw(server: { url: string }, method: string, path: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });

for (const [profile, server] of Object.entries(servers)) {
  describe(`${profile} profile`, async () => {
    assert.equal((await api(server, 'POST', '/api/v1/nodes', node(`wire-${profile}`, { wire: 'yes' }))).status, 201);

    for (const { pb, meta } of SPELLINGS) {
      test(`Table as ${meta} v1 and v1beta1: the answer's apiVersion is the one asked for`, async () => {
        for (const v of ['v1', 'v1beta1']) {
          const r = await api(server, 'GET', '/api/v1/nodes?labelSelector=wire', undefined, { Accept: `application/json;as=Table;v=${v};g=${meta},application/json` });
          assert.equal(r.status, 200);
          assert.equal(r.headers.get('content-type'), `application/json;g=${meta};v=${v};as=Table`);
          assert.equal(r.body.kind, 'Table');
          assert.equal(r.body.apiVersion, `${meta}/${v}`);
          assert.deepEqual(r.body.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 3), ['Name', 'Status', 'Roles']);
          assert.equal(r.body.rows[0].object.kind, 'PartialObjectMetadata');
          assert.equal(r.body.rows[0].object.apiVersion, `${meta}/${v}`);
        }
      });

      test(`PartialObjectMetadata(List) as ${meta}, in JSON and in ${pb}`, async () => {
        const one = await api(server, 'GET', `/api/v1/nodes/wire-${profile}`, undefined, { Accept: `application/json;as=PartialObjectMetadata;g=${meta};v=v1` });
        assert.equal(one.status, 200);
        assert.deepEqual([one.body.kind, one.body.apiVersion, one.body.metadata.name], ['PartialObjectMetadata', `${meta}/v1`, `wire-${profile}`]);
        const list = await raw(server, 'GET', '/api/v1/nodes?labelSelector=wire', { Accept: `${pb};as=PartialObjectMetadataList;g=${meta};v=v1,application/json` });
        assert.equal(list.status, 200);
        assert.equal(list.type, `${pb};g=${meta};v=v1;as=PartialObjectMetadataList`);
        const decoded = decodeObject(list.bytes) as unknown as { apiVersion: string; kind: string; items: { metadata: { name: string } }[] };
        assert.deepEqual([decoded.kind, decoded.apiVersion], ['PartialObjectMetadataList', `${meta}/v1`]);
        assert.deepEqual(decoded.items.map((i) => i.metadata.name), [`wire-${profile}`]);
      });

      test(`a create in ${pb}, answered in it; a watch in it echoes ;stream=watch`, async () => {
        const name = `wire-${profile}-${meta.replace(/\W/g, '-')}`;
        const rv = (await api(server, 'GET', '/api/v1/nodes')).body.metadata.resourceVersion;
        const watch = await fetch(`${server.url}/api/v1/nodes?watch=1&resourceVersion=${rv}&timeoutSeconds=1&fieldSelector=metadata.name=${name}`, { headers: { Accept: `${pb};stream=watch` } });
        assert.equal(watch.headers.get('content-type'), `${pb};stream=watch`);
        const created = await raw(server, 'POST', '/api/v1/nodes', { 'Content-Type': pb, Accept: `${pb}, application/json` }, encodeObject(node(name)));
        assert.equal(created.status, 201);
        assert.equal(created.type, pb);
        assert.equal(decodeObject(created.bytes).metadata.name, name);
        assert.equal((await api(server, 'GET', `/api/v1/nodes/${name}`)).status, 200);
        const bytes = Buffer.from(await watch.arrayBuffer());
        const events = [];
        for (let at = 0; at < bytes.length; at += 4 + bytes.readUInt32BE(at)) events.push(decodeWatchEvent(bytes.subarray(at + 4, at + 4 + bytes.readUInt32BE(at))));
        assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', name]]);
      });

      test(`errors asked for in ${pb} are a Status in it`, async () => {
        for (const path of ['/api/v1/nodes/absent', '/api/v1/pods']) {
          const r = await raw(server, 'GET', path, { Accept: `${pb},application/json` });
          assert.equal(r.status, 404);
          assert.equal(r.type, pb);
          const status = decodeObject(r.bytes) as unknown as { kind: string; reason: string };
          assert.deepEqual([status.kind, status.reason], ['Status', 'NotFound']);
        }
      });
    }

    test('other spellings are refused as before, naming the profile spelling, and change nothing', async () => {
      const own = SPELLINGS[profile === 'orch' ? 0 : 1];
      const body = encodeObject(node(`wire-${profile}-refused`));
      const refused = await api(server, 'POST', '/api/v1/nodes', body.toString('latin1'), { 'Content-Type': 'application/vnd.example.protobuf' });
      assert.equal(refused.status, 415);
      assert.equal(refused.body.reason, 'UnsupportedMediaType');
      assert.match(refused.body.message, new RegExp(`accepted media types include: application/json, application/yaml, ${own.pb.replace(/\./g, '\\.')}$`));
      assert.equal((await api(server, 'GET', `/api/v1/nodes/wire-${profile}-refused`)).status, 404);
      const table = await api(server, 'GET', '/api/v1/nodes', undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.example.com' });
      assert.equal(table.status, 406);
      assert.equal(table.body.reason, 'NotAcceptable');
      assert.equal(table.body.message, `only the following media types are accepted: application/json, application/yaml, ${own.pb}`);
    });

    test("resource API groups stay the profile's own", async () => {
      const other = profile === 'orch' ? 'coordination.k8s.io' : 'coordination.orch.io';
      const own = profile === 'orch' ? 'coordination.orch.io' : 'coordination.k8s.io';
      assert.equal((await api(server, 'GET', `/apis/${own}/v1/namespaces/default/leases`)).status, 200);
      assert.equal((await api(server, 'GET', `/apis/${other}/v1/namespaces/default/leases`)).status, 404);
    });
  });
}
