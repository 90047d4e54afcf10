// RBAC beyond the basics, through HTTPS with users from a static token file: watches keep the
// authorization they started with; a user limited to named objects lists and watches only with the
// metadata.name field selector (in both naming profiles); the subresource forms of rules against
// the subresources this server serves; non-resource URLs with a `*` suffix; bindings of a
// ClusterRole by a RoleBinding; the immutable roleRef; aggregation rules needing full rights; and
// escalation messages word for word as kube-apiserver writes them.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '../../src/server/server.ts';
import { api, testServer, waitFor } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { httpsRequest } from '../support/https.ts';
import { tlsFor } from '../support/tls-clients.ts';

const dir = mkdtempSync(join(tmpdir(), 'rbac-rest-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,1', 'bob-token,bob,2,"team"', 'carol-token,carol,3', 'dave-token,dave,4', 'erin-token,erin,5'].join('\n') + '\n');

const orch = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } });
const kube = await testServer({ naming: 'kubernetes', authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['RBAC'] } });

/** What differs between the two naming profiles' paths. */
const profiles = [
  { name: 'orch', server: orch, rbac: 'rbac.authorization.orch.io', coordination: 'coordination.orch.io' },
  { name: 'kubernetes', server: kube, rbac: 'rbac.authorization.k8s.io', coordination: 'coordination.k8s.io' },
];
const G = profiles[0].rbac;
const RBAC = `/apis/${G}/v1`;

let n = 0;
async function namespace(server: RunningServer = orch): Promise<string> {
  const name = `rr-${++n}`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
  return name;
}
const create = async (path: string, body: unknown, server: RunningServer = orch) => {
  const r = await api(server, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.body;
};
const as = (token: string, method: string, path: string, body?: unknown, server: RunningServer = orch) => withToken(server, method, path, token, body);
const becomes = (token: string, method: string, path: string, status: number, server: RunningServer = orch) =>
  waitFor(`${method} ${path} → ${status}`, async () => (await as(token, method, path, undefined, server)).status === status, 5_000);
const user = (name: string, group = G) => ({ kind: 'User', apiGroup: group, name });

/** A watch as the token's user (no client certificate): its status, then its events as they come. */
function watchAs(server: RunningServer, token: string, path: string) {
  const events: { type: string; object: { metadata?: { name?: string }; message?: string } }[] = [];
  let ended = false;
  let close = () => {};
  const status = new Promise<number>((resolve, reject) => {
    const req = request(server.url + path, { ca: server.ca ?? tlsFor(server.url)?.ca, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      resolve(res.statusCode ?? 0);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) events.push(JSON.parse(line));
        }
      });
      res.on('end', () => {
        if (buf.trim()) events.push(JSON.parse(buf));
        ended = true;
      });
      res.on('error', () => (ended = true));
    });
    req.on('error', (e) => (ended ? undefined : reject(e)));
    close = () => req.destroy();
    req.end();
  });
  return { status, events, isEnded: () => ended, close: () => close() };
}

