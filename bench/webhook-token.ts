// Webhook token authentication benchmark: `node --import tsx bench/webhook-token.ts`. The API
// server runs in a child process (the command line, with the `--authentication-token-webhook-*`
// flags) and this process both generates load and serves the token-review webhook over HTTPS. One
// GET of a namespace is measured with the administrator's client certificate (the baseline) and
// with a bearer token the webhook resolves, in alternating rounds so the ratio compares figures
// of the same run: first with the default cache (the webhook is asked once), then with
// `--authentication-token-webhook-cache-ttl=0` (asked on every request).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createServer as netServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { issueCert, makeCa } from '../test/support/certs.ts';
import { load, loadRow, row } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 32;
const PATH = '/api/v1/namespaces/default';
const TOKEN = 'bench-webhook-token';

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-webhook-'));
const ca = await makeCa('bench-webhook-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
const client = await issueCert(ca, { subject: 'CN=orch-apiserver' });
let reviews = 0;
const webhook = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    reviews++;
    const review = JSON.parse(Buffer.concat(chunks).toString()) as { apiVersion: string; spec: { token: string } };
    const ok = review.spec.token === TOKEN;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: ok ? { authenticated: true, user: { username: 'bench', groups: ['dev'] } } : { authenticated: false } }));
  });
});
await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
const b64 = (pem: string) => Buffer.from(pem).toString('base64');
const config = join(dir, 'webhook.kubeconfig');
writeFileSync(
  config,
  `clusters:\n- name: w\n  cluster:\n    server: https://127.0.0.1:${(webhook.address() as AddressInfo).port}/\n    certificate-authority-data: ${b64(ca.cert)}\n` +
    `users:\n- name: a\n  user:\n    client-certificate-data: ${b64(client.cert)}\n    client-key-data: ${b64(client.key)}\n` +
    'contexts:\n- name: w\n  context: {cluster: w, user: a}\ncurrent-context: w\n',
);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

interface Started {
  child: ChildProcess;
  url: string;
  tls: { ca: string; cert: string; key: string };
}

async function startApiServer(ttl: string): Promise<Started> {
  const port = await freePort();
  const bin = fileURLToPath(new URL('../bin/orch-apiserver.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [bin, '--bind-address=127.0.0.1', `--secure-port=${port}`, `--data-dir=${join(dir, `data-${ttl}`)}`, '--max-requests-inflight=0', `--authentication-token-webhook-config-file=${config}`, `--authentication-token-webhook-cache-ttl=${ttl}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /export KUBECONFIG=(\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  const text = readFileSync(kubeconfig, 'utf8');
  const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(text)![1]!, 'base64').toString();
  return { child, url: `https://127.0.0.1:${port}`, tls: { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') } };
}

async function measure(ttl: string, label: string): Promise<void> {
  const s = await startApiServer(ttl);
  const admin = new Pool(s.url, { connections: CONNECTIONS, pipelining: 1, connect: { ca: s.tls.ca, cert: s.tls.cert, key: s.tls.key } });
  const bearer = new Pool(s.url, { connections: CONNECTIONS, pipelining: 1, connect: { ca: s.tls.ca } });
  const get = (pool: Pool, headers: Record<string, string>) => async () => {
    const r = await pool.request({ method: 'GET', path: PATH, headers });
    await r.body.arrayBuffer();
    if (r.statusCode !== 200) throw new Error(`GET ${PATH}: ${r.statusCode}`);
  };
  const withToken = get(bearer, { Authorization: `Bearer ${TOKEN}` });
  try {
    for (let i = 0; i < 3; i++) {
      await load(CONNECTIONS, 1000, get(admin, {}));
      await load(CONNECTIONS, 1000, withToken);
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const cert = await load(CONNECTIONS, SECONDS * 1000, get(admin, {}));
      const before = reviews;
      const token = await load(CONNECTIONS, SECONDS * 1000, withToken);
      loadRow(`${label} round ${round}: GET, client certificate (baseline)`, cert);
      loadRow(`${label} round ${round}: GET, webhook bearer token`, token, cert);
      row(`${label} round ${round}: webhook reviews during the token run`, String(reviews - before));
    }
  } finally {
    await admin.close();
    await bearer.close();
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
  }
}

try {
  await measure('2m', 'cache 2m');
  await measure('0', 'no cache');
} finally {
  webhook.close();
  rmSync(dir, { recursive: true, force: true });
}
