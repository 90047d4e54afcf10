// The namespace controller: when a namespace is terminating, delete everything in it through the
// normal delete path (so finalizers are honoured), report progress in the namespace's conditions
// as Kubernetes' namespace deleter does (content remaining, finalizers remaining, deletion
// failures), then remove the namespace finalizer through /finalize so the namespace itself goes.

import type { Naming } from '../naming.ts';
import { nowTimestamp, type KObject } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { storeKey, type Controller, type ControllerFactory } from './controller.ts';

interface NamespaceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

type NamespaceObject = KObject & { spec?: { finalizers?: string[] }; status?: { phase?: string; conditions?: NamespaceCondition[] } };

/** Each condition the deleter reports, with what it says when all is well. */
const CONDITIONS: Record<string, { okReason: string; okMessage: string }> = {
  NamespaceDeletionDiscoveryFailure: { okReason: 'ResourcesDiscovered', okMessage: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { okReason: 'ParsedGroupVersions', okMessage: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { okReason: 'ContentDeleted', okMessage: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { okReason: 'ContentRemoved', okMessage: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { okReason: 'ContentHasNoFinalizers', okMessage: 'All content-preserving finalizers finished' },
};

/** `leases.coordination.orch.io`, `nodes` (core): how Kubernetes names a resource in messages. */
const groupResource = (s: RegistryStore) => (s.def.group ? `${s.def.resource}.${s.def.group}` : s.def.resource);

export const namespaceController: ControllerFactory = (ctx) => {
  const namespaces = ctx.stores.get(storeKey('', 'namespaces'));
  if (!namespaces) return undefined;
  // Asked on each pass: custom resources come and go while the server runs.
  const namespaced = () => [...ctx.stores.values()].filter((s) => s.def.namespaced);
  return new NamespaceController(namespaces, namespaced, ctx.naming, ctx.namespaceSyncIntervalMs);
};

class NamespaceController implements Controller {
  private readonly namespaces: RegistryStore;
  private readonly namespaced: () => readonly RegistryStore[];
  private readonly naming: Naming;
  private readonly intervalMs: number;
  readonly name = 'namespace-controller';
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    namespaces: RegistryStore,
    namespaced: () => readonly RegistryStore[],
    naming: Naming,
    intervalMs = 1000,
  ) {
    this.namespaces = namespaces;
    this.namespaced = namespaced;
    this.naming = naming;
    this.intervalMs = intervalMs;
  }

  /** The first pass runs right after start, not before it resolves. */
  async start(): Promise<void> {
    const tick = () => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.intervalMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Run a pass now (after a namespace delete) instead of at the next tick. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass()
      .catch(() => {
        /* retried on the next tick */
      })
      .finally(() => {
        this.running = false;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async pass(): Promise<void> {
    const list = await this.namespaces.list(undefined, matchEverything());
    for (const ns of list.items) {
      if (this.stopped) return;
      if (ns.metadata.deletionTimestamp) await this.finish(ns);
    }
  }

  private async finish(ns: KObject): Promise<void> {
    const name = ns.metadata.name!;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const failures: string[] = [];
    for (const store of this.namespaced()) {
      try {
        await store.deleteCollection(name, matchEverything(), { dryRun: false });
      } catch (e) {
        failures.push(`${groupResource(store)}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const left = (await store.list(name, matchEverything())).items;
      if (left.length) remaining.set(groupResource(store), left.length);
      for (const o of left) for (const f of o.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    }
    const problems = new Map<string, { reason: string; message: string }>();
    if (failures.length) problems.set('NamespaceDeletionContentFailure', { reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${failures.length} remaining: ${failures.join(', ')}` });
    if (remaining.size)
      problems.set('NamespaceContentRemaining', {
        reason: 'SomeResourcesRemain',
        message: `Some resources are remaining: ${[...remaining].sort(([a], [b]) => (a < b ? -1 : 1)).map(([r, n]) => `${r} has ${n} resource instances`).join(', ')}`,
      });
    if (finalizers.size)
      problems.set('NamespaceFinalizersRemaining', {
        reason: 'SomeFinalizersRemain',
        message: `Some content in the namespace has finalizers remaining: ${[...finalizers].sort(([a], [b]) => (a < b ? -1 : 1)).map(([f, n]) => `${f} in ${n} resource instances`).join(', ')}`,
      });
    await this.reportConditions(ns as NamespaceObject, problems);
    if (remaining.size > 0 || failures.length > 0) return;
    const finalize = this.namespaces.def.subresources?.find((s) => s.name === 'finalize');
    if (!finalize) return;
    await this.namespaces.guaranteedUpdate(
      undefined,
      name,
      (current) => {
        const c = (current ?? ns) as KObject & { spec?: { finalizers?: string[] } };
        return { ...c, spec: { ...c.spec, finalizers: (c.spec?.finalizers ?? []).filter((f) => f !== this.naming.namespaceFinalizer) } };
      },
      { dryRun: false, subresource: finalize },
    );
  }

  /** Write the deleter's conditions through /status when they differ from what is stored. */
  private async reportConditions(ns: NamespaceObject, problems: Map<string, { reason: string; message: string }>): Promise<void> {
    const status = this.namespaces.def.subresources?.find((s) => s.name === 'status');
    if (!status) return;
    const wanted = (type: string) => {
      const p = problems.get(type);
      return p ? { type, status: 'True', ...p } : { type, status: 'False', reason: CONDITIONS[type]!.okReason, message: CONDITIONS[type]!.okMessage };
    };
    const same = (have: NamespaceCondition[] | undefined) =>
      Object.keys(CONDITIONS).every((t) => {
        const h = have?.find((c) => c.type === t);
        const w = wanted(t);
        return h !== undefined && h.status === w.status && h.reason === w.reason && h.message === w.message;
      });
    if (same(ns.status?.conditions)) return;
    try {
      await this.namespaces.guaranteedUpdate(
        undefined,
        ns.metadata.name!,
        (current) => {
          const c = (current ?? ns) as NamespaceObject;
          const now = nowTimestamp();
          const others = (c.status?.conditions ?? []).filter((x) => !(x.type in CONDITIONS));
          const conditions = Object.keys(CONDITIONS).map((t) => {
            const w = wanted(t);
            const prev = c.status?.conditions?.find((x) => x.type === t);
            return { ...w, lastTransitionTime: prev && prev.status === w.status && prev.lastTransitionTime ? prev.lastTransitionTime : now };
          });
          return { ...c, status: { ...c.status, conditions: [...others, ...conditions] } };
        },
        { dryRun: false, subresource: status },
      );
    } catch (e) {
      // Gone meanwhile, or changed by another server: the next pass reports again.
      if (!(isStatusError(e) && (e.code === 404 || e.code === 409))) throw e;
    }
  }
}
