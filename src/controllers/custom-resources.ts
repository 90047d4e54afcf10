// The CustomResourceDefinition controller: kube-apiserver's naming, establishing and finalizing
// controllers in one. For each CRD it
// - accepts its names unless another CRD of the group (by its accepted names) or a built-in kind
//   of the group holds them (`NamesAccepted`, `status.acceptedNames`);
// - serves the kind the CRD defines (a definition built at run time, registered with the server's
//   kinds) and then marks it `Established`; a changed CRD is served by a new definition;
// - once the CRD is deleted, deletes its custom resources, stops serving them and removes the
//   cleanup finalizer (`Terminating`), so the CRD goes and a new one starts empty.

import type { KObject } from '../machinery/meta.ts';
import { nowTimestamp } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { storagePrefix, type KindDefinition } from '../registry/definition.ts';
import type { RegistryStore } from '../registry/store.ts';
import { customResourceDefinition } from '../registry/custom-resource.ts';
import type { ConversionWebhookMetrics } from '../registry/webhook-conversion.ts';
import { cleanupFinalizer, setCrdCondition, type CrdNames, type CrdObject } from '../registry/kinds/custom-resource-definition.ts';
import { structuralProblems } from '../registry/custom-resource-schema.ts';
import { loadCel } from '../cel/load.ts';
import { keepWatching, storeKey, type Controller, type ControllerFactory, type KindRegistry } from './controller.ts';

/** How often a CRD whose custom resources are still being deleted is looked at again. */
const FINALIZE_RETRY_MS = 200;

export const customResourceController: ControllerFactory = (ctx) => {
  const store = ctx.stores.get(storeKey(ctx.naming.group('apiextensions'), 'customresourcedefinitions'));
  return store && ctx.kinds ? new CustomResourceController(store, ctx.kinds, cleanupFinalizer(ctx.naming), ctx.log, ctx.conversionMetrics) : undefined;
};

interface Served {
  def: KindDefinition;
  /** What the definition was built from: a CRD that changes it is served anew. */
  fingerprint: string;
  store?: RegistryStore;
}

