// RBAC with --authorization-mode=RBAC: the four kinds and their validation, the authorizer (rules
// of cluster role bindings and of the request namespace's role bindings, by user, group and service
// account; wildcards, resourceNames, subresources, non-resource URLs), its 403 Statuses, and
// escalation prevention. Users come from a static token file; the administrator's client
// certificate is in system:masters, which is always allowed.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTrusted, testServer, waitFor } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { startServer } from '../../src/server/server.ts';
import { parseAuthorizationModes } from '../../src/auth/authz/modes.ts';
import { parseArgs } from '../../src/server/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'rbac-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(
  tokenFile,
  ['alice-token,alice,1,"team"', 'bob-token,bob,2', 'robot-token,system:serviceaccount:robots:builder,3', 'root-token,root,4,system:masters', 'carol-token,carol,5', 'dave-token,dave,6'].join('\n') + '\n',
);
const server = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } });
const G = 'rbac.authorization.orch.io';
const RBAC = `/apis/${G}/v1`;

let n = 0;
async function namespace(): Promise<string> {
  const name = `rbac-${++n}`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
  return name;
}

const as = (token: string, method: string, path: string, body?: unknown) => withToken(server, method, path, token, body);
const create = async (path: string, body: unknown) => {
  const r = await api(server, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.body;
};
const user = (name: string) => ({ kind: 'User', apiGroup: G, name });

/** Waits until the token's request gets `status` (the index follows writes through a watch). */
const becomes = (token: string, method: string, path: string, status: number, body?: unknown) =>
  waitFor(`${method} ${path} → ${status}`, async () => (await as(token, method, path, body)).status === status, 5_000);

describe('the kinds', () => {
  test('rules: verbs required, non-resource URLs only on ClusterRole and alone, groups and resources required', async () => {
    const ns = await namespace();
    const r = await api(server, 'POST', `${RBAC}/namespaces/${ns}/roles`, {
      metadata: { name: 'bad' },
      rules: [{ apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }, { verbs: ['get'], resources: ['pods', 'secrets'], resourceNames: ['a'] }, { verbs: ['get'] }],
    });
    assert.equal(r.status, 422);
    assert.deepEqual(
      r.body.details.causes.map((c: { message: string }) => c.message),
      [
        'Required value: verbs must contain at least one value',
        'Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
        'Required value: resource rules must supply at least one api group',
        'Required value: resource names cannot apply to multiple resources',
        'Required value: resource rules must supply at least one api group',
        'Required value: resource rules must supply at least one resource',
      ],
    );
    const mixed = await api(server, 'POST', `${RBAC}/clusterroles`, { metadata: { name: 'mixed' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods'] }] });
    assert.equal(mixed.status, 422);
    assert.match(mixed.body.message, /rules\[0\]\.nonResourceURLs: Invalid value: \[\]string\{"\/x"\}: rules cannot apply to both regular resources and non-resource URLs/);
    assert.equal((await api(server, 'GET', `${RBAC}/clusterroles/mixed`)).status, 404);
    // Names are path segments: a colon is fine (system:…), a slash is not.
    await create(`${RBAC}/clusterroles`, { metadata: { name: 'team:reader' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] });
  });

  test('bindings: subject kinds and groups, roleRef kind and group; defaults; roleRef cannot change', async () => {
    const ns = await namespace();
    const bad = await api(server, 'POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: `bad-${ns}` },
      roleRef: { apiGroup: G, kind: 'Role', name: 'x' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }, { kind: 'Robot', name: 'r' }, { kind: 'User', apiGroup: 'other', name: 'u' }],
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.body.details.causes.map((c: { field: string }) => c.field),
      ['roleRef.kind', 'subjects[0].namespace', 'subjects[1].kind', 'subjects[2].apiGroup'],
    );
    const rb = await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'rb' }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice' }, { kind: 'ServiceAccount', name: 'sa', namespace: ns }] });
    assert.equal(rb.roleRef.apiGroup, G);
    assert.equal(rb.subjects[0].apiGroup, G);
    assert.equal(rb.subjects[1].apiGroup, undefined);
    const changed = await api(server, 'PUT', `${RBAC}/namespaces/${ns}/rolebindings/rb`, { ...rb, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'edit' } });
    assert.equal(changed.status, 422);
    assert.equal(changed.body.details.causes[0].field, 'roleRef');
    assert.equal(changed.body.details.causes[0].message, `Invalid value: rbac.RoleRef{APIGroup:"${G}", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`);
    assert.equal((await api(server, 'GET', `${RBAC}/namespaces/${ns}/rolebindings/rb`)).body.roleRef.name, 'view');
    // The Table kubectl prints: Role, Age, and the subjects with -o wide.
    const table = await api(server, 'GET', `${RBAC}/namespaces/${ns}/rolebindings`, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.orch.io' });
    assert.deepEqual(
      table.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Role', 'Age', 'Users', 'Groups', 'ServiceAccounts'],
    );
    assert.deepEqual([table.body.rows[0].cells[1], table.body.rows[0].cells[3], table.body.rows[0].cells[5]], ['ClusterRole/view', 'alice', `${ns}/sa`]);
  });
});

describe('the authorizer', () => {
  test('a user with no binding is refused with a 403 Status, and a refused write stores nothing', async () => {
    const ns = await namespace();
    const r = await as('bob-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`);
    assert.equal(r.status, 403);
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(r.body.message, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`);
    const w = await as('bob-token', 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } });
    assert.equal(w.status, 403);
    assert.equal((await api(server, 'GET', `/api/v1/namespaces/${ns}/configmaps/x`)).status, 404);
    const path = await as('bob-token', 'GET', '/metrics');
    assert.equal(path.status, 403);
    assert.equal(path.body.message, 'forbidden: User "bob" cannot get path "/metrics"');
  });

  test('a Role bound in one namespace grants there only; user, group and service-account subjects', async () => {
    const ns = await namespace();
    const other = await namespace();
    await create(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'readers' },
      roleRef: { apiGroup: G, kind: 'Role', name: 'cm-reader' },
      subjects: [{ kind: 'Group', apiGroup: G, name: 'team' }, { kind: 'ServiceAccount', name: 'builder', namespace: 'robots' }],
    });
    await becomes('alice-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 200);
    assert.equal((await as('robot-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status, 200);
    assert.equal((await as('bob-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status, 403);
    assert.equal((await as('alice-token', 'GET', `/api/v1/namespaces/${other}/configmaps`)).status, 403);
    assert.equal((await as('alice-token', 'GET', `/api/v1/configmaps`)).status, 403);
    assert.equal((await as('alice-token', 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } })).status, 403);
    // The binding removed, the grant goes.
    assert.equal((await api(server, 'DELETE', `${RBAC}/namespaces/${ns}/rolebindings/readers`)).status, 200);
    await becomes('alice-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 403);
  });

  test("a user's decisions follow every change of the four kinds, however often the same request was decided before", async () => {
    const ns = await namespace();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await create(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'lister' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'dave-lists' }, roleRef: { apiGroup: G, kind: 'Role', name: 'lister' }, subjects: [user('dave')] });
    await becomes('dave-token', 'GET', path, 200);
    for (let i = 0; i < 3; i++) assert.equal((await as('dave-token', 'GET', path)).status, 200);
    // The role loses the verb: refused, though the binding is unchanged.
    const role = await api(server, 'GET', `${RBAC}/namespaces/${ns}/roles/lister`);
    assert.equal((await api(server, 'PUT', `${RBAC}/namespaces/${ns}/roles/lister`, { ...role.body, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] })).status, 200);
    await becomes('dave-token', 'GET', path, 403);
    for (let i = 0; i < 3; i++) assert.equal((await as('dave-token', 'GET', path)).status, 403);
    // A cluster role binding grants it again.
    await create(`${RBAC}/clusterroles`, { metadata: { name: `${ns}-lister` }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: `${ns}-dave` }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `${ns}-lister` }, subjects: [user('dave')] });
    await becomes('dave-token', 'GET', path, 200);
    assert.equal((await api(server, 'DELETE', `${RBAC}/clusterrolebindings/${ns}-dave`)).status, 200);
    await becomes('dave-token', 'GET', path, 403);
  });

  test('resourceNames: get of that name; list and watch only with its metadata.name field selector; never create', async () => {
    const ns = await namespace();
    await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'one' } });
    await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'two' } });
    await create(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'one-only' }, rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'], verbs: ['get', 'list', 'create'] }] });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'b' }, roleRef: { apiGroup: G, kind: 'Role', name: 'one-only' }, subjects: [user('carol')] });
    await becomes('carol-token', 'GET', `/api/v1/namespaces/${ns}/configmaps/one`, 200);
    assert.equal((await as('carol-token', 'GET', `/api/v1/namespaces/${ns}/configmaps/two`)).status, 403);
    assert.equal((await as('carol-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status, 403);
    const listed = await as('carol-token', 'GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=metadata.name%3Done`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
      ['one'],
    );
    const other = await as('carol-token', 'GET', `/api/v1/namespaces/${ns}/configmaps?fieldSelector=metadata.name%3Dtwo`);
    assert.equal(other.status, 403);
    assert.equal(other.body.message, `configmaps "two" is forbidden: User "carol" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`);
    assert.equal((await as('carol-token', 'POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'one' } })).status, 403);
  });

  test('ClusterRoleBindings: wildcards, subresources, non-resource URLs with a * suffix, and a missing role as the reason', async () => {
    const ns = await namespace();
    await create(`${RBAC}/clusterroles`, {
      metadata: { name: `bob-${ns}` },
      rules: [
        { apiGroups: ['*'], resources: ['namespaces/status'], verbs: ['get'] },
        { apiGroups: ['coordination.orch.io'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['/metr*'], verbs: ['get'] },
      ],
    });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: `bob-${ns}` }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `bob-${ns}` }, subjects: [user('bob')] });
    await becomes('bob-token', 'GET', '/metrics', 200);
    assert.equal((await as('bob-token', 'GET', `/api/v1/namespaces/${ns}/status`)).status, 200);
    assert.equal((await as('bob-token', 'GET', `/api/v1/namespaces/${ns}`)).status, 403);
    assert.equal((await as('bob-token', 'POST', `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`, { metadata: { name: 'l' } })).status, 201);
    assert.equal((await as('bob-token', 'GET', '/healthz/ping')).status, 403);
    // A binding of a role that does not exist grants nothing, and says why.
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: `ghost-${ns}` }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `ghost-${ns}` }, subjects: [user('dave')] });
    await waitFor('the reason', async () => ((await as('dave-token', 'GET', '/api/v1/nodes')).body.message ?? '').includes('ghost'), 5_000);
    const r = await as('dave-token', 'GET', '/api/v1/nodes');
    assert.equal(r.status, 403);
    assert.equal(r.body.message, `nodes is forbidden: User "dave" cannot list resource "nodes" in API group "" at the cluster scope: RBAC: clusterrole.${G} "ghost-${ns}" not found`);
  });

  test('system:masters is always allowed', async () => {
    assert.equal((await as('root-token', 'GET', '/api/v1/nodes')).status, 200);
  });
});

