// The audit policy (`--audit-policy-file`): a Policy object whose first matching rule gives a
// request's level (None, Metadata, Request, RequestResponse) and the stages left out, with
// kube-apiserver's matching rules (users, groups, verbs, namespaces, resources with `*`, `*/sub`
// and `res/*`, resource names, non-resource URLs with a `*` suffix). No rule matching: None.

import { readFileSync } from 'node:fs';
import { yaml } from '../../machinery/yaml.ts';
import { requestShapeKey, type RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';

export const AUDIT_LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof AUDIT_LEVELS)[number];
export const AUDIT_STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type AuditStage = (typeof AUDIT_STAGES)[number];

export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages: AuditStage[];
  omitManagedFields: boolean;
}

/** What the policy decides for one request. */
export interface AuditDecision {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function strings(v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${path}: must be a list of strings`);
  return v as string[];
}

function stages(v: unknown, path: string): AuditStage[] {
  const list = strings(v, path);
  list.forEach((s, i) => {
    if (!(AUDIT_STAGES as readonly string[]).includes(s)) throw new Error(`${path}[${i}]: Unsupported value: "${s}": supported values: "${AUDIT_STAGES.join('", "')}"`);
  });
  return list as AuditStage[];
}

/** The policy in `text` (YAML or JSON); `groups` are the apiVersions a Policy may have. Errors name the field. */
export function parseAuditPolicy(text: string, groups: readonly string[]): AuditPolicy {
  const doc = yaml().parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) throw new Error(`decoding the policy: ${doc.errors[0]!.message}`);
  const p: unknown = doc.toJS();
  if (!isObject(p)) throw new Error('the policy must be an object');
  const versions = groups.flatMap((g) => [`${g}/v1`]);
  if (p.kind !== 'Policy' || typeof p.apiVersion !== 'string' || !versions.includes(p.apiVersion))
    throw new Error(`the policy must be kind Policy of apiVersion ${versions.join(' or ')}, not ${JSON.stringify(p.apiVersion)} ${JSON.stringify(p.kind)}`);
  if (!Array.isArray(p.rules) || p.rules.length === 0) throw new Error('rules: Required value: the policy has no rules');
  const rules = p.rules.map((r: unknown, i: number): PolicyRule => {
    const at = `rules[${i}]`;
    if (!isObject(r)) throw new Error(`${at}: must be an object`);
    if (typeof r.level !== 'string' || !(AUDIT_LEVELS as readonly string[]).includes(r.level))
      throw new Error(`${at}.level: Unsupported value: ${JSON.stringify(r.level ?? '')}: supported values: "${AUDIT_LEVELS.join('", "')}"`);
    const resources = (r.resources === undefined || r.resources === null ? [] : Array.isArray(r.resources) ? r.resources : [null]).map((g: unknown, j: number) => {
      if (!isObject(g)) throw new Error(`${at}.resources[${j}]: must be an object`);
      const gr = { group: typeof g.group === 'string' ? g.group : '', resources: strings(g.resources, `${at}.resources[${j}].resources`), resourceNames: strings(g.resourceNames, `${at}.resources[${j}].resourceNames`) };
      gr.resources.forEach((res, k) => {
        if (res.includes('/') && !/^(\*\/[^/*]+|[^/*]+\/\*|[^/*]+\/[^/*]+)$/.test(res)) throw new Error(`${at}.resources[${j}].resources[${k}]: Invalid value: "${res}": not a resource, a subresource or a wildcard of them`);
      });
      return gr;
    });
    const nonResourceURLs = strings(r.nonResourceURLs, `${at}.nonResourceURLs`);
    if (nonResourceURLs.length && (resources.length || strings(r.namespaces, `${at}.namespaces`).length))
      throw new Error(`${at}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
    nonResourceURLs.forEach((u, k) => {
      if (!u.startsWith('/') && u !== '*') throw new Error(`${at}.nonResourceURLs[${k}]: Invalid value: "${u}": non-resource URL rules must begin with a '/' character`);
      if (u.slice(0, -1).includes('*')) throw new Error(`${at}.nonResourceURLs[${k}]: Invalid value: "${u}": non-resource URL wildcards ('*') must be the final character of the rule`);
    });
    return {
      level: r.level as AuditLevel,
      users: strings(r.users, `${at}.users`),
      userGroups: strings(r.userGroups, `${at}.userGroups`),
      verbs: strings(r.verbs, `${at}.verbs`),
      resources,
      namespaces: strings(r.namespaces, `${at}.namespaces`),
      nonResourceURLs,
      omitStages: stages(r.omitStages, `${at}.omitStages`),
      ...(typeof r.omitManagedFields === 'boolean' && { omitManagedFields: r.omitManagedFields }),
    };
  });
  return { rules, omitStages: stages(p.omitStages, 'omitStages'), omitManagedFields: p.omitManagedFields === true };
}

