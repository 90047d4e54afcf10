// Secret-based (legacy) service-account tokens, as kube-apiserver still accepts them: a JWT the
// tokens controller puts in a Secret of type `<domain>/service-account-token`, signed with the
// service-account signing key, issued by `<product>/serviceaccount`, with no expiry and no
// audience (it is for the server's own audiences). With lookup on, the Secret must still hold the
// token and not be going away, the account must exist with the uid the token names, a Secret
// labelled `<domain>/legacy-token-invalid-since` is refused, and each use marks the Secret with
// `<domain>/legacy-token-last-used` (the date, written at most once a day).

import { createPublicKey, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { jose } from './jose.ts';
import type { Naming } from '../../naming.ts';
import { isStatusError } from '../../machinery/status.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { RegistryStore } from '../../registry/store.ts';
import type { AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';
import { intersect } from './bearer-token.ts';
import { serviceAccountGroups, serviceAccountUser, splitServiceAccountUser, type LiveObject, type ServiceAccountConfig, type TokenKey } from './service-account.ts';

/** The issuer, claim names and labels of legacy tokens in a naming profile. */
export interface LegacyTokenNames {
  /** `kubernetes/serviceaccount` (`orch/serviceaccount`). */
  issuer: string;
  claims: { namespace: string; serviceAccountName: string; serviceAccountUid: string; secretName: string };
  /** `kubernetes.io/legacy-token-last-used`: the date (UTC, YYYY-MM-DD) the token was last used. */
  lastUsedLabel: string;
  /** `kubernetes.io/legacy-token-invalid-since`: a Secret carrying it no longer authenticates. */
  invalidSinceLabel: string;
}

export function legacyTokenNames(n: Naming): LegacyTokenNames {
  const d = n.labelDomain;
  // The product as Kubernetes spells it in its issuer: `kubernetes`, not the `kube` of kube-system.
  const product = n.profile === 'kubernetes' ? 'kubernetes' : n.product;
  return {
    issuer: `${product}/serviceaccount`,
    claims: {
      namespace: `${d}/serviceaccount/namespace`,
      serviceAccountName: `${d}/serviceaccount/service-account.name`,
      serviceAccountUid: `${d}/serviceaccount/service-account.uid`,
      secretName: `${d}/serviceaccount/secret.name`,
    },
    lastUsedLabel: `${d}/legacy-token-last-used`,
    invalidSinceLabel: `${d}/legacy-token-invalid-since`,
  };
}

/** The account a token secret is for, and the secret. */
export interface LegacyTokenSubject {
  namespace: string;
  name: string;
  uid: string;
  secretName: string;
}

/** Signs the token of a token secret (the tokens controller's generator). */
export type LegacyTokenIssuer = (s: LegacyTokenSubject) => Promise<string>;

export function legacyTokenIssuer(names: LegacyTokenNames, signing: TokenKey): LegacyTokenIssuer {
  return async (s) => {
    const { SignJWT } = await jose();
    // No iat, exp, nbf, aud or jti: a legacy token lives as long as its Secret.
    return new SignJWT({
      [names.claims.namespace]: s.namespace,
      [names.claims.serviceAccountName]: s.name,
      [names.claims.serviceAccountUid]: s.uid,
      [names.claims.secretName]: s.secretName,
    } as JWTPayload)
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .setIssuer(names.issuer)
      .setSubject(serviceAccountUser(s.namespace, s.name))
      .sign(signing.key);
  };
}

/** What lookup reads of a token secret. */
export interface LegacyTokenSecret extends LiveObject {
  /** `data.token`, decoded. */
  token: Buffer | undefined;
  labels: Readonly<Record<string, string>>;
}

/** The reads and the one write lookup needs. */
export interface LegacyTokenLookup {
  secret(namespace: string, name: string): Promise<LegacyTokenSecret | undefined>;
  serviceAccount(namespace: string, name: string): Promise<LiveObject | undefined>;
  /** Sets a label on the secret with this uid (a secret replaced meanwhile is left alone). */
  label(namespace: string, name: string, uid: string, key: string, value: string): Promise<void>;
}

export interface LegacyTokenConfig {
  names: LegacyTokenNames;
  /** What tokens are verified with: the signing key and every `--service-account-key-file` key. */
  keys: readonly TokenKey[];
  /** The server's own audiences: a legacy token is for them. */
  apiAudiences: readonly string[];
  /** `--service-account-lookup`: absent, only the signature is checked. */
  lookup?: LegacyTokenLookup;
  log?: (message: string) => void;
  now?: () => number;
}

const rejected = (message: string): AuthenticationResult => ({ kind: 'rejected', message });
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** The UTC date of `ms` as YYYY-MM-DD. */
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

/** The token authenticator of legacy tokens, for the bearer-token union. */
export function legacyServiceAccountAuthenticator(c: LegacyTokenConfig): TokenAuthenticator {
  const keys = c.keys.map((k) => ({ ...k, key: k.key.type === 'private' ? createPublicKey(k.key) : k.key }));
  const now = () => c.now?.() ?? Date.now();
  const claims = c.names.claims;

  /** patchSecretWithLastUsedDate: today's date, unless the label already says today (or tomorrow, for a clock behind another server's). */
  async function markUsed(lookup: LegacyTokenLookup, namespace: string, name: string, secret: LegacyTokenSecret): Promise<void> {
    const t = now();
    const today = day(t);
    const last = secret.labels[c.names.lastUsedLabel];
    if (last === today || last === day(t + DAY_MS)) return;
    try {
      await lookup.label(namespace, name, secret.uid, c.names.lastUsedLabel, today);
    } catch (e) {
      c.log?.(`Failed to label legacy service account token ${namespace}/${name} with last-used date: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  return {
    async authenticateToken(token, asked) {
      const { compactVerify, decodeJwt, decodeProtectedHeader, errors: joseErrors } = await jose();
      let unverified: JWTPayload;
      let kid: string | undefined;
      try {
        unverified = decodeJwt(token);
        kid = decodeProtectedHeader(token).kid;
      } catch {
        return { kind: 'no-credential' };
      }
      if (unverified.iss !== c.names.issuer) return { kind: 'no-credential' };
      const candidates = kid ? keys.filter((k) => k.kid === kid) : keys;
      if (!candidates.length) return rejected('invalid signature, no keys found');
      let payload: JWTPayload | undefined;
      let failure = 'invalid signature';
      for (const k of candidates) {
        try {
          // The signature only: kube-apiserver holds a legacy token to no time (it carries none).
          await compactVerify(token, k.key, { algorithms: [k.alg] });
          payload = unverified;
          break;
        } catch (e) {
          failure = e instanceof joseErrors.JOSEError ? e.message : String(e);
        }
      }
      if (!payload) return rejected(failure);
      // Without an audience a legacy token is for the server's own; a review may ask for others.
      const tokenAudiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
      const own = tokenAudiences.length ? tokenAudiences : [...c.apiAudiences];
      const target = asked?.length ? asked : c.apiAudiences;
      const audiences = intersect(own, target);
      if (!audiences.length && c.apiAudiences.length) return rejected(`token audiences ${JSON.stringify(own)} is invalid for the target audiences ${JSON.stringify(target)}`);

      const sub = str(payload.sub);
      const namespace = str(payload[claims.namespace]);
      const secretName = str(payload[claims.secretName]);
      const name = str(payload[claims.serviceAccountName]);
      const uid = str(payload[claims.serviceAccountUid]);
      if (!sub) return rejected('sub claim is missing');
      if (!namespace) return rejected('namespace claim is missing');
      if (!secretName) return rejected('secretName claim is missing');
      if (!name) return rejected('serviceAccountName claim is missing');
      if (!uid) return rejected('serviceAccountUID claim is missing');
      const subject = splitServiceAccountUser(sub);
      if (!subject || subject.namespace !== namespace || subject.name !== name) return rejected('sub claim is invalid');

      if (c.lookup) {
        const secret = await c.lookup.secret(namespace, secretName);
        if (!secret || secret.deleting) return rejected('Token has been invalidated');
        const presented = Buffer.from(token, 'utf8');
        if (!secret.token || secret.token.length !== presented.length || !timingSafeEqual(secret.token, presented)) return rejected("Token does not match server's copy");
        const account = await c.lookup.serviceAccount(namespace, name);
        if (!account || account.deleting) return rejected(`ServiceAccount ${namespace}/${name} has been deleted`);
        if (account.uid !== uid) return rejected(`ServiceAccount UID (${account.uid}) does not match claim (${uid})`);
        if (secret.labels[c.names.invalidSinceLabel]) {
          await markUsed(c.lookup, namespace, secretName, secret);
          return rejected(
            `the token in secret ${namespace}/${secretName} for service account ${namespace}/${name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${c.names.invalidSinceLabel}' label from the secret to temporarily allow use of this token`,
          );
        }
        await markUsed(c.lookup, namespace, secretName, secret);
      }
      const user = { name: serviceAccountUser(namespace, name), uid, groups: serviceAccountGroups(namespace) };
      return { kind: 'authenticated', user, ...(audiences.length && { audiences }) };
    },
  };
}

/** Lookups served by the registry stores once they exist (before: nothing is found). */
export function storeLegacyTokenLookup(): { lookup: LegacyTokenLookup; bind(stores: readonly RegistryStore[]): void } {
  let secrets: RegistryStore | undefined;
  let accounts: RegistryStore | undefined;
  const read = async (store: RegistryStore | undefined, namespace: string, name: string): Promise<KObject | undefined> => {
    if (!store) return undefined;
    try {
      return await store.get(namespace, name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  };
  const live = (o: KObject): LiveObject => ({ uid: o.metadata.uid ?? '', deleting: o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null });
  return {
    lookup: {
      async secret(namespace, name) {
        const o = await read(secrets, namespace, name);
        if (!o) return undefined;
        const data = (o as KObject & { data?: Record<string, string> | null }).data;
        const token = typeof data?.token === 'string' ? Buffer.from(data.token, 'base64') : undefined;
        return { ...live(o), token, labels: o.metadata.labels ?? {} };
      },
      async serviceAccount(namespace, name) {
        const o = await read(accounts, namespace, name);
        return o && live(o);
      },
      async label(namespace, name, uid, key, value) {
        if (!secrets) return;
        try {
          await secrets.guaranteedUpdate(
            namespace,
            name,
            (current) => {
              // Gone or replaced since it was read: its token is another's, leave it.
              if (!current || current.metadata.uid !== uid) throw new SecretReplaced();
              current.metadata.labels = { ...current.metadata.labels, [key]: value };
              return current;
            },
            { dryRun: false },
          );
        } catch (e) {
          if (e instanceof SecretReplaced || (isStatusError(e) && e.code === 404)) return;
          throw e;
        }
      },
    },
    bind(stores) {
      secrets = stores.find((s) => s.def.group === '' && s.def.resource === 'secrets');
      accounts = stores.find((s) => s.def.group === '' && s.def.resource === 'serviceaccounts');
    },
  };
}

class SecretReplaced extends Error {}

/**
 * Legacy tokens beside the server's service-account tokens: verified with the same keys, for the
 * same audiences, with lookup when `--service-account-lookup` is on.
 */
export function legacyTokenConfig(sa: ServiceAccountConfig, naming: Naming, lookup: LegacyTokenLookup, log?: (message: string) => void): LegacyTokenConfig {
  return {
    names: legacyTokenNames(naming),
    keys: [sa.signing, ...sa.verification.filter((k) => k.kid !== sa.signing.kid)],
    apiAudiences: sa.apiAudiences,
    ...(sa.getter && { lookup }),
    ...(log && { log }),
    ...(sa.now && { now: sa.now }),
  };
}
