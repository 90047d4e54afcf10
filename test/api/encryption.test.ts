// Encryption at rest (--encryption-provider-config): Secrets are unreadable in the raw store with
// aescbc, aesgcm and secretbox and readable through the API; other resources stay plain; a new
// key put first re-encrypts an object when it is written again; a bad configuration is a start-up
// error.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTrusted } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';

const key = (bytes: number) => randomBytes(bytes).toString('base64');
const keys = { cbc1: key(32), gcm2: key(32), box3: key(32) };

function config(dir: string, name: string, providers: string): string {
  const path = join(dir, name);
  writeFileSync(path, `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: ["secrets"]\n    providers:\n${providers}`);
  return path;
}
const aescbc = `      - aescbc:\n          keys:\n            - name: key1\n              secret: ${keys.cbc1}\n`;
const aesgcm = `      - aesgcm:\n          keys:\n            - name: key2\n              secret: ${keys.gcm2}\n`;
const secretbox = `      - secretbox:\n          keys:\n            - name: key3\n              secret: ${keys.box3}\n`;
const identity = `      - identity: {}\n`;

async function raw(dataDir: string, key: string): Promise<Buffer | undefined> {
  const s = await openLmdbStorage({ path: dataDir });
  try {
    const kv = await s.get(key);
    return kv && Buffer.from(kv.value);
  } finally {
    await s.close();
  }
}

const SECRET = '/api/v1/namespaces/default/secrets';
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: 'correct horse battery staple' } });

describe('encryption at rest', () => {
  for (const [provider, providers, prefix] of [
    ['aescbc', aescbc, 'k8s:enc:aescbc:v1:key1:'],
    ['aesgcm', aesgcm, 'k8s:enc:aesgcm:v1:key2:'],
    ['secretbox', secretbox, 'k8s:enc:secretbox:v1:key3:'],
  ] as const) {
    test(`${provider}: a Secret is ciphertext in the store and itself through the API; a ConfigMap stays plain`, async () => {
      const dir = tempDir(`enc-${provider}`);
      const dataDir = join(dir, 'data');
      const s = await startTrusted({ dataDir, encryptionProviderConfig: config(dir, 'enc.yaml', providers) });
      try {
        assert.equal((await api(s, 'POST', SECRET, secret('s1'))).status, 201);
        assert.equal((await api(s, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { k: 'visible' } })).status, 201);
        const read = await api(s, 'GET', `${SECRET}/s1`);
        assert.equal(read.status, 200);
        assert.equal(Buffer.from(read.body.data.password, 'base64').toString(), 'correct horse battery staple');
        const listed = await api(s, 'GET', SECRET);
        assert.deepEqual(listed.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['s1']);
      } finally {
        await s.close();
      }
      const stored = (await raw(dataDir, '/registry/core/secrets/default/s1'))!;
      assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
      assert.ok(!stored.includes(Buffer.from('correct horse')) && !stored.includes(Buffer.from(Buffer.from('correct horse battery staple').toString('base64'))), 'no plaintext');
      assert.ok((await raw(dataDir, '/registry/core/configmaps/default/c1'))!.includes(Buffer.from('visible')));
    });
  }

  test('rotation: with a new key first, old objects stay readable and a rewrite re-encrypts them with it', async () => {
    const dir = tempDir('enc-rotate');
    const dataDir = join(dir, 'data');
    const first = await startTrusted({ dataDir, encryptionProviderConfig: config(dir, 'one.yaml', aescbc) });
    assert.equal((await api(first, 'POST', SECRET, secret('rot'))).status, 201);
    await first.close();
    const second = await startTrusted({ dataDir, encryptionProviderConfig: config(dir, 'two.yaml', aesgcm + aescbc) });
    try {
      const read = await api(second, 'GET', `${SECRET}/rot`);
      assert.equal(read.status, 200, read.text);
      assert.equal((await api(second, 'PUT', `${SECRET}/rot`, { ...read.body, metadata: { ...read.body.metadata, labels: { rotated: 'yes' } } })).status, 200);
    } finally {
      await second.close();
    }
    assert.equal((await raw(dataDir, '/registry/core/secrets/default/rot'))!.subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key2:');
    // Identity first: a rewrite decrypts for good.
    const third = await startTrusted({ dataDir, encryptionProviderConfig: config(dir, 'three.yaml', identity + aesgcm) });
    try {
      const read = await api(third, 'GET', `${SECRET}/rot`);
      assert.equal((await api(third, 'PUT', `${SECRET}/rot`, { ...read.body, metadata: { ...read.body.metadata, labels: { rotated: 'twice' } } })).status, 200);
    } finally {
      await third.close();
    }
    assert.ok((await raw(dataDir, '/registry/core/secrets/default/rot'))!.includes(Buffer.from('"kind":"Secret"')));
  });

  test('a bad configuration is a start-up error of one line', async () => {
    const dir = tempDir('enc-bad');
    const cases: [string, RegExp][] = [
      [`      - aescbc:\n          keys:\n            - name: k\n              secret: ${key(10)}\n`, /secret is not of the expected length, got 10/],
      [`      - secretbox:\n          keys:\n            - name: k\n              secret: ${key(16)}\n`, /expected one of \[32\]/],
      [`      - aescbc:\n          keys:\n            - name: a:b\n              secret: ${key(32)}\n`, /may not contain a ':'/],
      [`      - kms:\n          name: x\n`, /KMS providers are not supported/],
      [`      - rot13: {}\n`, /Unsupported value: "rot13"/],
    ];
    for (const [i, [providers, message]] of cases.entries()) {
      const err = await startTrusted({ encryptionProviderConfig: config(dir, `bad${i}.yaml`, providers) }).then(
        (s) => s.close().then(() => undefined),
        (e: Error) => e,
      );
      assert.ok(err, `case ${i} started`);
      assert.match(err.message, message);
      assert.ok(!err.message.includes('\n'), 'one line');
    }
  });
});
