// Test and benchmark harness: starts throwaway etcd members on free loopback ports.
//
// Durability is part of what we measure, so members run with etcd's default fsync behaviour
// (never --unsafe-no-fsync). A missing etcd is installed when we can (root + apt) and is otherwise a
// loud failure: silently skipping would make a green run meaningless.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface EtcdMember {
  endpoint: string;
  /** The member's process id (to stop and continue it). */
  pid: number;
  kill(): Promise<void>;
}

export interface EtcdCluster {
  endpoints: string[];
  members: EtcdMember[];
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

function findEtcd(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/usr/bin'];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function ensureEtcd(): string {
  const found = findEtcd();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'etcd is not installed (looked on PATH, /usr/sbin, /usr/bin) and we are not root: ' +
        'install it (Debian/Ubuntu: apt-get install etcd-server) and rerun',
    );
  }
  for (const cmd of ['apt-get update', 'apt-get install -y etcd-server']) {
    console.error(`[etcd harness] etcd not found; running: ${cmd}`);
    const r = spawnSync('sh', ['-c', cmd], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) throw new Error(`[etcd harness] '${cmd}' failed with status ${r.status}`);
  }
  const installed = findEtcd();
  if (!installed) throw new Error('[etcd harness] etcd-server installed but no etcd binary found');
  return installed;
}

/** Ports are found by binding port 0; the tiny window before etcd binds them is acceptable in tests. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// Children and their data dirs, so an exiting test process never leaves etcd running or dirs behind.
const live = new Set<{ child: ChildProcess; dataDir: string }>();
let exitHooked = false;

function cleanupSync(): void {
  for (const m of live) {
    try {
      m.child.kill('SIGKILL');
    } catch {
      // already gone
    }
    rmSync(m.dataDir, { recursive: true, force: true });
  }
  live.clear();
}

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', cleanupSync);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      cleanupSync();
      // Re-raise so the process still dies of the signal as it would have without our hook.
      process.kill(process.pid, sig);
    });
  }
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { health?: string };
    return body.health === 'true';
  } catch {
    return false;
  }
}

export async function startEtcd(opts: { members?: number } = {}): Promise<EtcdCluster> {
  const bin = ensureEtcd();
  hookExit();
  const n = opts.members ?? 1;
  const specs: { name: string; clientPort: number; peerPort: number }[] = [];
  // The kernel may hand out a port again once it is released: every member's two ports are distinct.
  const taken = new Set<number>();
  const distinctPort = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) return (taken.add(port), port);
    }
  };
  for (let i = 0; i < n; i++) specs.push({ name: `m${i}`, clientPort: await distinctPort(), peerPort: await distinctPort() });
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peerPort}`).join(',');
  const token = `test-${process.pid}-${Date.now()}`;

  const started: { child: ChildProcess; dataDir: string; endpoint: string; log: string[] }[] = [];
  for (const s of specs) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), `etcd-${s.name}-`));
    const endpoint = `http://127.0.0.1:${s.clientPort}`;
    const peer = `http://127.0.0.1:${s.peerPort}`;
    const args = [
      `--name=${s.name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${endpoint}`,
      `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-state=new`,
      `--initial-cluster-token=${token}`,
      '--logger=zap',
      '--log-level=warn',
      '--log-outputs=stderr',
    ];
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const entry = { child, dataDir };
    live.add(entry);
    const log: string[] = [];
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log.push(chunk);
      if (log.length > 50) log.shift();
    });
    child.once('exit', () => live.delete(entry));
    started.push({ child, dataDir, endpoint, log });
  }

  const stop = async (): Promise<void> => {
    for (const m of started) m.child.kill('SIGKILL');
    await Promise.all(started.map((m) => waitExit(m.child)));
    for (const m of started) rmSync(m.dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (const m of started) {
    while (!(await healthy(m.endpoint))) {
      const exited = m.child.exitCode !== null || m.child.signalCode !== null;
      if (exited || Date.now() > deadline) {
        await stop();
        throw new Error(
          `[etcd harness] member ${m.endpoint} ${exited ? 'exited' : 'did not become healthy'}; log tail:\n${m.log.join('')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  return {
    endpoints: started.map((m) => m.endpoint),
    members: started.map((m) => ({
      endpoint: m.endpoint,
      pid: m.child.pid!,
      kill: async () => {
        m.child.kill('SIGKILL');
        await waitExit(m.child);
      },
    })),
    stop,
  };
}
