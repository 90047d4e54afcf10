// The tokens controller, as kube-controller-manager's: a Secret of type
// `<domain>/service-account-token` naming its account in `<domain>/service-account.name` is filled
// in with a legacy token of that account (`data.token`), the server's CA (`data.ca.crt`) and its
// namespace (`data.namespace`), and gets the account's uid annotation. A token secret whose
// account does not exist (or is another account of that name: another uid) is deleted, and so
// are the token secrets of an account when the account is deleted. As since Kubernetes 1.24, no
// secret is ever created for an account: a user who wants a long-lived token makes the Secret.
//
// Watches of secrets and accounts drive it, with a full pass at start and whenever a watch had
// to be started again. Several servers may run it at once: each write is a compare-and-swap that
// checks its decision again on what is stored, and a delete carries the uid it was decided on.

import { matchEverything } from '../machinery/list-options.ts';
import type { KObject } from '../machinery/meta.ts';
import { isStatusError } from '../machinery/status.ts';
import type { RegistryStore } from '../registry/store.ts';
import { secretTypes } from '../registry/kinds/secret.ts';
import { keepWatching, storeKey, type Controller, type ControllerFactory, type LegacyTokenSigner, type WatchEventKind } from './controller.ts';

/** Failed keys are tried again after this long, at most this many times (kube's maxRetries). */
const RETRY_MS = 1_000;
const MAX_RETRIES = 10;

const TOKEN_KEY = 'token';
const NAMESPACE_KEY = 'namespace';
const CA_KEY = 'ca.crt';

type SecretObject = KObject & { type?: string | null; data?: Record<string, string> | null };

/** What a queued piece of work names: a secret (with the account it named) or a deleted account. */
type WorkItem =
  | { kind: 'secret'; namespace: string; name: string; uid: string; account: string; accountUid: string }
  | { kind: 'account'; namespace: string; name: string; uid: string };

const keyOf = (w: WorkItem): string => `${w.kind}/${w.namespace}/${w.name}/${w.uid}`;
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** Thrown inside a compare-and-swap when what is stored is no longer what the decision was made on. */
class Changed extends Error {}

