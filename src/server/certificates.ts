// The server's own certificates, made when none are given: a CA, a serving certificate for the
// addresses clients reach it on, and an administrator's client certificate (CN `system:admin`, O
// `system:masters`). They are written once into the certificate directory (mode 0600) and read
// back on restart. A server with no directory of its own (in-process, throw-away storage) takes
// them from the process, so several servers in one process generate keys once, and the process
// from the user's certificate cache, so the next process of the same user does not generate them
// again (as minikube keeps one CA per user): one file, mode 0600, in a directory of mode 0700 the
// user owns; a cache that is anything else, or holds anything but a valid set, is not used. Its
// service-account signing key is the process's own. Keys are ECDSA P-256: fast to make and to
// handshake with. The certificate library is loaded the first time a certificate is issued: a
// restart, or a start that finds the cache valid, never loads it.

import { createPrivateKey, generateKeyPairSync, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readPrivateFile, userCacheDirectory, writePrivateFile } from './user-cache.ts';

type X509 = typeof import('@peculiar/x509');
let library: Promise<X509> | undefined;

/**
 * @peculiar/x509 (with the metadata polyfill it needs), loaded and set up once, when first issuing.
 * Required, not imported (both ship a CommonJS build): the built package runs its bundle as a vm
 * script (package-entry.ts), where an `import()` needs Node's experimental loader option, which
 * prints an ExperimentalWarning at its first use.
 */
function certificateLibrary(): Promise<X509> {
  return (library ??= (async () => {
    const require = createRequire(import.meta.url);
    require('reflect-metadata');
    const lib = require('@peculiar/x509') as X509;
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    return lib;
  })());
}

/**
 * Whether a host of the serving certificate is an IP address (an IPv6 address has a colon, which
 * no host name has): node:net's isIP compiles an IPv6 pattern that costs a start tens of ms.
 */
const isIPAddress = (host: string): boolean => host.includes(':') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

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

const EC: webcrypto.EcKeyGenParams & webcrypto.EcKeyImportParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
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

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  return (await certificateLibrary()).PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', (await certificateLibrary()).PemConverter.decodeFirst(pem), EC, true, ['sign']);
}

