// Lists whose length a request controls, every item invalid: a 422 Status (never a 500 from
// collecting one error per item) that reports the first errors and counts the rest, so the answer
// stays a small multiple of the request at most.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer();

const cases: { what: string; path: string; body: (n: number) => object }[] = [
  { what: 'Node spec.taints', path: '/api/v1/nodes', body: (n) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'many-taints' }, spec: { taints: Array.from({ length: n }, () => ({})) } }) },
  { what: 'Node spec.podCIDRs', path: '/api/v1/nodes', body: (n) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'many-cidrs' }, spec: { podCIDRs: Array.from({ length: n }, () => 'x') } }) },
  { what: 'metadata.finalizers', path: '/apis/coordination.orch.io/v1/namespaces/default/leases', body: (n) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'many-finalizers', finalizers: Array.from({ length: n }, () => '-') } }) },
  {
    // Each invalid resource name is one error of its own check, spread into the kind's list.
    what: 'RuntimeClass overhead.podFixed',
    path: '/apis/node.orch.io/v1/runtimeclasses',
    body: (n) => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name: 'many-overheads' }, handler: 'h', overhead: { podFixed: Object.fromEntries(Array.from({ length: n }, (_, i) => [`-${i}`, '1'])) } }),
  },
];

for (const c of cases) {
  test(`${c.what}: 200,000 invalid items are a 422 Status of bounded size`, async () => {
    const body = JSON.stringify(c.body(Number(process.env.N ?? 200_000)));
    assert.ok(body.length < 3 * 1024 * 1024, `body of ${body.length} bytes`);
    const r = await api(server, 'POST', c.path, body);
    assert.equal(r.status, 422, r.text.slice(0, 500));
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, 'Invalid');
    // The first 100 errors are reported, the message counts the rest.
    assert.equal(r.body.details.causes.length, 100);
    assert.match(r.body.message, /, and \d+ more errors\]$/);
    assert.ok(r.text.length <= 2 * body.length, `an answer of ${r.text.length} bytes to a request of ${body.length}`);
  });
}
