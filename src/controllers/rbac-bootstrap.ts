// The default roles and bindings (kube's bootstrap policy, for what this server serves), created at
// start with the bootstrapping label and reconciled on every start: missing rules, labels,
// annotations and subjects are added back, a binding whose roleRef differs is made again, and an
// object annotated `rbac.authorization.<domain>/autoupdate: "false"` is left as it is. The server
// is not ready (/readyz: poststarthook/rbac/bootstrap-roles) until this is done.
// docs/rbac.md lists how these differ from Kubernetes' (kinds this server does not serve).

import { matchEverything } from '../machinery/list-options.ts';
import { sameJson, type KObject } from '../machinery/meta.ts';
import type { Naming } from '../naming.ts';
import type { BindingObject, PolicyRule, RoleObject, Subject } from '../registry/kinds/rbac.ts';
import type { RegistryStore } from '../registry/store.ts';
import { storeKey } from './controller.ts';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** The label, annotation and aggregation label keys of the profile. */
export function rbacKeys(n: Naming) {
  const group = n.group('rbac.authorization');
  return {
    group,
    bootstrapping: `${n.labelDomain}/bootstrapping`,
    autoupdate: `rbac.authorization.${n.labelDomain}/autoupdate`,
    aggregateTo: (role: string) => `${group}/aggregate-to-${role}`,
  };
}

/** The default ClusterRoles. */
export function defaultClusterRoles(n: Naming): RoleObject[] {
  const k = rbacKeys(n);
  const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });
  const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });
  const role = (name: string, rules: PolicyRule[], labels: Record<string, string> = {}, aggregate?: string): RoleObject => ({
    apiVersion: `${k.group}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { [k.bootstrapping]: 'rbac-defaults', ...labels }, annotations: { [k.autoupdate]: 'true' } },
    ...(aggregate ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [k.aggregateTo(aggregate)]: 'true' } }] }, rules: [] } : { rules }),
  });
  // A group and, in a profile that spells groups otherwise, its Kubernetes spelling, which kubectl
  // hard-codes for `auth whoami` and `auth can-i` (the review kinds answer there too, unlisted).
  const withKubernetesSpelling = (name: string): string[] => [n.group(name), ...(n.group(name) === `${name}.k8s.io` ? [] : [`${name}.k8s.io`])];
  return [
    role('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    role('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])]),
    role('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
    role('system:basic-user', [
      rule(['create'], withKubernetesSpelling('authentication'), ['selfsubjectreviews']),
      rule(['create'], withKubernetesSpelling('authorization'), ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    ]),
    role('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    role('admin', [], {}, 'admin'),
    role('edit', [], { [k.aggregateTo('admin')]: 'true' }, 'edit'),
    role('view', [], { [k.aggregateTo('edit')]: 'true' }, 'view'),
    role('system:aggregate-to-admin', [rule(['create'], [n.group('authorization')], ['localsubjectaccessreviews']), rule([...READ, ...WRITE], [k.group], ['rolebindings', 'roles'])], {
      [k.aggregateTo('admin')]: 'true',
    }),
    role(
      'system:aggregate-to-edit',
      [
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(WRITE, [''], ['configmaps', 'events', 'secrets', 'serviceaccounts']),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(READ, [''], ['secrets']),
        rule([...WRITE, ...READ], [n.group('coordination')], ['leases']),
      ],
      { [k.aggregateTo('edit')]: 'true' },
    ),
    role(
      'system:aggregate-to-view',
      [rule(READ, [''], ['configmaps', 'serviceaccounts']), rule(READ, [''], ['events', 'namespaces/status']), rule(READ, [''], ['namespaces']), rule(READ, [n.group('events')], ['events'])],
      { [k.aggregateTo('view')]: 'true' },
    ),
  ];
}

/** The default ClusterRoleBindings. */
export function defaultClusterRoleBindings(n: Naming): BindingObject[] {
  const k = rbacKeys(n);
  const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', apiGroup: k.group, name }));
  const binding = (name: string, subjects: Subject[]): BindingObject => ({
    apiVersion: `${k.group}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { [k.bootstrapping]: 'rbac-defaults' }, annotations: { [k.autoupdate]: 'true' } },
    roleRef: { apiGroup: k.group, kind: 'ClusterRole', name },
    subjects,
  });
  return [
    binding('cluster-admin', groups('system:masters')),
    binding('system:discovery', groups('system:authenticated')),
    binding('system:monitoring', groups('system:monitoring')),
    binding('system:basic-user', groups('system:authenticated')),
    binding('system:public-info-viewer', groups('system:authenticated', 'system:unauthenticated')),
  ];
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Whether a rule is one of `rules` (the same lists). */
const holds = (rules: readonly PolicyRule[], r: PolicyRule): boolean => rules.some((x) => sameJson(normal(x), normal(r)));
const normal = (r: PolicyRule) => [strings(r.verbs), strings(r.apiGroups), strings(r.resources), strings(r.resourceNames), strings(r.nonResourceURLs)];

