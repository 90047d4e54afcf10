// The server as a child process (bin/orch-apiserver.js), for tests that need its own memory
// figures, signals (SIGTERM, SIGSTOP of its dependencies) or a restart on the same data directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { registerServer } from './tls-clients.ts';
import type { ServerOptions } from '../../src/server/server.ts';

const bin = new URL('../../bin/orch-apiserver.js', import.meta.url).pathname;
const gcPreload = new URL('./gc-on-signal.mjs', import.meta.url).href;
const withOptions = new URL('./server-with-options.mjs', import.meta.url).pathname;
/** What gc-on-signal.mjs writes to stderr once a collection asked for with SIGUSR2 is done. */
const GC_DONE = '\u0000gc-done\u0000\n';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
  /** Resident memory of the server process, in bytes. */
  rss(): number;
  /** The resident memory split as the kernel reports it: anonymous (heap) and file-backed (mmap) bytes. */
  rssParts(): { anon: number; file: number };
  /** A full garbage collection in the server, then its resident memory. */
  rssAfterGc(): Promise<number>;
  /** SIGKILL, for cleanup after a failed test. */
  kill(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Start the server with `args` (bind address and port are chosen here) and wait until it is ready.
 * It serves HTTPS unless `args` ask for `--insecure-port` (then give `--insecure-port=0`: the port
 * is chosen here); this process's clients reach it as the administrator of the kubeconfig it writes.
 */
export async function startServerProcess(
  args: string[],
  timeoutMs = 30_000,
  /** Variables added to the server's environment; ServerOptions that have no flag (merged over the flags'). */
  extra: { env?: Record<string, string>; options?: Partial<ServerOptions> } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const insecure = args.some((a) => a.startsWith('--insecure-port'));
  const portFlag = insecure ? `--insecure-port=${port}` : `--secure-port=${port}`;
  const entry = extra.options ? withOptions : bin;
  const env = { ...process.env, ...extra.env, ...(extra.options && { ORCH_TEST_SERVER_OPTIONS: JSON.stringify(extra.options) }) };
  const child = spawn(process.execPath, ['--expose-gc', '--import', gcPreload, entry, '--bind-address=127.0.0.1', portFlag, ...args.filter((a) => !a.startsWith('--insecure-port'))], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  let stderr = '';
  // Collections done (GC_DONE lines, stripped from what the server wrote), and who waits for one.
  let collections = 0;
  const collected: (() => void)[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (!stderr.includes(GC_DONE)) return;
    const parts = stderr.split(GC_DONE);
    collections += parts.length - 1;
    stderr = parts.join('');
    for (const wake of collected.splice(0)) wake();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `${insecure ? 'http' : 'https'}://127.0.0.1:${port}`;
  // The banner names the administrator's kubeconfig once the server listens.
  const kubeconfigPath = () => /export KUBECONFIG=(\S+)/.exec(stderr)?.[1];
  let trusted = insecure;
  const field = (name: string) => {
    const m = new RegExp(`${name}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return Number(m?.[1] ?? 0) * 1024;
  };
  const rss = () => field('VmRSS');
  const proc: ServerProcess = {
    url,
    child,
    exited,
    stderr: () => stderr,
    rss,
    rssParts: () => ({ anon: field('RssAnon'), file: field('RssFile') }),
    async rssAfterGc() {
      // Wait for the collection to finish, then until the kernel's figure settles: V8 returns freed
      // pages to the system for some tens of milliseconds after the collection ends.
      const target = collections + 1;
      child.kill('SIGUSR2');
      const deadline = Date.now() + 10_000;
      while (collections < target && Date.now() < deadline && child.exitCode === null) {
        await new Promise<void>((r) => {
          collected.push(r);
          setTimeout(r, 100);
        });
      }
      let last = rss();
      for (let i = 0; i < 12; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const now = rss();
        if (now === last && i >= 1) break;
        last = now;
      }
      return last;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}: ${stderr}`);
    try {
      const path = trusted ? undefined : kubeconfigPath();
      if (path) {
        registerServer({ url, kubeconfig: readFileSync(path, 'utf8') });
        trusted = true;
      }
      if (trusted && (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) })).status === 200) return proc;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`the server did not become ready: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
