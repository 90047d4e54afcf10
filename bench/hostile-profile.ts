// CPU profiles of one hostile request, for finding the step whose cost grows faster than the
// request: bench/hostile.ts profiles one extra run of a case at 1 MiB and at 3 MiB when
// HOSTILE_PROFILE_DIR names a directory, writes a `.cpuprofile` per thread (the server's event loop
// and each write worker, which prepares large writes), and prints the functions whose self time
// grew most from 1 to 3 MiB. A linear step grows about 3×; the culprit grows more and takes a
// larger share at 3 MiB.
//
// Every thread is profiled from this process: the event loop with an inspector session of its
// own, the worker threads through that session's NodeWorker domain.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { fmt } from './lib.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

interface WorkerSession {
  sessionId: string;
  title: string;
  nextId: number;
  waiting: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
}

/** A profile of every thread of this process, started and stopped around one request. */
export class ThreadProfiler {
  private readonly session = new Session();
  private readonly workers = new Map<string, WorkerSession>();

  private constructor() {}

  static async start(): Promise<ThreadProfiler> {
    const p = new ThreadProfiler();
    p.session.connect();
    p.session.on('NodeWorker.attachedToWorker', (m) => {
      const { sessionId, workerInfo } = m.params;
      p.workers.set(sessionId, { sessionId, title: workerInfo.title, nextId: 1, waiting: new Map() });
    });
    p.session.on('NodeWorker.detachedFromWorker', (m) => {
      const w = p.workers.get(m.params.sessionId);
      for (const q of w?.waiting.values() ?? []) q.reject(new Error('the worker went away'));
      p.workers.delete(m.params.sessionId);
    });
    p.session.on('NodeWorker.receivedMessageFromWorker', (m) => {
      const w = p.workers.get(m.params.sessionId);
      const reply = JSON.parse(m.params.message) as { id?: number; result?: unknown; error?: { message: string } };
      const q = reply.id === undefined ? undefined : w?.waiting.get(reply.id);
      if (!q || reply.id === undefined) return;
      w!.waiting.delete(reply.id);
      if (reply.error) q.reject(new Error(reply.error.message));
      else q.resolve(reply.result);
    });
    // Attaching reports the workers already running; the write pool's are started by the warm-up.
    await p.session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await p.session.post('Profiler.enable');
    await p.session.post('Profiler.setSamplingInterval', { interval: 100 });
    await p.session.post('Profiler.start');
    for (const w of p.workers.values()) {
      await p.toWorker(w, 'Profiler.enable');
      await p.toWorker(w, 'Profiler.setSamplingInterval', { interval: 100 });
      await p.toWorker(w, 'Profiler.start');
    }
    return p;
  }

  private toWorker(w: WorkerSession, method: string, params: object = {}): Promise<unknown> {
    const id = w.nextId++;
    return new Promise((resolve, reject) => {
      w.waiting.set(id, { resolve, reject });
      this.session.post('NodeWorker.sendMessageToWorker', { sessionId: w.sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  }

  /** Stops every profile: the event loop's as `main`, each worker's by its title. */
  async stop(): Promise<Map<string, CpuProfile>> {
    const out = new Map<string, CpuProfile>();
    out.set('main', (await this.session.post('Profiler.stop')).profile as CpuProfile);
    for (const w of this.workers.values()) {
      const r = (await this.toWorker(w, 'Profiler.stop').catch(() => undefined)) as { profile: CpuProfile } | undefined;
      if (r) out.set(w.title.replace(/[^\w]+/g, ''), r.profile);
    }
    await this.session.post('NodeWorker.disable').catch(() => undefined);
    this.session.disconnect();
    return out;
  }
}

/** Self time (ms) per function, over every thread's profile, keyed by name and location. */
export function selfTimes(profiles: Iterable<CpuProfile>): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const samples = p.samples ?? [];
    const deltas = p.timeDeltas ?? [];
    // A sample's time is the gap to the next sample (the first delta is from the profile's start).
    for (let i = 0; i < samples.length; i++) {
      const n = byId.get(samples[i]!);
      if (!n) continue;
      const f = n.callFrame;
      if (f.functionName === '(idle)' || f.functionName === '(program)') continue;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
      out.set(key, (out.get(key) ?? 0) + (deltas[i + 1] ?? 0) / 1000);
    }
  }
  return out;
}

/** Writes each thread's profile as `<label>-<thread>.cpuprofile` in `dir`. */
export async function saveProfiles(dir: string, label: string, profiles: Map<string, CpuProfile>): Promise<void> {
  for (const [thread, p] of profiles) await writeFile(join(dir, `${label}-${thread}.cpuprofile`), JSON.stringify(p));
}

/**
 * Prints the functions that took the most self time at the larger size, with their growth from
 * the smaller: the functions that grew by more than `ratio` × `flag` are marked.
 */
export function printGrowth(small: Map<string, number>, large: Map<string, number>, ratio: number, top = 15): void {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const t1 = total(small);
  const t3 = total(large);
  console.log(`    profiled self time: ${fmt(t1)} ms → ${fmt(t3)} ms (${fmt(t3 / t1, 2)}×; the body grew ${fmt(ratio, 2)}×)`);
  const rows = [...large].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, ms] of rows) {
    const before = small.get(name) ?? 0;
    const growth = before > 0 ? ms / before : Infinity;
    const mark = growth > ratio * 1.5 && ms > t3 * 0.02 ? '  <-- grows faster' : '';
    console.log(`    ${fmt(ms).padStart(6)} ms ${fmt((100 * ms) / t3, 1).padStart(5)}%  ${(Number.isFinite(growth) ? `${fmt(growth, 1)}×` : 'new').padStart(6)}  ${name}${mark}`);
  }
}
