// CRD conversion (kubernetes profile): `spec.conversion.strategy: Webhook` through a real HTTPS
// conversion webhook on loopback (its own CA and certificate), serving a Thing whose v1 (storage)
// has `spec.size` and whose v2 calls it `spec.length`. Reads, lists (one review a page), watches,
// updates and patches at v2 convert through it; its answers are checked as kube-apiserver checks
// them. Objects stored at an earlier storage version are read through the conversion too (None and
// Webhook). One server and one webhook for the file; each test its own group or namespace.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { api, testServer, waitFor } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { parsePrometheusText, type Family } from '../support/prometheus.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const server = await testServer({ naming: 'kubernetes' });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

// ---------------------------------------------------------------------------------------------
// The conversion webhook: v1 `spec.size` ⇄ v2 `spec.length`; what it answers is set per group.

const ca = await makeCa('conversion-webhook-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });

interface Review {
  apiVersion: string;
  kind: string;
  request: { uid: string; desiredAPIVersion: string; objects: Body[] };
}
interface Call {
  path: string;
  review: Review;
}

/** A faithful conversion of one object to `desired`. */
function convertObject(o: Body, desired: string): Body {
  const out = structuredClone(o);
  out.apiVersion = desired;
  const spec = out.spec ?? {};
  if (desired.endsWith('/v2') && 'size' in spec) {
    spec.length = spec.size;
    delete spec.size;
  } else if (desired.endsWith('/v1') && 'length' in spec) {
    spec.size = spec.length;
    delete spec.length;
  }
  return out;
}

/** How the webhook answers a group's reviews (by the desired apiVersion's group). */
type Behaviour = (r: Review) => Body | 'hang';
const behaviours = new Map<string, Behaviour>();
const faithful: Behaviour = (r) => ({
  apiVersion: r.apiVersion,
  kind: 'ConversionReview',
  response: { uid: r.request.uid, convertedObjects: r.request.objects.map((o) => convertObject(o, r.request.desiredAPIVersion)), result: { status: 'Success' } },
});

const calls: Call[] = [];
const webhook: Server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString()) as Review;
    calls.push({ path: req.url ?? '', review });
    const group = review.request.desiredAPIVersion.split('/')[0]!;
    const answer = (behaviours.get(group) ?? faithful)(review);
    if (answer === 'hang') return;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(answer));
  });
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
webhook.unref();
const webhookPort = (webhook.address() as { port: number }).port;

/** The reviews sent for `group` since `from`. */
const callsFor = (group: string, from = 0): Call[] => calls.slice(from).filter((c) => c.review.request.desiredAPIVersion.startsWith(`${group}/`));

const condition = (crd: Body, type: string): Body | undefined => crd.status?.conditions?.find((c: Body) => c.type === type);

async function establish(crd: Body): Promise<void> {
  const r = await api(server, 'POST', CRDS, crd);
  assert.equal(r.status, 201, r.text);
  await waitFor(`${crd.metadata.name} established`, async () => condition((await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).body, 'Established')?.status === 'True');
}

/** Replaces the CRD's spec and waits until every version it serves answers (it is served anew). */
async function changeCrd(name: string, change: (crd: Body) => void, check: () => Promise<boolean>): Promise<void> {
  const crd = (await api(server, 'GET', `${CRDS}/${name}`)).body;
  change(crd);
  const r = await api(server, 'PUT', `${CRDS}/${name}`, crd);
  assert.equal(r.status, 200, r.text);
  await waitFor(`${name} served anew`, check);
}

