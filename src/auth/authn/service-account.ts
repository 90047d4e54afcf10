// Service-account tokens: JWTs the server signs (TokenRequest) and verifies as bearer tokens, as
// kube-apiserver's serviceaccount package does. A token is ours when its issuer is one of the
// server's (`--service-account-issuer`); it is then verified with every public key the server
// trusts (`--service-account-key-file`), its audiences must meet the server's (`--api-audiences`),
// and with lookup on (`--service-account-lookup`) the account (and the object the token is bound
// to) must still exist with the uid the token names.

import { createHash, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { JWTPayload } from 'jose';
import { jose } from './jose.ts';
import { dns1123Label, dns1123Subdomain } from '../../machinery/meta.ts';
import type { UserInfo } from '../../request/user.ts';
import type { AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS = 'system:serviceaccounts';

/** The user name of a service account. */
export const serviceAccountUser = (namespace: string, name: string): string => `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;

/** `system:serviceaccount:<namespace>:<name>` with a valid namespace and name, else undefined. */
export function splitServiceAccountUser(user: string): { namespace: string; name: string } | undefined {
  if (!user.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = user.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (dns1123Label(namespace).length || dns1123Subdomain(name).length) return undefined;
  return { namespace, name };
}

/** The groups every service account of `namespace` is in. */
export const serviceAccountGroups = (namespace: string): string[] => [ALL_SERVICE_ACCOUNTS, `${ALL_SERVICE_ACCOUNTS}:${namespace}`];

/** The object a token may be bound to (TokenRequest's boundObjectRef), as stored in the token. */
export interface BoundObject {
  kind: 'Pod' | 'Secret' | 'Node';
  name: string;
  uid: string;
}

/** What the server knows of an object a token names, for lookup; undefined when it is gone. */
export interface LiveObject {
  uid: string;
  /** Being deleted (a deletion timestamp in the past). */
  deleting: boolean;
}

/** Reads what lookup needs: the account, and the object a token is bound to. */
export interface ServiceAccountGetter {
  serviceAccount(namespace: string, name: string): Promise<LiveObject | undefined>;
  /** A Pod or Secret in the namespace, or a Node (namespace ignored). */
  bound(kind: BoundObject['kind'], namespace: string, name: string): Promise<LiveObject | undefined>;
}

/** A signing or verification key with its algorithm and key id, as kube-apiserver derives them. */
export interface TokenKey {
  key: KeyObject;
  alg: string;
  kid: string;
}

/** The algorithm a key signs with: RS256 for RSA, ES256/384/512 by curve. */
function algorithmOf(key: KeyObject): string {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') return 'RS256';
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
  }
  throw new Error(`unsupported key type ${type}${key.asymmetricKeyDetails?.namedCurve ? ` (${key.asymmetricKeyDetails.namedCurve})` : ''}`);
}

/** The key id kube-apiserver puts in its tokens: the base64url SHA-256 of the public key's DER (PKIX). */
function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * Every key of a PEM text (private keys count for their public halves, certificates are
 * skipped), as `--service-account-key-file` takes them. Throws when there is none.
 */
export function parseVerificationKeys(pem: string, source: string): TokenKey[] {
  const keys: TokenKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const type = m[1]!;
    if (type === 'CERTIFICATE') continue;
    let key: KeyObject;
    try {
      key = type.includes('PRIVATE') ? createPublicKey(createPrivateKey(m[0])) : createPublicKey(m[0]);
    } catch (e) {
      throw new Error(`${source}: not a key: ${(e as Error).message}`);
    }
    keys.push({ key, alg: algorithmOf(key), kid: keyIdOf(key) });
  }
  if (!keys.length) throw new Error(`${source}: no public keys found`);
  return keys;
}

/** The private key of `--service-account-signing-key-file` (or a generated one). */
export function parseSigningKey(pem: string, source: string): TokenKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    throw new Error(`${source}: not a private key: ${(e as Error).message}`);
  }
  return { key, alg: algorithmOf(key), kid: keyIdOf(createPublicKey(key)) };
}

export function readKeyFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${flag}: ${(e as Error).message}`);
  }
}

