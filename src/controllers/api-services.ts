// The APIService controllers of the aggregation layer:
// - registration: every group version this server serves has a local APIService
//   (`<version>.<group>`, Kubernetes' priorities, marked as managed); managed ones for group
//   versions this server no longer serves are removed at start;
// - custom resources' registration: a group version served by custom resources (kinds registered
//   while the server runs) gets a local APIService too, marked `true` as Kubernetes' crdregistration
//   controller marks them (group priority 1000, version priority 100), removed when no kind serves
//   that group version any more;
// - availability: every APIService carries an `Available` condition. Local ones are always
//   available; one backed by a service is not, since no Service of that name can exist here
//   (`ServiceNotFound`, as Kubernetes reports a missing service).

import { isStatusError } from '../machinery/status.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { nowTimestamp } from '../machinery/meta.ts';
import { apiVersionOf } from '../registry/definition.ts';
import { apiServiceName, builtinPriority } from '../registry/api-priorities.ts';
import type { RegistryStore } from '../registry/store.ts';
import type { ApiServiceCondition, ApiServiceObject } from '../registry/kinds/api-service.ts';
import { storeKey, type Controller, type ControllerContext, type ControllerFactory } from './controller.ts';

const SYNC_INTERVAL_MS = 1000;

export const apiServiceController: ControllerFactory = (ctx) => {
  const store = ctx.stores.get(storeKey(ctx.naming.group('apiregistration'), 'apiservices'));
  return store ? new ApiServiceController(store, ctx) : undefined;
};

/** Whether a stored spec is `desired` (no field more, none different). */
function sameSpec(stored: ApiServiceObject['spec'], desired: ApiServiceObject['spec']): boolean {
  const a = (stored ?? {}) as Record<string, unknown>;
  const b = (desired ?? {}) as Record<string, unknown>;
  return Object.keys(a).length === Object.keys(b).length && Object.keys(b).every((k) => a[k] === b[k]);
}

