// Impersonation: a caller acts as another user through the `Impersonate-User`, `-Group`, `-Uid` and
// `-Extra-<key>` headers, as kube-apiserver's impersonation filter allows it. Every attribute asked
// for is one check of the verb `impersonate` through the authorizer (users, groups and service
// accounts in the core group; uids and `userextras/<key>` in the authentication group); the first
// denial answers 403. The user the request then acts as gets the group of its kind of user.

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { errors } from '../machinery/status.ts';
import type { UserInfo } from '../request/user.ts';
import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER } from './authn/authenticator.ts';
import { resourceAttributes, type Authorizer, type ResourceAttributes } from './authz/authorizer.ts';
import { forbidden } from './authz/forbidden.ts';
import { serviceAccountGroups, serviceAccountUser, splitServiceAccountUser } from './authn/service-account.ts';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';

/** One attribute asked for, as kube-apiserver lists it (an ObjectReference): its kind and value. */
type Wanted =
  | { kind: 'User'; name: string }
  | { kind: 'ServiceAccount'; namespace: string; name: string }
  | { kind: 'Group'; name: string }
  | { kind: 'UserExtra'; key: string; value: string }
  | { kind: 'UID'; name: string };

/**
 * Whether the request carries any impersonation header (a cheap test for every request): the
 * header names as received are looked at first (an array, where the parsed headers are an object
 * whose keys are costly to walk once a header was deleted from it); only a request that sent one
 * has its parsed headers asked.
 */
export function asksImpersonation(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length >= PREFIX_LENGTH && (name.charCodeAt(0) | 0x20) === 0x69 && name.slice(0, PREFIX_LENGTH).toLowerCase() === PREFIX) return asksIn(req.headers);
  }
  return false;
}

const PREFIX = 'impersonate-';
const PREFIX_LENGTH = PREFIX.length;

/** Whether the parsed headers still hold an impersonation header. */
function asksIn(headers: IncomingHttpHeaders): boolean {
  for (const name in headers) if (name.startsWith(PREFIX)) return true;
  return false;
}

/**
 * An extra key as sent: percent-decoded (a header name cannot carry every character), kept as it
 * is when an escape is malformed, as Go's url.PathUnescape fails and kube-apiserver keeps the text.
 */
function decodeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c !== 0x25) {
      // Header names are ASCII tokens; anything else is kept byte for byte of its UTF-8.
      for (const b of Buffer.from(encoded[i]!, 'utf8')) bytes.push(b);
      continue;
    }
    const hex = encoded.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return encoded;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** What the headers ask for, in kube-apiserver's order: the user, its groups, extras, the uid. */
function wantedAttributes(distinct: NodeJS.Dict<string[]>, authenticationGroup: string): Wanted[] {
  const wanted: Wanted[] = [];
  const user = distinct[USER_HEADER]?.[0] ?? '';
  if (user) {
    const sa = splitServiceAccountUser(user);
    wanted.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  let others = false;
  for (const group of distinct[GROUP_HEADER] ?? []) {
    others = true;
    wanted.push({ kind: 'Group', name: group });
  }
  for (const name in distinct) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    others = true;
    const key = decodeExtraKey(name.slice(EXTRA_PREFIX.length).toLowerCase());
    for (const value of distinct[name] ?? []) wanted.push({ kind: 'UserExtra', key, value });
  }
  const uid = distinct[UID_HEADER]?.[0] ?? '';
  if (uid) {
    others = true;
    wanted.push({ kind: 'UID', name: uid });
  }
  if (others && !user) throw errors.badRequest(`requested ${goReferences(wanted, `${authenticationGroup}/v1`)} without impersonating a user`);
  return wanted;
}

/**
 * The attributes as Go's `%v` prints kube-apiserver's list of ObjectReferences (kind, namespace,
 * name, uid, apiVersion, resourceVersion, fieldPath), so the message reads the same.
 */
function goReferences(wanted: readonly Wanted[], authenticationVersion: string): string {
  const ref = (kind: string, namespace: string, name: string, apiVersion: string, fieldPath: string) => `{${[kind, namespace, name, '', apiVersion, '', fieldPath].join(' ')}}`;
  const refs = wanted.map((w) => {
    switch (w.kind) {
      case 'User':
      case 'Group':
        return ref(w.kind, '', w.name, '', '');
      case 'ServiceAccount':
        return ref(w.kind, w.namespace, w.name, '', '');
      case 'UserExtra':
        return ref(w.kind, '', w.value, authenticationVersion, w.key);
      case 'UID':
        return ref(w.kind, '', w.name, authenticationVersion, '');
    }
  });
  return `[${refs.join(' ')}]`;
}

/** The check that allows one attribute. */
function checkFor(w: Wanted, authenticationGroup: string): ResourceAttributes {
  const verb = 'impersonate';
  switch (w.kind) {
    case 'User':
      return { verb, apiGroup: '', resource: 'users', name: w.name };
    case 'ServiceAccount':
      return { verb, apiGroup: '', resource: 'serviceaccounts', namespace: w.namespace, name: w.name };
    case 'Group':
      return { verb, apiGroup: '', resource: 'groups', name: w.name };
    case 'UserExtra':
      return { verb, apiGroup: authenticationGroup, apiVersion: 'v1', resource: 'userextras', subresource: w.key, name: w.value };
    case 'UID':
      return { verb, apiGroup: authenticationGroup, apiVersion: 'v1', resource: 'uids', name: w.name };
  }
}

/**
 * The user `requestor` acts as, or undefined when the request asks no impersonation. Throws 400
 * for groups, extras or a uid without a user, 403 (kube-apiserver's message) for the first
 * attribute the authorizer does not allow. The impersonation headers are removed from the request.
 */
export async function impersonatedUser(
  requestor: UserInfo,
  req: Pick<IncomingMessage, 'headers' | 'headersDistinct'>,
  authorizer: Authorizer,
  authenticationGroup: string,
): Promise<UserInfo | undefined> {
  // Each value of a repeated header on its own: the joined form would split a group with a comma.
  const distinct = req.headersDistinct;
  const wanted = wantedAttributes(distinct, authenticationGroup);
  if (wanted.length === 0) return undefined;
  let name = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  const groupsGiven = (distinct[GROUP_HEADER]?.length ?? 0) > 0;
  for (const w of wanted) {
    const info = resourceAttributes(checkFor(w, authenticationGroup));
    const d = await authorizer.authorize({ user: requestor, info });
    if (d.decision !== 'allow') throw forbidden(requestor.name, info, d.reason);
    switch (w.kind) {
      case 'User':
        name = w.name;
        break;
      case 'ServiceAccount':
        name = serviceAccountUser(w.namespace, w.name);
        // A service account's groups are known; groups asked for explicitly replace them.
        if (!groupsGiven) groups = serviceAccountGroups(w.namespace);
        break;
      case 'Group':
        groups.push(w.name);
        break;
      case 'UserExtra':
        (extra[w.key] ??= []).push(w.value);
        break;
      case 'UID':
        uid = w.name;
        break;
    }
  }
  if (name === ANONYMOUS_USER) {
    if (!groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_UNAUTHENTICATED);
  } else if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_AUTHENTICATED);
  }
  // Nothing further in the server may act on them.
  for (const header in req.headers) if (header === USER_HEADER || header === GROUP_HEADER || header === UID_HEADER || header.startsWith(EXTRA_PREFIX)) delete req.headers[header];
  return { name, ...(uid !== undefined ? { uid } : {}), groups, ...(Object.keys(extra).length ? { extra } : {}) };
}