/** The policy of a file, read once at start. */
export function readAuditPolicy(path: string, groups: readonly string[]): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--audit-policy-file: ${(e as Error).message}`);
  }
  try {
    return parseAuditPolicy(text, groups);
  } catch (e) {
    throw new Error(`--audit-policy-file ${path}: ${(e as Error).message}`);
  }
}

function matchesResource(gr: GroupResources, info: RequestInfo): boolean {
  if (gr.group !== info.apiGroup) return false;
  if (gr.resources.length === 0) return true;
  if (gr.resourceNames.length && !gr.resourceNames.includes(info.name)) return false;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return gr.resources.some(
    (res) =>
      res === combined ||
      res === '*' ||
      (info.subresource !== '' && res.startsWith('*/') && res.slice(2) === info.subresource) ||
      (res.endsWith('/*') && res.slice(0, -2) === info.resource),
  );
}

const matchesURL = (patterns: readonly string[], path: string) => patterns.some((p) => p === '*' || p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1))));

function ruleMatches(r: PolicyRule, user: UserInfo | undefined, info: RequestInfo): boolean {
  if (r.users.length && !(user && r.users.includes(user.name))) return false;
  if (r.userGroups.length && !user?.groups?.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length && !r.verbs.includes(info.verb)) return false;
  if (r.namespaces.length || r.resources.length) {
    if (!info.isResourceRequest) return false;
    if (r.namespaces.length && !r.namespaces.includes(info.namespace)) return false;
    if (r.resources.length && !r.resources.some((gr) => matchesResource(gr, info))) return false;
  }
  if (r.nonResourceURLs.length) {
    if (info.isResourceRequest) return false;
    if (!matchesURL(r.nonResourceURLs, info.path)) return false;
  }
  return true;
}

const NOT_AUDITED: AuditDecision = { level: 'None', omitStages: new Set(), omitManagedFields: false };
/** Each rule's decision, made once: requests share it. */
const decisions = new WeakMap<PolicyRule, AuditDecision>();

/** The decision for a request: its first matching rule's, or None. */
export function evaluatePolicy(policy: AuditPolicy, user: UserInfo | undefined, info: RequestInfo): AuditDecision {
  for (const r of policy.rules) {
    if (!ruleMatches(r, user, info)) continue;
    let d = decisions.get(r);
    if (!d) {
      d = { level: r.level, omitStages: new Set([...policy.omitStages, ...r.omitStages]), omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields };
      decisions.set(r, d);
    }
    return d;
  }
  return NOT_AUDITED;
}

/** A policy of more rules than this has its decisions kept (fewer are decided faster than a key is made). */
const KEEP_FROM_RULES = 4;
const MAX_KEPT_PER_USER = 512;

/**
 * evaluatePolicy for one policy, read once at start and never changed: with more than a few rules,
 * a frozen user's decisions (the token cache's, a connection's certificate's) are kept by the
 * request facts the rules read (verb, namespace, group, resource, subresource, name; or the path),
 * at most 512 per user.
 */
export function policyEvaluator(policy: AuditPolicy): (user: UserInfo | undefined, info: RequestInfo) => AuditDecision {
  if (policy.rules.length <= KEEP_FROM_RULES) return (user, info) => evaluatePolicy(policy, user, info);
  const kept = new WeakMap<UserInfo, Map<string, AuditDecision>>();
  return (user, info) => {
    if (!user || !Object.isFrozen(user) || !Object.isFrozen(user.groups)) return evaluatePolicy(policy, user, info);
    let mine = kept.get(user);
    if (!mine) kept.set(user, (mine = new Map()));
    const key = requestShapeKey(info);
    let d = mine.get(key);
    if (!d) {
      d = evaluatePolicy(policy, user, info);
      if (mine.size >= MAX_KEPT_PER_USER) mine.clear();
      mine.set(key, d);
    }
    return d;
  };
}
