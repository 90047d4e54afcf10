import { openLmdbStorage, type LmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { runConformance } from './conformance.ts';
import { tempDir } from '../support/tmp.ts';

const opened: LmdbStorage[] = [];
let n = 0;

runConformance('lmdb', {
  watchFailsAfterCompaction: true,
  async subject() {
    const storage = await openLmdbStorage({ path: tempDir('lmdb') });
    opened.push(storage);
    return { storage, prefix: `/registry/test/t${n++}/` };
  },
  async teardown() {
    for (const s of opened) await s.close();
  },
});