const version = (name: string, storage: boolean, field: 'size' | 'length'): Body => ({
  name,
  served: true,
  storage,
  schema: {
    openAPIV3Schema: {
      type: 'object',
      properties: { spec: { type: 'object', properties: { [field]: { type: 'integer' }, note: { type: 'string' } } }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    },
  },
  subresources: { status: {} },
});

/** The Thing CRD of `group`: v1 (storage, `size`) and v2 (`length`), converted by the webhook at `url`. */
function thingCrd(group: string, o: { url?: string; conversion?: Body; reviewVersions?: string[] } = {}): Body {
  const conversion = o.conversion ?? {
    strategy: 'Webhook',
    webhook: {
      clientConfig: { url: o.url ?? `https://127.0.0.1:${webhookPort}/convert/${group}`, caBundle: Buffer.from(ca.cert).toString('base64') },
      conversionReviewVersions: o.reviewVersions ?? ['v1'],
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [version('v1', true, 'size'), version('v2', false, 'length')],
      conversion,
    },
  };
}

const thing = (group: string, v: 'v1' | 'v2', name: string, spec: Body, labels?: Record<string, string>): Body => ({
  apiVersion: `${group}/${v}`,
  kind: 'Thing',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec,
});

const path = (group: string, v: string, ns: string, name = '') => `/apis/${group}/${v}/namespaces/${ns}/things${name ? `/${name}` : ''}`;

async function create(group: string, v: 'v1' | 'v2', ns: string, name: string, spec: Body, labels?: Record<string, string>): Promise<Body> {
  const r = await api(server, 'POST', path(group, v, ns), thing(group, v, name, spec, labels));
  assert.equal(r.status, 201, r.text);
  return r.body;
}

const GROUP = 'conv.example.com';
await establish(thingCrd(GROUP));

describe('webhook conversion', () => {
  test('create at v1, read at v2 and back: the review, the converted object, nothing sent that is at the desired version', async () => {
    const before = calls.length;
    const created = await create(GROUP, 'v1', 'default', 'a', { size: 3, note: 'x' });
    assert.equal(callsFor(GROUP, before).length, 0, 'a create at the storage version converts nothing');
    const v2 = await api(server, 'GET', path(GROUP, 'v2', 'default', 'a'));
    assert.equal(v2.status, 200, v2.text);
    assert.equal(v2.body.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(v2.body.spec, { length: 3, note: 'x' });
    assert.equal(v2.body.metadata.uid, created.metadata.uid);
    assert.equal(v2.body.metadata.resourceVersion, created.metadata.resourceVersion);
    const sent = callsFor(GROUP, before);
    assert.equal(sent.length, 1);
    const review = sent[0]!.review;
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.kind, 'ConversionReview');
    assert.equal(review.request.desiredAPIVersion, `${GROUP}/v2`);
    assert.match(review.request.uid, /^[0-9a-f-]{36}$/);
    assert.equal(review.request.objects.length, 1);
    assert.equal(review.request.objects[0]!.apiVersion, `${GROUP}/v1`);
    assert.deepEqual(review.request.objects[0]!.spec, { size: 3, note: 'x' });
    assert.equal(review.request.objects[0]!.metadata.resourceVersion, undefined, 'stored objects carry no resourceVersion');
    assert.equal(sent[0]!.path, `/convert/${GROUP}?timeout=30s`);
    // Read again at v2: the stored version was converted once. At v1: no conversion.
    const mark = calls.length;
    assert.deepEqual((await api(server, 'GET', path(GROUP, 'v2', 'default', 'a'))).body.spec, { length: 3, note: 'x' });
    const v1 = await api(server, 'GET', path(GROUP, 'v1', 'default', 'a'));
    assert.deepEqual(v1.body.spec, { size: 3, note: 'x' });
    assert.equal(callsFor(GROUP, mark).length, 0, 'a stored version is converted once');
  });

  test('create at v2: stored at v1 (converted before it is stored), answered at v2', async () => {
    const before = calls.length;
    const created = await create(GROUP, 'v2', 'default', 'b', { length: 5 });
    assert.equal(created.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(created.spec, { length: 5 });
    const sent = callsFor(GROUP, before);
    assert.deepEqual(
      sent.map((c) => c.review.request.desiredAPIVersion),
      [`${GROUP}/v1`, `${GROUP}/v2`],
      'to the storage version, then the stored object back to the request\'s',
    );
    const v1 = await api(server, 'GET', path(GROUP, 'v1', 'default', 'b'));
    assert.deepEqual(v1.body.spec, { size: 5 });
    // A field of v2 unknown to the webhook's answer is pruned by v2's schema before it is sent.
    const pruned = await api(server, 'POST', path(GROUP, 'v2', 'default'), thing(GROUP, 'v2', 'b2', { length: 1, size: 9 }));
    assert.equal(pruned.status, 201, pruned.text);
    assert.deepEqual(pruned.body.spec, { length: 1 });
  });

  test('list at v2: one review for the page, only the objects not at v2; a label selector tests the converted objects', async () => {
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'listing' } });
    for (let i = 0; i < 4; i++) await create(GROUP, 'v1', 'listing', `l${i}`, { size: i + 1 }, { n: String(i % 2) });
    await create(GROUP, 'v2', 'listing', 'l9', { length: 9 }, { n: '1' });
    const before = calls.length;
    const list = await api(server, 'GET', path(GROUP, 'v2', 'listing'));
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.apiVersion, `${GROUP}/v2`);
    assert.equal(list.body.kind, 'ThingList');
    assert.deepEqual(
      list.body.items.map((o: Body) => [o.apiVersion, o.metadata.name, o.spec.length]),
      [[`${GROUP}/v2`, 'l0', 1], [`${GROUP}/v2`, 'l1', 2], [`${GROUP}/v2`, 'l2', 3], [`${GROUP}/v2`, 'l3', 4], [`${GROUP}/v2`, 'l9', 9]],
    );
    const sent = callsFor(GROUP, before);
    // l9 was converted back when it was created at v2; the four stored at v1 go in one review.
    assert.equal(sent.length, 1, `one review for the page, got ${sent.length}`);
    assert.deepEqual(sent[0]!.review.request.objects.map((o) => o.metadata.name), ['l0', 'l1', 'l2', 'l3']);
    const selected = await api(server, 'GET', `${path(GROUP, 'v2', 'listing')}?labelSelector=n%3D1`);
    assert.deepEqual(selected.body.items.map((o: Body) => o.metadata.name), ['l1', 'l3', 'l9']);
    // Paged: each page its own review at most.
    const page = await api(server, 'GET', `${path(GROUP, 'v1', 'listing')}?limit=2`);
    assert.deepEqual(page.body.items.map((o: Body) => [o.metadata.name, o.spec.size]), [['l0', 1], ['l1', 2]]);
    assert.ok(page.body.metadata.continue);
  });

  test('watch at v2 sees converted events', async () => {
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watching' } });
    await create(GROUP, 'v1', 'watching', 'w0', { size: 1 });
    const w = readWatch(`${server.url}${path(GROUP, 'v2', 'watching')}?watch=true`);
    try {
      const [initial] = await w.next(1);
      assert.equal(initial!.type, 'ADDED');
      assert.equal(initial!.object.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(initial!.object.spec, { length: 1 });
      await create(GROUP, 'v1', 'watching', 'w1', { size: 2 });
      const m = await api(server, 'PATCH', path(GROUP, 'v1', 'watching', 'w0'), { spec: { size: 7 } }, MERGE);
      assert.equal(m.status, 200, m.text);
      const d = await api(server, 'DELETE', path(GROUP, 'v1', 'watching', 'w1'));
      assert.equal(d.status, 200, d.text);
      const events = await w.next(3);
      assert.deepEqual(
        events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec]),
        [
          ['ADDED', `${GROUP}/v2`, 'w1', { length: 2 }],
          ['MODIFIED', `${GROUP}/v2`, 'w0', { length: 7 }],
          ['DELETED', `${GROUP}/v2`, 'w1', { length: 2 }],
        ],
      );
      // Many writes at once: every event converted, in order.
      const names = Array.from({ length: 12 }, (_, i) => `many${i}`);
      await Promise.all(names.map((n, i) => create(GROUP, 'v1', 'watching', n, { size: i })));
      const many = await w.next(names.length);
      assert.ok(many.every((e) => e.type === 'ADDED' && e.object.apiVersion === `${GROUP}/v2` && e.object.spec.length === Number(e.object.metadata.name.slice(4))));
      const revisions = many.map((e) => Number(e.object.metadata.resourceVersion));
      assert.deepEqual(revisions, [...revisions].sort((a, b) => a - b));
      assert.deepEqual(new Set(many.map((e) => e.object.metadata.name)), new Set(names));
      // Two watchers, then a get: the event's stored version is converted once for all of them.
      const w2 = readWatch(`${server.url}${path(GROUP, 'v2', 'watching')}?watch=true&resourceVersion=${many.at(-1)!.object.metadata.resourceVersion}`);
      try {
        assert.equal(await w2.status, 200);
        const mark = calls.length;
        await create(GROUP, 'v1', 'watching', 'shared', { size: 5 });
        const [a] = await w.next(1);
        const [b] = await w2.next(1);
        assert.deepEqual([a!.object.spec, b!.object.spec], [{ length: 5 }, { length: 5 }]);
        assert.deepEqual((await api(server, 'GET', path(GROUP, 'v2', 'watching', 'shared'))).body.spec, { length: 5 });
        const reviews = callsFor(GROUP, mark).filter((c) => c.review.request.objects.some((o) => o.metadata.name === 'shared'));
        assert.equal(reviews.length, 1, 'one review for the stored version, shared by both watchers and the get');
      } finally {
        w2.close();
      }
    } finally {
      w.close();
    }
  });

  test('update and patch at v2 of an object stored at v1: the stored object converted to v2, the result back to v1', async () => {
    await create(GROUP, 'v1', 'default', 'u', { size: 2, note: 'keep' });
    const got = (await api(server, 'GET', path(GROUP, 'v2', 'default', 'u'))).body;
    got.spec.length = 6;
    const put = await api(server, 'PUT', path(GROUP, 'v2', 'default', 'u'), got);
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(put.body.spec, { length: 6, note: 'keep' });
    assert.equal(put.body.metadata.generation, 2);
    assert.deepEqual((await api(server, 'GET', path(GROUP, 'v1', 'default', 'u'))).body.spec, { size: 6, note: 'keep' });
    const before = calls.length;
    const patched = await api(server, 'PATCH', path(GROUP, 'v2', 'default', 'u'), { spec: { length: 8 } }, MERGE);
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.spec, { length: 8, note: 'keep' });
    assert.deepEqual((await api(server, 'GET', path(GROUP, 'v1', 'default', 'u'))).body.spec, { size: 8, note: 'keep' });
    // The patch converted the new object to v1, and the stored one back for its answer.
    assert.ok(callsFor(GROUP, before).some((c) => c.review.request.desiredAPIVersion === `${GROUP}/v1` && c.review.request.objects[0]!.spec.length === 8));
    // A patch that changes nothing writes nothing.
    const same = await api(server, 'PATCH', path(GROUP, 'v2', 'default', 'u'), { spec: { length: 8 } }, MERGE);
    assert.equal(same.body.metadata.resourceVersion, patched.body.metadata.resourceVersion);
    // Status through /status at v2.
    const st = await api(server, 'PATCH', path(GROUP, 'v2', 'default', 'u/status'), { status: { ok: true } }, MERGE);
    assert.equal(st.status, 200, st.text);
    assert.deepEqual((await api(server, 'GET', path(GROUP, 'v1', 'default', 'u'))).body.status, { ok: true });
    // Server-side apply at v2: the applied fields are v2's, stored at v1.
    const applied = await api(
      server,
      'PATCH',
      `${path(GROUP, 'v2', 'default', 'u')}?fieldManager=tester&force=true`,
      { apiVersion: `${GROUP}/v2`, kind: 'Thing', metadata: { name: 'u' }, spec: { length: 9 } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.body.spec, { length: 9, note: 'keep' });
    const manager = applied.body.metadata.managedFields.find((m: Body) => m.manager === "tester");
    assert.equal(manager.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(manager.fieldsV1, { 'f:spec': { 'f:length': {} } });
    assert.deepEqual((await api(server, 'GET', path(GROUP, 'v1', 'default', 'u'))).body.spec, { size: 9, note: 'keep' });
    // Delete at v2.
    const del = await api(server, 'DELETE', path(GROUP, 'v2', 'default', 'u'));
    assert.equal(del.status, 200, del.text);
    assert.equal((await api(server, 'GET', path(GROUP, 'v1', 'default', 'u'))).status, 404);
    // A delete that only marks the object (a finalizer) writes it back through the conversion.
    await create(GROUP, 'v1', 'default', 'f', { size: 2 });
    assert.equal((await api(server, 'PATCH', path(GROUP, 'v1', 'default', 'f'), { metadata: { finalizers: ['example.com/hold'] } }, MERGE)).status, 200);
    const marked = await api(server, 'DELETE', path(GROUP, 'v2', 'default', 'f'));
    assert.equal(marked.status, 200, marked.text);
    assert.equal(marked.body.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(marked.body.spec, { length: 2 });
    const stored = (await api(server, 'GET', path(GROUP, 'v1', 'default', 'f'))).body;
    assert.ok(stored.metadata.deletionTimestamp);
    assert.deepEqual(stored.spec, { size: 2 });
    assert.equal((await api(server, 'PATCH', path(GROUP, 'v2', 'default', 'f'), { metadata: { finalizers: null } }, MERGE)).status, 200);
    await waitFor('f gone', async () => (await api(server, 'GET', path(GROUP, 'v1', 'default', 'f'))).status === 404);
  });

  test('deletecollection at v2 of objects stored at v1', async () => {
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'collection' } });
    for (const n of ['c0', 'c1', 'c2']) await create(GROUP, 'v1', 'collection', n, { size: 1 }, { gone: n === 'c2' ? 'no' : 'yes' });
    const r = await api(server, 'DELETE', `${path(GROUP, 'v2', 'collection')}?labelSelector=gone%3Dyes`);
    assert.equal(r.status, 200, r.text);
    const left = await api(server, 'GET', path(GROUP, 'v1', 'collection'));
    assert.deepEqual(left.body.items.map((o: Body) => o.metadata.name), ['c2']);
  });

  test('kubectl get of the other version', async () => {
    await create(GROUP, 'v1', 'default', 'k', { size: 4 });
    const kubectl = kubectlFor(server, { label: 'crd-conversion' });
    const out = JSON.parse(await kubectl.ok(['get', `things.v2.${GROUP}`, 'k', '-n', 'default', '-o', 'json'])) as Body;
    assert.equal(out.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(out.spec, { length: 4 });
    const list = JSON.parse(await kubectl.ok(['get', `things.v2.${GROUP}`, '-n', 'default', '-o', 'json'])) as Body;
    assert.ok(list.items.every((o: Body) => o.apiVersion === `${GROUP}/v2` && !('size' in o.spec)));
    const table = await kubectl.ok(['get', `things.v2.${GROUP}`, 'k', '-n', 'default', '-o', 'custom-columns=NAME:.metadata.name,LENGTH:.spec.length,SIZE:.spec.size']);
    assert.match(table, /^k\s+4\s+<none>$/m);
  });

  test('metadata: labels and annotations are taken from the answer, other changes are ignored; a changed uid is an error', async () => {
    const group = 'meta.conv.example.com';
    behaviours.set(group, (r) => {
      const answer = faithful(r) as Body;
      for (const o of answer.response.convertedObjects) {
        o.metadata.labels = { ...(o.metadata.labels ?? {}), converted: 'yes' };
        o.metadata.annotations = { note: 'from the webhook' };
        o.metadata.finalizers = ['example.com/ignored'];
        o.metadata.generation = 99;
        o.spec.unknown = 'pruned';
        if (o.metadata.name === 'uid') o.metadata.uid = 'another';
      }
      return answer;
    });
    await establish(thingCrd(group));
    const created = await create(group, 'v1', 'default', 'm', { size: 1 }, { a: 'b' });
    const got = await api(server, 'GET', path(group, 'v2', 'default', 'm'));
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.metadata.labels, { a: 'b', converted: 'yes' });
    assert.deepEqual(got.body.metadata.annotations, { note: 'from the webhook' });
    assert.equal(got.body.metadata.finalizers, undefined);
    assert.equal(got.body.metadata.generation, created.metadata.generation);
    assert.deepEqual(got.body.spec, { length: 1 }, 'a field the served version does not know is pruned');
    // Converted for storage: pruned by the storage version's schema before it is stored.
    const written = await api(server, 'POST', path(group, 'v2', 'default'), thing(group, 'v2', 'w', { length: 2 }));
    assert.equal(written.status, 201, written.text);
    assert.deepEqual(written.body.spec, { length: 2 });
    assert.deepEqual((await api(server, 'GET', path(group, 'v1', 'default', 'w'))).body.spec, { size: 2 });
    await create(group, 'v1', 'default', 'uid', { size: 1 });
    const bad = await api(server, 'GET', path(group, 'v2', 'default', 'uid'));
    assert.equal(bad.status, 500, bad.text);
    assert.equal(bad.body.message, `conversion webhook for ${group}/v1, Kind=Thing returned invalid object: must have the same UID: ${(await api(server, 'GET', path(group, 'v1', 'default', 'uid'))).body.metadata.uid} != another`);
  });
});