export interface IssueRequest {
  namespace: string;
  name: string;
  uid: string;
  audiences: readonly string[];
  expirationSeconds: number;
  bound?: BoundObject;
  /** Epoch seconds; now by default. */
  now?: number;
}

export interface ServiceAccountTokens {
  /** The issuers whose tokens are accepted; the first names the tokens this server signs. */
  readonly issuers: readonly string[];
  /** The audiences the server accepts tokens for, and gives tokens that name none. */
  readonly apiAudiences: readonly string[];
  /** The longest lifetime a requested token gets (seconds). */
  readonly maxExpirationSeconds: number | undefined;
  /** A signed token, and when it expires (epoch seconds). */
  issue(r: IssueRequest): Promise<{ token: string; expiresAt: number }>;
}

export interface ServiceAccountConfig {
  issuers: readonly string[];
  apiAudiences: readonly string[];
  signing: TokenKey;
  /** What tokens are verified with (the signing key's public half is always among them). */
  verification: readonly TokenKey[];
  maxExpirationSeconds?: number;
  /** The private claim's name: `kubernetes.io` (or the profile's label domain). */
  claimKey: string;
  /** The extra keys of the identity: `<authentication group>/credential-id`, pod and node names. */
  extraPrefix: string;
  /** `--service-account-lookup`: absent, tokens of deleted accounts are not revoked. */
  getter?: ServiceAccountGetter;
  now?: () => number;
}

/** kube-apiserver's allowance for clocks that disagree, for `nbf` and `iat`. */
const LEEWAY_SECONDS = 60;

/** The issuing side. */
export function serviceAccountTokens(c: ServiceAccountConfig): ServiceAccountTokens {
  return {
    issuers: c.issuers,
    apiAudiences: c.apiAudiences,
    maxExpirationSeconds: c.maxExpirationSeconds,
    async issue(r) {
      const now = r.now ?? Math.floor((c.now?.() ?? Date.now()) / 1000);
      const exp = now + r.expirationSeconds;
      const claim: Record<string, unknown> = { namespace: r.namespace, serviceaccount: { name: r.name, uid: r.uid } };
      if (r.bound) claim[r.bound.kind.toLowerCase()] = { name: r.bound.name, uid: r.bound.uid };
      const { SignJWT } = await jose();
      const token = await new SignJWT({ [c.claimKey]: claim } as JWTPayload)
        .setProtectedHeader({ alg: c.signing.alg, kid: c.signing.kid })
        .setIssuer(c.issuers[0]!)
        .setSubject(serviceAccountUser(r.namespace, r.name))
        .setAudience([...r.audiences])
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(c.signing.key);
      return { token, expiresAt: exp };
    },
  };
}

interface PrivateClaim {
  namespace?: unknown;
  serviceaccount?: { name?: unknown; uid?: unknown };
  pod?: { name?: unknown; uid?: unknown };
  secret?: { name?: unknown; uid?: unknown };
  node?: { name?: unknown; uid?: unknown };
}

