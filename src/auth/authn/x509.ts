// Client certificates (`--client-ca-file`): the certificate the client presented in the TLS
// handshake, verified here against the client CAs (the TLS layer asks for one but lets any
// through). The user is the subject's Common Name, the groups its Organizations, and the extra
// `<authentication group>/credential-id` the certificate's SHA-256 fingerprint. No certificate, or
// one without a Common Name, is no credential; an expired, not yet valid, wrongly used or unknown
// certificate is rejected.
//
// A connection keeps its certificate, so its verification is remembered per connection for as long
// as every certificate of the chain stays valid and the CA bundle stays the same. The
// authenticating proxy (request-header.ts) verifies its certificates the same way, against its own
// CAs.

import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import { frozen, type AuthenticationResult, type Authenticator } from './authenticator.ts';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';
/** Longest chain followed from the client's certificate to a CA. */
const MAX_CHAIN = 10;

/** The certificates of a PEM bundle (a CA file may hold several). */
export function parseCertificates(pem: string, source: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (!blocks.length) throw new Error(`${source}: no certificate found`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw new Error(`${source}: certificate ${i + 1} is not valid: ${(e as Error).message}`);
    }
  });
}

interface Verified {
  result: AuthenticationResult;
  /** The result holds while the time is within [from, until] (every certificate of the chain valid). */
  from: number;
  until: number;
  /** The CA certificates it was verified against: a new bundle means a new verification. */
  roots: readonly X509Certificate[];
  /** Whether the handshake's verdict could stand for it. */
  trusted: boolean;
}

/** The CA certificates now (a bundle read again when its file changes gives a new array). */
export type Roots = () => readonly X509Certificate[];

/** What a client certificate's chain is, checked against some CAs. */
export type ChainVerdict = { ok: true; from: number; until: number } | { ok: false; message: string; until: number };

const NO_CREDENTIAL: AuthenticationResult = Object.freeze({ kind: 'no-credential' });

/** A connection's client certificate, checked against `roots` and made into a result, remembered per connection. */
export function clientCertificateCheck(
  roots: Roots,
  trustHandshake: () => boolean,
  decide: (verdict: ChainVerdict, peer: DetailedPeerCertificate, leaf: X509Certificate) => AuthenticationResult,
): (req: IncomingMessage) => AuthenticationResult {
  const cache = new WeakMap<TLSSocket, Verified>();
  /** Connections whose client sent no certificate (a bearer token's): a handshake's peer does not change. */
  const without = new WeakSet<TLSSocket>();
  return (req) => {
    const socket = req.socket;
    if (!(socket instanceof TLSSocket) || without.has(socket)) return NO_CREDENTIAL;
    const now = Date.now();
    const current = roots();
    const trusted = socket.authorized && trustHandshake();
    const cached = cache.get(socket);
    if (cached && cached.roots === current && cached.trusted === trusted && now >= cached.from && now <= cached.until) return cached.result;
    const peer = socket.getPeerCertificate(true);
    if (!peer || !peer.raw) {
      without.add(socket);
      return NO_CREDENTIAL;
    }
    const chain = peerChain(peer);
    const verdict = verifyChain(chain, current, now, trusted);
    // Frozen: every request of the connection is handed this one answer.
    const result = frozen(decide(verdict, peer, chain[0]!));
    // A refusal stands too (a client certificate that is not the proxy's is refused by the proxy's
    // authenticator on each of its requests), until a certificate that was not yet valid becomes so.
    const verified: Verified = verdict.ok ? { result, from: verdict.from, until: verdict.until, roots: current, trusted } : { result, from: now, until: verdict.until, roots: current, trusted };
    cache.set(socket, verified);
    return verified.result;
  };
}

/**
 * Client certificates verified against `roots`. `trustHandshake` says whether the handshake's
 * verdict (`authorized`) was reached against these same CAs: false while the handshake also
 * accepts another bundle's certificates (the authenticating proxy's) or after the bundle changed.
 */
export function x509Authenticator(roots: Roots, credentialIdKey: string, trustHandshake: () => boolean = () => true): Authenticator {
  const check = clientCertificateCheck(roots, trustHandshake, (verdict, peer, leaf) =>
    verdict.ok ? authenticated(leaf, peer.subject as Readonly<Record<string, string | string[] | undefined>>, credentialIdKey) : { kind: 'rejected', message: verdict.message },
  );
  return { authenticate: async (req) => check(req), known: check };
}

