// What a built-in controller gets and offers. Controllers run inside the API server, act only
// through the registry stores (the normal write path, with admission and validation), and must
// tolerate other API servers on the same storage running the same controller. Every controller
// the server runs is one of these, so all of them can be started and stopped in one place
// (leader election switches them on and off there).

import type { Naming } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { KObject } from '../machinery/meta.ts';
import { matchEverything } from '../machinery/list-options.ts';
import type { RegistryStore } from '../registry/store.ts';
import type { EncodedObject } from '../registry/encoded.ts';
import type { KindDefinition } from '../registry/definition.ts';
import type { ConversionWebhookMetrics } from '../registry/webhook-conversion.ts';

export interface ControllerContext {
  /** The served stores by `<group>/<resource>` (`/namespaces` for the core group). */
  stores: ReadonlyMap<string, RegistryStore>;
  naming: Naming;
  featureGates: FeatureGates;
  /** `--service-cluster-ip-range`. */
  serviceClusterIpRange?: string;
  /** `--event-ttl`: how long an event lives after its last write. */
  eventTtlMs?: number;
  /** How often the namespace controller looks for terminating namespaces (default 1 s). */
  namespaceSyncIntervalMs?: number;
  /** `--enable-bootstrap-token-auth`: the token cleaner and the bootstrap signer run. */
  bootstrapTokens?: boolean;
  /** What fills in token secrets (the tokens controller runs only with it). */
  legacyTokens?: LegacyTokenSigner;
  /**
   * The kinds served while the server runs (custom resources come and go): `stores` follows it;
   * controllers that keep per-kind state listen to its changes. Absent: the kinds never change.
   */
  kinds?: KindRegistry;
  /** Where CRD conversion webhooks are measured (the server's metrics). */
  conversionMetrics?: ConversionWebhookMetrics;
  log(message: string): void;
}

/** Stores that started or stopped being served. */
export interface KindChange {
  added: readonly RegistryStore[];
  removed: readonly RegistryStore[];
}

/** Adds and removes served kinds while the server runs, through the same paths as built-in kinds. */
export interface KindRegistry {
  /** The served definitions now, built-in ones included. */
  current(): readonly KindDefinition[];
  /**
   * Serves these kinds (each expanded to one definition per served version); resolves with their
   * stores once requests reach them.
   */
  register(defs: readonly KindDefinition[]): Promise<RegistryStore[]>;
  /** Stops serving kinds registered before (given as registered): their paths answer 404 and leave discovery. */
  unregister(defs: readonly KindDefinition[]): Promise<void>;
  /**
   * Serves `next` in place of `old` (registered before, given as registered) in one step: no
   * request finds neither; the storage and its watch cache stay, and the watches opened through
   * `old` end (as kube-apiserver tears down a changed CRD's storage).
   */
  replace(old: KindDefinition, next: KindDefinition): Promise<RegistryStore[]>;
  /** Called after each change; returns what stops the calls. */
  onChange(listener: (change: KindChange) => void): () => void;
}

/** Signs the legacy token of a token secret for an account, and the CA its clients trust. */
export interface LegacyTokenSigner {
  issue(s: { namespace: string; name: string; uid: string; secretName: string }): Promise<string>;
  /** The server's CA (PEM), put in each token secret as `ca.crt`; none over plain HTTP. */
  rootCa?: string;
}

export interface Controller {
  readonly name: string;
  /** Called once at start, after the system namespaces exist; resolves when its first pass is done. */
  start(): Promise<void>;
  /** Ends its work; safe to call whether or not it was started. */
  stop(): void;
}

export type ControllerFactory = (ctx: ControllerContext) => Controller | undefined;

/** The key of a store in ControllerContext.stores. */
export const storeKey = (group: string, resource: string): string => `${group}/${resource}`;

/** Start each controller in turn, as listed: one waits for the previous one's first pass. */
export async function startControllers(controllers: readonly Controller[]): Promise<void> {
  for (const c of controllers) await c.start();
}

export function stopControllers(controllers: readonly Controller[]): void {
  for (const c of controllers) c.stop();
}

export type WatchEventKind = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Watches a store (or one namespace of it) from its current objects on (each first seen as
 * ADDED). A watch that ends or cannot start is started again after `restartMs`, and replays the
 * current objects; `onRestarted` then runs (a full pass for what a replay cannot show, such as
 * deletions). `observe` gets the object lazily, and its encoded form for cheap checks. Resolves
 * once the first watch runs (or failed, and will be tried again).
 */
export async function keepWatching(
  store: RegistryStore,
  namespace: string | undefined,
  observe: (type: WatchEventKind, object: () => KObject, encoded: EncodedObject) => void,
  opts: { restartMs?: number; onRestarted?: () => unknown } = {},
): Promise<{ stop(): void }> {
  const restartMs = opts.restartMs ?? 1_000;
  let stopped = false;
  let current: { stop(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const restart = () => {
    current = undefined;
    if (stopped) return;
    timer = setTimeout(() => {
      void begin().then(() => {
        if (!stopped) opts.onRestarted?.();
      });
    }, restartMs);
    timer.unref();
  };
  const begin = async () => {
    try {
      const w = await store.watch(namespace, matchEverything(true), {
        send: (type, encoded) => {
          if (type !== 'BOOKMARK') observe(type, () => encoded.view(), encoded);
          return true;
        },
        error: () => {},
        end: restart,
        onDrain: () => {},
      });
      if (stopped) w.stop();
      else current = w;
    } catch {
      restart();
    }
  };
  await begin();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      current?.stop();
    },
  };
}