describe('webhook conversion errors (kube-apiserver\'s messages, 500)', () => {
  /** A new object stored at v1 in `group`, read at v2: the error answered. */
  async function failedRead(group: string, name: string): Promise<{ status: number; body: Body; text: string }> {
    await create(group, 'v1', 'default', name, { size: 1 });
    return api(server, 'GET', path(group, 'v2', 'default', name));
  }

  test('the webhook is down', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const group = 'down.conv.example.com';
    await establish(thingCrd(group, { url: `https://127.0.0.1:${port}/convert` }));
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, undefined);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`);
    // Every path that converts fails the same way: list, create at v2, watch.
    const list = await api(server, 'GET', path(group, 'v2', 'default'));
    assert.equal(list.status, 500, list.text);
    assert.match(list.body.message, /^conversion webhook for .* failed: Post .*connection refused$/);
    const c = await api(server, 'POST', path(group, 'v2', 'default'), thing(group, 'v2', 'y', { length: 1 }));
    assert.equal(c.status, 500, c.text);
    assert.match(c.body.message, new RegExp(`^conversion webhook for ${group.replaceAll('.', '\\.')}/v2, Kind=Thing failed: Post .*connection refused$`));
    assert.equal((await api(server, 'GET', path(group, 'v1', 'default', 'y'))).status, 404, 'nothing is stored');
    // Reads at the storage version need no webhook.
    assert.equal((await api(server, 'GET', path(group, 'v1', 'default', 'x'))).status, 200);
  });

  test('an object that cannot be converted is unreadable: an unsafe deletion removes it (gate AllowUnsafeMalformedObjectDeletion)', async () => {
    const gated = await testServer({ naming: 'kubernetes', featureGates: { AllowUnsafeMalformedObjectDeletion: true } });
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const group = 'unsafe.conv.example.com';
    const r = await api(gated, 'POST', CRDS, thingCrd(group, { url: `https://127.0.0.1:${port}/convert` }));
    assert.equal(r.status, 201, r.text);
    await waitFor('established', async () => condition((await api(gated, 'GET', `${CRDS}/things.${group}`)).body, 'Established')?.status === 'True');
    assert.equal((await api(gated, 'POST', path(group, 'v1', 'default'), thing(group, 'v1', 'x', { size: 1 }))).status, 201);
    assert.equal((await api(gated, 'DELETE', path(group, 'v2', 'default', 'x'))).status, 500);
    // At the storage version the object reads: the unsafe deletion is refused there.
    const readable = await api(gated, 'DELETE', `${path(group, 'v1', 'default', 'x')}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
    assert.equal(readable.status, 400, readable.text);
    const removed = await api(gated, 'DELETE', `${path(group, 'v2', 'default', 'x')}?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await api(gated, 'GET', path(group, 'v1', 'default', 'x'))).status, 404);
  });

  test('a certificate the caBundle does not trust', async () => {
    const group = 'untrusted.conv.example.com';
    const other = await makeCa('another-ca');
    const crd = thingCrd(group);
    crd.spec.conversion.webhook.clientConfig.caBundle = Buffer.from(other.cert).toString('base64');
    await establish(crd);
    const before = calls.length;
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: Post "https://127.0.0.1:${webhookPort}/convert/${group}?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
    assert.equal(callsFor(group, before).length, 0);
  });

  test('the wrong number of objects', async () => {
    const group = 'count.conv.example.com';
    behaviours.set(group, (r) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, convertedObjects: [], result: { status: 'Success' } } }));
    await establish(thingCrd(group));
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing returned 0 objects, expected 1`);
  });

  test('the wrong apiVersion, the wrong kind', async () => {
    const group = 'version.conv.example.com';
    behaviours.set(group, (r) => {
      const answer = faithful(r) as Body;
      for (const o of answer.response.convertedObjects) {
        if (o.metadata.name === 'kind') o.kind = 'Other';
        else o.apiVersion = `${group}/v1`;
      }
      return answer;
    });
    await establish(thingCrd(group));
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing returned invalid object at index 0: invalid groupVersion (expected ${group}/v2, received ${group}/v1)`);
    const k = await failedRead(group, 'kind');
    assert.equal(k.body.message, `conversion webhook for ${group}/v1, Kind=Thing returned invalid object at index 0: invalid kind (expected Thing, received Other)`);
    // In a list: the index in the review.
    const list = await api(server, 'GET', path(group, 'v2', 'default'));
    assert.equal(list.status, 500, list.text);
    assert.match(list.body.message, /returned invalid converted object at index \d: invalid (groupVersion|kind)/);
  });

  test('a failed result, a wrong uid, an answer of another review version', async () => {
    const group = 'result.conv.example.com';
    behaviours.set(group, (r) => {
      const name = r.request.objects[0]!.metadata.name;
      if (name === 'uid') return { ...(faithful(r) as Body), response: { ...(faithful(r) as Body).response, uid: 'not-the-request' } };
      if (name === 'kind') return { ...(faithful(r) as Body), apiVersion: 'apiextensions.k8s.io/v1beta1' };
      return { apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Failure', message: 'cannot convert this one' } } };
    });
    await establish(thingCrd(group));
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: cannot convert this one`);
    const u = await failedRead(group, 'uid');
    assert.equal(u.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: expected response.uid="${calls.at(-1)!.review.request.uid}", got "not-the-request"`);
    const k = await failedRead(group, 'kind');
    assert.equal(k.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview`);
    // A watch whose event cannot be converted ends with an ERROR event.
    await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'failing' } });
    const w = readWatch(`${server.url}${path(group, 'v2', 'failing')}?watch=true`);
    try {
      assert.equal(await w.status, 200);
      await create(group, 'v1', 'failing', 'x', { size: 1 });
      const [ev] = await w.next(1);
      assert.equal(ev!.type, 'ERROR');
      assert.equal(ev!.object.code, 500);
      assert.equal(ev!.object.message, `conversion webhook for ${group}/v1, Kind=Thing failed: cannot convert this one`);
      await w.ended;
    } finally {
      w.close();
    }
  });

  test('v1beta1 reviews when the CRD lists it first', async () => {
    const group = 'beta.conv.example.com';
    await establish(thingCrd(group, { reviewVersions: ['v9', 'v1beta1', 'v1'] }));
    await create(group, 'v1', 'default', 'x', { size: 2 });
    const before = calls.length;
    const r = await api(server, 'GET', path(group, 'v2', 'default', 'x'));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.spec, { length: 2 });
    assert.equal(callsFor(group, before)[0]!.review.apiVersion, 'apiextensions.k8s.io/v1beta1');
  });

  test('a service reference: https://<name>.<namespace>.svc, which this host cannot resolve', async () => {
    const group = 'service.conv.example.com';
    await establish(
      thingCrd(group, {
        conversion: {
          strategy: 'Webhook',
          webhook: { clientConfig: { service: { namespace: 'conv', name: 'converter', path: '/convert', port: 8443 }, caBundle: Buffer.from(ca.cert).toString('base64') }, conversionReviewVersions: ['v1'] },
        },
      }),
    );
    const r = await failedRead(group, 'x');
    assert.equal(r.status, 500, r.text);
    assert.match(r.body.message, new RegExp(`^conversion webhook for ${group.replaceAll('.', '\\.')}/v1, Kind=Thing failed: Post "https://converter\\.conv\\.svc:8443/convert\\?timeout=30s": `));
  });

  test('a webhook that does not answer: 30 s, kube-apiserver\'s timeout', { timeout: 60_000 }, async () => {
    const group = 'hang.conv.example.com';
    behaviours.set(group, () => 'hang');
    await establish(thingCrd(group));
    const started = Date.now();
    const r = await failedRead(group, 'x');
    const took = Date.now() - started;
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: Post "https://127.0.0.1:${webhookPort}/convert/${group}?timeout=30s": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    assert.ok(took >= 29_000 && took < 45_000, `answered after ${took} ms`);
  });
});

describe('field ownership across versions (managers compared in their own version, through the webhook)', () => {
  const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
  const apply = (group: string, v: 'v1' | 'v2', name: string, manager: string, spec: Body, force = false) =>
    api(server, 'PATCH', `${path(group, v, 'default', name)}?fieldManager=${manager}${force ? '&force=true' : ''}`, JSON.stringify(thing(group, v, name, spec)), APPLY);
  /** The managed fields as `manager operation apiVersion fields` lines, in stored order. */
  const owners = (o: Body): string[] => (o.metadata.managedFields ?? []).map((e: Body) => `${e.manager} ${e.operation} ${e.apiVersion} ${JSON.stringify(e.fieldsV1)}`);

  test('an apply at v2 conflicts with the v1 applier of the field it renames, at its v1 path; force takes it', async () => {
    const group = 'ssa.conv.example.com';
    await establish(thingCrd(group));
    const first = await apply(group, 'v1', 'a', 'alpha', { size: 1, note: 'n' });
    assert.equal(first.status, 201, first.text);
    const before = calls.length;
    const conflict = await apply(group, 'v2', 'a', 'beta', { length: 2 });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.body.reason, 'Conflict');
    // (An applier's identity has no version: kube names the version of updaters only.)
    assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "alpha": .spec.size');
    assert.deepEqual(
      conflict.body.details.causes.map((c: Body) => [c.reason, c.field]),
      [['FieldManagerConflict', '.spec.size']],
    );
    // The comparison's conversions are one review: the live and the applied object, to v1 (the
    // other review reads the stored object at v2).
    assert.equal(callsFor(group, before).length, 2);
    const ownership = callsFor(group, before).filter((c) => c.review.request.objects.length === 2);
    assert.equal(ownership.length, 1, JSON.stringify(callsFor(group, before).map((c) => c.review.request)));
    assert.equal(ownership[0]!.review.request.desiredAPIVersion, `${group}/v1`);
    assert.deepEqual(
      ownership[0]!.review.request.objects.map((o) => o.apiVersion),
      [`${group}/v2`, `${group}/v2`],
    );
    // Unchanged fields conflict with no one.
    assert.equal((await apply(group, 'v2', 'a', 'beta', { length: 1 })).status, 200);
    const forced = await apply(group, 'v2', 'a', 'beta', { length: 2 }, true);
    assert.equal(forced.status, 200, forced.text);
    assert.deepEqual(forced.body.spec, { length: 2, note: 'n' });
    // Each entry stays at its own version: alpha keeps its note at v1, beta owns length at v2.
    assert.deepEqual(owners(forced.body), [
      `alpha Apply ${group}/v1 {"f:spec":{"f:note":{}}}`,
      `beta Apply ${group}/v2 {"f:spec":{"f:length":{}}}`,
    ]);
    const v1 = await api(server, 'GET', path(group, 'v1', 'default', 'a'));
    assert.deepEqual(v1.body.spec, { size: 2, note: 'n' });
    assert.deepEqual(owners(v1.body), owners(forced.body), 'managedFields are not converted: each entry names its version');
    // Now alpha, at v1, conflicts with beta's v2 field.
    const back = await apply(group, 'v1', 'a', 'alpha', { size: 3, note: 'n' });
    assert.equal(back.status, 409, back.text);
    assert.equal(back.body.message, 'Apply failed with 1 conflict: conflict with "beta": .spec.length');
  });

  test('a manager recorded at a version the CRD lists but no longer serves is compared through the webhook; one at a version it no longer lists is dropped', async () => {
    const group = 'unserved.conv.example.com';
    const crd = thingCrd(group);
    crd.spec.versions.push(version('v3', false, 'size'));
    await establish(crd);
    assert.equal((await apply(group, 'v1', 'u', 'alpha', { size: 1 })).status, 201);
    const three = await api(server, 'PATCH', `${path(group, 'v3', 'default', 'u')}?fieldManager=gamma`, JSON.stringify({ ...thing(group, 'v1', 'u', { note: 'g' }), apiVersion: `${group}/v3` }), APPLY);
    assert.equal(three.status, 200, three.text);
    // v1 (the storage version) stops being served; v3 leaves the CRD.
    await changeCrd(
      crd.metadata.name,
      (c) => {
        c.spec.versions = c.spec.versions.filter((v: Body) => v.name !== 'v3').map((v: Body) => (v.name === 'v1' ? { ...v, served: false } : v));
      },
      async () => (await api(server, 'GET', path(group, 'v1', 'default', 'u'))).status === 404 && (await api(server, 'GET', path(group, 'v3', 'default', 'u'))).status === 404,
    );
    // alpha's size is length at v2: taking it is a conflict at alpha's own (v1) path.
    const conflict = await apply(group, 'v2', 'u', 'beta', { length: 2 });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "alpha": .spec.size');
    // gamma's note is no one's now: beta takes it without a conflict, and gamma's entry is gone.
    const taken = await apply(group, 'v2', 'u', 'beta', { length: 1, note: 'b' });
    assert.equal(taken.status, 200, taken.text);
    assert.deepEqual(owners(taken.body), [`alpha Apply ${group}/v1 {"f:spec":{"f:size":{}}}`, `beta Apply ${group}/v2 {"f:spec":{"f:length":{},"f:note":{}}}`]);
  });

  test('kubectl apply --server-side at v2 reports the conflict at the v1 path and takes it with --force-conflicts', async () => {
    const group = 'ssa.conv.example.com';
    const kubectl = kubectlFor(server, { label: 'crd-conversion-ssa' });
    const manifest = (v: string, spec: string) => `apiVersion: ${group}/${v}\nkind: Thing\nmetadata:\n  name: k\n  namespace: default\nspec:\n${spec}`;
    await kubectl.ok(['apply', '--server-side', '--field-manager=one', '-f', kubectl.file('v1.yaml', manifest('v1', '  size: 1\n'))]);
    const failed = await kubectl.fails(['apply', '--server-side', '--field-manager=two', '-f', kubectl.file('v2.yaml', manifest('v2', '  length: 2\n'))]);
    assert.match(failed.stderr, /Apply failed with 1 conflict: conflict with "one": \.spec\.size\n/);
    await kubectl.ok(['apply', '--server-side', '--field-manager=two', '--force-conflicts', '-f', kubectl.file('v2.yaml', manifest('v2', '  length: 2\n'))]);
    const got = JSON.parse(await kubectl.ok(['get', `things.v1.${group}`, 'k', '-n', 'default', '-o', 'json', '--show-managed-fields'])) as Body;
    assert.deepEqual(got.spec, { size: 2 });
    assert.deepEqual(owners(got), [`two Apply ${group}/v2 {"f:spec":{"f:length":{}}}`]);
  });

  test('an update at v2 takes the renamed field from its v1 owner; a removal at v2 removes it from the v1 owner', async () => {
    const group = 'ssa.conv.example.com';
    assert.equal((await apply(group, 'v1', 'u', 'alpha', { size: 1, note: 'n' })).status, 201);
    const patched = await api(server, 'PATCH', `${path(group, 'v2', 'default', 'u')}?fieldManager=editor`, { spec: { length: 5 } }, MERGE);
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.metadata.managedFields.length, 2);
    assert.equal(owners(patched.body)[0], `alpha Apply ${group}/v1 {"f:spec":{"f:note":{}}}`);
    assert.match(owners(patched.body)[1]!, new RegExp(`^editor Update ${group.replaceAll('.', '\\.')}/v2 \\{"f:spec":\\{"f:length":\\{\\}\\}\\}$`));
    // An updater at v1 is named with its version in a conflict at v2, at its v1 path.
    const edited = await api(server, 'PATCH', `${path(group, 'v1', 'default', 'u')}?fieldManager=old-editor`, { spec: { size: 6 } }, MERGE);
    assert.equal(edited.status, 200, edited.text);
    // … and the v2 updater of length lost it to that v1 write (its only field: its entry goes).
    assert.deepEqual(owners(edited.body).map((l) => l.split(' ')[0]), ['alpha', 'old-editor']);
    const conflict = await apply(group, 'v2', 'u', 'beta', { length: 7 });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.body.message, `Apply failed with 1 conflict: conflict with "old-editor" using ${group}/v1: .spec.size`);
    // A v2 write that removes the note takes it from alpha (v1) too.
    const removed = await api(server, 'PATCH', `${path(group, 'v2', 'default', 'u')}?fieldManager=editor`, { spec: { note: null } }, MERGE);
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(owners(removed.body).map((l) => l.split(' ')[0]), ['old-editor']);
  });

  test('a create at v2 whose request gives a v1 manager: its field is compared at v1', async () => {
    const group = 'ssa.conv.example.com';
    const body = thing(group, 'v2', 'c', { length: 5, note: 'n' });
    body.metadata.managedFields = [{ manager: 'importer', operation: 'Update', apiVersion: `${group}/v1`, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:size': {}, 'f:note': {} } } }];
    const r = await api(server, 'POST', `${path(group, 'v2', 'default')}?fieldManager=creator`, body);
    assert.equal(r.status, 201, r.text);
    // The create sets size (length at v2) and note: the importer's v1 fields both change, so the creator takes them.
    assert.deepEqual(owners(r.body).map((l) => l.replace(/ \{.*/, '')), [`creator Update ${group}/v2`]);
    assert.deepEqual(r.body.metadata.managedFields[0].fieldsV1, { 'f:spec': { 'f:length': {}, 'f:note': {} } });
  });

  test('an applier that applied at v1 and applies at v2 without the field prunes it, in v1', async () => {
    const group = 'ssa.conv.example.com';
    assert.equal((await apply(group, 'v1', 'p', 'alpha', { size: 1 })).status, 201);
    const moved = await apply(group, 'v2', 'p', 'alpha', { note: 'y' });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(moved.body.spec, { note: 'y' }, 'size (length at v2) is no longer applied: removed');
    assert.deepEqual(owners(moved.body), [`alpha Apply ${group}/v2 {"f:spec":{"f:note":{}}}`]);
    assert.deepEqual((await api(server, 'GET', path(group, 'v1', 'default', 'p'))).body.spec, { note: 'y' });
    // A field another manager owns at v2 stays: each version's managers add back what they own there.
    assert.equal((await apply(group, 'v1', 'q', 'alpha', { size: 1 })).status, 201);
    assert.equal((await apply(group, 'v2', 'q', 'beta', { length: 1 })).status, 200, 'the same value: co-owned, no conflict');
    const kept = await apply(group, 'v2', 'q', 'alpha', { note: 'y' });
    assert.equal(kept.status, 200, kept.text);
    assert.deepEqual(kept.body.spec, { length: 1, note: 'y' });
    assert.deepEqual(owners(kept.body).sort(), [`alpha Apply ${group}/v2 {"f:spec":{"f:note":{}}}`, `beta Apply ${group}/v2 {"f:spec":{"f:length":{}}}`]);
  });

  test('a webhook that fails: an apply meeting another version\'s manager fails with its error; an update keeps the stored managedFields', async () => {
    const group = 'ssa-down.conv.example.com';
    let failing = false;
    behaviours.set(group, (r) => (failing ? { apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Failure', message: 'down for now' } } } : faithful(r)));
    await establish(thingCrd(group));
    assert.equal((await apply(group, 'v2', 'f', 'beta', { length: 1 })).status, 201);
    assert.equal((await apply(group, 'v1', 'f', 'alpha', { note: 'n' })).status, 200);
    failing = true;
    // An apply that changes nothing still converts the live object for beta, as kube-apiserver
    // reconciles each manager's fields at its version.
    const same = await apply(group, 'v1', 'f', 'alpha', { note: 'n' });
    assert.equal(same.status, 500, same.text);
    assert.equal(same.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: down for now`);
    // At v1 (the storage version) nothing else converts: only the ownership comparison with beta (v2).
    const applied = await apply(group, 'v1', 'f', 'alpha', { size: 2 });
    assert.equal(applied.status, 500, applied.text);
    assert.equal(applied.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: down for now`);
    const updated = await api(server, 'PATCH', `${path(group, 'v1', 'default', 'f')}?fieldManager=editor`, { spec: { size: 3 } }, MERGE);
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.body.spec, { size: 3, note: 'n' });
    assert.deepEqual(owners(updated.body).sort(), [`alpha Apply ${group}/v1 {"f:spec":{"f:note":{}}}`, `beta Apply ${group}/v2 {"f:spec":{"f:length":{}}}`], 'the stored managedFields, unchanged');
    failing = false;
  });
});

describe('conversion metrics', () => {
  async function scrape(): Promise<Map<string, Family>> {
    const r = await api(server, 'GET', '/metrics');
    assert.equal(r.status, 200);
    return parsePrometheusText(r.text);
  }
  /** The count of the one series of histogram or counter `name` whose labels include `want` (0 when none). */
  function count(families: Map<string, Family>, name: string, want: Record<string, string>): number {
    const f = families.get(name);
    const sample = f?.type === 'histogram' ? `${name}_count` : name;
    const found = (f?.samples ?? []).filter((m) => m.name === sample && Object.entries(want).every(([k, v]) => m.labels[k] === v));
    assert.ok(found.length <= 1, `${name} ${JSON.stringify(want)}: ${found.length} series`);
    return found[0]?.value ?? 0;
  }

  test("apiextensions-apiserver's conversion histogram and review counters, succeeded and failed", async () => {
    const group = 'metrics.conv.example.com';
    const crdName = `things.${group}`;
    let failing = false;
    behaviours.set(group, (r) => (failing ? { apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Failure', message: 'no' } } } : faithful(r)));
    await establish(thingCrd(group));
    const before = await scrape();
    await create(group, 'v1', 'default', 'a', { size: 1 });
    assert.equal((await api(server, 'GET', path(group, 'v2', 'default', 'a'))).status, 200);
    await create(group, 'v2', 'default', 'b', { length: 2 });
    failing = true;
    await create(group, 'v1', 'default', 'c', { size: 3 });
    assert.equal((await api(server, 'GET', path(group, 'v2', 'default', 'c'))).status, 500);
    const after = await scrape();

    const conversions = after.get('apiserver_crd_conversion_webhook_duration_seconds');
    assert.equal(conversions?.type, 'histogram');
    assert.equal(conversions.help, '[ALPHA] CRD webhook conversion duration in seconds');
    const converted = (labels: Record<string, string>) =>
      count(after, 'apiserver_crd_conversion_webhook_duration_seconds', { crd_name: crdName, ...labels }) - count(before, 'apiserver_crd_conversion_webhook_duration_seconds', { crd_name: crdName, ...labels });
    // a read at v2 and the answer of the create at v2; the create at v2 stored at v1; the failed read.
    assert.equal(converted({ from_version: 'v1', to_version: 'v2', succeeded: 'true' }), 2);
    assert.equal(converted({ from_version: 'v2', to_version: 'v1', succeeded: 'true' }), 1);
    assert.equal(converted({ from_version: 'v1', to_version: 'v2', succeeded: 'false' }), 1);
    assert.equal(converted({ from_version: 'v2', to_version: 'v1', succeeded: 'false' }), 0);
    // kube's buckets: 1 ms doubling, 15 of them (the last 16.384 s), then +Inf.
    const bounds = conversions.samples.filter((m) => m.name.endsWith('_bucket') && m.labels.crd_name === crdName && m.labels.succeeded === 'true' && m.labels.from_version === 'v1').map((m) => m.labels.le);
    assert.deepEqual(bounds, ['0.001', '0.002', '0.004', '0.008', '0.016', '0.032', '0.064', '0.128', '0.256', '0.512', '1.024', '2.048', '4.096', '8.192', '16.384', '+Inf']);

    const requests = after.get('apiserver_conversion_webhook_request_total');
    assert.equal(requests?.type, 'counter');
    const reviewed = (labels: Record<string, string>) => count(after, 'apiserver_conversion_webhook_request_total', labels) - count(before, 'apiserver_conversion_webhook_request_total', labels);
    assert.equal(reviewed({ result: 'success', failure_type: '' }), 3);
    assert.equal(reviewed({ result: 'failure', failure_type: 'conversion_webhook_malformed_response_failure' }), 1);
    const timed = (labels: Record<string, string>) => count(after, 'apiserver_conversion_webhook_duration_seconds', labels) - count(before, 'apiserver_conversion_webhook_duration_seconds', labels);
    assert.equal(timed({ result: 'success', failure_type: '' }), 3);
    assert.equal(timed({ result: 'failure', failure_type: 'conversion_webhook_malformed_response_failure' }), 1);
  });

  test('failure types: a webhook that cannot be reached, too few objects, an invalid object', async () => {
    const before = await scrape();
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = 'metrics-down.conv.example.com';
    await establish(thingCrd(down, { url: `https://127.0.0.1:${port}/convert` }));
    const partial = 'metrics-partial.conv.example.com';
    behaviours.set(partial, (r) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, convertedObjects: [], result: { status: 'Success' } } }));
    await establish(thingCrd(partial));
    const invalid = 'metrics-invalid.conv.example.com';
    behaviours.set(invalid, (r) => {
      const answer = faithful(r) as Body;
      answer.response.convertedObjects[0].kind = 'Other';
      return answer;
    });
    await establish(thingCrd(invalid));
    for (const group of [down, partial, invalid]) {
      await create(group, 'v1', 'default', 'x', { size: 1 });
      assert.equal((await api(server, 'GET', path(group, 'v2', 'default', 'x'))).status, 500);
    }
    const after = await scrape();
    const failed = (type: string) => count(after, 'apiserver_conversion_webhook_request_total', { result: 'failure', failure_type: type }) - count(before, 'apiserver_conversion_webhook_request_total', { result: 'failure', failure_type: type });
    assert.equal(failed('conversion_webhook_call_failure'), 1);
    assert.equal(failed('conversion_webhook_partial_response_failure'), 1);
    assert.equal(failed('conversion_webhook_invalid_converted_object_failure'), 1);
    for (const group of [down, partial, invalid])
      assert.equal(count(after, 'apiserver_crd_conversion_webhook_duration_seconds', { crd_name: `things.${group}`, from_version: 'v1', to_version: 'v2', succeeded: 'false' }), 1, group);
  });
});