describe('watch and list under RBAC', () => {
  test('a watch stays open and keeps delivering after its user loses the role that allowed it', async () => {
    const ns = await namespace();
    await create(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'watcher' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'get'] }] });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'watcher' }, roleRef: { apiGroup: G, kind: 'Role', name: 'watcher' }, subjects: [user('alice')] });
    await becomes('alice-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 200);
    const w = watchAs(orch, 'alice-token', `/api/v1/namespaces/${ns}/configmaps?watch=true`);
    try {
      assert.equal(await w.status, 200);
      await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } });
      await waitFor('the first event', () => w.events.length === 1, 5_000);
      assert.equal((await api(orch, 'DELETE', `${RBAC}/namespaces/${ns}/rolebindings/watcher`)).status, 200);
      await becomes('alice-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 403);
      // Refused now for a new request, the open watch goes on as kube-apiserver's does.
      assert.equal((await watchAs(orch, 'alice-token', `/api/v1/namespaces/${ns}/configmaps?watch=true`).status), 403);
      await create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'after' } });
      await waitFor('the event after the grant went', () => w.events.length === 2, 5_000);
      assert.deepEqual(
        w.events.map((e) => [e.type, e.object.metadata?.name]),
        [
          ['ADDED', 'before'],
          ['ADDED', 'after'],
        ],
      );
      assert.equal(w.isEnded(), false);
    } finally {
      w.close();
    }
  });

  for (const p of profiles) {
    test(`only named objects: list and watch need the metadata.name field selector (${p.name} profile)`, async () => {
      const ns = await namespace(p.server);
      const leases = `/apis/${p.coordination}/v1/namespaces/${ns}/leases`;
      const rbac = `/apis/${p.rbac}/v1`;
      for (const name of ['one', 'two']) await create(leases, { metadata: { name } }, p.server);
      await create(`${rbac}/namespaces/${ns}/roles`, { metadata: { name: 'one' }, rules: [{ apiGroups: [p.coordination], resources: ['leases'], resourceNames: ['one'], verbs: ['get', 'list', 'watch'] }] }, p.server);
      await create(`${rbac}/namespaces/${ns}/rolebindings`, { metadata: { name: 'one' }, roleRef: { apiGroup: p.rbac, kind: 'Role', name: 'one' }, subjects: [user('carol', p.rbac)] }, p.server);
      await becomes('carol-token', 'GET', `${leases}/one`, 200, p.server);

      // Without the selector (or with another name): refused, list and watch alike.
      const list = await as('carol-token', 'GET', leases, undefined, p.server);
      assert.equal(list.status, 403);
      assert.equal(list.body.message, `leases.${p.coordination} is forbidden: User "carol" cannot list resource "leases" in API group "${p.coordination}" in the namespace "${ns}"`);
      const watch = await as('carol-token', 'GET', `${leases}?watch=true`, undefined, p.server);
      assert.equal(watch.status, 403);
      assert.equal(watch.body.message, `leases.${p.coordination} is forbidden: User "carol" cannot watch resource "leases" in API group "${p.coordination}" in the namespace "${ns}"`);
      const two = await as('carol-token', 'GET', `${leases}?watch=true&fieldSelector=metadata.name%3Dtwo`, undefined, p.server);
      assert.equal(two.status, 403);
      assert.equal(two.body.message, `leases.${p.coordination} "two" is forbidden: User "carol" cannot watch resource "leases" in API group "${p.coordination}" in the namespace "${ns}"`);

      // With it: the list has that object only, and the watch sees it and nothing else.
      const listed = await as('carol-token', 'GET', `${leases}?fieldSelector=metadata.name%3Done`, undefined, p.server);
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
        ['one'],
      );
      const w = watchAs(p.server, 'carol-token', `${leases}?watch=true&fieldSelector=metadata.name%3Done&resourceVersion=${listed.body.metadata.resourceVersion}`);
      try {
        assert.equal(await w.status, 200);
        const patch = { metadata: { labels: { touched: 'yes' } } };
        for (const name of ['two', 'one']) {
          const r = await api(p.server, 'PATCH', `${leases}/${name}`, patch, { 'Content-Type': 'application/merge-patch+json' });
          assert.equal(r.status, 200, r.text);
        }
        await waitFor('the event of "one"', () => w.events.length >= 1, 5_000);
        assert.deepEqual(
          w.events.map((e) => [e.type, e.object.metadata?.name]),
          [['MODIFIED', 'one']],
        );
      } finally {
        w.close();
      }
    });
  }
});

