// Bootstrap tokens (`<token-id>.<token-secret>`) and the Secrets that back them: what the Secret
// kind's validation, the bootstrap token authenticator, the token cleaner and the signer all read
// of them, in one place. Values are read as Kubernetes' cluster-bootstrap helpers read them: a
// missing key is the empty string, an expiration that does not parse counts as expired.

import type { KObject } from '../../machinery/meta.ts';
import { isDateTime } from '../../machinery/schema-validate.ts';
import { mapOf } from './config-map.ts';

/** The prefix of a bootstrap token secret's name; the token id follows. */
export const BOOTSTRAP_TOKEN_NAME_PREFIX = 'bootstrap-token-';
export const TOKEN_ID = /^[a-z0-9]{6}$/;
export const TOKEN_SECRET = /^[a-z0-9]{16}$/;
/** What each group of `auth-extra-groups` must be. */
export const BOOTSTRAP_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const SECRET_NAME = /^bootstrap-token-([a-z0-9]{6})$/;

/** The keys of a bootstrap token secret. */
export const BOOTSTRAP_KEYS = {
  tokenId: 'token-id',
  tokenSecret: 'token-secret',
  expiration: 'expiration',
  usageAuthentication: 'usage-bootstrap-authentication',
  usageSigning: 'usage-bootstrap-signing',
  extraGroups: 'auth-extra-groups',
} as const;

/** The user and group every bootstrap token authenticates as. */
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';

/** The id and secret of a bootstrap token; undefined when the text is not one. */
export function parseBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

/** The token id a secret's name carries (`bootstrap-token-<id>`); undefined for any other name. */
export const tokenIdOfSecretName = (name: string): string | undefined => SECRET_NAME.exec(name)?.[1];

/** A value of the secret's `data`, decoded; '' when absent. */
export function bootstrapData(secret: KObject, key: string): string {
  const data = mapOf((secret as { data?: unknown }).data);
  return Object.hasOwn(data, key) ? Buffer.from(data[key] ?? '', 'base64').toString('utf8') : '';
}

/**
 * When the token expires (ms since the epoch; undefined: never), and whether it has at `now`:
 * an expiration that is not an RFC 3339 time counts as expired, as Kubernetes counts it.
 */
export function bootstrapExpiry(secret: KObject, now: number): { expired: boolean; at?: number } {
  const text = bootstrapData(secret, BOOTSTRAP_KEYS.expiration);
  if (text === '') return { expired: false };
  const at = isDateTime(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at)) return { expired: true };
  return { expired: at - now <= 0, at };
}

/**
 * The groups of a token: `system:bootstrappers` and the extra groups, sorted without repeats;
 * undefined when an extra group is not a `system:bootstrappers:` group (the token is refused).
 */
export function bootstrapGroups(secret: KObject): string[] | undefined {
  const groups = new Set([BOOTSTRAP_DEFAULT_GROUP]);
  const extra = bootstrapData(secret, BOOTSTRAP_KEYS.extraGroups);
  if (extra !== '') {
    for (const g of extra.split(',')) {
      if (!BOOTSTRAP_GROUP.test(g)) return undefined;
      groups.add(g);
    }
  }
  return [...groups].sort();
}
