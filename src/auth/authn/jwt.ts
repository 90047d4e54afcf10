// A JWT authenticator (OpenID Connect ID tokens) built from one `jwt[]` entry of the
// AuthenticationConfiguration, as kube-apiserver's oidc authenticator behaves:
//
// - Discovery (`<url>/.well-known/openid-configuration`, or `discoveryURL`) over HTTPS with the
//   entry's CA runs in the background and is retried every 10 s until it succeeds; until then
//   tokens of this issuer are rejected ("authenticator not initialized"). The issuer discovery
//   returns must equal `url`.
// - The key set is fetched when first needed and again when no known key verifies a token (a new
//   `kid` after a rotation), at most once per `refreshIntervalMs`.
// - A token whose (unverified) `iss` is not this issuer is no credential for it: another token
//   authenticator may take it.
// - Checks in go-oidc's order: issuer, audience, expiry (no leeway), not-before (one minute of
//   leeway), algorithm, signature; then the claim mappings, required claims, claim validation
//   rules and user validation rules.
// - Nothing is remembered here: the cache in front of every token authenticator (token-cache.ts)
//   spares a repeated token its signature check and expressions.

import { X509Certificate } from 'node:crypto';
import type { importJWK, JWK } from 'jose';
import { jose } from './jose.ts';
import type { UserInfo } from '../../request/user.ts';
import type { AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';
import { userEnv, type CompiledJwtAuthenticator } from './jwt-config.ts';
import type { CelProgram } from '../../cel/environment.ts';
import { cel, type Cel } from '../../cel/load.ts';

// (`node:https` taken as CommonJS, as the webhook client takes it: its ES module facade costs a start.)
const { request: httpsRequest } = process.getBuiltinModule('node:https');

/** The expression language, loaded before any authenticator is made (their configuration compiled its expressions). */
let lang: Cel | undefined;

export interface JwtAuthenticatorOptions {
  /** Accepted `alg` values (default RS256). */
  signingAlgs?: readonly string[];
  /** The extra key of the token's `jti` (`<authentication group>/credential-id`). */
  credentialIdKey: string;
  log?: (message: string) => void;
  /** Least time between two key set fetches (default 10 s). */
  refreshIntervalMs?: number;
  /** Between failed discoveries (default 10 s, as kube-apiserver polls). */
  discoveryRetryMs?: number;
}

export interface JwtAuthenticator extends TokenAuthenticator {
  readonly issuer: string;
  /** Undefined once discovery succeeded; why not otherwise. */
  healthError(): string | undefined;
  /** Stops background work (discovery retries). */
  close(): void;
}

/** Leeway on `nbf`, as go-oidc allows it. */
const NBF_LEEWAY_MS = 60_000;
/** Largest discovery document or key set read. */
const MAX_DOCUMENT_BYTES = 1 << 20;
const FETCH_TIMEOUT_MS = 30_000;

interface Key {
  jwk: JWK;
  imported: Map<string, Promise<Awaited<ReturnType<typeof importJWK>> | undefined>>;
}

type Claims = Record<string, unknown>;

export function newJwtAuthenticator(c: CompiledJwtAuthenticator, o: JwtAuthenticatorOptions): JwtAuthenticator {
  lang ??= cel();
  const issuer = c.config.issuer;
  const url = issuer.url;
  const audiences = new Set(issuer.audiences ?? []);
  const algs = o.signingAlgs?.length ? o.signingAlgs : ['RS256'];
  const log = o.log ?? (() => {});
  const ca = issuer.certificateAuthority ? pemBlocks(issuer.certificateAuthority) : undefined;
  const refreshInterval = o.refreshIntervalMs ?? 10_000;
  const discoveryUrl = issuer.discoveryURL || `${url.replace(/\/+$/, '')}/.well-known/openid-configuration`;

  let jwksUri: string | undefined;
  let health: string | undefined = `oidc: authenticator for issuer ${JSON.stringify(url)} is not initialized`;
  let keys: Key[] | undefined;
  let lastFetch = -Infinity;
  let fetching: Promise<void> | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const discover = async (): Promise<void> => {
    try {
      const doc = (await getJson(discoveryUrl, ca)) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== url) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(url)} got ${JSON.stringify(doc.issuer)}`);
      if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri) throw new Error('provider did not return JWKS URL');
      jwksUri = doc.jwks_uri;
      health = undefined;
    } catch (e) {
      health = (e as Error).message;
      log(`oidc authenticator: initializing plugin: ${health}`);
      if (!closed) retry = setTimeout(() => void discover(), o.discoveryRetryMs ?? 10_000).unref();
    }
  };
  void discover();

  const fetchKeys = (): Promise<void> => {
    fetching ??= (async () => {
      lastFetch = Date.now();
      try {
        const set = (await getJson(jwksUri!, ca)) as { keys?: unknown };
        if (!Array.isArray(set.keys)) throw new Error('oidc: the key set has no keys');
        keys = set.keys.filter((k): k is JWK => typeof k === 'object' && k !== null).map((jwk) => ({ jwk, imported: new Map() }));
      } finally {
        fetching = undefined;
      }
    })();
    return fetching;
  };

  const keyFor = (k: Key, alg: string) => {
    let p = k.imported.get(alg);
    if (!p) {
      p = jose().then(({ importJWK }) => importJWK({ ...k.jwk, alg }, alg)).catch(() => undefined);
      k.imported.set(alg, p);
    }
    return p;
  };

  /** The payload, verified by a key of the set (fetched afresh once when none verifies). */
  const verifySignature = async (token: string, kid: string | undefined, alg: string): Promise<Uint8Array> => {
    const { compactVerify } = await jose();
    const attempt = async (): Promise<Uint8Array | undefined> => {
      for (const k of keys ?? []) {
        if (kid !== undefined && kid !== '' && k.jwk.kid !== kid) continue;
        const key = await keyFor(k, alg);
        if (!key) continue;
        try {
          return (await compactVerify(token, key, { algorithms: [alg] })).payload;
        } catch {
          /* another key may verify it */
        }
      }
      return undefined;
    };
    if (keys) {
      const payload = await attempt();
      if (payload) return payload;
    }
    // A key we do not know (or no key yet): fetch the set again, but not more often than the interval.
    if (!keys || Date.now() - lastFetch >= refreshInterval) {
      try {
        await fetchKeys();
      } catch (e) {
        throw new Error(`failed to verify signature: fetching keys ${(e as Error).message}`);
      }
      const payload = await attempt();
      if (payload) return payload;
    }
    throw new Error('failed to verify signature: failed to verify id token signature');
  };

  const authenticate = async (token: string, claims: Claims, header: Header): Promise<UserInfo> => {
    if (health !== undefined || !jwksUri) throw new Error('oidc: authenticator not initialized');
    // go-oidc's checks, cheap ones first.
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
    if (audiences.size === 1 && !aud.includes([...audiences][0]!)) throw new Error(`oidc: verify token: oidc: expected audience ${JSON.stringify([...audiences][0])} got ${goStrings(aud)}`);
    const now = Date.now();
    const exp = numericDate(claims.exp, 'exp');
    if (exp === undefined || exp * 1000 < now) throw new Error(`oidc: verify token: oidc: token is expired (Token Expiry: ${goTime(exp)})`);
    const nbf = numericDate(claims.nbf, 'nbf');
    if (nbf !== undefined && now + NBF_LEEWAY_MS < nbf * 1000) throw new Error(`oidc: verify token: oidc: current time ${goTime(now / 1000)} before the nbf (not before) time: ${goTime(nbf)}`);
    numericDate(claims.iat, 'iat');
    if (!algs.includes(header.alg)) throw new Error(`oidc: verify token: oidc: id token signed with unsupported algorithm, expected ${goStrings(algs)} got ${JSON.stringify(header.alg)}`);
    try {
      await verifySignature(token, header.kid, header.alg);
    } catch (e) {
      throw new Error(`oidc: verify token: ${(e as Error).message}`);
    }
    if (audiences.size > 1 && !aud.some((a) => audiences.has(a))) throw new Error(`oidc: verify token: oidc: expected audience in ${goStrings([...audiences].sort())} got ${goStrings(aud)}`);
    return mapUser(c, claims, o.credentialIdKey);
  };

  return {
    issuer: url,
    healthError: () => health,
    close() {
      closed = true;
      if (retry) clearTimeout(retry);
    },
    async authenticateToken(token): Promise<AuthenticationResult> {
      const parsed = parseUnverified(token);
      // Not issued by this issuer (or not a JWT at all): another authenticator may know it.
      if (!parsed || parsed.claims.iss !== url) return { kind: 'no-credential' };
      try {
        return { kind: 'authenticated', user: await authenticate(token, parsed.claims, parsed.header) };
      } catch (e) {
        if (e instanceof Error) return { kind: 'rejected', message: e.message };
        throw e;
      }
    },
  };
}

interface Header {
  alg: string;
  kid?: string;
}

/** The header and claims of a compact JWS, not yet verified (never trusted before the signature is). */
function parseUnverified(token: string): { header: Header; claims: Claims } | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
    const h = header as { alg?: unknown; kid?: unknown };
    return { header: { alg: typeof h.alg === 'string' ? h.alg : '', kid: typeof h.kid === 'string' ? h.kid : undefined }, claims: claims as Claims };
  } catch {
    return undefined;
  }
}

/** A NumericDate claim in seconds (go-oidc reads numbers and numeric strings); undefined when absent. */
function numericDate(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new Error(`oidc: verify token: oidc: malformed jwt: oidc: failed to unmarshal claims: cannot read "${name}" as a number`);
  return Math.trunc(n);
}

const goStrings = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
const goTime = (seconds: number | undefined) =>
  seconds === undefined ? '0001-01-01 00:00:00 +0000 UTC' : new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000 UTC');

// ------------------------------------------------------------------------------------------------
// Claims → user

const evaluate = (program: CelProgram, activation: Record<string, unknown>): unknown => program.evaluate(activation, { costLimit: lang!.cost.DEFAULT_PER_CALL_LIMIT }).value;

function stringClaim(claims: Claims, name: string, what: string): string {
  if (!(name in claims)) throw new Error(`oidc: parse ${what} ${JSON.stringify(name)}: claim not present`);
  const v = claims[name];
  if (typeof v !== 'string') throw new Error(`oidc: parse ${what} ${JSON.stringify(name)}: json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
  return v;
}

const jsonKind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v);

