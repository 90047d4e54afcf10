// Protobuf over HTTP: the profile's media type for get, list, watch (length-prefixed frames),
// writes and errors; protobuf request bodies; the other profile's spelling accepted and echoed; kubectl (which
// sends protobuf for `kubectl create namespace`) in the kubernetes profile.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { widgetCrd } from '../support/crd.ts';
import type { KObject } from '../../src/machinery/meta.ts';
import { decodeObject, decodeWatchEvent, encodeObject, PROTOBUF_MAGIC } from '../../src/wire/protobuf/index.ts';

const orch = await testServer();
const PB = 'application/vnd.orch.protobuf';
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';

async function raw(server: { url: string }, method: string, path: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('protobuf responses (orch profile)', () => {
  test('get: the k8s\\0 envelope decodes to the JSON answer', async () => {
    await api(orch, 'POST', LEASES, { metadata: { name: 'pb1', labels: { a: 'b' } }, spec: { holderIdentity: 'me', leaseDurationSeconds: 5, renewTime: '2026-01-02T03:04:05.123456Z' } });
    const json = (await api(orch, 'GET', `${LEASES}/pb1`)).body;
    const r = await raw(orch, 'GET', `${LEASES}/pb1`, { Accept: PB });
    assert.equal(r.status, 200);
    assert.equal(r.type, PB);
    assert.deepEqual([...r.bytes.subarray(0, 4)], [...PROTOBUF_MAGIC]);
    assert.deepEqual(decodeObject(r.bytes), json);
  });

  test('list, and errors as a protobuf Status', async () => {
    const r = await raw(orch, 'GET', LEASES, { Accept: `${PB}, application/json` });
    assert.equal(r.type, PB);
    const list = decodeObject(r.bytes) as unknown as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'LeaseList');
    assert.ok(list.items.some((i) => i.metadata.name === 'pb1'));
    const missing = await raw(orch, 'GET', `${LEASES}/nope`, { Accept: PB });
    assert.equal(missing.status, 404);
    assert.equal(missing.type, PB);
    const status = decodeObject(missing.bytes) as unknown as { kind: string; reason: string; code: number };
    assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'NotFound', 404]);
    // A resource the server does not have (kubectl describe node lists pods): the 404 is negotiated too.
    const unknown = await raw(orch, 'GET', '/api/v1/pods', { Accept: `${PB},application/json` });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.type, PB);
    assert.deepEqual((({ kind, reason, code, message }) => ({ kind, reason, code, message }))(decodeObject(unknown.bytes) as unknown as Record<string, unknown>), {
      kind: 'Status',
      reason: 'NotFound',
      code: 404,
      message: 'the server could not find the requested resource',
    });
    assert.equal((await raw(orch, 'GET', '/api/v1/pods', {})).type, 'application/json');
  });

  test("the other profile's spelling is protobuf too, answered in that spelling; an unknown type is 406", async () => {
    const r = await raw(orch, 'GET', `${LEASES}/pb1`, { Accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/vnd.kubernetes.protobuf');
    assert.deepEqual(decodeObject(r.bytes), (await api(orch, 'GET', `${LEASES}/pb1`)).body);
    assert.equal((await raw(orch, 'GET', `${LEASES}/pb1`, { Accept: 'application/vnd.example.protobuf' })).status, 406);
    const fallback = await raw(orch, 'GET', `${LEASES}/pb1`, { Accept: 'application/vnd.example.protobuf, application/json' });
    assert.equal(fallback.type, 'application/json');
  });

  test('watch streams length-prefixed WatchEvent frames', async () => {
    const rv = (await api(orch, 'GET', LEASES)).body.metadata.resourceVersion;
    const res = await fetch(`${orch.url}${LEASES}?watch=1&resourceVersion=${rv}&timeoutSeconds=2`, { headers: { Accept: `${PB};stream=watch` } });
    assert.equal(res.headers.get('content-type'), `${PB};stream=watch`);
    await api(orch, 'POST', LEASES, { metadata: { name: 'pb-w' } });
    const bytes = Buffer.from(await res.arrayBuffer());
    const events: { type: string; name?: string }[] = [];
    for (let at = 0; at < bytes.length; ) {
      const len = bytes.readUInt32BE(at);
      const ev = decodeWatchEvent(bytes.subarray(at + 4, at + 4 + len));
      events.push({ type: ev.type, name: ev.object.metadata?.name });
      at += 4 + len;
    }
    assert.deepEqual(events.filter((e) => e.type !== 'BOOKMARK')[0], { type: 'ADDED', name: 'pb-w' });
  });
});

