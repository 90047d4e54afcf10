// The RBAC authorizer: allows a request when a rule of a role bound to the user (by name, by one of
// its groups, or as a service account) matches it; otherwise it has no opinion. It answers from an
// index of the four kinds kept current by watches, never from a list per request: cluster role
// bindings and the role bindings of each namespace, by subject.

import { matchEverything } from '../../machinery/list-options.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { RegistryStore } from '../../registry/store.ts';
import type { BindingObject, PolicyRule, RoleObject, RoleRef, Subject } from '../../registry/kinds/rbac.ts';
import { requestShapeKey, type RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';
import { goQuote } from '../../ssa/value.ts';
import { ALLOW, NO_OPINION, type Attributes, type Authorizer, type Decision } from './authorizer.ts';

const WATCH_RESTART_MS = 1_000;

/** The group whose members every authorizer chain allows first (kube's privileged-groups authorizer). */
export const PRIVILEGED_GROUP = 'system:masters';

export const privilegedGroups: Authorizer = {
  async authorize({ user }) {
    return user.groups.includes(PRIVILEGED_GROUP) ? ALLOW : NO_OPINION;
  },
  known: ({ user }) => (user.groups.includes(PRIVILEGED_GROUP) ? ALLOW : NO_OPINION),
};

/** The username of a service account, as its tokens authenticate it. */
export const serviceAccountUser = (namespace: string, name: string): string => `system:serviceaccount:${namespace}:${name}`;

// ---- rule matching (kube's RuleAllows) ----

const has = (list: readonly string[] | undefined, v: string): boolean => !!list && (list.includes('*') || list.includes(v));

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    // `*/scale` is the subresource of every resource.
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** Whether `rule` allows the request `i`. */
export function ruleAllows(i: RequestInfo, rule: PolicyRule): boolean {
  if (!has(rule.verbs, i.verb)) return false;
  if (!i.isResourceRequest) return nonResourceURLMatches(rule, i.path);
  const combined = i.subresource ? `${i.resource}/${i.subresource}` : i.resource;
  if (!has(rule.apiGroups, i.apiGroup) || !resourceMatches(rule, combined, i.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(i.name);
}

// ---- the index ----

/** A binding with what the authorizer reads of it. */
interface IndexedBinding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  name: string;
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
  /** The allow reason's description of this binding, by the subject that named the user: made once each. */
  described?: Map<Subject, string>;
}

/** The index keys of a subject: `u:<user>` (service accounts by their username) or `g:<group>`. */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  if (!s || typeof s.name !== 'string') return undefined;
  if (s.kind === 'User') return `u:${s.name}`;
  if (s.kind === 'Group') return `g:${s.name}`;
  if (s.kind === 'ServiceAccount') return `u:${serviceAccountUser(s.namespace || bindingNamespace, s.name)}`;
  return undefined;
}

const keysOf = (user: UserInfo): string[] => [`u:${user.name}`, ...user.groups.map((g) => `g:${g}`)];

/** Index keys of frozen users (the token cache's, one per cached token), made once. */
const frozenUserKeys = new WeakMap<UserInfo, readonly string[]>();

/** The index keys of a user: made once for a frozen user, which cannot change. */
function userKeys(user: UserInfo): readonly string[] {
  if (!Object.isFrozen(user)) return keysOf(user);
  let keys = frozenUserKeys.get(user);
  if (!keys) frozenUserKeys.set(user, (keys = keysOf(user)));
  return keys;
}

/** Bindings of one scope, by subject key, each with the subject of that key (found once, when put). */
class BindingIndex {
  private readonly byName = new Map<string, IndexedBinding>();
  private readonly bySubject = new Map<string, Map<IndexedBinding, Subject>>();

  get size(): number {
    return this.byName.size;
  }

  put(b: IndexedBinding): void {
    this.remove(b.name);
    this.byName.set(b.name, b);
    for (const s of b.subjects) {
      const k = subjectKey(s, b.namespace);
      if (!k) continue;
      let m = this.bySubject.get(k);
      if (!m) this.bySubject.set(k, (m = new Map()));
      if (!m.has(b)) m.set(b, s);
    }
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    for (const s of old.subjects) {
      const k = subjectKey(s, old.namespace);
      const m = k === undefined ? undefined : this.bySubject.get(k);
      if (!m) continue;
      m.delete(old);
      if (!m.size) this.bySubject.delete(k!);
    }
  }

  /**
   * Calls `visit` with each binding naming the user (once, with the subject that names it) until
   * it returns false; returns false then. Costs what the user's own bindings cost, whatever the
   * number of other bindings.
   */
  forUser(user: UserInfo, visit: (b: IndexedBinding, s: Subject) => boolean): boolean {
    let first: Map<IndexedBinding, Subject> | undefined;
    let seen: Set<IndexedBinding> | undefined;
    const keys = userKeys(user);
    for (let i = 0; i < keys.length; i++) {
      const m = this.bySubject.get(keys[i]!);
      if (!m) continue;
      // A binding can name the user twice (by name and by a group) only once a second key matches.
      if (!first) first = m;
      else seen ??= new Set(first.keys());
      for (const [b, s] of m) {
        if (seen) {
          if (seen.has(b)) continue;
          seen.add(b);
        }
        if (!visit(b, s)) return false;
      }
    }
    return true;
  }
}

/** Go's describeSubject. */
function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name ?? '')}`;
}

function describeBinding(b: IndexedBinding, s: Subject): string {
  let text = b.described?.get(s);
  if (text === undefined) {
    const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
    text = `RBAC: allowed by ${b.kind} ${goQuote(name)} of ${b.roleRef.kind} ${goQuote(b.roleRef.name ?? '')} to ${describeSubject(s, b.namespace)}`;
    (b.described ??= new Map()).set(s, text);
  }
  return text;
}

export interface RbacStores {
  roles: RegistryStore;
  clusterRoles: RegistryStore;
  roleBindings: RegistryStore;
  clusterRoleBindings: RegistryStore;
}

/** What a rule visitor is given: the rule, and the binding and subject it came from (for the allow reason). */
type RuleVisitor = (rule: PolicyRule, binding: IndexedBinding, subject: Subject) => boolean;

/**
 * The four kinds in memory, kept current by watches (started again, with a fresh list, when one
 * ends). `start` resolves once the first lists are in.
 */
export class RbacIndex {
  private readonly stores: RbacStores;
  private readonly rbacGroup: string;
  private readonly log: (message: string) => void;
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  private readonly clusterBindings = new BindingIndex();
  private readonly namespaceBindings = new Map<string, BindingIndex>();
  private readonly watches: { stop(): void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Counts every change of the four kinds: a decision made at an older count may no longer hold. */
  generation = 0;

  constructor(
    stores: RbacStores,
    rbacGroup: string,
    log: (message: string) => void,
  ) {
    this.stores = stores;
    this.rbacGroup = rbacGroup;
    this.log = log;
  }

  async start(): Promise<void> {
    await Promise.all([
      this.follow(this.stores.roles, (o) => this.roles.set(`${o.metadata.namespace}/${o.metadata.name}`, rulesOf(o)), (o) => this.roles.delete(`${o.metadata.namespace}/${o.metadata.name}`)),
      this.follow(this.stores.clusterRoles, (o) => this.clusterRoles.set(o.metadata.name ?? '', rulesOf(o)), (o) => this.clusterRoles.delete(o.metadata.name ?? '')),
      this.follow(
        this.stores.clusterRoleBindings,
        (o) => this.clusterBindings.put(indexed(o, 'ClusterRoleBinding')),
        (o) => this.clusterBindings.remove(o.metadata.name ?? ''),
      ),
      this.follow(
        this.stores.roleBindings,
        (o) => {
          const ns = o.metadata.namespace ?? '';
          let idx = this.namespaceBindings.get(ns);
          if (!idx) this.namespaceBindings.set(ns, (idx = new BindingIndex()));
          idx.put(indexed(o, 'RoleBinding'));
        },
        (o) => {
          const ns = o.metadata.namespace ?? '';
          const idx = this.namespaceBindings.get(ns);
          idx?.remove(o.metadata.name ?? '');
          if (idx && !idx.size) this.namespaceBindings.delete(ns);
        },
      ),
    ]);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const w of this.watches.splice(0)) w.stop();
  }

  /**
   * List, then watch from the list's version; a watch that ends is followed again after a pause,
   * from a fresh list (objects gone meanwhile are dropped).
   */
  private async follow(store: RegistryStore, putObject: (o: KObject) => void, removeObject: (o: KObject) => void, known = new Map<string, KObject>()): Promise<void> {
    if (this.stopped) return;
    const put = (o: KObject) => {
      this.generation++;
      putObject(o);
    };
    const remove = (o: KObject) => {
      this.generation++;
      removeObject(o);
    };
    const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    const again = () => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        void this.follow(store, putObject, removeObject, known);
      }, WATCH_RESTART_MS);
      t.unref();
      this.timers.add(t);
    };
    try {
      const list = await store.list(undefined, matchEverything());
      const present = new Set<string>();
      for (const o of list.items) {
        present.add(keyOf(o));
        known.set(keyOf(o), o);
        put(o);
      }
      for (const [k, o] of known) if (!present.has(k)) (known.delete(k), remove(o));
      const w = await store.watch(undefined, { ...matchEverything(true), resourceVersion: list.metadata.resourceVersion, sendInitialEvents: false }, {
        send: (type, encoded) => {
          if (type === 'BOOKMARK') return true;
          const o = encoded.view();
          if (type === 'DELETED') (known.delete(keyOf(o)), remove(o));
          else (known.set(keyOf(o), o), put(o));
          return true;
        },
        error: () => {},
        end: () => {
          if (!this.stopped) again();
        },
        onDrain: () => {},
      });
      if (this.stopped) w.stop();
      else this.watches.push(w);
    } catch (e) {
      if (this.stopped) return;
      this.log(`RBAC: following ${store.def.resource}: ${e instanceof Error ? e.message : String(e)}`);
      again();
    }
  }

  /** The rules of a role reference: a Role of `namespace` or a ClusterRole; an error text when missing. */
  roleRules(ref: RoleRef, namespace: string): PolicyRule[] | string {
    if (ref.kind === 'Role') {
      const rules = this.roles.get(`${namespace}/${ref.name}`);
      return rules ?? `role.${this.rbacGroup} ${goQuote(ref.name ?? '')} not found`;
    }
    if (ref.kind === 'ClusterRole') {
      const rules = this.clusterRoles.get(ref.name ?? '');
      return rules ?? `clusterrole.${this.rbacGroup} ${goQuote(ref.name ?? '')} not found`;
    }
    return `unsupported role reference kind: ${goQuote(ref.kind ?? '')}`;
  }

  /**
   * kube's VisitRulesFor: the rules of the cluster role bindings of the user, then of the role
   * bindings of `namespace`, until the visitor returns false. Returns the resolution errors.
   */
  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): string[] {
    const errors: string[] = [];
    if (!this.clusterBindings.forUser(user, (b, s) => this.visitBinding(b, s, '', visit, errors))) return errors;
    if (namespace) this.namespaceBindings.get(namespace)?.forUser(user, (b, s) => this.visitBinding(b, s, namespace, visit, errors));
    return errors;
  }

  /** The rules of one binding through `visit` (false when it stopped); a role not found goes to `errors`. */
  private visitBinding(b: IndexedBinding, s: Subject, namespace: string, visit: RuleVisitor, errors: string[]): boolean {
    const rules = this.roleRules(b.roleRef, namespace);
    if (typeof rules === 'string') {
      errors.push(rules);
      return true;
    }
    for (const r of rules) if (!visit(r, b, s)) return false;
    return true;
  }

  /** Every rule the user holds in `namespace` (cluster-wide ones included), and the resolution errors. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors = this.visitRulesFor(user, namespace, (r) => (rules.push(r), true));
    return { rules, errors };
  }
}

function rulesOf(o: KObject): PolicyRule[] {
  const rules = (o as RoleObject).rules;
  return Array.isArray(rules) ? rules : [];
}

function indexed(o: KObject, kind: IndexedBinding['kind']): IndexedBinding {
  const b = o as BindingObject;
  return { kind, name: o.metadata.name ?? '', namespace: o.metadata.namespace ?? '', roleRef: b.roleRef ?? {}, subjects: Array.isArray(b.subjects) ? b.subjects : [] };
}

/** The RBAC authorizer over an index: allow with the binding that allowed, or no opinion (with the resolution errors). */
export function rbacAuthorizer(index: RbacIndex): Authorizer {
  const evaluate = ({ user, info }: Attributes): Decision => {
    let reason: string | undefined;
    const errors = index.visitRulesFor(user, info.namespace, (rule, binding, subject) => {
      if (!ruleAllows(info, rule)) return true;
      reason = describeBinding(binding, subject);
      return false;
    });
    if (reason !== undefined) return Object.freeze({ decision: 'allow', reason });
    if (!errors.length) return NO_OPINION;
    return Object.freeze({ decision: 'no-opinion', reason: `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}` });
  };
  // A frozen user (the token cache's, a connection's certificate) asks the same few things over and
  // over: its decisions are kept, each with the index's generation it was made at, and made again
  // once anything of the four kinds changed. Decisions depend on the user's name and groups (fixed
  // for a frozen user) and on the request facts of the key.
  const decided = new WeakMap<UserInfo, Map<string, { generation: number; decision: Decision }>>();
  const decide = (attrs: Attributes): Decision => {
    const { user, info } = attrs;
    if (!Object.isFrozen(user)) return evaluate(attrs);
    let mine = decided.get(user);
    if (!mine) decided.set(user, (mine = new Map()));
    const key = requestShapeKey(info);
    const known = mine.get(key);
    if (known && known.generation === index.generation) return known.decision;
    const decision = evaluate(attrs);
    // Bounded: a user asking of many objects starts afresh.
    if (mine.size >= MAX_DECISIONS_PER_USER) mine.clear();
    mine.set(key, { generation: index.generation, decision });
    return decision;
  };
  return { authorize: async (attrs) => decide(attrs), known: decide };
}

const MAX_DECISIONS_PER_USER = 512;
