// The authenticating proxy (`--requestheader-*`), as kube-apiserver's request-header
// authenticator: a front proxy that authenticated the user itself names it in headers. The headers
// count only on a connection whose client certificate verifies against the proxy's own CAs
// (`--requestheader-client-ca-file`, not the client CAs) and, when `--requestheader-allowed-names`
// is given, whose Common Name is one of them.
//
// - No client certificate: no credential. A certificate that does not verify, or a name not
//   allowed: rejected (the union goes on; the same certificate may still be an ordinary client's).
// - The first username header with a value names the user; none: no credential of this kind.
// - Every value of every group header is a group; the first uid header with a value is the uid.
// - A header that starts with an extra prefix gives an extra: its name without the prefix,
//   lowercased and percent-decoded (kept as it is when the escapes are malformed), every value.
// - Once a user is found, the headers of all these kinds are removed from the request, so nothing
//   later reads them as the client's.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../request/user.ts';
import type { AuthenticationResult, Authenticator } from './authenticator.ts';
import { clientCertificateCheck, type Roots } from './x509.ts';

export interface RequestHeaderConfig {
  /** `--requestheader-client-ca-file`'s certificates, as they are now. */
  roots: Roots;
  /** Whether the TLS handshake's verdict was reached against these same CAs (see x509Authenticator). */
  trustHandshake?: () => boolean;
  /** `--requestheader-allowed-names`: empty, any Common Name. */
  allowedNames: readonly string[];
  /** `--requestheader-username-headers`, in order. */
  usernameHeaders: readonly string[];
  /** `--requestheader-group-headers`. */
  groupHeaders: readonly string[];
  /** `--requestheader-extra-headers-prefix`. */
  extraHeaderPrefixes: readonly string[];
  /** `--requestheader-uid-headers`, in order. */
  uidHeaders: readonly string[];
}

/**
 * Header names as the flags give them: trimmed, and none empty (kube-apiserver refuses an empty
 * one). Throws a start-up error naming the flag.
 */
export function requestHeaderNames(flag: string, names: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const n of names ?? []) {
    const t = n.trim();
    if (!t) throw new Error(`empty value in ${JSON.stringify(flag)}: ${JSON.stringify(names)}`);
    out.push(t);
  }
  return out;
}

type Request = Pick<IncomingMessage, 'socket' | 'headers' | 'headersDistinct' | 'rawHeaders'>;

export function requestHeaderAuthenticator(c: RequestHeaderConfig): Authenticator {
  const allowed = new Set(c.allowedNames);
  const usernames = c.usernameHeaders.map(lower);
  const groups = c.groupHeaders.map(lower);
  const uids = c.uidHeaders.map(lower);
  const prefixes = c.extraHeaderPrefixes.map(lower);
  const proxy = clientCertificateCheck(c.roots, c.trustHandshake ?? (() => true), (verdict, peer) => {
    if (!verdict.ok) return { kind: 'rejected', message: verdict.message };
    const cn = lastValue(peer.subject?.CN);
    if (allowed.size && !allowed.has(cn)) return { kind: 'rejected', message: `x509: subject with cn=${cn} is not in the allowed list` };
    // The proxy is trusted; who the user is comes from each request's headers.
    return { kind: 'authenticated', user: { name: cn, groups: [] } };
  });
  const known = (req: IncomingMessage): AuthenticationResult => {
    const verdict = proxy(req);
    if (verdict.kind !== 'authenticated') return verdict;
    return userOf(req, usernames, groups, uids, prefixes);
  };
  return { authenticate: async (req) => known(req), known };
}

function userOf(req: Request, usernames: readonly string[], groupHeaders: readonly string[], uidHeaders: readonly string[], prefixes: readonly string[]): AuthenticationResult {
  const distinct = req.headersDistinct;
  const first = (names: readonly string[]) => {
    for (const n of names) {
      const v = distinct[n]?.[0];
      if (v) return v;
    }
    return undefined;
  };
  const name = first(usernames);
  if (!name) return { kind: 'no-credential' };
  const groups = groupHeaders.flatMap((h) => (distinct[h] ?? []).filter((v) => v !== ''));
  const uid = first(uidHeaders);
  const extra: Record<string, string[]> = {};
  // Prefixes first, then the headers in the order they came, so each extra's values keep it.
  const names = headerNamesInOrder(req.rawHeaders);
  for (const p of prefixes) {
    for (const h of names) {
      if (!h.startsWith(p)) continue;
      const key = pathUnescape(h.slice(p.length));
      (extra[key] ??= []).push(...(distinct[h] ?? []));
    }
  }
  removeHeaders(req, (h) => usernames.includes(h) || groupHeaders.includes(h) || uidHeaders.includes(h) || prefixes.some((p) => h.startsWith(p)));
  const user: UserInfo = { name, groups, ...(uid !== undefined ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
  return { kind: 'authenticated', user };
}

const lower = (s: string) => s.toLowerCase();

const lastValue = (v: string | string[] | undefined): string => (v === undefined ? '' : Array.isArray(v) ? (v.at(-1) ?? '') : v);

/** Lowercased header names, each once, in the order they first came. */
function headerNamesInOrder(raw: readonly string[]): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) seen.add(raw[i]!.toLowerCase());
  return [...seen];
}

/** The headers `drop` names (lowercased) removed from every view Node keeps of them. */
function removeHeaders(req: Request, drop: (lowerName: string) => boolean): void {
  for (const h of Object.keys(req.headers)) if (drop(h)) delete req.headers[h];
  const distinct = req.headersDistinct;
  for (const h of Object.keys(distinct)) if (drop(h)) delete distinct[h];
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (drop(raw[i]!.toLowerCase())) raw.splice(i, 2);
}

/** As Go's url.PathUnescape: `%XX` escapes decoded as bytes; malformed escapes leave the text as it is. */
export function pathUnescape(s: string): string {
  if (!s.includes('%')) return s;
  if (/%(?![0-9a-fA-F]{2})/.test(s)) return s;
  const bytes: number[] = [];
  const utf8 = Buffer.from(s, 'utf8');
  for (let i = 0; i < utf8.length; i++) {
    if (utf8[i] === 0x25) {
      bytes.push(parseInt(String.fromCharCode(utf8[i + 1]!, utf8[i + 2]!), 16));
      i += 2;
    } else bytes.push(utf8[i]!);
  }
  return Buffer.from(bytes).toString('utf8');
}
