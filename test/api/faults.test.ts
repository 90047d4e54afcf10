// Faults must not take the server down: a full disk, clients that stop reading, large objects, a
// hung etcd and a shutdown with requests in flight. The server runs as a child process where its
// memory or its signals are measured; the figures are printed as diagnostics.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testServer } from '../support/server.ts';
import type { ServerOptions } from '../../src/server/server.ts';
import { tempDir } from '../support/tmp.ts';
import { readWatch } from '../support/watch.ts';
import { startEtcd } from '../support/etcd.ts';
import { clientSocket } from '../support/tls-clients.ts';

const MB = 1024 * 1024;
const running: ServerProcess[] = [];
after(async () => {
  await Promise.all(running.map((p) => p.kill()));
});

/** The server with `args`, and `options` that have no flag (test knobs) when given. */
async function serve(args: string[], options?: Partial<ServerOptions>): Promise<ServerProcess> {
  const p = await startServerProcess(args, 30_000, options && { options });
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
  // 2,500 objects of 10 KB: each watcher is owed 25 MB, several times what a socket takes before it
  // pushes back, so a server that buffered the replays would hold gigabytes for 200 of them.
  const OBJECTS = 2_500;
  const t0 = performance.now();
  await pool(
    Array.from({ length: OBJECTS }, (_, i) => i),
    32,
    async (i) => {
      const res = await post(server.url, '/apis/coordination.orch.io/v1/namespaces/w/leases', { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `l-${i}`, annotations: { v: value } }, spec: {} });
      assert.equal(res.status, 201);
      await res.arrayBuffer();
    },
  );
  t.diagnostic(`created ${OBJECTS} objects of 10 KB in ${Math.round(performance.now() - t0)} ms`);
  const before = await server.rssAfterGc();

  const sockets: net.Socket[] = [];
  for (let i = 0; i < 200; i++) {
    const s = clientSocket(server.url);
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
  // Released memory goes back to the system a little after the sockets close (later on newer
  // Node.js versions): read it after a collection until it is back, for up to ten seconds.
  let released = Infinity;
  for (const stop = Date.now() + 10_000; released - before >= 50 * MB && Date.now() < stop; ) {
    await new Promise((r) => setTimeout(r, 500));
    released = await server.rssAfterGc();
  }
  t.diagnostic(`readyz samples ${samples.join(' ')}`);
  t.diagnostic(`server RSS: ${Math.round(before / MB)} MB before, peak ${Math.round(peak / MB)} MB (+${Math.round((peak - before) / MB)} MB) with 200 silent watchers, ${Math.round(released / MB)} MB after they closed; slowest /readyz ${Math.round(slowest)} ms`);
  assert.ok(peak - before < 300 * MB, `RSS grew by ${Math.round((peak - before) / MB)} MB`);
  assert.ok(slowest < 1000, `/readyz took ${Math.round(slowest)} ms`);
  assert.ok(released - before < 50 * MB, `RSS after the watchers closed is ${Math.round((released - before) / MB)} MB above the start`);
});

/** Bytes of the files under `dir` (allocated blocks: sparse files count what they use). */
function diskUsage(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    if (st.isFile()) total += st.blocks * 512;
  }
  return total;
}

