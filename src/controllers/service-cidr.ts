// The default ServiceCIDR controller: every API server makes sure the ServiceCIDR `kubernetes`
// exists with the CIDRs of its `--service-cluster-ip-range` and marks it Ready, as
// kube-apiserver's kubernetes-service-cidr-controller does:
// - start-up waits until the object exists (created here, or by another server on the same
//   storage: AlreadyExists is fine);
// - a deleted object is created again, an object that lost its Ready condition (or has it
//   Unknown) gets it back, through /status;
// - a single-family object whose CIDR is this server's first one is widened to this server's
//   dual-stack pair;
// - an object with other CIDRs (another server's configuration) or with Ready=False set by
//   someone else is left alone and reported once in the log.
// A watch on the object drives it, with a periodic resync as a safety net.

import { parseFieldSelector } from '../machinery/selectors.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { formatCIDR, parseCIDRSloppy, validateCIDR, cidrFamily } from '../machinery/ip.ts';
import { isPlainObject, nowTimestamp, type KObject } from '../machinery/meta.ts';
import { errors, isStatusError } from '../machinery/status.ts';
import type { SubresourceDefinition } from '../registry/definition.ts';
import type { RegistryStore } from '../registry/store.ts';
import { storeKey, type Controller, type ControllerFactory } from './controller.ts';

const DEFAULT_SERVICE_CIDR_NAME = 'kubernetes';
const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
const SERVICE_CIDR_READY_MESSAGE = 'Kubernetes default Service CIDR is ready';
/** Every ServiceCIDR condition carries a CamelCase reason (docs/rulings.md#r12). */
const SERVICE_CIDR_READY_REASON = 'Ready';

/** Kubernetes resyncs every 10 s (its endpoint reconciler interval); the watch reacts sooner. */
const RESYNC_MS = 10_000;
/** Start-up retries while the first pass fails (storage not answering yet). */
const START_RETRY_MS = 100;
const WATCH_RESTART_MS = 1_000;

interface Condition {
  type?: string;
  status?: string;
  [field: string]: unknown;
}

/**
 * The CIDRs of `--service-cluster-ip-range` (one CIDR or an IPv4,IPv6 pair; default
 * 10.0.0.0/24), each as its network in canonical form. Like kube-apiserver the flag is read
 * leniently (leading zeros, host bits), but the result must be a valid ServiceCIDR. Throws with a
 * message naming the flag when it is not usable.
 */
export function parseServiceClusterIpRange(text: string | undefined): string[] {
  const flag = '--service-cluster-ip-range';
  const fail = (why: string): never => {
    throw new Error(`invalid ${flag} ${JSON.stringify(text)}: ${why}`);
  };
  const entries = text ? text.split(',') : [DEFAULT_SERVICE_CLUSTER_IP_RANGE];
  if (entries.length > 2) fail(`${flag} must not contain more than two entries`);
  const cidrs = entries.map((entry, i) => {
    const cidr = parseCIDRSloppy(entry);
    if (!cidr) return fail(`${flag}[${i}] ${JSON.stringify(entry)} is not a valid CIDR (e.g. 10.96.0.0/16 or fd00::/108)`);
    const network = formatCIDR(cidr);
    const problems = validateCIDR(network);
    if (problems.length) fail(`${flag}[${i}] ${JSON.stringify(entry)}: ${problems.join(', ')}`);
    return network;
  });
  if (cidrs.length === 2 && cidrFamily(cidrs[0]!) === cidrFamily(cidrs[1]!)) fail(`${flag}[0] and ${flag}[1] must be of different IP family`);
  return cidrs;
}

export const serviceCidrController: ControllerFactory = (ctx) => {
  // The flag is checked even when the API is not served: a bad value fails the start either way.
  const cidrs = parseServiceClusterIpRange(ctx.serviceClusterIpRange);
  const store = ctx.stores.get(storeKey(ctx.naming.group('networking'), 'servicecidrs'));
  if (!store) return undefined;
  return new DefaultServiceCidrController(store, cidrs, ctx.log);
};

const cidrsOf = (o: KObject): unknown[] => (isPlainObject(o.spec) && Array.isArray(o.spec.cidrs) ? o.spec.cidrs : []);

