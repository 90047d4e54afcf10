// Serving over HTTPS and the first authenticators, over real TLS connections: the generated
// certificates and admin kubeconfig (kubectl and client-node use it as is), client certificates
// made in the test (valid, expired, not yet valid, of an unknown CA, for the wrong usage, through
// an intermediate), the static token file (kubectl --token), anonymous requests, the union's
// rules, the TLS flags, and the start-up errors. Every rejected request is a 401 Status that
// changes nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { testServer } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { loadClientNode } from '../support/client-node.ts';
import { issueCert, makeCa, type TestCert } from '../support/certs.ts';
import { startServer, type RunningServer } from '../../src/server/server.ts';
import { recordingAuthorizer } from '../support/identity.ts';

interface Reply {
  status: number;
  body: any;
}

interface Credentials {
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** One HTTPS request on a connection of its own (so each gets its own handshake and certificate). */
function https(server: { url: string }, method: string, path: string, c: Credentials, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      server.url + path,
      {
        method,
        agent: false,
        ca: c.ca,
        cert: c.cert,
        key: c.key,
        headers: { ...(c.token !== undefined ? { Authorization: `Bearer ${c.token}` } : {}), ...(data ? { 'Content-Type': 'application/json' } : {}), ...c.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };


const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

// ---------------------------------------------------------------------------------------------
// One secure server with the defaults: generated certificates, the admin kubeconfig, a token file.

const dir = tempDir('authn-tls');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['abc123,alice,1001,"dev,ops"', 'def456,bob,1002', ',nobody,1003', 'ghi789,carol,1004,system:masters', 'jkl012,dave,1005,"x,system:authenticated"', 'mno345,eve,1006,system:unauthenticated'].join('\n') + '\n');
const authz = recordingAuthorizer();
const logs: string[] = [];
const secure = await testServer({ secureServing: {}, authentication: { tokenAuthFile: tokenFile }, authorizer: authz, log: (m) => logs.push(m) });
const admin = await adminCredentials(secure);

async function adminCredentials(s: RunningServer): Promise<Credentials> {
  const kc = (await import('yaml')).parse(s.kubeconfig!) as { users: { user: Record<string, string> }[] };
  const user = kc.users[0]!.user;
  return { ca: s.ca, cert: Buffer.from(user['client-certificate-data']!, 'base64').toString(), key: Buffer.from(user['client-key-data']!, 'base64').toString() };
}

describe('HTTPS with generated certificates and the admin kubeconfig', () => {
  test('the server is HTTPS; startServer returns the kubeconfig (text and file, mode 0600) and the CA', async () => {
    assert.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(secure.kubeconfig && secure.kubeconfigPath && secure.ca);
    assert.equal(readFileSync(secure.kubeconfigPath, 'utf8'), secure.kubeconfig);
    assert.equal(statSync(secure.kubeconfigPath).mode & 0o777, 0o600);
    assert.match(secure.kubeconfig, /certificate-authority-data: /);
    assert.match(secure.kubeconfig, new RegExp(`server: ${secure.url}`));
    // The serving certificate is for the loopback addresses and localhost, issued by the CA.
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s: TLSSocket = connect({ host: '127.0.0.1', port: secure.port, ca: secure.ca, servername: 'localhost' }, () => resolve(s));
      s.on('error', reject);
    });
    const served = new X509Certificate(socket.getPeerCertificate().raw);
    socket.destroy();
    for (const ip of ['127.0.0.1', '::1']) assert.equal(served.checkIP(ip), ip);
    assert.equal(served.checkHost('localhost'), 'localhost');
    assert.ok(served.checkIssued(new X509Certificate(secure.ca!)));
  });

  test('the admin client certificate is system:admin in system:masters, and system:authenticated is added', async () => {
    const r = await https(secure, 'GET', '/api/v1/namespaces/default', admin);
    assert.equal(r.status, 200);
    const user = authz.seen.get('/api/v1/namespaces/default')!;
    assert.equal(user.name, 'system:admin');
    assert.deepEqual(user.groups, ['system:masters', 'system:authenticated']);
    const fingerprint = createHash('sha256').update(new X509Certificate(admin.cert!).raw).digest('hex');
    assert.deepEqual(user.extra, { 'authentication.orch.io/credential-id': [`X509SHA256=${fingerprint}`] });
  });

  test('kubectl --kubeconfig <admin.kubeconfig> get ns, and kubectl writes with it', async () => {
    const k = kubectlFor(secure, { label: 'kubectl-tls' });
    const out = await k.ok(['--kubeconfig', secure.kubeconfigPath!, 'get', 'ns', '-o', 'name']);
    assert.match(out, /namespace\/default/);
    await k.ok(['--kubeconfig', secure.kubeconfigPath!, 'create', 'namespace', 'made-by-kubectl']);
    assert.equal((await https(secure, 'GET', '/api/v1/namespaces/made-by-kubectl', admin)).status, 200);
  });

  test('client-node loads the kubeconfig text as is', async () => {
    const k8s = await loadClientNode();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(secure.kubeconfig!);
    const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    assert.ok(list.items.some((n) => n.metadata?.name === 'default'));
  });

  test('plain HTTP to the HTTPS port is answered 400 as Go answers it, and reaches nothing', async () => {
    const socket = netConnect(Number(new URL(secure.url).port), '127.0.0.1');
    socket.end(`POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(namespace('plain-http'))}`);
    const chunks: Buffer[] = [];
    for await (const c of socket) chunks.push(c as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
    const r = await fetch(secure.url.replace('https:', 'http:') + '/api/v1/namespaces');
    assert.equal(r.status, 400);
    assert.equal((await https(secure, 'GET', '/api/v1/namespaces/plain-http', await adminCredentials(secure))).status, 404);
  });
});

describe('the static token file', () => {
  test('a token authenticates its user, uid and quoted groups, plus system:authenticated', async () => {
    const r = await https(secure, 'GET', '/api/v1/namespaces/kube-token-check', { ca: secure.ca, token: 'abc123' });
    assert.equal(r.status, 404);
    assert.deepEqual(authz.seen.get('/api/v1/namespaces/kube-token-check'), { name: 'alice', uid: '1001', groups: ['dev', 'ops', 'system:authenticated'] });
    await https(secure, 'GET', '/api/v1/namespaces/bob-check', { ca: secure.ca, token: 'def456' });
    assert.deepEqual(authz.seen.get('/api/v1/namespaces/bob-check'), { name: 'bob', uid: '1002', groups: ['system:authenticated'] });
    // system:authenticated is added once, and not to a member of system:unauthenticated.
    await https(secure, 'GET', '/api/v1/namespaces/dave-check', { ca: secure.ca, token: 'jkl012' });
    assert.deepEqual(authz.seen.get('/api/v1/namespaces/dave-check')?.groups, ['x', 'system:authenticated']);
    await https(secure, 'GET', '/api/v1/namespaces/eve-check', { ca: secure.ca, token: 'mno345' });
    assert.deepEqual(authz.seen.get('/api/v1/namespaces/eve-check')?.groups, ['system:unauthenticated']);
    // "Bearer" is matched in any case.
    await https(secure, 'GET', '/api/v1/namespaces/case-check', { ca: secure.ca, headers: { Authorization: 'bEaReR def456' } });
    assert.equal(authz.seen.get('/api/v1/namespaces/case-check')?.name, 'bob');
  });

  test('kubectl --token works; a wrong token is Unauthorized', async () => {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, secure.ca!);
    const k = kubectlFor(secure, { label: 'kubectl-token', anonymous: true });
    const out = await k.ok(['--certificate-authority', caFile, '--token', 'abc123', 'get', 'ns', 'default', '-o', 'name']);
    assert.equal(out.trim(), 'namespace/default');
    const bad = await k.fails(['--certificate-authority', caFile, '--token', 'nope', 'get', 'ns', 'default']);
    assert.match(bad.stderr, /Unauthorized/);
  });

  test('an unknown token and a token that only starts like a known one are 401 and create nothing', async () => {
    for (const token of ['not-a-token', 'abc1234', 'abc12']) {
      const r = await https(secure, 'POST', '/api/v1/namespaces', { ca: secure.ca, token }, namespace('by-bad-token'));
      assert.equal(r.status, 401, token);
      assert.deepEqual(r.body, UNAUTHORIZED);
    }
    // The rejection is logged, the token never.
    assert.ok(logs.includes('Unable to authenticate the request: invalid bearer token'));
    assert.ok(!logs.some((l) => l.includes('not-a-token') || l.includes('abc12')), logs.join('\n'));
    assert.equal((await https(secure, 'GET', '/api/v1/namespaces/by-bad-token', admin)).status, 404);
  });

  test('a bearer token after two spaces is no credential (anonymous), as in kube-apiserver', async () => {
    await https(secure, 'GET', '/api/v1/namespaces/two-spaces', { ca: secure.ca, headers: { Authorization: 'Bearer  abc123' } });
    assert.equal(authz.seen.get('/api/v1/namespaces/two-spaces')?.name, 'system:anonymous');
  });

  test('with a valid client certificate and an invalid token, the certificate decides (it is consulted first)', async () => {
    // kube-apiserver's order: client certificates, then tokens; the first success decides.
    const r = await https(secure, 'GET', '/api/v1/namespaces/cert-first', { ...admin, token: 'not-a-token' });
    assert.equal(r.status, 404);
    assert.equal(authz.seen.get('/api/v1/namespaces/cert-first')?.name, 'system:admin');
  });
});

