// Runs the PATCH cases of bench/hostile-patches.ts on their own: `node --import tsx
// bench/hostile-patches-run.ts [substring]`. For each case: the handling time at 256 KiB, 1 MiB and
// 3 MiB, the time per MiB, the growth from 1 to 3 MiB, and the worst latency of a concurrent
// client's /readyz (polled every 10 ms) while the 3 MiB request runs. The server runs in this
// process, so a request that holds the event loop holds the /readyz client the same.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server/server.ts';
import { fmt } from './lib.ts';
import { patchCases, type HostileCase } from './hostile-patches.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const SIZES = process.env.HOSTILE_SIZES ? process.env.HOSTILE_SIZES.split(',').map((k) => Number(k) * KiB) : [256 * KiB, 1 * MiB, 3 * MiB];
const only = process.argv[2] ?? process.env.HOSTILE_ONLY;
const skip = process.env.HOSTILE_SKIP;
const REPEAT = Number(process.env.HOSTILE_REPEAT ?? 1);

/** Sends one request; resolves with its status and the time to the end of the answer. */
function send(url: string, req: { method: string; path: string; headers: Record<string, string>; body: Buffer }): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const r = http.request(url + req.path, { method: req.method, headers: { ...req.headers, 'content-length': String(req.body.length) }, maxHeaderSize: 64 * MiB, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

/**
 * Polls /readyz every 10 ms until stopped; the worst latency seen. The client shares the server's
 * event loop, so a latency counts from when the poll was due (a stalled loop delays the timer too).
 */
function pollReadyz(url: string): { stop(): Promise<number> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let worst = 0;
  let running = true;
  const loop = (async () => {
    let due = performance.now();
    while (running) {
      await new Promise<void>((resolve) => {
        http.get(`${url}/readyz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        }).on('error', () => resolve());
      });
      const end = performance.now();
      worst = Math.max(worst, end - due);
      if (process.env.HOSTILE_TRACE) console.log(`  readyz ${fmt(end - due)} ms`);
      due = end + 10;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return worst;
    },
  };
}

async function measure(c: HostileCase, url: string, bytes: number): Promise<{ ms: number; readyz: number; status: number; size: number; text: string }> {
  let best: { ms: number; readyz: number; status: number; size: number; text: string } | undefined;
  for (let i = 0; i < REPEAT; i++) {
    const req = await c.build(bytes, { url, namespace: 'hostile-patches' });
    const poll = pollReadyz(url);
    await new Promise((r) => setTimeout(r, 20));
    const res = await send(url, req);
    const readyz = await poll.stop();
    if (!best || res.ms < best.ms) best = { ms: res.ms, readyz, status: res.status, size: req.body.length, text: res.text };
  }
  return best!;
}

const dataDir = mkdtempSync(join(tmpdir(), 'hostile-patches-'));
const server = await startServer({ dataDir, port: 0, maxRequestsInflight: 0, maxMutatingRequestsInflight: 0, log: () => {} });
try {
  console.log(`${'case'.padEnd(46)} ${'256K ms'.padStart(8)} ${'1M ms'.padStart(8)} ${'3M ms'.padStart(8)} ${'ms/MiB'.padStart(8)} ${'growth'.padStart(7)} ${'readyz'.padStart(8)}  status`);
  for (const c of patchCases) {
    if (only && !c.name.includes(only)) continue;
    if (skip && c.name.includes(skip)) continue;
    const r: Awaited<ReturnType<typeof measure>>[] = [];
    for (const size of SIZES) r.push(await measure(c, server.url, size));
    if (r.length !== 3) {
      console.log(`${c.name.padEnd(46)} ${r.map((x) => `${fmt(x.ms)} ms (${fmt(x.size / KiB)} KiB, readyz ${fmt(x.readyz)} ms, ${x.status})`).join('  ')}`);
      if (process.env.HOSTILE_VERBOSE) for (const x of r) if (x.status >= 300) console.log(`    ${x.status}: ${x.text.slice(0, 300)}`);
      continue;
    }
    const growth = r[2]!.ms / r[1]!.ms;
    const perMiB = r[2]!.ms / (r[2]!.size / MiB);
    const miss = growth > 3.5 || r[2]!.readyz > 250 ? '  MISS' : '';
    const statuses = r.map((x) => x.status).join('/');
    console.log(`${c.name.padEnd(46)} ${fmt(r[0]!.ms).padStart(8)} ${fmt(r[1]!.ms).padStart(8)} ${fmt(r[2]!.ms).padStart(8)} ${fmt(perMiB).padStart(8)} ${fmt(growth, 2).padStart(7)} ${fmt(r[2]!.readyz).padStart(8)}  ${statuses}${miss}`);
    if (process.env.HOSTILE_VERBOSE) for (const x of r) if (x.status >= 300) console.log(`    ${x.status}: ${x.text.slice(0, 300)}`);
  }
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
