// Corrupt stored objects (values that do not decode, or that no encryption key reads), written raw
// into the store between two runs of the server on the same data: the server starts and serves
// everything else; a get answers kube-apiserver's corrupt-object error, a list names every corrupt
// object (gate AllowUnsafeMalformedObjectDeletion) or fails on the first (gate off); and such an
// object goes only through ignoreStoreReadErrorWithClusterBreakingPotential, with the gate and the
// `unsafe-delete-ignore-read-errors` permission, ignoring its finalizers, while a watch ends with
// kube's StoreReadError for that deletion.

import { before, after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTrusted } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { openEtcdStorage } from '../../src/storage/etcd/etcd-storage.ts';
import { startEtcd } from '../support/etcd.ts';
import type { RunningServer } from '../../src/server/server.ts';

const NS = 'corrupt';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const SECRET = `/api/v1/namespaces/${NS}/secrets`;
const key = (kind: string, name: string) => `/registry/core/${kind}/${NS}/${name}`;
const UNSAFE = '?ignoreStoreReadErrorWithClusterBreakingPotential=true';

function encryption(dir: string, file: string, keyName: string): string {
  const path = join(dir, file);
  writeFileSync(
    path,
    `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: ["secrets"]\n    providers:\n      - aescbc:\n          keys:\n            - name: ${keyName}\n              secret: ${randomBytes(32).toString('base64')}\n`,
  );
  return path;
}

/** Replaces stored values as they are, behind the server's back (it is not running). */
async function writeRaw(dataDir: string, values: Record<string, (stored: Buffer) => Buffer>): Promise<void> {
  const s = await openLmdbStorage({ path: dataDir });
  try {
    for (const [k, corrupt] of Object.entries(values)) {
      const kv = (await s.get(k))!;
      await s.update(k, kv.modRevision, corrupt(Buffer.from(kv.value)));
    }
  } finally {
    await s.close();
  }
}

const configMap = (name: string, extra: object = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { k: 'v' } });
const as = (user: string) => ({ 'Impersonate-User': user });
const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);

