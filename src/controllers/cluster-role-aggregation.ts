// The ClusterRole aggregation controller, as kube-controller-manager's: a ClusterRole with an
// aggregationRule gets the union of the rules of every other ClusterRole its selectors match (in
// name order, each rule once); rules written by hand are overwritten. A change to any ClusterRole
// (a watch event) brings a new pass over all of them.

import { matchEverything } from '../machinery/list-options.ts';
import { sameJson, type KObject } from '../machinery/meta.ts';
import { labelSelectorFromObject } from '../machinery/selectors.ts';
import type { PolicyRule, RoleObject } from '../registry/kinds/rbac.ts';
import type { RegistryStore } from '../registry/store.ts';
import { storeKey, type Controller, type ControllerFactory } from './controller.ts';

const WATCH_RESTART_MS = 1_000;

/** The rules an aggregated role should have, from every ClusterRole (undefined: a selector does not parse). */
export function aggregatedRules(role: RoleObject, all: readonly RoleObject[]): PolicyRule[] | undefined {
  const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
  let matchers;
  try {
    matchers = selectors.map((s) => labelSelectorFromObject(s));
  } catch {
    return undefined;
  }
  const rules: PolicyRule[] = [];
  const sorted = [...all].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  for (const other of sorted) {
    if (other.metadata.name === role.metadata.name) continue;
    if (!matchers.some((m) => m.matches(other.metadata.labels))) continue;
    for (const r of Array.isArray(other.rules) ? other.rules : []) if (!rules.some((x) => sameJson(x, r))) rules.push(r);
  }
  return rules;
}

class ClusterRoleAggregation implements Controller {
  private readonly roles: RegistryStore;
  private readonly log: (message: string) => void;
  readonly name = 'clusterrole-aggregation-controller';
  private stopped = false;
  private watch?: { stop(): void };
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;

  constructor(
    roles: RegistryStore,
    log: (message: string) => void,
  ) {
    this.roles = roles;
    this.log = log;
  }

  async start(): Promise<void> {
    await this.follow();
    await this.pass();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.watch?.stop();
  }

  private async follow(): Promise<void> {
    if (this.stopped) return;
    try {
      const { resourceVersion } = (await this.roles.list(undefined, { ...matchEverything(), limit: 1 })).metadata;
      const w = await this.roles.watch(undefined, { ...matchEverything(true), sendInitialEvents: false, resourceVersion }, {
        send: (type) => {
          if (type !== 'BOOKMARK') void this.pass();
          return true;
        },
        error: () => {},
        end: () => this.restart(),
        onDrain: () => {},
      });
      if (this.stopped) w.stop();
      else this.watch = w;
    } catch {
      this.restart();
    }
  }

  private restart(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.follow().then(() => this.pass()), WATCH_RESTART_MS);
    this.timer.unref();
  }

  /** One pass over every aggregated role; a pass asked for while one runs runs after it. */
  private pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.once().catch((e) => this.log(`${this.name}: ${e instanceof Error ? e.message : String(e)}`));
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  private async once(): Promise<void> {
    if (this.stopped) return;
    let all = (await this.roles.list(undefined, matchEverything())).items as RoleObject[];
    // Worked out in memory to the end first, so that a role aggregating aggregated roles (admin
    // from edit from view) gets its final rules in this pass rather than one pass per level, and
    // the changed roles are written together (sharing commits). Bounded: selectors that match in
    // a cycle are left to the next pass, as before.
    const changed = new Map<string, PolicyRule[]>();
    for (let round = 0; round <= all.length; round++) {
      const next = all.map((role) => {
        if (!role.aggregationRule) return role;
        const rules = aggregatedRules(role, all);
        if (!rules || sameJson(rules, Array.isArray(role.rules) ? role.rules : [])) return role;
        changed.set(role.metadata.name!, rules);
        return { ...role, rules };
      });
      if (next.every((r, i) => r === all[i])) break;
      all = next;
    }
    await Promise.all(
      [...changed].map(([name, rules]) =>
        this.roles.guaranteedUpdate(undefined, name, (current: KObject | undefined) => {
          if (!current) throw new Error(`clusterrole ${name} is gone`);
          return { ...current, rules } as KObject;
        }, { dryRun: false, manager: this.name }),
      ),
    );
  }
}

export const clusterRoleAggregation: ControllerFactory = (ctx) => {
  const roles = ctx.stores.get(storeKey(ctx.naming.group('rbac.authorization'), 'clusterroles'));
  return roles && new ClusterRoleAggregation(roles, ctx.log);
};
