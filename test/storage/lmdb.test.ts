import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CompactedError } from '../../src/storage/errors.ts';
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

describe('lmdb retention', () => {
  it('compacts history older than the retention window by itself', async () => {
    const storage = await openLmdbStorage({ path: tempDir('lmdb-retention'), retentionMs: 200, compactionIntervalMs: 50 });
    opened.push(storage);
    const a = await storage.create('/registry/r/a', Buffer.from('1'));
    const b = await storage.update('/registry/r/a', a.modRevision, Buffer.from('2'));
    assert.equal(await storage.compactedRevision(), 0, 'young history is kept');
    await new Promise((r) => setTimeout(r, 500));
    const c = await storage.update('/registry/r/a', b.modRevision, Buffer.from('3'));
    assert.ok((await storage.compactedRevision()) >= b.modRevision, 'history older than 200 ms is gone');
    await assert.rejects(storage.get('/registry/r/a', { atRevision: a.modRevision }), CompactedError);
    assert.equal(Buffer.from((await storage.get('/registry/r/a', { atRevision: b.modRevision }))!.value).toString(), '2');
    assert.equal((await storage.get('/registry/r/a'))?.modRevision, c.modRevision);
  });
});
