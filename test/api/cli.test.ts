// The command line: flags, start-up on the embedded store, SIGTERM as a graceful shutdown.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { parseArgs } from '../../src/server/cli.ts';
import { startServer, type ServerOptions } from '../../src/server/server.ts';
import { startTrusted } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { registerServer, tlsFor } from '../support/tls-clients.ts';
import { readWatch } from '../support/watch.ts';

const bin = new URL('../../bin/orch-apiserver.js', import.meta.url).pathname;

function run(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number);
  const url = new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no start-up line: ${stderr}`)), 20_000);
    child.stderr.on('data', () => {
      const m = /serving on (https?:\/\/\S+)/.exec(stderr);
      if (!m) return;
      // Over HTTPS the banner names the administrator's kubeconfig: this process's clients use it.
      const kubeconfig = /export KUBECONFIG=(\S+)/.exec(stderr)?.[1];
      if (m[1]!.startsWith('https:')) {
        if (!kubeconfig) return;
        registerServer({ url: m[1]!.replace('0.0.0.0', '127.0.0.1'), kubeconfig: readFileSync(kubeconfig, 'utf8') });
      }
      clearTimeout(t);
      resolve(m[1]!);
    });
    // A run that exits (a bad flag, --help) clears the timer too: a pending timer keeps the test
    // process alive after its last test.
    void exited.then(() => {
      clearTimeout(t);
      reject(new Error(`exited: ${stderr}`));
    });
  });
  // Runs that are meant to fail never serve: their rejection is expected, not unhandled.
  url.catch(() => {});
  return { child, url, exited, out: () => stdout, err: () => stderr };
}

test('starts with kube-apiserver style flags, keeps data across restarts, stops cleanly on SIGTERM', async () => {
  const dir = tempDir('cli');
  const flags = ['--bind-address=127.0.0.1', '--secure-port', '0', `--data-dir=${dir}`, '--watch-cache-retention=30s', '--request-timeout=30s', '--max-requests-inflight=100', '--shutdown-delay-duration=300ms', '--feature-gates=WatchList=true'];
  const first = run(flags);
  const url = await first.url;
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
  const created = await fetch(`${url}/api/v1/nodes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }) });
  assert.equal(created.status, 201);
  const w = readWatch(`${url}/api/v1/nodes?watch=1&resourceVersion=0`);
  await w.next(1);
  first.child.kill('SIGTERM');
  await w.ended; // the open watch ended cleanly
  assert.equal(await first.exited, 0);
  assert.match(first.err(), /SIGTERM: shutting down/);

  const second = run(flags);
  const url2 = await second.url;
  const node = await (await fetch(`${url2}/api/v1/nodes/n1`)).json() as { metadata: { name: string } };
  assert.equal(node.metadata.name, 'n1', 'the embedded store kept the node');
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

/** The options of `args`, and the error start-up stops with. */
async function startFails(args: string[]): Promise<string> {
  const opts = parseArgs(['--secure-port=0', `--data-dir=${tempDir('cli-bad')}`, ...args]);
  assert.notEqual(opts, 'help');
  const server = await startServer(opts as ServerOptions).catch((e: Error) => e);
  if (!(server instanceof Error)) {
    await server.close();
    assert.fail(`${args.join(' ')} started`);
  }
  return server.message;
}

