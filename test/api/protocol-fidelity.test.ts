// Places where a request-by-request comparison found the server answering differently from
// kube-apiserver (issue "Protocol fidelity"): each case over HTTP, and a refused request changes
// nothing stored. One server for the file, a namespace per test.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

const server = await testServer({});
let seq = 0;
async function namespace(prefix: string): Promise<string> {
  const name = `${prefix}-${++seq}`;
  const r = await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(r.status, 201, r.text);
  return name;
}

describe('a cluster-scoped resource is never reached through a namespace path', () => {
  test('namespaces under a namespace: every verb is 404 and acts on nothing', async () => {
    const t1 = await namespace('outer');
    const t2 = await namespace('inner');
    const before = (await api(server, 'GET', `/api/v1/namespaces/${t2}`)).body;
    const cases: [string, string, unknown?, Record<string, string>?][] = [
      ['GET', `/api/v1/namespaces/${t1}/namespaces`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces?watch=true&timeoutSeconds=1`],
      ['POST', `/api/v1/namespaces/${t1}/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${t2}-new` } }],
      ['DELETE', `/api/v1/namespaces/${t1}/namespaces`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces/${t2}`],
      ['PUT', `/api/v1/namespaces/${t1}/namespaces/${t2}`, { ...before, metadata: { ...before.metadata, labels: { x: 'y' } } }],
      ['PATCH', `/api/v1/namespaces/${t1}/namespaces/${t2}`, { metadata: { labels: { x: 'y' } } }, { 'Content-Type': 'application/merge-patch+json' }],
      ['DELETE', `/api/v1/namespaces/${t1}/namespaces/${t2}`],
      ['GET', `/api/v1/namespaces/${t1}/namespaces/${t2}/status`],
      ['PUT', `/api/v1/namespaces/${t1}/namespaces/${t2}/finalize`, before],
      ['GET', `/api/v1/namespaces/${t2}/namespaces/${t2}`],
      ['GET', `/apis/node.orch.io/v1/namespaces/${t1}/runtimeclasses`],
    ];
    for (const [method, path, body, headers] of cases) {
      const r = await api(server, method, path, body, headers);
      assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.kind, 'Status');
      assert.equal(r.body.reason, 'NotFound');
    }
    const after = await api(server, 'GET', `/api/v1/namespaces/${t2}`);
    assert.equal(after.status, 200);
    assert.deepEqual(after.body, before);
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${t2}-new`)).status, 404);
    // The namespace object's own paths still work.
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${t2}/status`)).status, 200);
    assert.equal((await api(server, 'GET', '/api/v1/namespaces')).status, 200);
  });
});