describe('anonymous requests', () => {
  test('no credential is system:anonymous in system:unauthenticated (no system:authenticated)', async () => {
    const r = await https(secure, 'GET', '/api/v1/namespaces/anon-check', { ca: secure.ca });
    assert.equal(r.status, 404);
    assert.deepEqual(authz.seen.get('/api/v1/namespaces/anon-check'), { name: 'system:anonymous', groups: ['system:unauthenticated'] });
    // An Authorization header that is not a bearer token is no credential either.
    await https(secure, 'GET', '/api/v1/namespaces/basic-check', { ca: secure.ca, headers: { Authorization: 'Basic Zm9vOmJhcg==' } });
    assert.equal(authz.seen.get('/api/v1/namespaces/basic-check')?.name, 'system:anonymous');
  });

  test('an invalid bearer token is 401, never anonymous', async () => {
    authz.seen.delete('/api/v1/namespaces');
    const r = await https(secure, 'POST', '/api/v1/namespaces', { ca: secure.ca, token: 'wrong' }, namespace('anon-bad-token'));
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
    assert.equal(authz.seen.has('/api/v1/namespaces'), false, 'a rejected request never reaches authorization');
  });

  test('--anonymous-auth=false, and the built-in allow-all authorizer, refuse requests with no credential', async () => {
    const off = await testServer({ secureServing: {}, authentication: { anonymousAuth: false }, authorizer: recordingAuthorizer() });
    const r = await https(off, 'POST', '/api/v1/namespaces', { ca: off.ca }, namespace('anon-off'));
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    const logs: string[] = [];
    const allowAll = await testServer({ secureServing: {}, authentication: { anonymousAuth: true }, authorization: { modes: ['AlwaysAllow'] }, log: (m) => logs.push(m) });
    const r2 = await https(allowAll, 'GET', '/api/v1/namespaces', { ca: allowAll.ca });
    assert.deepEqual([r2.status, r2.body], [401, UNAUTHORIZED]);
    assert.ok(logs.some((l) => /AnonymousAuth is not allowed with the AlwaysAllow authorizer/.test(l)));
    assert.equal((await https(off, 'GET', '/api/v1/namespaces/anon-off', await adminCredentials(off))).status, 404);
  });
});

