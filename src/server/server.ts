// The API server assembled from its parts, in start-up order: the served kinds, storage, one
// store per kind, the request handler (the API, then the non-API routes) inside the filter chain,
// the listener, the controllers. Shutdown takes them down in the order a graceful stop needs.
// `startServer` is the embeddable entry point for tests and the command line alike.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Authenticator } from '../auth/authn/authenticator.ts';
import type { Authorizer } from '../auth/authz/authorizer.ts';
import { RbacIndex, rbacAuthorizer, type RbacStores } from '../auth/authz/rbac.ts';
import { rbacWriteGuard } from '../auth/authz/rbac-escalation.ts';
import { accessReviewer, modeRules } from '../auth/authz/rules-review.ts';
import { nodeAuthorizer } from '../auth/authz/node.ts';
import { nodeRestriction } from '../auth/authz/node-restriction.ts';
import { namingProfile, type Naming } from '../naming.ts';
import { parseFeatureGates, type FeatureGates } from '../machinery/feature-gates.ts';
import { DeclarativeValidation } from '../registry/declarative-validation.ts';
import { ApiRouter } from '../endpoints/router.ts';
import { WritePool } from '../endpoints/write-pool.ts';
import { storeKey, startControllers, stopControllers, type Controller, type ControllerContext } from '../controllers/controller.ts';
import { buildControllers } from '../controllers/index.ts';
import { ensureSystemNamespaces } from '../controllers/system-namespaces.ts';
import { clusterInfoKubeconfig, ensureClusterInfo } from '../controllers/bootstrap-tokens.ts';
import { ensureRbacDefaults } from '../controllers/rbac-bootstrap.ts';
import { buildHandlerChain, type AuditSink, type ChainOptions } from './filters.ts';
import { createServerMetrics } from './metrics.ts';
import { createRequestMetrics } from './request-metrics.ts';
import { instrumentStorage } from '../storage/instrumented.ts';
import type { Storage } from '../storage/interface.ts';
import type { RegistryStore } from '../registry/store.ts';
import { listen, type Listener } from './listener.ts';
import { openStorage, storageComponentName, type OpenedStorage } from './open-storage.ts';
import type { RunningServer, ServerOptions } from './options.ts';
import { healthEndpoints, nonApiRoutes, routeRequests, type ServerPhase } from './routes.ts';
import { authorizationModes, buildAudit, buildAuthenticator, buildAuthorizer, configurationUsesExpressions, loadSecurityModules, serviceAccountConfig, storeLookups } from './security.ts';
import { loadCel } from '../cel/load.ts';
import { serviceAccountTokens } from '../auth/authn/service-account.ts';
import { legacyTokenConfig, legacyTokenIssuer, legacyTokenNames, storeLegacyTokenLookup } from '../auth/authn/legacy-service-account.ts';
import { adminKubeconfig } from './certificates.ts';
import { prepareSecureServing, type SecureServing } from './tls.ts';
import { clientCas } from './client-cas.ts';
import { servedKinds } from './served-kinds.ts';
import { LiveKinds } from './live-kinds.ts';
import { buildStores, type ServedStores } from './stores.ts';
import { openWatches, type OpenWatches } from './watches.ts';

export type { RunningServer, ServerOptions } from './options.ts';

/**
 * Starts an API server in this process and resolves once it is ready (its `/readyz` passes).
 *
 * @example
 * const server = await startServer();   // HTTPS on a free loopback port, throw-away storage
 * // server.url, server.kubeconfig (the administrator's), server.ca
 * await server.close();
 */
export async function startServer(opts: ServerOptions = {}): Promise<RunningServer> {
  // A start that fails half-way (a bad flag found by a controller, a port in use) releases
  // whatever it had opened, so an embedding process is left as it was.
  const cleanups: (() => unknown)[] = [];
  try {
    return await start(opts, cleanups);
  } catch (e) {
    for (const undo of cleanups.reverse()) {
      try {
        await undo();
      } catch {
        /* the original failure is what matters */
      }
    }
    throw e;
  }
}