describe('rule forms', () => {
  test('subresources: <resource>/<sub> and */<sub> grant the subresource only; <resource>/* is no wildcard', async () => {
    const ns = await namespace();
    const node = `rr-node-${ns}`;
    await create('/api/v1/nodes', { metadata: { name: node } });
    await create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'sa' } });
    await create(`${RBAC}/clusterroles`, {
      metadata: { name: `subs-${ns}` },
      rules: [
        { apiGroups: [''], resources: ['*/status'], verbs: ['get'] },
        { apiGroups: [''], resources: ['namespaces/finalize'], verbs: ['update'] },
        { apiGroups: [''], resources: ['namespaces/*'], verbs: ['patch'] },
        { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      ],
    });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: `subs-${ns}` }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `subs-${ns}` }, subjects: [user('dave')] });
    await becomes('dave-token', 'GET', `/api/v1/namespaces/${ns}/status`, 200);
    // */status: the status of every kind, but not the objects themselves.
    assert.equal((await as('dave-token', 'GET', `/api/v1/nodes/${node}/status`)).status, 200);
    assert.equal((await as('dave-token', 'GET', `/api/v1/nodes/${node}`)).status, 403);
    assert.equal((await as('dave-token', 'GET', `/api/v1/namespaces/${ns}`)).status, 403);
    // namespaces/finalize: update there, and nowhere else.
    const current = (await api(orch, 'GET', `/api/v1/namespaces/${ns}`)).body;
    assert.equal((await as('dave-token', 'PUT', `/api/v1/namespaces/${ns}/finalize`, current)).status, 200);
    const status = await as('dave-token', 'PUT', `/api/v1/namespaces/${ns}/status`, current);
    assert.equal(status.status, 403);
    assert.equal(status.body.message, `namespaces "${ns}" is forbidden: User "dave" cannot update resource "namespaces/status" in API group "" in the namespace "${ns}"`);
    // namespaces/* is matched as written, like kube's: no subresource is granted by it.
    const patched = await as('dave-token', 'PATCH', `/api/v1/namespaces/${ns}/status`, {});
    assert.equal(patched.status, 403);
    // serviceaccounts/token: a token, but not the service account.
    const token = await as('dave-token', 'POST', `/api/v1/namespaces/${ns}/serviceaccounts/sa/token`, { spec: {} });
    assert.equal(token.status, 201, JSON.stringify(token.body));
    assert.equal((await as('dave-token', 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/sa`)).status, 403);
  });

  test('non-resource URLs: a * suffix is a prefix match; an exact URL matches only itself', async () => {
    await create(`${RBAC}/clusterroles`, { metadata: { name: 'rr-urls' }, rules: [{ nonResourceURLs: ['/metrics/*', '/logs'], verbs: ['get'] }] });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: 'rr-urls' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'rr-urls' }, subjects: [user('erin')] });
    // Allowed means past authorization: served (200) or not (404), never 403.
    await waitFor('the grant', async () => (await as('erin-token', 'GET', '/metrics/slis')).status !== 403, 5_000);
    assert.notEqual((await as('erin-token', 'GET', '/metrics/a/b')).status, 403);
    assert.notEqual((await as('erin-token', 'GET', '/logs')).status, 403);
    const bare = await as('erin-token', 'GET', '/metrics');
    assert.equal(bare.status, 403);
    assert.equal(bare.body.message, 'forbidden: User "erin" cannot get path "/metrics"');
    assert.equal((await as('erin-token', 'GET', '/logs/x')).status, 403);
    // Only the verb granted: a POST to a matching path is refused.
    assert.equal((await as('erin-token', 'POST', '/metrics/slis', {})).status, 403);
  });

  test('a RoleBinding to a ClusterRole grants its rules in the binding namespace only', async () => {
    const ns = await namespace();
    const other = await namespace();
    await create(`${RBAC}/clusterroles`, { metadata: { name: `cm-${ns}` }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] });
    await create(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'cm' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: `cm-${ns}` }, subjects: [{ kind: 'Group', apiGroup: G, name: 'team' }] });
    await becomes('bob-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`, 200);
    assert.equal((await as('bob-token', 'GET', `/api/v1/namespaces/${other}/configmaps`)).status, 403);
    const all = await as('bob-token', 'GET', '/api/v1/configmaps');
    assert.equal(all.status, 403);
    assert.equal(all.body.message, 'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" at the cluster scope');
  });

  test('roleRef cannot change, by update or by patch, on either binding kind; nothing is stored', async () => {
    const name = `rr-crb-${++n}`;
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'view' }, subjects: [user('nobody')] });
    const patched = await api(orch, 'PATCH', `${RBAC}/clusterrolebindings/${name}`, { roleRef: { name: 'edit' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 422);
    assert.equal(patched.body.reason, 'Invalid');
    assert.equal(patched.body.message, `ClusterRoleBinding.${G} "${name}" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"${G}", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`);
    assert.equal((await api(orch, 'GET', `${RBAC}/clusterrolebindings/${name}`)).body.roleRef.name, 'view');
  });
});

