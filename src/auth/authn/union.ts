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
  const all = authenticators.every((a) => a.known);
  return {
    authenticate: (req) => firstSuccess(authenticators, (a) => a.authenticate(req)),
    ...(all && {
      known(req) {
        // firstSuccess, as long as each answer is known at once.
        let errors: string[] | undefined;
        for (let i = 0; i < authenticators.length; i++) {
          const r = authenticators[i]!.known!(req);
          if (r === undefined) return undefined;
          if (r.kind === 'authenticated') return r;
          if (r.kind === 'rejected') (errors ??= []).push(r.message);
        }
        return errors ? { kind: 'rejected', message: aggregate(errors) } : NO_CREDENTIAL;
      },
    }),
  };
}

const NO_CREDENTIAL: AuthenticationResult = Object.freeze({ kind: 'no-credential' });

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
  const known = first.known;
  const fallbackKnown = fallback.known;
  return {
    async authenticate(req) {
      const r = await first.authenticate(req);
      return r.kind === 'no-credential' ? fallback.authenticate(req) : r;
    },
    ...(known &&
      fallbackKnown && {
        known(req) {
          const r = known(req);
          return r?.kind === 'no-credential' ? fallbackKnown(req) : r;
        },
      }),
  };
}

/** Adds `system:authenticated` to every authenticated user, unless anonymous or already in either well-known group. */
export function authenticatedGroupAdder(inner: Authenticator): Authenticator {
  const known = inner.known;
  return {
    async authenticate(req): Promise<AuthenticationResult> {
      return withAuthenticatedGroup(await inner.authenticate(req));
    },
    ...(known && {
      known(req) {
        const r = known(req);
        return r && withAuthenticatedGroup(r);
      },
    }),
  };
}

/** `system:authenticated` added to an authenticated user, unless anonymous or already in either well-known group. */
export function withAuthenticatedGroup(r: AuthenticationResult): AuthenticationResult {
  if (r.kind !== 'authenticated') return r;
  // A frozen answer seen before: what was made of it (itself when it needed nothing).
  const made = asFinal.get(r);
  if (made) return made;
  const u = r.user;
  const frozen = Object.isFrozen(r) && Object.isFrozen(u) && Object.isFrozen(u.groups);
  if (u.name === ANONYMOUS_USER || u.groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED)) {
    if (frozen) asFinal.set(r, r);
    return r;
  }
  // A frozen answer (the token cache's, shared by every request with its token) gets one frozen
  // answer with the group, made once: nobody can change either.
  if (!frozen) return { ...r, user: { ...u, groups: [...u.groups, ALL_AUTHENTICATED] } };
  const added = Object.freeze({ ...r, user: Object.freeze({ ...u, groups: Object.freeze([...u.groups, ALL_AUTHENTICATED]) as string[] }) });
  asFinal.set(r, added);
  asFinal.set(added, added);
  return added;
}

/**
 * Frozen answers, each with what withAuthenticatedGroup makes of it: the same answer with
 * `system:authenticated` added, or the answer itself when it needs nothing (one made here).
 */
const asFinal = new WeakMap<AuthenticationResult, AuthenticationResult>();

/** As Go's error aggregate prints several errors. */
function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