test('--help lists the flags; bad flags exit 2 with a message', async () => {
  // One process for each way out (help, a flag that does not parse); the other flags' messages
  // from the same parsing, in this process.
  const help = run(['--help']);
  const unknown = run(['--no-such-flag=1']);
  const bad = [
    [['--secure-port=abc'], /invalid argument "abc" for "--secure-port" flag/],
    [['--port=8080'], /unknown flag: --port/],
    [['--insecure-bind-address=0.0.0.0'], /--insecure-bind-address needs --insecure-port/],
    [['--storage-backend=sqlite'], /invalid --storage-backend "sqlite"/],
    [['--request-timeout=soon'], /invalid duration/],
  ] as const;
  for (const [args, message] of bad) assert.throws(() => parseArgs(args), message, args.join(' '));
  assert.equal(await unknown.exited, 2);
  assert.match(unknown.err(), /^Error: unknown flag: --no-such-flag\n/);
  assert.match(unknown.err(), /--storage-backend/, 'the usage follows the error');
  assert.equal(await help.exited, 0);
  assert.match(help.out(), /--storage-backend/);
  assert.match(help.out(), /--etcd-servers/);
  assert.match(help.out(), /--bind-address\s+IP address to serve HTTPS on \(default 127\.0\.0\.1/);
  assert.match(help.out(), /--insecure-port\s+serve plain HTTP/);
});

test('a bad feature gate or runtime-config stops start-up with an error', async () => {
  const gate = run(['--secure-port=0', '--feature-gates=Nope=true', `--data-dir=${tempDir('cli-bad')}`]);
  const config = run(['--secure-port=0', '--runtime-config=api/beta=maybe', `--data-dir=${tempDir('cli-bad')}`]);
  assert.match(await startFails(['--runtime-config=nope.orch.io/v1=false']), /^unknown api groups nope\.orch\.io$/);
  assert.match(await startFails(['--storage-backend=etcd3']), /--etcd-servers must be specified/);
  assert.equal(await gate.exited, 1);
  assert.match(gate.err(), /^Error: .*unrecognized feature gate: Nope\n$/);
  assert.equal(await config.exited, 1);
  assert.equal(config.err(), 'Error: invalid value api/beta=maybe\n');
});

test('a start that fails half-way releases what it opened: the data directory and port can be used at once', async () => {
  const dataDir = tempDir('failed-start');
  await assert.rejects(startServer({ dataDir, serviceClusterIpRange: 'not-a-cidr' }), /not-a-cidr/);
  const first = await startTrusted({ dataDir });
  try {
    // The same port again: refused, and the second server's storage (another directory) is closed.
    const otherDir = tempDir('failed-start-port');
    await assert.rejects(startServer({ dataDir: otherDir, port: first.port }), /EADDRINUSE/);
    const again = await startServer({ dataDir: otherDir });
    await again.close();
    const r = await fetch(`${first.url}/readyz`);
    assert.equal(r.status, 200);
  } finally {
    await first.close();
  }
});

/** A GET that trusts the server's CA and presents no credential: the status. */
function anonymousGet(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpsRequest(`${url}${path}`, { ca: tlsFor(url)!.ca }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

test('with no flags it serves HTTPS on 127.0.0.1, writes the admin kubeconfig and says how to use it; health paths are open to anonymous requests, nothing else', async () => {
  // A data directory whose name has a dot (~/.orch) is a directory like any other.
  const dir = `${tempDir('cli-dot')}/.orch`;
  const r = run(['--secure-port=0', `--data-dir=${dir}`]);
  const url = await r.url;
  assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.match(r.err(), new RegExp(`export KUBECONFIG=${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/admin\\.kubeconfig`));
  const created = await fetch(`${url}/api/v1/nodes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }) });
  assert.equal(created.status, 201);
  for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal(await anonymousGet(url, path), 200, path);
  // Node,RBAC by default: the default roles open nothing else to anonymous requests.
  for (const path of ['/api/v1/nodes', '/readyz/ping', '/metrics', '/healthz/', '/apis']) assert.equal(await anonymousGet(url, path), 403, path);
  r.child.kill('SIGTERM');
  assert.equal(await r.exited, 0);

  const wide = run(['--secure-port=0', '--bind-address=0.0.0.0', `--data-dir=${tempDir('cli-wide')}/tmp.AbC123`]);
  const wideUrl = await wide.url;
  assert.match(wideUrl, /^https:\/\/0\.0\.0\.0:\d+$/, 'the banner names the address it bound');
  assert.equal((await fetch(`${wideUrl.replace('0.0.0.0', '127.0.0.1')}/api/v1/nodes`)).status, 200);
  wide.child.kill('SIGTERM');
  assert.equal(await wide.exited, 0);

});

test('--insecure-port serves plain HTTP on loopback, every request an administrator; another address only with --insecure-bind-address', async () => {
  const r = run(['--insecure-port=0', `--data-dir=${tempDir('cli-insecure')}`]);
  const url = await r.url;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(r.err(), /Plain HTTP with no authentication: every request is treated as an administrator/);
  const created = await fetch(`${url}/api/v1/nodes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }) });
  assert.equal(created.status, 201);
  r.child.kill('SIGTERM');
  assert.equal(await r.exited, 0);

  assert.equal(
    await startFails(['--insecure-port=0', '--bind-address=0.0.0.0']),
    '--insecure-port serves plain HTTP and every request is an administrator: it listens on a loopback address only (asked: 0.0.0.0); use --insecure-bind-address=0.0.0.0 to insist',
  );
  assert.match(await startFails(['--insecure-port=0', '--tls-min-version=VersionTLS13']), /--insecure-port serves plain HTTP: it cannot be combined with the TLS flags/);

  const wide = run(['--insecure-port=0', '--insecure-bind-address=0.0.0.0', `--data-dir=${tempDir('cli-insecure-insist')}`]);
  const wideUrl = await wide.url;
  assert.match(wideUrl, /^http:\/\/0\.0\.0\.0:\d+$/);
  assert.equal((await fetch(`${wideUrl.replace('0.0.0.0', '127.0.0.1')}/readyz`)).status, 200);
  wide.child.kill('SIGTERM');
  assert.equal(await wide.exited, 0);
});

test('startServer: the default address is 127.0.0.1; a data directory with a dot in its name works and keeps its data', async () => {
  for (const name of ['.orch', 'tmp.AbC123']) {
    const dataDir = `${tempDir('dot-dir')}/${name}`;
    const first = await startTrusted({ dataDir });
    try {
      assert.match(first.listening, /^https:\/\/127\.0\.0\.1:\d+$/);
      const r = await fetch(`${first.url}/api/v1/nodes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'kept' } }) });
      assert.equal(r.status, 201, name);
    } finally {
      await first.close();
    }
    const second = await startTrusted({ dataDir });
    try {
      assert.equal((await fetch(`${second.url}/api/v1/nodes/kept`)).status, 200, `${name}: the node survived the restart`);
    } finally {
      await second.close();
    }
  }
});