/** The Available condition an APIService should carry. */
export function availability(a: ApiServiceObject): Omit<ApiServiceCondition, 'lastTransitionTime'> {
  const svc = a.spec?.service;
  if (!svc) return { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
  return { type: 'Available', status: 'False', reason: 'ServiceNotFound', message: `service/${svc.name ?? ''} in ${JSON.stringify(svc.namespace ?? '')} is not present` };
}

class ApiServiceController implements Controller {
  private readonly store: RegistryStore;
  private readonly ctx: ControllerContext;
  readonly name = 'apiservice-registration-and-availability';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly managedLabel: string;
  /** The APIServices registered at start (`onstart`): what custom resources' registration leaves alone. */
  private readonly onStart = new Set<string>();
  /** Served kinds changed since the last pass of custom resources' registration. */
  private kindsChanged = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    store: RegistryStore,
    ctx: ControllerContext,
  ) {
    this.store = store;
    this.ctx = ctx;
    this.managedLabel = `${ctx.naming.product}-aggregator.${ctx.naming.labelDomain}/automanaged`;
  }

  async start(): Promise<void> {
    await this.register();
    this.unsubscribe = this.ctx.kinds?.onChange(() => (this.kindsChanged = true));
    await this.syncAvailability();
    const tick = () => {
      if (this.stopped) return;
      this.registerCustom()
        .then(() => this.syncAvailability())
        .catch((e: unknown) => this.ctx.log(`apiservice availability: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, SYNC_INTERVAL_MS);
        });
    };
    this.timer = setTimeout(tick, SYNC_INTERVAL_MS);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.unsubscribe?.();
  }

  /**
   * The APIServices of group versions served by kinds registered since start (custom resources),
   * created or removed after the served kinds changed, as kube's crdregistration controller keeps
   * them. One pass per change of kinds at most each second, whatever the number of changes.
   */
  private async registerCustom(): Promise<void> {
    if (!this.kindsChanged) return;
    this.kindsChanged = false;
    try {
      await this.syncCustom();
    } catch (e) {
      this.kindsChanged = true;
      throw e;
    }
  }

  private async syncCustom(): Promise<void> {
    const served = new Map<string, { group: string; version: string }>();
    for (const { group, version } of this.ctx.kinds?.current() ?? []) {
      const name = apiServiceName(group, version);
      if (!this.onStart.has(name)) served.set(name, { group, version });
    }
    const all = await this.store.list(undefined, matchEverything());
    const present = new Set(all.items.map((a) => a.metadata.name!));
    const ignoreGone = (e: unknown) => {
      if (!(isStatusError(e) && (e.code === 404 || e.code === 409))) throw e;
    };
    await Promise.all([
      ...[...served]
        .filter(([name]) => !present.has(name))
        .map(([name, { group, version }]) =>
          this.store
            .create(
              undefined,
              {
                apiVersion: apiVersionOf(this.store.def),
                kind: 'APIService',
                metadata: { name, labels: { [this.managedLabel]: 'true' } },
                spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 100 },
              },
              { dryRun: false },
            )
            .then(() => undefined, ignoreGone),
        ),
      ...all.items
        .filter((a) => a.metadata.labels?.[this.managedLabel] === 'true' && !served.has(a.metadata.name!) && !this.onStart.has(a.metadata.name!))
        .map((a) => this.store.delete(undefined, a.metadata.name!, { dryRun: false, preconditions: { resourceVersion: a.metadata.resourceVersion } }).then(() => undefined, ignoreGone)),
    ]);
  }

  /** The local APIServices of the served group versions, created or corrected. */
  private async register(): Promise<void> {
    const served = new Map<string, ApiServiceObject>();
    // Every served version of every kind (the stores are one per resource).
    for (const { group, version } of this.ctx.kinds?.current() ?? [...this.ctx.stores.values()].map((s) => s.def)) {
      const name = apiServiceName(group, version);
      if (served.has(name)) continue;
      this.onStart.add(name);
      const priority = builtinPriority(this.ctx.naming, group, version) ?? { groupPriorityMinimum: 1000, versionPriority: 100 };
      served.set(name, {
        apiVersion: apiVersionOf(this.store.def),
        kind: 'APIService',
        metadata: { name, labels: { [this.managedLabel]: 'onstart' } },
        spec: { group, version, ...priority },
      });
    }
    const existing = new Map((await this.store.list(undefined, matchEverything())).items.map((a) => [a.metadata.name!, a as ApiServiceObject]));
    // Written together, so that they share commits instead of waiting for one each; one already as
    // it should be (an earlier start) is not written at all.
    await Promise.all(
      [...served].map(async ([name, desired]) => {
        const stored = existing.get(name);
        if (stored && (stored.metadata.labels?.[this.managedLabel] === undefined || sameSpec(stored.spec, desired.spec))) return;
        if (!stored) {
          try {
            await this.store.create(undefined, structuredClone(desired), { dryRun: false });
            return;
          } catch (e) {
            if (!(isStatusError(e) && e.code === 409)) throw e;
          }
        }
        // It exists (another server, an earlier start): keep a managed one's spec as it should be.
        await this.store.guaranteedUpdate(
          undefined,
          name,
          (current) => {
            const cur = current as ApiServiceObject;
            if (cur.metadata.labels?.[this.managedLabel] === undefined) return cur;
            return { ...cur, spec: desired.spec };
          },
          { dryRun: false },
        );
      }),
    );
    // (What was there before: this start writes only served ones.)
    for (const a of existing.values()) {
      if (a.metadata.labels?.[this.managedLabel] !== 'onstart' || served.has(a.metadata.name!)) continue;
      try {
        await this.store.delete(undefined, a.metadata.name!, { dryRun: false, preconditions: { resourceVersion: a.metadata.resourceVersion } });
      } catch (e) {
        if (!(isStatusError(e) && (e.code === 404 || e.code === 409))) throw e;
      }
    }
  }

  /** Bring every APIService's Available condition up to date. */
  private async syncAvailability(): Promise<void> {
    const status = this.store.def.subresources?.find((s) => s.name === 'status');
    const all = await this.store.list(undefined, matchEverything());
    await Promise.all(
      all.items.map(async (item) => {
        const a = item as ApiServiceObject;
        const want = availability(a);
        const have = a.status?.conditions?.find((c) => c.type === 'Available');
        if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return;
        try {
          await this.store.guaranteedUpdate(
            undefined,
            a.metadata.name!,
            (current) => {
              const cur = current as ApiServiceObject;
              const conditions = (cur.status?.conditions ?? []).filter((c) => c.type !== 'Available');
              const prev = cur.status?.conditions?.find((c) => c.type === 'Available');
              const lastTransitionTime = prev && prev.status === want.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowTimestamp();
              return { ...cur, status: { ...cur.status, conditions: [...conditions, { ...want, lastTransitionTime }] } };
            },
            { dryRun: false, subresource: status },
          );
        } catch (e) {
          // Deleted meanwhile, or updated by another server: the next pass looks again.
          if (!(isStatusError(e) && (e.code === 404 || e.code === 409))) throw e;
        }
      }),
    );
  }
}