class CustomResourceController implements Controller {
  private readonly crds: RegistryStore;
  private readonly kinds: KindRegistry;
  private readonly finalizer: string;
  private readonly log: (message: string) => void;
  private readonly conversionMetrics: ConversionWebhookMetrics | undefined;
  readonly name = 'customresourcedefinition-controller';
  private readonly served = new Map<string, Served>();
  /** CRDs being deleted: their kinds refuse creates. */
  private readonly terminating = new Set<string>();
  private readonly queue = new Set<string>();
  /** Every CRD as last seen (its watch events, and the status this controller wrote): what names are taken. */
  private readonly known = new Map<string, CrdObject>();
  private running?: Promise<void>;
  private watch?: { stop(): void };
  private retry?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    crds: RegistryStore,
    kinds: KindRegistry,
    finalizer: string,
    log: (message: string) => void,
    conversionMetrics?: ConversionWebhookMetrics,
  ) {
    this.crds = crds;
    this.kinds = kinds;
    this.finalizer = finalizer;
    this.log = log;
    this.conversionMetrics = conversionMetrics;
  }

  async start(): Promise<void> {
    this.watch = await keepWatching(this.crds, undefined, (type, view) => {
      const crd = view() as CrdObject;
      const name = crd.metadata.name!;
      const had = this.known.get(name);
      if (type === 'DELETED') this.known.delete(name);
      // (An event older than the status this controller wrote since does not replace it.)
      else if (!had || Number(crd.metadata.resourceVersion) >= Number(had.metadata.resourceVersion)) this.known.set(name, crd);
      this.enqueue(name);
      // A CRD gone may free names another CRD of its group asked for.
      if (type === 'DELETED') for (const other of this.served.keys()) this.enqueue(other);
    });
    // The CRDs stored before the start are served before the server reports itself started.
    await this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watch?.stop();
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      // Names conflict only within a group (a CRD is named <plural>.<group>): CRDs of different
      // groups are synced together, so their status writes share commits; one per group at a time.
      const batch = new Map<string, string>();
      for (const name of this.queue) if (!batch.has(groupOf(name))) batch.set(groupOf(name), name);
      for (const name of batch.values()) this.queue.delete(name);
      await Promise.all([...batch.values()].map((name) => this.syncOne(name)));
    }
  }

  private async syncOne(name: string): Promise<void> {
    try {
      await this.sync(name);
    } catch (e) {
      if (isStatusError(e) && (e.code === 404 || e.code === 409)) this.queue.add(name);
      else this.log(`custom resource definition ${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async sync(name: string): Promise<void> {
    const crd = await this.read(name);
    if (!crd) return this.stopServing(name);
    if (crd.metadata.deletionTimestamp) return this.finalize(crd);
    const others = [...this.known.values()];
    const { names, conflict } = this.acceptNames(crd, others);
    const want = withOwnStatus(crd);
    (want.status ??= {}).acceptedNames = names;
    const now = nowTimestamp();
    // (The schema walk compiles patterns as the expression language does: loaded with the first CRD.)
    await loadCel();
    // NonStructuralSchema: True while a version's schema (one stored before the rules checked it) is not structural.
    const violations = (crd.spec?.versions ?? []).flatMap((v, i) => structuralProblems(v.schema?.openAPIV3Schema, `spec.versions[${i}].schema.openAPIV3Schema`)).map((e) => e.message).sort();
    if (violations.length) setCrdCondition(want, { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message: violations.length === 1 ? violations[0]! : `[${violations.join(', ')}]` }, now);
    else if (want.status?.conditions?.some((c) => c.type === 'NonStructuralSchema')) want.status.conditions = want.status.conditions.filter((c) => c.type !== 'NonStructuralSchema');
    if (conflict) {
      setCrdCondition(want, { type: 'NamesAccepted', status: 'False', ...conflict }, now);
      const established = crd.status?.conditions?.find((c) => c.type === 'Established');
      if (!established) setCrdCondition(want, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
    } else {
      setCrdCondition(want, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
      // Served first, then Established: a client that waits for the condition finds the paths.
      await this.serve(want);
      setCrdCondition(want, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
    }
    await this.writeStatus(crd, want);
  }

  /**
   * The CRD as the watch cache has it (read-only: parsed once per version, shared with the cache's
   * other readers; this controller changes only copies of its status and metadata), else as storage has it.
   */
  private async read(name: string): Promise<CrdObject | undefined> {
    const cached = this.crds.cachedView(undefined, name);
    if (cached) return cached as CrdObject;
    try {
      return (await this.crds.get(undefined, name)) as CrdObject;
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  }

  /** The names the CRD may have, and why not all of the ones it asks for (kube's naming controller). */
  private acceptNames(crd: CrdObject, all: readonly CrdObject[]): { names: CrdNames; conflict?: { reason: string; message: string } } {
    const group = crd.spec!.group!;
    const requested = crd.spec!.names!;
    const accepted = crd.status?.acceptedNames ?? {};
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const o of all) {
      if (o.metadata.name === crd.metadata.name || o.spec?.group !== group) continue;
      const n = o.status?.acceptedNames ?? {};
      for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) resources.add(r);
      for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
    }
    // Built-in kinds of the group hold their names too.
    const ours = new Set([...this.served.values()].map((s) => `${s.def.group}/${s.def.resource}`));
    for (const d of this.kinds.current()) {
      if (d.group !== group || ours.has(`${d.group}/${d.resource}`)) continue;
      for (const r of [d.resource, d.singular, ...(d.shortNames ?? [])]) resources.add(r);
      kinds.add(d.kind).add(`${d.kind}List`);
    }
    const names: CrdNames = { ...accepted };
    let conflict: { reason: string; message: string } | undefined;
    const fresh = (want: string | undefined, had: string | undefined, used: Set<string>) => want === had || want === undefined || !used.has(want);
    const check = (field: 'plural' | 'singular' | 'kind' | 'listKind', used: Set<string>, reason: string) => {
      if (fresh(requested[field], accepted[field], used)) names[field] = requested[field];
      else conflict = { reason, message: `${JSON.stringify(requested[field])} is already in use` };
    };
    check('plural', resources, 'PluralConflict');
    check('singular', resources, 'SingularConflict');
    const taken = (requested.shortNames ?? []).filter((s) => !(accepted.shortNames ?? []).includes(s) && resources.has(s));
    if (taken.length === 0) names.shortNames = requested.shortNames;
    else conflict = { reason: 'ShortNamesConflict', message: taken.map((s) => `${JSON.stringify(s)} is already in use`).join(', ') };
    check('kind', kinds, 'KindConflict');
    check('listKind', kinds, 'ListKindConflict');
    names.categories = requested.categories;
    for (const k of Object.keys(names) as (keyof CrdNames)[]) if (names[k] === undefined) delete names[k];
    return { names, conflict };
  }

  /** Serves the kind the CRD (with its accepted names) defines, anew when it changed. */
  private async serve(crd: CrdObject): Promise<void> {
    const name = crd.metadata.name!;
    const fingerprint = JSON.stringify([crd.spec, crd.status?.acceptedNames]);
    const current = this.served.get(name);
    if (current?.fingerprint === fingerprint) return;
    // The definition keeps its own spec (the CRD read is the cache's).
    const def = customResourceDefinition({ ...crd, spec: structuredClone(crd.spec) }, () => this.terminating.has(name), this.conversionMetrics);
    // A changed CRD is swapped in place (its storage stays; watches through the old one end once
    // the old stores are torn down).
    if (current && def && samePrefix(current.def, def)) {
      const [store] = await this.kinds.replace(current.def, def);
      this.served.set(name, { def, fingerprint, store });
      return;
    }
    if (current) await this.kinds.unregister([current.def]);
    this.served.delete(name);
    if (!def) return;
    const [store] = await this.kinds.register([def]);
    this.served.set(name, { def, fingerprint, store });
  }

  private async stopServing(name: string): Promise<void> {
    const current = this.served.get(name);
    this.terminating.delete(name);
    if (!current) return;
    this.served.delete(name);
    await this.kinds.unregister([current.def]);
  }

  /** A deleted CRD: its custom resources go, then its paths, then the finalizer that kept it. */
  private async finalize(crd: CrdObject): Promise<void> {
    if (!crd.metadata.finalizers?.includes(this.finalizer)) return;
    const name = crd.metadata.name!;
    this.terminating.add(name);
    const store = this.served.get(name)?.store;
    const want = withOwnStatus(crd);
    const now = nowTimestamp();
    if (store) {
      const left = (await store.list(undefined, matchEverything())).items;
      for (const o of left) await this.deleteInstance(store, o);
      if (left.length > 0) {
        setCrdCondition(want, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now);
        await this.writeStatus(crd, want);
        // Instances with finalizers of their own go when those are removed: look again soon.
        this.retry = setTimeout(() => this.enqueue(name), FINALIZE_RETRY_MS);
        this.retry.unref();
        return;
      }
      setCrdCondition(want, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, now);
      await this.stopServing(name);
    } else {
      setCrdCondition(want, { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' }, now);
    }
    want.metadata.finalizers = crd.metadata.finalizers.filter((f) => f !== this.finalizer);
    await this.writeStatus(crd, want);
  }

  private async deleteInstance(store: RegistryStore, o: KObject): Promise<void> {
    if (o.metadata.deletionTimestamp) return;
    try {
      await store.delete(o.metadata.namespace, o.metadata.name!, { dryRun: false, preconditions: { uid: o.metadata.uid } });
    } catch (e) {
      if (!(isStatusError(e) && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  /** Writes status (and finalizers) through /status when they differ from what is stored. */
  private async writeStatus(crd: CrdObject, want: CrdObject): Promise<void> {
    if (JSON.stringify(crd.status) === JSON.stringify(want.status) && JSON.stringify(crd.metadata.finalizers) === JSON.stringify(want.metadata.finalizers)) return;
    const status = this.crds.def.subresources?.find((s) => s.name === 'status');
    await this.crds.guaranteedUpdate(
      undefined,
      crd.metadata.name!,
      (current) => {
        if (!current || current.metadata.uid !== crd.metadata.uid || current.metadata.resourceVersion !== crd.metadata.resourceVersion) throw new StaleRead();
        return { ...current, metadata: { ...current.metadata, finalizers: want.metadata.finalizers }, status: want.status };
      },
      { dryRun: false, subresource: status },
    ).then(
      // Seen at once by the next sync of its group, before the write's own event arrives.
      (written) => void this.known.set(crd.metadata.name!, written.object as CrdObject),
      (e: unknown) => {
        // Changed meanwhile: its own event brings it back to the queue.
        if (!(e instanceof StaleRead)) throw e;
      },
    );
  }
}

class StaleRead extends Error {}

/** A copy of the CRD whose status and metadata are its own (its spec is shared, and not changed). */
const withOwnStatus = (crd: CrdObject): CrdObject => ({ ...crd, metadata: { ...crd.metadata }, ...(crd.status ? { status: structuredClone(crd.status) } : {}) });
const samePrefix = (a: KindDefinition, b: KindDefinition): boolean => storagePrefix(a) === storagePrefix(b);

const groupOf = (crdName: string): string => crdName.slice(crdName.indexOf('.') + 1);
