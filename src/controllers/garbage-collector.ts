// The garbage collector: cascading deletion by `metadata.ownerReferences`.
//
// - An object whose owners are all gone is deleted (Background propagation).
// - An owner being deleted with the `foregroundDeletion` finalizer stays until its dependents are
//   gone; then the finalizer is removed.
// - An owner being deleted with the `orphan` finalizer has its reference removed from every
//   dependent; then the finalizer is removed.
// - A reference to an owner that is gone, on an object that still has a live owner, is removed.
//
// It learns the object graph from watches of every store, keeping only objects that have owners
// (by owner uid), and acts on one owner uid or one dependent at a time from a queue. Its work is
// linear in the references: each distinct owner of a dependent is looked up once (an owner found
// absent is remembered: uids are never reused), a dependent is read once and loses all its dangling
// references in one update, and the queue yields to other work on the event loop as it goes.

import type { KObject } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import { apiVersionOf } from '../registry/definition.ts';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, type RegistryStore } from '../registry/store.ts';
import { keepWatching, type Controller, type ControllerFactory, type KindRegistry } from './controller.ts';

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

interface Dependent {
  store: RegistryStore;
  namespace: string | undefined;
  name: string;
}

/** A dependent as the index knows it, with its reference to the owner it is filed under. */
interface Indexed extends Dependent {
  ref: OwnerReference;
}

type OwnerState = { store: RegistryStore; object: KObject } | undefined | 'unknown';

/** How many owners found absent are remembered. */
const ABSENT_CACHE = 65_536;
/** The longest the queue runs before letting other work on the event loop go first (ms). */
const SLICE_MS = 10;

const OWNER_REFERENCES = Buffer.from('"ownerReferences"');
const DELETION_TIMESTAMP = Buffer.from('"deletionTimestamp"');

const ownersOf = (o: KObject): OwnerReference[] =>
  Array.isArray(o.metadata.ownerReferences) ? (o.metadata.ownerReferences as OwnerReference[]).filter((r) => r && typeof r.uid === 'string') : [];

/**
 * The stores to watch: one per storage prefix, as a kind kept in another kind's storage (core
 * Event) shows the same objects. The one that stores in its own form when there is one; otherwise
 * (a custom resource whose storage version is not served) the first served version.
 */
function watchedOf(stores: readonly RegistryStore[]): RegistryStore[] {
  const byPrefix = new Map<string, RegistryStore>();
  for (const s of stores) {
    const had = byPrefix.get(s.prefix);
    if (!had || (had.def.storedAs && !s.def.storedAs)) byPrefix.set(s.prefix, s);
  }
  return [...byPrefix.values()];
}

export const garbageCollector: ControllerFactory = (ctx) => new GarbageCollector([...ctx.stores.values()], ctx.log, ctx.kinds);

