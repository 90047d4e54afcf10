// The server's own certificates, made when none are given: a CA, a serving certificate for the
// addresses clients reach it on, and an administrator's client certificate (CN `system:admin`, O
// `system:masters`). They are written once into the certificate directory (mode 0600) and read
// back on restart; a server with no directory of its own (in-process, throw-away storage) takes
// them from a per-process cache, so several servers in one process generate keys once. Keys are
// ECDSA P-256: fast to make and to handshake with, issued with node:crypto alone
// (certificate-issuer.ts).

import { X509Certificate as NodeCertificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { issueCertificate, newKeyPair, privateKeyPem, readPrivateKey, type Subject } from './certificate-issuer.ts';

/**
 * Whether a host of the serving certificate is an IP address (an IPv6 address has a colon, which
 * no host name has): node:net's isIP compiles an IPv6 pattern that costs a start tens of ms.
 */
const isIPAddress = (host: string): boolean => host.includes(':') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);

/** A certificate and its private key, PEM. */
export interface KeyPair {
  cert: string;
  key: string;
}

export interface Pki {
  ca: KeyPair;
  serving: KeyPair;
  admin: KeyPair;
  /** The key service-account tokens are signed with (PKCS#8 PEM), when none is given. */
  serviceAccountKey: string;
}

const DAY = 24 * 3600 * 1000;
/** Certificates start a little in the past, so a peer whose clock is slightly behind accepts them. */
const BACKDATE = 5 * 60 * 1000;
/** Renewed when less than this is left. */
const RENEW_BEFORE = 30 * DAY;

export const ADMIN_USER = 'system:admin';
export const ADMIN_GROUP = 'system:masters';

/** The names a generated serving certificate covers: loopback, the host name and the advertised address. */
export function servingHosts(advertiseAddress?: string, bindAddress?: string): string[] {
  const hosts = ['127.0.0.1', '::1', 'localhost', hostname()];
  for (const a of [advertiseAddress, bindAddress]) if (a && a !== '0.0.0.0' && a !== '::') hosts.push(a);
  return [...new Set(hosts.filter(Boolean))];
}

function makeCa(): KeyPair {
  const keys = newKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject: { commonName: `orch-apiserver-ca@${Math.floor(now / 1000)}` },
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    notBefore: new Date(now - BACKDATE),
    notAfter: new Date(now + 10 * 365 * DAY),
    usage: 'ca',
  });
  return { cert, key: privateKeyPem(keys.privateKey) };
}

function issue(ca: KeyPair, subject: Subject, usage: 'server' | 'client', hosts: readonly string[] = []): KeyPair {
  const keys = newKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject,
    publicKey: keys.publicKey,
    issuer: new NodeCertificate(ca.cert),
    signingKey: readPrivateKey(ca.key),
    notBefore: new Date(now - BACKDATE),
    notAfter: new Date(now + 365 * DAY),
    usage,
    hosts,
  });
  return { cert, key: privateKeyPem(keys.privateKey) };
}

const makeServing = (ca: KeyPair, hosts: readonly string[]) => issue(ca, { commonName: `orch-apiserver@${Math.floor(Date.now() / 1000)}` }, 'server', hosts);
const makeAdmin = (ca: KeyPair) => issue(ca, { commonName: ADMIN_USER, organizations: [ADMIN_GROUP] }, 'client');

/** Whether `pair` was issued by `ca`, is valid for a while yet, and (a serving pair) covers every host. */
function stillGood(pair: KeyPair, ca: KeyPair, hosts: readonly string[] = []): boolean {
  try {
    const c = new NodeCertificate(pair.cert);
    const caCert = new NodeCertificate(ca.cert);
    if (!c.checkIssued(caCert) || !c.verify(caCert.publicKey)) return false;
    if (Date.parse(c.validTo) - Date.now() < RENEW_BEFORE) return false;
    return hosts.every((h) => (isIPAddress(h) ? c.checkIP(h) !== undefined : c.checkHost(h, { wildcards: false }) !== undefined));
  } catch {
    return false;
  }
}