async function makeCa(): Promise<KeyPair> {
  const x509 = await certificateLibrary();
  const keys = await newKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=orch-apiserver-ca@${Math.floor(now / 1000)}`,
    keys,
    signingAlgorithm: SIGNING,
    notBefore: new Date(now - BACKDATE),
    notAfter: new Date(now + 10 * 365 * DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey) };
}

async function issue(ca: KeyPair, subject: string, usage: 'server' | 'client', hosts: readonly string[] = []): Promise<KeyPair> {
  const x509 = await certificateLibrary();
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.cert);
  const now = Date.now();
  const extensions: InstanceType<X509['Extension']>[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  if (hosts.length) extensions.push(new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIPAddress(h) ? ('ip' as const) : ('dns' as const), value: h }))));
  const cert = await x509.X509CertificateGenerator.create({
    subject,
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: await importKey(ca.key),
    signingAlgorithm: SIGNING,
    notBefore: new Date(now - BACKDATE),
    notAfter: new Date(now + 365 * DAY),
    extensions,
  });
  return { cert: cert.toString('pem'), key: await keyPem(keys.privateKey) };
}

const makeServing = (ca: KeyPair, hosts: readonly string[]) => issue(ca, `CN=orch-apiserver@${Math.floor(Date.now() / 1000)}`, 'server', hosts);
const makeAdmin = (ca: KeyPair) => issue(ca, `CN=${ADMIN_USER}, O=${ADMIN_GROUP}`, 'client');

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
export async function certificatesIn(dir: string, hosts: readonly string[]): Promise<Pki> {
  try {
    return await keptIn(dir, hosts);
  } catch (e) {
    throw new Error(`--cert-dir ${dir}: ${(e as Error).message}`);
  }
}

/** A new service-account signing key (PKCS#8 PEM): node:crypto's, the certificate library is not needed for it. */
function makeServiceAccountKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

const SERVICE_ACCOUNT_KEY = 'sa.key';

async function keptIn(dir: string, hosts: readonly string[]): Promise<Pki> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ca = readPair(dir, FILES.ca);
  const freshCa = !ca;
  if (!ca) writePair(dir, FILES.ca, (ca = await makeCa()));
  let serving = freshCa ? undefined : readPair(dir, FILES.serving);
  if (!serving || !stillGood(serving, ca, hosts)) writePair(dir, FILES.serving, (serving = await makeServing(ca, hosts)));
  let admin = freshCa ? undefined : readPair(dir, FILES.admin);
  if (!admin || !stillGood(admin, ca)) writePair(dir, FILES.admin, (admin = await makeAdmin(ca)));
  // Kept as long as the directory is: tokens signed with it stay valid across restarts.
  const saFile = join(dir, SERVICE_ACCOUNT_KEY);
  let serviceAccountKey = existsSync(saFile) ? readFileSync(saFile, 'utf8') : undefined;
  if (!serviceAccountKey) {
    writeFileSync(saFile, (serviceAccountKey = makeServiceAccountKey()), { mode: 0o600 });
    chmodSync(saFile, 0o600);
  }
  return { ca, serving, admin, serviceAccountKey };
}

/** The CA and admin pairs throw-away servers share, and the serving pair the cache held (if any). */
interface SharedPairs {
  ca: KeyPair;
  admin: KeyPair;
  serving?: KeyPair;
}

/** The shared pairs by the cache they came from ('' for none), and the serving pairs by cache and hosts. */
const processPairs = new Map<string, Promise<SharedPairs>>();
const processServing = new Map<string, Promise<KeyPair>>();
let processServiceAccountKey: string | undefined;

/**
 * The user's certificate cache when none is configured: `orch-apiserver/pki` under
 * `$XDG_CACHE_HOME`, else under `~/.cache`; undefined when there is no home directory.
 */
export function defaultCertificateCache(): string | undefined {
  return userCacheDirectory('pki');
}

/**
 * The pairs of a server with no certificate directory: the CA and admin pair, and a serving pair
 * per set of hosts, made once per process, or read from the certificate cache `cache` when it
 * holds a valid set (and written there when made); the service-account key is the process's.
 */
export async function processCertificates(hosts: readonly string[], cache?: string): Promise<Pki> {
  const at = cache ?? '';
  let shared = processPairs.get(at);
  if (!shared) {
    shared = sharedPairs(cache);
    processPairs.set(at, shared);
    // A failure is not remembered: the next server tries again.
    shared.catch(() => processPairs.delete(at));
  }
  const { ca, admin, serving: cached } = await shared;
  const key = `${at}\n${hosts.join(',')}`;
  let serving = processServing.get(key);
  if (!serving) {
    serving =
      cached && stillGood(cached, ca, hosts)
        ? Promise.resolve(cached)
        : makeServing(ca, hosts).then((made) => {
            if (cache !== undefined) writeCache(cache, { ca, admin, serving: made });
            return made;
          });
    processServing.set(key, serving);
    serving.catch(() => processServing.delete(key));
  }
  processServiceAccountKey ??= makeServiceAccountKey();
  return { ca, admin, serviceAccountKey: processServiceAccountKey, serving: await serving };
}

async function sharedPairs(cache: string | undefined): Promise<SharedPairs> {
  const kept = cache === undefined ? undefined : readCache(cache);
  if (kept) return kept;
  const ca = await makeCa();
  return { ca, admin: await makeAdmin(ca) };
}

/** The cache's one file: the pairs as JSON, replaced whole (written beside it, then renamed over it). */
const CACHE_FILE = 'certificates.json';

/** Whether `pair`'s key is the private key of its certificate. */
function keyMatches(pair: KeyPair): boolean {
  return new NodeCertificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key));
}

/** Whether `ca` is a CA certificate that signed itself, valid for a while yet, with its key. */
function goodCa(ca: KeyPair): boolean {
  return new NodeCertificate(ca.cert).ca && stillGood(ca, ca) && keyMatches(ca);
}

const isPair = (v: unknown): v is KeyPair => typeof v === 'object' && v !== null && typeof (v as KeyPair).cert === 'string' && typeof (v as KeyPair).key === 'string';

/**
 * The set the cache holds, when the cache is this user's alone and the set is valid: a CA, an
 * admin pair it issued (with their keys), and the serving pair if its key is its own. Anything else
 * (no file, a link, other owners or modes, a broken or expiring set) is no set: it is made anew.
 */
function readCache(dir: string): SharedPairs | undefined {
  const bytes = readPrivateFile(dir, CACHE_FILE);
  if (!bytes) return undefined;
  try {
    const set = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    const { ca, admin, serving } = set;
    if (!isPair(ca) || !isPair(admin) || !goodCa(ca) || !stillGood(admin, ca) || !keyMatches(admin)) return undefined;
    // (The serving pair's issuer, validity and hosts are checked where the hosts are known.)
    return { ca, admin, ...(isPair(serving) && keyMatches(serving) && { serving }) };
  } catch {
    return undefined;
  }
}

/** Replaces the cache's set with `set`; a cache that cannot be written is left as it is. */
function writeCache(dir: string, set: Required<SharedPairs>): void {
  writePrivateFile(dir, CACHE_FILE, JSON.stringify(set));
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