async function start(opts: ServerOptions, cleanups: (() => unknown)[]): Promise<RunningServer> {
  const naming = namingProfile(opts.naming ?? 'orch');
  const log = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const featureGates = parseFeatureGates(opts.featureGates, log);
  // Certificates and authenticators first: a bad TLS or authentication flag stops the start
  // before anything is opened.
  if (opts.insecureServing) checkInsecureServing(opts);
  // Their expressions are compiled as they are read: the expression language first, when they have any.
  if (configurationUsesExpressions(opts)) await loadCel();
  // And the modules of the authentication and authorization configurations that need their own.
  await loadSecurityModules(opts);
  const authorization = authorizationModes(opts);
  const rbacGuard = rbacWriteGuard(naming.group('rbac.authorization'));
  const accessReviews = accessReviewer();
  const secure = opts.insecureServing ? undefined : await prepareSecureServing(opts.secureServing ?? {}, opts.dataDir, opts.bindAddress, opts.authentication?.clientCaFile);
  const metrics = createServerMetrics(featureGates);
  // Audit's policy and log are checked before anything is opened: a bad file is a start-up error.
  const auditClosers: (() => unknown)[] = [];
  const audit = await buildAudit(opts, naming, log, (close) => auditClosers.push(close));
  cleanups.push(() => Promise.all(auditClosers.map((c) => c())));
  // What authentication runs in the background (issuer discovery, the configuration file's watch).
  const authenticationClosers: (() => void)[] = [];
  cleanups.push(() => authenticationClosers.forEach((c) => c()));
  const lookups = storeLookups();
  const serviceAccounts = serviceAccountConfig(opts, secure?.serviceAccountKey, naming, lookups.getter);
  // The client CA files (the client certificates' and the authenticating proxy's), followed as they change.
  const cas = secure && clientCas(opts, secure.clientCa, log);
  if (cas) authenticationClosers.push(() => cas.close());
  // Secret-based tokens: the tokens controller signs them, the authenticator looks their Secrets up.
  const legacyLookups = storeLegacyTokenLookup();
  const legacyServiceAccounts = serviceAccounts && legacyTokenConfig(serviceAccounts, naming, legacyLookups.lookup, log);
  const authenticator = buildAuthenticator(opts, { naming, clientCa: secure?.clientCa, clientCas: cas, serviceAccounts, legacyServiceAccounts, log, metrics: metrics.authentication, onClose: (close) => authenticationClosers.push(close), objects: lookups.object });

  let storage: OpenedStorage | undefined;
  const tokens = serviceAccounts && { ...serviceAccountTokens(serviceAccounts), bound: lookups.getter.bound };
  const apiAudiences = serviceAccounts?.apiAudiences ?? opts.authentication?.apiAudiences;
  const defs = servedKinds({ naming, featureGates, runtimeConfig: opts.runtimeConfig, storageComponent: storageComponentName(opts), storage: () => storage?.backend, extraKinds: opts.extraKinds, tokens, reviewToken: authenticator.reviewToken, apiAudiences, rbacGuard, accessReviews });

  // Encryption at rest wraps storage for the resources the configuration names; it is read before
  // storage is opened, so a bad file is a start-up error that opens nothing.
  // (Its reader, like the CRD files', is loaded only when the flag is given.)
  const encryptionConfig = opts.encryptionProviderConfig === undefined ? undefined : await import('./encryption-config.ts');
  const encryption = encryptionConfig && opts.encryptionProviderConfig !== undefined ? encryptionConfig.encryptionByPrefix(encryptionConfig.readEncryptionConfig(opts.encryptionProviderConfig, ['apiserver.config.k8s.io', naming.group('apiserver.config')]), defs) : undefined;
  // Its ciphers are loaded only when a configuration names resources to encrypt.
  const encrypting = encryption?.size ? (await import('../storage/encryption.ts')).encryptingStorage : undefined;
  const encrypted = (s: Storage) => (encrypting && encryption ? encrypting(s, encryption) : s);
  // CRD files are read before storage is opened: a bad one is a start-up error that opens nothing.
  const crdReader = opts.crds?.length ? await import('./crd-files.ts') : undefined;
  const crdFiles = crdReader && opts.crds ? crdReader.readCrdFiles(opts.crds, naming.group('apiextensions')) : [];
  const opened = (storage = await openStorage(opts));
  cleanups.push(() => opened.close());

  const declarative = new DeclarativeValidation(featureGates, metrics.validation, log);
  // With the Node mode, NodeRestriction keeps each node to its own objects.
  const nodeMode = !opts.authorizer && authorization.includes('Node');
  const admission = nodeMode ? [nodeRestriction(naming)] : [];
  const served = await buildStores(defs, encrypted(instrumentStorage(opened.backend, metrics.storage)), { naming, featureGates, declarative, watchCacheRetentionMs: opts.watchCacheRetentionMs, watchCacheMaxEventBytes: opts.watchCacheMaxEventBytes, admission });
  cleanups.push(() => served.close());
  lookups.bind(served.stores);
  legacyLookups.bind(served.stores);

  // Large writes are prepared by worker threads, so one cannot hold the event loop. The workers
  // build the built-in kinds themselves; kinds added by the embedder are prepared inline.
  const writes = new WritePool({ naming: naming.profile, featureGates, defs: defs.filter((d) => !opts.extraKinds?.includes(d)), declarative });
  cleanups.push(() => writes.close());
  for (const store of served.stores) store.offload = writes;

  // RBAC answers from an index of the four kinds, filled before the first request is served.
  const rbacIndex = !opts.authorizer && authorization.includes('RBAC') ? new RbacIndex(rbacStores(served, naming), naming.group('rbac.authorization'), log) : undefined;
  if (rbacIndex) {
    cleanups.push(() => rbacIndex.stop());
    await rbacIndex.start();
  }
  const authorizer = buildAuthorizer(opts, rbacIndex && rbacAuthorizer(rbacIndex), { naming, log, onClose: (close) => authenticationClosers.push(close), configReload: metrics.authorizationConfigReload, webhookMetrics: metrics.authorizationWebhooks, decided: metrics.authorizationDecision }, nodeMode ? nodeAuthorizer(naming) : undefined);
  rbacGuard.bind({ authorizer, index: rbacIndex });
  accessReviews.bind({ authorizer, rules: modeRules(authorization, { rbac: rbacIndex, embedder: opts.authorizer }) });

  const watches = openWatches(opts.minRequestTimeoutSeconds, opts.watchEndFlushMs, opts.watchBookmarkIntervalMs);
  const router = new ApiRouter(served.served, naming, {
    naming,
    featureGates,
    watches,
    watchEvents: metrics.watchEvents,
    deprecatedRequest: metrics.deprecatedRequest,
    authorize: async (user, info) => {
      const d = await authorizer.authorize({ user, info });
      return { allowed: d.decision === 'allow', reason: d.reason ?? '' };
    },
  });
  metrics.reportStores(() =>
    served.stores.map((s) => ({ group: s.def.group, version: s.def.version, kind: s.def.kind, resource: s.def.resource, shared: s.def.storedAs !== undefined, stats: s.stats })),
  );
  const phase: ServerPhase = { started: false, shuttingDown: false };
  // Kinds registered while the server runs (custom resources) reach every consumer through this.
  // A changed CRD's old stores are torn down once their short requests are done, waiting at most
  // twice the request timeout (kube-apiserver's crdHandler).
  const kinds = new LiveKinds(defs, { drainTimeoutMs: 2 * (opts.requestTimeoutMs ?? 60_000) });
  const nonApi = nonApiRoutes({ health: healthEndpoints(opened.check, phase), metrics, defs: kinds.current, naming });
  const requestMetrics = createRequestMetrics(metrics.registry, (group, version, resource) => kinds.serves(group, version, resource));
  const handler = buildHandlerChain(routeRequests(router, nonApi), { ...chainOptions(opts, authenticator, authorizer, audit, naming, featureGates, log), metrics: requestMetrics });

  const listener = await listen({ bindAddress: opts.bindAddress, port: opts.port, tls: secure && cas && { ...secure.listener, clientCA: cas.handshakePem() } }, handler);
  cleanups.push(() => listener.destroy());
  cas?.onChange(() => listener.setClientCA(cas.handshakePem()));
  const admin = secure ? writeAdminKubeconfig(opts.dataDir, listener.url, secure, cleanups) : undefined;

  const legacyTokens = serviceAccounts && { issue: legacyTokenIssuer(legacyTokenNames(naming), serviceAccounts.signing), ...(secure && { rootCa: secure.ca }) };
  const context = { ...controllerContext(opts, served, naming, featureGates, log), kinds, conversionMetrics: metrics.conversionWebhooks, ...(legacyTokens && { legacyTokens }) };
  kinds.bind(served, router, context.stores);
  const controllers = buildControllers(context);
  cleanups.push(() => stopControllers(controllers));
  // System namespaces are made by every server, whichever one runs the controllers.
  const namespaces = context.stores.get(storeKey('', 'namespaces'));
  if (namespaces) await ensureSystemNamespaces(namespaces, naming);
  // With bootstrap tokens, a joining client finds the server and its CA in cluster-info.
  const configMaps = context.stores.get(storeKey('', 'configmaps'));
  if (context.bootstrapTokens && configMaps) await ensureClusterInfo(configMaps, naming, clusterInfoKubeconfig(listener.url, secure?.ca));
  await ensureRbacDefaults(context.stores, naming, log);
  phase.rbacBootstrapped = true;
  await startControllers(controllers);
  // The start returns (and the command says it serves) once every CRD of the files is served.
  const crdStore = context.stores.get(storeKey(naming.group('apiextensions'), 'customresourcedefinitions'));
  if (crdReader && crdFiles.length && crdStore) await crdReader.installCrds(crdStore, crdFiles);
  phase.started = true;

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= shutdown({ opts, phase, controllers, rbacIndex, listener, watches, writes, served, storage: opened, stopAuthentication: authenticationClosers, closeAudit: auditClosers }));
  const closeAll = async () => {
    await close();
    admin?.remove();
  };
  return { url: listener.url, listening: listener.listening, port: listener.port, naming, featureGates, ...(admin && { kubeconfig: admin.text, kubeconfigPath: admin.path, ca: secure?.ca }), close: closeAll };
}

