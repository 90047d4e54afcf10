// Writes that are large because of what they keep (issue 23, section 1): a 3 MiB object of labels
// costs seconds of CPU to prepare (field sets, label validation, schema checks, encoding), so its
// preparation runs in the server's worker pool, and another client's /readyz is answered
// meanwhile — for a create, for a small patch of the large stored object, for a large patch and for
// a server-side apply. The answers are the same as when the write is prepared inline: the object
// reads back whole, with its managed fields, its warnings and its refusals.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { whileReadyzPolled } from '../support/readyz.ts';
import { clientRequest as request } from '../support/tls-clients.ts';

const server = await testServer();
after(() => server.close());

const GROUP = 'coordination.orch.io';
const NS = 'hostile-objects';
const LEASES = `/apis/${GROUP}/v1/namespaces/${NS}/leases`;
const MiB = 1024 * 1024;
/** The longest another client may wait for /readyz while one large write is handled (generous: the machine is shared). */
const READYZ_BOUND_MS = 1000;

interface Body {
  metadata?: { resourceVersion?: string; labels?: Record<string, string>; managedFields?: { manager: string }[] };
  message?: string;
  reason?: string;
}

interface Answer {
  status: number;
  /** Parsed when first read: the server shares this process, so parsing while /readyz is polled would count against it. */
  readonly body: Body;
  warnings: string[];
}

function send(method: string, path: string, body: string, contentType: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(server.url + path, { method, headers: { 'Content-Type': contentType }, agent: false, maxHeaderSize: 1024 * 1024 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const w = res.headers.warning;
        let body: Body | undefined;
        resolve({
          status: res.statusCode ?? 0,
          get body() {
            return (body ??= JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body);
          },
          warnings: w === undefined ? [] : Array.isArray(w) ? w : [w],
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer, and the worst /readyz latency of another client while it was prepared. */
const withReadyz = (run: () => Promise<Answer>) => whileReadyzPolled(server.url, run);

/** About `bytes` of labels (each ~16 bytes as JSON). */
function labels(bytes: number, prefix = 'l'): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i * 16 < bytes; i++) out[`${prefix}${i}`] = 'v';
  return out;
}

const lease = (name: string, extra: object = {}) => ({ apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name, ...extra }, spec: { holderIdentity: 'h' } });

describe('a large object is prepared off the event loop', () => {
  test('set-up', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  });

  // 1.5 MiB: enough that preparing it on the event loop held /readyz for seconds.
  const many = labels(1.5 * MiB);
  const count = Object.keys(many).length;

  test('a create of 1.5 MiB of labels: stored whole, with its manager, while /readyz is answered', async () => {
    const { answer, worstMs } = await withReadyz(() => send('POST', `${LEASES}?fieldManager=big`, JSON.stringify(lease('big', { labels: many })), 'application/json'));
    assert.equal(answer.status, 201, answer.body.message);
    assert.equal(Object.keys(answer.body.metadata!.labels!).length, count);
    assert.deepEqual(answer.body.metadata!.managedFields!.map((m) => m.manager), ['big']);
    assert.ok(worstMs < READYZ_BOUND_MS, `/readyz waited ${worstMs.toFixed(0)} ms behind the create`);
    const read = await api(server, 'GET', `${LEASES}/big`);
    assert.equal(read.status, 200);
    assert.equal(Object.keys((read.body as Body).metadata!.labels!).length, count);
    assert.equal((read.body as Body).metadata!.resourceVersion, answer.body.metadata!.resourceVersion);
  });

  test('a small patch of the large stored object (with its warnings), and one that changes nothing', async () => {
    const { answer, worstMs } = await withReadyz(() =>
      send('PATCH', `${LEASES}/big?fieldValidation=Warn`, JSON.stringify({ metadata: { labels: { added: 'yes' } }, spec: { nope: 1 } }), 'application/merge-patch+json'),
    );
    assert.equal(answer.status, 200, answer.body.message);
    assert.deepEqual(answer.warnings, ['299 - "unknown field \\"spec.nope\\""']);
    assert.equal(answer.body.metadata!.labels!.added, 'yes');
    assert.equal(Object.keys(answer.body.metadata!.labels!).length, count + 1);
    assert.ok(worstMs < READYZ_BOUND_MS, `/readyz waited ${worstMs.toFixed(0)} ms behind the patch`);
    const again = await send('PATCH', `${LEASES}/big`, JSON.stringify({ metadata: { labels: { added: 'yes' } } }), 'application/merge-patch+json');
    assert.equal(again.status, 200);
    assert.equal(again.body.metadata!.resourceVersion, answer.body.metadata!.resourceVersion, 'an unchanged object is not written again');
  });

  test('a refused patch of the large object is the Status it is inline, and changes nothing', async () => {
    const before = await api(server, 'GET', `${LEASES}/big`);
    const bad = await send('PATCH', `${LEASES}/big`, JSON.stringify({ metadata: { labels: { 'bad key!': 'x' } } }), 'application/merge-patch+json');
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, 'Invalid');
    assert.match(bad.body.message!, /metadata\.labels: Invalid value: "bad key!"/);
    const after = await api(server, 'GET', `${LEASES}/big`);
    assert.equal((after.body as Body).metadata!.resourceVersion, (before.body as Body).metadata!.resourceVersion);
  });

  test('a server-side apply of 768 KiB of labels in YAML, and a conflict with the labels another manager owns', async () => {
    const keys = Object.keys(labels(768 * 1024, 'a'));
    const yaml = [`apiVersion: ${GROUP}/v1`, 'kind: Lease', 'metadata:', '  name: applied', '  labels:', ...keys.map((k) => `    ${k}: v`), 'spec:', '  holderIdentity: h', ''].join('\n');
    const { answer, worstMs } = await withReadyz(() => send('PATCH', `${LEASES}/applied?fieldManager=one`, yaml, 'application/apply-patch+yaml'));
    assert.equal(answer.status, 201, answer.body.message);
    assert.equal(Object.keys(answer.body.metadata!.labels!).length, keys.length);
    assert.ok(worstMs < READYZ_BOUND_MS, `/readyz waited ${worstMs.toFixed(0)} ms behind the apply`);
    const conflict = await send('PATCH', `${LEASES}/applied?fieldManager=two`, yaml.replace('a0: v', 'a0: w'), 'application/apply-patch+yaml');
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.reason, 'Conflict');
  });

  test('a RuntimeClass with 100,000 invalid overhead names: its 422 is built off the event loop too', async () => {
    const podFixed: Record<string, string> = {};
    for (let i = 0; i < 100_000; i++) podFixed[`-${i}`] = '1';
    const body = JSON.stringify({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'many-overheads' }, handler: 'h', overhead: { podFixed } });
    const { answer, worstMs } = await withReadyz(() => send('POST', '/apis/node.orch.io/v1/runtimeclasses', body, 'application/json'));
    assert.equal(answer.status, 422);
    assert.equal(answer.body.reason, 'Invalid');
    assert.ok(worstMs < READYZ_BOUND_MS, `/readyz waited ${worstMs.toFixed(0)} ms behind the refused create`);
    assert.equal((await api(server, 'GET', '/apis/node.orch.io/v1/runtimeclasses/many-overheads')).status, 404);
  });
});
