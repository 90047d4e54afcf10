// The server under fuzzing (a child process, so a stalled event loop or a runaway allocation in it
// cannot distort the client's clocks or take the test runner down) and its sentinel objects.
//
// Generated requests name objects through tokens of fixed length, replaced just before sending
// (in binary bodies too, where a length prefix must stay right):
//   NS_A / NS_B   the sentinel namespaces (leases with labels and finalizers, events)
//   NODE / RC     a cluster-scoped Node and RuntimeClass
//   NAME          a fresh name for a throw-away object (unique per request)
// A request that damages a sentinel fails the property; the harness then moves to a new generation
// of sentinels (new names) so that the runs after it, and fast-check's shrinking, start clean.

import { readFileSync } from 'node:fs';
import { startServerProcess, type ServerProcess } from '../server-process.ts';
import { tempDir } from '../tmp.ts';

export const TOKENS = {
  NS_A: 'QQA_QQQ', // fz-a-00
  NS_B: 'QQB_QQQ', // fz-b-00
  NODE: 'QQNODE_QQQ', // fz-node-00
  RC: 'QQRC_QQQ', // fz-rc-00
  NAME: 'QQNAME___', // fz-000001
} as const;

/** Where valid writes go: never a sentinel namespace. */
export const SCRATCH = 'fz-scratch';
/** Throw-away names: excluded from the collections whose names are compared. */
const THROWAWAY = /^fz-\d{6}$/;
const OLD_GENERATION = /^fz-(a|b|node|rc)-\d\d$/;

export const LEASE_API = 'coordination.orch.io/v1';
export const EVENTS_API = 'events.orch.io/v1';
export const RC_API = 'node.orch.io/v1';

export const lease = (name: string, meta: Record<string, unknown> = {}, spec: Record<string, unknown> = { holderIdentity: 'fuzz', leaseDurationSeconds: 10 }): Record<string, unknown> => ({
  apiVersion: LEASE_API,
  kind: 'Lease',
  metadata: { name, ...meta },
  spec,
});

interface SentinelSet {
  gen: number;
  names: Record<keyof typeof TOKENS, string>;
  /** Each sentinel object's path. */
  objects: string[];
  /** Collections whose names are compared (throw-away names left out). */
  collections: string[];
}

function sentinelSet(gen: number): SentinelSet {
  const g = String(gen).padStart(2, '0');
  const names = { NS_A: `fz-a-${g}`, NS_B: `fz-b-${g}`, NODE: `fz-node-${g}`, RC: `fz-rc-${g}`, NAME: '' };
  const leases = (ns: string) => `/apis/${LEASE_API}/namespaces/${ns}/leases`;
  return {
    gen,
    names,
    objects: [
      `/api/v1/namespaces/${names.NS_A}`,
      `/api/v1/namespaces/${names.NS_B}`,
      `${leases(names.NS_A)}/s1`,
      `${leases(names.NS_A)}/s2`,
      `${leases(names.NS_A)}/s3`,
      `${leases(names.NS_B)}/s1`,
      `${leases(names.NS_B)}/s2`,
      `/api/v1/namespaces/${names.NS_A}/events/ev1`,
      // The events group's Event, as the core list shows it (one storage for both).
      `/api/v1/namespaces/${names.NS_A}/events/ev2`,
      `/api/v1/nodes/${names.NODE}`,
      `/apis/${RC_API}/runtimeclasses/${names.RC}`,
    ],
    collections: [leases(names.NS_A), leases(names.NS_B), `/api/v1/namespaces/${names.NS_A}/events`, '/api/v1/namespaces', '/api/v1/nodes', `/apis/${RC_API}/runtimeclasses`],
  };
}