/** The stores of the four RBAC kinds. */
function rbacStores(served: ServedStores, naming: Naming): RbacStores {
  const group = naming.group('rbac.authorization');
  const store = (resource: string) => {
    const s = served.stores.find((x) => x.def.group === group && x.def.resource === resource);
    if (!s) throw new Error(`--authorization-mode=RBAC needs ${resource}.${group}, which --runtime-config turns off`);
    return s;
  };
  return { roles: store('roles'), clusterRoles: store('clusterroles'), roleBindings: store('rolebindings'), clusterRoleBindings: store('clusterrolebindings') };
}

/**
 * Plain HTTP, asked for explicitly: only on loopback unless the embedder insists, since whoever
 * reaches the port is an administrator when no authenticator is configured.
 */
function checkInsecureServing(opts: ServerOptions): void {
  if (opts.secureServing) throw new Error('--insecure-port serves plain HTTP: it cannot be combined with the TLS flags (--tls-cert-file, --cert-dir, ...)');
  const address = opts.bindAddress ?? '127.0.0.1';
  if (!opts.insecureServing?.allowRemote && !isLoopback(address))
    throw new Error(`--insecure-port serves plain HTTP${opts.authentication ? '' : ' and every request is an administrator'}: it listens on a loopback address only (asked: ${address}); use --insecure-bind-address=${address} to insist`);
}