describe('escalation prevention', () => {
  test('a role or binding granting more than the writer holds is refused, unless it may escalate or bind', async () => {
    const ns = await namespace();
    // Carol may manage roles and bindings in the namespace and read configmaps, nothing more.
    await create(`${RBAC}/namespaces/${ns}/roles`, {
      metadata: { name: 'manager' },
      rules: [
        { apiGroups: [G], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'get'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      ],
    });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'manager' }, roleRef: { apiGroup: G, kind: 'Role', name: 'manager' }, subjects: [user('carol')] });
    await becomes('carol-token', 'GET', `${RBAC}/namespaces/${ns}/roles/manager`, 200);

    // What she holds she may grant.
    assert.equal((await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'ok' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] })).status, 201);
    // More she may not: kube's message, and nothing stored.
    const more = await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/roles`, {
      metadata: { name: 'more' },
      rules: [
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'delete'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
      ],
    });
    assert.equal(more.status, 403);
    assert.equal(more.body.reason, 'Forbidden');
    assert.equal(
      more.body.message,
      `roles.${G} "more" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}`,
    );
    assert.equal((await api(server, 'GET', `${RBAC}/namespaces/${ns}/roles/more`)).status, 404);

    // A binding of a role with more than she holds is refused too; of one she holds, allowed.
    await create(`${RBAC}/clusterroles`, { metadata: { name: `secrets-${ns}` }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    const bind = { metadata: { name: 'to-bob' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `secrets-${ns}` }, subjects: [user('bob')] };
    const refused = await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, bind);
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, /^rolebindings\.rbac\.authorization\.orch\.io "to-bob" is forbidden: user "carol" .* not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/);
    assert.equal((await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, { ...bind, metadata: { name: 'ok' }, roleRef: { apiGroup: G, kind: 'Role', name: 'ok' } })).status, 201);
    // A binding to a role that does not exist: 404 of the role.
    const ghost = await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, { ...bind, metadata: { name: 'ghost' }, roleRef: { apiGroup: G, kind: 'Role', name: 'ghost' } });
    assert.equal(ghost.status, 404);

    // With `bind` on that ClusterRole, and `escalate` on roles, both go through.
    await create(`${RBAC}/namespaces/${ns}/roles`, {
      metadata: { name: 'powers' },
      rules: [
        { apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: [`secrets-${ns}`] },
        { apiGroups: [G], resources: ['roles'], verbs: ['escalate'] },
      ],
    });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'powers' }, roleRef: { apiGroup: G, kind: 'Role', name: 'powers' }, subjects: [user('carol')] });
    await becomes('carol-token', 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, 201, bind);
    assert.equal((await as('carol-token', 'POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'more' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }] })).status, 201);
  });
});

describe('default roles and aggregation', () => {
  test('the defaults exist with the bootstrapping label; authenticated users may discover, anonymous ones read the public paths', async () => {
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:monitoring']) {
      const r = await api(server, 'GET', `${RBAC}/clusterroles/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.body.metadata.labels['orch.io/bootstrapping'], 'rbac-defaults');
      assert.equal(r.body.metadata.annotations['rbac.authorization.orch.io/autoupdate'], 'true');
    }
    // The server is ready only once they are in place.
    assert.match((await api(server, 'GET', '/readyz?verbose')).text, /\[\+\]poststarthook\/rbac\/bootstrap-roles ok/);
    assert.deepEqual((await api(server, 'GET', `${RBAC}/clusterrolebindings/cluster-admin`)).body.subjects, [{ kind: 'Group', apiGroup: G, name: 'system:masters' }]);
    assert.equal((await as('bob-token', 'GET', '/apis')).status, 200);
    assert.equal((await withToken(server, 'GET', '/version', undefined)).status, 200);
    assert.equal((await withToken(server, 'GET', '/apis', undefined)).status, 403);
    // admin, edit and view are aggregated: admin has the role rules and (through edit) the secrets ones.
    await waitFor('aggregated admin', async () => {
      const rules = (await api(server, 'GET', `${RBAC}/clusterroles/admin`)).body.rules ?? [];
      return rules.some((r: { resources?: string[] }) => r.resources?.includes('roles')) && rules.some((r: { resources?: string[] }) => r.resources?.includes('secrets'));
    });
    // view, bound in a namespace, reads configmaps there but not secrets.
    const ns = await namespace();
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'v' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' }, subjects: [user('bob')] });
    await becomes('bob-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 200);
    assert.equal((await as('bob-token', 'GET', `/api/v1/namespaces/${ns}/secrets`)).status, 403);
  });

  test('an aggregated ClusterRole gets the rules of the roles its selectors match, and hand-written rules are overwritten', async () => {
    const label = `agg-${Date.now()}`;
    await create(`${RBAC}/clusterroles`, { metadata: { name: `${label}-all` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] }] });
    const rulesOf = async () => (await api(server, 'GET', `${RBAC}/clusterroles/${label}-all`)).body.rules ?? [];
    await waitFor('hand-written rules gone', async () => (await rulesOf()).length === 0);
    await create(`${RBAC}/clusterroles`, { metadata: { name: `${label}-b`, labels: { [label]: 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    await create(`${RBAC}/clusterroles`, { metadata: { name: `${label}-a`, labels: { [label]: 'true' } }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    await create(`${RBAC}/clusterroles`, { metadata: { name: `${label}-other` }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    await waitFor('aggregated', async () => (await rulesOf()).length === 2);
    assert.deepEqual(await rulesOf(), [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    assert.equal((await api(server, 'DELETE', `${RBAC}/clusterroles/${label}-a`)).status, 200);
    await waitFor('rules of a deleted role gone', async () => (await rulesOf()).length === 1);
  });

  test('on restart, missing defaults come back, except where autoupdate is "false"', async () => {
    const dataDir = join(dir, 'data');
    let s = await startTrusted({ dataDir, port: 0, log: () => {} });
    const admin = { url: s.url };
    try {
      assert.equal((await api(admin, 'DELETE', `${RBAC}/clusterroles/system:basic-user`)).status, 200);
      const discovery = (await api(admin, 'GET', `${RBAC}/clusterroles/system:discovery`)).body;
      discovery.metadata.annotations['rbac.authorization.orch.io/autoupdate'] = 'false';
      discovery.rules = [{ verbs: ['get'], nonResourceURLs: ['/api'] }];
      assert.equal((await api(admin, 'PUT', `${RBAC}/clusterroles/system:discovery`, discovery)).status, 200);
      const binding = (await api(admin, 'GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)).body;
      binding.subjects = [];
      assert.equal((await api(admin, 'PUT', `${RBAC}/clusterrolebindings/system:public-info-viewer`, binding)).status, 200);
    } finally {
      await s.close();
    }
    s = await startTrusted({ dataDir, port: 0, log: () => {} });
    try {
      const again = { url: s.url };
      assert.equal((await api(again, 'GET', `${RBAC}/clusterroles/system:basic-user`)).status, 200);
      assert.deepEqual((await api(again, 'GET', `${RBAC}/clusterroles/system:discovery`)).body.rules, [{ verbs: ['get'], nonResourceURLs: ['/api'] }]);
      assert.equal((await api(again, 'GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)).body.subjects.length, 2);
    } finally {
      await s.close();
    }
  });
});

describe('modes', () => {
  test('the mode list is checked at start', async () => {
    assert.deepEqual(parseAuthorizationModes(['RBAC', 'AlwaysAllow']), ['RBAC', 'AlwaysAllow']);
    assert.throws(() => parseAuthorizationModes([]), /at least one authorization mode/);
    assert.throws(() => parseAuthorizationModes(['RBAC', 'RBAC']), /RBAC is given more than once/);
    assert.throws(() => parseAuthorizationModes(['Magic']), /unknown authorization mode "Magic"/);
    await assert.rejects(startServer({ authorization: { modes: ['ABAC', 'RBAC'] } }), /authorization-mode ABAC's authorization policy file not passed/);
    const parsed = parseArgs(['--authorization-mode=RBAC,AlwaysDeny']);
    assert.deepEqual(parsed !== 'help' && parsed.authorization, { modes: ['RBAC', 'AlwaysDeny'] });
  });

  test('AlwaysDeny refuses with its reason; a later AlwaysAllow still allows; system:masters always passes', async () => {
    const deny = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['AlwaysDeny'] } });
    const r = await withToken(deny, 'GET', '/api/v1/nodes', 'bob-token');
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope: Everything is forbidden.');
    assert.equal((await withToken(deny, 'GET', '/api/v1/nodes', 'root-token')).status, 200);
    const chain = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['AlwaysDeny', 'AlwaysAllow'] } });
    assert.equal((await withToken(chain, 'GET', '/api/v1/nodes', 'bob-token')).status, 200);
  });
});
