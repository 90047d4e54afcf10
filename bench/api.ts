// API benchmark: `npm run bench:api`. The servers run in child processes (bench/api-server.ts) and
// this process only generates load with keep-alive undici pools, so the two never share an event
// loop (the machine this is tuned for has 2 cores: one for the server, one for the load). Every
// figure is printed next to a baseline measured in the same run, with the same client:
//   GET of one Lease         ↔ a bare node:http server answering GET with the same bytes
//   LIST ?limit=500          ↔ a bare server returning the bytes of that very list response
//   durable creates          ↔ raw etcd puts (fsync'd, loopback etcd started here), same clients
//   watch fan-out (1 000)    ↔ a bare server writing one serialized event to 1 000 held responses
//   16 merge patches racing on one Lease ↔ the same 16 clients each patching its own Lease
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, type Dispatcher } from 'undici';
import { EndpointPool } from '../src/storage/etcd/endpoints.ts';
import { startEtcd, type EtcdCluster } from '../test/support/etcd.ts';
import { tsLoader } from '../test/support/ts-loader.ts';
import { fmt, load, loadRow, percentiles, row, type LoadResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_MS = 1000;
const CONNECTIONS = 50;
const LIST_CONNECTIONS = Number(process.env.BENCH_LIST_CONNECTIONS ?? 50);
const POPULATE_CONCURRENCY = 32;
const CREATE_CLIENTS = 16;
const SMALL_LIST = 10_000;
const LARGE_LIST = Number(process.env.BENCH_LARGE_LIST ?? 100_000);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
/** BENCH_ONLY=startup,get,list,create,watch,apply,protobuf (any subset) runs only those phases, to iterate on one figure. */
const PHASES = new Set((process.env.BENCH_ONLY ?? 'startup,get,list,create,watch,apply,contended,protobuf').split(',').map((p) => p.trim()));
/** Clients of the contended-patch phase (issue: 16 clients patching one object). */
const CONTENDED_CLIENTS = 16;
const CHANGES = 100;
/** Population stops here even if not done (the figures then say how many leases there were). */
const POPULATE_LIMIT_MS = 6 * 60_000;
/** The whole run is killed after this, whatever it is doing. */
const WATCHDOG_MS = 15 * 60_000;

const GROUP_VERSION = 'coordination.orch.io/v1';
const leasesPath = (ns: string): string => `/apis/${GROUP_VERSION}/namespaces/${ns}/leases`;
const NOTE = 'n'.repeat(520); // makes a stored Lease about 1 KB of JSON

function leaseBody(name: string): string {
  return JSON.stringify({
    apiVersion: GROUP_VERSION,
    kind: 'Lease',
    metadata: { name, labels: { app: 'bench', tier: 'control-plane' }, annotations: { 'bench.orch.io/note': NOTE } },
    spec: {
      holderIdentity: 'node-0123456789-abcdef',
      leaseDurationSeconds: 40,
      acquireTime: '2024-01-01T00:00:00.000000Z',
      renewTime: '2024-01-01T00:00:10.000000Z',
      leaseTransitions: 3,
    },
  });
}
const leaseName = (prefix: string, i: number): string => `${prefix}-${String(i).padStart(6, '0')}`;

// ---------------------------------------------------------------------------------------------
// Child processes and clean-up

interface ServerChild {
  name: string;
  url: string;
  proc: ChildProcess;
  /** The last lines the child wrote to stderr, and how many it wrote in all. */
  stderrTail: string[];
  stderrLines: number;
  /** Resolves with the next stdout line starting with `prefix` (undefined after 30 s). */
  nextLine(prefix: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

function cleanupSync(): void {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    cleanupSync();
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  console.error(`\nbench/api.ts: still running after ${WATCHDOG_MS / 60_000} min; giving up`);
  cleanupSync();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

const serverScript = fileURLToPath(new URL('./api-server.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

async function spawnServer(name: string, args: string[]): Promise<ServerChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', serverScript, ...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const lineWaiters = new Set<(line: string) => boolean>();
  void exited.then(() => children.delete(proc));
  const child: ServerChild = {
    name,
    url: '',
    proc,
    stderrTail: [],
    stderrLines: 0,
    nextLine(prefix) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          lineWaiters.delete(waiter);
          resolve(undefined);
        }, 30_000);
        const waiter = (line: string): boolean => {
          if (!line.startsWith(prefix)) return false;
          clearTimeout(timer);
          resolve(line);
          return true;
        };
        lineWaiters.add(waiter);
      });
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
  proc.stderr!.setEncoding('utf8');
  let partial = '';
  proc.stderr!.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      child.stderrLines++;
      child.stderrTail.push(l);
      if (child.stderrTail.length > 40) child.stderrTail.shift();
    }
  });
  child.url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 60 s; stderr:\n${child.stderrTail.join('\n')}`)), 60_000);
    let out = '';
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (chunk: string) => {
      out += chunk;
      for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith('READY ')) {
          clearTimeout(timer);
          resolve(line.slice('READY '.length));
        }
        for (const w of lineWaiters) if (w(line)) lineWaiters.delete(w);
      }
    });
    proc.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited (${code ?? sig}) before it was ready; stderr:\n${child.stderrTail.join('\n')}`));
    });
  });
  return child;
}

