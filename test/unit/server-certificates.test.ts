// The server's own certificates: a TLS client trusting only the generated
// CA reaches the serving certificate by every host it names (IPv4, IPv6, DNS), a TLS server asking
// for client certificates under that CA accepts the administrator's, and a CA already in the
// certificate directory (made by another issuer, with a long subject) issues the missing pairs.
// The user's certificate cache: the next process reads the set back (no certificate library
// loaded, its own service-account key), a cache that is not the user's alone or holds no valid set
// is not used, and startServer() keeps the set under $XDG_CACHE_HOME unless told not to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkServerIdentity, connect, createServer, type PeerCertificate, type TLSSocket } from 'node:tls';
import { certificatesIn, processCertificates, type KeyPair } from '../../src/server/certificates.ts';
import { makeCa } from '../support/certs.ts';
import { tempDir } from '../support/tmp.ts';
import { tsLoader } from '../support/ts-loader.ts';

/** A TLS handshake to a server with `serving`, the client trusting `ca` only, naming `servername`; with `client`, the server requires a client certificate under `ca`. */
async function handshake(serving: KeyPair, ca: string, host: string, servername: string | undefined, client?: KeyPair): Promise<{ ok: boolean; error?: string; peer?: string }> {
  const server = createServer({ cert: serving.cert, key: serving.key, ca, requestCert: !!client, rejectUnauthorized: !!client }, (socket: TLSSocket) => {
    const peer = socket.getPeerCertificate();
    socket.end(peer && 'subject' in peer && peer.subject ? `${peer.subject.CN}/${String(peer.subject.O)}` : '-');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  try {
    return await new Promise((resolve) => {
      const socket = connect({ host, port, ca, ...(servername !== undefined && { servername }), ...(client && { cert: client.cert, key: client.key }) });
      let body = '';
      socket.on('data', (d: Buffer) => (body += d.toString()));
      socket.on('end', () => resolve({ ok: true, peer: body }));
      socket.on('error', (e) => resolve({ ok: false, error: e.message }));
    });
  } finally {
    server.close();
  }
}

test('the generated serving certificate is trusted through the generated CA for each of its hosts, and only those', async () => {
  const pki = await processCertificates(['127.0.0.1', '::1', 'localhost', 'api.example.test']);
  // Node.js 22's TLS client matches no IPv6 address against a certificate (newer ones do): there,
  // the address is looked for in the certificate itself.
  const matchesIpv6 = checkServerIdentity('::1', { subject: { CN: 'x' }, subjectaltname: 'IP Address:0:0:0:0:0:0:0:1' } as PeerCertificate) === undefined;
  const hosts = [['127.0.0.1', undefined], ['127.0.0.1', 'localhost'], ['127.0.0.1', 'api.example.test'], ...(matchesIpv6 ? [['::1', undefined] as const] : [])] as const;
  for (const [host, servername] of hosts) {
    const r = await handshake(pki.serving, pki.ca.cert, host, servername);
    assert.ok(r.ok, `${host} ${servername ?? ''}: ${r.error}`);
  }
  if (!matchesIpv6) assert.match(new X509Certificate(pki.serving.cert).subjectAltName ?? '', /IP Address:(0:0:0:0:0:0:0:1|::1)(,|$)/);
  const wrongName = await handshake(pki.serving, pki.ca.cert, '127.0.0.1', 'other.example.test');
  assert.equal(wrongName.ok, false);
  assert.match(wrongName.error ?? '', /other\.example\.test/);
  // Another CA does not vouch for it.
  const other = await makeCa('another-ca');
  assert.equal((await handshake(pki.serving, other.cert, '127.0.0.1', undefined)).ok, false);
});

test('the administrator certificate is a client certificate under the CA: CN system:admin, O system:masters', async () => {
  const pki = await processCertificates(['127.0.0.1']);
  const r = await handshake(pki.serving, pki.ca.cert, '127.0.0.1', undefined, pki.admin);
  assert.ok(r.ok, r.error);
  assert.equal(r.peer, 'system:admin/system:masters');
  const admin = new X509Certificate(pki.admin.cert);
  assert.deepEqual(admin.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.equal(admin.ca, false);
  assert.equal(new X509Certificate(pki.ca.cert).ca, true);
  assert.deepEqual(new X509Certificate(pki.serving.cert).keyUsage, ['1.3.6.1.5.5.7.3.1']);
});

test('a CA already in the certificate directory issues the serving and administrator pairs; a restart reads them back', async () => {
  const dir = join(tempDir('server-certificates'), 'pki');
  mkdirSync(dir, { recursive: true });
  // A subject longer than 127 bytes takes DER's long length form.
  const foreign = await makeCa(`kept-ca-${'x'.repeat(150)}`);
  writeFileSync(join(dir, 'ca.crt'), foreign.cert);
  writeFileSync(join(dir, 'ca.key'), foreign.key);
  const pki = await certificatesIn(dir, ['127.0.0.1', 'localhost']);
  assert.equal(pki.ca.cert, foreign.cert);
  const serving = new X509Certificate(pki.serving.cert);
  const ca = new X509Certificate(foreign.cert);
  assert.ok(serving.checkIssued(ca) && serving.verify(ca.publicKey));
  assert.equal(serving.issuer, ca.subject);
  assert.ok((await handshake(pki.serving, foreign.cert, '127.0.0.1', 'localhost', pki.admin)).ok);
  const again = await certificatesIn(dir, ['127.0.0.1', 'localhost']);
  assert.equal(again.serving.cert, pki.serving.cert);
  assert.equal(again.admin.cert, readFileSync(join(dir, 'admin.crt'), 'utf8'));
  assert.equal(again.serviceAccountKey, pki.serviceAccountKey);
  // A host the kept serving certificate does not cover: a new one is issued.
  const wider = await certificatesIn(dir, ['127.0.0.1', 'localhost', '10.1.2.3']);
  assert.notEqual(wider.serving.cert, pki.serving.cert);
  assert.ok(new X509Certificate(wider.serving.cert).checkIP('10.1.2.3'));
});

const certificatesModule = new URL('../../src/server/certificates.ts', import.meta.url).href;

interface ChildPki {
  ca: string;
  admin: string;
  serving: string;
  serviceAccountKey: string;
  /** Whether the process loaded the certificate library (its metadata polyfill is global). */
  issued: boolean;
}

/** The pairs a fresh process gets for `hosts` with the certificate cache `cache`. */
async function inFreshProcess(cache: string, hosts = ['127.0.0.1', 'localhost']): Promise<ChildPki> {
  const script = `const { processCertificates } = await import(${JSON.stringify(certificatesModule)});
const pki = await processCertificates(${JSON.stringify(hosts)}, ${JSON.stringify(cache)});
process.stdout.write(JSON.stringify({ ca: pki.ca.cert, admin: pki.admin.cert, serving: pki.serving.cert, serviceAccountKey: pki.serviceAccountKey, issued: typeof Reflect.getMetadata === 'function' }));`;
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, [...tsLoader, '--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, err);
  return JSON.parse(out) as ChildPki;
}

const cacheFile = (cache: string) => join(cache, 'certificates.json');
const mode = (path: string) => statSync(path).mode & 0o777;

test('the next process reads the CA, serving and admin pairs back from the certificate cache, without the certificate library; its service-account key is its own', async () => {
  const cache = join(tempDir('certificate-cache'), 'pki');
  const first = await inFreshProcess(cache);
  assert.equal(first.issued, true);
  assert.equal(mode(cache), 0o700);
  assert.equal(mode(cacheFile(cache)), 0o600);
  const next = await inFreshProcess(cache);
  assert.equal(next.issued, false, 'the next process loaded the certificate library');
  assert.deepEqual([next.ca, next.admin, next.serving], [first.ca, first.admin, first.serving]);
  assert.notEqual(next.serviceAccountKey, first.serviceAccountKey);
  // The pairs it read work together: the serving pair verifies under the CA, the admin pair is accepted.
  const kept = JSON.parse(readFileSync(cacheFile(cache), 'utf8')) as Record<'ca' | 'admin' | 'serving', KeyPair>;
  assert.ok((await handshake(kept.serving, kept.ca.cert, '127.0.0.1', 'localhost', kept.admin)).ok);
  // Hosts the kept serving certificate does not cover: a serving pair under the same CA, kept in its place.
  const wider = await inFreshProcess(cache, ['127.0.0.1', 'localhost', '10.1.2.3']);
  assert.equal(wider.issued, true);
  assert.equal(wider.ca, first.ca);
  assert.notEqual(wider.serving, first.serving);
  assert.ok(new X509Certificate(wider.serving).checkIP('10.1.2.3'));
  assert.equal((JSON.parse(readFileSync(cacheFile(cache), 'utf8')) as Record<string, KeyPair>).serving!.cert, wider.serving);
});

test('a certificate cache that is not the user\'s alone, or holds no valid set, is not used', async () => {
  const root = tempDir('certificate-cache-refused');
  const cache = join(root, 'pki');
  const valid = await inFreshProcess(cache);
  const validText = readFileSync(cacheFile(cache), 'utf8');
  const refused = async (why: string, setUp: () => void, after?: () => void) => {
    writeFileSync(cacheFile(cache), validText, { mode: 0o600 });
    chmodSync(cacheFile(cache), 0o600);
    chmodSync(cache, 0o700);
    setUp();
    const got = await inFreshProcess(cache);
    assert.equal(got.issued, true, `${why}: the cache was used`);
    assert.notEqual(got.ca, valid.ca, why);
    after?.();
  };
  // Readable by others: not trusted, replaced by a set of the user's alone.
  await refused('a file others can read', () => chmodSync(cacheFile(cache), 0o644), () => assert.equal(mode(cacheFile(cache)), 0o600));
  // A directory others can enter: neither read nor written.
  await refused('a directory others can enter', () => chmodSync(cache, 0o755), () => assert.equal(readFileSync(cacheFile(cache), 'utf8'), validText));
  // The file as a link to a valid set elsewhere.
  const elsewhere = join(root, 'elsewhere.json');
  writeFileSync(elsewhere, validText, { mode: 0o600 });
  await refused('a link', () => {
    rmSync(cacheFile(cache));
    symlinkSync(elsewhere, cacheFile(cache));
  });
  const set = JSON.parse(validText) as Record<'ca' | 'admin' | 'serving', KeyPair>;
  const other = await makeCa('other-ca');
  await refused('a CA whose key is another\'s', () => writeFileSync(cacheFile(cache), JSON.stringify({ ...set, ca: { cert: set.ca.cert, key: other.key } })));
  await refused('an admin pair another CA issued', () => writeFileSync(cacheFile(cache), JSON.stringify({ ...set, ca: other })));
  await refused('not JSON', () => writeFileSync(cacheFile(cache), '{"ca":'));
  await refused('no admin pair', () => writeFileSync(cacheFile(cache), JSON.stringify({ ca: set.ca })));
  assert.ok(existsSync(cacheFile(cache)));
});

test('startServer() keeps them in $XDG_CACHE_HOME/orch-apiserver/pki by default, and nowhere with certificateCache: false', async () => {
  const root = tempDir('certificate-cache-default');
  const entry = new URL('../../src/index.ts', import.meta.url).href;
  /** A fresh process that starts and stops a server with `options` and the cache home `home`. */
  const start = async (home: string, options: object) => {
    const script = `const { startServer } = await import(${JSON.stringify(entry)}); const s = await startServer(${JSON.stringify(options)}); await s.close();`;
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(process.execPath, [...tsLoader, '--input-type=module', '-e', script], { env: { ...env, XDG_CACHE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    assert.equal(await new Promise<number | null>((resolve) => child.on('exit', resolve)), 0, err);
  };
  const home = join(root, 'cache');
  await start(home, {});
  const kept = JSON.parse(readFileSync(cacheFile(join(home, 'orch-apiserver', 'pki')), 'utf8')) as Record<string, KeyPair>;
  assert.ok(new X509Certificate(kept.ca!.cert).ca);
  const elsewhere = join(root, 'unused');
  await start(elsewhere, { secureServing: { certificateCache: false } });
  assert.equal(existsSync(elsewhere), false);
});
