// Crash safety of the embedded store: a writer is killed with SIGKILL at a random moment, 20 times
// over the same data directory; after each kill every acknowledged write must be there with its
// value, and the revision must never go backwards.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { tempDir } from '../support/tmp.ts';
import { tsLoader } from '../support/ts-loader.ts';

const writer = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));

interface Writer {
  /** Resolves once the writer has loaded its modules (it opens the store only when told to go). */
  loaded: Promise<void>;
  /** Let it write; kill it `afterMs` after its first acknowledged write; resolve with the acknowledged writes. */
  runAndKill(afterMs: number): Promise<Map<string, number>>;
  kill(): void;
}

/**
 * Start a writer on `dir`. It loads its modules at once but touches the store only when its run
 * starts, so the next run's writer loads while the last one runs and its writes are checked.
 */
function startWriter(dir: string, run: number): Writer {
  const child = spawn(process.execPath, [...tsLoader, writer, dir, String(run)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const acked = new Map<string, number>();
  let buf = '';
  let afterMs = 0;
  let onLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => (onLoaded = resolve));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line === 'loaded') onLoaded();
      if (line === 'loaded' || line === 'ready') continue;
      const [rev, key] = line.split(' ');
      // The kill comes at a random moment after the first acknowledged write, so a slow start
      // on a busy machine cannot leave a run with nothing to check.
      if (acked.size === 0) setTimeout(() => child.kill('SIGKILL'), afterMs);
      acked.set(key, Number(rev));
    }
  });
  const closed = new Promise<Map<string, number>>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited with ${code ?? signal} before it was killed`));
      else resolve(acked);
    });
  });
  closed.catch(() => {});
  return {
    loaded: Promise.race([loaded, closed.then(() => {})]),
    runAndKill(ms) {
      afterMs = ms;
      child.stdin.write('go\n');
      return closed;
    },
    kill: () => void child.kill('SIGKILL'),
  };
}

it('every acknowledged write survives SIGKILL, 20 times over', async (t) => {
  const dir = tempDir('crash');
  const all = new Map<string, number>();
  let lastRevision = 0;
  let next = startWriter(dir, 0);
  t.after(() => next.kill());
  for (let run = 0; run < 20; run++) {
    const current = next;
    await current.loaded;
    const killed = current.runAndKill(20 + Math.random() * 200);
    // The next writer loads while this one writes and its writes are checked.
    if (run < 19) next = startWriter(dir, run + 1);
    const acked = await killed;
    assert.ok(acked.size > 0, `run ${run}: the writer acknowledged some writes before it was killed`);
    for (const [k, r] of acked) all.set(k, r);
    const maxAcked = Math.max(...acked.values());
    const store = await openLmdbStorage({ path: dir });
    try {
      const rev = await store.currentRevision();
      assert.ok(rev >= maxAcked, `run ${run}: revision ${rev} ≥ last acknowledged ${maxAcked}`);
      assert.ok(rev >= lastRevision, `run ${run}: revision never goes backwards`);
      lastRevision = rev;
      const listed = await store.list('/registry/crash/');
      const byKey = new Map(listed.items.map((kv) => [kv.key, kv]));
      for (const [key, r] of all) {
        const kv = byKey.get(key);
        assert.ok(kv, `run ${run}: acknowledged ${key} is present`);
        assert.equal(Buffer.from(kv.value).toString(), `value of ${key}`);
        assert.equal(kv.modRevision, r);
      }
    } finally {
      await store.close();
    }
  }
  assert.ok(all.size > 100, `writes were acknowledged (${all.size})`);
});
