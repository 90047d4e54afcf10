// kubectl with the RBAC kinds, in the kubernetes profile (kubectl hard-codes
// rbac.authorization.k8s.io for `create role` and `create rolebinding`): the defaults listed with
// their columns, a role and a binding made by kubectl, and the binding's grant taking effect.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, testServer, waitFor } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { kubectlFor } from '../support/kubectl.ts';

const dir = mkdtempSync(join(tmpdir(), 'rbac-kubectl-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'jane-token,jane,1\n');
const server = await testServer({ naming: 'kubernetes', authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } });

test('kubectl get clusterroles, create role and rolebinding; the binding grants', async () => {
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name: 'team' } })).status, 201);
  const k = kubectlFor(server, { namespace: 'team', label: 'kubectl-rbac' });
  const roles = await k.ok(['get', 'clusterroles']);
  assert.match(roles, /^NAME\s+CREATED AT\n/);
  assert.match(roles, /\ncluster-admin\s+\d{4}-\d\d-\d\dT/);
  const bindings = await k.ok(['get', 'clusterrolebindings', '-o', 'wide']);
  assert.match(bindings, /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\n/);
  assert.match(bindings, /\ncluster-admin\s+ClusterRole\/cluster-admin\s+\S+\s+system:masters\s/);

  assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/team/configmaps', 'jane-token')).status, 403);
  await k.ok(['create', 'role', 'cm-reader', '--verb=get,list', '--resource=configmaps']);
  await k.ok(['create', 'rolebinding', 'jane-reads', '--role=cm-reader', '--user=jane']);
  const rb = JSON.parse(await k.ok(['get', 'rolebinding', 'jane-reads', '-o', 'json'])) as { roleRef: unknown; subjects: unknown };
  assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' });
  assert.deepEqual(rb.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }]);
  await waitFor('jane may list', async () => (await withToken(server, 'GET', '/api/v1/namespaces/team/configmaps', 'jane-token')).status === 200, 5_000);
  assert.match(await k.ok(['get', 'rolebindings']), /\njane-reads\s+Role\/cm-reader\s/);
});