describe('secure by default', () => {
  test('startServer() with no options serves HTTPS with client certificates; anonymous requests reach only the health and version paths (Node,RBAC: the rest is 403)', async () => {
    const plain = await testServer();
    assert.match(plain.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(plain.kubeconfig && plain.kubeconfigPath && plain.ca);
    assert.equal((await https(plain, 'POST', '/api/v1/namespaces', await adminCredentials(plain), namespace('by-default'))).status, 201);
    for (const path of ['/healthz', '/livez', '/readyz', '/version', '/version/', '/readyz?verbose', '/livez?exclude=ping']) {
      const r = await https(plain, 'GET', path, { ca: plain.ca });
      assert.equal(r.status, 200, path);
    }
    for (const [method, path] of [['GET', '/api/v1/namespaces'], ['GET', '/api'], ['GET', '/readyz/ping'], ['GET', '/livez/'], ['GET', '/metrics'], ['GET', '/openapi/v2'], ['POST', '/api/v1/namespaces']] as const) {
      const r = await https(plain, method, path, { ca: plain.ca }, method === 'POST' ? namespace('anon-by-default') : undefined);
      assert.deepEqual([r.status, r.body.reason], [403, 'Forbidden'], `${method} ${path}`);
      assert.match(r.body.message, /User "system:anonymous" cannot/);
    }
    assert.equal((await https(plain, 'GET', '/api/v1/namespaces/anon-by-default', await adminCredentials(plain))).status, 404, 'nothing was created');
  });

  test('insecureServing: plain HTTP on loopback, every request the administrator; another address only when the embedder insists', async () => {
    const insecure = await testServer({ insecureServing: {} });
    assert.match(insecure.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(insecure.kubeconfig, undefined);
    const r = await fetch(`${insecure.url}/api/v1/namespaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(namespace('insecure')) });
    assert.equal(r.status, 201);
    await assert.rejects(startServer({ insecureServing: {}, bindAddress: '0.0.0.0' }), /listens on a loopback address only \(asked: 0\.0\.0\.0\)/);
    await assert.rejects(startServer({ insecureServing: {}, secureServing: { tlsMinVersion: 'VersionTLS13' } }), /cannot be combined with the TLS flags/);
    const wide = await testServer({ insecureServing: { allowRemote: true }, bindAddress: '0.0.0.0' });
    assert.match(wide.listening, /^http:\/\/0\.0\.0\.0:\d+$/);
    assert.equal((await fetch(`${wide.url}/api/v1/namespaces/insecure`)).status, 404, 'each server has its own storage');
  });
});

// ---------------------------------------------------------------------------------------------
// Client certificates made in the test, against --client-ca-file.

describe('client certificates (--client-ca-file)', async () => {
  const ca = await makeCa('clients');
  const other = await makeCa('clients'); // same name, other key: an unknown authority
  const caFile = join(dir, 'client-ca.crt');
  writeFileSync(caFile, ca.cert);
  const seen = recordingAuthorizer();
  const certLogs: string[] = [];
  const server = await testServer({ secureServing: {}, authentication: { clientCaFile: caFile }, authorizer: seen, log: (m) => certLogs.push(m) });
  const as = (c: TestCert, chain = ''): Credentials => ({ ca: server.ca, cert: `${c.cert.trimEnd()}\n${chain}`, key: c.key });
  const now = Date.now();
  const day = 24 * 3600 * 1000;

  test('the Common Name is the user, every Organization a group', async () => {
    const alice = await issueCert(ca, { subject: 'CN=alice, O=dev, O=ops' });
    const r = await https(server, 'GET', '/api/v1/namespaces/alice', as(alice));
    assert.equal(r.status, 404);
    const user = seen.seen.get('/api/v1/namespaces/alice')!;
    assert.equal(user.name, 'alice');
    assert.deepEqual(user.groups, ['dev', 'ops', 'system:authenticated']);
  });

  test('a certificate issued through an intermediate the client sends is accepted', async () => {
    const intermediate = await issueCert(ca, { subject: 'CN=intermediate', ca: true });
    const dave = await issueCert(intermediate, { subject: 'CN=dave, O=team' });
    assert.equal((await https(server, 'GET', '/api/v1/namespaces/dave', as(dave, intermediate.cert))).status, 404);
    assert.equal(seen.seen.get('/api/v1/namespaces/dave')?.name, 'dave');
    // Without the intermediate the chain does not reach the CA.
    const r = await https(server, 'GET', '/api/v1/namespaces/dave', as(dave));
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
  });

  test('expired, not yet valid, unknown CA, wrong usage, expired intermediate: 401 with a Status, nothing created', async () => {
    const intermediate = await issueCert(ca, { subject: 'CN=old-intermediate', ca: true, notAfter: new Date(now - day) });
    const cases: [string, TestCert, string?][] = [
      ['expired', await issueCert(ca, { subject: 'CN=expired', notBefore: new Date(now - 10 * day), notAfter: new Date(now - day) })],
      ['not yet valid', await issueCert(ca, { subject: 'CN=future', notBefore: new Date(now + day), notAfter: new Date(now + 10 * day) })],
      ['unknown CA', await issueCert(other, { subject: 'CN=mallory, O=system:masters' })],
      ['serving certificate', await issueCert(ca, { subject: 'CN=server', usage: 'server' })],
      ['expired intermediate', await issueCert(intermediate, { subject: 'CN=late' }), intermediate.cert],
    ];
    for (const [what, cert, chain] of cases) {
      const r = await https(server, 'POST', '/api/v1/namespaces', as(cert, chain), namespace('by-bad-cert'));
      assert.equal(r.status, 401, what);
      assert.deepEqual(r.body, UNAUTHORIZED, what);
    }
    const alice = await issueCert(ca, { subject: 'CN=alice, O=system:masters' });
    assert.equal((await https(server, 'GET', '/api/v1/namespaces/by-bad-cert', as(alice))).status, 404);
    // Why each was refused is logged, as Go's x509 words it.
    for (const why of [/CN=expired.*certificate has expired or is not yet valid: current time \S+ is after/, /CN=future.*is before/, /CN=mallory.*certificate signed by unknown authority/, /CN=server.*incompatible key usage/, /CN=late.*is after/])
      assert.ok(certLogs.some((l) => why.test(l)), `${why}\n${certLogs.join('\n')}`);
  });

  test('a certificate without a Common Name is no credential: the request is anonymous', async () => {
    const nameless = await issueCert(ca, { subject: 'O=dev' });
    assert.equal((await https(server, 'GET', '/api/v1/namespaces/nameless', as(nameless))).status, 404);
    assert.equal(seen.seen.get('/api/v1/namespaces/nameless')?.name, 'system:anonymous');
  });

  test('the server generated CA no longer admits its admin once --client-ca-file names another', async () => {
    const r = await https(server, 'GET', '/api/v1/namespaces', await adminCredentials(server));
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
  });
});

// ---------------------------------------------------------------------------------------------
// Certificates kept across restarts, the per-process cache, the TLS flags.

describe('certificates and TLS settings', () => {
  test('certificates are generated once into the data directory and reused on restart', async () => {
    const data = tempDir('authn-restart');
    const first = await startServer({ dataDir: data, secureServing: {} });
    const ca = first.ca;
    const files = ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key'];
    for (const f of files) assert.equal(statSync(join(data, 'pki', f)).mode & 0o777, 0o600, f);
    const before = files.map((f) => readFileSync(join(data, 'pki', f), 'utf8'));
    await first.close();
    const second = await startServer({ dataDir: data, secureServing: {} });
    try {
      assert.equal(second.ca, ca);
      assert.deepEqual(files.map((f) => readFileSync(join(data, 'pki', f), 'utf8')), before);
      assert.equal(statSync(join(data, 'admin.kubeconfig')).mode & 0o777, 0o600);
      assert.equal((await https(second, 'GET', '/api/v1/namespaces/default', await adminCredentials(second))).status, 200);
    } finally {
      await second.close();
    }
  });

  test('servers without a data directory share the process certificates', async () => {
    const other = await testServer({ secureServing: {} });
    assert.equal(other.ca, secure.ca);
    assert.notEqual(other.kubeconfigPath, secure.kubeconfigPath);
  });

  test('--tls-cert-file/--tls-private-key-file serve the given pair', async () => {
    const ca = await makeCa('serving');
    const pair = await issueCert(ca, { subject: 'CN=given', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
    writeFileSync(join(dir, 'given.crt'), pair.cert);
    writeFileSync(join(dir, 'given.key'), pair.key);
    const s = await testServer({ secureServing: { tlsCertFile: join(dir, 'given.crt'), tlsPrivateKeyFile: join(dir, 'given.key') } });
    // Trusting only the given certificate's CA is enough to reach it.
    const r = await https(s, 'GET', '/api/v1/namespaces/default', { ...(await adminCredentials(s)), ca: ca.cert });
    assert.equal(r.status, 200);
    // The kubeconfig trusts it too.
    const k = kubectlFor(s, { label: 'kubectl-given' });
    assert.match(await k.ok(['--kubeconfig', s.kubeconfigPath!, 'get', 'ns', 'default', '-o', 'name']), /namespace\/default/);
  });

  test('--tls-min-version=VersionTLS13 refuses TLS 1.2 clients; cipher suites are taken by their IANA names', async () => {
    const s13 = await testServer({ secureServing: { tlsMinVersion: 'VersionTLS13' } });
    await assert.rejects(
      new Promise((resolve, reject) => {
        const c = connect({ host: '127.0.0.1', port: s13.port, ca: s13.ca, servername: 'localhost', maxVersion: 'TLSv1.2' }, () => resolve(c));
        c.on('error', reject);
      }),
    );
    const s12 = await testServer({ secureServing: { tlsCipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'] } });
    const cipher = await new Promise<string>((resolve, reject) => {
      const c = connect({ host: '127.0.0.1', port: s12.port, ca: s12.ca, servername: 'localhost', maxVersion: 'TLSv1.2' }, () => {
        resolve(c.getCipher().name);
        c.destroy();
      });
      c.on('error', reject);
    });
    assert.equal(cipher, 'ECDHE-ECDSA-AES128-GCM-SHA256');
  });
});

// ---------------------------------------------------------------------------------------------
// Start-up errors: one clear line, nothing served.

describe('the command line', () => {
  test('--secure-port serves HTTPS and the banner says export KUBECONFIG=<data dir>/admin.kubeconfig, which kubectl uses as is', async () => {
    const bin = new URL('../../bin/orch-apiserver.js', import.meta.url).pathname;
    const data = tempDir('authn-cli-https');
    const child = spawn(process.execPath, [bin, '--secure-port=0', `--data-dir=${data}`, '--anonymous-auth=false'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit');
    try {
      const deadline = Date.now() + 20_000;
      while (!/export KUBECONFIG=\S+/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.match(stderr, /serving on https:\/\/127\.0\.0\.1:\d+ /);
      assert.equal(/export KUBECONFIG=(\S+)/.exec(stderr)?.[1], join(data, 'admin.kubeconfig'));
      const url = /serving on (https:\/\/\S+)/.exec(stderr)![1]!;
      const k = kubectlFor({ url }, { label: 'kubectl-cli-https' });
      assert.match(await k.ok(['--kubeconfig', join(data, 'admin.kubeconfig'), 'get', 'ns', 'default', '-o', 'name']), /namespace\/default/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('start-up errors', () => {
  const bad = async (name: string, text: string) => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  const badCertDir = () => {
    const d = tempDir('authn-bad-pki');
    writeFileSync(join(d, 'ca.crt'), 'not a certificate');
    writeFileSync(join(d, 'ca.key'), 'not a key');
    return d;
  };

  test('token files Kubernetes refuses, unknown TLS names, missing files, a certificate directory that cannot be used', async () => {
    const cases: [Parameters<typeof startServer>[0], RegExp][] = [
      [{ authentication: { tokenAuthFile: await bad('short.csv', 'tok,user\n') } }, /must have at least 3 columns \(token, user name, user uid\), found 2/],
      [{ authentication: { tokenAuthFile: await bad('quote.csv', 'to"k,user,1\n') } }, /parse error on line 1, column 3: bare " in non-quoted-field/],
      [{ authentication: { tokenAuthFile: await bad('open.csv', 'tok,user,1,"a,b\n') } }, /extraneous or missing " in quoted-field/],
      [{ authentication: { tokenAuthFile: join(dir, 'missing.csv') } }, /ENOENT/],
      [{ secureServing: { tlsCipherSuites: ['TLS_NOT_A_SUITE'] } }, /Cipher suite TLS_NOT_A_SUITE not supported or doesn't exist/],
      [{ secureServing: { tlsMinVersion: 'VersionTLS14' } }, /unknown tls version "VersionTLS14"/],
      [{ secureServing: { tlsCertFile: join(dir, 'given.crt') } }, /must be given together/],
      [{ secureServing: {}, authentication: { clientCaFile: await bad('empty-ca.crt', 'nothing here') } }, /no certificate found/],
      [{ secureServing: { certDir: badCertDir() } }, /^Error: --cert-dir \S+: /],
    ];
    for (const [opts, message] of cases) await assert.rejects(startServer(opts), (e: Error) => (assert.match(`Error: ${e.message}`, message), !e.message.includes('\n')));
  });

  test('the command line exits 1 with one line', async () => {
    const bin = new URL('../../bin/orch-apiserver.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [bin, '--secure-port=0', `--data-dir=${tempDir('authn-cli')}`, '--tls-cipher-suites=TLS_NOPE'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, 'exit');
    assert.equal(code, 1);
    assert.equal(stderr, "Error: --tls-cipher-suites: Cipher suite TLS_NOPE not supported or doesn't exist\n");
  });
});