const conditionsOf = (o: KObject): Condition[] =>
  isPlainObject(o.status) && Array.isArray(o.status.conditions) ? (o.status.conditions as unknown[]).filter(isPlainObject).map((c) => c as Condition) : [];

const readyOf = (o: KObject): Condition | undefined => conditionsOf(o).find((c) => c.type === 'Ready');

/**
 * The object without its resourceVersion: the store then retries a write that lost a race
 * (another server wrote in between) on a fresh read instead of failing with a conflict.
 */
function unconditional(o: KObject): KObject {
  delete o.metadata.resourceVersion;
  return o;
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

class DefaultServiceCidrController implements Controller {
  private readonly store: RegistryStore;
  private readonly cidrs: readonly string[];
  private readonly log: (message: string) => void;
  readonly name = 'kubernetes-service-cidr-controller';
  private stopped = false;
  private running = false;
  private again = false;
  private resync: NodeJS.Timeout | undefined;
  private watchRestart: NodeJS.Timeout | undefined;
  private watch: { stop(): void } | undefined;
  private pause: { timer: NodeJS.Timeout; wake(): void } | undefined;
  private reportedMismatch = false;
  private reportedNotReady = false;
  private lastError = '';

  constructor(
    store: RegistryStore,
    cidrs: readonly string[],
    log: (message: string) => void,
  ) {
    this.store = store;
    this.cidrs = cidrs;
    this.log = log;
  }

  async start(): Promise<void> {
    // As in kube-apiserver, start-up waits for the first successful pass.
    while (!this.stopped) {
      try {
        await this.sync();
        break;
      } catch (e) {
        this.report(e);
        await this.sleep(START_RETRY_MS);
      }
    }
    if (this.stopped) return;
    await this.startWatch();
    this.scheduleResync();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.resync);
    clearTimeout(this.watchRestart);
    this.watch?.stop();
    this.watch = undefined;
    if (this.pause) {
      clearTimeout(this.pause.timer);
      this.pause.wake();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.pause = undefined;
        resolve();
      };
      this.pause = { timer: setTimeout(wake, ms), wake };
    });
  }

  private scheduleResync(): void {
    if (this.stopped) return;
    this.resync = setTimeout(() => {
      this.kick();
      this.scheduleResync();
    }, RESYNC_MS);
    this.resync.unref();
  }

  private async startWatch(): Promise<void> {
    if (this.stopped) return;
    const restart = () => {
      if (this.stopped) return;
      this.watch = undefined;
      this.watchRestart = setTimeout(() => void this.startWatch(), WATCH_RESTART_MS);
      this.watchRestart.unref();
    };
    try {
      const opts = { ...matchEverything(true), fieldSelector: parseFieldSelector(`metadata.name=${DEFAULT_SERVICE_CIDR_NAME}`) };
      const w = await this.store.watch(undefined, opts, {
        send: (type) => {
          if (type !== 'BOOKMARK') this.kick();
          return true;
        },
        error: () => {},
        end: restart,
        onDrain: () => {},
      });
      if (this.stopped) w.stop();
      else this.watch = w;
    } catch {
      restart();
    }
  }

  /** Run a pass now, or right after the one in progress. */
  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.sync()
      .catch((e: unknown) => this.report(e))
      .finally(() => {
        this.running = false;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Log a failure once, not on every retry. */
  private report(e: unknown): void {
    const message = messageOf(e);
    if (message === this.lastError) return;
    this.lastError = message;
    this.log(`${this.name}: error syncing the default ServiceCIDR: ${message}`);
  }

  private async sync(): Promise<void> {
    let current: KObject | undefined;
    try {
      current = await this.store.get(undefined, DEFAULT_SERVICE_CIDR_NAME);
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
    }
    if (current) {
      const cidrs = cidrsOf(current);
      if (this.cidrs.length === 2 && cidrs.length === 1 && cidrs[0] === this.cidrs[0]) await this.widenToDualStack(cidrs);
      else await this.syncStatus(current);
      this.lastError = '';
      return;
    }
    let created: KObject;
    try {
      created = (await this.store.create(undefined, { apiVersion: this.store.apiVersion, kind: this.store.def.kind, metadata: { name: DEFAULT_SERVICE_CIDR_NAME }, spec: { cidrs: [...this.cidrs] } }, { dryRun: false })).object;
    } catch (e) {
      // Another API server on the same storage created it first.
      if (!(isStatusError(e) && e.code === 409)) throw e;
      created = await this.store.get(undefined, DEFAULT_SERVICE_CIDR_NAME);
    }
    this.lastError = '';
    await this.syncStatus(created);
  }

  private async widenToDualStack(from: unknown[]): Promise<void> {
    this.log(`${this.name}: updating the default ServiceCIDR from single-stack (${from.join(',')}) to dual-stack (${this.cidrs.join(',')})`);
    try {
      await this.store.guaranteedUpdate(
        undefined,
        DEFAULT_SERVICE_CIDR_NAME,
        (cur) => {
          if (!cur) throw errors.notFound(this.store.qualified, DEFAULT_SERVICE_CIDR_NAME);
          const cidrs = cidrsOf(cur);
          if (cidrs.length === 1 && cidrs[0] === this.cidrs[0]) cur.spec = { ...(isPlainObject(cur.spec) ? cur.spec : {}), cidrs: [...this.cidrs] };
          return unconditional(cur);
        },
        { dryRun: false },
      );
    } catch (e) {
      this.log(`${this.name}: the default ServiceCIDR can not be updated from ${this.cidrs[0]} to dual stack ${this.cidrs.join(',')}: ${messageOf(e)}`);
    }
  }

  private sameConfig(o: KObject): boolean {
    const cidrs = cidrsOf(o);
    return cidrs.length === this.cidrs.length && cidrs.every((c, i) => c === this.cidrs[i]);
  }

  /** Ready=True when the object matches this server's configuration and has no verdict yet. */
  private async syncStatus(o: KObject): Promise<void> {
    // A deleting object is left to whoever deletes it.
    if (o.metadata.deletionTimestamp) return;
    if (!this.sameConfig(o)) {
      if (!this.reportedMismatch) {
        this.log(
          `${this.name}: the default ServiceCIDR ${cidrsOf(o).join(',')} does not match this server's --service-cluster-ip-range ${this.cidrs.join(',')}; configure the flag to match it or delete it`,
        );
        this.reportedMismatch = true;
      }
      return;
    }
    const ready = readyOf(o);
    if (ready?.status === 'False') {
      // Set by someone else: never overwritten (that would fight them); an administrator decides.
      if (!this.reportedNotReady) {
        this.log(`${this.name}: the default ServiceCIDR is not Ready (${String(ready.reason ?? '')}: ${String(ready.message ?? '')}) though its CIDRs match this server's configuration`);
        this.reportedNotReady = true;
      }
      return;
    }
    if (ready?.status === 'True') return;
    const status = this.store.def.subresources?.find((s) => s.name === 'status');
    if (!status) throw new Error('the ServiceCIDR API has no status subresource');
    try {
      await this.markReady(status);
    } catch (e) {
      this.log(`${this.name}: the default ServiceCIDR status can not be set to Ready=True: ${messageOf(e)}`);
    }
  }

  private async markReady(status: SubresourceDefinition): Promise<void> {
    await this.store.guaranteedUpdate(
      undefined,
      DEFAULT_SERVICE_CIDR_NAME,
      (cur) => {
        if (!cur) throw errors.notFound(this.store.qualified, DEFAULT_SERVICE_CIDR_NAME);
        // Decided again on what is stored now: the object may have changed since it was read.
        const ready = readyOf(cur);
        if (cur.metadata.deletionTimestamp || !this.sameConfig(cur) || (ready && ready.status !== 'Unknown')) return unconditional(cur);
        const condition: Condition = { type: 'Ready', status: 'True', lastTransitionTime: nowTimestamp(), reason: SERVICE_CIDR_READY_REASON, message: SERVICE_CIDR_READY_MESSAGE };
        const conditions = ready ? conditionsOf(cur).map((c) => (c.type === 'Ready' ? condition : c)) : [...conditionsOf(cur), condition];
        cur.status = { ...(isPlainObject(cur.status) ? cur.status : {}), conditions };
        return unconditional(cur);
      },
      { dryRun: false, subresource: status },
    );
  }
}
