// kubectl against the access reviews and the RBAC kinds, with RBAC on and users from a static token
// file. `kubectl auth can-i` (a matrix of users, verbs and resources; --list; --as and --as-group)
// in both naming profiles with kubectl 1.20 and the newest: kubectl hard-codes
// authorization.k8s.io, which the orch profile answers too. `kubectl create role/clusterrole/
// rolebinding/clusterrolebinding` (with --aggregation-rule) and `kubectl auth reconcile`
// (--remove-extra-permissions / --remove-extra-subjects) in the kubernetes profile, whose RBAC
// group they hard-code; escalation through kubectl refused with Kubernetes' message.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, testServer, waitFor } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { kubectl120, kubectlFor, newestKubectl, tableRows, type Kubectl } from '../support/kubectl.ts';
import type { RunningServer } from '../../src/server/options.ts';

const dir = mkdtempSync(join(tmpdir(), 'access-reviews-kubectl-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,1,"team"', 'bob-token,bob,2', 'erin-token,erin,3'].join('\n') + '\n');
const caFile = join(dir, 'ca.crt');

const servers = {
  orch: await testServer({ naming: 'orch', authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } }),
  kubernetes: await testServer({ naming: 'kubernetes', authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } }),
};

/** Group `team` may read configmaps in namespace `work` of `s`. */
async function setUp(s: RunningServer, rbacGroup: string): Promise<void> {
  const RBAC = `/apis/${rbacGroup}/v1`;
  const ok = async (path: string, body: unknown) => {
    const r = await api(s, 'POST', path, body);
    assert.equal(r.status, 201, r.text);
  };
  await ok('/api/v1/namespaces', { metadata: { name: 'work' } });
  await ok(`${RBAC}/namespaces/work/roles`, { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] });
  await ok(`${RBAC}/namespaces/work/rolebindings`, { metadata: { name: 'team-reads' }, roleRef: { apiGroup: rbacGroup, kind: 'Role', name: 'cm-reader' }, subjects: [{ kind: 'Group', apiGroup: rbacGroup, name: 'team' }] });
  await waitFor('alice may read configmaps', async () => (await withToken(s, 'GET', '/api/v1/namespaces/work/configmaps', 'alice-token')).status === 200, 5_000);
}
await setUp(servers.orch, 'rbac.authorization.orch.io');
await setUp(servers.kubernetes, 'rbac.authorization.k8s.io');
writeFileSync(caFile, servers.orch.ca!);
const kubernetesCa = join(dir, 'kubernetes-ca.crt');
writeFileSync(kubernetesCa, servers.kubernetes.ca!);

/** Arguments that make kubectl the token's user instead of the administrator. */
const asToken = (s: RunningServer, token: string) => ['--certificate-authority', s === servers.orch ? caFile : kubernetesCa, '--token', token];

const bins = [
  ['kubectl 1.20', kubectl120()],
  ['the newest kubectl', newestKubectl()],
] as const;