describe('escalation', () => {
  /** Erin may write cluster roles and read configmaps; nothing else, and one of her bindings names a missing role. */
  const erinMayWriteRoles = async () => {
    await create(`${RBAC}/clusterroles`, {
      metadata: { name: 'rr-role-writer' },
      rules: [
        { apiGroups: [G], resources: ['clusterroles', 'roles'], verbs: ['create', 'update', 'patch', 'get'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      ],
    });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: 'rr-role-writer' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'rr-role-writer' }, subjects: [user('erin')] });
    await becomes('erin-token', 'GET', `${RBAC}/clusterroles/rr-role-writer`, 200);
  };
  const ready = erinMayWriteRoles();

  test('the refusal lists the missing rules compacted (names and URLs included) and the resolution errors, as kube writes them', async () => {
    await ready;
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: 'rr-ghost' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'rr-ghost' }, subjects: [user('erin')] });
    await waitFor('the ghost binding seen', async () => ((await as('erin-token', 'GET', '/api/v1/nodes')).body.message ?? '').includes('rr-ghost'), 5_000);
    const r = await as('erin-token', 'POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'rr-more' },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'], resourceNames: ['a'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['delete'] },
        { nonResourceURLs: ['/metrics'], verbs: ['get'] },
      ],
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(
      r.body.message,
      `clusterroles.${G} "rr-more" is forbidden: user "erin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
        '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["list" "watch"]}\n' +
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}' +
        `; resolution errors: [clusterrole.${G} "rr-ghost" not found]`,
    );
    assert.equal((await api(orch, 'GET', `${RBAC}/clusterroles/rr-more`)).status, 404);
    assert.equal((await api(orch, 'DELETE', `${RBAC}/clusterrolebindings/rr-ghost`)).status, 200);
  });

  test('an aggregation rule needs every permission: to set it, to change a role that has one, and to drop it', async () => {
    await ready;
    const agg = { metadata: { name: 'rr-agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rr-agg': 'true' } }] } };
    const refused = await as('erin-token', 'POST', `${RBAC}/clusterroles`, agg);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, `clusterroles.${G} "rr-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
    assert.equal((await api(orch, 'GET', `${RBAC}/clusterroles/rr-agg`)).status, 404);
    // An empty selector list is no aggregation rule.
    assert.equal((await as('erin-token', 'POST', `${RBAC}/clusterroles`, { metadata: { name: 'rr-agg-empty' }, aggregationRule: { clusterRoleSelectors: [] } })).status, 201);

    // The administrator makes it; erin may neither relabel it nor take its rule away.
    await create(`${RBAC}/clusterroles`, agg);
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const labelled = await withTokenPatch('erin-token', `${RBAC}/clusterroles/rr-agg`, { metadata: { labels: { x: 'y' } } }, merge);
    assert.equal(labelled.status, 403);
    const dropped = await withTokenPatch('erin-token', `${RBAC}/clusterroles/rr-agg`, { aggregationRule: null }, merge);
    assert.equal(dropped.status, 403);
    assert.equal(dropped.body.message, `clusterroles.${G} "rr-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
    assert.ok((await api(orch, 'GET', `${RBAC}/clusterroles/rr-agg`)).body.aggregationRule);

    // With `escalate` on cluster roles she may.
    await create(`${RBAC}/clusterroles`, { metadata: { name: 'rr-escalate' }, rules: [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['escalate'] }] });
    await create(`${RBAC}/clusterrolebindings`, { metadata: { name: 'rr-escalate' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'rr-escalate' }, subjects: [user('erin')] });
    await waitFor('escalate granted', async () => (await withTokenPatch('erin-token', `${RBAC}/clusterroles/rr-agg`, { aggregationRule: null }, merge)).status === 200, 5_000);
    assert.equal((await api(orch, 'GET', `${RBAC}/clusterroles/rr-agg`)).body.aggregationRule, undefined);
  });
});

/** A PATCH with a bearer token and a patch content type. */
function withTokenPatch(token: string, path: string, body: unknown, headers: Record<string, string>) {
  return httpsRequest({ url: orch.url, ca: orch.ca ?? tlsFor(orch.url)?.ca }, 'PATCH', path, { Authorization: `Bearer ${token}`, ...headers }, body);
}