// CPU use while a figure is measured, in % of one core: the server processes, this load
// generator, and all other processes on the machine (etcd among them while raw puts run; any
// other work there distorts the figures, and this shows how much there was).
const TICK_MS = 10; // USER_HZ is 100 on Linux

function procTicks(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

function machineBusyTicks(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    // Interrupt time is left out: loopback traffic is largely ours but not charged to a process.
    const [user = 0, nice = 0, system = 0, , , , , steal = 0] = f;
    return user + nice + system + steal;
  } catch {
    return 0;
  }
}

interface CpuMark {
  t: number;
  server: number;
  client: number;
  busy: number;
}

const serverPids: number[] = [];
function cpuMark(): CpuMark {
  return { t: performance.now(), server: serverPids.reduce((a, p) => a + procTicks(p), 0), client: procTicks(process.pid), busy: machineBusyTicks() };
}

function cpuSince(m: CpuMark): string {
  const now = cpuMark();
  const pct = (ticks: number) => fmt((ticks * TICK_MS * 100) / (now.t - m.t));
  const server = now.server - m.server;
  const client = now.client - m.client;
  const other = Math.max(0, now.busy - m.busy - server - client);
  return `server ${pct(server)}%  load generator ${pct(client)}%  others ${pct(other)}%`;
}

function rssMB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** Non-2xx answers and transport errors per phase, with the first body seen. */
const failures = new Map<string, { count: number; sample: string }>();
function fail(phase: string, what: string): void {
  const f = failures.get(phase);
  if (f) f.count++;
  else failures.set(phase, { count: 1, sample: what.slice(0, 400) });
}

interface Reply {
  status: number;
  body: Buffer;
}

/**
 * One request; the body is kept only when asked for (or on failure): the measuring loops just
 * count bytes, which costs the client far less than collecting half a megabyte per list.
 */
async function send(pool: Pool, phase: string, opts: Dispatcher.RequestOptions, keep = false): Promise<Reply> {
  try {
    const res = await pool.request(opts);
    const failed = res.statusCode >= 300;
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      res.body.on('data', (c: Buffer) => {
        if (keep || failed) chunks.push(c);
      });
      res.body.on('end', resolve);
      res.body.on('error', reject);
    });
    const body = Buffer.concat(chunks);
    if (failed) fail(phase, `${opts.method} ${opts.path} → ${res.statusCode}: ${body.toString('utf8')}`);
    return { status: res.statusCode, body };
  } catch (e) {
    fail(phase, `${opts.method} ${opts.path} → ${e instanceof Error ? e.message : String(e)}`);
    return { status: 0, body: Buffer.alloc(0) };
  }
}

const get = (pool: Pool, phase: string, path: string, keep = false): Promise<Reply> => send(pool, phase, { method: 'GET', path }, keep);
const post = (pool: Pool, phase: string, path: string, body: string): Promise<Reply> =>
  send(pool, phase, { method: 'POST', path, body, headers: { 'content-type': 'application/json' } });

function newPool(url: string, connections: number): Pool {
  return new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 120_000, keepAliveMaxTimeout: 120_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
}