class ServiceAccountTokensController implements Controller {
  private readonly secrets: RegistryStore;
  private readonly accounts: RegistryStore;
  private readonly signer: LegacyTokenSigner;
  private readonly log: (message: string) => void;
  readonly name = 'serviceaccount-tokens-controller';
  stopped = false;
  private running = false;
  private readonly queue = new Map<string, WorkItem>();
  private readonly retries = new Map<string, number>();
  private readonly watches: { stop(): void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly tokenType: string;
  private readonly nameAnnotation: string;
  private readonly uidAnnotation: string;

  constructor(
    secrets: RegistryStore,
    accounts: RegistryStore,
    types: ReturnType<typeof secretTypes>,
    signer: LegacyTokenSigner,
    log: (message: string) => void,
  ) {
    this.secrets = secrets;
    this.accounts = accounts;
    this.signer = signer;
    this.log = log;
    this.tokenType = types.serviceAccountToken;
    this.nameAnnotation = types.serviceAccountNameAnnotation;
    this.uidAnnotation = types.serviceAccountUidAnnotation;
  }

  async start(): Promise<void> {
    await this.watch(this.secrets, (_type, view) => this.observeSecret(view()));
    await this.watch(this.accounts, (type, view) => {
      if (type !== 'DELETED') return;
      const o = view();
      if (o.metadata.namespace && o.metadata.name && o.metadata.uid) this.enqueue({ kind: 'account', namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid });
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
    const w = await keepWatching(store, undefined, observe, { onRestarted: () => this.resync() });
    if (this.stopped) w.stop();
    else this.watches.push(w);
  }

  private observeSecret(o: KObject): void {
    const s = o as SecretObject;
    if (s.type !== this.tokenType) return;
    const { namespace, name, uid } = s.metadata;
    const account = s.metadata.annotations?.[this.nameAnnotation];
    if (!namespace || !name || !uid || !account) return;
    this.enqueue({ kind: 'secret', namespace, name, uid, account, accountUid: s.metadata.annotations?.[this.uidAnnotation] ?? '' });
  }

  /** Every token secret, looked at now (what a deleted account left is found through its secrets). */
  private async resync(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.secrets.list(undefined, matchEverything());
      for (const s of list.items) this.observeSecret(s);
    } catch (e) {
      this.log(`${this.name}: listing secrets: ${e instanceof Error ? e.message : String(e)}`);
      this.later(RETRY_MS, () => void this.resync());
    }
  }

  private enqueue(w: WorkItem): void {
    this.queue.set(keyOf(w), w);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.size && !this.stopped) {
        const [key, item] = this.queue.entries().next().value as [string, WorkItem];
        this.queue.delete(key);
        try {
          await (item.kind === 'secret' ? this.syncSecret(item) : this.syncDeletedAccount(item));
          this.retries.delete(key);
        } catch (e) {
          const tries = (this.retries.get(key) ?? 0) + 1;
          this.log(`${this.name}: ${item.kind} ${item.namespace}/${item.name}: ${e instanceof Error ? e.message : String(e)}`);
          if (tries < MAX_RETRIES) {
            this.retries.set(key, tries);
            this.later(RETRY_MS, () => this.enqueue(item));
          } else this.retries.delete(key);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async read(store: RegistryStore, namespace: string, name: string): Promise<KObject | undefined> {
    try {
      return await store.get(namespace, name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  }

  /** The account of that name, if it is the one with `uid` (any, when no uid is given). */
  private async account(namespace: string, name: string, uid: string): Promise<KObject | undefined> {
    const sa = await this.read(this.accounts, namespace, name);
    return sa && (!uid || sa.metadata.uid === uid) ? sa : undefined;
  }

  /** syncSecret: a token secret is deleted without its account, filled in with it. */
  private async syncSecret(w: WorkItem & { kind: 'secret' }): Promise<void> {
    const secret = (await this.read(this.secrets, w.namespace, w.name)) as SecretObject | undefined;
    if (!secret || secret.metadata.uid !== w.uid) {
      await this.removeReference(w);
      return;
    }
    const sa = await this.account(w.namespace, w.account, w.accountUid);
    if (!sa) return this.deleteToken(w.namespace, w.name, w.uid);
    if (!this.needsUpdate(secret)) return;
    const token = this.needsToken(secret) ? await this.signer.issue({ namespace: w.namespace, name: w.account, uid: sa.metadata.uid ?? '', secretName: w.name }) : undefined;
    try {
      await this.secrets.guaranteedUpdate(
        w.namespace,
        w.name,
        (current) => {
          const s = current as SecretObject | undefined;
          // Replaced, or given to another account meanwhile: its own event brings it back.
          if (!s || s.metadata.uid !== w.uid || s.metadata.annotations?.[this.nameAnnotation] !== w.account) throw new Changed();
          const data = { ...s.data };
          const ca = this.signer.rootCa;
          if (ca && data[CA_KEY] !== b64(ca)) data[CA_KEY] = b64(ca);
          if (!data[NAMESPACE_KEY]) data[NAMESPACE_KEY] = b64(w.namespace);
          if (!data[TOKEN_KEY]) {
            if (token === undefined) throw new Changed();
            data[TOKEN_KEY] = b64(token);
          }
          s.data = data;
          s.metadata.annotations = { ...s.metadata.annotations, [this.nameAnnotation]: w.account, [this.uidAnnotation]: sa.metadata.uid ?? '' };
          return s;
        },
        { dryRun: false },
      );
    } catch (e) {
      if (e instanceof Changed || (isStatusError(e) && (e.code === 404 || e.code === 409))) return;
      throw e;
    }
  }

  private needsToken(s: SecretObject): boolean {
    return !s.data?.[TOKEN_KEY];
  }

  /** secretUpdateNeeded: the CA differs, or the namespace or the token is missing. */
  private needsUpdate(s: SecretObject): boolean {
    const ca = this.signer.rootCa;
    return (!!ca && s.data?.[CA_KEY] !== b64(ca)) || !s.data?.[NAMESPACE_KEY] || this.needsToken(s);
  }

  /** A deleted secret leaves the account's list of secrets (when the account lists it). */
  private async removeReference(w: WorkItem & { kind: 'secret' }): Promise<void> {
    const sa = await this.account(w.namespace, w.account, w.accountUid);
    const refs = (sa as (KObject & { secrets?: { name?: string }[] }) | undefined)?.secrets;
    if (!sa || !Array.isArray(refs) || !refs.some((r) => r?.name === w.name)) return;
    try {
      await this.accounts.guaranteedUpdate(
        w.namespace,
        w.account,
        (current) => {
          const c = current as (KObject & { secrets?: { name?: string }[] }) | undefined;
          if (!c || c.metadata.uid !== sa.metadata.uid) throw new Changed();
          if (Array.isArray(c.secrets)) c.secrets = c.secrets.filter((r) => r?.name !== w.name);
          return c;
        },
        { dryRun: false },
      );
    } catch (e) {
      if (e instanceof Changed || (isStatusError(e) && e.code === 404)) return;
      throw e;
    }
  }

  /** deleteTokens: the token secrets of an account that is gone (its uid, or none, in their annotation). */
  private async syncDeletedAccount(w: WorkItem & { kind: 'account' }): Promise<void> {
    if (await this.account(w.namespace, w.name, w.uid)) return;
    const list = await this.secrets.list(w.namespace, matchEverything());
    for (const s of list.items as SecretObject[]) {
      const a = s.metadata.annotations;
      if (s.type !== this.tokenType || a?.[this.nameAnnotation] !== w.name) continue;
      const uid = a?.[this.uidAnnotation];
      if (uid && uid !== w.uid) continue;
      await this.deleteToken(w.namespace, s.metadata.name ?? '', s.metadata.uid ?? '');
    }
  }

  /** Deletes the secret with this uid; already gone (404) or replaced (409) is done. */
  private async deleteToken(namespace: string, name: string, uid: string): Promise<void> {
    try {
      await this.secrets.delete(namespace, name, { dryRun: false, ...(uid && { preconditions: { uid } }) });
    } catch (e) {
      if (isStatusError(e) && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}

export const serviceAccountTokensController: ControllerFactory = (ctx) => {
  const secrets = ctx.stores.get(storeKey('', 'secrets'));
  const accounts = ctx.stores.get(storeKey('', 'serviceaccounts'));
  if (!secrets || !accounts || !ctx.legacyTokens) return undefined;
  return new ServiceAccountTokensController(secrets, accounts, secretTypes(ctx.naming), ctx.legacyTokens, ctx.log);
};
