// HTTPS and authentication benchmark: `node --import tsx bench/https.ts`. Two API servers run in
// one child process (bench/api-server.ts): one over plain HTTP with no authentication (every
// request the administrator: the floor), one as a user gets it by default (HTTPS, client
// certificates, service-account tokens, a token file). One process, so that both have the same
// heap, compiled code and history: in a process of its own, each server idled while the other was
// measured, and whichever figure came first after an idle spell ran slower (on this machine's
// two cores, the first secure figure after the floor cost 1.2–1.3× the CPU per request of the
// next ones, the same code). This process generates the load. In alternating rounds, GET of one
// object (the `default` Namespace) with keep-alive connections (kept between figures):
//
//   - over plain HTTP, no authentication (the floor);
//   - over HTTPS with a bearer token: a service-account token (a signed JWT) and a token-file token,
//     each taken from the token cache after its first request (goal: at least 0.80 of the floor);
//   - over HTTPS with a client certificate.
//
// The floor is measured before and after each secure figure, and each figure is printed with its
// ratio to the mean of the two (requests per second, and the server's CPU per request); the secure
// figures take turns at coming first in a round. The token cache's counters (/metrics) say how
// many authentications (for the service-account token: signature checks) the bearer phases ran:
// one per token per cache period (10 s). Each round ends with a bare node:http server answering
// the same bytes over HTTP and over HTTPS (the API server's certificate, the same process): what
// TLS itself adds to a request's CPU, and so the most a GET of the API server's cost can keep over
// TLS with nothing else added. Last, 1,000 new TLS connections, each with a client certificate and one request: all
// must complete; the handshake time and the server's CPU per connection are printed.
//
// The goal is judged on the median of the rounds' ratios: one round can be thrown far off by other
// work on the machine (here the floor moved between 7,000 and 12,000 requests per second from one
// figure to the next).
//
// BENCH_SECONDS (default 3) per figure, BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 32),
// BENCH_NEW_CONNECTIONS (default 1000); BENCH_PROFILE_DIR=<dir> writes a CPU profile of the secure
// server for each phase of one more round, not counted, and for the new connections.
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
  /** The plain server of the same process, when it serves one, and the bare server over HTTP and HTTPS. */
  plainUrl?: string;
  bareUrl?: string;
  bareTlsUrl?: string;
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
      const field = (name: string) => lines.find((l) => l.startsWith(`${name} `))?.slice(name.length + 1).trim();
      const kubeconfig = field('KUBECONFIG');
      const plainUrl = field('PLAIN');
      const bareUrl = field('BARE');
      const bareTlsUrl = field('BARE_TLS');
      resolve({ process: child, url: ready.slice('READY '.length).trim(), ...(kubeconfig && { kubeconfig }), ...(plainUrl && { plainUrl }), ...(bareUrl && { bareUrl }), ...(bareTlsUrl && { bareTlsUrl }) });
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

const secureChild = await startChild(['https', join(dir, 'secure'), tokenFile, join(dir, 'plain')]);
const plainChild: Child = { process: secureChild.process, url: secureChild.plainUrl! };
const tls = credentials(secureChild.kubeconfig!);
const children = [secureChild];