for (const [label, bin] of bins) {
  for (const naming of ['orch', 'kubernetes'] as const) {
    describe(`kubectl auth can-i, ${label}, ${naming} profile`, () => {
      const s = servers[naming];
      const admin = kubectlFor(s, { bin, namespace: 'work', label: `can-i-${naming}` });
      const user = kubectlFor(s, { bin, namespace: 'work', label: `can-i-user-${naming}`, anonymous: true });

      test('yes and no for users × verbs × resources, with exit codes 0 and 1', async () => {
        const matrix: [string | undefined, string, string, boolean][] = [];
        for (const [token, may] of [
          [undefined, (_v: string, _r: string) => true],
          ['alice-token', (v: string, r: string) => r === 'configmaps' && (v === 'get' || v === 'list')],
          ['bob-token', () => false],
        ] as const)
          for (const [verb, resource] of [['list', 'configmaps'], ['delete', 'configmaps'], ['get', 'secrets']]) matrix.push([token, verb!, resource!, may(verb!, resource!)]);
        await Promise.all(
          matrix.map(async ([token, verb, resource, yes]) => {
            const k: Kubectl = token ? user : admin;
            const r = await k.run([...(token ? asToken(s, token) : []), 'auth', 'can-i', verb, resource]);
            const who = `${token ?? 'admin'} ${verb} ${resource}`;
            assert.equal(r.code, yes ? 0 : 1, `${who}: ${r.stdout}${r.stderr}`);
            assert.equal(r.stdout, yes ? 'yes\n' : 'no\n', `${who}: ${r.stderr}`);
          }),
        );
      });

      test('--as and --as-group ask as the impersonated user', async () => {
        const [bob, team, teamDelete] = await Promise.all([
          admin.run(['auth', 'can-i', 'list', 'configmaps', '--as', 'bob']),
          admin.run(['auth', 'can-i', 'list', 'configmaps', '--as', 'bob', '--as-group', 'team']),
          admin.run(['auth', 'can-i', 'delete', 'configmaps', '--as', 'bob', '--as-group', 'team']),
        ]);
        assert.deepEqual([bob.code, bob.stdout], [1, 'no\n'], bob.stderr);
        assert.deepEqual([team.code, team.stdout], [0, 'yes\n'], team.stderr);
        assert.equal(teamDelete.code, 1);
      });

      test('--list shows the rules of the namespace (SelfSubjectRulesReview)', async () => {
        const [out, other] = await Promise.all([user.ok([...asToken(s, 'alice-token'), 'auth', 'can-i', '--list']), user.ok([...asToken(s, 'alice-token'), 'auth', 'can-i', '--list', '-n', 'default'])]);
        const rows = tableRows(out);
        assert.deepEqual(rows[0], ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
        assert.ok(rows.some((r) => r[0] === 'configmaps' && r[3] === '[get list]'), out);
        assert.ok(rows.some((r) => r[0]!.startsWith('selfsubjectaccessreviews.authorization.') && r[3] === '[create]'), out);
        // Non-resource rows have an empty first column.
        assert.match(out, /\n\s+\[\/version\]\s+\[\]\s+\[get\]\n/);
        assert.ok(!/\nconfigmaps\s/.test(other), other);
      });
    });
  }
}

describe('kubectl create and reconcile of RBAC objects, kubernetes profile', () => {
  const s = servers.kubernetes;
  const k = kubectlFor(s, { namespace: 'work', label: 'rbac-create' });
  const user = kubectlFor(s, { namespace: 'work', label: 'rbac-create-user', anonymous: true });

  test('create clusterrole (with --aggregation-rule), clusterrolebinding, role and rolebinding', async () => {
    await k.ok(['create', 'clusterrole', 'lease-reader', '--verb=get,list', '--resource=leases.coordination.k8s.io', '--resource-name=a']);
    const role = JSON.parse(await k.ok(['get', 'clusterrole', 'lease-reader', '-o', 'json']));
    assert.deepEqual(role.rules, [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['a'], verbs: ['get', 'list'] }]);
    await k.ok(['create', 'clusterrole', 'monitoring', '--aggregation-rule=example.com/aggregate-to-monitoring=true']);
    await k.ok(['create', 'clusterrole', 'metrics-part', '--verb=get', '--non-resource-url=/metrics']);
    await k.ok(['label', 'clusterrole', 'metrics-part', 'example.com/aggregate-to-monitoring=true']);
    await waitFor(
      'the aggregated rules',
      async () => JSON.stringify(JSON.parse(await k.ok(['get', 'clusterrole', 'monitoring', '-o', 'json'])).rules ?? []) === JSON.stringify([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]),
      5_000,
    );
    await k.ok(['create', 'clusterrolebinding', 'erin-monitors', '--clusterrole=monitoring', '--user=erin']);
    const binding = JSON.parse(await k.ok(['get', 'clusterrolebinding', 'erin-monitors', '-o', 'json']));
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'monitoring' });
    await waitFor('erin may read /metrics', async () => (await user.run([...asToken(s, 'erin-token'), 'auth', 'can-i', 'get', '/metrics'])).stdout === 'yes\n', 5_000);
    await k.ok(['create', 'role', 'sa-reader', '--verb=get', '--resource=serviceaccounts']);
    await k.ok(['create', 'rolebinding', 'erin-sa', '--role=sa-reader', '--user=erin', '--serviceaccount=work:builder']);
    await k.ok(['create', 'rolebinding', 'erin-view', '--clusterrole=view', '--group=viewers']);
    const rb = JSON.parse(await k.ok(['get', 'rolebinding', 'erin-sa', '-o', 'json']));
    assert.deepEqual(rb.subjects, [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'erin' },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'work' },
    ]);
    await waitFor('erin may get service accounts', async () => (await user.run([...asToken(s, 'erin-token'), 'auth', 'can-i', 'get', 'serviceaccounts'])).stdout === 'yes\n', 5_000);
  });

  test('auth reconcile creates, then keeps or removes extra permissions and subjects', async () => {
    const manifest = (rules: string, subjects: string) =>
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: Role',
        'metadata: {name: reconciled, namespace: work}',
        `rules: ${rules}`,
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: RoleBinding',
        'metadata: {name: reconciled, namespace: work}',
        'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reconciled}',
        `subjects: ${subjects}`,
        '',
      ].join('\n');
    const full = k.file('full.yaml', manifest('[{apiGroups: [""], resources: [configmaps], verbs: [get]}, {apiGroups: [""], resources: [secrets], verbs: [get]}]', '[{kind: User, apiGroup: rbac.authorization.k8s.io, name: erin}, {kind: User, apiGroup: rbac.authorization.k8s.io, name: bob}]'));
    const out = await k.ok(['auth', 'reconcile', '-f', full]);
    assert.match(out, /role\.rbac\.authorization\.k8s\.io\/reconciled reconciled/);
    assert.match(out, /rolebinding\.rbac\.authorization\.k8s\.io\/reconciled reconciled/);
    const rules = async () => JSON.parse(await k.ok(['get', 'role', 'reconciled', '-o', 'json'])).rules.map((r: { resources: string[] }) => r.resources[0]);
    const subjects = async () => JSON.parse(await k.ok(['get', 'rolebinding', 'reconciled', '-o', 'json'])).subjects.map((x: { name: string }) => x.name);
    assert.deepEqual(await rules(), ['configmaps', 'secrets']);
    const smaller = k.file('smaller.yaml', manifest('[{apiGroups: [""], resources: [configmaps], verbs: [get]}]', '[{kind: User, apiGroup: rbac.authorization.k8s.io, name: erin}]'));
    await k.ok(['auth', 'reconcile', '-f', smaller]);
    assert.deepEqual(await rules(), ['configmaps', 'secrets']);
    assert.deepEqual(await subjects(), ['erin', 'bob']);
    await k.ok(['auth', 'reconcile', '-f', smaller, '--remove-extra-permissions', '--remove-extra-subjects']);
    assert.deepEqual(await rules(), ['configmaps']);
    assert.deepEqual(await subjects(), ['erin']);
  });

  test('escalation through kubectl is refused with Kubernetes’ message', async () => {
    // alice administers namespace `work`: she may write roles and bindings there, within her rights.
    await k.ok(['create', 'rolebinding', 'alice-admin', '--clusterrole=admin', '--user=alice']);
    await waitFor('alice may create roles', async () => (await user.run([...asToken(s, 'alice-token'), 'auth', 'can-i', 'create', 'roles'])).stdout === 'yes\n', 5_000);
    await user.ok([...asToken(s, 'alice-token'), 'create', 'role', 'modest', '--verb=get', '--resource=configmaps']);
    const role = await user.fails([...asToken(s, 'alice-token'), 'create', 'role', 'greedy', '--verb=get', '--resource=nodes']);
    assert.equal(
      role.stderr.trim(),
      'Error from server (Forbidden): roles.rbac.authorization.k8s.io "greedy" is forbidden: user "alice" (groups=["team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}',
    );
    const binding = await user.fails([...asToken(s, 'alice-token'), 'create', 'rolebinding', 'grab', '--clusterrole=cluster-admin', '--user=alice']);
    assert.match(binding.stderr, /rolebindings\.rbac\.authorization\.k8s\.io "grab" is forbidden: user "alice" \(groups=\["team" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/);
    assert.equal((await api(s, 'GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/work/roles/greedy')).status, 404);
    assert.equal((await api(s, 'GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/work/rolebindings/grab')).status, 404);
  });
});