describe('corrupt stored objects', () => {
  const dir = tempDir('corrupt');
  const dataDir = join(dir, 'data');
  let server: RunningServer;

  before(async () => {
    // The objects, two users (one may delete, one may also delete unsafely), then the damage.
    const first = await startTrusted({ dataDir, encryptionProviderConfig: encryption(dir, 'one.yaml', 'one') });
    try {
      assert.equal((await api(first, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
      for (const name of ['good', 'garbage', 'cut'])
        assert.equal((await api(first, 'POST', CM, configMap(name, name === 'cut' ? { finalizers: ['example.com/keep'] } : {}))).status, 201);
      assert.equal((await api(first, 'POST', SECRET, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sealed' }, stringData: { a: 'b' } })).status, 201);
      const group = first.naming.group('rbac.authorization');
      const rbac = `/apis/${group}/v1/namespaces/${NS}`;
      for (const [name, verbs] of [
        ['deleter', ['get', 'list', 'delete']],
        ['unsafe-deleter', ['get', 'list', 'delete', 'unsafe-delete-ignore-read-errors']],
      ] as const) {
        const role = { apiVersion: `${group}/v1`, kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs }] };
        assert.equal((await api(first, 'POST', `${rbac}/roles`, role)).status, 201);
        const binding = {
          apiVersion: `${group}/v1`,
          kind: 'RoleBinding',
          metadata: { name },
          roleRef: { apiGroup: group, kind: 'Role', name },
          subjects: [{ apiGroup: group, kind: 'User', name }],
        };
        assert.equal((await api(first, 'POST', `${rbac}/rolebindings`, binding)).status, 201);
      }
    } finally {
      await first.close();
    }
    await writeRaw(dataDir, {
      [key('configmaps', 'garbage')]: () => Buffer.from('not json at all'),
      // Cut short: the head of the stored layout is intact, the end is gone.
      [key('configmaps', 'cut')]: (v) => v.subarray(0, v.length - 5),
    });
  });

  after(async () => {
    await server?.close();
  });

  test('gate off: the server starts with an undecryptable Secret; a list fails on the first corrupt object; the option is ignored', async () => {
    // A new key only: the Secret written with the old one cannot be decrypted.
    server = await startTrusted({ dataDir, encryptionProviderConfig: encryption(dir, 'two.yaml', 'two') });
    assert.equal((await api(server, 'GET', `${CM}/good`)).status, 200);
    const list = await api(server, 'GET', CM);
    assert.equal(list.status, 500, list.text);
    assert.equal(list.body.reason, 'InternalError');
    assert.match(list.body.message, /^Internal error occurred: object not decodable revision=\d+: /);
    const secret = await api(server, 'GET', `${SECRET}/sealed`);
    assert.equal(secret.status, 500, secret.text);
    assert.match(secret.body.message, /^Internal error occurred: the value of \/registry\/core\/secrets\/corrupt\/sealed cannot be decrypted: /);
    // Without the gate kube-apiserver drops the option: a normal deletion, which cannot read it.
    const refused = await api(server, 'DELETE', `${CM}/garbage${UNSAFE}`);
    assert.equal(refused.status, 500, refused.text);
    assert.equal(refused.body.reason, 'InternalError');
    assert.equal((await api(server, 'GET', `${CM}/garbage`)).status, 500);
    await server.close();
  });

  test('gate on: get and list answer kube-apiserver corrupt-object errors; everything else is served', async () => {
    server = await startTrusted({ dataDir, encryptionProviderConfig: encryption(dir, 'two.yaml', 'two'), featureGates: { AllowUnsafeMalformedObjectDeletion: true } });
    const good = await api(server, 'GET', `${CM}/good`);
    assert.equal(good.status, 200, good.text);
    const got = await api(server, 'GET', `${CM}/garbage`);
    assert.equal(got.status, 500, got.text);
    assert.equal(got.body.reason, 'InternalError');
    const inner = new RegExp(`^StorageError: corrupt object, Code: 7, Key: ${key('configmaps', 'garbage')}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\\d+: `);
    assert.match(got.body.message.replace(/^Internal error occurred: /, ''), inner);
    assert.ok(got.body.message.startsWith('Internal error occurred: '));
    assert.match(got.body.details.causes[0].message, inner);
    const sealed = await api(server, 'GET', `${SECRET}/sealed`);
    assert.equal(sealed.status, 500, sealed.text);
    assert.match(sealed.body.message, /AdditionalErrorMsg: data from the storage is not transformable revision=0: the value of .* cannot be decrypted/);

    const list = await api(server, 'GET', CM);
    assert.equal(list.status, 500, list.text);
    assert.equal(list.body.reason, 'StoreReadError');
    assert.equal(list.body.message, 'failed to read one or more configmaps from the storage');
    assert.equal(list.body.details.name, 'list');
    assert.equal(list.body.details.kind, 'configmaps');
    assert.deepEqual(
      list.body.details.causes.map((c: { reason: string; field: string }) => [c.reason, c.field]),
      [
        ['UnexpectedServerResponse', key('configmaps', 'cut')],
        ['UnexpectedServerResponse', key('configmaps', 'garbage')],
      ],
    );
    // A selector does not hide them: they cannot be tested.
    assert.equal((await api(server, 'GET', `${CM}?labelSelector=a%3Db`)).body.reason, 'StoreReadError');
    const secrets = await api(server, 'GET', SECRET);
    assert.equal(secrets.body.reason, 'StoreReadError');
    assert.equal(secrets.body.details.causes[0].field, key('secrets', 'sealed'));
    // Other resources are untouched.
    assert.equal((await api(server, 'GET', '/api/v1/namespaces')).status, 200);
  });

  test('gate on: a corrupt object is deleted only with the option and the permission; a readable one is refused', async () => {
    const plain = await api(server, 'DELETE', `${CM}/garbage`);
    assert.equal(plain.status, 500, plain.text);
    assert.equal(plain.body.reason, 'InternalError');

    const denied = await api(server, 'DELETE', `${CM}/garbage${UNSAFE}`, undefined, as('deleter'));
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.body.message, 'configmaps "garbage" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: ');
    assert.equal((await api(server, 'GET', `${CM}/garbage`)).status, 500, 'still there');

    const readable = await api(server, 'DELETE', `${CM}/good${UNSAFE}`, undefined, as('unsafe-deleter'));
    assert.equal(readable.status, 400, readable.text);
    assert.match(readable.body.message, /unsafe deletion is not allowed because the object is decodable from storage/);
    assert.equal((await api(server, 'GET', `${CM}/good`)).status, 200, 'the readable object stays');

    // The option in the body, a precondition it ignores, and a dry run that leaves it in place.
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ignoreStoreReadErrorWithClusterBreakingPotential: true, preconditions: { uid: 'not-its-uid' } };
    const dry = await api(server, 'DELETE', `${CM}/garbage?dryRun=All`, body, as('unsafe-deleter'));
    assert.equal(dry.status, 200, dry.text);
    assert.equal((await api(server, 'GET', `${CM}/garbage`)).status, 500, 'a dry run deletes nothing');

    const current = (await api(server, 'GET', '/api/v1/namespaces')).body.metadata.resourceVersion as string;
    const watch = readWatch(`${server.url}${CM}?watch=true&resourceVersion=${current}`);
    try {
      assert.equal(await watch.status, 200);
      const gone = await api(server, 'DELETE', `${CM}/garbage`, body, as('unsafe-deleter'));
      assert.equal(gone.status, 200, gone.text);
      assert.equal(gone.body.status, 'Success');
      assert.deepEqual(gone.body.details, { name: 'garbage', kind: 'ConfigMap' });
      assert.equal((await api(server, 'GET', `${CM}/garbage`)).status, 404);
      // kube-apiserver's storage watch cannot decode the deleted object: an ERROR, then the end.
      const [ev] = await watch.next(1);
      assert.equal(ev!.type, 'ERROR');
      assert.equal(ev!.object.reason, 'StoreReadError');
      assert.equal(ev!.object.code, 500);
      assert.match(ev!.object.message, /^saw a DELETED event, but object data is corrupt - object not decodable revision=\d+: /);
      await watch.ended;
    } finally {
      watch.close();
    }

    // Its finalizer does not hold a corrupt object back; the undecryptable Secret goes too.
    assert.equal((await api(server, 'DELETE', `${CM}/cut${UNSAFE}`, undefined, as('unsafe-deleter'))).status, 200);
    assert.equal((await api(server, 'DELETE', `${SECRET}/sealed${UNSAFE}`)).status, 200);
    const list = await api(server, 'GET', CM);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(names(list.body), ['good']);
    assert.deepEqual(names((await api(server, 'GET', SECRET)).body), []);
  });
});

describe('corrupt stored objects on etcd', () => {
  test('a value damaged in etcd: the server starts, a get and a list answer the corrupt-object errors, the unsafe delete removes it', async () => {
    const etcd = await startEtcd();
    try {
      const opts = { storageBackend: 'etcd3' as const, etcdServers: etcd.endpoints, featureGates: { AllowUnsafeMalformedObjectDeletion: true } };
      const first = await startTrusted(opts);
      try {
        assert.equal((await api(first, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
        for (const name of ['good', 'garbage']) assert.equal((await api(first, 'POST', CM, configMap(name))).status, 201);
      } finally {
        await first.close();
      }
      const raw = await openEtcdStorage({ endpoints: etcd.endpoints, compactionIntervalMs: 0 });
      try {
        const kv = (await raw.get(key('configmaps', 'garbage')))!;
        await raw.update(key('configmaps', 'garbage'), kv.modRevision, Buffer.from('not an object at all'));
      } finally {
        await raw.close();
      }
      const server = await startTrusted(opts);
      try {
        assert.equal((await api(server, 'GET', `${CM}/good`)).status, 200);
        const got = await api(server, 'GET', `${CM}/garbage`);
        assert.equal(got.status, 500, got.text);
        assert.match(got.body.message, new RegExp(`^Internal error occurred: StorageError: corrupt object, Code: 7, Key: ${key('configmaps', 'garbage')}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\\d+: `));
        const list = await api(server, 'GET', CM);
        assert.equal(list.status, 500, list.text);
        assert.equal((await api(server, 'DELETE', `${CM}/garbage${UNSAFE}`)).status, 200);
        assert.deepEqual(names((await api(server, 'GET', CM)).body), ['good']);
      } finally {
        await server.close();
      }
    } finally {
      await etcd.stop();
    }
  });
});