describe('objects stored at an earlier storage version', () => {
  test('None: read at the new storage version with its apiVersion', async () => {
    const group = 'none.conv.example.com';
    const crd = thingCrd(group, { conversion: { strategy: 'None' } });
    // The same schema at both versions (None changes only apiVersion).
    crd.spec.versions[1] = version('v2', false, 'size');
    await establish(crd);
    await create(group, 'v1', 'default', 'old', { size: 3 });
    await changeCrd(
      `things.${group}`,
      (c) => {
        c.spec.versions[0].storage = false;
        c.spec.versions[1].storage = true;
      },
      async () => (await api(server, 'GET', `/apis/${group}/v1`)).body?.resources?.[0]?.storageVersionHash !== undefined && (await api(server, 'POST', path(group, 'v2', 'default'), thing(group, 'v2', 'probe', { size: 1 }))).status === 201,
    );
    const v2 = await api(server, 'GET', path(group, 'v2', 'default', 'old'));
    assert.equal(v2.status, 200, v2.text);
    assert.equal(v2.body.apiVersion, `${group}/v2`);
    assert.deepEqual(v2.body.spec, { size: 3 });
    const list = await api(server, 'GET', path(group, 'v2', 'default'));
    assert.deepEqual(list.body.items.map((o: Body) => [o.metadata.name, o.apiVersion]), [['old', `${group}/v2`], ['probe', `${group}/v2`]]);
    const v1 = await api(server, 'GET', path(group, 'v1', 'default', 'probe'));
    assert.equal(v1.body.apiVersion, `${group}/v1`);
  });

  test('Webhook: an object stored at v1 read at the new storage version v2 through the webhook, at v1 without it', async () => {
    const group = 'moved.conv.example.com';
    await establish(thingCrd(group));
    await create(group, 'v1', 'default', 'old', { size: 3 });
    const before = calls.length;
    await changeCrd(
      `things.${group}`,
      (c) => {
        c.spec.versions[0].storage = false;
        c.spec.versions[1].storage = true;
      },
      async () => (await api(server, 'POST', path(group, 'v2', 'default'), thing(group, 'v2', 'probe', { length: 1 }))).status === 201,
    );
    const v2 = await api(server, 'GET', path(group, 'v2', 'default', 'old'));
    assert.equal(v2.status, 200, v2.text);
    assert.equal(v2.body.apiVersion, `${group}/v2`);
    assert.deepEqual(v2.body.spec, { length: 3 });
    // Converted once (by this read, or by the first reader of the kind served anew, as the
    // garbage collector's list at the storage version), from v1, and nothing at v2 was sent.
    const sent = callsFor(group, before);
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0]!.review.request.objects.map((o) => [o.apiVersion, o.metadata.name, o.spec]), [[`${group}/v1`, 'old', { size: 3 }]]);
    const mark = calls.length;
    const v1 = await api(server, 'GET', path(group, 'v1', 'default', 'old'));
    assert.deepEqual(v1.body.spec, { size: 3 });
    assert.equal(callsFor(group, mark).length, 0, 'an object stored at v1 is read at v1 as stored');
    // The probe was stored at v2: reading it at v1 converts it.
    const probe = await api(server, 'GET', path(group, 'v1', 'default', 'probe'));
    assert.deepEqual(probe.body.spec, { size: 1 });
    assert.equal(callsFor(group, mark).length, 1);
  });
});

