// Encryption at rest: a Storage that encrypts the values of chosen resources on their way to the
// backend and decrypts them on their way back, as kube-apiserver's EncryptionConfiguration does.
// Each resource has an ordered list of providers: the first encrypts every write; any of them may
// decrypt a read (the stored value's prefix, `k8s:enc:<provider>:v1:<key name>:`, names which), so
// keys rotate by putting the new key first and writing every object again. `identity` stores plain
// values, and reads values without a prefix. A value no provider can read is never garbage handed
// to a decoder: it is passed on marked untransformable, and reads of it are corrupt-object errors.
//
// aescbc: AES-CBC, PKCS#7 padding, a random 16-byte IV before the ciphertext. aesgcm: AES-GCM, a
// random 12-byte nonce before the ciphertext and its tag, the storage key as additional data (a
// value copied to another key does not decrypt). secretbox: XSalsa20-Poly1305, a random 24-byte
// nonce before the box. Keys are 16, 24 or 32 bytes for AES, 32 for secretbox.

import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { ConflictError, markUntransformable, StorageError } from './errors.ts';
import type { KeyValue, Storage, WatchEvent } from './interface.ts';

export type ProviderKind = 'identity' | 'aescbc' | 'aesgcm' | 'secretbox';

export interface EncryptionKey {
  name: string;
  secret: Buffer;
}

export interface Provider {
  kind: ProviderKind;
  /** Keys in order: the first encrypts. Empty for identity. */
  keys: EncryptionKey[];
}

/** A value that no provider of its resource can read. */
export class UndecryptableError extends StorageError {
  readonly key: string;
  constructor(key: string, reason: string) {
    super(`the value of ${key} cannot be decrypted: ${reason}`);
    this.key = key;
  }
}

const PREFIX = 'k8s:enc:';

function encryptWith(p: Provider, key: string, plain: Uint8Array): Uint8Array {
  if (p.kind === 'identity') return plain;
  const k = p.keys[0]!;
  const head = Buffer.from(`${PREFIX}${p.kind}:v1:${k.name}:`);
  if (p.kind === 'aescbc') {
    const iv = randomBytes(16);
    const c = createCipheriv(`aes-${k.secret.length * 8}-cbc`, k.secret, iv);
    return Buffer.concat([head, iv, c.update(plain), c.final()]);
  }
  if (p.kind === 'aesgcm') {
    const nonce = randomBytes(12);
    const c = createCipheriv(`aes-${k.secret.length * 8}-gcm` as CipherGCMTypes, k.secret, nonce);
    c.setAAD(Buffer.from(key));
    const body = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([head, nonce, body, c.getAuthTag()]);
  }
  const nonce = randomBytes(24);
  return Buffer.concat([head, nonce, xsalsa20poly1305(k.secret, nonce).encrypt(plain)]);
}

function decryptWith(kind: ProviderKind, secret: Buffer, key: string, data: Buffer): Uint8Array {
  if (kind === 'aescbc') {
    if (data.length < 32 || data.length % 16 !== 0) throw new Error('the ciphertext is not a whole number of blocks');
    const d = createDecipheriv(`aes-${secret.length * 8}-cbc`, secret, data.subarray(0, 16));
    return Buffer.concat([d.update(data.subarray(16)), d.final()]);
  }
  if (kind === 'aesgcm') {
    if (data.length < 28) throw new Error('the ciphertext is too short');
    const d = createDecipheriv(`aes-${secret.length * 8}-gcm` as CipherGCMTypes, secret, data.subarray(0, 12));
    d.setAAD(Buffer.from(key));
    d.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
  }
  if (data.length < 24 + 16) throw new Error('the box is too short');
  return xsalsa20poly1305(secret, data.subarray(0, 24)).decrypt(data.subarray(24));
}

