// Faults must not take the server down: a full disk, clients that stop reading, large objects, a
// hung etcd and a shutdown with requests in flight. The server runs as a child process where its
// memory or its signals are measured; the figures are printed as diagnostics.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { tempDir } from '../support/tmp.ts';

const MB = 1024 * 1024;
const running: ServerProcess[] = [];
after(async () => {
  await Promise.all(running.map((p) => p.kill()));
});

async function serve(args: string[]): Promise<ServerProcess> {
  const p = await startServerProcess(args);
  running.push(p);
  return p;
}

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Run `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** How long /readyz takes to answer (ms); fails the test on anything but 200. */
async function readyzMs(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  await res.text();
  assert.equal(res.status, 200);
  return performance.now() - t0;
}

test('200 watchers that never read: memory stays bounded, /readyz stays fast, everything is released when they go', async (t) => {
  const server = await serve([`--data-dir=${tempDir('faults-watchers')}`]);
  assert.equal((await post(server.url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w' } })).status, 201);
  const value = 'x'.repeat(10_000);
  const t0 = performance.now();
  await pool(
    Array.from({ length: 10_000 }, (_, i) => i),
    32,
    async (i) => {
      const res = await post(server.url, '/apis/coordination.orch.io/v1/namespaces/w/leases', { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `l-${i}`, annotations: { v: value } }, spec: {} });
      assert.equal(res.status, 201);
      await res.arrayBuffer();
    },
  );
  t.diagnostic(`created 10000 objects of 10 KB in ${Math.round(performance.now() - t0)} ms`);
  const before = await server.rssAfterGc();

  const { port } = new URL(server.url);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < 200; i++) {
    const s = net.connect(Number(port), '127.0.0.1');
    s.on('error', () => {});
    s.write(`GET /apis/coordination.orch.io/v1/namespaces/w/leases?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: x\r\n\r\n`);
    // Never read: the server must not buffer the replay for us.
    s.pause();
    sockets.push(s);
  }
  let peak = before;
  let slowest = 0;
  const samples: number[] = [];
  const until = Date.now() + 4000;
  while (Date.now() < until) {
    const ms = await readyzMs(server.url);
    samples.push(Math.round(ms));
    slowest = Math.max(slowest, ms);
    peak = Math.max(peak, server.rss());
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const s of sockets) s.destroy();
  await new Promise((r) => setTimeout(r, 1000));
  await server.rssAfterGc();
  const released = await server.rssAfterGc();
  t.diagnostic(`readyz samples ${samples.join(' ')}`);
  t.diagnostic(`server RSS: ${Math.round(before / MB)} MB before, peak ${Math.round(peak / MB)} MB (+${Math.round((peak - before) / MB)} MB) with 200 silent watchers, ${Math.round(released / MB)} MB after they closed; slowest /readyz ${Math.round(slowest)} ms`);
  assert.ok(peak - before < 300 * MB, `RSS grew by ${Math.round((peak - before) / MB)} MB`);
  assert.ok(slowest < 1000, `/readyz took ${Math.round(slowest)} ms`);
  assert.ok(released - before < 50 * MB, `RSS after the watchers closed is ${Math.round((released - before) / MB)} MB above the start`);
});
