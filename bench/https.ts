// HTTPS and authentication benchmark: `node --import tsx bench/https.ts`. Two API servers run in
// child processes (bench/api-server.ts): one over plain HTTP with no authentication (every request
// the administrator: the floor), one as a user gets it by default (HTTPS, client certificates,
// service-account tokens, a token file). This process generates the load. In alternating rounds,
// GET of one object (the `default` Namespace) with keep-alive connections:
//
//   - over plain HTTP, no authentication (the floor);
//   - over HTTPS with a bearer token: a service-account token (a signed JWT) and a token-file token,
//     each taken from the token cache after its first request (goal: at least 0.80 of the floor);
//   - over HTTPS with a client certificate.
//
// Each figure is printed with its ratio to the floor of the same round and the server's CPU per
// request. The token cache's counters (/metrics) say how many authentications (for the
// service-account token: signature checks) the bearer phases ran: one per token per cache period
// (10 s). Last, 1,000 new TLS connections, each with a client certificate and one request: all
// must complete; the handshake time and the server's CPU per connection are printed.
//
// The goal is judged on the median of the rounds' ratios: one round can be thrown far off by other
// work on the machine.
//
// BENCH_SECONDS (default 3) per figure, BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 32),
// BENCH_NEW_CONNECTIONS (default 1000); BENCH_PROFILE_DIR=<dir> writes a CPU profile of the secure
// server for each phase of the last round and for the new connections (as bench/api.ts does).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { fmt, load, loadRow, percentiles, profileCommand, row, type LoadResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const NEW_CONNECTIONS = Number(process.env.BENCH_NEW_CONNECTIONS ?? 1000);
/** New connections opened at once. */
const HANDSHAKE_CONCURRENCY = 8;
const PATH = '/api/v1/namespaces/default';
const FILE_TOKEN = 'bench-file-token-0123456789abcdef';
const GOAL = 0.8;

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-https-'));
const tokenFile = join(dir, 'tokens.csv');
// In system:masters: the default authorization (Node,RBAC) lets it read what the administrator does.
writeFileSync(tokenFile, `${FILE_TOKEN},bench-user,9001,"bench,system:masters"\n`);

interface Child {
  process: ChildProcess;
  url: string;
  kubeconfig?: string;
}

function startChild(args: string[]): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./api-server.ts', import.meta.url)), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      const ready = lines.find((l) => l.startsWith('READY '));
      if (!ready) return;
      const kubeconfig = lines.find((l) => l.startsWith('KUBECONFIG '))?.slice('KUBECONFIG '.length).trim();
      resolve({ process: child, url: ready.slice('READY '.length).trim(), ...(kubeconfig && { kubeconfig }) });
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

