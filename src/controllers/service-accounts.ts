// The service-account controller, as kube-controller-manager's serviceaccount controller: every
// active namespace has a ServiceAccount named `default`. A namespace that appears (or becomes
// active) gets one; a deleted one is created again; a terminating namespace gets none. Watches of
// namespaces and service accounts drive it, with a full pass at start and whenever a watch had to
// be started again.

import { matchEverything } from '../machinery/list-options.ts';
import type { KObject } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import { keepWatching, storeKey, type Controller, type ControllerFactory, type WatchEventKind } from './controller.ts';

/** The accounts every namespace has. */
export const DEFAULT_SERVICE_ACCOUNTS = ['default'] as const;

const WATCH_RESTART_MS = 1_000;
/** Failed namespaces are tried again after this long. */
const RETRY_MS = 1_000;

type NamespaceObject = KObject & { status?: { phase?: string } };

const isActive = (ns: KObject): boolean => !ns.metadata.deletionTimestamp && ((ns as NamespaceObject).status?.phase ?? 'Active') === 'Active';

class ServiceAccountsController implements Controller {
  private readonly namespaces: RegistryStore;
  private readonly accounts: RegistryStore;
  private readonly log: (message: string) => void;
  readonly name = 'serviceaccount-controller';
  private stopped = false;
  private running = false;
  /** Namespaces waiting to be looked at. */
  private readonly queue = new Set<string>();
  private readonly watches: { stop(): void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    namespaces: RegistryStore,
    accounts: RegistryStore,
    log: (message: string) => void,
  ) {
    this.namespaces = namespaces;
    this.accounts = accounts;
    this.log = log;
  }

  /** Resolves once every namespace that exists at start has its accounts. */
  async start(): Promise<void> {
    await this.watch(this.namespaces, (type, view) => {
      if (type === 'DELETED') return;
      const o = view();
      if (isActive(o) && o.metadata.name) this.enqueue(o.metadata.name);
    });
    await this.watch(this.accounts, (type, view) => {
      if (type !== 'DELETED') return;
      const o = view();
      if (o.metadata.namespace && (DEFAULT_SERVICE_ACCOUNTS as readonly string[]).includes(o.metadata.name ?? '')) this.enqueue(o.metadata.namespace);
    });
    await this.resync();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const w of this.watches.splice(0)) w.stop();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** Watches `store`; a watch that ends is started again, followed by a full pass for what it may have missed. */
  private async watch(store: RegistryStore, observe: (type: WatchEventKind, view: () => KObject) => void): Promise<void> {
    if (this.stopped) return;
    const w = await keepWatching(store, undefined, observe, { restartMs: WATCH_RESTART_MS, onRestarted: () => this.resync() });
    if (this.stopped) w.stop();
    else this.watches.push(w);
  }

  /** Every active namespace, looked at now; a failure is logged and the pass tried again. */
  private async resync(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.namespaces.list(undefined, matchEverything());
      for (const ns of list.items) if (isActive(ns) && ns.metadata.name) this.queue.add(ns.metadata.name);
    } catch (e) {
      this.log(`${this.name}: listing namespaces: ${e instanceof Error ? e.message : String(e)}`);
      this.later(RETRY_MS, () => void this.resync());
      return;
    }
    await this.drain();
  }

  private enqueue(namespace: string): void {
    this.queue.add(namespace);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.size && !this.stopped) {
        const ns = this.queue.values().next().value as string;
        this.queue.delete(ns);
        try {
          await this.sync(ns);
        } catch (e) {
          this.log(`${this.name}: namespace ${ns}: ${e instanceof Error ? e.message : String(e)}`);
          this.later(RETRY_MS, () => this.enqueue(ns));
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** syncNamespace: the missing accounts of an active namespace are created. */
  private async sync(namespace: string): Promise<void> {
    let ns: KObject;
    try {
      ns = await this.namespaces.get(undefined, namespace);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      throw e;
    }
    if (!isActive(ns)) return;
    for (const name of DEFAULT_SERVICE_ACCOUNTS) {
      if (this.accounts.cachedView(namespace, name)) continue;
      try {
        await this.accounts.create(namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }, { dryRun: false });
      } catch (e) {
        // Already there (another server, or a client), or the namespace began terminating.
        if (isStatusError(e) && (e.code === 409 || e.code === 403 || e.code === 404)) continue;
        throw e;
      }
    }
  }
}

export const serviceAccountsController: ControllerFactory = (ctx) => {
  const namespaces = ctx.stores.get(storeKey('', 'namespaces'));
  const accounts = ctx.stores.get(storeKey('', 'serviceaccounts'));
  return namespaces && accounts ? new ServiceAccountsController(namespaces, accounts, ctx.log) : undefined;
};
