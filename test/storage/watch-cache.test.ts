import { openLmdbStorage, type LmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { openWatchCache, type WatchCache } from '../../src/storage/cache/watch-cache.ts';
import { runConformance } from './conformance.ts';
import { tempDir } from '../support/tmp.ts';

const opened: (LmdbStorage | WatchCache)[] = [];
let n = 0;

runConformance('watch cache over lmdb', {
  watchFailsAfterCompaction: false,
  async subject() {
    const backend = await openLmdbStorage({ path: tempDir('cache') });
    const prefix = `/registry/test/t${n++}/`;
    const storage = await openWatchCache(backend, { prefix });
    opened.push(storage, backend);
    return { storage, prefix };
  },
  async teardown() {
    for (const s of opened) await s.close();
  },
});
