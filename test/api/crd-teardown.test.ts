// The teardown of a changed CRD's old storage is bounded (kubernetes profile): kube-apiserver waits
// for the old storage's short requests at most twice the request timeout, then ends its watches
// even if one of them is still running. A request held by a conversion webhook that does not
// answer outlives its own timeout (504) until the webhook call gives up (30 s); the watches opened
// before the change end at the bound, not then. The server's request timeout is short here (1.5 s,
// a bound of 3 s).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import { api, testServer, waitFor } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { establishCrd } from '../support/crd.ts';
import { issueCert, makeCa } from '../support/certs.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const REQUEST_TIMEOUT_MS = 1_500;
const server = await testServer({ naming: 'kubernetes', requestTimeoutMs: REQUEST_TIMEOUT_MS });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' };

// A conversion webhook that rewrites apiVersion, or holds its answer while `hold` is set.
const ca = await makeCa('teardown-webhook-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
let hold = false;
const held: ServerResponse[] = [];
let reviews = 0;
const webhook: Server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    reviews++;
    if (hold) {
      held.push(res);
      return;
    }
    const review = JSON.parse(Buffer.concat(chunks).toString()) as { apiVersion: string; request: { uid: string; desiredAPIVersion: string; objects: Body[] } };
    const converted = review.request.objects.map((o) => ({ ...o, apiVersion: review.request.desiredAPIVersion }));
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, convertedObjects: converted, result: { status: 'Success' } } }));
  });
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
after(() => {
  for (const res of held) res.destroy();
  webhook.close();
});

const version = (name: string, storage: boolean): Body => ({
  name,
  served: true,
  storage,
  schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
  additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
});

test('a request on the old definition that outlives its timeout holds the old storage at most twice the request timeout', async () => {
  const group = 'teardown.example.com';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [version('v1', true), version('v2', false)],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { url: `https://127.0.0.1:${(webhook.address() as { port: number }).port}/convert`, caBundle: Buffer.from(ca.cert).toString('base64') },
          conversionReviewVersions: ['v1'],
        },
      },
    },
  };
  await establishCrd(server, crd);
  const base = `/apis/${group}/v1/things`;
  assert.equal((await api(server, 'POST', base, { apiVersion: `${group}/v1`, kind: 'Thing', metadata: { name: 'a' }, spec: { size: 1 } })).status, 201);
  // At the storage version: its events need no conversion.
  const w = readWatch(`${server.url}${base}?watch=1`);
  let endedAt: number | undefined;
  void w.ended.then(() => (endedAt = Date.now()));
  try {
    await w.next(1);
    // A read at v2 waits for the webhook, which does not answer.
    hold = true;
    const before = reviews;
    const stuck = api(server, 'GET', `/apis/${group}/v2/things/a`);
    await waitFor('the review sent', () => reviews > before);
    const crdNow = (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body;
    crdNow.spec.versions[0].additionalPrinterColumns.push({ name: 'Kind', type: 'string', jsonPath: '.kind' });
    assert.equal((await api(server, 'PUT', `${CRDS}/${crd.metadata.name}`, crdNow)).status, 200);
    let served = 0;
    await waitFor('the change served', async () => {
      const table = (await api(server, 'GET', base, undefined, TABLE)).body;
      served = Date.now();
      return table.columnDefinitions.some((c: Body) => c.name === 'Kind');
    });
    // The read is answered at its timeout but goes on waiting for the webhook.
    const r = await stuck;
    assert.equal(r.status, 504, r.text);
    assert.equal(endedAt, undefined, 'the watch ended while a request on the old definition was running');
    // The teardown gives up waiting for it at twice the request timeout (counted from the change).
    await w.ended;
    const after = endedAt! - served;
    assert.ok(after < 2 * REQUEST_TIMEOUT_MS + 2_000, `the watch ended ${after} ms after the change, not at the bound`);
    assert.ok(held.length > 0 && !held[0]!.writableEnded, 'the webhook call was still running');
  } finally {
    hold = false;
    w.close();
  }
});
