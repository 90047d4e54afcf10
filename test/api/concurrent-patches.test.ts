// Patches that race (issue 20, item 1): a patch or apply that gives no resourceVersion is applied
// to whatever is stored when its write lands, as kube-apiserver's GuaranteedUpdate re-applies it
// after losing a compare-and-swap, so concurrent patches of one object all succeed. A request that
// gives a resourceVersion (a PUT's body, a patch that sets one) is refused with 409 once it is stale.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();
after(() => server.close());

const GROUP = 'coordination.orch.io';
const NS = 'concurrent-patches';
const LEASES = `/apis/${GROUP}/v1/namespaces/${NS}/leases`;
const N = 10;

interface Lease {
  metadata: { resourceVersion: string; labels?: Record<string, string> };
}

async function lease(name: string): Promise<Lease> {
  const r = await api(server, 'POST', LEASES, { apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name, labels: { base: 'x' } }, spec: { holderIdentity: 'h' } });
  assert.equal(r.status, 201, r.text);
  return r.body as Lease;
}

const each = <T>(f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: N }, (_, i) => f(i)));

describe('concurrent patches of one object all succeed', () => {
  test('set-up', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  });

  const cases: [string, string, (i: number) => unknown][] = [
    ['merge patch', 'application/merge-patch+json', (i) => ({ metadata: { labels: { [`k${i}`]: 'v' } } })],
    ['JSON patch', 'application/json-patch+json', (i) => [{ op: 'add', path: `/metadata/labels/k${i}`, value: 'v' }]],
    ['strategic merge patch', 'application/strategic-merge-patch+json', (i) => ({ metadata: { labels: { [`k${i}`]: 'v' } } })],
  ];
  for (const [what, type, patch] of cases) {
    test(`${N} ${what}es, each adding a label: every one 200, every label there`, async () => {
      const name = what.replaceAll(' ', '-').toLowerCase();
      await lease(name);
      const answers = await each((i) => api(server, 'PATCH', `${LEASES}/${name}`, patch(i), { 'Content-Type': type }));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(N).fill(200),
        answers.map((a) => a.text.slice(0, 200)).join('\n'),
      );
      const labels = ((await api(server, 'GET', `${LEASES}/${name}`)).body as Lease).metadata.labels!;
      for (let i = 0; i < N; i++) assert.equal(labels[`k${i}`], 'v', `label k${i}`);
    });
  }

  test(`${N} applies by ${N} managers, each owning its own label: every one 200, every label there`, async () => {
    await lease('applied');
    const answers = await each((i) =>
      api(server, 'PATCH', `${LEASES}/applied?fieldManager=m${i}`, { apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: 'applied', labels: { [`k${i}`]: 'v' } } }, {
        'Content-Type': 'application/apply-patch+yaml',
      }),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(N).fill(200),
      answers.map((a) => a.text.slice(0, 200)).join('\n'),
    );
    const labels = ((await api(server, 'GET', `${LEASES}/applied`)).body as Lease).metadata.labels!;
    for (let i = 0; i < N; i++) assert.equal(labels[`k${i}`], 'v', `label k${i}`);
  });

  test('a patch that sets a stale resourceVersion, and a PUT with one, are 409 and change nothing', async () => {
    const created = await lease('stale');
    const moved = await api(server, 'PATCH', `${LEASES}/stale`, { metadata: { labels: { moved: 'yes' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(moved.status, 200);
    const patch = await api(server, 'PATCH', `${LEASES}/stale`, { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { late: 'x' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patch.status, 409, patch.text);
    assert.equal(patch.body.reason, 'Conflict');
    const put = await api(server, 'PUT', `${LEASES}/stale`, { apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: 'stale', resourceVersion: created.metadata.resourceVersion }, spec: {} });
    assert.equal(put.status, 409, put.text);
    const now = (await api(server, 'GET', `${LEASES}/stale`)).body as Lease;
    assert.equal(now.metadata.resourceVersion, (moved.body as Lease).metadata.resourceVersion);
  });
});
