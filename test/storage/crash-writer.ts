// Child process of the crash test: loads its modules, says "loaded", and waits for a line on stdin
// (the test starts the next writer while it checks the last one); then writes as fast as it can and
// reports every acknowledged write on stdout ("<revision> <key>"), until it is killed.
import { once } from 'node:events';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';

const [dir, run] = process.argv.slice(2);
process.stdout.write('loaded\n');
process.stdin.resume();
await once(process.stdin, 'data');
const storage = await openLmdbStorage({ path: dir });
let i = 0;
process.stdout.write('ready\n');
await Promise.all(
  Array.from({ length: 16 }, async () => {
    for (;;) {
      const key = `/registry/crash/r${run}-${i++}`;
      const kv = await storage.create(key, Buffer.from(`value of ${key}`));
      // Pipes are synchronous on Linux: once this returns, the parent will read the line.
      process.stdout.write(`${kv.modRevision} ${key}\n`);
    }
  }),
);