/** The objects of a generation, in creation order. */
function sentinelObjects(s: SentinelSet): [string, Record<string, unknown>][] {
  const { NS_A, NS_B, NODE, RC } = s.names;
  const labels = (tier: string) => ({ app: 'fuzz', tier });
  const out: [string, Record<string, unknown>][] = [];
  for (const ns of [NS_A, NS_B]) out.push(['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { fuzz: 'sentinel' } } }]);
  const leases = (ns: string) => `/apis/${LEASE_API}/namespaces/${ns}/leases`;
  out.push([leases(NS_A), lease('s1', { labels: labels('s1'), annotations: { keep: 'me' } })]);
  out.push([leases(NS_A), lease('s2', { labels: labels('s2'), finalizers: ['example.com/keep'] })]);
  out.push([leases(NS_A), lease('s3', { labels: { ...labels('s3'), a: 'x' }, finalizers: ['example.com/keep', 'example.com/other'], annotations: { big: 'v'.repeat(200) } }, { holderIdentity: 'h3', leaseDurationSeconds: 30, leaseTransitions: 2 })]);
  out.push([leases(NS_B), lease('s1', { labels: labels('s1') })]);
  out.push([leases(NS_B), lease('s2', { labels: labels('s2'), finalizers: ['example.com/keep'] })]);
  out.push([
    `/api/v1/namespaces/${NS_A}/events`,
    { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev1' }, involvedObject: { kind: 'Lease', namespace: NS_A, name: 's1' }, reason: 'Tested', message: 'sentinel', type: 'Normal', source: { component: 'fuzz' } },
  ]);
  out.push([
    `/apis/${EVENTS_API}/namespaces/${NS_A}/events`,
    { apiVersion: EVENTS_API, kind: 'Event', metadata: { name: 'ev2' }, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'example.com/fuzz', reportingInstance: 'fuzz-1', action: 'Test', reason: 'Tested', regarding: { kind: 'Lease', namespace: NS_A, name: 's1' }, note: 'sentinel', type: 'Normal' },
  ]);
  out.push(['/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { fuzz: 'sentinel' } } }]);
  out.push([`/apis/${RC_API}/runtimeclasses`, { apiVersion: RC_API, kind: 'RuntimeClass', metadata: { name: RC, labels: { fuzz: 'sentinel' } }, handler: 'runc' }]);
  return out;
}

/** Replace every token in a string or in a binary body (same length, so length prefixes stay valid). */
export function substitute<T extends string | Buffer>(v: T, names: Record<keyof typeof TOKENS, string>): T {
  const pairs = (Object.keys(TOKENS) as (keyof typeof TOKENS)[]).map((k) => [TOKENS[k], names[k]] as const);
  if (typeof v === 'string') {
    let s: string = v;
    for (const [t, n] of pairs) s = s.split(t).join(n);
    return s as T;
  }
  let b = v as Buffer;
  for (const [t, n] of pairs) {
    if (t.length !== n.length) throw new Error(`token ${t} and ${n} differ in length`);
    let at = b.indexOf(t);
    if (at < 0) continue;
    b = Buffer.from(b);
    while (at >= 0) {
      b.write(n, at, 'latin1');
      at = b.indexOf(t, at + n.length);
    }
  }
  return b as T;
}

export type Snapshot = Map<string, string>;

async function get(url: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url + path, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, text: await res.text() };
}

export class Harness {
  private readonly args: string[];
  server!: ServerProcess;
  private set: SentinelSet = sentinelSet(0);
  private baseline: Snapshot = new Map();
  private counter = 0;
  private stderrSeen = 0;
  private restarts = 0;

  constructor(args: string[]) {
    this.args = args;
  }

  get url(): string {
    return this.server.url;
  }

  get generation(): number {
    return this.set.gen;
  }

  async start(): Promise<void> {
    this.server = await startServerProcess([`--data-dir=${tempDir('fuzz')}`, ...this.args]);
    this.stderrSeen = this.server.stderr().length;
    await this.mustCreate('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SCRATCH } });
    await this.newGeneration(0);
  }

  async stop(): Promise<void> {
    await this.server?.kill();
  }

  /** The server died (a crash, or killed for its memory): a new one, with new sentinels. */
  async restartIfDead(): Promise<boolean> {
    if (this.server.child.exitCode === null && this.server.child.signalCode === null) return false;
    this.restarts++;
    await this.start();
    return true;
  }

  alive(): boolean {
    return this.server.child.exitCode === null && this.server.child.signalCode === null;
  }

  /** Names for the tokens of one request: the current sentinels and a fresh throw-away name. */
  names(): Record<keyof typeof TOKENS, string> {
    this.counter++;
    return { ...this.set.names, NAME: `fz-${String(this.counter).padStart(6, '0')}` };
  }

  /** Lines the server wrote to stderr about internal errors since the last call. */
  internalErrors(): string[] {
    const text = this.server.stderr();
    const fresh = text.slice(this.stderrSeen);
    this.stderrSeen = text.length;
    return fresh.split('\n').filter((l) => /internal error|panic|Uncaught|FATAL|heap out of memory/i.test(l));
  }

  async mustCreate(path: string, body: unknown): Promise<void> {
    const res = await fetch(this.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`set-up: POST ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  }

  private async newGeneration(gen: number): Promise<void> {
    if (gen > 99) throw new Error('more than 100 generations of sentinels were damaged');
    this.set = sentinelSet(gen);
    for (const [path, body] of sentinelObjects(this.set)) await this.mustCreate(path, body);
    this.baseline = await this.snapshot();
  }

  /**
   * Every sentinel as its collection lists it in JSON (resourceVersion, managed fields and all), and
   * the names in those collections: six lists rather than a GET per object, as this runs after
   * every request.
   */
  async snapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map();
    const current = new Set(Object.values(this.set.names));
    const lists = await Promise.all(this.set.collections.map((p) => get(this.url, p)));
    this.set.collections.forEach((p, i) => {
      const { status, text } = lists[i]!;
      let items: { metadata: { name: string } }[];
      try {
        items = (JSON.parse(text) as { items: { metadata: { name: string } }[] }).items;
      } catch {
        out.set(`${p} (list)`, `${status} ${text.slice(0, 200)}`);
        return;
      }
      const names: string[] = [];
      for (const item of items) {
        const name = item.metadata.name;
        if (this.set.objects.includes(`${p}/${name}`)) out.set(`${p}/${name}`, JSON.stringify(item));
        if (!THROWAWAY.test(name) && (!OLD_GENERATION.test(name) || current.has(name))) names.push(name);
      }
      out.set(`${p} (names)`, `${status} ${names.sort().join(',')}`);
    });
    for (const p of this.set.objects) if (!out.has(p)) out.set(p, '(missing)');
    return out;
  }

  /** What differs from the baseline; a damaged generation is replaced by a new one. */
  async checkSentinels(): Promise<string[]> {
    const now = await this.snapshot();
    const diffs: string[] = [];
    for (const [k, v] of this.baseline) {
      const w = now.get(k);
      if (w !== v) diffs.push(`${k}:\n    before ${v.slice(0, 600)}\n    after  ${(w ?? '(missing)').slice(0, 600)}`);
    }
    if (diffs.length > 0) await this.newGeneration(this.set.gen + 1);
    return diffs;
  }

  /** The server's resident memory, in MiB. */
  rssMiB(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.server.child.pid}/status`, 'utf8'));
      return Math.round(Number(m?.[1] ?? 0) / 1024);
    } catch {
      return 0;
    }
  }

  get restartCount(): number {
    return this.restarts;
  }
}