/** Expected labels and annotations added where the object lacks them (the object's own values win). */
function mergeMeta(existing: KObject, expected: KObject): boolean {
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    const want = expected.metadata[field] ?? {};
    const have = (existing.metadata[field] ??= {});
    for (const [key, value] of Object.entries(want))
      if (!(key in have)) {
        have[key] = value;
        changed = true;
      }
  }
  return changed;
}

/** The reconciled role, or undefined when nothing needs to change. */
function reconcileRole(existing: RoleObject, expected: RoleObject): RoleObject | undefined {
  const next = structuredClone(existing);
  let changed = mergeMeta(next, expected);
  if (expected.aggregationRule) {
    // Aggregated roles get their rules from the aggregation controller: only the selectors are reconciled.
    const have = next.aggregationRule?.clusterRoleSelectors ?? [];
    const add = (expected.aggregationRule.clusterRoleSelectors ?? []).filter((s) => !have.some((h) => sameJson(h, s)));
    if (!next.aggregationRule || add.length) {
      next.aggregationRule = { clusterRoleSelectors: [...have, ...add] };
      changed = true;
    }
  } else {
    const rules = Array.isArray(next.rules) ? next.rules : [];
    const missing = (expected.rules ?? []).filter((r) => !holds(rules, r));
    if (missing.length) {
      next.rules = [...rules, ...missing];
      changed = true;
    }
  }
  return changed ? next : undefined;
}

function reconcileBinding(existing: BindingObject, expected: BindingObject): BindingObject | undefined {
  const next = structuredClone(existing);
  let changed = mergeMeta(next, expected);
  const have = Array.isArray(next.subjects) ? next.subjects : [];
  const missing = (expected.subjects ?? []).filter((s) => !have.some((h) => h.kind === s.kind && h.name === s.name && (h.namespace ?? '') === (s.namespace ?? '')));
  if (missing.length) {
    next.subjects = [...have, ...missing];
    changed = true;
  }
  return changed ? next : undefined;
}

const optedOut = (o: KObject, key: string): boolean => o.metadata.annotations?.[key] === 'false';

/** Creates or reconciles every default role and binding; resolves when all are in place. */
export async function ensureRbacDefaults(stores: ReadonlyMap<string, RegistryStore>, n: Naming, log: (message: string) => void): Promise<void> {
  const k = rbacKeys(n);
  const roles = stores.get(storeKey(k.group, 'clusterroles'));
  const bindings = stores.get(storeKey(k.group, 'clusterrolebindings'));
  if (!roles || !bindings) return;
  const opts = { dryRun: false, manager: 'orch-apiserver' };
  // What exists is read with one list of each kind (not a read per object), and every write is
  // issued at once, roles and bindings together, so that they share commits.
  const byName = async (store: RegistryStore) => new Map((await store.list(undefined, matchEverything())).items.map((o) => [o.metadata.name!, o]));
  const [haveRoles, haveBindings] = await Promise.all([byName(roles), byName(bindings)]);
  const roleWrites = defaultClusterRoles(n).map(async (expected) => {
    const name = expected.metadata.name!;
    const existing = haveRoles.get(name) as RoleObject | undefined;
    if (!existing) {
      await roles.create(undefined, expected, opts).catch((e) => log(`rbac/bootstrap-roles: creating clusterrole ${name}: ${(e as Error).message}`));
      return;
    }
    if (optedOut(existing, k.autoupdate)) return;
    const next = reconcileRole(existing, expected);
    if (next) await roles.guaranteedUpdate(undefined, name, () => next, opts).catch((e) => log(`rbac/bootstrap-roles: reconciling clusterrole ${name}: ${(e as Error).message}`));
  });
  const bindingWrites = defaultClusterRoleBindings(n).map(async (expected) => {
    const name = expected.metadata.name!;
    const existing = haveBindings.get(name) as BindingObject | undefined;
    if (existing && optedOut(existing, k.autoupdate)) return;
    if (existing && !sameJson(existing.roleRef ?? null, expected.roleRef)) {
      // roleRef cannot change: the binding is made again.
      await bindings.delete(undefined, name, { dryRun: false }).catch(() => undefined);
    } else if (existing) {
      const next = reconcileBinding(existing, expected);
      if (next) await bindings.guaranteedUpdate(undefined, name, () => next, opts).catch((e) => log(`rbac/bootstrap-roles: reconciling clusterrolebinding ${name}: ${(e as Error).message}`));
      return;
    }
    await bindings.create(undefined, expected, opts).catch((e) => log(`rbac/bootstrap-roles: creating clusterrolebinding ${name}: ${(e as Error).message}`));
  });
  await Promise.all([...roleWrites, ...bindingWrites]);
}