async function measure(concurrency: number, op: (worker: number, i: number) => Promise<unknown>): Promise<LoadResult & { cpu: string; serverUsPerOp: number }> {
  await load(concurrency, WARMUP_MS, op);
  const mark = cpuMark();
  const r = await load(concurrency, SECONDS * 1000, op);
  const serverTicks = serverPids.reduce((a, p) => a + procTicks(p), 0) - mark.server;
  return { ...r, cpu: cpuSince(mark), serverUsPerOp: (serverTicks * TICK_MS * 1000) / Math.max(1, r.ops) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function cpuRow(r: { cpu: string }, note = ''): void {
  row(`    cpu, % of one core${note}`, r.cpu);
}

// ---------------------------------------------------------------------------------------------
// Population

interface Population {
  created: number;
  seconds: number;
  /** Creates per second in consecutive slices of 10 000, to show whether the rate falls with size. */
  slices: number[];
  p50: number;
  p99: number;
  cpu: string;
}

async function populate(pool: Pool, ns: string, from: number, to: number): Promise<Population> {
  const lat: number[] = [];
  const slices: number[] = [];
  let next = from;
  let created = 0;
  const mark = cpuMark();
  const start = performance.now();
  const deadline = start + POPULATE_LIMIT_MS;
  let sliceStart = start;
  let lastReport = start;
  await Promise.all(
    Array.from({ length: POPULATE_CONCURRENCY }, async () => {
      while (next < to && performance.now() < deadline) {
        const i = next++;
        const t = performance.now();
        const r = await post(pool, `populate ${ns}`, leasesPath(ns), leaseBody(leaseName('l', i)));
        const now = performance.now();
        lat.push(now - t);
        if (r.status === 201) created++;
        if ((i + 1) % 10_000 === 0) {
          slices.push(10_000 / ((now - sliceStart) / 1000));
          sliceStart = now;
        }
        if (now - lastReport > 15_000) {
          lastReport = now;
          console.log(`    … ${fmt(from + created)} leases after ${fmt((now - start) / 1000, 0)} s`);
        }
      }
    }),
  );
  return { created, seconds: (performance.now() - start) / 1000, slices, ...percentiles(lat), cpu: cpuSince(mark) };
}

function populationRow(label: string, p: Population): void {
  row(label, `${fmt(p.seconds, 1)} s  ${fmt(p.created / p.seconds)}/s  p50 ${fmt(p.p50, 1)} ms  p99 ${fmt(p.p99, 1)} ms`);
  if (p.slices.length > 1) row('    creates/s per 10 000', p.slices.map((s) => fmt(s)).join(' '));
  cpuRow(p);
}

// ---------------------------------------------------------------------------------------------
// Watch fan-out
//
// The watch client is a bare socket with its own chunked decoder: a thousand undici bodies cost
// the client more per event than the bare server spends writing it, which would make the floor a
// measure of the client. Lines are tested for the awaited marker on the bytes, without decoding.

interface RawWatch {
  socket: Socket;
  status: number;
  /** The response body, when the server answered with something other than a chunked stream. */
  text: string;
}

/** GET `path` on a socket of its own and feed every complete newline-terminated line to `onLine`. */
function openRawWatch(url: URL, path: string, onLine: (buf: Buffer, start: number, end: number) => void): Promise<RawWatch> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    socket.setNoDelay(true);
    let head: Buffer | undefined = Buffer.alloc(0);
    let chunked = false;
    let state: 'size' | 'data' | 'crlf' = 'size';
    let sizeText = '';
    let left = 0;
    let partial: Buffer[] = [];
    let settled = false;
    const timer = setTimeout(() => {
      socket.destroy();
      if (!settled) reject(new Error(`no response to ${path} within 30 s`));
    }, 30_000);
    const feed = (buf: Buffer, from: number, to: number): void => {
      let s = from;
      for (let nl = buf.indexOf(10, s); nl !== -1 && nl < to; nl = buf.indexOf(10, s)) {
        if (partial.length) {
          partial.push(buf.subarray(s, nl));
          const line = Buffer.concat(partial);
          partial = [];
          onLine(line, 0, line.length);
        } else onLine(buf, s, nl);
        s = nl + 1;
      }
      if (s < to) partial.push(Buffer.from(buf.subarray(s, to)));
    };
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`));
    socket.on('error', (e) => {
      clearTimeout(timer);
      if (!settled) reject(e);
    });
    socket.on('data', (data: Buffer) => {
      let buf = data;
      if (head) {
        const all = head.length ? Buffer.concat([head, data]) : data;
        const end = all.indexOf('\r\n\r\n');
        if (end === -1) {
          head = all;
          return;
        }
        head = undefined;
        const headers = all.toString('latin1', 0, end);
        const status = Number(headers.split(' ', 2)[1]);
        chunked = /\r\ntransfer-encoding:\s*chunked/i.test(headers);
        buf = all.subarray(end + 4);
        if (status !== 200 || !chunked) {
          // An error (a Status with Content-Length): take what came and report it.
          settled = true;
          clearTimeout(timer);
          setTimeout(() => {
            resolve({ socket, status, text: buf.toString('utf8') });
            socket.destroy();
          }, 200);
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve({ socket, status, text: '' });
      }
      if (!chunked) return;
      let i = 0;
      while (i < buf.length) {
        if (state === 'size') {
          const nl = buf.indexOf(10, i);
          if (nl === -1) {
            sizeText += buf.toString('latin1', i);
            return;
          }
          const size = parseInt(sizeText + buf.toString('latin1', i, nl), 16);
          sizeText = '';
          i = nl + 1;
          if (size === 0) {
            socket.end();
            return;
          }
          left = size;
          state = 'data';
        } else if (state === 'data') {
          const take = Math.min(left, buf.length - i);
          feed(buf, i, i + take);
          i += take;
          left -= take;
          if (left === 0) {
            state = 'crlf';
            left = 2;
          }
        } else {
          const take = Math.min(left, buf.length - i);
          i += take;
          left -= take;
          if (left === 0) state = 'size';
        }
      }
    });
  });
}

interface FanOut {
  watchers: number;
  p50: number;
  p99: number;
  max: number;
  changes: number;
  timeouts: number;
  errors: string[];
  cpu: string;
}

const ERROR_EVENT = Buffer.from('{"type":"ERROR"');

/**
 * Open `WATCHERS` streaming GETs of `watchPath`, then make up to `CHANGES` changes one at a time
 * with `write(seq)`; each change counts from just before its write request until the last watcher
 * has a line containing `marker(seq)`.
 */
async function fanOut(
  baseUrl: string,
  watchPath: string,
  write: (seq: number) => Promise<boolean>,
  marker: (seq: number) => string,
): Promise<FanOut> {
  const url = new URL(baseUrl);
  const errors: string[] = [];
  let want: Buffer | undefined;
  let pending = 0;
  let t0 = 0;
  let arrived: (ok: boolean) => void = () => {};
  const lat: number[] = [];
  const onLine = (buf: Buffer, start: number, end: number): void => {
    const line = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
    if (want && line.indexOf(want) !== -1) {
      if (--pending === 0) {
        lat.push(performance.now() - t0);
        arrived(true);
      }
    } else if (line.subarray(0, ERROR_EVENT.length).equals(ERROR_EVENT) && errors.length < 5) errors.push(line.toString('utf8', 0, 300));
  };
  const sockets: Socket[] = [];
  const openOne = async (): Promise<void> => {
    try {
      const w = await openRawWatch(url, watchPath, onLine);
      if (w.status === 200 && !w.text) sockets.push(w.socket);
      else if (errors.length < 5) errors.push(`watch → ${w.status}: ${w.text.slice(0, 300)}`);
    } catch (e) {
      if (errors.length < 5) errors.push(`watch request failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const openStart = performance.now();
  for (let i = 0; i < WATCHERS && performance.now() - openStart < 60_000; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, WATCHERS - i) }, openOne));
  }
  const open = sockets.length;
  await new Promise((r) => setTimeout(r, 300));

  let timeouts = 0;
  let changes = 0;
  const mark = cpuMark();
  const loopStart = performance.now();
  for (let seq = 0; seq < CHANGES && open > 0 && performance.now() - loopStart < 60_000; seq++) {
    want = Buffer.from(marker(seq));
    pending = open;
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<boolean>((resolve) => {
      arrived = resolve;
      timer = setTimeout(() => resolve(false), 10_000);
    });
    t0 = performance.now();
    const wrote = write(seq).then((ok) => {
      if (!ok) arrived(false);
    });
    const ok = await done;
    clearTimeout(timer);
    await wrote;
    changes++;
    if (!ok) {
      timeouts++;
      if (timeouts >= 3) {
        errors.push(`gave up after ${timeouts} changes not delivered to every watcher within 10 s (last one: ${pending} of ${open} still waiting)`);
        break;
      }
    }
    want = undefined;
    await new Promise((r) => setTimeout(r, 5));
  }
  const cpu = cpuSince(mark);
  for (const s of sockets) s.destroy();
  const p = percentiles(lat);
  return { watchers: open, changes, timeouts, errors, p50: p.p50, p99: p.p99, max: lat.length ? Math.max(...lat) : NaN, cpu };
}

