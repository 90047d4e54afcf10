// The APIService controllers of the aggregation layer:
// - registration: every group version this server serves has a local APIService
//   (`<version>.<group>`, Kubernetes' priorities, marked as managed); managed ones for group
//   versions this server no longer serves are removed at start;
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
    await this.syncAvailability();
    const tick = () => {
      if (this.stopped) return;
      this.syncAvailability()
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
  }

  /** The local APIServices of the served group versions, created or corrected. */
  private async register(): Promise<void> {
    const served = new Map<string, ApiServiceObject>();
    for (const s of this.ctx.stores.values()) {
      const { group, version } = s.def;
      const name = apiServiceName(group, version);
      if (served.has(name)) continue;
      const priority = builtinPriority(this.ctx.naming, group, version) ?? { groupPriorityMinimum: 1000, versionPriority: 100 };
      served.set(name, {
        apiVersion: apiVersionOf(this.store.def),
        kind: 'APIService',
        metadata: { name, labels: { [this.managedLabel]: 'onstart' } },
        spec: { group, version, ...priority },
      });
    }
    // Written together, so that they share commits instead of waiting for one each.
    await Promise.all(
      [...served].map(async ([name, desired]) => {
        try {
          await this.store.create(undefined, structuredClone(desired), { dryRun: false });
          return;
        } catch (e) {
          if (!(isStatusError(e) && e.code === 409)) throw e;
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
    const all = await this.store.list(undefined, matchEverything());
    for (const a of all.items) {
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