/** A string or list of strings from an expression, empty strings dropped, as kube-apiserver converts it. */
function stringList(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (Array.isArray(v)) {
    if (!v.every((x) => typeof x === 'string')) throw new Error('expression must return a string or a list of strings');
    return v.filter((x) => x !== '');
  }
  throw new Error('expression must return a string or a list of strings');
}

function run<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof lang!.errors.CelEvaluationError || e instanceof Error) throw new Error(`oidc: ${what}: ${e.message}`);
    throw e;
  }
}

function mapUser(c: CompiledJwtAuthenticator, claims: Claims, credentialIdKey: string): UserInfo {
  const m = c.config.claimMappings;
  let activation: { claims: unknown } | undefined;
  const act = () => (activation ??= { claims: lang!.uses.jsonToValue(claims) });

  // Username.
  let name: string;
  if (c.username) {
    const v = run('error evaluating username claim expression', () => evaluate(c.username!, act()));
    if (typeof v !== 'string') throw new Error('oidc: error evaluating username claim expression: username claim expression must return a string');
    if (v === '') throw new Error('oidc: empty username via CEL expression is not allowed');
    name = v;
  } else {
    const claim = m.username!.claim!;
    const value = stringClaim(claims, claim, 'username claims');
    if (claim === 'email' && 'email_verified' in claims) {
      if (typeof claims.email_verified !== 'boolean') throw new Error(`oidc: parse 'email_verified' claim: json: cannot unmarshal ${jsonKind(claims.email_verified)} into Go value of type bool`);
      if (!claims.email_verified) throw new Error('oidc: email not verified');
    }
    name = (m.username!.prefix ?? '') + value;
    if (name === '') throw new Error('oidc: empty username via claim is not allowed');
  }

  // Groups: the claim when present, else the expression.
  let groups: string[] = [];
  const groupsClaim = m.groups?.claim;
  if (groupsClaim && groupsClaim in claims) {
    const v = claims[groupsClaim];
    const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
    if (!list) throw new Error(`oidc: parse groups claim ${JSON.stringify(groupsClaim)}: json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
    groups = list.map((g) => (m.groups!.prefix ?? '') + g);
  } else if (c.groups) {
    groups = run('error evaluating group claim expression', () => stringList(evaluate(c.groups!, act())));
  }

  // UID.
  let uid = '';
  if (m.uid?.claim) uid = stringClaim(claims, m.uid.claim, 'uid claim');
  else if (c.uid) {
    const v = run('error evaluating uid claim expression', () => evaluate(c.uid!, act()));
    if (typeof v !== 'string') throw new Error('oidc: error evaluating uid claim expression: uid claim expression must return a string');
    uid = v;
  }

  // Extra: the token's id, then the mappings.
  const extra: Record<string, string[]> = {};
  if (typeof claims.jti === 'string') extra[credentialIdKey] = [`JTI=${claims.jti}`];
  for (const e of c.extra) {
    const values = run(`error evaluating extra claim expression: ${e.expression}`, () => stringList(evaluate(e.program, act())));
    if (values.length) extra[e.key] = values;
  }

  // Required claims, then the claim rules, then the user rules.
  for (const [claim, want] of c.requiredClaims) {
    if (!(claim in claims)) throw new Error(`oidc: required claim ${claim} not present in ID token`);
    const got = claims[claim];
    if (typeof got !== 'string') throw new Error(`oidc: parse claim ${claim}: json: cannot unmarshal ${jsonKind(got)} into Go value of type string`);
    if (got !== want) throw new Error(`oidc: required claim ${claim} value does not match. Got = ${got}, want = ${want}`);
  }
  for (const rule of c.claimRules) {
    const v = run('error evaluating claim validation expression', () => evaluate(rule.program, act()));
    if (typeof v !== 'boolean') throw new Error('oidc: error evaluating claim validation expression: validation expression must return a boolean');
    if (!v) throw new Error(`oidc: error evaluating claim validation expression: validation expression '${rule.expression}' failed: ${rule.message ?? ''}`);
  }
  const user: UserInfo = { name, groups, ...(uid && { uid }), ...(Object.keys(extra).length && { extra }) };
  if (c.userRules.length) {
    const env = userEnv();
    const activation = env.activation({ user: { username: name, uid, groups, extra } });
    for (const rule of c.userRules) {
      const v = run('error evaluating user info validation rule', () => evaluate(rule.program, activation));
      if (typeof v !== 'boolean') throw new Error('oidc: error evaluating user info validation rule: validation expression must return a boolean');
      if (!v) throw new Error(`oidc: error evaluating user info validation rule: validation expression '${rule.expression}' failed: ${rule.message ?? ''}`);
    }
  }
  return user;
}

// ------------------------------------------------------------------------------------------------
// Fetching

function pemBlocks(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  for (const b of blocks) new X509Certificate(b);
  return blocks;
}

/** GET a JSON document over HTTPS with the issuer's CA (system roots without one), bounded in size and time. */
function getJson(url: string, ca: string[] | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return reject(new Error(`invalid URL ${JSON.stringify(url)}`));
    }
    if (u.protocol !== 'https:') return reject(new Error(`${url}: only https is fetched`));
    const req = httpsRequest(u, { method: 'GET', headers: { Accept: 'application/json' }, timeout: FETCH_TIMEOUT_MS, ...(ca && { ca }) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > MAX_DOCUMENT_BYTES) {
          req.destroy(new Error(`${url}: response larger than ${MAX_DOCUMENT_BYTES} bytes`));
          return;
        }
        chunks.push(d);
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`${res.statusCode} ${res.statusMessage ?? ''}: ${body.slice(0, 200)}`));
        try {
          resolve(JSON.parse(body));
        } catch (e) {
          reject(new Error(`${url}: ${(e as Error).message}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}