const isLoopback = (address: string): boolean => address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);

/**
 * The administrator's kubeconfig, written (mode 0600) as `admin.kubeconfig` in the data directory,
 * or in a throw-away directory removed on close when there is none.
 */
function writeAdminKubeconfig(dataDir: string | undefined, url: string, secure: SecureServing, cleanups: (() => unknown)[]): { text: string; path: string; remove(): void } {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'orch-apiserver-admin-'));
  mkdirSync(dir, { recursive: true });
  const remove = () => {
    if (dataDir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  cleanups.push(remove);
  const text = adminKubeconfig(url, secure.ca, secure.admin);
  const path = resolve(dir, 'admin.kubeconfig');
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { text, path, remove };
}

function chainOptions(opts: ServerOptions, authenticator: Authenticator, authorizer: Authorizer, audit: AuditSink, naming: Naming, featureGates: FeatureGates, log: (message: string) => void): ChainOptions {
  return {
    authenticator,
    authorizer,
    audit,
    authenticationGroup: naming.group('authentication'),
    authorizationGroup: naming.group('authorization'),
    maxRequestsInflight: opts.maxRequestsInflight ?? 400,
    maxMutatingRequestsInflight: opts.maxMutatingRequestsInflight ?? 200,
    requestTimeoutMs: opts.requestTimeoutMs ?? 60_000,
    responseCompression: featureGates.APIResponseCompression ?? true,
    cbor: featureGates.CBORServingAndStorage ?? false,
    protobufMediaTypes: naming.wire.protobufMediaTypes,
    onInternalError: (e, ctx) => log(`internal error on ${ctx.req.method} ${ctx.url.pathname}: ${e instanceof Error ? e.stack : String(e)}`),
  };
}

function controllerContext(opts: ServerOptions, served: ServedStores, naming: Naming, featureGates: FeatureGates, log: (message: string) => void): ControllerContext & { stores: Map<string, RegistryStore> } {
  return {
    // A resource served at several versions: controllers use its storage version's store (the first).
    stores: new Map([...served.stores].reverse().map((s) => [storeKey(s.def.group, s.def.resource), s])),
    naming,
    featureGates,
    serviceClusterIpRange: opts.serviceClusterIpRange,
    eventTtlMs: opts.eventTtlMs,
    namespaceSyncIntervalMs: opts.namespaceSyncIntervalMs,
    bootstrapTokens: opts.authentication?.enableBootstrapTokenAuth === true,
    log,
  };
}

interface RunningParts {
  opts: ServerOptions;
  phase: ServerPhase;
  controllers: readonly Controller[];
  rbacIndex?: RbacIndex;
  listener: Listener;
  watches: OpenWatches;
  writes: WritePool;
  served: ServedStores;
  storage: OpenedStorage;
  stopAuthentication: readonly (() => void)[];
  /** The audit backends: closed once the last request has been answered (the webhook sends what it buffered). */
  closeAudit: readonly (() => unknown)[];
}

/** Graceful stop: /readyz fails first, then open watches end and in-flight requests finish. */
async function shutdown(p: RunningParts): Promise<void> {
  p.phase.shuttingDown = true;
  if (p.opts.shutdownDelayMs) await new Promise((r) => setTimeout(r, p.opts.shutdownDelayMs));
  stopControllers(p.controllers);
  p.rbacIndex?.stop();
  for (const stop of p.stopAuthentication) stop();
  // In-flight requests finish within their own timeout, as kube-apiserver waits for them;
  // connections still open after that are cut.
  await p.listener.drain((p.opts.requestTimeoutMs ?? 60_000) + 5_000, () => p.watches.endAll());
  await Promise.all(p.closeAudit.map((c) => c()));
  await p.writes.close();
  await p.served.close();
  await p.storage.close();
}