describe('PartialObjectMetadata in protobuf (what metadata-only clients ask for first)', () => {
  // client-go's metadata client: protobuf first, then the same conversion in JSON, then JSON.
  const accept = (as: string) => `${PB};as=${as};g=meta.orch.io;v=v1,application/json;as=${as};g=meta.orch.io;v=v1,application/json`;
  const jsonOf = async (path: string, as: string) => (await api(orch, 'GET', path, undefined, { Accept: `application/json;as=${as};g=meta.orch.io;v=v1` })).body;

  test('get and list decode to the JSON conversion; a watch streams PartialObjectMetadata frames', async () => {
    await api(orch, 'POST', LEASES, { metadata: { name: 'pom-1', labels: { x: 'y' }, annotations: { a: 'b' } }, spec: { holderIdentity: 'not in metadata' } });
    const one = await raw(orch, 'GET', `${LEASES}/pom-1`, { Accept: accept('PartialObjectMetadata') });
    assert.equal(one.status, 200);
    // The conversion is named after the media type, as kube-apiserver writes it.
    assert.equal(one.type, `${PB};g=meta.orch.io;v=v1;as=PartialObjectMetadata`);
    const decoded = decodeObject(one.bytes) as unknown as Record<string, unknown>;
    assert.deepEqual(decoded, await jsonOf(`${LEASES}/pom-1`, 'PartialObjectMetadata'));
    assert.equal(decoded.apiVersion, 'meta.orch.io/v1');
    assert.equal('spec' in decoded, false);

    const list = await raw(orch, 'GET', LEASES, { Accept: accept('PartialObjectMetadataList') });
    assert.equal(list.type, `${PB};g=meta.orch.io;v=v1;as=PartialObjectMetadataList`);
    const decodedList = decodeObject(list.bytes) as unknown as { kind: string; metadata: unknown; items: Record<string, unknown>[] };
    const jsonList = await jsonOf(LEASES, 'PartialObjectMetadataList');
    assert.equal(decodedList.kind, 'PartialObjectMetadataList');
    assert.deepEqual(decodedList.metadata, jsonList.metadata);
    assert.deepEqual(decodedList.items, jsonList.items);

    // The single form asked of a list is 406, as in JSON (kube-apiserver converts after negotiating).
    assert.equal((await raw(orch, 'GET', LEASES, { Accept: accept('PartialObjectMetadata') })).status, 406);
    // Tables have no protobuf form; v1beta1 is served in JSON only.
    assert.equal((await raw(orch, 'GET', LEASES, { Accept: `${PB};as=Table;g=meta.orch.io;v=v1` })).status, 406);
    assert.equal((await raw(orch, 'GET', LEASES, { Accept: `${PB};as=PartialObjectMetadataList;g=meta.orch.io;v=v1beta1` })).status, 406);

    const rv = (await api(orch, 'GET', LEASES)).body.metadata.resourceVersion;
    const res = await fetch(`${orch.url}${LEASES}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, { headers: { Accept: accept('PartialObjectMetadata') } });
    assert.equal(res.headers.get('content-type'), `${PB};stream=watch`);
    await api(orch, 'PATCH', `${LEASES}/pom-1`, { metadata: { labels: { x: 'z' } } }, { 'Content-Type': 'application/merge-patch+json' });
    const bytes = Buffer.from(await res.arrayBuffer());
    const events: { type: string; object: Record<string, any> }[] = [];
    for (let at = 0; at < bytes.length; at += 4 + bytes.readUInt32BE(at)) events.push(decodeWatchEvent(bytes.subarray(at + 4, at + 4 + bytes.readUInt32BE(at))));
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'MODIFIED');
    assert.equal(events[0]!.object.kind, 'PartialObjectMetadata');
    assert.deepEqual(events[0]!.object.metadata.labels, { x: 'z' });
    assert.equal(events[0]!.object.spec, undefined);
  });
});

describe('protobuf request bodies', () => {
  test('create in protobuf; malformed bytes are 400 and store nothing', async () => {
    const body = encodeObject({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'pb-in' }, spec: { holderIdentity: 'binary' } });
    const c = await raw(orch, 'POST', LEASES, { 'Content-Type': PB, Accept: PB }, body);
    assert.equal(c.status, 201);
    assert.equal((decodeObject(c.bytes) as unknown as { spec: { holderIdentity: string } }).spec.holderIdentity, 'binary');
    const bad = await raw(orch, 'POST', LEASES, { 'Content-Type': PB }, Buffer.from('not protobuf at all'));
    assert.equal(bad.status, 400);
    const wrongKind = encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pb-ns' } });
    assert.equal((await raw(orch, 'POST', LEASES, { 'Content-Type': PB }, wrongKind)).status, 400);
    assert.equal((await api(orch, 'GET', '/api/v1/namespaces/pb-ns')).status, 404);
  });
});

describe('kubectl in the kubernetes profile', () => {
  test('kubectl create namespace x (a protobuf body) and kubectl delete namespace x: gone with its content', async () => {
    const k8s = await testServer({ naming: 'kubernetes' });
    const k = kubectlFor(k8s, { label: 'pb-kubectl' });
    const kubectl = (args: string[], input?: string) => k.run(args, input);
    const created = await kubectl(['create', 'namespace', 'x']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /namespace\/x created/);
    const lease = await kubectl(['create', '-n', 'x', '-f', '-'], JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'inside' }, spec: { holderIdentity: 'h' } }));
    assert.equal(lease.code, 0, lease.stderr);
    const started = Date.now();
    const deleted = await kubectl(['delete', 'namespace', 'x']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.ok(Date.now() - started < 10_000, 'deleted within seconds');
    assert.equal((await api(k8s, 'GET', '/api/v1/namespaces/x')).status, 404);
    const table = await kubectl(['get', 'namespaces']);
    assert.doesNotMatch(table.stdout, /^x\s/m);
  });
});

describe('CustomResourceDefinition and Scale in protobuf (kubernetes profile)', () => {
  const K8S_PB = 'application/vnd.kubernetes.protobuf';
  const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  type Obj = Record<string, any>;

  /** A Widget CRD whose schema uses the JSON value and schema wrapper forms, with a scale subresource on spec.size. */
  function richCrd(group: string): Obj {
    const crd = widgetCrd(group);
    const v = crd.spec.versions[0];
    const props = v.schema.openAPIV3Schema.properties;
    Object.assign(props.spec.properties, {
      mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
      limits: { type: 'object', additionalProperties: { type: 'integer', format: 'int64', maximum: 1.5e3 }, default: { cpu: 2 } },
      tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set', example: ['a', 'b'] },
      anything: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    });
    props.spec['x-kubernetes-validations'] = [{ rule: 'self.size <= 10', message: 'too big', reason: 'FieldValueInvalid', fieldPath: '.size' }];
    props.status.properties.replicas = { type: 'integer' };
    v.subresources = { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' } };
    return crd;
  }

  test('schema keywords the Go types cannot hold are refused when the CRD is written, so every stored CRD has its protobuf form', async () => {
    const k8s = await testServer({ naming: 'kubernetes' });
    for (const [i, [extra, field, type]] of ([
      [{ externalDocs: { url: 5 } }, 'externalDocs', 'ExternalDocumentation'],
      [{ externalDocs: 'https://example.com' }, 'externalDocs', 'ExternalDocumentation'],
      [{ $schema: 5 }, '$schema', 'string'],
      // Inside a value validation as anywhere else.
      [{ not: { description: 5 } }, 'not.description', 'string'],
      [{ allOf: [{ maxLength: 'x' }] }, 'allOf[0].maxLength', 'int64'],
      [{ 'x-kubernetes-validations': [{ rule: 'true', fieldPath: 5 }] }, 'x-kubernetes-validations', '[]ValidationRule'],
      [{ 'x-kubernetes-validations': [{ rule: 'true', message: 5 }] }, 'x-kubernetes-validations', '[]ValidationRule'],
      [{ 'x-kubernetes-validations': [{ rule: 'true', optionalOldSelf: 'yes' }] }, 'x-kubernetes-validations', '[]ValidationRule'],
    ] as const).entries()) {
      const crd = widgetCrd(`pbodd${i}.example.com`);
      Object.assign(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size, extra);
      const r = await api(k8s, 'POST', CRDS, crd);
      assert.equal(r.status, 422, r.text);
      const quote = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.match(r.body.message, new RegExp(`properties\\[size\\]\\.${quote(field)}: Invalid value: .*: must be of type ${quote(type)}`));
    }
    const fine = widgetCrd('pbodd.example.com');
    Object.assign(fine.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size, { $schema: 'http://json-schema.org/draft-04/schema#', externalDocs: { description: 'sizes', url: 'https://example.com' } });
    const created = await api(k8s, 'POST', CRDS, fine);
    assert.equal(created.status, 201, created.text);
    const pb = await raw(k8s, 'GET', `${CRDS}/${fine.metadata.name}`, { Accept: K8S_PB });
    assert.equal(pb.status, 200);
    assert.deepEqual((decodeObject(pb.bytes) as Obj).spec.versions[0].schema, fine.spec.versions[0].schema);
  });

  test('a CRD created with a protobuf body reads back the same in protobuf and JSON; lists and kubectl get it', async () => {
    const k8s = await testServer({ naming: 'kubernetes' });
    const crd = richCrd('pbcrd.example.com');
    const name = crd.metadata.name;
    const created = await raw(k8s, 'POST', CRDS, { 'Content-Type': K8S_PB, Accept: K8S_PB }, encodeObject(crd as KObject));
    assert.equal(created.status, 201, created.bytes.toString());
    assert.equal(created.type, K8S_PB);
    const answer = decodeObject(created.bytes) as Obj;
    // What was sent is what is stored, JSON values and schema wrappers included.
    assert.deepEqual(answer.spec.versions[0].schema, crd.spec.versions[0].schema);
    assert.deepEqual(answer.spec.names, { ...crd.spec.names, listKind: 'WidgetList' });
    await waitFor('established', async () => ((await api(k8s, 'GET', `${CRDS}/${name}`)).body.status?.conditions ?? []).some((c: Obj) => c.type === 'Established' && c.status === 'True'));

    const json = (await api(k8s, 'GET', `${CRDS}/${name}`)).body;
    const pb = await raw(k8s, 'GET', `${CRDS}/${name}`, { Accept: `${K8S_PB}, application/json` });
    assert.equal(pb.type, K8S_PB);
    assert.deepEqual(decodeObject(pb.bytes), json);
    assert.deepEqual(json.spec.versions[0].schema, crd.spec.versions[0].schema);
    const list = await raw(k8s, 'GET', CRDS, { Accept: K8S_PB });
    assert.equal(list.type, K8S_PB);
    const items = (decodeObject(list.bytes) as Obj).items as Obj[];
    assert.deepEqual(items.find((i) => i.metadata.name === name), json);

    // An update in protobuf: a changed default travels as JSON text.
    const changed = structuredClone(json);
    changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.limits.default = { cpu: 4, memory: 8 };
    const put = await raw(k8s, 'PUT', `${CRDS}/${name}`, { 'Content-Type': K8S_PB, Accept: 'application/json' }, encodeObject(changed as KObject));
    assert.equal(put.status, 200, put.bytes.toString());
    assert.deepEqual(JSON.parse(put.bytes.toString()).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.limits.default, { cpu: 4, memory: 8 });

    const k = kubectlFor(k8s, { label: 'pb-crd' });
    const get = await k.run(['get', 'crd', name]);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, new RegExp(`^${name.replace(/\./g, '\\.')}\\s`, 'm'));
    const yaml = await k.run(['get', 'crd', name, '-o', 'json']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.deepEqual(JSON.parse(yaml.stdout).spec, (await api(k8s, 'GET', `${CRDS}/${name}`)).body.spec);
    const described = await k.run(['describe', 'crd', name]);
    assert.equal(described.code, 0, described.stderr);

    // The Scale of a custom resource in protobuf: read, and written with a protobuf body.
    const widgets = '/apis/pbcrd.example.com/v1/namespaces/default/widgets';
    assert.equal((await api(k8s, 'POST', widgets, { apiVersion: 'pbcrd.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 2 } })).status, 201);
    const scaleJson = (await api(k8s, 'GET', `${widgets}/w/scale`)).body;
    const scalePb = await raw(k8s, 'GET', `${widgets}/w/scale`, { Accept: K8S_PB });
    assert.equal(scalePb.type, K8S_PB);
    assert.deepEqual(decodeObject(scalePb.bytes), scaleJson);
    assert.deepEqual([scaleJson.kind, scaleJson.spec, scaleJson.status], ['Scale', { replicas: 2 }, { replicas: 0 }]);
    const scaled = await raw(k8s, 'PUT', `${widgets}/w/scale`, { 'Content-Type': K8S_PB, Accept: K8S_PB }, encodeObject({ ...scaleJson, spec: { replicas: 5 } } as KObject));
    assert.equal(scaled.status, 200, scaled.bytes.toString());
    assert.deepEqual((decodeObject(scaled.bytes) as Obj).spec, { replicas: 5 });
    assert.equal((await api(k8s, 'GET', `${widgets}/w`)).body.spec.size, 5);
    const scaleCmd = await k.run(['scale', '-n', 'default', 'widgets.pbcrd.example.com/w', '--replicas=3']);
    assert.equal(scaleCmd.code, 0, scaleCmd.stderr);
    assert.equal((await api(k8s, 'GET', `${widgets}/w`)).body.spec.size, 3);
  });
});
