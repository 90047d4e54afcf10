// Kubernetes' URL library: url(), isURL() and the accessors getScheme, getHost, getHostname,
// getPort, getEscapedPath, getQuery. A URL is valid when Go's url.ParseRequestURI accepts it: an
// absolute URI or an absolute path. The parser below follows Go's net/url on the points these
// functions expose (scheme, authority, port, escapes, query in "matrix" form).

import { celError, type Registrar } from './register.ts';

export class CelURL {
  readonly scheme: string;
  readonly host: string;
  /** The path as written (still escaped), '' when absent. */
  readonly rawPath: string;
  readonly rawQuery: string;
  readonly opaque: string;
  constructor(
    scheme: string,
    host: string,
    rawPath: string,
    rawQuery: string,
    opaque: string,
  ) {
    this.scheme = scheme;
    this.host = host;
    this.rawPath = rawPath;
    this.rawQuery = rawQuery;
    this.opaque = opaque;
  }
}

const HEX = /^[0-9a-fA-F]{2}$/;

function checkEscapes(s: string): string | undefined {
  for (let i = s.indexOf('%'); i >= 0; i = s.indexOf('%', i + 1)) {
    const hex = s.slice(i + 1, i + 3);
    if (!HEX.test(hex)) return `invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`;
  }
  return undefined;
}

function unescape(s: string, plusIsSpace: boolean): string | undefined {
  if (checkEscapes(s)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '+' && plusIsSpace) bytes.push(0x20);
    else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function validPort(port: string): boolean {
  return /^\d*$/.test(port);
}

/** Go's parseHost: brackets for IPv6, then an optional all-digit port. */
function checkHost(host: string): string | undefined {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return "missing ']' in host";
    const rest = host.slice(end + 1);
    if (rest !== '' && !(rest.startsWith(':') && validPort(rest.slice(1)))) return `invalid port ${JSON.stringify(rest)} after host`;
    return undefined;
  }
  const colon = host.indexOf(':');
  if (colon >= 0 && !validPort(host.slice(colon + 1))) return `invalid port ${JSON.stringify(host.slice(colon))} after host`;
  if (/[\s"<>`{}|\\^]/.test(host)) return `invalid character ${JSON.stringify(host.match(/[\s"<>`{}|\\^]/)![0])} in host name`;
  return checkEscapes(host);
}

/** url.ParseRequestURI, then (for the fragment) url.Parse: the URL, or Go's error text. */
export function parseURL(input: string): CelURL | string {
  const fail = (msg: string) => `parse ${JSON.stringify(input)}: ${msg}`;
  if (/[\x00-\x1f\x7f]/.test(input)) return fail('net/url: invalid control character in URL');
  if (input === '') return fail('empty url');
  let rest = input;
  let scheme = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(input);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = input.slice(m[0].length);
  } else if (input.startsWith(':')) return fail('missing protocol scheme');
  // ParseRequestURI keeps '#' in the path; url.Parse, which Kubernetes reads the parts from, drops the fragment.
  const hash = rest.indexOf('#');
  const withoutFragment = hash >= 0 ? rest.slice(0, hash) : rest;
  let rawQuery = '';
  let path = withoutFragment;
  const q = withoutFragment.indexOf('?');
  if (q >= 0) {
    rawQuery = withoutFragment.slice(q + 1);
    path = withoutFragment.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') return new CelURL(scheme, '', '', rawQuery, path);
    return fail('invalid URI for request');
  }
  let host = '';
  if (scheme !== '' && path.startsWith('//')) {
    const authority = path.slice(2);
    const slash = authority.indexOf('/');
    const auth = slash >= 0 ? authority.slice(0, slash) : authority;
    path = slash >= 0 ? authority.slice(slash) : '';
    const at = auth.lastIndexOf('@');
    host = at >= 0 ? auth.slice(at + 1) : auth;
    const err = checkHost(host);
    if (err) return fail(err);
  }
  const err = checkEscapes(path);
  if (err) return fail(err);
  return new CelURL(scheme, host, path, rawQuery, '');
}

function hostname(u: CelURL): string {
  if (u.host.startsWith('[')) return u.host.slice(1, u.host.indexOf(']'));
  const colon = u.host.indexOf(':');
  return colon >= 0 ? u.host.slice(0, colon) : u.host;
}

function port(u: CelURL): string {
  const h = u.host.startsWith('[') ? u.host.slice(u.host.indexOf(']') + 1) : u.host;
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(colon + 1) : '';
}

const PATH_SAFE = /[A-Za-z0-9\-_.~$&+,/:;=@]/;

/** Go's EscapedPath: the path as written when that is a valid encoding, else the path re-escaped. */
function escapedPath(u: CelURL): string {
  const raw = u.rawPath;
  let valid = true;
  for (let i = 0; i < raw.length && valid; i++) {
    const c = raw[i]!;
    if (c === '%') {
      valid = HEX.test(raw.slice(i + 1, i + 3));
      i += 2;
    } else if (!PATH_SAFE.test(c) && c !== '!' && c !== '(' && c !== ')' && c !== '*' && c !== "'") valid = false;
  }
  if (valid) return raw;
  const decoded = unescape(raw, false) ?? raw;
  return [...Buffer.from(decoded, 'utf8')].map((b) => (PATH_SAFE.test(String.fromCharCode(b)) && b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** url.Values in "matrix" form: each key with all its values, unescaped; bad pairs skipped. */
function query(u: CelURL): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of u.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const key = unescape(eq >= 0 ? pair.slice(0, eq) : pair, true);
    const value = unescape(eq >= 0 ? pair.slice(eq + 1) : '', true);
    if (key === undefined || value === undefined) continue;
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

export function registerURLs(r: Registrar): void {
  const T = 'kubernetes.URL';
  r.env.registerType(T, CelURL);
  r.fn(`url(string): ${T}`, (s: string) => {
    const u = parseURL(s);
    if (typeof u === 'string') throw celError(`URL parse error during conversion from string: ${u}`);
    return u;
  });
  r.fn('isURL(string): bool', (s: string) => typeof parseURL(s) !== 'string');
  r.fn(`${T}.getScheme(): string`, (u: CelURL) => u.scheme);
  r.fn(`${T}.getHost(): string`, (u: CelURL) => u.host);
  r.fn(`${T}.getHostname(): string`, (u: CelURL) => hostname(u));
  r.fn(`${T}.getPort(): string`, (u: CelURL) => port(u));
  r.fn(`${T}.getEscapedPath(): string`, (u: CelURL) => escapedPath(u));
  r.fn(`${T}.getQuery(): map<string, list<string>>`, (u: CelURL) => query(u));
  r.op(`${T} == ${T}`, (a: CelURL, b: CelURL) => a.scheme === b.scheme && a.host === b.host && a.rawPath === b.rawPath && a.rawQuery === b.rawQuery && a.opaque === b.opaque);
}
