// RBAC benchmark: `npm run bench:rbac` (`node --import tsx bench/rbac.ts`).
//
// What it measures, in one run:
//
//   1. GET throughput of one ConfigMap over HTTPS with a bearer token (a token-file user, taken from
//      the token cache after its first request), against two API servers in child processes
//      (this file started with `server <mode> …`) holding the same data: one with
//      `--authorization-mode=AlwaysAllow` (the baseline), one with `--authorization-mode=RBAC`.
//      Both hold 1,000 Roles and 1,000 RoleBindings (spread over 50 namespaces, each binding naming
//      a user, a group and a service account) and 100 ClusterRoles with 100 ClusterRoleBindings; the
//      benchmark user is allowed by one RoleBinding of the namespace it reads, found among the
//      others. Each round measures the two servers in the order A, B, B, A (a drift of the
//      machine's load falls on both alike); the ratio RBAC / AlwaysAllow of each round is printed
//      with the server CPU per request of each (less disturbed by other work on the machine than
//      the rate). The goal (≥ 0.90) is judged on the median of the rounds' ratios, as one round can
//      be thrown off by other work on the machine.
//   2. The RBAC decision itself, as a SubjectAccessReview would ask it: `authorize()` of the RBAC
//      authorizer over an index holding the same objects (built in this process from the same
//      generated objects, since the review kinds are not served yet), for an allowed request found
//      through a RoleBinding, one allowed through a ClusterRoleBinding, and a refused one (every
//      binding of the user's groups visited); p50/p99 per call (goal: p99 < 1 ms).
//
// BENCH_SECONDS (default 3) per figure, BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 32),
// BENCH_DECISIONS (default 200,000 per request kind); BENCH_PROFILE_DIR=<dir> has each server write
// CPU profiles of its run (one per thread) to <dir>/<mode>/.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { rbacAuthorizer, RbacIndex, type RbacStores } from '../src/auth/authz/rbac.ts';
import { resourceAttributes } from '../src/auth/authz/authorizer.ts';
import type { KObject } from '../src/machinery/meta.ts';
import type { RegistryStore } from '../src/registry/store.ts';
import type { UserInfo } from '../src/request/user.ts';
import { startServer } from '../src/server/server.ts';
import { fmt, load, loadRow, percentiles, row, type LoadResult } from './lib.ts';

const G = 'rbac.authorization.orch.io';
const TOKEN = 'bench-rbac-token-0123456789abcdef';
const USER = 'bench-user';
const NAMESPACES = 50;
const ROLES = 1000;
const CLUSTER_ROLES = 100;
const TARGET_NS = 'bench-ns-25';
const PATH = `/api/v1/namespaces/${TARGET_NS}/configmaps/target`;
const GOAL_RATIO = 0.9;
const GOAL_P99_MS = 1;

// ---- the objects, the same for both servers and for the in-process index ----

const nsName = (i: number) => `bench-ns-${i % NAMESPACES}`;

function generated(): { roles: KObject[]; roleBindings: KObject[]; clusterRoles: KObject[]; clusterRoleBindings: KObject[] } {
  const roles: KObject[] = [];
  const roleBindings: KObject[] = [];
  for (let i = 0; i < ROLES; i++) {
    const namespace = nsName(i);
    const target = namespace === TARGET_NS && i === ROLES / 2 + 25;
    roles.push({
      apiVersion: `${G}/v1`,
      kind: 'Role',
      metadata: { name: `role-${i}`, namespace },
      rules: [
        { apiGroups: [''], resources: ['secrets', 'pods'], verbs: ['get', 'list'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'], resourceNames: [`d-${i}`] },
        { apiGroups: [''], resources: ['configmaps'], verbs: target ? ['get'] : ['create'] },
      ],
    } as KObject);
    roleBindings.push({
      apiVersion: `${G}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `binding-${i}`, namespace },
      roleRef: { apiGroup: G, kind: 'Role', name: `role-${i}` },
      subjects: [
        { kind: 'User', apiGroup: G, name: target ? USER : `user-${i}` },
        { kind: 'Group', apiGroup: G, name: `group-${i % 20}` },
        { kind: 'ServiceAccount', name: `sa-${i}`, namespace },
      ],
    } as KObject);
  }
  const clusterRoles: KObject[] = [];
  const clusterRoleBindings: KObject[] = [];
  for (let i = 0; i < CLUSTER_ROLES; i++) {
    clusterRoles.push({ apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: `bench-cluster-role-${i}` }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }, { nonResourceURLs: [`/bench/${i}`], verbs: ['get'] }] } as KObject);
    clusterRoleBindings.push({
      apiVersion: `${G}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: `bench-cluster-binding-${i}` },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: `bench-cluster-role-${i}` },
      // The benchmark user's group is in ten of them: those are visited on every decision.
      subjects: [{ kind: 'Group', apiGroup: G, name: i % 10 === 0 ? 'bench' : `group-${i % 20}` }, { kind: 'User', apiGroup: G, name: `cluster-user-${i}` }],
    } as KObject);
  }
  return { roles, roleBindings, clusterRoles, clusterRoleBindings };
}

