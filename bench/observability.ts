// What metrics and audit cost: `npm run bench:observability`. The servers run in one child process
// (bench/api-server.ts), the load comes from this one, and every figure is a ratio against a
// baseline measured in the same run:
//   GET of one Lease with a Metadata-level audit log  ↔ the same GET without audit, measured right
//                                                     before and after it (their mean)
//   the request metrics' work per request (labels, counter, histogram, in this process)
//                                                     ↔ the server's CPU time per GET
//   the audit's work per GET (policy, both events, the log's write, in this process)
//                                                     ↔ the server's CPU time per GET
//   the same audited GET with the log written to /dev/null
//                                                     ↔ the GET without audit around it: the audit's
//                                                       work without what the file costs (the same
//                                                       code and writes; the kernel keeps nothing)
//   the same audited GET with the log in batch mode   ↔ the same (the file written off the event loop)
//   a GET that spins 1 µs, and one that spins 2 µs    ↔ the same: what a known amount of work on a
//                                                       request's path costs the throughput here
//   the first touch of fresh memory, per page         ↔ the log's bytes per GET: what the kernel's new
//                                                       pages for the growing file cost here (a
//                                                       fact of the machine, printed to read the rest)
// The in-process figures stay steady on a busy machine, where the throughput ratio wanders: both
// servers are in one process (in processes of their own, each idled while the other ran), each
// audited round is held against the rounds without audit around it (this machine's speed drifts
// by a third from one figure to the next), and the median of the rounds' ratios counts.
// Goal (issue 18): metrics and a Metadata audit log together cost at most 10% of GET throughput.
// BENCH_PROFILE_DIR=<dir> writes a CPU profile of each server in one more round, not counted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { Pool } from 'undici';
import { createRequestMetrics } from '../src/server/request-metrics.ts';
import { parseRequestInfo } from '../src/request/request-info.ts';
import { WarningRecorder, type RequestContext } from '../src/request/context.ts';
import { newUUID } from '../src/request/audit-id.ts';
import { policyAudit } from '../src/server/audit/audit.ts';
import { auditLogBackend } from '../src/server/audit/log-backend.ts';
import { readAuditPolicy } from '../src/server/audit/policy.ts';
import { fmt, load, loadRow, profileCommand, row, type LoadResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 50;
const GOAL = 0.9;
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-observability-'));
const policy = join(dir, 'policy.yaml');
writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
const auditLog = join(dir, 'audit.log');

interface Child {
  process: ChildProcess;
  url: string;
  /** The server without audit of the same process. */
  plainUrl?: string;
  /** The audited server of the same process with its log on /dev/null. */
  nullLogUrl?: string;
  /** The audited server of the same process in batch mode. */
  batchLogUrl?: string;
  /** The servers of the same process whose requests spin 1 µs and 2 µs. */
  spinUrls?: string[];
}

function startChild(args: string[]): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./api-server.ts', import.meta.url)), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      const ready = lines.find((l) => l.startsWith('READY '));
      const field = (name: string) => lines.find((l) => l.startsWith(`${name} `))?.slice(name.length + 1).trim();
      const [plainUrl, nullLogUrl, batchLogUrl] = [field('PLAIN'), field('NULL_LOG'), field('BATCH_LOG')];
      const spinUrls = [field('SPIN_1'), field('SPIN_2')].filter((u): u is string => u !== undefined);
      if (ready) resolve({ process: child, url: ready.slice('READY '.length).trim(), ...(plainUrl && { plainUrl }), ...(nullLogUrl && { nullLogUrl }), ...(batchLogUrl && { batchLogUrl }), spinUrls });
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

// Server CPU from /proc (USER_HZ is 100 on Linux): the whole process's, or with `thread`, its main
// thread's (the event loop's, whose time per request bounds the throughput).
function cpuMs(pid: number | undefined, thread = false): number {
  try {
    const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

const auditedChild = await startChild(['api', join(dir, 'audited'), policy, auditLog, join(dir, 'plain')]);
const plainChild: Child = { process: auditedChild.process, url: auditedChild.plainUrl! };
const nullLogChild: Child = { process: auditedChild.process, url: auditedChild.nullLogUrl! };
const batchLogChild: Child = { process: auditedChild.process, url: auditedChild.batchLogUrl! };
const spinChildren: Child[] = auditedChild.spinUrls!.map((url) => ({ process: auditedChild.process, url }));
const children = [auditedChild];
try {
  // undici closes a connection idle for 4 s: each figure would begin with new connections.
  const pools = new Map([plainChild, auditedChild, nullLogChild, batchLogChild, ...spinChildren].map((c) => [c, new Pool(c.url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 })]));
  for (const [, pool] of pools) {
    const r = await pool.request({ method: 'POST', path: LEASES, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'bench' }, spec: { holderIdentity: 'h' } }) });
    await r.body.text();
    if (r.statusCode !== 201) throw new Error(`create: ${r.statusCode}`);
  }
  const get = (pool: Pool) => async () => {
    const r = await pool.request({ method: 'GET', path: `${LEASES}/bench` });
    await r.body.arrayBuffer();
    if (r.statusCode !== 200) throw new Error(`GET: ${r.statusCode}`);
  };
  type Measured = LoadResult & { usPerOp: number; loopUsPerOp: number };
  const measure = async (c: Child, profile?: string): Promise<Measured> => {
    if (profile) await profileCommand(c, `profile ${profile}`, 'PROFILING');
    const before = cpuMs(c.process.pid);
    const loopBefore = cpuMs(c.process.pid, true);
    const r = await load(CONNECTIONS, SECONDS * 1000, get(pools.get(c)!));
    const usPerOp = ((cpuMs(c.process.pid) - before) * 1000) / Math.max(1, r.ops);
    const loopUsPerOp = ((cpuMs(c.process.pid, true) - loopBefore) * 1000) / Math.max(1, r.ops);
    if (profile) await profileCommand(c, 'profile-stop', 'PROFILED');
    return { ...r, usPerOp, loopUsPerOp };
  };
  // Warm all three, then each audited round between two without audit: the ratio of a round is
  // the audited throughput over the mean of the two around it. The log on /dev/null is measured
  // the same way right after, sharing the run between them.
  for (const c of [plainChild, auditedChild, nullLogChild, batchLogChild, ...spinChildren]) await load(CONNECTIONS, 1000, get(pools.get(c)!));
  type Round = { plain: Measured; audited: Measured; ratio: number };
  const rounds: Round[] = [];
  const nullRounds: Round[] = [];
  const batchRounds: Round[] = [];
  const spinRounds: Round[][] = spinChildren.map(() => []);
  const mean = (x: Measured, y: Measured): Measured => ({ ...y, perSecond: (x.perSecond + y.perSecond) / 2, usPerOp: (x.usPerOp + y.usPerOp) / 2, loopUsPerOp: (x.loopUsPerOp + y.loopUsPerOp) / 2 });
  // Each measured server between two runs without audit; the phases that write a file are never
  // back to back (the kernel writes a file's pages back some 30 s later, on the same two cores).
  const others: [Child, Round[]][] = [[nullLogChild, nullRounds], [batchLogChild, batchRounds], ...spinChildren.map((c, i): [Child, Round[]] => [c, spinRounds[i]!])];
  let before = await measure(plainChild);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [c, into] of [[auditedChild, rounds], ...others] as [Child, Round[]][]) {
      const m = await measure(c);
      const after = await measure(plainChild);
      const p = mean(before, after);
      into.push({ plain: p, audited: m, ratio: m.perSecond / p.perSecond });
      before = after;
    }
  }
  // Profiles come from one more round, not counted: a profiler slows what it watches.
  if (process.env.BENCH_PROFILE_DIR) {
    const a = await measure(auditedChild, 'observability-audited');
    const n = await measure(nullLogChild, 'observability-null-log');
    const p = await measure(plainChild, 'observability-plain');
    console.log(`profiled rounds: ${a.ops} requests audited, ${n.ops} audited into /dev/null, ${p.ops} without audit`);
  }
  // The round of the median ratio.
  const { plain, audited } = [...rounds].sort((x, y) => x.ratio - y.ratio)[Math.floor(rounds.length / 2)]!;
  const median = (rs: Round[]) => [...rs].sort((x, y) => x.ratio - y.ratio)[Math.floor(rs.length / 2)]!;
  const nullMedian = median(nullRounds);
  const batchMedian = median(batchRounds);

  // The request metrics' own work, in this process: what every request to the server pays for them.
  const metrics = createRequestMetrics(new Registry(), () => true);
  const query = new URLSearchParams();
  const info = parseRequestInfo('GET', `${LEASES}/bench`, query);
  const N = 200_000;
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    const labels = metrics.labels('GET', info, query, undefined)!;
    metrics.observe(labels, 200, 0.001, 900);
    metrics.authenticated('success', 0.0001, 'system:admin');
    metrics.authorized('allowed', 0.0001);
    metrics.inflight('readOnly', 1);
    metrics.inflight('readOnly', 0);
  }
  const metricsUs = ((performance.now() - start) * 1000) / N;

  // The audit's own work for one GET at Metadata: the policy, RequestReceived and ResponseComplete,
  // and the log's writes (one per turn of the event loop, as in the server: turns of 20 requests);
  // then the same with the events made and dropped, to tell serializing from writing.
  const backend = auditLogBackend({ path: join(dir, 'in-process.log') });
  let toLog = true;
  const sink = policyAudit({
    policy: readAuditPolicy(policy, ['audit.k8s.io']),
    write: (line: Buffer, length: number) => (toLog ? backend.writeBytes(line, length) : true),
    apiVersion: 'audit.k8s.io/v1',
    secretResources: new Set(['/secrets']),
  });
  // As in the server: the requests come over CONNECTIONS keep-alive connections (each its socket),
  // all as the one user the authenticator hands out (frozen, shared), with the authorization
  // decision's annotations.
  const sockets = Array.from({ length: CONNECTIONS }, () => ({ remoteAddress: '127.0.0.1' }));
  const admin = Object.freeze({ name: 'system:admin', groups: Object.freeze(['system:masters', 'system:authenticated']) as string[] });
  let nth = 0;
  const auditedGet = (): RequestContext => {
    const headers = { host: '127.0.0.1:6443', 'user-agent': 'kubectl/v1.36.0 (linux/amd64) kubernetes/abcdef0', accept: 'application/json' };
    const res = { headersSent: false, statusCode: 200, setHeader() {}, getHeader() {}, once() {}, on() {} };
    return {
      req: { url: `${LEASES}/bench`, method: 'GET', headers, socket: sockets[nth++ % CONNECTIONS] },
      res,
      url: new URL(`https://127.0.0.1${LEASES}/bench`),
      info,
      receivedAt: Date.now(),
      user: admin,
      warnings: new WarningRecorder(),
      // Made by the chain for every request, audited or not: not the audit's work.
      auditID: newUUID(),
      auditAnnotations: { 'authorization.orch.io/decision': 'allow', 'authorization.orch.io/reason': '' },
    } as unknown as RequestContext;
  };
  /** µs per request of `n` requests, less what making their contexts costs. */
  const auditRounds = async (n: number, audit = true) => {
    const start = performance.now();
    for (let i = 0; i < n; i += 20) {
      for (let j = 0; j < 20; j++) {
        const ctx = auditedGet();
        if (!audit) continue;
        await sink.requestReceived(ctx);
        sink.responseComplete(ctx, 200);
      }
      await new Promise((r) => setImmediate(r));
    }
    return ((performance.now() - start) * 1000) / n;
  };
  const A = 30_000;
  await auditRounds(A);
  const bareUs = await auditRounds(A, false);
  const auditUs = (await auditRounds(A)) - bareUs;
  toLog = false;
  const eventsUs = (await auditRounds(A)) - bareUs;
  await backend.close();
  // Two of the three rounds above wrote to the file: its bytes per audited GET.
  const logBytesPerGet = statSync(join(dir, 'in-process.log')).size / (2 * A);

  // A fact of the machine, not of the server: what the first touch of fresh memory costs. The log's
  // file grows by its bytes per GET, and the kernel takes a new page of its cache for each 4 KiB; in
  // a virtual machine whose host backs the guest's memory only when it is first touched, that page
  // can cost ten times what the copy into it does.
  const PAGES = 16 * 1024;
  const fresh = Buffer.allocUnsafeSlow(PAGES * 4096);
  let t = performance.now();
  for (let i = 0; i < fresh.length; i += 4096) fresh[i] = 1;
  const firstTouchUs = ((performance.now() - t) * 1000) / PAGES;
  t = performance.now();
  for (let i = 0; i < fresh.length; i += 4096) fresh[i] = 2;
  const againUs = ((performance.now() - t) * 1000) / PAGES;

  console.log(`observability: GET of one Lease, ${CONNECTIONS} connections, the median of ${ROUNDS} rounds of ${SECONDS} s each`);
  console.log(`  each round's ratio, audited / without audit around it: ${rounds.map((r) => fmt(r.ratio, 2)).join(', ')}`);
  loadRow('GET, no audit (metrics on; the mean of the runs around the audited one)', plain);
  loadRow('GET, Metadata audit log (metrics on)', audited, plain);
  row('    server CPU per GET, no audit / audited', `${fmt(plain.usPerOp)} / ${fmt(audited.usPerOp)} µs`);
  row('    of which its event loop', `${fmt(plain.loopUsPerOp)} / ${fmt(audited.loopUsPerOp)} µs`);
  console.log(`  each round's event loop µs per GET more with audit: ${rounds.map((r) => fmt(r.audited.loopUsPerOp - r.plain.loopUsPerOp, 1)).join(', ')}`);
  row('    audit log written', `${fmt(statSync(auditLog).size / 1024 / 1024, 1)} MiB`);
  console.log(`  the same audit with the log on /dev/null, each round's ratio: ${nullRounds.map((r) => fmt(r.ratio, 2)).join(', ')}`);
  console.log(`  its event loop µs per GET more than without audit: ${nullRounds.map((r) => fmt(r.audited.loopUsPerOp - r.plain.loopUsPerOp, 1)).join(', ')}`);
  loadRow('GET, Metadata audit log on /dev/null (metrics on)', nullMedian.audited, nullMedian.plain);
  console.log(`  the same audit in batch mode (--audit-log-mode=batch), each round's ratio: ${batchRounds.map((r) => fmt(r.ratio, 2)).join(', ')}`);
  console.log(`  its event loop µs per GET more than without audit: ${batchRounds.map((r) => fmt(r.audited.loopUsPerOp - r.plain.loopUsPerOp, 1)).join(', ')}`);
  loadRow('GET, Metadata audit log in batch mode (metrics on)', batchMedian.audited, batchMedian.plain);
  spinRounds.forEach((rs, i) => {
    const m = median(rs);
    loadRow(`calibration: GET spinning ${i + 1} µs more (each round: ${rs.map((r) => fmt(r.ratio, 2)).join(', ')})`, m.audited, m.plain);
    // Often more than the spin: a slower server leaves the load generator waiting, and waking it (the
    // kernel's work, on the server's thread, as it sends each answer over loopback) costs more.
    console.log(`  its event loop µs per GET more: ${rs.map((r) => fmt(r.audited.loopUsPerOp - r.plain.loopUsPerOp, 1)).join(', ')}`);
  });
  row('request metrics per request (in process)', `${fmt(metricsUs, 2)} µs`);
  const metricsShare = metricsUs / plain.usPerOp;
  row('    share of the server CPU of a GET', `${fmt(metricsShare * 100, 1)} %`);
  row('audit of a GET at Metadata (in process)', `${fmt(auditUs, 2)} µs`);
  row('    of which making the two events (their bytes)', `${fmt(eventsUs, 2)} µs`);
  row('    of which writing them to the file (copy, write)', `${fmt(auditUs - eventsUs, 2)} µs`);
  row('    share of the server CPU of a GET', `${fmt((auditUs / plain.usPerOp) * 100, 1)} %`);
  row('    bytes of log per GET', `${fmt(logBytesPerGet)} B`);
  row('this machine: first touch of fresh memory, per 4 KiB page', `${fmt(firstTouchUs, 2)} µs (touched again: ${fmt(againUs, 3)})`);
  row('    so each GET\'s share of a new page of the log\'s cache', `${fmt((firstTouchUs * logBytesPerGet) / 4096, 2)} µs`);
  const withBoth = (audited.perSecond / plain.perSecond) * (1 - metricsShare);
  row('GET throughput with metrics and audit, of without', `${fmt(withBoth * 100, 1)} %`);
  const withBatch = (batchMedian.audited.perSecond / batchMedian.plain.perSecond) * (1 - metricsShare);
  row('    the same with the log in batch mode', `${fmt(withBatch * 100, 1)} %`);
  const verdict = (x: number) => (x >= GOAL ? `met: ≥ ${GOAL * 100}%` : `MISSED: < ${GOAL * 100}%`);
  console.log(`goal, blocking mode (the default): ${verdict(withBoth)}; batch mode: ${verdict(withBatch)}`);
} finally {
  for (const c of children) c.process.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