class GarbageCollector implements Controller {
  private readonly stores: readonly RegistryStore[];
  private readonly log: (message: string) => void;
  private readonly kinds?: KindRegistry;
  readonly name = 'garbage-collector';
  /** owner uid → dependents, by dependent key. */
  private readonly dependents = new Map<string, Map<string, Indexed>>();
  /** dependent key → the owner uids it refers to (to update the index on change). */
  private readonly ownersByKey = new Map<string, string[]>();
  /** Owners being deleted that wait on the collector (orphan / foregroundDeletion finalizer). */
  private readonly waiting = new Map<string, Dependent>();
  /** Owner uids waiting to be looked at. */
  private readonly queue = new Set<string>();
  /** Dependents (by key) whose references wait to be checked. */
  private readonly dependentQueue = new Map<string, Dependent>();
  /** References (by `refKey`) to owners found absent; insertion order is eviction order. */
  private readonly absent = new Set<string>();
  private readonly byKind = new Map<string, RegistryStore>();
  private readonly watches = new Map<RegistryStore, { stop(): void }>();
  private unsubscribe?: () => void;
  private running = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    stores: readonly RegistryStore[],
    log: (message: string) => void,
    kinds?: KindRegistry,
  ) {
    this.stores = stores;
    this.log = log;
    this.kinds = kinds;
    for (const s of stores) this.byKind.set(`${apiVersionOf(s.def)}/${s.def.kind}`, s);
  }

  async start(): Promise<void> {
    // Kinds served later (custom resources) are collected as well, from when they are served.
    this.unsubscribe = this.kinds?.onChange(({ added, removed }) => {
      for (const s of removed) {
        this.byKind.delete(`${apiVersionOf(s.def)}/${s.def.kind}`);
        this.watches.get(s)?.stop();
        this.watches.delete(s);
      }
      for (const s of added) this.byKind.set(`${apiVersionOf(s.def)}/${s.def.kind}`, s);
      for (const s of watchedOf(added)) void this.watch(s);
    });
    for (const store of watchedOf(this.stores)) await this.watch(store);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.unsubscribe?.();
    for (const w of this.watches.values()) w.stop();
  }

  private async watch(store: RegistryStore): Promise<void> {
    if (this.stopped) return;
    const w = await keepWatching(store, undefined, (type, view, encoded) => {
      // Most objects have no owners and are not being deleted: no need to parse them while no
      // object with owners is known.
      if (this.ownersByKey.size === 0 && !encoded.contains(OWNER_REFERENCES) && !encoded.contains(DELETION_TIMESTAMP)) return;
      this.observe(store, type, view());
    });
    if (this.stopped) w.stop();
    else this.watches.set(store, w);
  }

  /** Keep the owner index current and queue whatever an event may have made garbage. */
  private observe(store: RegistryStore, type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KObject): void {
    const uid = o.metadata.uid;
    const key = `${store.prefix}${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    for (const owner of this.ownersByKey.get(key) ?? []) {
      const deps = this.dependents.get(owner);
      deps?.delete(key);
      // A foreground owner waits for its last dependent to go.
      if (deps?.size === 0) {
        this.dependents.delete(owner);
        if (this.waiting.has(owner)) this.queue.add(owner);
      }
    }
    this.ownersByKey.delete(key);
    if (uid) this.waiting.delete(uid);
    if (type !== 'DELETED') {
      const owners = ownersOf(o);
      if (owners.length) this.ownersByKey.set(key, owners.map((r) => r.uid));
      const dependent = { store, namespace: o.metadata.namespace, name: o.metadata.name! };
      for (const r of owners) {
        let deps = this.dependents.get(r.uid);
        if (!deps) this.dependents.set(r.uid, (deps = new Map()));
        deps.set(key, { ...dependent, ref: { apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid } });
      }
      // A dependent whose owners may already be gone (or being deleted) is looked at: once, for
      // all its references.
      if (owners.length) this.dependentQueue.set(key, dependent);
      const finalizers = o.metadata.finalizers ?? [];
      if (o.metadata.deletionTimestamp && uid && (finalizers.includes(ORPHAN_FINALIZER) || finalizers.includes(FOREGROUND_FINALIZER))) {
        this.waiting.set(uid, { store, namespace: o.metadata.namespace, name: o.metadata.name! });
        this.queue.add(uid);
      }
    } else if (uid && this.dependents.has(uid)) {
      this.queue.add(uid);
    }
    this.kick();
  }

  private kick(): void {
    if (this.running || this.stopped || (this.queue.size === 0 && this.dependentQueue.size === 0)) return;
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
      if (this.queue.size || this.dependentQueue.size) this.kick();
    });
  }

  private async drain(): Promise<void> {
    let failed = false;
    let slice = performance.now();
    while ((this.queue.size || this.dependentQueue.size) && !this.stopped) {
      // The store answers from memory without yielding: let requests in between items.
      if (performance.now() - slice > SLICE_MS) {
        await new Promise((r) => setImmediate(r));
        slice = performance.now();
        if (this.stopped) break;
      }
      let what: string;
      let work: () => Promise<void>;
      if (this.queue.size) {
        const uid = this.queue.values().next().value as string;
        this.queue.delete(uid);
        what = uid;
        work = () => this.process(uid);
      } else {
        const [key, d] = this.dependentQueue.entries().next().value as [string, Dependent];
        this.dependentQueue.delete(key);
        what = key;
        work = () => this.processDependent(d);
      }
      try {
        await work();
      } catch (e) {
        // Conflicts are routine here (retried below): reported only when asked for.
        if (process.env.GC_DEBUG) this.log(`${this.name}: ${what}: ${e instanceof Error ? e.stack : String(e)}`);
        failed = true;
      }
    }
    // Conflicts and outages are retried shortly.
    if (failed && !this.stopped) {
      clearTimeout(this.retry);
      this.retry = setTimeout(() => {
        for (const owner of this.dependents.keys()) this.queue.add(owner);
        this.kick();
      }, 1000);
      this.retry.unref();
    }
  }

  /**
   * The live owner a reference points at, if any (same kind, name and uid): looked up once per
   * `seen` (one dependent's references), and never again once found absent, since a uid is never
   * reused.
   */
  private async owner(ref: OwnerReference, namespace: string | undefined, seen: Map<string, OwnerState>): Promise<OwnerState> {
    const store = this.byKind.get(`${ref.apiVersion}/${ref.kind}`);
    if (!store) return 'unknown';
    const ns = store.def.namespaced ? namespace : undefined;
    const key = `${ref.apiVersion}/${ref.kind}/${ns ?? ''}/${ref.name}/${ref.uid}`;
    if (this.absent.has(key)) return undefined;
    if (seen.has(key)) return seen.get(key);
    let state: OwnerState;
    try {
      const object = await store.get(ns, ref.name);
      state = object.metadata.uid === ref.uid ? { store, object } : undefined;
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
      state = undefined;
    }
    if (state === undefined) {
      this.absent.add(key);
      if (this.absent.size > ABSENT_CACHE) this.absent.delete(this.absent.values().next().value as string);
    } else {
      seen.set(key, state);
    }
    return state;
  }

  private async process(ownerUid: string): Promise<void> {
    const deps = [...(this.dependents.get(ownerUid)?.values() ?? [])];
    if (deps.length === 0) {
      // No dependents: an owner waiting on the collector can let go of its finalizer.
      await this.releaseWaitingOwner(ownerUid);
      return;
    }
    // Find the owner through a dependent's reference to it, as the index keeps it.
    // Dependents are re-read before anything is done to them.
    const first = deps[0]!;
    const ownerState = await this.owner(first.ref, first.namespace, new Map());
    if (ownerState === 'unknown') return;
    if (ownerState === undefined) {
      // The owner is gone: each dependent loses its dangling references, and goes if no live
      // owner remains.
      for (const d of deps) this.dependentQueue.set(`${d.store.prefix}${d.namespace ?? ''}/${d.name}`, d);
      return;
    }
    const finalizers = ownerState.object.metadata.finalizers ?? [];
    if (!ownerState.object.metadata.deletionTimestamp) return;
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      const only = new Set([ownerUid]);
      for (const d of deps) {
        const dep = await this.read(d);
        if (dep && ownersOf(dep).some((r) => r.uid === ownerUid)) await this.dropOwners(d, only);
      }
      await this.removeFinalizer(ownerState.store, ownerState.object, ORPHAN_FINALIZER);
    } else if (finalizers.includes(FOREGROUND_FINALIZER)) {
      // Dependents already being deleted are left to finish; the owner's finalizer goes once the
      // last one is gone (its DELETED event queues the owner again).
      for (const d of deps) {
        const dep = await this.read(d);
        if (dep && !dep.metadata.deletionTimestamp) await this.deleteQuietly(d);
      }
    }
  }

  private async releaseWaitingOwner(uid: string): Promise<void> {
    const w = this.waiting.get(uid);
    if (!w) return;
    const owner = await this.read(w);
    if (!owner || owner.metadata.uid !== uid || !owner.metadata.deletionTimestamp) return;
    const fins = owner.metadata.finalizers ?? [];
    if (fins.includes(FOREGROUND_FINALIZER)) await this.removeFinalizer(w.store, owner, FOREGROUND_FINALIZER);
    if (fins.includes(ORPHAN_FINALIZER)) await this.removeFinalizer(w.store, owner, ORPHAN_FINALIZER);
  }

  private async read(d: Dependent): Promise<KObject | undefined> {
    try {
      return await d.store.get(d.namespace, d.name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  }

  /**
   * Check every reference of a dependent, read once: with no owner left alive it is deleted;
   * otherwise the references to owners that are gone are removed, all in one update. An owner
   * being deleted that waits on the collector is queued to be looked at.
   */
  private async processDependent(d: Dependent): Promise<void> {
    const obj = await this.read(d);
    if (!obj) return;
    const refs = ownersOf(obj);
    if (refs.length === 0) return;
    const dangling = new Set<string>();
    const seen = new Map<string, OwnerState>();
    let alive = false;
    for (const r of refs) {
      const o = await this.owner(r, d.namespace, seen);
      if (o === undefined) dangling.add(r.uid);
      else {
        alive = true;
        if (o !== 'unknown' && o.object.metadata.deletionTimestamp && this.waiting.has(r.uid)) this.queue.add(r.uid);
      }
    }
    if (dangling.size === 0) return;
    if (!alive) {
      if (!obj.metadata.deletionTimestamp) await this.deleteQuietly(d);
      return;
    }
    await this.dropOwners(d, dangling);
  }

  /** Remove the references to these owner uids from a dependent. */
  private async dropOwners(d: Dependent, ownerUids: ReadonlySet<string>): Promise<void> {
    await this.update(d, (current) => {
      const rest = ownersOf(current).filter((r) => !ownerUids.has(r.uid));
      return { ...current, metadata: { ...current.metadata, ownerReferences: rest.length ? rest : undefined } };
    });
  }

  private async deleteQuietly(d: Dependent): Promise<void> {
    try {
      await d.store.delete(d.namespace, d.name, { dryRun: false, propagationPolicy: 'Background' });
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
    }
  }

  private async removeFinalizer(store: RegistryStore, owner: KObject, finalizer: string): Promise<void> {
    await this.update({ store, namespace: owner.metadata.namespace, name: owner.metadata.name! }, (current) => ({
      ...current,
      metadata: { ...current.metadata, finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== finalizer) },
    }));
  }

  private async update(d: Dependent, change: (current: KObject) => KObject): Promise<void> {
    try {
      await d.store.guaranteedUpdate(
        d.namespace,
        d.name,
        (current) => {
          if (!current) throw new Error('gone');
          const next = change(current);
          delete next.metadata.resourceVersion;
          return next;
        },
        { dryRun: false },
      );
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      if (e instanceof Error && e.message === 'gone') return;
      throw e;
    }
  }
}
