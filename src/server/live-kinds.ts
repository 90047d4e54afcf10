// The kinds served while the server runs: the built-in ones it starts with and custom resources
// registered and unregistered later. One place keeps every consumer in step (stores and their
// watch caches, routes and discovery, OpenAPI, the controllers' store map, request metrics), so a
// definition built at run time takes exactly the paths a built-in one takes.

import type { KindDefinition } from '../registry/definition.ts';
import { enabledByDefault, expandVersions } from '../registry/versions.ts';
import { RegistryStore, type ReadableStore } from '../registry/store.ts';
import type { ApiRouter } from '../endpoints/router.ts';
import { storeKey, type KindChange, type KindRegistry } from '../controllers/controller.ts';
import type { ServedStores } from './stores.ts';

export interface TeardownTimings {
  /** Before the short requests of the old stores are waited for (kube-apiserver: one second). */
  graceMs: number;
  /** The longest the teardown waits for them, from its start (kube-apiserver: twice the request timeout); 0: no bound. */
  drainTimeoutMs: number;
}

export class LiveKinds implements KindRegistry {
  private defs: readonly KindDefinition[];
  private readonly listeners = new Set<(change: KindChange) => void>();
  /** Registrations in the order asked, one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The definitions each registered definition was expanded to (one per served version). */
  private readonly expanded = new Map<KindDefinition, KindDefinition[]>();
  private served?: { stores: ServedStores; router: ApiRouter; controllerStores: Map<string, RegistryStore> };

  /** The wait before the stores of a changed or removed definition are torn down. */
  private readonly teardown: TeardownTimings;

  constructor(defs: readonly KindDefinition[], teardown: Partial<TeardownTimings> = {}) {
    this.defs = defs;
    this.teardown = { graceMs: teardown.graceMs ?? 1000, drainTimeoutMs: teardown.drainTimeoutMs ?? 120_000 };
  }

  /** Binds the parts that follow the kinds, once they exist. */
  bind(stores: ServedStores, router: ApiRouter, controllerStores: Map<string, RegistryStore>): void {
    this.served = { stores, router, controllerStores };
  }

  /** The served definitions now; a new array after every change (consumers cache by identity). */
  readonly current = (): readonly KindDefinition[] => this.defs;

  private resources?: { defs: readonly KindDefinition[]; keys: Set<string> };

  /** Whether `<group>/<version>/<resource>` is served now (asked on every request: a set per set of kinds). */
  serves(group: string, version: string, resource: string): boolean {
    if (this.resources?.defs !== this.defs) this.resources = { defs: this.defs, keys: new Set(this.defs.map((d) => `${d.group}/${d.version}/${d.resource}`)) };
    return this.resources.keys.has(`${group}/${version}/${resource}`);
  }

  register(defs: readonly KindDefinition[]): Promise<RegistryStore[]> {
    return this.serialized(async () => {
      const s = this.bound();
      // A version off by default is not served (a CRD's storage version that is not served: its
      // other versions are still kept in its form).
      const all = defs.map((d) => [d, expandVersions([d]).filter(enabledByDefault)] as const);
      const stores = await s.stores.add(all.flatMap(([, e]) => e));
      for (const [d, e] of all) this.expanded.set(d, e);
      return this.swap(new Set(), stores).added;
    });
  }

  unregister(defs: readonly KindDefinition[]): Promise<void> {
    return this.serialized(async () => {
      const s = this.bound();
      const gone = new Set(defs.flatMap((d) => this.expanded.get(d) ?? [d]));
      for (const d of defs) this.expanded.delete(d);
      const { removed } = this.swap(gone, []);
      s.stores.remove([...gone]);
      // The caches no store reads any more close after the teardown, one registration at a time
      // (a kind registered meanwhile on the same storage keeps its cache).
      this.tearDown(removed, () => this.serialized(() => s.stores.release()));
    });
  }

  replace(old: KindDefinition, next: KindDefinition): Promise<RegistryStore[]> {
    return this.serialized(async () => {
      const s = this.bound();
      const gone = new Set(this.expanded.get(old) ?? [old]);
      const expanded = expandVersions([next]).filter(enabledByDefault);
      // Added first: the new stores read the cache of the storage prefix the old ones read, so it
      // stays open (no relist) when the old ones go.
      const stores = await s.stores.add(expanded);
      this.expanded.delete(old);
      this.expanded.set(next, expanded);
      const { added, removed } = this.swap(gone, stores);
      s.stores.remove([...gone]);
      this.tearDown(removed);
      return added;
    });
  }

  /**
   * The old stores of a changed or removed definition, no longer served, are torn down as
   * kube-apiserver's crdHandler tears down a CRD's old storage: a grace (a second) for requests
   * that found them to begin, then their short requests finish (bounded by the drain timeout,
   * counted from the start: twice the request timeout), then their watches end (`retire`) and
   * `then` runs. Meanwhile their watches go on receiving events. Nothing waits for it: neither
   * requests nor registrations.
   */
  private tearDown(old: readonly RegistryStore[], then?: () => Promise<void>): void {
    if (old.length === 0 && !then) return;
    const timers: NodeJS.Timeout[] = [];
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        t.unref();
        timers.push(t);
      });
    const drained = sleep(this.teardown.graceMs).then(() => Promise.all(old.map((x) => x.drained())));
    const bound = this.teardown.drainTimeoutMs;
    void (bound > 0 ? Promise.race([drained, sleep(bound)]) : drained).then(async () => {
      for (const t of timers) clearTimeout(t);
      for (const x of old) x.retire();
      await then?.();
    }).catch(() => {
      // A cache that fails to close has stopped serving all the same.
    });
  }

  /**
   * Stops serving the definitions `gone` and serves `stores` in one step: routes, discovery, the
   * served set and the controllers' stores change together (a request finds the old kind or the
   * new), and the listeners are told. The stores of `gone` are closed by the caller.
   */
  private swap(gone: ReadonlySet<KindDefinition>, stores: readonly ReadableStore[]): { added: RegistryStore[]; removed: RegistryStore[] } {
    const s = this.bound();
    const removed = gone.size ? s.stores.stores.filter((x) => gone.has(x.def)) : [];
    if (gone.size) s.router.remove([...gone]);
    if (stores.length) s.router.add(stores);
    this.defs = [...this.defs.filter((d) => !gone.has(d)), ...stores.map((x) => x.def)];
    for (const [key, x] of s.controllerStores) if (gone.has(x.def)) s.controllerStores.delete(key);
    const added = stores.filter((x): x is RegistryStore => x instanceof RegistryStore);
    // The storage version (the first of its expansion) is the controllers' store of a resource.
    for (const x of [...added].reverse()) s.controllerStores.set(storeKey(x.def.group, x.def.resource), x);
    this.emit({ added, removed });
    return { added, removed };
  }

  onChange(listener: (change: KindChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: KindChange): void {
    for (const l of this.listeners) l(change);
  }

  private bound() {
    if (!this.served) throw new Error('kinds registered before the server started serving');
    return this.served;
  }

  private serialized<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f);
    this.queue = run.catch(() => {});
    return run;
  }
}

