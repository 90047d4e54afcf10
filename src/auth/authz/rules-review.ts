// What the access reviews ask of authorization: a decision from the server's authorizer chain for
// any user (SubjectAccessReview and its kin), and the rules a user holds in a namespace from the
// rule resolvers of the configured modes (SelfSubjectRulesReview), merged as kube-apiserver's
// union of resolvers merges them: the lists concatenated, incomplete when any resolver is, the
// errors aggregated.

import type { AccessReviewer, NonResourceRule, ResourceRule, ReviewAttributes, RulesReviewStatus } from '../../registry/kinds/authorization.ts';
import type { PolicyRule } from '../../registry/kinds/rbac.ts';
import type { UserInfo } from '../../request/user.ts';
import { alwaysAllow, type Authorizer } from './authorizer.ts';
import type { AuthorizationMode } from './modes.ts';
import type { RbacIndex } from './rbac.ts';

/** The rules one mode says a user holds in a namespace (kube's authorizer.RuleResolver). */
export interface RulesResolver {
  rulesFor(user: UserInfo, namespace: string): Promise<{ resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[]; incomplete: boolean; error?: string }>;
}

/** AlwaysAllow: everything, complete. */
export const allowEverythingRules: RulesResolver = {
  async rulesFor() {
    return { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false };
  },
};

/** AlwaysDeny: nothing, complete. */
export const allowNothingRules: RulesResolver = {
  async rulesFor() {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  },
};

/** A mode that decides request by request and cannot list what it would allow (a webhook, an embedder's authorizer). */
export function unlistableRules(what: string): RulesResolver {
  return {
    async rulesFor() {
      return { resourceRules: [], nonResourceRules: [], incomplete: true, error: `${what} does not support user rule resolution` };
    },
  };
}

/** Node: a node's rights are not listed (incomplete); anyone else gets nothing from this mode. */
export const nodeRules: RulesResolver = {
  async rulesFor(user) {
    const isNode = user.groups.includes('system:nodes') && user.name.startsWith('system:node:') && user.name.length > 'system:node:'.length;
    return isNode ? { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' } : { resourceRules: [], nonResourceRules: [], incomplete: false };
  },
};

/** RBAC: the rules of the user's bindings from the index, split into resource and non-resource rules. */
export function rbacRules(index: RbacIndex): RulesResolver {
  return {
    async rulesFor(user, namespace) {
      const { rules, errors } = index.rulesFor(user, namespace);
      const resourceRules: ResourceRule[] = [];
      const nonResourceRules: NonResourceRule[] = [];
      for (const r of rules) {
        if (r.resources?.length) resourceRules.push(resourceRule(r));
        if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...(r.verbs ?? [])], nonResourceURLs: [...r.nonResourceURLs] });
      }
      return { resourceRules, nonResourceRules, incomplete: false, ...(errors.length ? { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` } : {}) };
    },
  };
}

function resourceRule(r: PolicyRule): ResourceRule {
  return {
    verbs: [...(r.verbs ?? [])],
    ...(r.apiGroups ? { apiGroups: [...r.apiGroups] } : {}),
    ...(r.resources ? { resources: [...r.resources] } : {}),
    ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
  };
}

/** kube's unionAuthzRulesHandler. */
export function rulesResolverChain(resolvers: readonly RulesResolver[]): RulesResolver {
  return {
    async rulesFor(user, namespace) {
      const resourceRules: ResourceRule[] = [];
      const nonResourceRules: NonResourceRule[] = [];
      const errs: string[] = [];
      let incomplete = false;
      for (const r of resolvers) {
        const got = await r.rulesFor(user, namespace);
        incomplete ||= got.incomplete;
        if (got.error) errs.push(got.error);
        resourceRules.push(...got.resourceRules);
        nonResourceRules.push(...got.nonResourceRules);
      }
      return { resourceRules, nonResourceRules, incomplete, ...(errs.length ? { error: errs.length === 1 ? errs[0] : `[${errs.join(', ')}]` } : {}) };
    },
  };
}

/**
 * The resolvers of the configured modes, in their order: an embedder's own authorizer cannot list
 * rules (unless it allows everything); a mode without a resolver of its own is incomplete.
 */
export function modeRules(modes: readonly AuthorizationMode[], parts: { rbac?: RbacIndex; embedder?: Authorizer }): RulesResolver {
  if (parts.embedder) return parts.embedder === alwaysAllow ? allowEverythingRules : unlistableRules('the authorizer');
  return rulesResolverChain(
    modes.map((m: string): RulesResolver => {
      if (m === 'AlwaysAllow') return allowEverythingRules;
      if (m === 'AlwaysDeny') return allowNothingRules;
      if (m === 'RBAC' && parts.rbac) return rbacRules(parts.rbac);
      if (m === 'Node') return nodeRules;
      return unlistableRules(`${m.toLowerCase()} authorizer`);
    }),
  );
}

interface ReviewParts {
  authorizer: Authorizer;
  rules: RulesResolver;
}

/**
 * The access reviews' view of authorization. Built before the authorizer exists (the kinds are
 * defined first); `bind` gives it the chain and the resolvers once the server has them.
 */
export function accessReviewer(): AccessReviewer & { bind(parts: ReviewParts): void } {
  let parts: ReviewParts | undefined;
  return {
    bind(p) {
      parts = p;
    },
    async authorize(user: UserInfo, attrs: ReviewAttributes) {
      if (!parts) return { allowed: false, evaluationError: 'the authorizer is not ready' };
      const d = await parts.authorizer.authorize({ user, ...attrs });
      return { allowed: d.decision === 'allow', ...(d.decision === 'deny' ? { denied: true } : {}), ...(d.reason ? { reason: d.reason } : {}) };
    },
    async rulesFor(user: UserInfo, namespace: string): Promise<RulesReviewStatus> {
      if (!parts) return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'the authorizer is not ready' };
      const got = await parts.rules.rulesFor(user, namespace);
      return { resourceRules: got.resourceRules, nonResourceRules: got.nonResourceRules, incomplete: got.incomplete, ...(got.error ? { evaluationError: got.error } : {}) };
    },
  };
}
