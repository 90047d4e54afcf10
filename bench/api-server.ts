// The server side of `bench/api.ts`, in a process of its own so the load generator does not share
// its event loop (or its core): `node --import tsx bench/api-server.ts api <dataDir> [<audit
// policy> <audit log> [<plain dataDir>]]` runs the full API server on the embedded store (with that
// audit policy and log, and then, given a second data directory, the same server without audit in
// the same process too, printing `PLAIN <url>`, and the audited server again with its log written
// to /dev/null, `NULL_LOG <url>`: the same audit, its bytes taken where they cost nothing; in
// batch mode, `BATCH_LOG <url>`; and two servers whose requests spin 1 and 2 µs, `SPIN_1 <url>`
// and `SPIN_2 <url>`: what a known amount of work per request costs),
// `… https <dataDir> <token file> [<plain dataDir>]` the same over HTTPS with its generated
// certificates and that token file (it prints `KUBECONFIG <path>`, the administrator's, first;
// given a second data directory, it also serves the plain server of `api` from the same process and
// prints `PLAIN <url>`: a baseline with the same heap, code and history as the secure server; and
// the bare server below over HTTP and over HTTPS with the secure server's certificate, `BARE <url>`
// and `BARE_TLS <url>`: what TLS itself costs), `… bare` a bare node:http server (the baselines).
// Each prints `READY <url>` on stdout and stops on SIGTERM/SIGINT or when stdin closes (the parent
// is gone). On stdin it takes `profile <name>` (start a CPU profile) and `profile-stop` (write it
// to $BENCH_PROFILE_DIR/<name>.cpuprofile and print `PROFILED <file>`), so a run can be profiled
// per phase.
//
// The bare server:
//   PUT  /__body     the bytes every other GET answers with (200, application/json, Content-Length)
//   GET  /__watch    held open as a chunked response, like a watch
//   POST /__fanout   writes its request body (one serialized event) to every held /__watch response
//   POST /__unwatch  ends every held /__watch response
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector';
import type { AddressInfo, Socket } from 'node:net';
import { startServer } from '../src/server/server.ts';
import type { ServerOptions } from '../src/server/options.ts';
import type { AuditSink } from '../src/server/filters.ts';

const mode = process.argv[2];

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function bare(): Promise<() => Promise<void>> {
  const server = await bareServer();
  process.stdout.write(`READY ${server.url}\n`);
  return server.close;
}