// ---- the child: one API server ----

if (process.argv[2] === 'server') {
  const [, , , mode, dataDir, tokenAuthFile] = process.argv;
  const server = await startServer({
    dataDir,
    port: 0,
    authentication: { tokenAuthFile },
    authorization: { modes: [mode!] },
    maxRequestsInflight: 0,
    maxMutatingRequestsInflight: 0,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(`KUBECONFIG ${server.kubeconfigPath}\nREADY ${server.url}\n`);
  const stop = () => void server.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();
} else {
  await main();
}

interface Child {
  process: ChildProcess;
  url: string;
  kubeconfig: string;
}

function startChild(mode: string, dataDir: string, tokenFile: string): Promise<Child> {
  // BENCH_PROFILE_DIR=<dir>: each server writes a CPU profile of its whole run there.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_PROFILE_DIR, mode)}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', fileURLToPath(import.meta.url), 'server', mode, dataDir, tokenFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      const ready = lines.find((l) => l.startsWith('READY '));
      const kubeconfig = lines.find((l) => l.startsWith('KUBECONFIG '));
      if (ready && kubeconfig) resolve({ process: child, url: ready.slice(6).trim(), kubeconfig: kubeconfig.slice(11).trim() });
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

function credentials(kubeconfigPath: string): { ca: string; cert: string; key: string } {
  const text = readFileSync(kubeconfigPath, 'utf8');
  const field = (name: string) => Buffer.from(new RegExp(`${name}:\\s*(\\S+)`).exec(text)![1]!, 'base64').toString('utf8');
  return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

async function populate(admin: Pool, objects: ReturnType<typeof generated>): Promise<void> {
  const post = async (path: string, body: unknown) => {
    const r = await admin.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.body.text();
    if (r.statusCode !== 201) throw new Error(`POST ${path}: ${r.statusCode} ${text}`);
  };
  const all = async (items: KObject[], path: (o: KObject) => string) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < items.length) {
          const o = items[next++]!;
          await post(path(o), o);
        }
      }),
    );
  };
  await all(
    Array.from({ length: NAMESPACES }, (_, i) => ({ metadata: { name: `bench-ns-${i}` } }) as KObject),
    () => '/api/v1/namespaces',
  );
  await post(`/api/v1/namespaces/${TARGET_NS}/configmaps`, { metadata: { name: 'target' }, data: { a: 'b' } });
  await all(objects.clusterRoles, () => `/apis/${G}/v1/clusterroles`);
  await all(objects.roles, (o) => `/apis/${G}/v1/namespaces/${o.metadata.namespace}/roles`);
  await all(objects.clusterRoleBindings, () => `/apis/${G}/v1/clusterrolebindings`);
  await all(objects.roleBindings, (o) => `/apis/${G}/v1/namespaces/${o.metadata.namespace}/rolebindings`);
}

/** A store that lists the given objects once and whose watch never sends: the index as the server fills it. */
function fixedStore(items: KObject[], resource: string): RegistryStore {
  const store = {
    def: { resource },
    list: async () => ({ items, metadata: { resourceVersion: '1' } }),
    watch: async () => ({ stop() {}, bookmark() {} }),
  };
  return store as unknown as RegistryStore;
}

async function decisions(objects: ReturnType<typeof generated>): Promise<void> {
  const stores: RbacStores = {
    roles: fixedStore(objects.roles, 'roles'),
    clusterRoles: fixedStore(objects.clusterRoles, 'clusterroles'),
    roleBindings: fixedStore(objects.roleBindings, 'rolebindings'),
    clusterRoleBindings: fixedStore(objects.clusterRoleBindings, 'clusterrolebindings'),
  };
  const index = new RbacIndex(stores, G, (m) => process.stderr.write(`${m}\n`));
  await index.start();
  const authorizer = rbacAuthorizer(index);
  const user: UserInfo = { name: USER, uid: '', groups: ['bench', 'system:authenticated'], extra: {} };
  const N = Number(process.env.BENCH_DECISIONS ?? 200_000);
  const cases: [string, string, ReturnType<typeof resourceAttributes>][] = [
    ['allowed by a RoleBinding', 'allow', resourceAttributes({ verb: 'get', apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: TARGET_NS, name: 'target' })],
    ['allowed by a ClusterRoleBinding', 'allow', resourceAttributes({ verb: 'list', apiGroup: '', apiVersion: 'v1', resource: 'nodes' })],
    ['refused (every binding of the user visited)', 'no-opinion', resourceAttributes({ verb: 'delete', apiGroup: '', apiVersion: 'v1', resource: 'secrets', namespace: TARGET_NS, name: 'x' })],
  ];
  console.log(`\nauthorize() over the RBAC index (${ROLES} Roles, ${ROLES} RoleBindings, ${CLUSTER_ROLES} ClusterRoles and ClusterRoleBindings), ${fmt(N)} calls each`);
  for (const [label, want, info] of cases) {
    for (let i = 0; i < 10_000; i++) await authorizer.authorize({ user, info });
    const lat: number[] = new Array(N);
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const d = await authorizer.authorize({ user, info });
      lat[i] = performance.now() - t;
      if (d.decision !== want) throw new Error(`${label}: ${d.decision}`);
    }
    const p = percentiles(lat);
    row(`  ${label}`, `p50 ${fmt(p.p50 * 1000, 1)} µs  p99 ${fmt(p.p99 * 1000, 1)} µs`);
    if (p.p99 >= GOAL_P99_MS) console.log(`    GOAL MISSED: p99 ≥ ${GOAL_P99_MS} ms`);
  }
  index.stop();
}

