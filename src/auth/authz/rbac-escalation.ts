// Escalation prevention, as kube-apiserver's RBAC storage does it: a user may write a role only
// when they already hold every rule it grants (at its scope) or may `escalate` on it, and a binding
// only when they hold every rule of the role it references or may `bind` that role. The `escalate`
// and `bind` checks go through the server's authorizer, so any mode answers them (with AlwaysAllow
// nothing is refused); members of system:masters are never refused.

import { errors } from '../../machinery/status.ts';
import { sameJson, type KObject } from '../../machinery/meta.ts';
import type { BindingObject, PolicyRule, RbacWriteGuard, RoleObject } from '../../registry/kinds/rbac.ts';
import type { UserInfo } from '../../request/user.ts';
import { goQuote } from '../../ssa/value.ts';
import { resourceAttributes, type Authorizer } from './authorizer.ts';
import { PRIVILEGED_GROUP, type RbacIndex } from './rbac.ts';

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const has = (set: readonly string[], v: string): boolean => set.includes(v);
const hasAll = (set: readonly string[], want: readonly string[]): boolean => want.every((w) => set.includes(w));

/** BreakdownRule: one rule per group, resource, verb (and name), or per URL and verb. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = strings(rule.verbs);
  const names = strings(rule.resourceNames);
  for (const g of strings(rule.apiGroups))
    for (const r of strings(rule.resources))
      for (const v of verbs) {
        if (names.length) for (const n of names) out.push({ apiGroups: [g], resources: [r], verbs: [v], resourceNames: [n] });
        else out.push({ apiGroups: [g], resources: [r], verbs: [v] });
      }
  for (const u of strings(rule.nonResourceURLs)) for (const v of verbs) out.push({ nonResourceURLs: [u], verbs: [v] });
  return out;
}

function resourcesCover(owned: readonly string[], wanted: readonly string[]): boolean {
  if (has(owned, '*') || hasAll(owned, wanted)) return true;
  return wanted.every((path) => has(owned, path) || (path.includes('/') && has(owned, `*/${path.slice(path.indexOf('/') + 1)}`)));
}

const urlCovers = (owned: string, wanted: string): boolean => owned === wanted || (owned.endsWith('*') && wanted.startsWith(owned.replace(/\*+$/, '')));

/** ruleCovers: whether one held rule covers one broken-down rule. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ov = strings(owner.verbs);
  const og = strings(owner.apiGroups);
  const on = strings(owner.resourceNames);
  const sn = strings(sub.resourceNames);
  return (
    (has(ov, '*') || hasAll(ov, strings(sub.verbs))) &&
    (has(og, '*') || hasAll(og, strings(sub.apiGroups))) &&
    resourcesCover(strings(owner.resources), strings(sub.resources)) &&
    strings(sub.nonResourceURLs).every((u) => strings(owner.nonResourceURLs).some((o) => urlCovers(o, u))) &&
    (sn.length === 0 ? on.length === 0 : on.length === 0 || hasAll(on, sn))
  );
}

/** Covers: the broken-down rules of `wanted` that no rule of `owned` covers. */
export function uncovered(owned: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of wanted) for (const sub of breakdown(rule)) if (!owned.some((o) => ruleCovers(o, sub))) missing.push(sub);
  return missing;
}

/**
 * CompactRules: simple rules (one group, one resource, at most one name, nothing else) of the same
 * group, resource and name merged into one with all their verbs, in order.
 */
function compact(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const names = r.resourceNames ?? [];
    const isSimple = r.apiGroups?.length === 1 && r.resources?.length === 1 && names.length <= 1 && !r.nonResourceURLs?.length;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], names.length ? names[0] : null]);
    const held = simple.get(key);
    if (!held) {
      const copy = { ...r, verbs: [...strings(r.verbs)] };
      simple.set(key, copy);
      out.push(copy);
    } else held.verbs!.push(...strings(r.verbs));
  }
  return out;
}

/** Go's `%q` of a []string: `["a" "b"]`. */
const goList = (v: readonly string[]): string => `[${v.map(goQuote).join(' ')}]`;

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goList(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Go's byte-wise string order (sets.String.List). */
const goSort = (a: string, b: string): number => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.from(a) > Buffer.from(b) ? 1 : 0);

/** The late-bound parts: the server's authorizer and the RBAC index (absent without RBAC: the user holds no rule). */
interface GuardParts {
  authorizer: Authorizer;
  index?: RbacIndex;
}

/** Whether the update changes only what the garbage collector changes (owner references, finalizers). */
function onlyGcFields(o: KObject, old: KObject | undefined, fields: readonly string[]): boolean {
  if (!old) return false;
  const pick = (x: KObject) => {
    const rec = x as unknown as Record<string, unknown>;
    return [x.metadata.labels ?? {}, x.metadata.annotations ?? {}, ...fields.map((f) => rec[f] ?? null)];
  };
  return sameJson(pick(o), pick(old));
}

/** The guard of the RBAC kinds; `bind` gives it the authorizer and index once the server has them. */
export function rbacWriteGuard(rbacGroup: string): RbacWriteGuard & { bind(parts: GuardParts): void } {
  let parts: GuardParts | undefined;

  const allowed = async (user: UserInfo, verb: string, resource: string, namespace: string | undefined, name: string): Promise<boolean> => {
    if (!parts) return false;
    const d = await parts.authorizer.authorize({ user, info: resourceAttributes({ verb, apiGroup: rbacGroup, apiVersion: '*', resource, namespace, name }) });
    return d.decision === 'allow';
  };

  /** ConfirmNoEscalation: undefined when the user holds every rule, else kube's message. */
  const escalation = (user: UserInfo, namespace: string | undefined, rules: readonly PolicyRule[]): string | undefined => {
    const held = parts?.index?.rulesFor(user, namespace ?? '') ?? { rules: [], errors: [] };
    const missing = uncovered(held.rules, rules);
    if (!missing.length) return undefined;
    const lines = [...new Set(compact(missing).map(compactString))].sort(goSort);
    let msg = `user ${goQuote(user.name)} (groups=${goList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
    // kube appends its one aggregate error as a Go slice: `[<error>]`, `[[<error>, <error>]]`.
    if (held.errors.length) msg += `; resolution errors: [${held.errors.length === 1 ? held.errors[0] : `[${held.errors.join(', ')}]`}]`;
    return msg;
  };

  const privileged = (user: UserInfo) => user.groups.includes(PRIVILEGED_GROUP);

  return {
    bind(p) {
      parts = p;
    },

    async role({ user, kind, namespace, name, object, old }) {
      if (privileged(user)) return;
      const resource = kind === 'Role' ? 'roles' : 'clusterroles';
      if (await allowed(user, 'escalate', resource, namespace, name)) return;
      if (onlyGcFields(object, old, ['rules', 'aggregationRule'])) return;
      const qualified = { group: rbacGroup, resource };
      const refused = escalation(user, namespace, strings2rules((object as RoleObject).rules));
      if (refused) throw errors.forbidden(qualified, name, refused);
      // An aggregation rule can gather anything (and, removed, stops a tightening): setting,
      // changing or dropping one needs every permission.
      if (hasAggregationRule(object) || (old && hasAggregationRule(old))) {
        if (escalation(user, undefined, FULL_AUTHORITY)) throw errors.forbidden(qualified, name, 'must have cluster-admin privileges to use the aggregationRule');
      }
    },

    async binding({ user, kind, namespace, name, object, old }) {
      if (privileged(user)) return;
      if (onlyGcFields(object, old, ['subjects', 'roleRef'])) return;
      const ref = (object as BindingObject).roleRef ?? {};
      const roleResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
      if (await allowed(user, 'bind', roleResource, kind === 'RoleBinding' ? namespace : undefined, ref.name ?? '')) return;
      const rules = parts?.index?.roleRules(ref, namespace ?? '');
      if (typeof rules === 'string' || (rules === undefined && parts?.index)) throw errors.notFound({ group: rbacGroup, resource: roleResource }, ref.name ?? '');
      const refused = escalation(user, namespace, rules ?? []);
      if (refused) throw errors.forbidden({ group: rbacGroup, resource: kind === 'RoleBinding' ? 'rolebindings' : 'clusterrolebindings' }, name, refused);
    },
  };
}

function strings2rules(v: unknown): PolicyRule[] {
  return Array.isArray(v) ? (v as PolicyRule[]) : [];
}

function hasAggregationRule(o: KObject): boolean {
  const selectors = (o as RoleObject).aggregationRule?.clusterRoleSelectors;
  return Array.isArray(selectors) && selectors.length > 0;
}