// ---------------------------------------------------------------------------------------------
// The run

const runStart = performance.now();
console.log(
  `api benchmark: ${SECONDS} s per figure (+${WARMUP_MS / 1000} s warm-up), servers in child processes, undici keep-alive client, node ${process.version}`,
);
const dataDir = mkdtempSync(join(tmpdir(), 'bench-api-'));
tempDirs.add(dataDir);
let apiServer: ServerChild | undefined;
let bareServer: ServerChild | undefined;
let etcd: EtcdCluster | undefined;
const summary: [string, string][] = [];
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
if (PROFILE_DIR) console.log(`CPU profiles of the API server per phase go to ${PROFILE_DIR} (profiling slows it down: figures are not comparable)`);

/** Run `fn` with the API server's CPU profiled (when BENCH_PROFILE_DIR is set). */
async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const server = apiServer;
  if (!PROFILE_DIR || !server) return fn();
  const started = server.nextLine('PROFILING');
  server.proc.stdin!.write(`profile ${name}\n`);
  await started;
  try {
    return await fn();
  } finally {
    const written = server.nextLine('PROFILED');
    server.proc.stdin!.write('profile-stop\n');
    console.log(`    (profile: ${(await written)?.slice('PROFILED '.length) ?? 'not written'})`);
  }
}

// ---- 0: start-up, before any other server runs ----
/**
 * A fresh `node` that imports the package and starts a server on the embedded store, as a user's
 * test file does: the time from spawning it to its ready line (import included), and the child's
 * own split of it (import, startServer) — the in-process figure. The package's compiled JavaScript
 * (built here first) with throw-away storage, its certificates in the user's certificate cache (as
 * every start after a user's first finds them) and with an empty cache (the first: it issues
 * them); V8's compiled form of the package's code is in the user's cache in every round (the
 * warm-up starts before the rounds keep it, as a user's first start does), the same on a data directory an earlier start filled (a restart: certificates read back,
 * the default objects already there), and the TypeScript sources (types stripped by Node.js where
 * it does, through tsx elsewhere), the same start-up a round apart.
 */
async function startupRound(entry: string, loader: readonly string[], options: string): Promise<{ readyMs: number; importMs: number; startMs: number; cpuMs: number }> {
  const script = `const t0 = performance.now(); const { startServer } = await import(${JSON.stringify(entry)}); const t1 = performance.now();
const s = await startServer(${options}); const t2 = performance.now(); const c = process.cpuUsage(); process.stdout.write(JSON.stringify({ importMs: t1 - t0, startMs: t2 - t1, cpuMs: (c.user + c.system) / 1000 }) + '\\n'); await s.close();`;
  const started = performance.now();
  const child = spawn(process.execPath, [...loader, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out);
    });
    child.on('exit', (code) => reject(new Error(`start-up child exited with ${code}: ${out}`)));
  });
  const readyMs = performance.now() - started;
  await new Promise((r) => child.once('exit', r));
  return { readyMs, ...(JSON.parse(line) as { importMs: number; startMs: number; cpuMs: number }) };
}

