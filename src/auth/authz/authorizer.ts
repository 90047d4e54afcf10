// Authorization: decides whether a user may perform the request's verb on its resource. Each mode
// (RBAC, Node, webhook, …) answers allow, deny or no opinion, so that several can be consulted in
// the configured order: the first with an opinion decides.

import { resourceCheckInfo, type CheckedResource, type RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';

/**
 * What is asked: who, and the request's facts. Checks that are not the request itself (may the
 * caller impersonate this user?) describe their resource in the same shape (resourceAttributes).
 */
export interface Attributes {
  user: UserInfo;
  info: RequestInfo;
  /** The selectors of a list or watch an access review names (kube's AuthorizeWithSelectors), when it names usable ones. */
  fieldSelector?: readonly { field: string; op: '=' | '!='; value: string }[];
  labelSelector?: readonly { key: string; operator: string; values?: readonly string[] }[];
}

export type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string } | { decision: 'no-opinion'; reason?: string };

/** Decides whether a user may do a request (allow, deny or no opinion); modes are consulted in order, the first with an opinion decides. */
export interface Authorizer {
  authorize(attrs: Attributes): Promise<Decision>;
  /**
   * The decision `authorize` would give, when it is reached without waiting for anything (rules
   * held in memory), with the same effects; undefined, and no effect, when only `authorize` can
   * tell (a webhook).
   */
  known?(attrs: Attributes): Decision | undefined;
}

/** Decisions without a reason, shared (frozen): nothing changes a decision once given. */
export const ALLOW: Decision = Object.freeze({ decision: 'allow' });
export const NO_OPINION: Decision = Object.freeze({ decision: 'no-opinion' });

export const alwaysAllow: Authorizer = {
  async authorize() {
    return ALLOW;
  },
  known: () => ALLOW,
};

/** The resource a check names, when it is not the request's own (kube-apiserver's AttributesRecord). */
export type ResourceAttributes = CheckedResource;

/** A resource check in the shape of a request's facts, so every authorizer reads it alike. */
export const resourceAttributes = (r: ResourceAttributes): RequestInfo => resourceCheckInfo(r);
