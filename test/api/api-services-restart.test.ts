// The local APIServices a start registers, across a restart on the same data directory: one left as
// it was registered is not written again, a managed one whose spec was changed is put back, one
// left by a start for a group version no longer served is removed, and one nobody manages is left
// alone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTrusted } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';

const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices';
const MANAGED = 'kube-aggregator.kubernetes.io/automanaged';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

test('a restart writes only the APIServices that differ from what the start registers', async () => {
  const dataDir = tempDir('api-services-restart');
  const first = await startTrusted({ naming: 'kubernetes', dataDir });
  type ApiService = { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> }; spec: { versionPriority: number } };
  let before: Record<string, ApiService>;
  try {
    const list = await api(first, 'GET', APISERVICES);
    assert.equal(list.status, 200);
    before = Object.fromEntries((list.body.items as ApiService[]).map((a) => [a.metadata.name, a]));
    assert.equal(before['v1.coordination.k8s.io']?.metadata.labels?.[MANAGED], 'onstart');
    assert.notEqual(before['v1.coordination.k8s.io']?.spec.versionPriority, 7);
    // A managed one changed by hand, a stale one from an earlier start, and an unmanaged one.
    const changed = await api(first, 'PATCH', `${APISERVICES}/v1.coordination.k8s.io`, { spec: { versionPriority: 7 } }, MERGE);
    assert.equal(changed.status, 200, changed.text);
    const stale = await api(first, 'POST', APISERVICES, { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v9.gone.example.com', labels: { [MANAGED]: 'onstart' } }, spec: { group: 'gone.example.com', version: 'v9', groupPriorityMinimum: 1000, versionPriority: 100 } });
    assert.equal(stale.status, 201, stale.text);
    const own = await api(first, 'POST', APISERVICES, { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.mine.example.com' }, spec: { group: 'mine.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 } });
    assert.equal(own.status, 201, own.text);
  } finally {
    await first.close();
  }
  const second = await startTrusted({ naming: 'kubernetes', dataDir });
  try {
    const fixed = await api(second, 'GET', `${APISERVICES}/v1.coordination.k8s.io`);
    assert.equal(fixed.body.spec.versionPriority, before['v1.coordination.k8s.io']!.spec.versionPriority);
    assert.equal((await api(second, 'GET', `${APISERVICES}/v9.gone.example.com`)).status, 404);
    assert.equal((await api(second, 'GET', `${APISERVICES}/v1.mine.example.com`)).status, 200);
    // Untouched ones keep their resourceVersion: not written again.
    const untouched = Object.keys(before).filter((n) => n !== 'v1.coordination.k8s.io');
    assert.ok(untouched.includes('v1.rbac.authorization.k8s.io'), untouched.join(' '));
    for (const name of untouched) {
      const now = await api(second, 'GET', `${APISERVICES}/${name}`);
      assert.equal(now.status, 200, name);
      assert.equal(now.body.metadata.resourceVersion, before[name]!.metadata.resourceVersion, name);
    }
  } finally {
    await second.close();
  }
});