const rejected = (message: string): AuthenticationResult => ({ kind: 'rejected', message });
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The verifying side: a token authenticator for the bearer-token union. */
export function serviceAccountAuthenticator(c: ServiceAccountConfig): TokenAuthenticator {
  const keys = [c.signing, ...c.verification.filter((k) => k.kid !== c.signing.kid)].map((k) => ({ ...k, key: k.key.type === 'private' ? createPublicKey(k.key) : k.key }));
  const nowSeconds = () => Math.floor((c.now?.() ?? Date.now()) / 1000);
  return {
    async authenticateToken(token, asked) {
      const { decodeJwt, decodeProtectedHeader, errors: joseErrors, jwtVerify } = await jose();
      // Not a JWT of one of our issuers: another authenticator's to judge.
      let unverified: JWTPayload;
      let kid: string | undefined;
      try {
        unverified = decodeJwt(token);
        kid = decodeProtectedHeader(token).kid;
      } catch {
        return { kind: 'no-credential' };
      }
      if (typeof unverified.iss !== 'string' || !c.issuers.includes(unverified.iss)) return { kind: 'no-credential' };
      const candidates = kid ? keys.filter((k) => k.kid === kid) : keys;
      let payload: JWTPayload | undefined;
      let failure = 'invalid signature';
      for (const k of candidates.length ? candidates : keys) {
        try {
          ({ payload } = await jwtVerify(token, k.key, { algorithms: [k.alg], clockTolerance: LEEWAY_SECONDS, currentDate: new Date(nowSeconds() * 1000) }));
          break;
        } catch (e) {
          if (e instanceof joseErrors.JWTExpired) return rejected('service account token has expired');
          if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'nbf') return rejected('service account token is not valid yet');
          failure = e instanceof joseErrors.JOSEError ? e.message : String(e);
        }
      }
      if (!payload) return rejected(`invalid bearer token, ${failure}`);
      // Expired to the second, as kube-apiserver checks it (the leeway is for nbf and iat only).
      if (typeof payload.exp !== 'number') return rejected('service account token has no expiry');
      if (nowSeconds() > payload.exp) return rejected('service account token has expired');
      if (typeof payload.iat === 'number' && payload.iat > nowSeconds() + LEEWAY_SECONDS) return rejected('service account token is issued in the future');
      const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
      // For the audiences asked (a TokenReview's), or the server's own.
      const target = asked?.length ? asked : c.apiAudiences;
      const accepted = audiences.filter((a) => target.includes(a));
      if (!accepted.length) return rejected(`token audiences ${JSON.stringify(audiences)} is invalid for the target audiences ${JSON.stringify(target)}`);
      const claim = payload[c.claimKey] as PrivateClaim | undefined;
      const namespace = str(claim?.namespace);
      const name = str(claim?.serviceaccount?.name);
      const uid = str(claim?.serviceaccount?.uid);
      if (!claim || !namespace || !name || !uid) return rejected('service account token claims are missing the namespace, name or uid of the service account');
      if (payload.sub !== serviceAccountUser(namespace, name)) return rejected('service account token subject does not match its claims');
      const bound = (['pod', 'secret', 'node'] as const).flatMap((k) => {
        const ref = claim[k];
        const refName = str(ref?.name);
        const refUid = str(ref?.uid);
        return ref && refName && refUid ? [{ kind: (k === 'pod' ? 'Pod' : k === 'secret' ? 'Secret' : 'Node') as BoundObject['kind'], name: refName, uid: refUid }] : [];
      });
      if (c.getter) {
        const sa = await c.getter.serviceAccount(namespace, name);
        if (!sa || sa.deleting) return rejected(`service account ${namespace}/${name} has been deleted`);
        if (sa.uid !== uid) return rejected(`service account UID (${sa.uid}) does not match claim (${uid})`);
        for (const b of bound) {
          const live = await c.getter.bound(b.kind, namespace, b.name);
          const what = `${b.kind.toLowerCase()} ${b.kind === 'Node' ? '' : `${namespace}/`}${b.name}`;
          if (!live || live.deleting) return rejected(`${what} has been deleted`);
          if (live.uid !== b.uid) return rejected(`${what} UID (${live.uid}) does not match claim (${b.uid})`);
        }
      }
      const extra: Record<string, string[]> = {};
      if (typeof payload.jti === 'string' && payload.jti) extra[`${c.extraPrefix}/credential-id`] = [`JTI=${payload.jti}`];
      for (const b of bound) {
        if (b.kind === 'Secret') continue;
        const k = b.kind.toLowerCase();
        extra[`${c.extraPrefix}/${k}-name`] = [b.name];
        extra[`${c.extraPrefix}/${k}-uid`] = [b.uid];
      }
      const user: UserInfo = { name: serviceAccountUser(namespace, name), uid, groups: serviceAccountGroups(namespace), ...(Object.keys(extra).length && { extra }) };
      return { kind: 'authenticated', user, audiences: accepted };
    },
  };
}