/** The CA and the administrator's certificate and key, from the kubeconfig the server wrote. */
function credentials(kubeconfigPath: string): { ca: string; cert: string; key: string } {
  const text = readFileSync(kubeconfigPath, 'utf8');
  const field = (name: string) => {
    const m = new RegExp(`${name}:\\s*(\\S+)`).exec(text);
    if (!m) throw new Error(`${kubeconfigPath}: no ${name}`);
    return Buffer.from(m[1]!, 'base64').toString('utf8');
  };
  return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

// Server CPU from /proc (USER_HZ is 100 on Linux).
const TICK_MS = 10;
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

type Measured = LoadResult & { serverUsPerOp: number };

const plainChild = await startChild(['api', join(dir, 'plain')]);
const secureChild = await startChild(['https', join(dir, 'secure'), tokenFile]);
const tls = credentials(secureChild.kubeconfig!);
const children = [plainChild, secureChild];

const plain = new Pool(plainChild.url, { connections: CONNECTIONS, pipelining: 1 });
const admin = new Pool(secureChild.url, { connections: 4, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
const bearer = new Pool(secureChild.url, { connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca } });
const certified = new Pool(secureChild.url, { connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });

async function call(pool: Pool, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; text: string }> {
  const r = await pool.request({ method, path, headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: r.statusCode, text: await r.body.text() };
}

const get = (pool: Pool, headers: Record<string, string> = {}) => async () => {
  const r = await pool.request({ method: 'GET', path: PATH, headers });
  await r.body.arrayBuffer();
  if (r.statusCode !== 200) throw new Error(`GET ${PATH}: ${r.statusCode}`);
};

/** How long each figure's load runs unmeasured first: a server that idled while the other was measured starts slower. */
const WARM_MS = 1000;

async function measure(child: Child, op: () => Promise<void>, profile?: string): Promise<Measured> {
  await load(CONNECTIONS, WARM_MS, op);
  if (profile) await profileCommand(child, `profile ${profile}`, 'PROFILING');
  const before = cpuMs(child.process.pid);
  const r = await load(CONNECTIONS, SECONDS * 1000, op);
  const serverUsPerOp = ((cpuMs(child.process.pid) - before) * 1000) / Math.max(1, r.ops);
  if (profile) await profileCommand(child, 'profile-stop', 'PROFILED');
  return { ...r, serverUsPerOp };
}

const measuredRow = (label: string, r: Measured, floor?: Measured) => {
  loadRow(label, r, floor);
  row('    server CPU per request', `${fmt(r.serverUsPerOp)} µs`, floor && r.serverUsPerOp / floor.serverUsPerOp);
};

/** The token cache's counters, from the secure server's /metrics. */
async function cacheCounters(): Promise<Record<string, number>> {
  const text = (await call(admin, 'GET', '/metrics')).text;
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^authentication_token_cache_(request|fetch)_total\{status="(\w+)"\} (\S+)$/.exec(line);
    if (m) out[`${m[1]} ${m[2]}`] = Number(m[3]);
  }
  return out;
}
const counted = (a: Record<string, number>, b: Record<string, number>, key: string) => (b[key] ?? 0) - (a[key] ?? 0);

/** One new TLS connection with a client certificate, one request on it; the handshake's duration. */
function oneConnection(url: URL): Promise<{ handshakeMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let handshakeMs = NaN;
    const req = httpsRequest(
      { host: url.hostname, port: url.port, path: PATH, method: 'GET', agent: false, ca: tls.ca, cert: tls.cert, key: tls.key, headers: { connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve({ handshakeMs, totalMs: performance.now() - start }) : reject(new Error(`GET ${PATH}: ${res.statusCode}`))));
        res.on('error', reject);
      },
    );
    req.on('socket', (s) => (s as TLSSocket).once('secureConnect', () => (handshakeMs = performance.now() - start)));
    req.on('error', reject);
    req.end();
  });
}

