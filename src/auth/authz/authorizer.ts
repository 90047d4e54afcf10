// Authorization: decides whether a user may perform the request's verb on its resource. Modes
// (RBAC, Node, webhook, …) form a union in the configured order; each answers allow, deny or no
// opinion.

import type { RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';

export interface Attributes {
  user: UserInfo;
  info: RequestInfo;
}

export type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string } | { decision: 'no-opinion'; reason?: string };

export interface Authorizer {
  authorize(attrs: Attributes): Promise<Decision>;
}

export const alwaysAllow: Authorizer = {
  async authorize() {
    return { decision: 'allow' };
  },
};

export function unionAuthorizer(list: readonly Authorizer[]): Authorizer {
  return {
    async authorize(attrs) {
      const reasons: string[] = [];
      for (const a of list) {
        const d = await a.authorize(attrs);
        if (d.decision !== 'no-opinion') return d;
        if (d.reason) reasons.push(d.reason);
      }
      return { decision: 'no-opinion', reason: reasons.join('; ') };
    },
  };
}