/** The bare server, over HTTPS when given a certificate and key (PEM). */
async function bareServer(tls?: { cert: string; key: string }): Promise<{ url: string; close: () => Promise<void> }> {
  let body: Buffer = Buffer.from('{}');
  const watchers = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    if (req.method === 'GET' && path === '/__watch') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      watchers.add(res);
      res.once('close', () => watchers.delete(res));
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length, 'Cache-Control': 'no-cache, private' });
      res.end(body);
      return;
    }
    void readAll(req).then((data) => {
      if (req.method === 'PUT' && path === '/__body') {
        body = data;
      } else if (req.method === 'POST' && path === '/__fanout') {
        for (const w of watchers) w.write(data);
      } else if (req.method === 'POST' && path === '/__unwatch') {
        for (const w of watchers) w.end();
        watchers.clear();
      } else {
        res.writeHead(404).end();
        return;
      }
      const out = JSON.stringify({ watchers: watchers.size });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(out) }).end(out);
    });
  };
  const server = tls ? createHttpsServer({ keepAlive: true, ...tls }, handle) : createServer({ keepAlive: true }, handle);
  server.keepAliveTimeout = 65_000;
  server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: async () => {
      for (const w of watchers) w.end();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

async function api(): Promise<() => Promise<void>> {
  const [dataDir, auditPolicyFile, auditLogPath, plainDataDir] = process.argv.slice(3);
  if (!dataDir) throw new Error('usage: api-server.ts api <dataDir> [<audit policy> <audit log> [<plain dataDir>]]');
  const server = await plainServer(dataDir, auditPolicyFile && auditLogPath ? { auditPolicyFile, auditLog: { path: auditLogPath } } : {});
  // Beside an audited server, the same without audit in the same process: a baseline with the
  // same heap, code and history.
  const plain = plainDataDir ? await plainServer(plainDataDir, {}) : undefined;
  const nullLog = plain && auditPolicyFile ? await plainServer(`${plainDataDir}-null-log`, { auditPolicyFile, auditLog: { path: '/dev/null' } }) : undefined;
  // The same audit in batch mode (its own log beside the first), and two calibrations: servers
  // whose every request spins 1 µs and 2 µs on its way (an audit sink that does nothing else), what
  // a known amount of work per request costs the throughput on this machine.
  const batchLog = plain && auditPolicyFile && auditLogPath ? await plainServer(`${plainDataDir}-batch-log`, { auditPolicyFile, auditLog: { path: `${auditLogPath}.batch`, mode: 'batch' } }) : undefined;
  const spins = plain ? await Promise.all([1, 2].map((us, i) => plainServer(`${plainDataDir}-spin-${i}`, { audit: spinning(us) }))) : [];
  const extra = `${plain ? `PLAIN ${plain.url}\n` : ''}${nullLog ? `NULL_LOG ${nullLog.url}\n` : ''}${batchLog ? `BATCH_LOG ${batchLog.url}\n` : ''}${spins.map((s, i) => `SPIN_${i + 1} ${s.url}\n`).join('')}`;
  process.stdout.write(`${extra}READY ${server.url}\n`);
  return async () => {
    await Promise.all([server.close(), plain?.close(), nullLog?.close(), batchLog?.close(), ...spins.map((s) => s.close())]);
  };
}

/** An audit sink that records nothing and spends `us` µs of the request's path doing it. */
function spinning(us: number): AuditSink {
  return {
    requestReceived() {
      const end = performance.now() + us / 1000;
      while (performance.now() < end);
      return false;
    },
    responseComplete() {},
  };
}

/** The request path against bare node:http: plain HTTP, every request the administrator. */
function plainServer(dataDir: string, audit: Pick<ServerOptions, 'auditPolicyFile' | 'auditLog' | 'audit'>): ReturnType<typeof startServer> {
  return startServer({ dataDir, ...audit, port: 0, insecureServing: {}, maxRequestsInflight: 0, maxMutatingRequestsInflight: 0, log: (m) => process.stderr.write(`${m}\n`) });
}

/** The default secure server: HTTPS, client certificates of its CA, service-account tokens, and a token file. */
async function https(): Promise<() => Promise<void>> {
  const [dataDir, tokenAuthFile, plainDataDir] = process.argv.slice(3);
  if (!dataDir || !tokenAuthFile) throw new Error('usage: api-server.ts https <dataDir> <token file> [<plain dataDir>]');
  const plain = plainDataDir ? await plainServer(plainDataDir, {}) : undefined;
  const server = await startServer({
    dataDir,
    port: 0,
    authentication: { tokenAuthFile },
    maxRequestsInflight: 0,
    maxMutatingRequestsInflight: 0,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  // The bare server over HTTP and over HTTPS with the API server's own serving certificate: what
  // TLS itself costs a request.
  const pki = join(dataDir, 'pki');
  const bares = plain ? await Promise.all([bareServer(), bareServer({ cert: readFileSync(join(pki, 'apiserver.crt'), 'utf8'), key: readFileSync(join(pki, 'apiserver.key'), 'utf8') })]) : [];
  const extra = plain ? `PLAIN ${plain.url}\nBARE ${bares[0]!.url}\nBARE_TLS ${bares[1]!.url}\n` : '';
  process.stdout.write(`KUBECONFIG ${server.kubeconfigPath}\n${extra}READY ${server.url}\n`);
  return async () => {
    await Promise.all([server.close(), plain?.close(), ...bares.map((b) => b.close())]);
  };
}

if (mode !== 'api' && mode !== 'https' && mode !== 'bare') {
  process.stderr.write('usage: api-server.ts api <dataDir> [<audit policy> <audit log> [<plain dataDir>]] | https <dataDir> <token file> [<plain dataDir>] | bare\n');
  process.exit(2);
}
const close = await (mode === 'api' ? api() : mode === 'https' ? https() : bare());
let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  // Never hang: a close that does not finish in time still ends the process.
  setTimeout(() => process.exit(0), 15_000).unref();
  void close()
    .catch((e: unknown) => process.stderr.write(`close failed: ${e instanceof Error ? e.stack : String(e)}\n`))
    .finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);

// ---- per-phase CPU profiles ----
const profileDir = process.env.BENCH_PROFILE_DIR;
let session: Session | undefined;
let profileName = '';
const post = (method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => session!.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
async function command(line: string): Promise<void> {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (!profileDir || !cmd) return;
  if (cmd === 'profile' && arg && !session) {
    session = new Session();
    session.connect();
    profileName = arg;
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 200 });
    await post('Profiler.start');
    process.stdout.write(`PROFILING ${arg}\n`);
  } else if (cmd === 'profile-stop' && session) {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    session.disconnect();
    session = undefined;
    const file = join(profileDir, `${profileName}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    process.stdout.write(`PROFILED ${file}\n`);
  }
}
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  input += chunk;
  for (let nl = input.indexOf('\n'); nl !== -1; nl = input.indexOf('\n')) {
    const line = input.slice(0, nl);
    input = input.slice(nl + 1);
    void command(line).catch((e: unknown) => process.stderr.write(`profile command failed: ${String(e)}\n`));
  }
});
