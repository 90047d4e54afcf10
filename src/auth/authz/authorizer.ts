// Authorization: decides whether a user may perform the request's verb on its resource. Each mode
// (RBAC, Node, webhook, …) answers allow, deny or no opinion, so that several can be consulted in
// the configured order: the first with an opinion decides.

import type { RequestInfo } from '../../request/request-info.ts';
import type { UserInfo } from '../../request/user.ts';

interface Attributes {
  user: UserInfo;
  info: RequestInfo;
}

type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string } | { decision: 'no-opinion'; reason?: string };

export interface Authorizer {
  authorize(attrs: Attributes): Promise<Decision>;
}

export const alwaysAllow: Authorizer = {
  async authorize() {
    return { decision: 'allow' };
  },
};
