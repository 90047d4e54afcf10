// The controllers of bootstrap tokens, as kube-controller-manager's tokencleaner and
// bootstrapsigner; both run when `--enable-bootstrap-token-auth` is given (docs/bootstrap-tokens.md).
//
// - The token cleaner deletes a bootstrap token Secret of the system namespace once its
//   expiration has passed: at once when it is seen expired, otherwise at its expiration (looked at
//   again then, so a secret whose expiration was moved meanwhile lives on). The delete carries the
//   secret's uid, so a new secret of the same name is never taken for the old one.
// - The signer keeps `cluster-info` of the public namespace signed: a key `jws-kubeconfig-<id>`
//   per token that may sign (usage-bootstrap-signing "true", not expired), holding a detached JWS
//   (HS256) over the value of its `kubeconfig` key with the full token `<id>.<secret>` as the
//   shared key, as the API contract says (docs/bootstrap-tokens.md#the-signing-key). Signatures
//   of tokens that no longer may sign are removed; when every signature is already right nothing
//   is written. It runs again on every change of a token secret or of cluster-info, and when the
//   next signing token expires.
//
// `cluster-info` itself is made at start when missing (ensureClusterInfo): its `kubeconfig` names
// the server and its CA as kubeadm writes it, so a joining client can check the CA it is given
// against a token it already holds.

import { createHmac } from 'node:crypto';
import type { Naming } from '../naming.ts';
import type { KObject } from '../machinery/meta.ts';
import { matchEverything } from '../machinery/list-options.ts';
import { isStatusError } from '../machinery/status.ts';
import { BOOTSTRAP_KEYS, bootstrapData, bootstrapExpiry, tokenIdOfSecretName } from '../registry/kinds/bootstrap-token.ts';
import { mapOf } from '../registry/kinds/config-map.ts';
import { secretTypes } from '../registry/kinds/secret.ts';
import type { RegistryStore } from '../registry/store.ts';
import { keepWatching, storeKey, type Controller, type ControllerFactory } from './controller.ts';

export const CLUSTER_INFO = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/** setTimeout's longest delay: a later expiration is looked at again after this long. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A failed pass is tried again after this long. */
const RETRY_MS = 1_000;

type Clock = () => number;

