// Impersonation benchmark: `node --import tsx bench/impersonation.ts`. The API server runs in a
// child process (bench/api-server.ts) and this process generates load, as in bench/api.ts. One
// GET of a namespace is measured without impersonation headers (the baseline) and acting as
// another user with two groups, an extra and a uid (five authorizer checks before the request's
// own), in alternating rounds, so the ratio compares figures of the same run.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { load, loadRow, type LoadResult } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 32;
const PATH = '/api/v1/namespaces/default';
const IMPERSONATING = {
  'Impersonate-User': 'jane',
  'Impersonate-Group': ['dev', 'ops'],
  'Impersonate-Extra-Scopes': 'read',
  'Impersonate-Uid': 'u-1',
};

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-impersonation-'));
const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./api-server.ts', import.meta.url)), 'api', dir], { stdio: ['pipe', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const line = out.split('\n').find((l) => l.startsWith('READY '));
    if (line) resolve(line.slice('READY '.length).trim());
  });
  child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});

const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
const get = (headers: Record<string, string | string[]>) => async () => {
  const r = await pool.request({ method: 'GET', path: PATH, headers });
  await r.body.arrayBuffer();
  if (r.statusCode !== 200) throw new Error(`GET ${PATH}: ${r.statusCode}`);
};

try {
  // Warm-up: both paths compiled and the heap settled before anything is measured.
  for (let i = 0; i < 3; i++) {
    await load(CONNECTIONS, 1000, get({}));
    await load(CONNECTIONS, 1000, get(IMPERSONATING));
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const plain: LoadResult = await load(CONNECTIONS, SECONDS * 1000, get({}));
    const acting = await load(CONNECTIONS, SECONDS * 1000, get(IMPERSONATING));
    loadRow(`round ${round}: GET, no impersonation (baseline)`, plain);
    loadRow(`round ${round}: GET impersonating user, 2 groups, extra, uid`, acting, plain);
  }
} finally {
  await pool.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
