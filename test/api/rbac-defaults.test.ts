// The default ClusterRoles against Kubernetes' bootstrap policy (its testdata cluster-roles.yaml),
// restricted to the resources this server serves: the rules of each role are broken down to single
// (group, resource, verb) or (URL, verb) permissions and compared as sets, in the `kubernetes`
// naming profile where the group names are Kubernetes' own. What the server serves is read from its
// discovery, so a kind served later makes its Kubernetes permissions expected. The differences that
// remain are listed here and in docs/rbac.md.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';

const server = await testServer({ naming: 'kubernetes', authorization: { modes: ['RBAC'] } });
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const r = (verbs: string[], group: string, resources: string[]): Rule => ({ apiGroups: [group], resources, verbs });
const urls = (verbs: string[], nonResourceURLs: string[]): Rule => ({ nonResourceURLs, verbs });

// Kubernetes' bootstrap policy, as its testdata cluster-roles.yaml lists it.
const kube: Record<string, Rule[]> = {
  'cluster-admin': [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, urls(['*'], ['*'])],
  'system:discovery': [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])],
  'system:monitoring': [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])],
  'system:public-info-viewer': [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])],
  'system:basic-user': [r(['create'], 'authorization.k8s.io', ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']), r(['create'], 'authentication.k8s.io', ['selfsubjectreviews'])],
  'system:aggregate-to-admin': [r(['create'], 'authorization.k8s.io', ['localsubjectaccessreviews']), r([...WRITE, ...READ], 'rbac.authorization.k8s.io', ['rolebindings', 'roles'])],
  'system:aggregate-to-edit': [
    r(READ, '', ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
    r(['impersonate'], '', ['serviceaccounts']),
    r(WRITE, '', ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
    r(['create'], '', ['pods/eviction']),
    r(WRITE, '', ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
    r(['create'], '', ['serviceaccounts/token']),
    r(WRITE, 'apps', ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
    r(WRITE, 'autoscaling', ['horizontalpodautoscalers']),
    r(WRITE, 'batch', ['cronjobs', 'jobs']),
    r(WRITE, 'extensions', ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'ingresses', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale']),
    r(WRITE, 'policy', ['poddisruptionbudgets']),
    r(WRITE, 'networking.k8s.io', ['ingresses', 'networkpolicies']),
    r([...WRITE, ...READ], 'coordination.k8s.io', ['leases']),
  ],
  'system:aggregate-to-view': [
    r(READ, '', ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status']),
    r(READ, '', ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
    r(READ, '', ['namespaces']),
    r(READ, 'discovery.k8s.io', ['endpointslices']),
    r(READ, 'apps', ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
    r(READ, 'autoscaling', ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
    r(READ, 'batch', ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
    r(READ, 'extensions', ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale']),
    r(READ, 'policy', ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
    r(READ, 'networking.k8s.io', ['ingresses', 'ingresses/status', 'networkpolicies']),
  ],
};
// admin, edit and view aggregate: view ← aggregate-to-view; edit ← aggregate-to-edit and view;
// admin ← aggregate-to-admin and edit.
kube.view = kube['system:aggregate-to-view']!;
kube.edit = [...kube['system:aggregate-to-edit']!, ...kube.view];
kube.admin = [...kube['system:aggregate-to-admin']!, ...kube.edit];

/** Permissions this server grants beyond Kubernetes' (none but these): role → atoms. */
const additions: Record<string, string[]> = {
  // Events of the events group are readable with view (Kubernetes' view reads core events only).
  view: ['events.k8s.io|events|get', 'events.k8s.io|events|list', 'events.k8s.io|events|watch'],
};
additions.edit = additions.view!;
additions.admin = additions.view!;

/** The rules broken down to single permissions: `group|resource|verb[|name]` or `url|verb`. */
function atoms(rules: readonly Rule[]): Set<string> {
  const out = new Set<string>();
  for (const rule of rules) {
    for (const v of rule.verbs) {
      for (const u of rule.nonResourceURLs ?? []) out.add(`${u}|${v}`);
      for (const g of rule.apiGroups ?? [])
        for (const res of rule.resources ?? []) {
          if (rule.resourceNames?.length) for (const n of rule.resourceNames) out.add(`${g}|${res}|${v}|${n}`);
          else out.add(`${g}|${res}|${v}`);
        }
    }
  }
  return out;
}

/** `group|resource` of every resource and subresource the server lists in its discovery. */
async function served(): Promise<Set<string>> {
  const out = new Set<string>();
  const add = (group: string, list: { resources: { name: string }[] }) => {
    for (const res of list.resources) out.add(`${group}|${res.name}`);
  };
  add('', (await api(server, 'GET', '/api/v1')).body);
  for (const g of (await api(server, 'GET', '/apis')).body.groups as { name: string; versions: { groupVersion: string }[] }[])
    for (const v of g.versions) add(g.name, (await api(server, 'GET', `/apis/${v.groupVersion}`)).body);
  // Served, though discovery does not list it yet (kube-apiserver does).
  out.add('|serviceaccounts/token');
  return out;
}

const isServed = (servedSet: Set<string>, atom: string): boolean => {
  const parts = atom.split('|');
  if (parts.length === 2) return true; // a non-resource URL
  return parts[0] === '*' || parts[1] === '*' || servedSet.has(`${parts[0]}|${parts[1]}`);
};

test('the default ClusterRoles hold exactly Kubernetes\' permissions on what this server serves', async () => {
  const servedSet = await served();
  // Aggregation fills admin, edit and view shortly after start.
  await waitFor('aggregated admin', async () => ((await api(server, 'GET', `${RBAC}/clusterroles/admin`)).body.rules ?? []).some((x: Rule) => x.resources?.includes('roles')));
  await waitFor('aggregated edit', async () => ((await api(server, 'GET', `${RBAC}/clusterroles/edit`)).body.rules ?? []).some((x: Rule) => x.resources?.includes('secrets')));
  const differences: Record<string, { missing: string[]; extra: string[] }> = {};
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:monitoring']) {
    const res = await api(server, 'GET', `${RBAC}/clusterroles/${name}`);
    assert.equal(res.status, 200, name);
    const actual = atoms(res.body.rules ?? []);
    const expected = new Set([...atoms(kube[name]!)].filter((a) => isServed(servedSet, a)));
    for (const a of additions[name] ?? []) if (isServed(servedSet, a)) expected.add(a);
    const missing = [...expected].filter((a) => !actual.has(a)).sort();
    const extra = [...actual].filter((a) => !expected.has(a)).sort();
    if (missing.length || extra.length) differences[name] = { missing, extra };
  }
  assert.deepEqual(differences, {});
});

test('what Kubernetes grants there and this server leaves out is only what it does not serve', async () => {
  const servedSet = await served();
  // The filter above must not hide served resources: these are served and in Kubernetes' roles.
  for (const atom of ['|configmaps|create', '|secrets|get', '|serviceaccounts/token|create', '|namespaces/status|get', 'coordination.k8s.io|leases|update', 'rbac.authorization.k8s.io|roles|create', 'authentication.k8s.io|selfsubjectreviews|create'])
    assert.ok(isServed(servedSet, atom), atom);
  // And these are left out because they are not served.
  for (const atom of ['|pods|get', '|services|get', 'apps|deployments|get', 'batch|jobs|get', 'policy|poddisruptionbudgets|get', 'networking.k8s.io|ingresses|get']) assert.ok(!isServed(servedSet, atom), atom);
});
