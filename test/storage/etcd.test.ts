// The conformance suite against a real etcd (started here on loopback ports), directly and under
// the watch cache. One etcd serves both; every test writes under its own prefix.
import { openEtcdStorage, type EtcdStorage } from '../../src/storage/etcd/etcd-storage.ts';
import { openWatchCache, type WatchCache } from '../../src/storage/cache/watch-cache.ts';
import { startEtcd, type EtcdCluster } from '../support/etcd.ts';
import { runConformance } from './conformance.ts';

let etcd: EtcdCluster | undefined;
const opened: (EtcdStorage | WatchCache)[] = [];
let n = 0;

async function backend(): Promise<EtcdStorage> {
  etcd ??= await startEtcd();
  const storage = await openEtcdStorage({ endpoints: etcd.endpoints, compactionIntervalMs: 0 });
  opened.push(storage);
  return storage;
}

async function teardown(): Promise<void> {
  for (const s of opened.splice(0).reverse()) await s.close();
}

runConformance('etcd', {
  watchFailsAfterCompaction: true,
  async subject() {
    return { storage: await backend(), prefix: `/registry/test/etcd${n++}/` };
  },
  teardown,
});

runConformance('watch cache over etcd', {
  watchFailsAfterCompaction: false,
  async subject() {
    const prefix = `/registry/test/cache${n++}/`;
    const storage = await openWatchCache(await backend(), { prefix });
    opened.push(storage);
    return { storage, prefix };
  },
  async teardown() {
    await teardown();
    await etcd?.stop();
  },
});
