// Client certificates (`--client-ca-file`): the certificate the client presented in the TLS
// handshake, verified here against the client CAs (the TLS layer asks for one but lets any
// through). The user is the subject's Common Name, the groups its Organizations, and the extra
// `<authentication group>/credential-id` the certificate's SHA-256 fingerprint. No certificate, or
// one without a Common Name, is no credential; an expired, not yet valid, wrongly used or unknown
// certificate is rejected.
//
// A connection keeps its certificate, so its verification is remembered per connection for as long
// as every certificate of the chain stays valid.

import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import type { AuthenticationResult, Authenticator } from './authenticator.ts';

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
}

export function x509Authenticator(roots: readonly X509Certificate[], credentialIdKey: string): Authenticator {
  const cache = new WeakMap<TLSSocket, Verified>();
  return {
    async authenticate(req: IncomingMessage) {
      const socket = req.socket;
      if (!(socket instanceof TLSSocket)) return { kind: 'no-credential' };
      const now = Date.now();
      const cached = cache.get(socket);
      if (cached && now >= cached.from && now <= cached.until) return cached.result;
      const peer = socket.getPeerCertificate(true);
      if (!peer || !peer.raw) return { kind: 'no-credential' };
      const verified = verify(peerChain(peer), peer.subject as Readonly<Record<string, string | string[] | undefined>>, roots, now, credentialIdKey, socket.authorized);
      cache.set(socket, verified);
      return verified.result;
    },
  };
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
function verify(
  chain: readonly X509Certificate[],
  subject: Readonly<Record<string, string | string[] | undefined>>,
  roots: readonly X509Certificate[],
  now: number,
  credentialIdKey: string,
  handshakeVerified = false,
): Verified {
  const leaf = chain[0]!;
  const id = `"${leaf.subject.replace(/\n/g, ',')}" (serial ${leaf.serialNumber})`;
  const reject = (why: string): Verified => ({ result: { kind: 'rejected', message: `verifying certificate ${id} failed: x509: ${why}` }, from: now, until: now });
  let from = -Infinity;
  let until = Infinity;
  const valid = (c: X509Certificate): string | undefined => {
    const nb = dateOf(c.validFrom);
    const na = dateOf(c.validTo);
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
      return { result: authenticated(leaf, subject, credentialIdKey), from, until };
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
  if (!lastProblem && chain.length === 1 && handshakeVerified) return { result: authenticated(leaf, subject, credentialIdKey), from, until };
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