if (PHASES.has('startup')) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  const STARTUP_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3) * 2 + 1;
  const restartDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  tempDirs.add(restartDir);
  const restart = `{ dataDir: ${JSON.stringify(restartDir)} }`;
  const cached = `{ secureServing: { certificateCache: ${JSON.stringify(join(restartDir, 'certificate-cache'))} } }`;
  let emptyCaches = 0;
  const emptyCache = () => `{ secureServing: { certificateCache: ${JSON.stringify(join(restartDir, `empty-cache-${emptyCaches++}`))} } }`;
  const variants = [
    { name: 'compiled package (dist/), certificates cached', entry: join(root, 'dist/index.js'), loader: [] as readonly string[], options: () => cached },
    { name: 'compiled package, empty certificate cache', entry: join(root, 'dist/index.js'), loader: [] as readonly string[], options: emptyCache },
    { name: 'compiled package, restart on a data directory', entry: join(root, 'dist/index.js'), loader: [] as readonly string[], options: () => restart },
    { name: `TypeScript sources${tsLoader.length ? ' through tsx' : ', types stripped by Node.js'}`, entry: join(root, 'src/index.ts'), loader: tsLoader, options: () => cached },
  ];
  await startupRound(variants[0]!.entry, [], restart); // the first start on the directory
  await startupRound(variants[0]!.entry, [], cached); // the first with the cache: it fills it
  const results = new Map<string, { readyMs: number; importMs: number; startMs: number; cpuMs: number }[]>(variants.map((v) => [v.name, []]));
  console.log(`\n# start-up: node start to a ready server (import included) beside startServer alone (in-process), ${STARTUP_ROUNDS} alternating rounds, medians`);
  for (let round = 0; round < STARTUP_ROUNDS; round++) for (const v of variants) results.get(v.name)!.push(await startupRound(v.entry, v.loader, v.options()));
  for (const v of variants) {
    const r = results.get(v.name)!;
    row(`  ${v.name}: ready after / import / startServer`, `${fmt(median(r.map((x) => x.readyMs)), 0)} ms / ${fmt(median(r.map((x) => x.importMs)), 0)} ms / ${fmt(median(r.map((x) => x.startMs)), 0)} ms`);
    // The child's CPU until ready (every thread, Node's own start included): what a busy machine moves least.
    row(`    its CPU until ready`, `${fmt(median(r.map((x) => x.cpuMs)), 0)} ms`);
  }
  const compiled = results.get(variants[0]!.name)!;
  const empty = results.get(variants[1]!.name)!;
  summary.push([
    'start-up: node start to ready, compiled, certificates cached (goal < 200 ms); startServer alone; empty cache',
    `${fmt(median(compiled.map((x) => x.readyMs)), 0)} ms; ${fmt(median(compiled.map((x) => x.startMs)), 0)} ms; ${fmt(median(empty.map((x) => x.readyMs)), 0)} ms`,
  ]);
}

