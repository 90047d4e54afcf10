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
import { hasRules } from '../registry/validation-rules.ts';
import { loadCel } from '../cel/load.ts';

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
  /**
   * Serves more kinds while the server runs (custom resources): their stores join `stores` and
   * `served` (the same arrays, changed in place) and are returned in the order given.
   */
  add(defs: readonly KindDefinition[]): Promise<ReadableStore[]>;
  /** Stops serving these kinds' stores (their objects stay in storage); their caches stay open (`release`). */
  remove(defs: readonly KindDefinition[]): void;
  /** Closes the caches no store reads any more (their watchers end). */
  release(): Promise<void>;
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
  const addOne = async (def: KindDefinition): Promise<ReadableStore> => {
    // Computed kinds store nothing: no cache, nothing to watch or collect.
    if (def.computed) {
      const computed = new ComputedStore(def, def.computed);
      served.push(computed);
      return computed;
    }
    // Review kinds answer their create and keep nothing.
    if (isReview(def)) {
      const review = new ReviewStore(def);
      served.push(review);
      return review;
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
    // A schema with validation rules has them compiled with its store: the expression language first.
    if (hasRules(def.schema)) await loadCel();
    const store = new RegistryStore(def, cache, o.naming, admission, o.declarative);
    store.unsafeDeletion = o.featureGates.AllowUnsafeMalformedObjectDeletion ?? false;
    stores.push(store);
    served.push(store);
    if (def.group === '' && def.resource === 'namespaces') namespaceStore = store;
    return store;
  };
  try {
    for (const def of defs) await addOne(def);
    // Kinds kept under one prefix compare field ownership in each other's versions (as the
    // write pool's workers link their own preparations).
    linkSharedStorage(stores.map((s) => s.prep));
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
  const add = async (more: readonly KindDefinition[]): Promise<ReadableStore[]> => {
    const before = stores.length;
    const added: ReadableStore[] = [];
    for (const def of more) added.push(await addOne(def));
    linkSharedStorage(stores.slice(before).map((s) => s.prep));
    return added;
  };
  const remove = (gone: readonly KindDefinition[]): void => {
    const drop = new Set(gone);
    for (const list of [stores, served] as ReadableStore[][]) {
      for (let i = list.length - 1; i >= 0; i--) if (drop.has(list[i]!.def)) list.splice(i, 1);
    }
  };
  // A prefix no store reads any more: its cache stops (its watchers end, as kube-apiserver ends
  // the watches of a removed custom resource once it tears its storage down).
  const release = async (): Promise<void> => {
    for (const [prefix, cache] of cacheByPrefix) {
      if (stores.some((s) => storagePrefix(s.def) === prefix)) continue;
      cacheByPrefix.delete(prefix);
      caches.splice(caches.indexOf(cache), 1);
      await cache.close();
    }
  };
  return { stores, served, add, remove, release, close };
}
