// The timing wrapper is a Storage like any other: the conformance suite runs through it (over
// lmdb), and each request it passes on is reported with its operation and resource type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStorage, type LmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { instrumentStorage, storageType } from '../../src/storage/instrumented.ts';
import { runConformance } from './conformance.ts';
import { tempDir } from '../support/tmp.ts';

const opened: LmdbStorage[] = [];
let n = 0;
const seen: string[] = [];

runConformance('lmdb, timed', {
  watchFailsAfterCompaction: true,
  async subject() {
    const inner = await openLmdbStorage({ path: tempDir('instrumented') });
    opened.push(inner);
    return { storage: instrumentStorage(inner, (operation, type) => seen.push(`${operation} ${type}`)), prefix: `/registry/test/t${n++}/` };
  },
  async teardown() {
    for (const s of opened) await s.close();
  },
});

test('each request is reported with its operation and type', async () => {
  const inner = await openLmdbStorage({ path: tempDir('instrumented-report') });
  opened.push(inner);
  const reported: string[] = [];
  const s = instrumentStorage(inner, (operation, type, seconds) => {
    assert.ok(seconds >= 0);
    reported.push(`${operation} ${type}`);
  });
  const a = await s.create('/registry/g.example/things/ns/a', Buffer.from('1'));
  await s.get('/registry/g.example/things/ns/a');
  await s.list('/registry/g.example/things/');
  await s.update('/registry/g.example/things/ns/a', a.modRevision, Buffer.from('2'));
  await s.delete('/registry/g.example/things/ns/a');
  await assert.rejects(s.update('/registry/core/pods/a', 1, Buffer.from('x')));
  assert.deepEqual(reported, [
    'create /registry/g.example/things',
    'get /registry/g.example/things',
    'list /registry/g.example/things',
    'update /registry/g.example/things',
    'delete /registry/g.example/things',
    'update /registry/core/pods',
  ]);
});

test('storageType keeps the series to one per resource', () => {
  assert.equal(storageType('/registry/core/namespaces/default'), '/registry/core/namespaces');
  assert.equal(storageType('/registry/core/namespaces/'), '/registry/core/namespaces');
  assert.equal(storageType('/registry/core/namespaces'), '/registry/core/namespaces');
  assert.equal(storageType('/registry/core'), 'other');
  assert.equal(storageType('/elsewhere/x/y'), 'other');
});

test('the conformance suite went through the wrapper', () => {
  assert.ok(seen.length > 0);
});
