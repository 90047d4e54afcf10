// Response compression (gate APIResponseCompression, on by default): get and list answers of
// 128 KiB and more are gzip-compressed for clients that send `Accept-Encoding: gzip`; small bodies,
// writes and watches are not; with the gate off nothing is.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { api, testServer } from '../support/server.ts';
import { clientRequest as request } from '../support/tls-clients.ts';

const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';

function get(url: string, headers: Record<string, string>): Promise<{ status: number; encoding?: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

async function fill(server: { url: string }): Promise<void> {
  const note = 'n'.repeat(900);
  for (let i = 0; i < 200; i++) {
    const r = await api(server, 'POST', LEASES, { metadata: { name: `big-${i}`, annotations: { note } }, spec: { holderIdentity: 'h' } });
    assert.equal(r.status, 201);
  }
}

test('a large list is gzip-compressed for a client that accepts it, and decompresses to the plain answer', async () => {
  const server = await testServer();
  await fill(server);
  const plain = await get(server.url + LEASES, {});
  assert.equal(plain.encoding, undefined);
  assert.ok(plain.body.length >= 128 * 1024, `list is ${plain.body.length} bytes`);
  const zipped = await get(server.url + LEASES, { 'Accept-Encoding': 'gzip, deflate' });
  assert.equal(zipped.status, 200);
  assert.equal(zipped.encoding, 'gzip');
  assert.ok(zipped.body.length < plain.body.length / 4);
  const a = JSON.parse(gunzipSync(zipped.body).toString('utf8'));
  const b = JSON.parse(plain.body.toString('utf8'));
  assert.deepEqual(a.items.map((i: { metadata: { name: string } }) => i.metadata.name), b.items.map((i: { metadata: { name: string } }) => i.metadata.name));
  // Not for a small body, not when gzip is refused, not for a watch.
  assert.equal((await get(`${server.url}${LEASES}/big-1`, { 'Accept-Encoding': 'gzip' })).encoding, undefined);
  assert.equal((await get(server.url + LEASES, { 'Accept-Encoding': 'gzip;q=0' })).encoding, undefined);
  const watch = await new Promise<string | undefined>((resolve, reject) => {
    const req = request(`${server.url}${LEASES}?watch=1&resourceVersion=0&timeoutSeconds=1`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
      resolve(res.headers['content-encoding']);
      res.resume();
    });
    req.on('error', reject).end();
  });
  assert.equal(watch, undefined);
});

test('with APIResponseCompression=false nothing is compressed', async () => {
  const server = await testServer({ featureGates: 'APIResponseCompression=false' });
  await fill(server);
  const r = await get(server.url + LEASES, { 'Accept-Encoding': 'gzip' });
  assert.equal(r.status, 200);
  assert.equal(r.encoding, undefined);
  assert.ok(r.body.length >= 128 * 1024);
});