test('128 updates of 2 MB objects: the server memory and the data directory stay bounded', async (t) => {
  const dir = tempDir('faults-large');
  // The bounds are an eighth of their defaults here (the store's history 16 MiB instead of 128, the
  // watch cache's events 8 MiB instead of 64): 128 updates write sixteen times the history's bound.
  // The server's RSS levels off after about 40 of them (the bounds, and V8's heap finding its
  // size), so the second half shows whether memory stays at the level it reached. (With 64, the
  // level came near the middle, and the comparison of the halves depended on which side of it a
  // few samples fell: it failed now and then on a bounded server.)
  const server = await serve([`--data-dir=${dir}`], { storageMaxHistoryBytes: 16 * MB, watchCacheMaxEventBytes: 8 * MB });
  assert.equal((await post(server.url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big' } })).status, 201);
  const path = '/apis/coordination.orch.io/v1/namespaces/big/leases';
  const big = (n: number) => `${n}-`.padEnd(2 * MB, 'x');
  for (let i = 0; i < 4; i++) {
    const res = await post(server.url, path, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `l-${i}` }, spec: { holderIdentity: big(0) } });
    assert.equal(res.status, 201);
  }
  const before = await server.rssAfterGc();
  let peakRss = before;
  let peakDisk = 0;
  const rssSamples: number[] = [];
  const t0 = performance.now();
  // Four writers, each on its own object (concurrent patches of one object are another matter).
  let count = 0;
  await Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      for (let k = 0; k < 32; k++) {
        const n = count++;
        const res = await fetch(`${server.url}${path}/l-${w}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ spec: { holderIdentity: big(n + 1) } }),
        });
        const text = await res.text();
        assert.equal(res.status, 200, text.slice(0, 300));
        if (n % 4 === 0) {
          rssSamples.push(Math.round(server.rss() / MB));
          peakRss = Math.max(peakRss, server.rss());
          peakDisk = Math.max(peakDisk, diskUsage(dir));
        }
      }
    }),
  );
  const elapsed = performance.now() - t0;
  peakRss = Math.max(peakRss, server.rss());
  peakDisk = Math.max(peakDisk, diskUsage(dir));
  const end = await server.rssAfterGc();
  const parts = server.rssParts();
  t.diagnostic(`RSS every 4 updates (MB): ${rssSamples.join(' ')}`);
  t.diagnostic(`${count} updates of 2 MB in ${Math.round(elapsed)} ms (${2 * count} MB written): server RSS ${Math.round(before / MB)} MB before, peak ${Math.round(peakRss / MB)} MB (+${Math.round((peakRss - before) / MB)} MB), ${Math.round(end / MB)} MB after (${Math.round(parts.anon / MB)} MB anonymous, ${Math.round(parts.file / MB)} MB file-backed); data directory peak ${Math.round(peakDisk / MB)} MB, ${Math.round(diskUsage(dir) / MB)} MB at the end`);
  // 256 MB written: a server that kept every update would grow by more than this.
  assert.ok(peakRss - before < 200 * MB, `RSS grew by ${Math.round((peakRss - before) / MB)} MB`);
  // Bounded, not merely large: on average the second half of the updates stays at the level the first reached.
  const half = rssSamples.length / 2;
  const firstHalf = Math.max(...rssSamples.slice(0, half));
  const secondHalf = rssSamples.slice(half).reduce((a, b) => a + b, 0) / half;
  assert.ok(secondHalf <= firstHalf + 25, `RSS kept growing: up to ${firstHalf} MB in the first half, ${Math.round(secondHalf)} MB on average in the second`);
  // 256 MB were written, sixteen times the history's bound of 16 MiB; LMDB reuses the pages it frees.
  assert.ok(peakDisk < 75 * MB, `the data directory reached ${Math.round(peakDisk / MB)} MB`);
});

test('a full disk: writes get 507 InsufficientStorage, reads, watches and /readyz go on, writes work again once space is freed, nothing acknowledged is lost', async (t) => {
  const dir = tempDir('faults-disk');
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]).status !== 0) {
    t.skip('mounting a tmpfs needs root');
    return;
  }
  t.after(() => void spawnSync('umount', [dir]));
  const data = join(dir, 'data');
  const server = await serve([`--data-dir=${data}`]);
  assert.equal((await post(server.url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'full' } })).status, 201);
  // Room to free later without touching the store.
  writeFileSync(join(dir, 'filler'), Buffer.alloc(2 * MB));
  const path = '/apis/coordination.orch.io/v1/namespaces/full/leases';
  const watch = readWatch(`${server.url}${path}?watch=true`);
  await watch.status;
  const lease = (name: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name.padEnd(200_000, 'x') } });
  const acknowledged: string[] = [];
  let refused: { status: number; body: { kind?: string; code?: number; reason?: string; message?: string } } | undefined;
  for (let i = 0; i < 100 && !refused; i++) {
    const res = await post(server.url, path, lease(`l-${i}`));
    const body = (await res.json()) as { kind?: string; code?: number; reason?: string; message?: string };
    if (res.status === 201) acknowledged.push(`l-${i}`);
    else refused = { status: res.status, body };
  }
  assert.ok(refused, 'the disk never filled');
  t.diagnostic(`${acknowledged.length} writes of 200 KB acknowledged before the 8 MB filesystem was full; then ${refused.status} ${refused.body.reason}: ${refused.body.message}`);
  assert.equal(refused.status, 507);
  assert.equal(refused.body.kind, 'Status');
  assert.equal(refused.body.code, 507);
  assert.equal(refused.body.reason, 'InsufficientStorage');
  assert.match(refused.body.message ?? '', /no space left/);
  const refusedName = `l-${acknowledged.length}`;

  // Still serving: reads, health, the open watch.
  assert.equal(server.child.exitCode, null);
  const listed = await fetch(`${server.url}${path}`);
  assert.equal(listed.status, 200);
  assert.deepEqual(((await listed.json()) as { items: { metadata: { name: string } }[] }).items.map((o) => o.metadata.name).sort(), [...acknowledged].sort());
  assert.equal((await fetch(`${server.url}${path}/${refusedName}`)).status, 404, 'the refused write stored nothing');
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  assert.equal((await fetch(`${server.url}/livez`)).status, 200);
  const events = await watch.next(acknowledged.length);
  assert.deepEqual(events.map((e) => e.object.metadata.name), acknowledged);

  // Space freed: writes work again and the watch sees them.
  rmSync(join(dir, 'filler'));
  const again = await post(server.url, path, lease(refusedName));
  assert.equal(again.status, 201, await again.text());
  acknowledged.push(refusedName);
  assert.equal((await watch.next(1))[0]!.object.metadata.name, refusedName);
  watch.close();

  // Restart on the same directory: every acknowledged object is there.
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
  const restarted = await serve([`--data-dir=${data}`]);
  const after = (await (await fetch(`${restarted.url}${path}`)).json()) as { items: { metadata: { name: string } }[] };
  assert.deepEqual(after.items.map((o) => o.metadata.name).sort(), [...acknowledged].sort());
  restarted.child.kill('SIGTERM');
  assert.equal(await restarted.exited, 0);
});

test('a hung etcd (SIGSTOP): /readyz and /livez answer in time naming the etcd check, requests get a timeout Status, all recovers after SIGCONT', async (t) => {
  const etcd = await startEtcd();
  t.after(() => etcd.stop());
  // etcd requests fail after 3 s here (10 s by default): still longer than the 2 s health checks.
  const server = await testServer({ storageBackend: 'etcd3', etcdServers: [etcd.endpoints[0]!], etcdRequestTimeoutMs: 3000 });
  const path = '/apis/coordination.orch.io/v1/namespaces/default/leases';
  const lease = (name: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: {} });
  assert.equal((await post(server.url, path, lease('before'))).status, 201);
  const pid = etcd.members[0]!.pid;
  process.kill(pid, 'SIGSTOP');
  let stopped = true;
  // The signal is asynchronous: go on only once the kernel reports the process stopped.
  while (!/^\d+ \(.*\) T/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) await new Promise((r) => setTimeout(r, 10));
  // Replies etcd had already sent before it stopped must not count as answers.
  await new Promise((r) => setTimeout(r, 200));
  t.after(() => void (stopped && process.kill(pid, 'SIGCONT')));

  const timed = async (what: string, run: () => Promise<Response>) => {
    const t0 = performance.now();
    const res = await run();
    const text = await res.text();
    const ms = Math.round(performance.now() - t0);
    t.diagnostic(`etcd stopped: ${what} answered ${res.status} in ${ms} ms`);
    return { status: res.status, text, ms };
  };
  const [readyz, livez, get, create] = await Promise.all([
    timed('/readyz', () => fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(30_000) })),
    timed('/livez', () => fetch(`${server.url}/livez`, { signal: AbortSignal.timeout(30_000) })),
    timed('GET lease', () => fetch(`${server.url}${path}/before`, { signal: AbortSignal.timeout(70_000) })),
    timed('POST lease', () => post(server.url, path, lease('during'))),
  ]);
  for (const health of [readyz, livez]) {
    assert.equal(health.status, 500);
    assert.match(health.text, /\[-\]etcd failed: reason withheld/);
    assert.ok(health.ms < 5000, `health took ${health.ms} ms`);
  }
  for (const req of [get, create]) {
    assert.ok(req.status === 503 || req.status === 504, `${req.status}: ${req.text}`);
    const status = JSON.parse(req.text) as { kind: string; code: number };
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, req.status);
  }

  process.kill(pid, 'SIGCONT');
  stopped = false;
  const deadline = Date.now() + 20_000;
  while ((await fetch(`${server.url}/readyz`)).status !== 200) {
    assert.ok(Date.now() < deadline, '/readyz did not recover');
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal((await post(server.url, path, lease('after'))).status, 201);
  const names = ((await (await fetch(`${server.url}${path}`)).json()) as { items: { metadata: { name: string } }[] }).items.map((o) => o.metadata.name);
  assert.ok(names.includes('before') && names.includes('after'), names.join(','));
});

/** A raw HTTP/1.1 exchange on its own connection: the full response text, or the socket error. */
function rawRequest(url: string, head: string): { socket: net.Socket; response: Promise<string> } {
  const socket = clientSocket(url);
  socket.write(head);
  const response = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
  return { socket, response };
}

/** The body of a chunked or Content-Length HTTP/1.1 response. */
function httpBody(raw: string): string {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  let body = raw.slice(split + 4);
  if (/transfer-encoding: chunked/i.test(head)) {
    let out = '';
    for (;;) {
      const nl = body.indexOf('\r\n');
      const size = parseInt(body.slice(0, nl), 16);
      if (!size) break;
      out += body.slice(nl + 2, nl + 2 + size);
      body = body.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  return Buffer.from(body, 'latin1').toString('utf8');
}

test('SIGTERM with requests in flight: each is answered in full, then the process exits 0', async (t) => {
  // The silent watcher's ended stream is cut after 2.5 s here (5 s by default): the shutdown waits
  // for it. Not 1 s: the cut then fell when the lists' readers resume, and the shutdown waited its
  // full grace period in two runs out of nine (one way to that, a connection whose TLS handshake
  // ended after the shutdown began, is fixed and tested in machinery.test.ts).
  // (The command line's own SIGTERM handling is tested in cli.test.ts.)
  const server = await serve([`--data-dir=${tempDir('faults-shutdown')}`], { watchEndFlushMs: 2500 });
  assert.equal((await post(server.url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 's' } })).status, 201);
  const path = '/apis/coordination.orch.io/v1/namespaces/s/leases';
  const value = 'x'.repeat(10_000);
  await pool(
    Array.from({ length: 2000 }, (_, i) => i),
    16,
    async (i) => {
      const res = await post(server.url, path, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `l-${i}`, annotations: { v: value } }, spec: {} });
      assert.equal(res.status, 201);
      await res.arrayBuffer();
    },
  );
  // A create whose body is still arriving, and two 20 MB lists read slowly (paused sockets).
  const body = JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'late' }, spec: {} });
  const create = rawRequest(server.url, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
  const lists = [0, 1].map(() => rawRequest(server.url, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  for (const l of lists) l.socket.pause();
  // An idle keep-alive connection whose client never closes its side, and a watcher that never reads:
  // neither may hold the shutdown.
  const idle = clientSocket(server.url, { allowHalfOpen: true });
  idle.on('error', () => {});
  idle.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => idle.once('data', resolve));
  const silent = rawRequest(server.url, `GET ${path}?watch=true HTTP/1.1\r\nHost: x\r\n\r\n`);
  silent.socket.pause();
  silent.response.catch(() => {});
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  server.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  create.socket.write(body.slice(10));
  await new Promise((r) => setTimeout(r, 500));
  for (const l of lists) l.socket.resume();
  const [created, ...listed] = await Promise.all([create.response, ...lists.map((l) => l.response)]);
  assert.match(created!, /^HTTP\/1\.1 201 /);
  assert.equal(JSON.parse(httpBody(created!)).metadata.name, 'late');
  for (const raw of listed) {
    assert.match(raw, /^HTTP\/1\.1 200 /);
    assert.equal((JSON.parse(httpBody(raw)) as { items: unknown[] }).items.length, 2000);
  }
  assert.equal(await server.exited, 0);
  const ms = Math.round(performance.now() - t0);
  t.diagnostic(`SIGTERM with a create (body still arriving), two 20 MB lists (read after 1 s), a silent watcher and an idle keep-alive connection open: all answered in full, exit 0 after ${ms} ms`);
  assert.ok(ms < 10_000, `the shutdown took ${ms} ms`);
});

test('a watcher that stops reading while events flow is closed once it is over its bound; other watchers go on', async (t) => {
  // The server cuts an ended watch whose client takes nothing after 5 s; 1 s here.
  const server = await testServer({ watchEndFlushMs: 1000 });
  const path = '/apis/coordination.orch.io/v1/namespaces/default/leases';
  assert.equal((await post(server.url, path, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'hot' }, spec: {} })).status, 201);
  const silent = clientSocket(server.url);
  silent.write(`GET ${path}?watch=true HTTP/1.1\r\nHost: x\r\n\r\n`);
  silent.pause();
  const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
  silent.on('error', () => {});
  await new Promise((r) => setTimeout(r, 200));
  const reader = readWatch(`${server.url}${path}?watch=true`);
  assert.equal((await reader.next(1))[0]!.type, 'ADDED'); // the initial state
  // 200 updates of 200 KB: far more than the socket buffers and the watcher's 32 MiB queue.
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${server.url}${path}/hot`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { holderIdentity: `${i}`.padEnd(200_000, 'x') } }) });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal((await reader.next(1))[0]!.object.spec.holderIdentity.slice(0, 4), `${i}`.padEnd(4, 'x'));
  }
  // The server ended that watch and, as its client took nothing, cut the connection after 1 s. A
  // paused socket does not notice: read it now, and it must end rather than stream on.
  await new Promise((r) => setTimeout(r, 1500));
  let received = 0;
  silent.on('data', (d: Buffer) => (received += d.length));
  silent.resume();
  await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the silent watcher is still open')), 5000))]);
  t.diagnostic(`the silent watcher was closed by the server (it had ${Math.round(received / 1024)} KB left to read); the reading watcher got all 200 events`);
  reader.close();
});
