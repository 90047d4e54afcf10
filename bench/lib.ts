// Small measuring helpers shared by the benchmarks: closed-loop load at a fixed concurrency and
// percentile summaries. Every figure is printed next to a baseline measured in the same run.

import type { ChildProcess } from 'node:child_process';

export interface LoadResult {
  ops: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Run `op` from `concurrency` loops for `ms` milliseconds; latencies in ms. */
export async function load(concurrency: number, ms: number, op: (worker: number, i: number) => Promise<unknown>): Promise<LoadResult> {
  const lat: number[] = [];
  let i = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < end) {
        const t = performance.now();
        await op(w, i++);
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { ops: lat.length, seconds, perSecond: lat.length / seconds, ...percentiles(lat) };
}

export function percentiles(samples: number[]): { p50: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function row(label: string, value: string, ratio?: number): void {
  console.log(`${label.padEnd(52)} ${value.padStart(34)}${ratio === undefined ? '' : `   ${fmt(ratio, 2)}× baseline`}`);
}

export function loadRow(label: string, r: LoadResult, baseline?: LoadResult): void {
  row(label, `${fmt(r.perSecond)}/s  p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms`, baseline && r.perSecond / baseline.perSecond);
}

/**
 * Sends a profiling command to a server child (bench/api-server.ts reads `profile <name>` and
 * `profile-stop` on stdin) and waits for its answer (`PROFILING`/`PROFILED`) on its stdout.
 */
export function profileCommand(child: { process: ChildProcess }, line: string, answer: string): Promise<void> {
  return new Promise((resolve) => {
    const onData = (d: Buffer) => {
      if (!d.toString().includes(answer)) return;
      child.process.stdout!.off('data', onData);
      resolve();
    };
    child.process.stdout!.on('data', onData);
    child.process.stdin!.write(`${line}\n`);
  });
}
