// CBOR behind its gate (CBORServingAndStorage, off by default): single items with the
// self-described tag, `application/cbor-seq` watch streams, CBOR request bodies and
// `application/apply-patch+cbor`; refused cleanly with the gate off. Responses are decoded with
// cbor-x, independently of the server's own codec; requests are encoded with it too.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Decoder, Encoder } from 'cbor-x';
import { api, testServer } from '../support/server.ts';
import { decodeCbor, encodeCbor } from '../../src/wire/cbor.ts';

const on = await testServer({ featureGates: 'CBORServingAndStorage=true' });
const off = await testServer();
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';
// Kubernetes encodes strings as byte strings: read them back as strings.
// (byte-string keys come back as a Map keyed by bytes).
const independent = new Decoder({ mapsAsObjects: false });
const asJson = (v: unknown): unknown => {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return v.map(asJson);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [asJson(k) as string, asJson(x)]));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asJson(x)]));
  return v;
};
const encoder = new Encoder({ mapsAsObjects: true, useRecords: false, tagUint8Array: false });

async function raw(server: { url: string }, method: string, path: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('CBOR with the gate on', () => {
  test('get and list: the self-described tag, then the object; decodes to the JSON answer', async () => {
    await api(on, 'POST', LEASES, { metadata: { name: 'c1', labels: { b: '2', a: '1' } }, spec: { holderIdentity: 'me', leaseDurationSeconds: 7 } });
    const json = (await api(on, 'GET', `${LEASES}/c1`)).body;
    const r = await raw(on, 'GET', `${LEASES}/c1`, { Accept: 'application/cbor' });
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/cbor');
    assert.deepEqual([...r.bytes.subarray(0, 3)], [0xd9, 0xd9, 0xf7]);
    assert.deepEqual(asJson(independent.decode(r.bytes)), json);
    const list = await raw(on, 'GET', LEASES, { Accept: 'application/cbor' });
    assert.equal((asJson(independent.decode(list.bytes)) as { kind: string }).kind, 'LeaseList');
  });

  test('create from CBOR, errors in CBOR, duplicate keys refused', async () => {
    const body = encoder.encode({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'c2' }, spec: { holderIdentity: 'cbor' } });
    const c = await raw(on, 'POST', LEASES, { 'Content-Type': 'application/cbor', Accept: 'application/cbor' }, body);
    assert.equal(c.status, 201);
    assert.equal((asJson(independent.decode(c.bytes)) as { spec: { holderIdentity: string } }).spec.holderIdentity, 'cbor');
    const missing = await raw(on, 'GET', `${LEASES}/nope`, { Accept: 'application/cbor' });
    assert.equal(missing.status, 404);
    assert.equal((asJson(independent.decode(missing.bytes)) as { reason: string }).reason, 'NotFound');
    // {"a":1,"a":2} written by hand: duplicate keys are never acceptable in CBOR.
    const dup = Buffer.from([0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02]);
    const r = await raw(on, 'POST', LEASES, { 'Content-Type': 'application/cbor' }, dup);
    assert.equal(r.status, 400);
    assert.throws(() => decodeCbor(dup), /duplicate map key/);
  });

  test('apply with application/apply-patch+cbor', async () => {
    const intent = encoder.encode({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'c3' }, spec: { holderIdentity: 'applied' } });
    const r = await raw(on, 'PATCH', `${LEASES}/c3?fieldManager=cbor-applier`, { 'Content-Type': 'application/apply-patch+cbor' }, intent);
    assert.equal(r.status, 201, r.bytes.toString());
    const got = (await api(on, 'GET', `${LEASES}/c3`)).body;
    assert.equal(got.spec.holderIdentity, 'applied');
    assert.equal(got.metadata.managedFields[0].manager, 'cbor-applier');
  });

  test('watch streams application/cbor-seq items', async () => {
    const rv = (await api(on, 'GET', LEASES)).body.metadata.resourceVersion;
    const res = await fetch(`${on.url}${LEASES}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, { headers: { Accept: 'application/cbor-seq' } });
    assert.equal(res.headers.get('content-type'), 'application/cbor-seq');
    await api(on, 'POST', LEASES, { metadata: { name: 'c-w' } });
    const bytes = Buffer.from(await res.arrayBuffer());
    const events = (independent.decodeMultiple(bytes) as unknown[]).map((e) => asJson(e) as { type: string; object: { metadata: { name: string } } });
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]).filter(([t]) => t !== 'BOOKMARK')[0], ['ADDED', 'c-w']);
  });

  test('the codec: deterministic order, shortest forms, limits', () => {
    assert.deepEqual([...encodeCbor({ bb: 1, a: 2, c: 3 })], [0xd9, 0xd9, 0xf7, 0xa3, 0x41, 0x61, 0x02, 0x41, 0x63, 0x03, 0x42, 0x62, 0x62, 0x01]);
    assert.deepEqual([...encodeCbor(1.5)].slice(3), [0xf9, 0x3e, 0x00]);
    assert.deepEqual(decodeCbor(encodeCbor({ n: -17, f: 0.1, t: true, z: null, l: [1, 'x'] })), { n: -17, f: 0.1, t: true, z: null, l: [1, 'x'] });
    assert.throws(() => decodeCbor(encodeCbor(Array.from({ length: 1025 }, () => 0))), /max number of elements/);
    assert.throws(() => decodeCbor(Buffer.from([0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0])), /NaN/);
    assert.throws(() => decodeCbor(Buffer.from([0x62, 0xff, 0xfe])), /UTF-8/);
  });
});

describe('CBOR with the gate off (the default)', () => {
  test('Accept application/cbor is 406, a CBOR body 415; nothing stored', async () => {
    assert.equal((await raw(off, 'GET', LEASES, { Accept: 'application/cbor' })).status, 406);
    const body = encoder.encode({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'c-off' } });
    assert.equal((await raw(off, 'POST', LEASES, { 'Content-Type': 'application/cbor' }, body)).status, 415);
    assert.equal((await raw(off, 'PATCH', `${LEASES}/c-off?fieldManager=m`, { 'Content-Type': 'application/apply-patch+cbor' }, body)).status, 415);
    assert.equal((await api(off, 'GET', `${LEASES}/c-off`)).status, 404);
  });
});