describe('the default profile', () => {
  test('the ConversionReview is of the CRD kind\'s own group (apiextensions.orch.io)', async () => {
    const orch = await testServer();
    const group = 'orch.conv.example.com';
    const crd = { ...thingCrd(group), apiVersion: 'apiextensions.orch.io/v1' };
    const r = await api(orch, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', crd);
    assert.equal(r.status, 201, r.text);
    await waitFor('established', async () => condition((await api(orch, 'GET', `/apis/apiextensions.orch.io/v1/customresourcedefinitions/things.${group}`)).body, 'Established')?.status === 'True');
    assert.equal((await api(orch, 'POST', path(group, 'v1', 'default'), thing(group, 'v1', 'o', { size: 2 }))).status, 201);
    const before = calls.length;
    const got = await api(orch, 'GET', path(group, 'v2', 'default', 'o'));
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body.spec, { length: 2 });
    assert.deepEqual(callsFor(group, before).map((c) => c.review.apiVersion), ['apiextensions.orch.io/v1']);
    // An answer in the kubernetes spelling is another kind of review: refused, in kube's words.
    behaviours.set(group, (rv) => ({ ...(faithful(rv) as Body), apiVersion: 'apiextensions.k8s.io/v1' }));
    assert.equal((await api(orch, 'POST', path(group, 'v1', 'default'), thing(group, 'v1', 'p', { size: 2 }))).status, 201);
    const bad = await api(orch, 'GET', path(group, 'v2', 'default', 'p'));
    assert.equal(bad.status, 500, bad.text);
    assert.equal(bad.body.message, `conversion webhook for ${group}/v1, Kind=Thing failed: expected webhook response of apiextensions.orch.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=ConversionReview`);
  });
});
