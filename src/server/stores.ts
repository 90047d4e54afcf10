// One registry store per served kind, each reading through a watch cache of its storage prefix;
// namespaces are admitted by looking them up in the namespace store.

import type { Naming } from '../naming.ts';
import type { Storage } from '../storage/interface.ts';
import { openWatchCache, type WatchCache } from '../storage/cache/watch-cache.ts';
import { StatusError } from '../machinery/status.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import { RegistryStore, type ReadableStore } from '../registry/store.ts';
import { ComputedStore } from '../registry/computed-store.ts';
import { isReview, ReviewStore } from '../registry/review-store.ts';
import { admissionChain, namespaceLifecycle, type Admission } from '../registry/admission.ts';
import { storagePrefix, type KindDefinition } from '../registry/definition.ts';
import { linkSharedStorage } from '../registry/preparation.ts';
import type { DeclarativeValidation } from '../registry/declarative-validation.ts';

export interface StoresOptions {
  naming: Naming;
  featureGates: FeatureGates;
  declarative: DeclarativeValidation;
  watchCacheRetentionMs?: number;
  /** Test knob: each watch cache's bound on event bytes (default 64 MiB). */
  watchCacheMaxEventBytes?: number;
  /** Admission plugins run after NamespaceLifecycle (NodeRestriction with the Node mode). */
  admission?: readonly Admission[];
}

export interface ServedStores {
  /** The kinds that store objects, in the order of the definitions. */
  readonly stores: readonly RegistryStore[];
  /** Every served kind's store, stored or computed, in the order of the definitions (discovery's). */
  readonly served: readonly ReadableStore[];
  /** Closes the watch caches. */
  close(): Promise<void>;
}

export async function buildStores(defs: readonly KindDefinition[], backend: Storage, o: StoresOptions): Promise<ServedStores> {
  const stores: RegistryStore[] = [];
  const served: ReadableStore[] = [];
  const caches: WatchCache[] = [];
  // Every cache is closed even when one fails; the first failure is reported.
  const close = async () => {
    let failure: { error: unknown } | undefined;
    for (const c of caches) {
      try {
        await c.close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  };
  let namespaceStore: RegistryStore | undefined;
  const lifecycle = namespaceLifecycle(o.naming, async (name) => {
    if (!namespaceStore) return undefined;
    // From the cache first, as kube-apiserver's admission uses its informer; a namespace the
    // cache has not seen yet (just created) is looked up with a consistent read.
    const cached = namespaceStore.cachedView(undefined, name);
    if (cached) return cached;
    try {
      return (await namespaceStore.getEncoded(undefined, name)).view();
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  });
  const admission = o.admission?.length ? admissionChain([lifecycle, ...o.admission]) : lifecycle;
  // Kinds kept in another kind's storage (core Event) share that prefix's cache.
  const cacheByPrefix = new Map<string, WatchCache>();
  try {
    for (const def of defs) {
      // Computed kinds store nothing: no cache, nothing to watch or collect.
      if (def.computed) {
        served.push(new ComputedStore(def, def.computed));
        continue;
      }
      // Review kinds answer their create and keep nothing.
      if (isReview(def)) {
        served.push(new ReviewStore(def));
        continue;
      }
      const prefix = storagePrefix(def);
      let cache = cacheByPrefix.get(prefix);
      if (!cache) {
        cache = await openWatchCache(backend, {
          prefix,
          retentionMs: o.watchCacheRetentionMs,
          maxEventBytes: o.watchCacheMaxEventBytes,
          // With the gate off, consistent reads always go to storage.
          ...(o.featureGates.ConsistentListFromCache ? {} : { consistentReadsFromCache: false }),
        });
        cacheByPrefix.set(prefix, cache);
        caches.push(cache);
      }
      const store = new RegistryStore(def, cache, o.naming, admission, o.declarative);
      store.unsafeDeletion = o.featureGates.AllowUnsafeMalformedObjectDeletion ?? false;
      stores.push(store);
      served.push(store);
      if (def.group === '' && def.resource === 'namespaces') namespaceStore = store;
    }
    // Kinds kept under one prefix compare field ownership in each other's versions (as the
    // write pool's workers link their own preparations).
    linkSharedStorage(stores.map((s) => s.prep));
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
  return { stores, served, close };
}