/** A process's CPU time in ms, from /proc (USER_HZ is 100 on Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Two measurements as one: their operations over their time; the worse of their percentiles. */
function combined([a, b]: LoadResult[]): LoadResult {
  const ops = a!.ops + b!.ops;
  const seconds = a!.seconds + b!.seconds;
  return { ops, seconds, perSecond: ops / seconds, p50: Math.max(a!.p50, b!.p50), p99: Math.max(a!.p99, b!.p99) };
}

async function main(): Promise<void> {
  const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
  const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-rbac-'));
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, `${TOKEN},${USER},9001,"bench"\n`);
  const objects = generated();
  const children: Child[] = [];
  const pools: Pool[] = [];
  try {
    const servers: { label: string; bearer: Pool; pid: number | undefined }[] = [];
    for (const mode of ['AlwaysAllow', 'RBAC']) {
      const child = await startChild(mode, join(dir, mode), tokenFile);
      children.push(child);
      const tls = credentials(child.kubeconfig);
      const admin = new Pool(child.url, { connections: 8, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
      const bearer = new Pool(child.url, { connections: CONNECTIONS, pipelining: 1, connect: { ca: tls.ca } });
      pools.push(admin, bearer);
      const t = performance.now();
      await populate(admin, objects);
      console.log(`${mode}: ${NAMESPACES} namespaces, ${ROLES} Roles and RoleBindings, ${CLUSTER_ROLES} ClusterRoles and ClusterRoleBindings written in ${fmt((performance.now() - t) / 1000, 1)} s`);
      servers.push({ label: mode, bearer, pid: child.process.pid });
    }
    const get = (pool: Pool) => async () => {
      const r = await pool.request({ method: 'GET', path: PATH, headers: { authorization: `Bearer ${TOKEN}` } });
      await r.body.arrayBuffer();
      if (r.statusCode !== 200) throw new Error(`GET ${PATH}: ${r.statusCode}`);
    };
    // The RBAC server's index follows the writes through its watches: wait until the user is allowed.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await get(servers[1]!.bearer)();
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    console.log(`\nGET ${PATH} over HTTPS with a bearer token, ${CONNECTIONS} connections, ${SECONDS} s per figure`);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`);
      for (const s of servers) await load(CONNECTIONS, 500, get(s.bearer)); // warm-up
      // A, B, B, A: a drift of the machine's load within the round falls on both alike.
      const halves: LoadResult[][] = [[], []];
      const cpu = [0, 0];
      for (const which of [0, 1, 1, 0]) {
        const before = cpuMs(servers[which]!.pid);
        halves[which]!.push(await load(CONNECTIONS, (SECONDS * 1000) / 2, get(servers[which]!.bearer)));
        cpu[which]! += cpuMs(servers[which]!.pid) - before;
      }
      const results = halves.map(combined);
      const perRequest = results.map((r, i) => (cpu[i]! * 1000) / Math.max(1, r.ops));
      loadRow(`  ${servers[0]!.label}`, results[0]!);
      row(`    server CPU per request`, `${fmt(perRequest[0]!)} µs`);
      loadRow(`  ${servers[1]!.label}`, results[1]!, results[0]);
      row(`    server CPU per request`, `${fmt(perRequest[1]!)} µs`, perRequest[1]! / perRequest[0]!);
      ratios.push(results[1]!.perSecond / results[0]!.perSecond);
      cpuRatios.push(perRequest[1]! / perRequest[0]!);
    }
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
    row('RBAC / AlwaysAllow, median of the rounds', `${fmt(median, 3)} (${ratios.map((r) => fmt(r, 3)).join(', ')})`);
    const cpuMedian = [...cpuRatios].sort((a, b) => a - b)[Math.floor(cpuRatios.length / 2)]!;
    row('server CPU per request, RBAC / AlwaysAllow, median', `${fmt(cpuMedian, 3)} (${cpuRatios.map((r) => fmt(r, 3)).join(', ')})`);
    console.log(median >= GOAL_RATIO ? `goal met (≥ ${GOAL_RATIO})` : `GOAL MISSED (< ${GOAL_RATIO})`);
    await decisions(objects);
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    for (const c of children) c.process.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