try {
  // A service account and its token; the token file's token needs nothing.
  const sa = await call(admin, 'POST', '/api/v1/namespaces/default/serviceaccounts', {}, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bench' } });
  if (sa.status !== 201 && sa.status !== 409) throw new Error(`creating the service account: ${sa.status} ${sa.text}`);
  // The default authorization (Node,RBAC) lets the service account read Namespaces through `view`.
  const crb = await call(admin, 'POST', '/apis/rbac.authorization.orch.io/v1/clusterrolebindings', {}, {
    apiVersion: 'rbac.authorization.orch.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bench-view' },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'ServiceAccount', name: 'bench', namespace: 'default' }],
  });
  if (crb.status !== 201 && crb.status !== 409) throw new Error(`binding the service account: ${crb.status} ${crb.text}`);
  const tr = await call(admin, 'POST', '/api/v1/namespaces/default/serviceaccounts/bench/token', {}, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} });
  if (tr.status !== 201) throw new Error(`TokenRequest: ${tr.status} ${tr.text}`);
  const saToken = (JSON.parse(tr.text) as { status: { token: string } }).status.token;
  const withSa = { authorization: `Bearer ${saToken}` };
  const withFile = { authorization: `Bearer ${FILE_TOKEN}` };

  // Warm-up: every path compiled and the connections open before anything is measured.
  for (let i = 0; i < 2; i++) {
    await load(CONNECTIONS, 1000, get(plain));
    await load(CONNECTIONS, 1000, get(bearer, withSa));
    await load(CONNECTIONS, 1000, get(bearer, withFile));
    await load(CONNECTIONS, 1000, get(certified));
  }

  console.log(`GET ${PATH}, ${CONNECTIONS} keep-alive connections, ${SECONDS} s per figure\n`);
  const ratios = { sa: [] as number[], file: [] as number[], cert: [] as number[], saCpu: [] as number[], fileCpu: [] as number[], certCpu: [] as number[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const profile = (name: string) => (process.env.BENCH_PROFILE_DIR && round === ROUNDS ? name : undefined);
    const floor = await measure(plainChild, get(plain), profile('http-floor'));
    const c0 = await cacheCounters();
    const saRun = await measure(secureChild, get(bearer, withSa), profile('https-sa-token'));
    const c1 = await cacheCounters();
    const fileRun = await measure(secureChild, get(bearer, withFile), profile('https-file-token'));
    const c2 = await cacheCounters();
    const certRun = await measure(secureChild, get(certified), profile('https-certificate'));
    measuredRow(`round ${round}: HTTP, no authentication (floor)`, floor);
    measuredRow(`round ${round}: HTTPS, service-account token (cached)`, saRun, floor);
    row('    signature checks (cache fetches) / cache hits', `${counted(c0, c1, 'fetch ok') + counted(c0, c1, 'fetch error')} / ${fmt(counted(c0, c1, 'request hit'))}`);
    measuredRow(`round ${round}: HTTPS, token-file token (cached)`, fileRun, floor);
    row('    authentications (cache fetches) / cache hits', `${counted(c1, c2, 'fetch ok') + counted(c1, c2, 'fetch error')} / ${fmt(counted(c1, c2, 'request hit'))}`);
    measuredRow(`round ${round}: HTTPS, client certificate`, certRun, floor);
    ratios.sa.push(saRun.perSecond / floor.perSecond);
    ratios.file.push(fileRun.perSecond / floor.perSecond);
    ratios.cert.push(certRun.perSecond / floor.perSecond);
    ratios.saCpu.push(saRun.serverUsPerOp / floor.serverUsPerOp);
    ratios.fileCpu.push(fileRun.serverUsPerOp / floor.serverUsPerOp);
    ratios.certCpu.push(certRun.serverUsPerOp / floor.serverUsPerOp);
  }
  const median = (xs: number[]) => percentiles(xs).p50;
  console.log(`\nmedian over ${ROUNDS} rounds, as a ratio to the floor: requests/s (server CPU per request)`);
  row('HTTPS, service-account token (cached)', `${fmt(median(ratios.sa), 2)} (${fmt(median(ratios.saCpu), 2)})`);
  row('HTTPS, token-file token (cached)', `${fmt(median(ratios.file), 2)} (${fmt(median(ratios.fileCpu), 2)})`);
  row('HTTPS, client certificate', `${fmt(median(ratios.cert), 2)} (${fmt(median(ratios.certCpu), 2)})`);
  const bearerRatio = Math.min(median(ratios.sa), median(ratios.file));
  console.log(`  cached bearer token: ${fmt(bearerRatio, 2)} of the floor, goal ≥ ${fmt(GOAL, 2)}: ${bearerRatio >= GOAL ? 'met' : 'MISSED'}`);

  // New connections, each with a client certificate and one request.
  const url = new URL(secureChild.url);
  const handshakes: number[] = [];
  const totals: number[] = [];
  let failed = 0;
  let next = 0;
  if (process.env.BENCH_PROFILE_DIR) await profileCommand(secureChild, 'profile https-new-connections', 'PROFILING');
  const cpuBefore = cpuMs(secureChild.process.pid);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: HANDSHAKE_CONCURRENCY }, async () => {
      while (next < NEW_CONNECTIONS) {
        next++;
        try {
          const r = await oneConnection(url);
          handshakes.push(r.handshakeMs);
          totals.push(r.totalMs);
        } catch (e) {
          failed++;
          if (failed <= 3) console.error(`new connection failed: ${(e as Error).message}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const serverCpu = cpuMs(secureChild.process.pid) - cpuBefore;
  if (process.env.BENCH_PROFILE_DIR) await profileCommand(secureChild, 'profile-stop', 'PROFILED');
  const h = percentiles(handshakes);
  const t = percentiles(totals);
  console.log(`\n${NEW_CONNECTIONS} new TLS connections with a client certificate, one GET each, ${HANDSHAKE_CONCURRENCY} at a time`);
  row('completed / failed', `${handshakes.length} / ${failed}`);
  row('connections per second', fmt(handshakes.length / seconds));
  row('handshake (connect to secureConnect)', `p50 ${fmt(h.p50, 2)} ms  p99 ${fmt(h.p99, 2)} ms`);
  row('connection with its request', `p50 ${fmt(t.p50, 2)} ms  p99 ${fmt(t.p99, 2)} ms`);
  row('server CPU per connection', `${fmt((serverCpu * 1000) / Math.max(1, handshakes.length))} µs`);
  if (failed) process.exitCode = 1;
} finally {
  await Promise.all([plain.close(), admin.close(), bearer.close(), certified.close()]);
  for (const c of children) c.process.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.process.exitCode !== null ? r(undefined) : c.process.once('exit', r)))));
  rmSync(dir, { recursive: true, force: true });
}