const FILES = { ca: 'ca', serving: 'apiserver', admin: 'admin' } as const;

function readPair(dir: string, name: string): KeyPair | undefined {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (!existsSync(cert) || !existsSync(key)) return undefined;
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}

function writePair(dir: string, name: string, pair: KeyPair): void {
  for (const [ext, text] of [['crt', pair.cert], ['key', pair.key]] as const) {
    const file = join(dir, `${name}.${ext}`);
    writeFileSync(file, text, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
}

/**
 * The CA, serving and admin pairs kept in `dir`: read when present and still good, made (and
 * written, mode 0600) otherwise. A new CA means new certificates under it.
 */
export function certificatesIn(dir: string, hosts: readonly string[]): Pki {
  try {
    return keptIn(dir, hosts);
  } catch (e) {
    throw new Error(`--cert-dir ${dir}: ${(e as Error).message}`);
  }
}

/** A new service-account signing key (PKCS#8 PEM). */
function makeServiceAccountKey(): string {
  return privateKeyPem(newKeyPair().privateKey);
}

const SERVICE_ACCOUNT_KEY = 'sa.key';

function keptIn(dir: string, hosts: readonly string[]): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ca = readPair(dir, FILES.ca);
  const freshCa = !ca;
  if (!ca) writePair(dir, FILES.ca, (ca = makeCa()));
  let serving = freshCa ? undefined : readPair(dir, FILES.serving);
  if (!serving || !stillGood(serving, ca, hosts)) writePair(dir, FILES.serving, (serving = makeServing(ca, hosts)));
  let admin = freshCa ? undefined : readPair(dir, FILES.admin);
  if (!admin || !stillGood(admin, ca)) writePair(dir, FILES.admin, (admin = makeAdmin(ca)));
  // Kept as long as the directory is: tokens signed with it stay valid across restarts.
  const saFile = join(dir, SERVICE_ACCOUNT_KEY);
  let serviceAccountKey = existsSync(saFile) ? readFileSync(saFile, 'utf8') : undefined;
  if (!serviceAccountKey) {
    writeFileSync(saFile, (serviceAccountKey = makeServiceAccountKey()), { mode: 0o600 });
    chmodSync(saFile, 0o600);
  }
  return { ca, serving, admin, serviceAccountKey };
}

let processCa: { ca: KeyPair; admin: KeyPair; serviceAccountKey: string } | undefined;
const processServing = new Map<string, KeyPair>();

/** The process's own CA and admin pair, and a serving pair per set of hosts: made once per process. */
export function processCertificates(hosts: readonly string[]): Pki {
  if (!processCa) {
    const ca = makeCa();
    processCa = { ca, admin: makeAdmin(ca), serviceAccountKey: makeServiceAccountKey() };
  }
  const { ca, admin, serviceAccountKey } = processCa;
  const key = hosts.join(',');
  let serving = processServing.get(key);
  if (!serving) processServing.set(key, (serving = makeServing(ca, hosts)));
  return { ca, admin, serviceAccountKey, serving };
}

/** The administrator's kubeconfig: the server's CA, its https URL, and the admin client certificate. */
export function adminKubeconfig(server: string, ca: string, admin: KeyPair): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: orch',
    '  cluster:',
    `    certificate-authority-data: ${b64(ca)}`,
    `    server: ${server}`,
    'users:',
    `- name: ${ADMIN_USER}`,
    '  user:',
    `    client-certificate-data: ${b64(admin.cert)}`,
    `    client-key-data: ${b64(admin.key)}`,
    'contexts:',
    `- name: ${ADMIN_USER}@orch`,
    '  context:',
    '    cluster: orch',
    `    user: ${ADMIN_USER}`,
    `current-context: ${ADMIN_USER}@orch`,
    '',
  ].join('\n');
}