// undici closes a connection idle for 4 s; a figure would begin with new handshakes.
const KEEP = { keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 };
const plain = new Pool(plainChild.url, { ...KEEP, connections: CONNECTIONS, pipelining: 1 });
const admin = new Pool(secureChild.url, { connections: 4, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
const bearer = new Pool(secureChild.url, { ...KEEP, connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca } });
const bareHttp = new Pool(secureChild.bareUrl!, { ...KEEP, connections: CONNECTIONS, pipelining: 1 });
const bareHttps = new Pool(secureChild.bareTlsUrl!, { ...KEEP, connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca } });
const certified = new Pool(secureChild.url, { ...KEEP, connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });

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

  // The bare servers answer every GET with the API server's answer to it.
  const answer = await call(plain, 'GET', PATH);
  for (const pool of [bareHttp, bareHttps]) {
    const put = await call(pool, 'PUT', '/__body', {}, JSON.parse(answer.text));
    if (put.status !== 200) throw new Error(`setting the bare server's answer: ${put.status}`);
  }

  // Warm-up: every path compiled and the connections open before anything is measured.
  for (let i = 0; i < 2; i++) {
    await load(CONNECTIONS, 1000, get(bareHttp));
    await load(CONNECTIONS, 1000, get(bareHttps));
    await load(CONNECTIONS, 1000, get(plain));
    await load(CONNECTIONS, 1000, get(bearer, withSa));
    await load(CONNECTIONS, 1000, get(bearer, withFile));
    await load(CONNECTIONS, 1000, get(certified));
  }

  console.log(`GET ${PATH}, ${CONNECTIONS} keep-alive connections, ${SECONDS} s per figure\n`);
  interface Figure {
    label: string;
    profile: string;
    op: () => Promise<void>;
    /** What the token cache's counters are called for this figure, when it uses the cache. */
    counted?: string;
    ratios: number[];
    cpu: number[];
  }
  const figures: Figure[] = [
    { label: 'HTTPS, service-account token (cached)', profile: 'https-sa-token', op: get(bearer, withSa), counted: 'signature checks (cache fetches) / cache hits', ratios: [], cpu: [] },
    { label: 'HTTPS, token-file token (cached)', profile: 'https-file-token', op: get(bearer, withFile), counted: 'authentications (cache fetches) / cache hits', ratios: [], cpu: [] },
    { label: 'HTTPS, client certificate', profile: 'https-certificate', op: get(certified), ratios: [], cpu: [] },
  ];
  /** Per round: bare node:https against bare node:http (requests/s), the server CPU TLS adds to a request, the API server's plain GET's CPU. */
  const tlsItself = { ratios: [] as number[], addedUs: [] as number[], plainUs: [] as number[] };
  // A profiled round is one more, not counted: a profiler slows what it watches.
  const profiling = process.env.BENCH_PROFILE_DIR !== undefined;
  for (let round = 1; round <= ROUNDS + (profiling ? 1 : 0); round++) {
    const profiled = round > ROUNDS;
    const profile = (name: string) => (profiled ? name : undefined);
    const label = profiled ? `round ${round} (profiled, not counted)` : `round ${round}`;
    // The floor before and after each secure figure, and the figure against their mean: this
    // machine's speed drifts by a third from one figure to the next, so a floor measured once a
    // round decided the ratios of the figures far from it. The secure figures in turn, each
    // round starting with the next one: none is always the one right after the floor's.
    let floor = await measure(plainChild, get(plain), profile('http-floor'));
    measuredRow(`${label}: HTTP, no authentication (floor)`, floor);
    for (let i = 0; i < figures.length; i++) {
      const f = figures[(round - 1 + i) % figures.length]!;
      const before = await cacheCounters();
      const run = await measure(secureChild, f.op, profile(f.profile));
      const after = await cacheCounters();
      const next = await measure(plainChild, get(plain));
      const around = { ...floor, perSecond: (floor.perSecond + next.perSecond) / 2, serverUsPerOp: (floor.serverUsPerOp + next.serverUsPerOp) / 2 };
      measuredRow(`${label}: ${f.label} (against the floors around it)`, run, around);
      if (f.counted) row(`    ${f.counted}`, `${counted(before, after, 'fetch ok') + counted(before, after, 'fetch error')} / ${fmt(counted(before, after, 'request hit'))}`);
      measuredRow(`${label}: HTTP, no authentication (floor)`, next);
      floor = next;
      if (profiled) continue;
      f.ratios.push(run.perSecond / around.perSecond);
      f.cpu.push(run.serverUsPerOp / around.serverUsPerOp);
      tlsItself.plainUs.push(around.serverUsPerOp);
    }
    // What TLS itself costs a request: the bare server over HTTPS between two runs over HTTP.
    const bare1 = await measure(secureChild, get(bareHttp));
    const bareTls = await measure(secureChild, get(bareHttps));
    const bare2 = await measure(secureChild, get(bareHttp));
    const bareAround = { ...bare1, perSecond: (bare1.perSecond + bare2.perSecond) / 2, serverUsPerOp: (bare1.serverUsPerOp + bare2.serverUsPerOp) / 2 };
    measuredRow(`${label}: bare node:http (the same answer)`, bareAround);
    measuredRow(`${label}: bare node:https (against the runs over HTTP around it)`, bareTls, bareAround);
    if (profiled) continue;
    tlsItself.ratios.push(bareTls.perSecond / bareAround.perSecond);
    tlsItself.addedUs.push(bareTls.serverUsPerOp - bareAround.serverUsPerOp);
  }
  const median = (xs: number[]) => percentiles(xs).p50;
  console.log(`\nmedian over ${ROUNDS} rounds, as a ratio to the floor: requests/s (server CPU per request)`);
  for (const f of figures) row(f.label, `${fmt(median(f.ratios), 2)} (${fmt(median(f.cpu), 2)})`);
  const bearerRatio = Math.min(median(figures[0]!.ratios), median(figures[1]!.ratios));
  console.log(`  cached bearer token: ${fmt(bearerRatio, 2)} of the floor, goal ≥ ${fmt(GOAL, 2)}: ${bearerRatio >= GOAL ? 'met' : 'MISSED'}`);
  // TLS's own cost, in CPU per request, against what the API server's GET costs: the ratio TLS
  // alone would leave the server, with nothing else added (authentication, authorization).
  const added = median(tlsItself.addedUs);
  const plainUs = median(tlsItself.plainUs);
  row('TLS itself: bare node:https against bare node:http', `${fmt(median(tlsItself.ratios), 2)} (+${fmt(added)} µs server CPU per request)`);
  row(`  the most TLS alone leaves a GET of ${fmt(plainUs)} µs`, fmt(plainUs / (plainUs + added), 2));

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
  await Promise.all([plain.close(), admin.close(), bearer.close(), certified.close(), bareHttp.close(), bareHttps.close()]);
  for (const c of children) c.process.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.process.exitCode !== null ? r(undefined) : c.process.once('exit', r)))));
  rmSync(dir, { recursive: true, force: true });
}