/** The client's certificate, then the intermediates it sent. */
function peerChain(peer: DetailedPeerCertificate): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<DetailedPeerCertificate>();
  for (let c: DetailedPeerCertificate | undefined = peer; c?.raw && !seen.has(c) && chain.length < MAX_CHAIN; c = c.issuerCertificate) {
    seen.add(c);
    chain.push(new X509Certificate(c.raw));
  }
  return chain;
}

const dateOf = (s: string): number => Date.parse(s);
const goTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * `handshakeVerified`: the TLS handshake verified the client's chain against the same client CA
 * (the listener's `ca`). Some Node.js versions (24) give only the leaf from getPeerCertificate
 * even when the client sent intermediates: then a leaf that reaches no CA by itself is accepted on
 * the handshake's verdict, which checked the intermediates' signatures, validity and purpose.
 */
function verifyChain(chain: readonly X509Certificate[], roots: readonly X509Certificate[], now: number, handshakeVerified: boolean): ChainVerdict {
  const leaf = chain[0]!;
  const id = `"${leaf.subject.replace(/\n/g, ',')}" (serial ${leaf.serialNumber})`;
  /** Before this time the refusal stands: a certificate of the chain is valid only from then on. */
  let refusedUntil = Infinity;
  const reject = (why: string): ChainVerdict => ({ ok: false, message: `verifying certificate ${id} failed: x509: ${why}`, until: refusedUntil });
  let from = -Infinity;
  let until = Infinity;
  const valid = (c: X509Certificate): string | undefined => {
    const nb = dateOf(c.validFrom);
    const na = dateOf(c.validTo);
    if (now < nb) refusedUntil = Math.min(refusedUntil, nb - 1);
    if (now < nb) return `certificate has expired or is not yet valid: current time ${goTime(now)} is before ${goTime(nb)}`;
    if (now > na) return `certificate has expired or is not yet valid: current time ${goTime(now)} is after ${goTime(na)}`;
    from = Math.max(from, nb);
    until = Math.min(until, na);
    return undefined;
  };
  const leafProblem = valid(leaf);
  if (leafProblem) return reject(leafProblem);
  // Every certificate of the chain, the CA's included, must allow client authentication when it restricts its usages.
  const allowsClientAuth = (c: X509Certificate) => !c.keyUsage || c.keyUsage.includes(CLIENT_AUTH) || c.keyUsage.includes(ANY_EXTENDED_KEY_USAGE);
  if (!allowsClientAuth(leaf)) return reject('certificate specifies an incompatible key usage');
  const issues = (issuer: X509Certificate, c: X509Certificate) => c.checkIssued(issuer) && c.verify(issuer.publicKey);
  const intermediates = chain.slice(1);
  let current = leaf;
  let lastProblem: string | undefined;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    const root = roots.find((r) => issues(r, current));
    if (root) {
      const problem = valid(root);
      if (problem) return reject(problem);
      if (!allowsClientAuth(root)) return reject('certificate specifies an incompatible key usage');
      return { ok: true, from, until };
    }
    const next = intermediates.find((i) => i !== current && i.ca && issues(i, current));
    if (!next) break;
    const problem = valid(next);
    if (problem) {
      lastProblem = problem;
      break;
    }
    if (!allowsClientAuth(next)) return reject('certificate specifies an incompatible key usage');
    current = next;
  }
  if (!lastProblem && chain.length === 1 && handshakeVerified) return { ok: true, from, until };
  return reject(lastProblem ?? 'certificate signed by unknown authority');
}

function authenticated(leaf: X509Certificate, subject: Readonly<Record<string, string | string[] | undefined>>, credentialIdKey: string): AuthenticationResult {
  const values = (key: string): string[] => {
    const v = subject[key];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };
  // Go keeps the last Common Name of a subject that has several.
  const cn = values('CN').at(-1);
  // A certificate without a Common Name names nobody: not a credential of this kind.
  if (!cn) return { kind: 'no-credential' };
  const fingerprint = createHash('sha256').update(leaf.raw).digest('hex');
  return { kind: 'authenticated', user: { name: cn, groups: values('O'), extra: { [credentialIdKey]: [`X509SHA256=${fingerprint}`] } } };
}
