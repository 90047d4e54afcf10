// Bootstrap tokens (`--enable-bootstrap-token-auth`): a bearer token `<token-id>.<token-secret>`
// is the Secret `bootstrap-token-<token-id>` of the system namespace, of the bootstrap token type,
// holding that secret (compared in constant time), not being deleted, not expired, and marked
// `usage-bootstrap-authentication: "true"`. Its user is `system:bootstrap:<token-id>` in
// `system:bootstrappers` and the secret's extra groups. As kube-apiserver's, the authenticator
// answers every mismatch as "not mine" (no-credential): the bearer union then refuses the token
// (401) like any token nobody knows, and nothing about the secret reaches the client.

import { timingSafeEqual } from 'node:crypto';
import type { KObject } from '../../machinery/meta.ts';
import {
  BOOTSTRAP_KEYS,
  BOOTSTRAP_TOKEN_NAME_PREFIX,
  BOOTSTRAP_USER_PREFIX,
  bootstrapData,
  bootstrapExpiry,
  bootstrapGroups,
  parseBootstrapToken,
} from '../../registry/kinds/bootstrap-token.ts';
import type { AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';

export interface BootstrapTokenSource {
  /** The system namespace's Secret of this name; undefined when there is none. */
  secret(name: string): Promise<KObject | undefined>;
  /** The bootstrap token secret type of the naming profile (`bootstrap.orch.io/token`). */
  secretType: string;
  /** The clock (ms since the epoch); tests may move it. */
  now?: () => number;
}

const NOT_MINE: AuthenticationResult = { kind: 'no-credential' };

/** Go's subtle.ConstantTimeCompare: strings of different lengths differ at once. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function bootstrapTokenAuthenticator(source: BootstrapTokenSource): TokenAuthenticator {
  const now = source.now ?? Date.now;
  return {
    async authenticateToken(token) {
      const parsed = parseBootstrapToken(token);
      if (!parsed) return NOT_MINE;
      let secret: KObject | undefined;
      try {
        secret = await source.secret(`${BOOTSTRAP_TOKEN_NAME_PREFIX}${parsed.id}`);
      } catch (e) {
        // Storage failing is an error, not an unknown token (the name only, never the token).
        return { kind: 'rejected', message: `bootstrap token ${parsed.id}: ${e instanceof Error ? e.message : String(e)}` };
      }
      if (!secret) return NOT_MINE;
      if (secret.metadata.deletionTimestamp) return NOT_MINE;
      const s = secret as KObject & { type?: unknown; data?: unknown };
      if (s.type !== source.secretType || s.data === undefined || s.data === null) return NOT_MINE;
      if (!sameSecret(bootstrapData(secret, BOOTSTRAP_KEYS.tokenSecret), parsed.secret)) return NOT_MINE;
      const id = bootstrapData(secret, BOOTSTRAP_KEYS.tokenId);
      if (id !== parsed.id) return NOT_MINE;
      if (bootstrapExpiry(secret, now()).expired) return NOT_MINE;
      if (bootstrapData(secret, BOOTSTRAP_KEYS.usageAuthentication) !== 'true') return NOT_MINE;
      const groups = bootstrapGroups(secret);
      if (!groups) return NOT_MINE;
      return { kind: 'authenticated', user: { name: `${BOOTSTRAP_USER_PREFIX}${id}`, groups } };
    },
  };
}