/** A timer that does not keep the process alive. */
function later(ms: number, fn: () => void): NodeJS.Timeout {
  const t = setTimeout(fn, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
  t.unref();
  return t;
}

const describeError = (e: unknown) => (e instanceof Error ? e.message : String(e));

class TokenCleaner implements Controller {
  private readonly secrets: RegistryStore;
  private readonly namespace: string;
  private readonly secretType: string;
  private readonly log: (message: string) => void;
  private readonly now: Clock;
  readonly name = 'tokencleaner';
  private stopped = false;
  private watch: { stop(): void } | undefined;
  /** When each secret is looked at again (its expiration), by name. */
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    secrets: RegistryStore,
    namespace: string,
    secretType: string,
    log: (message: string) => void,
    now: Clock = Date.now,
  ) {
    this.secrets = secrets;
    this.namespace = namespace;
    this.secretType = secretType;
    this.log = log;
    this.now = now;
  }

  async start(): Promise<void> {
    this.watch = await keepWatching(this.secrets, this.namespace, (type, view) => {
      const secret = view();
      const name = secret.metadata.name ?? '';
      if (type === 'DELETED') return this.forget(name);
      if ((secret as { type?: unknown }).type === this.secretType) this.evaluate(secret);
    });
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private forget(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
  }

  /** Deletes the secret when expired; otherwise looks at it again when it expires. */
  private evaluate(secret: KObject): void {
    if (this.stopped) return;
    const name = secret.metadata.name ?? '';
    this.forget(name);
    const { expired, at } = bootstrapExpiry(secret, this.now());
    if (expired) {
      void this.remove(secret);
      return;
    }
    if (at === undefined) return;
    this.timers.set(
      name,
      later(at - this.now() + 1, () => {
        this.timers.delete(name);
        void this.recheck(name);
      }),
    );
  }

  private async recheck(name: string): Promise<void> {
    if (this.stopped) return;
    try {
      const secret = await this.secrets.get(this.namespace, name);
      if ((secret as { type?: unknown }).type === this.secretType) this.evaluate(secret);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      this.log(`${this.name}: ${this.namespace}/${name}: ${describeError(e)}`);
      this.timers.set(name, later(RETRY_MS, () => void this.recheck(name)));
    }
  }

  private async remove(secret: KObject): Promise<void> {
    const name = secret.metadata.name ?? '';
    try {
      await this.secrets.delete(this.namespace, name, { dryRun: false, preconditions: secret.metadata.uid ? { uid: secret.metadata.uid } : undefined });
    } catch (e) {
      // Already gone (404), or another secret of that name now (409): nothing to do.
      if (isStatusError(e) && (e.code === 404 || e.code === 409)) return;
      this.log(`${this.name}: deleting ${this.namespace}/${name}: ${describeError(e)}`);
      if (!this.stopped) this.timers.set(name, later(RETRY_MS, () => void this.recheck(name)));
    }
  }
}

/**
 * A detached JWS (RFC 7515 appendix F) of `content`, HS256 with `key`: the compact form with its
 * payload left out (`<header>..<signature>`), the protected header `{"alg":"HS256","kid":<id>}`.
 */
export function detachedSignature(content: string, tokenId: string, key: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const payload = Buffer.from(content, 'utf8').toString('base64url');
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}..${signature}`;
}

/** The tokens that may sign at `now` (id → full token), and when the first of them expires. */
function signingTokens(secrets: readonly KObject[], secretType: string, now: number): { tokens: Map<string, string>; nextExpiry?: number } {
  const tokens = new Map<string, string>();
  let nextExpiry: number | undefined;
  for (const s of secrets) {
    if ((s as { type?: unknown }).type !== secretType) continue;
    const nameId = tokenIdOfSecretName(s.metadata.name ?? '');
    const id = bootstrapData(s, BOOTSTRAP_KEYS.tokenId);
    const secret = bootstrapData(s, BOOTSTRAP_KEYS.tokenSecret);
    if (nameId === undefined || id === '' || id !== nameId || secret === '') continue;
    const { expired, at } = bootstrapExpiry(s, now);
    if (expired || bootstrapData(s, BOOTSTRAP_KEYS.usageSigning) !== 'true') continue;
    if (tokens.has(id)) continue;
    tokens.set(id, `${id}.${secret}`);
    if (at !== undefined && (nextExpiry === undefined || at < nextExpiry)) nextExpiry = at;
  }
  return { tokens, nextExpiry };
}

/** cluster-info's data with the signatures `tokens` make; undefined when it already has exactly those. */
function signedData(configMap: KObject, tokens: ReadonlyMap<string, string>): Record<string, string> | undefined {
  const data = mapOf((configMap as { data?: unknown }).data);
  const content = data[KUBECONFIG_KEY];
  if (typeof content !== 'string') return undefined;
  const next: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) if (!key.startsWith(JWS_KEY_PREFIX)) next[key] = value;
  let changed = false;
  for (const [id, token] of tokens) {
    const sig = detachedSignature(content, id, token);
    if (data[JWS_KEY_PREFIX + id] !== sig) changed = true;
    next[JWS_KEY_PREFIX + id] = sig;
  }
  // A signature of a token that may no longer sign is removed.
  for (const key of Object.keys(data)) if (key.startsWith(JWS_KEY_PREFIX) && !Object.hasOwn(next, key)) changed = true;
  return changed ? next : undefined;
}

class BootstrapSigner implements Controller {
  private readonly secrets: RegistryStore;
  private readonly configMaps: RegistryStore;
  private readonly naming: Naming;
  private readonly log: (message: string) => void;
  private readonly now: Clock;
  readonly name = 'bootstrapsigner';
  private stopped = false;
  private running = false;
  private again = false;
  private readonly watches: { stop(): void }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    secrets: RegistryStore,
    configMaps: RegistryStore,
    naming: Naming,
    log: (message: string) => void,
    now: Clock = Date.now,
  ) {
    this.secrets = secrets;
    this.configMaps = configMaps;
    this.naming = naming;
    this.log = log;
    this.now = now;
  }

  private get secretType(): string {
    return secretTypes(this.naming).bootstrapToken;
  }

  async start(): Promise<void> {
    this.watches.push(
      await keepWatching(this.secrets, this.naming.systemNamespace, (_type, view) => {
        if ((view() as { type?: unknown }).type === this.secretType) this.kick();
      }),
    );
    this.watches.push(
      await keepWatching(this.configMaps, this.naming.publicNamespace, (type, view) => {
        if (type !== 'DELETED' && view().metadata.name === CLUSTER_INFO) this.kick();
      }),
    );
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.splice(0)) w.stop();
    clearTimeout(this.timer);
  }

  /** A pass now, or right after the one in progress: many changes at once make one or two passes. */
  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.sync()
      .catch((e: unknown) => {
        this.log(`${this.name}: ${describeError(e)}`);
        this.schedule(this.now() + RETRY_MS);
      })
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** A pass at `at` (ms since the epoch), unless one is due sooner. */
  private schedule(at: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = later(at - this.now() + 1, () => this.kick());
  }

  private async sync(): Promise<void> {
    const ns = this.naming.publicNamespace;
    let configMap: KObject;
    try {
      configMap = await this.configMaps.get(ns, CLUSTER_INFO);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      throw e;
    }
    const list = await this.secrets.list(this.naming.systemNamespace, matchEverything());
    const { tokens, nextExpiry } = signingTokens(list.items, this.secretType, this.now());
    clearTimeout(this.timer);
    if (nextExpiry !== undefined) this.schedule(nextExpiry);
    if (!signedData(configMap, tokens)) return;
    try {
      await this.configMaps.guaranteedUpdate(
        ns,
        CLUSTER_INFO,
        (current) => {
          // Deleted meanwhile: the update fails with 404, and a new cluster-info is signed when it comes.
          if (!current) return configMap;
          const data = signedData(current, tokens);
          return data ? { ...current, data } : current;
        },
        { dryRun: false },
      );
    } catch (e) {
      if (isStatusError(e) && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}

export const tokenCleaner: ControllerFactory = (ctx) => {
  const secrets = ctx.stores.get(storeKey('', 'secrets'));
  return ctx.bootstrapTokens && secrets ? new TokenCleaner(secrets, ctx.naming.systemNamespace, secretTypes(ctx.naming).bootstrapToken, ctx.log) : undefined;
};

export const bootstrapSigner: ControllerFactory = (ctx) => {
  const secrets = ctx.stores.get(storeKey('', 'secrets'));
  const configMaps = ctx.stores.get(storeKey('', 'configmaps'));
  return ctx.bootstrapTokens && secrets && configMaps ? new BootstrapSigner(secrets, configMaps, ctx.naming, ctx.log) : undefined;
};

/**
 * cluster-info's kubeconfig as kubeadm writes it: one cluster, unnamed, with the server's URL and
 * (over HTTPS) its CA; no users, no contexts.
 */
export function clusterInfoKubeconfig(server: string, ca: string | undefined): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    ...(ca === undefined ? [] : [`    certificate-authority-data: ${Buffer.from(ca).toString('base64')}`]),
    `    server: ${server}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

/** Creates `cluster-info` in the public namespace when it is missing; one that exists is left as it is. */
export async function ensureClusterInfo(configMaps: RegistryStore, naming: Naming, kubeconfig: string): Promise<void> {
  try {
    await configMaps.create(
      naming.publicNamespace,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO, namespace: naming.publicNamespace }, data: { [KUBECONFIG_KEY]: kubeconfig } } as KObject,
      { dryRun: false },
    );
  } catch (e) {
    // Another API server on the same store may have created it first.
    if (!(isStatusError(e) && e.code === 409)) throw e;
  }
}
