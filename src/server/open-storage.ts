// The storage backend a server runs on: etcd, or the embedded lmdb store in a data directory (a
// throw-away one when none is given, removed on close).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage } from '../storage/interface.ts';
import { openLmdbStorage } from '../storage/lmdb/lmdb-storage.ts';
import type { HealthCheck } from './health.ts';

export interface StorageOptions {
  storageBackend?: 'lmdb' | 'etcd3';
  etcdServers?: string[];
  /** How long one etcd request may take before it fails (default 10 s). */
  etcdRequestTimeoutMs?: number;
  dataDir?: string;
  storageRetentionMs?: number;
  /** Test knob: the embedded store's bound on history bytes (default 128 MiB). */
  storageMaxHistoryBytes?: number;
}

export interface OpenedStorage {
  readonly backend: Storage;
  /** The health check /livez, /readyz and /healthz run on it. */
  readonly check: HealthCheck;
  /** Closes the backend, then removes a throw-away data directory. */
  close(): Promise<void>;
}

const isEtcd = (o: StorageOptions) => (o.storageBackend ?? 'lmdb') === 'etcd3';

/** How ComponentStatus names the storage. */
export const storageComponentName = (o: StorageOptions): string => (isEtcd(o) ? 'etcd-0' : 'lmdb-0');

export async function openStorage(o: StorageOptions): Promise<OpenedStorage> {
  let backend: Storage;
  let throwaway: string | undefined;
  if (isEtcd(o)) {
    if (!o.etcdServers?.length) throw new Error('--etcd-servers must be specified with --storage-backend=etcd3');
    // Loaded on first use: the etcd client and gRPC cost a start on the embedded store a third of its import time.
    const { openEtcdStorage } = await import('../storage/etcd/etcd-storage.ts');
    backend = await openEtcdStorage({ endpoints: o.etcdServers, requestTimeoutMs: o.etcdRequestTimeoutMs });
  } else {
    const path = o.dataDir ?? (throwaway = mkdtempSync(join(tmpdir(), 'orch-apiserver-')));
    try {
      // A throw-away store is removed on close and never reopened: its commits need not wait for the disk.
      backend = await openLmdbStorage({ path, retentionMs: o.storageRetentionMs, maxHistoryBytes: o.storageMaxHistoryBytes, durable: throwaway === undefined });
    } catch (e) {
      if (throwaway) rmSync(throwaway, { recursive: true, force: true });
      throw e;
    }
  }
  const opened = backend;
  return {
    backend: opened,
    check: {
      name: o.storageBackend === 'etcd3' ? 'etcd' : 'storage',
      async check() {
        const h = await opened.health();
        if (!h.healthy) throw new Error(h.message);
      },
    },
    async close() {
      try {
        await opened.close();
      } finally {
        if (throwaway) rmSync(throwaway, { recursive: true, force: true });
      }
    },
  };
}
