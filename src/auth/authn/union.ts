// Authenticators combined as kube-apiserver combines them: a union in which the first success
// decides, `system:authenticated` added to whoever it authenticated, and a fallback (anonymous)
// consulted only when nobody rejected a credential.

import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER, type AuthenticationResult, type Authenticator } from './authenticator.ts';

/**
 * The first authenticator that authenticates decides. When none does, the request is rejected if
 * any of them rejected its credential (the messages joined, for the log), and carries no
 * credential otherwise.
 */
export function union(authenticators: readonly Authenticator[]): Authenticator {
  return { authenticate: (req) => firstSuccess(authenticators, (a) => a.authenticate(req)) };
}

/**
 * Tries `attempt` on each in turn: the first authentication decides; otherwise the rejections,
 * aggregated as kube-apiserver aggregates them, or no credential when nobody rejected.
 */
export async function firstSuccess<T>(each: readonly T[], attempt: (t: T) => Promise<AuthenticationResult>): Promise<AuthenticationResult> {
  const errors: string[] = [];
  for (const a of each) {
    const r = await attempt(a);
    if (r.kind === 'authenticated') return r;
    if (r.kind === 'rejected') errors.push(r.message);
  }
  return errors.length ? { kind: 'rejected', message: aggregate(errors) } : { kind: 'no-credential' };
}

/**
 * `first`, and `fallback` only when `first` found no credential: a rejected credential stays
 * rejected (an invalid bearer token is 401, never anonymous).
 */
export function failOnError(first: Authenticator, fallback: Authenticator): Authenticator {
  return {
    async authenticate(req) {
      const r = await first.authenticate(req);
      return r.kind === 'no-credential' ? fallback.authenticate(req) : r;
    },
  };
}

/** Adds `system:authenticated` to every authenticated user, unless anonymous or already in either well-known group. */
export function authenticatedGroupAdder(inner: Authenticator): Authenticator {
  return {
    async authenticate(req): Promise<AuthenticationResult> {
      return withAuthenticatedGroup(await inner.authenticate(req));
    },
  };
}

/** `system:authenticated` added to an authenticated user, unless anonymous or already in either well-known group. */
export function withAuthenticatedGroup(r: AuthenticationResult): AuthenticationResult {
  if (r.kind !== 'authenticated') return r;
  const u = r.user;
  if (u.name === ANONYMOUS_USER || u.groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED)) return r;
  // A frozen answer (the token cache's, shared by every request with its token) gets one frozen
  // answer with the group, made once: nobody can change either.
  if (!Object.isFrozen(r)) return { ...r, user: { ...u, groups: [...u.groups, ALL_AUTHENTICATED] } };
  let added = withGroup.get(r);
  if (!added) {
    added = Object.freeze({ ...r, user: Object.freeze({ ...u, groups: Object.freeze([...u.groups, ALL_AUTHENTICATED]) as string[] }) });
    withGroup.set(r, added);
  }
  return added;
}

/** Frozen answers with `system:authenticated` added, by the frozen answer they were made from. */
const withGroup = new WeakMap<AuthenticationResult, AuthenticationResult>();

/** As Go's error aggregate prints several errors. */
function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