/** The plain value of `stored` under `key`, by whichever of `providers` wrote it. */
function decrypt(providers: readonly Provider[], key: string, stored: Uint8Array): Uint8Array {
  const b = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  if (!b.subarray(0, PREFIX.length).equals(Buffer.from(PREFIX))) {
    if (providers.some((p) => p.kind === 'identity')) return stored;
    throw new UndecryptableError(key, 'it is not encrypted, and identity is not among its providers');
  }
  // k8s:enc:<kind>:v1:<name>:<data>
  const rest = b.subarray(PREFIX.length);
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < 3; i++) {
    const colon = rest.indexOf(0x3a, at);
    if (colon < 0) throw new UndecryptableError(key, 'its encryption prefix is malformed');
    parts.push(rest.subarray(at, colon).toString('latin1'));
    at = colon + 1;
  }
  const [kind, version, name] = parts as [ProviderKind, string, string];
  const provider = providers.find((p) => p.kind === kind && p.keys.some((k) => k.name === name));
  if (version !== 'v1' || !provider) throw new UndecryptableError(key, `no configured provider has ${kind} key ${JSON.stringify(name)}`);
  try {
    return decryptWith(kind, provider.keys.find((k) => k.name === name)!.secret, key, rest.subarray(at));
  } catch (e) {
    throw new UndecryptableError(key, `${kind} key ${JSON.stringify(name)}: ${(e as Error).message}`);
  }
}

/**
 * `inner`, with the values of keys under each prefix of `resources` encrypted by that prefix's
 * providers (the first encrypts, any decrypts). Keys under no prefix pass through unchanged.
 */
export function encryptingStorage(inner: Storage, resources: ReadonlyMap<string, readonly Provider[]>): Storage {
  const prefixes = [...resources.keys()];
  const providersOf = (key: string) => {
    const p = prefixes.find((x) => key.startsWith(x));
    return p === undefined ? undefined : resources.get(p);
  };
  const enc = (key: string, value: Uint8Array) => {
    const ps = providersOf(key);
    return ps ? encryptWith(ps[0]!, key, value) : value;
  };
  // A value no provider reads is handed on as stored, marked: it reads as a corrupt object (and
  // can be deleted as one) while every other key of the resource stays readable.
  const dec = (key: string, value: Uint8Array) => {
    const ps = providersOf(key);
    if (!ps) return value;
    try {
      return decrypt(ps, key, value);
    } catch (e) {
      if (!(e instanceof UndecryptableError)) throw e;
      return markUntransformable(new Uint8Array(value), e.message);
    }
  };
  const kv = (k: KeyValue): KeyValue => ({ ...k, value: dec(k.key, k.value) });
  const conflicts = <T>(p: Promise<T>): Promise<T> =>
    p.catch((e: unknown) => {
      if (e instanceof ConflictError) throw new ConflictError(e.key, e.expectedModRevision, kv(e.current));
      throw e;
    });
  return {
    create: (key, value) => inner.create(key, enc(key, value)).then(kv),
    get: (key, opts) => inner.get(key, opts).then((k) => k && kv(k)),
    list: (prefix, opts) => inner.list(prefix, opts).then((r) => ({ ...r, items: r.items.map(kv) })),
    update: (key, rev, value) => conflicts(inner.update(key, rev, enc(key, value))).then(kv),
    delete: (key, rev) => conflicts(inner.delete(key, rev)).then((r) => ({ ...r, prev: kv(r.prev) })),
    watch: (prefix, after, handler) =>
      inner.watch(prefix, after, {
        events: (events: WatchEvent[]) =>
          handler.events(events.map((e) => ({ ...e, ...(e.value && { value: dec(e.key, e.value) }), ...(e.prevValue && { prevValue: dec(e.key, e.prevValue) }) }))),
        ...(handler.progress && { progress: (rev: number) => handler.progress!(rev) }),
        error: (err) => handler.error(err),
      }),
    compact: (revision) => inner.compact(revision),
    requestProgress: () => inner.requestProgress(),
    watchProgressOrdered: () => inner.watchProgressOrdered(),
    currentRevision: () => inner.currentRevision(),
    compactedRevision: () => inner.compactedRevision(),
    health: () => inner.health(),
    close: () => inner.close(),
  };
}
