// The real kubectl against a test server: which binaries to run, and a runner with its own
// kubeconfig, HOME and cache in a throw-away directory (the user's ~/.kube is never read or
// written). kubectl runs asynchronously, since the server runs in the test's own process.
//
// Binaries:
// - newest: KUBECTL if set; otherwise the newest of `kubectl` on PATH and the versioned binaries
//   installed beside it (`kubectl.1.33`, …, as SDKs that dispatch by server version lay them out).
// - 1.20: KUBECTL_1_20 if set; `kubectl` on PATH if it is 1.20; otherwise the Debian
//   kubernetes-client that scripts/test-setup.sh unpacks under node_modules/.cache.

import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './tmp.ts';
import { tlsFor } from './tls-clients.ts';

export interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `kubectl version --client`'s gitVersion, or undefined when the binary does not run. */
export function clientVersion(bin: string): string | undefined {
  try {
    const out = execFileSync(bin, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return (JSON.parse(out) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion;
  } catch {
    return undefined;
  }
}

/** [major, minor, patch] of a gitVersion such as v1.33.1 (or v1.32.4-dispatcher). */
function versionTuple(v: string | undefined): [number, number, number] | undefined {
  const m = v?.match(/^v(\d+)\.(\d+)\.(\d+)/);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function onPath(name: string): string | undefined {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    const f = d && join(d, name);
    if (f && existsSync(f)) return f;
  }
  return undefined;
}

const missing =
  'kubectl not found. The kubectl suites need the real kubectl: run `bash scripts/test-setup.sh` ' +
  "(as root it installs Debian's kubernetes-client), `apt-get install -y kubernetes-client`, or set KUBECTL=/path/to/kubectl.";

let newest: string | undefined;
/** The newest kubectl this machine has (see the top of this file). */
export function newestKubectl(): string {
  if (process.env.KUBECTL) return process.env.KUBECTL;
  if (newest) return newest;
  const onPathBin = onPath('kubectl');
  if (!onPathBin) throw new Error(missing);
  const candidates = [onPathBin];
  const real = realpathSync(onPathBin);
  for (const f of readdirSync(dirname(real))) if (/^kubectl\.\d+\.\d+$/.test(f)) candidates.push(join(dirname(real), f));
  let best: { bin: string; v: [number, number, number] } | undefined;
  for (const bin of candidates) {
    const v = versionTuple(clientVersion(bin));
    if (v && (!best || v[0] > best.v[0] || (v[0] === best.v[0] && (v[1] > best.v[1] || (v[1] === best.v[1] && v[2] > best.v[2]))))) best = { bin, v };
  }
  if (!best) throw new Error(`${missing} (${onPathBin} version --client failed)`);
  newest = best.bin;
  return newest;
}

/** kubectl 1.20 (see the top of this file). */
export function kubectl120(): string {
  const explicit = process.env.KUBECTL_1_20;
  if (explicit) return explicit;
  const path = onPath('kubectl');
  if (path && clientVersion(path)?.startsWith('v1.20.')) return path;
  const bin = fileURLToPath(new URL('../../node_modules/.cache/kubectl-1.20/usr/bin/kubectl', import.meta.url));
  if (existsSync(bin) && clientVersion(bin)?.startsWith('v1.20.')) return bin;
  throw new Error("kubectl 1.20 is needed: run `bash scripts/test-setup.sh` (as root it unpacks Debian's kubernetes-client), or set KUBECTL_1_20=/path/to/kubectl-1.20");
}

export interface KubectlOptions {
  /** The binary; newestKubectl() by default. */
  bin?: string;
  /** The kubeconfig context's namespace. */
  namespace?: string;
  /** Names the throw-away directory. */
  label?: string;
  timeoutMs?: number;
  /** Over HTTPS, trust the server's CA but present no client certificate (the test gives its own credential). */
  anonymous?: boolean;
}

export interface Kubectl {
  bin: string;
  /** The client's gitVersion, for messages. */
  version: string;
  /** kubectl's HOME and working directory; manifests go here. */
  dir: string;
  kubeconfig: string;
  env: NodeJS.ProcessEnv;
  /** Run kubectl with `input` on stdin; resolves with its exit code and output. */
  run(args: readonly string[], input?: string): Promise<KubectlRun>;
  /** Run kubectl, assert it succeeded, return its stdout. */
  ok(args: readonly string[], input?: string): Promise<string>;
  /** Run kubectl, assert it failed, return the run. */
  fails(args: readonly string[], input?: string): Promise<KubectlRun>;
  /** Start a long-running kubectl (a watch); the caller kills it. */
  spawn(args: readonly string[]): ChildProcessWithoutNullStreams;
  /** Write a manifest into `dir`; returns its path. */
  file(name: string, text: string): string;
}

/** A kubectl that talks to `server` (any URL: the server, or a proxy in front of it), as its administrator. */
export function kubectlFor(server: { url: string }, opts: KubectlOptions = {}): Kubectl {
  const bin = opts.bin ?? newestKubectl();
  const version = clientVersion(bin) ?? 'unknown';
  const dir = tempDir(opts.label ?? 'kubectl');
  const kubeconfig = join(dir, 'kubeconfig');
  const ns = opts.namespace ? `, namespace: ${opts.namespace}` : '';
  // Over HTTPS, the server's CA and its administrator's certificate (what its kubeconfig holds).
  const tls = tlsFor(server.url);
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const caLine = tls ? `\n    certificate-authority-data: ${b64(tls.ca)}` : '';
  const user = tls && !opts.anonymous ? `\n    client-certificate-data: ${b64(tls.cert)}\n    client-key-data: ${b64(tls.key)}` : ' {}';
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server.url}${caLine}\nusers:\n- name: u\n  user:${user}\n` +
      `contexts:\n- name: c\n  context: {cluster: c, user: u${ns}}\ncurrent-context: c\n`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
  const timeout = opts.timeoutMs ?? 60_000;
  const run = (args: readonly string[], input?: string): Promise<KubectlRun> =>
    new Promise((resolve, reject) => {
      const child = execFile(bin, args, { env, cwd: dir, timeout, maxBuffer: 32 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (!err) return resolve({ code: 0, stdout, stderr });
        if (typeof err.code === 'number') return resolve({ code: err.code, stdout, stderr });
        reject(new Error(`kubectl ${args.join(' ')}: ${err.message}${err.killed ? ' (killed: timed out)' : ''}\n${stderr}`));
      });
      child.stdin?.end(input ?? '');
    });
  return {
    bin,
    version,
    dir,
    kubeconfig,
    env,
    run,
    async ok(args, input) {
      const r = await run(args, input);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code} (kubectl ${version})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    },
    async fails(args, input) {
      const r = await run(args, input);
      assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have failed (kubectl ${version})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r;
    },
    spawn: (args) => spawn(bin, args, { env, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] }),
    file(name, text) {
      const f = join(dir, name);
      writeFileSync(f, text);
      return f;
    },
  };
}

/** kubectl's table output as rows of cells (columns are separated by two or more spaces). */
export const tableRows = (out: string): string[][] => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
