// The namespace controller: when a namespace is terminating, delete everything in it through the
// normal delete path (so finalizers are honoured), then remove the namespace finalizer through
// /finalize so the namespace itself goes. Conditions and reporting come with the namespace
// lifecycle work; this is the deletion engine.

import type { Naming } from '../naming.ts';
import type { KObject } from '../machinery/meta.ts';
import type { RegistryStore } from '../registry/store.ts';
import { matchEverything } from '../machinery/list-options.ts';


export class NamespaceController {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly namespaces: RegistryStore,
    private readonly namespaced: readonly RegistryStore[],
    private readonly naming: Naming,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
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
    let remaining = 0;
    for (const store of this.namespaced) {
      await store.deleteCollection(name, matchEverything(), { dryRun: false });
      remaining += (await store.list(name, { ...matchEverything(), limit: 1 })).items.length;
    }
    if (remaining > 0) return;
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
}
