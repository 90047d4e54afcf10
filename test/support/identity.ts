// Requests as a given identity, and an authorizer that records who asked: what the authentication
// tests share.

import type { Authorizer } from '../../src/auth/authz/authorizer.ts';
import type { UserInfo } from '../../src/request/user.ts';
import { httpsRequest, type RawReply } from './https.ts';
import { tlsFor } from './tls-clients.ts';

/**
 * An authorizer that allows everything (not the built-in one, so anonymous requests stay on) and
 * remembers which user asked for which path.
 */
export function recordingAuthorizer(): Authorizer & { seen: Map<string, UserInfo> } {
  const seen = new Map<string, UserInfo>();
  return {
    seen,
    async authorize({ user, info }) {
      seen.set(info.path, user);
      return { decision: 'allow' };
    },
  };
}

/** A request with this bearer token (or none) and no client certificate: the token alone says who it is. */
export function withToken(server: { url: string; ca?: string }, method: string, path: string, token: string | undefined, body?: unknown): Promise<RawReply> {
  return httpsRequest({ url: server.url, ca: server.ca ?? tlsFor(server.url)?.ca }, method, path, token === undefined ? {} : { Authorization: `Bearer ${token}` }, body);
}