try {
  [apiServer, bareServer] = await Promise.all([spawnServer('api', ['api', dataDir]), spawnServer('bare', ['bare'])]);
  for (const c of [apiServer, bareServer]) if (c.proc.pid) serverPids.push(c.proc.pid);
  const apiPool = newPool(apiServer.url, CONNECTIONS);
  const barePool = newPool(bareServer.url, CONNECTIONS);
  for (const ns of ['bench-get', 'bench-list', 'bench-create', 'bench-watch']) {
    await post(apiPool, 'namespaces', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  }

  // ---- 1, 2: GET ----
  console.log(`\n# GET of one Lease, ${CONNECTIONS} connections (ratio: bare node:http server answering the same bytes)`);
  await post(apiPool, 'get', leasesPath('bench-get'), leaseBody('one'));
  const oneLease = await get(apiPool, 'get', `${leasesPath('bench-get')}/one`, true);
  await send(barePool, 'get', { method: 'PUT', path: '/__body', body: oneLease.body });
  if (PHASES.has('get')) {
    const bareGet = await measure(CONNECTIONS, () => get(barePool, 'bare get', '/lease'));
    loadRow(`bare node:http, ${fmt(oneLease.body.length)} B body (baseline)`, bareGet);
    cpuRow(bareGet);
    const apiGet = await profiled('get', () => measure(CONNECTIONS, () => get(apiPool, 'get', `${leasesPath('bench-get')}/one`)));
    loadRow('GET lease through the API server', apiGet, bareGet);
    cpuRow(apiGet);
    summary.push(['GET: rate vs bare (goal ≥ 0.5), p99 (goal ≤ 10 ms)', `${fmt(apiGet.perSecond / bareGet.perSecond, 2)}×, p99 ${fmt(apiGet.p99, 2)} ms`]);
  }

  // ---- 3: LIST ----
  if (PHASES.has('list')) {
    console.log(`\n# LIST ?limit=500 (first page), ${LIST_CONNECTIONS} connections (ratio: bare server returning the same bytes)`);
    const listPath = `${leasesPath('bench-list')}?limit=500`;
    const lists = new Map<number, LoadResult>();
    let populated = 0;
    for (const size of [SMALL_LIST, LARGE_LIST]) {
      const pop = await profiled(`populate-${size}`, () => populate(apiPool, 'bench-list', populated, size));
      populated += pop.created;
      populationRow(`populate ${fmt(populated - pop.created)} → ${fmt(populated)} leases (${POPULATE_CONCURRENCY} in flight)`, pop);
      row(`    api server RSS with ${fmt(populated)} leases`, `${fmt(rssMB(apiServer.proc.pid))} MB`);
      if (size === LARGE_LIST) summary.push([`populate ${fmt(LARGE_LIST)} (goal: well under 3 min)`, `${fmt(pop.seconds, 1)} s for ${fmt(pop.created)} (${fmt(pop.created / pop.seconds)}/s)`]);
      const page = await get(apiPool, 'list', listPath, true);
      const parsed = JSON.parse(page.body.toString('utf8')) as { items?: unknown[]; metadata?: { remainingItemCount?: number; continue?: string } };
      row(
        `    first page with ${fmt(populated)} stored`,
        `${fmt(parsed.items?.length ?? 0)} items, ${fmt(page.body.length / 1024)} KiB, remaining ${fmt(parsed.metadata?.remainingItemCount ?? NaN)}`,
      );
      await send(barePool, 'list', { method: 'PUT', path: '/__body', body: page.body });
      const bare = await measure(LIST_CONNECTIONS, () => get(barePool, 'bare list', '/list'));
      loadRow(`bare node:http, same ${fmt(page.body.length / 1024)} KiB (baseline)`, bare);
      cpuRow(bare);
      const real = await profiled(`list-${size}`, () => measure(LIST_CONNECTIONS, () => get(apiPool, 'list', listPath)));
      loadRow(`LIST limit=500 with ${fmt(populated)} leases stored`, real, bare);
      cpuRow(real);
      lists.set(size, real);
  }
  const listSmall = lists.get(SMALL_LIST)!;
  const listLarge = lists.get(LARGE_LIST)!;
  row(`LIST rate with ${fmt(LARGE_LIST)} / with ${fmt(SMALL_LIST)}`, `${fmt(listLarge.perSecond / listSmall.perSecond, 2)}×`);
  summary.push([`LIST rate ${fmt(LARGE_LIST)} vs ${fmt(SMALL_LIST)} (goal ≈ 1)`, `${fmt(listLarge.perSecond / listSmall.perSecond, 2)}×`]);
  }

  // ---- 4: durable creates ----
  if (PHASES.has('create')) {
    console.log(`\n# durable creates, ${CREATE_CLIENTS} clients (ratio: raw etcd puts of the same size at ${CREATE_CLIENTS} clients, fsync on)`);
    const createdSize = oneLease.body.length;
    etcd = await startEtcd();
    const etcdPool = new EndpointPool(etcd.endpoints, 10_000);
    const value = Buffer.alloc(createdSize, 'v');
    const rawPut = await measure(CREATE_CLIENTS, (_w, i) => etcdPool.put({ key: Buffer.from(`/bench/raw/${i}`), value }));
    etcdPool.close();
    await etcd.stop();
    etcd = undefined;
    loadRow(`raw etcd put, ${fmt(createdSize)} B values (baseline)`, rawPut);
    cpuRow(rawPut, ' (others: etcd)');
    let createSeq = 0;
    const apiCreate = await profiled('create', () =>
      measure(CREATE_CLIENTS, () => post(apiPool, 'create', leasesPath('bench-create'), leaseBody(leaseName('c', createSeq++)))),
    );
    loadRow(`POST lease through the API server (lmdb)`, apiCreate, rawPut);
    cpuRow(apiCreate);
    summary.push(['creates vs raw etcd puts at 16 (goal ≥ 3×)', `${fmt(apiCreate.perSecond / rawPut.perSecond, 2)}×, p99 ${fmt(apiCreate.p99, 1)} ms`]);
    // The same requests with dryRun=All run every step but the storage write: the ceiling that the
    // HTTP and machinery path alone allows on this machine, to tell storage cost from the rest.
    const dryCreate = await profiled('create-dry-run', () =>
      measure(CREATE_CLIENTS, () => post(apiPool, 'create dry-run', `${leasesPath('bench-create')}?dryRun=All`, leaseBody(leaseName('d', createSeq++)))),
    );
    loadRow(`    same POST with dryRun=All (nothing stored)`, dryCreate, rawPut);
    cpuRow(dryCreate);
    summary.push(['    dry-run creates vs raw etcd puts (ceiling without storage)', `${fmt(dryCreate.perSecond / rawPut.perSecond, 2)}×`]);
  }

  // ---- 5: watch fan-out ----
  if (PHASES.has('watch')) {
    console.log(`\n# watch fan-out: ${fmt(WATCHERS)} watch connections, ${CHANGES} changes one at a time, write → last watcher has the event (ratio: bare fan-out floor; > 1 is slower)`);
    const eventTemplate = `{"type":"ADDED","object":${oneLease.body.toString('utf8')}}\n`;
    const floor = await fanOut(
      bareServer.url,
      '/__watch',
      async (seq) => (await post(barePool, 'bare fanout', '/__fanout', eventTemplate.replace('"name":"one"', `"name":"${leaseName('fan', seq)}"`))).status === 200,
      (seq) => `"name":"${leaseName('fan', seq)}"`,
    );
    await post(barePool, 'bare fanout', '/__unwatch', '');
    row(`bare fan-out floor, ${fmt(floor.watchers)} watchers (baseline)`, `p50 ${fmt(floor.p50, 2)} ms  p99 ${fmt(floor.p99, 2)} ms  max ${fmt(floor.max, 1)}`);
    cpuRow(floor);
    const watchList = JSON.parse((await get(apiPool, 'watch', `${leasesPath('bench-watch')}?limit=1`, true)).body.toString('utf8')) as { metadata?: { resourceVersion?: string } };
    const rv = watchList.metadata?.resourceVersion ?? '0';
    const apiUrl = apiServer.url;
    const real = await profiled('watch', () =>
      fanOut(
        apiUrl,
        `${leasesPath('bench-watch')}?watch=1&resourceVersion=${rv}`,
        async (seq) => (await post(apiPool, 'watch write', leasesPath('bench-watch'), leaseBody(leaseName('fan', seq)))).status === 201,
        (seq) => `"name":"${leaseName('fan', seq)}"`,
      ),
    );
    row(
      `API server watch, ${fmt(real.watchers)} watchers, ${real.changes} changes`,
      `p50 ${fmt(real.p50, 2)} ms  p99 ${fmt(real.p99, 2)} ms  max ${fmt(real.max, 1)}`,
      real.p50 / floor.p50,
    );
    cpuRow(real);
    for (const [name, f] of [['bare', floor], ['api', real]] as const) {
      if (f.timeouts) row(`    ${name}: changes not delivered to all within 10 s`, `${f.timeouts}`);
      for (const e of f.errors) console.log(`    ${name} watch error: ${e}`);
  }
  summary.push(['watch fan-out p50 vs floor (goal ≤ 2×), p99 (goal ≤ 100 ms)', `${fmt(real.p50 / floor.p50, 2)}×, p99 ${fmt(real.p99, 1)} ms`]);
  }
  // ---- 6: server-side apply vs update ----
  if (PHASES.has('apply')) {
    console.log(`\n# apply vs update of a 100-field Lease (96 labels + spec), ${CREATE_CLIENTS} clients, one object each (ratio: PUT of the same change)`);
    const applyNs = 'bench-apply';
    await post(apiPool, 'namespaces', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: applyNs } }));
    const labels = (round: number) => Object.fromEntries(Array.from({ length: 96 }, (_, i) => [`label-${String(i).padStart(2, '0')}`, i === 0 ? `r${round}` : `v${i}`]));
    const hundred = (name: string, round: number, rv?: string) =>
      JSON.stringify({
        apiVersion: GROUP_VERSION,
        kind: 'Lease',
        metadata: { name, labels: labels(round), ...(rv ? { resourceVersion: rv } : {}) },
        spec: { holderIdentity: `holder-${round}`, leaseDurationSeconds: 40, leaseTransitions: round, renewTime: '2024-01-01T00:00:10.000000Z' },
      });
    const path = (w: number) => `${leasesPath(applyNs)}/${leaseName('obj', w)}`;
    for (let w = 0; w < CREATE_CLIENTS; w++) await post(apiPool, 'apply setup', `${leasesPath(applyNs)}?fieldManager=bench`, hundred(leaseName('obj', w), 0));
    // A PUT of a changed object (no resourceVersion: an unconditional update, as the apply is).
    const update = await profiled('update', () => measure(CREATE_CLIENTS, (w, i) =>
      send(apiPool, 'update', { method: 'PUT', path: `${path(w)}?fieldManager=bench`, body: hundred(leaseName('obj', w), i + 1), headers: { 'content-type': 'application/json' } }),
    ));
    loadRow('PUT (update) of a 100-field Lease (baseline)', update);
    cpuRow(update);
    const applied = await profiled('apply', () =>
      measure(CREATE_CLIENTS, (w, i) =>
        send(apiPool, 'apply', { method: 'PATCH', path: `${path(w)}?fieldManager=bench-apply&force=true`, body: hundred(leaseName('obj', w), 1_000_000 + i), headers: { 'content-type': 'application/apply-patch+yaml' } }),
      ),
    );
    loadRow('server-side apply of the same change', applied, update);
    cpuRow(applied);
    summary.push(['apply vs update of a 100-field object (goal ≥ 0.25)', `${fmt(applied.perSecond / update.perSecond, 2)}×`]);
  }

  // ---- 6b: merge patches racing on one object ----
  if (PHASES.has('contended')) {
    console.log(`\n# merge patches without resourceVersion, ${CONTENDED_CLIENTS} clients: each on its own Lease (baseline), then all on one Lease (every losing compare-and-swap is prepared again, never a 409)`);
    const ns = 'bench-contended';
    await post(apiPool, 'namespaces', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    for (let w = 0; w < CONTENDED_CLIENTS; w++) await post(apiPool, 'contended setup', leasesPath(ns), JSON.stringify({ apiVersion: GROUP_VERSION, kind: 'Lease', metadata: { name: leaseName('c', w) }, spec: { holderIdentity: 'h' } }));
    const patch = (target: string, w: number, i: number) =>
      send(apiPool, 'contended', { method: 'PATCH', path: `${leasesPath(ns)}/${target}`, body: JSON.stringify({ metadata: { labels: { [`client-${w}`]: `v${i}` } } }), headers: { 'content-type': 'application/merge-patch+json' } });
    const own = await measure(CONTENDED_CLIENTS, (w, i) => patch(leaseName('c', w), w, i));
    loadRow('merge patch, each client its own object (baseline)', own);
    cpuRow(own);
    const shared = await profiled('contended', () => measure(CONTENDED_CLIENTS, (w, i) => patch(leaseName('c', 0), w, i)));
    loadRow('merge patch, every client the same object', shared, own);
    cpuRow(shared);
    summary.push([`merge patches of one object by ${CONTENDED_CLIENTS} clients vs ${CONTENDED_CLIENTS} objects (no 409: see failures)`, `${fmt(shared.perSecond / own.perSecond, 2)}×`]);
  }

  // ---- 7: protobuf vs JSON ----
  if (PHASES.has('protobuf')) {
    const PB = 'application/vnd.orch.protobuf';
    console.log(`\n# protobuf vs JSON: GET of one Lease, GET of one Node, LIST limit=500 (ratio: the same request in JSON)`);
    const pbNs = 'bench-protobuf';
    await post(apiPool, 'namespaces', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: pbNs } }));
    await populate(apiPool, pbNs, 0, 500);
    const one = `${leasesPath(pbNs)}/${leaseName('l', 0)}`;
    const page = `${leasesPath(pbNs)}?limit=500`;
    // Rounds alternate JSON and protobuf, so drift in what else the machine does affects both; the
    // figures are medians over the rounds. The server's CPU per request is the steadier measure
    // here: on two cores the load generator competes with the server for CPU.
    const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
    const compare = async (what: string, path: string, connections: number) => {
      const rates: number[] = [];
      const cpu: number[] = [];
      let last: { json: LoadResult & { cpu: string; serverUsPerOp: number }; pb: LoadResult & { cpu: string; serverUsPerOp: number } } | undefined;
      for (let round = 0; round < ROUNDS; round++) {
        const json = await measure(connections, () => send(apiPool, `${what} json`, { method: 'GET', path, headers: { accept: 'application/json' } }));
        const pb = await profiled(`${what}-protobuf-${round}`, () => measure(connections, () => send(apiPool, `${what} protobuf`, { method: 'GET', path, headers: { accept: PB } })));
        rates.push(pb.perSecond / json.perSecond);
        cpu.push(json.serverUsPerOp / pb.serverUsPerOp);
        last = { json, pb };
      }
      loadRow(`${what} in JSON (baseline), last round`, last!.json);
      row('    server CPU per request', `${fmt(last!.json.serverUsPerOp)} µs`);
      loadRow(`${what} in protobuf, last round`, last!.pb, last!.json);
      row('    server CPU per request', `${fmt(last!.pb.serverUsPerOp)} µs`);
      cpuRow(last!.pb);
      row(`    median of ${ROUNDS} rounds: rate, server CPU per request (JSON / protobuf)`, `${fmt(median(rates), 2)}×, ${fmt(median(cpu), 2)}×`);
      return { rate: median(rates), cpu: median(cpu) };
    };
    const get = await compare('GET', one, CONNECTIONS);
    // A larger object, as kubelets write them: a Node with addresses, capacity, conditions, images.
    const nodeName = 'bench-protobuf-node';
    const images = Array.from({ length: 20 }, (_, i) => ({ names: [`registry.example.com/team/app-${i}@sha256:${'0123456789abcdef'.repeat(4)}`, `registry.example.com/team/app-${i}:v1.${i}.0`], sizeBytes: 10_000_000 + i }));
    const conditions = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((type) => ({
      type, status: type === 'Ready' ? 'True' : 'False', lastHeartbeatTime: '2026-01-02T03:04:05Z', lastTransitionTime: '2026-01-02T03:04:05Z', reason: `Kubelet${type}`, message: `kubelet reports ${type}`,
    }));
    await post(apiPool, 'node', '/api/v1/nodes', JSON.stringify({
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'm5.large' } },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'aws:///us-east-1a/i-0123456789' },
      status: {
        addresses: [{ type: 'InternalIP', address: '10.0.1.12' }, { type: 'Hostname', address: nodeName }],
        capacity: { cpu: '2', memory: '8022148Ki', pods: '110', 'ephemeral-storage': '81106868Ki' },
        allocatable: { cpu: '1930m', memory: '7305348Ki', pods: '110', 'ephemeral-storage': '74748089333' },
        conditions, images,
        nodeInfo: { machineID: 'ec2a', systemUUID: 'ec2b', bootID: 'c0ffee', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://2.0.0', kubeletVersion: 'v1.36.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      },
    }));
    const nodeGet = await compare(`GET of a Node with status`, `/api/v1/nodes/${nodeName}`, CONNECTIONS);
    const list = await compare('LIST limit=500', page, LIST_CONNECTIONS);
    summary.push(['protobuf vs JSON, rate: GET Lease, GET Node, LIST 500 (goal > 1)', `${fmt(get.rate, 2)}×, ${fmt(nodeGet.rate, 2)}×, ${fmt(list.rate, 2)}×`]);
    summary.push(['protobuf vs JSON, server CPU per request: same', `${fmt(get.cpu, 2)}×, ${fmt(nodeGet.cpu, 2)}×, ${fmt(list.cpu, 2)}×`]);
  }

  row('    api server RSS at the end', `${fmt(rssMB(apiServer.proc.pid))} MB`);

  await apiPool.close();
  await barePool.close();
} catch (e) {
  // Report what was measured up to here; the exit status says the run did not complete.
  console.error(`\nbench/api.ts failed: ${e instanceof Error ? e.stack : String(e)}`);
  process.exitCode = 1;
} finally {
  if (etcd) await etcd.stop();
  await Promise.all([apiServer?.stop(), bareServer?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
  tempDirs.delete(dataDir);
}

console.log('\n# summary');
for (const [k, v] of summary) row(k, v);
if (failures.size) {
  console.log('\n# failed requests');
  for (const [phase, f] of failures) console.log(`  ${phase}: ${fmt(f.count)} (first: ${f.sample})`);
}
for (const s of [apiServer, bareServer]) {
  if (s?.stderrLines) {
    console.log(`\n# ${s.name} server wrote ${fmt(s.stderrLines)} lines to stderr; the last ones:`);
    for (const l of s.stderrTail.slice(-15)) console.log(`  ${l.slice(0, 300)}`);
  }
}
console.log(`\ntotal ${fmt((performance.now() - runStart) / 1000, 0)} s`);
