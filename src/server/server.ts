// The API server: storage, one watch cache and registry store per kind, the filter chain, health,
// /version, and graceful shutdown. `startServer` is the embeddable entry point for tests and the
// command line alike.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { namingProfile, type Naming, type NamingProfileName } from '../naming.ts';
import type { Storage } from '../storage/interface.ts';
import { openLmdbStorage } from '../storage/lmdb/lmdb-storage.ts';
import { openEtcdStorage } from '../storage/etcd/etcd-storage.ts';
import { openWatchCache, type WatchCache } from '../storage/cache/watch-cache.ts';
import { alwaysAdmin, type Authenticator } from '../auth/authn/authenticator.ts';
import { alwaysAllow, type Authorizer } from '../auth/authz/authorizer.ts';
import { errors, StatusError } from '../machinery/status.ts';
import { RegistryStore, type ReadableStore } from '../registry/store.ts';
import { ComputedStore } from '../registry/computed-store.ts';
import { namespaceLifecycle } from '../registry/admission.ts';
import { apiVersionOf, storagePrefix, type KindDefinition } from '../registry/definition.ts';
import { builtinKinds } from '../registry/kinds/index.ts';
import { ApiRouter } from '../endpoints/router.ts';
import { writeRawJson } from '../endpoints/respond.ts';
import { OpenApi } from '../endpoints/openapi.ts';
import { groupVersions } from '../endpoints/discovery.ts';
import { NamespaceController } from '../controllers/namespace.ts';
import { GarbageCollector } from '../controllers/garbage-collector.ts';
import { ensureSystemNamespaces } from '../controllers/system-namespaces.ts';
import { builtinControllers } from '../controllers/index.ts';
import { storeKey, type Controller } from '../controllers/controller.ts';
import { buildHandlerChain, noAudit, type AuditSink } from './filters.ts';
import { runHealth, type HealthCheck } from './health.ts';
import { parseFeatureGates, type FeatureGates } from '../machinery/feature-gates.ts';
import { versionInfo } from './version.ts';
import { createServerMetrics } from './metrics.ts';
import { DeclarativeValidation } from '../registry/declarative-validation.ts';
import type { RequestContext } from '../request/context.ts';

export interface ServerOptions {
  /** Default 127.0.0.1, as on the command line: with no authentication, loopback only unless asked. */
  bindAddress?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Where the embedded store keeps its data; absent: a throw-away directory removed on close. */
  dataDir?: string;
  storageBackend?: 'lmdb' | 'etcd3';
  etcdServers?: string[];
  featureGates?: string | Record<string, boolean>;
  /** `--runtime-config` pairs: `coordination.orch.io/v1=false`. */
  runtimeConfig?: string;
  watchCacheRetentionMs?: number;
  /** How long the embedded store keeps history (resume, Exact reads, continue tokens); default 5 min. */
  storageRetentionMs?: number;
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  requestTimeoutMs?: number;
  /** While shutting down, /readyz fails for this long before the listener closes. */
  shutdownDelayMs?: number;
  /** Watches without timeoutSeconds end after a random time in [min, 2·min) (default 1800 s). */
  minRequestTimeoutSeconds?: number;
  naming?: NamingProfileName;
  authenticator?: Authenticator;
  authorizer?: Authorizer;
  audit?: AuditSink;
  /** How often the namespace controller looks for terminating namespaces. */
  namespaceSyncIntervalMs?: number;
  /**
   * `--service-cluster-ip-range`: one CIDR or an IPv4,IPv6 pair; the default ServiceCIDR
   * (`kubernetes`) is created from it at start (default 10.0.0.0/24).
   */
  serviceClusterIpRange?: string;
  /** `--event-ttl`: how long an event lives after its last write (default 1 h). */
  eventTtlMs?: number;
  /** Where internal errors are reported (default: stderr). */
  log?: (message: string) => void;
}

export interface RunningServer {
  /** Where clients reach it (loopback when it listens on every interface). */
  url: string;
  /** Where it listens: the bound address and port (`http://0.0.0.0:8080`). */
  listening: string;
  port: number;
  naming: Naming;
  featureGates: FeatureGates;
  /** Graceful stop: readyz fails, watches end, in-flight requests finish, storage closes. */
  close(): Promise<void>;
}

/** Parse `--runtime-config` into enabled/disabled group versions. */
function runtimeConfig(text: string | undefined, defs: readonly KindDefinition[]): (d: KindDefinition) => boolean {
  const known = new Set(defs.map(apiVersionOf));
  const settings = new Map<string, boolean>();
  for (const pair of (text ?? '').split(',').filter(Boolean)) {
    const [key, value = 'true'] = pair.split('=');
    const k = key!.trim().replace(/^api\//, '');
    if (value !== 'true' && value !== 'false') throw new Error(`invalid value in --runtime-config ${pair}: must be true or false`);
    if (k !== 'api/all' && k !== 'all' && !known.has(k) && !known.has(k.split('/').slice(0, 2).join('/')))
      throw new Error(`unknown api groups ${k} in --runtime-config`);
    settings.set(k, value === 'true');
  }
  return (d) => settings.get(`${apiVersionOf(d)}/${d.resource}`) ?? settings.get(apiVersionOf(d)) ?? settings.get('all') ?? d.enabledByDefault ?? true;
}

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
  const featureGates = parseFeatureGates(opts.featureGates);
  const log = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  let backend: Storage | undefined;
  const storageComponent = (opts.storageBackend ?? 'lmdb') === 'etcd3' ? 'etcd-0' : 'lmdb-0';
  const allDefs = builtinKinds(naming, featureGates, {
    async componentHealth() {
      const h = backend ? await backend.health() : { healthy: false, message: 'storage is not open' };
      return [{ name: storageComponent, ...h }];
    },
  });
  const enabled = runtimeConfig(opts.runtimeConfig, allDefs);
  const defs = allDefs.filter(enabled);

  let throwaway: string | undefined;
  if ((opts.storageBackend ?? 'lmdb') === 'etcd3') {
    if (!opts.etcdServers?.length) throw new Error('--etcd-servers must be specified with --storage-backend=etcd3');
    backend = await openEtcdStorage({ endpoints: opts.etcdServers });
  } else {
    const path = opts.dataDir ?? (throwaway = mkdtempSync(join(tmpdir(), 'orch-apiserver-')));
    cleanups.push(() => throwaway && rmSync(throwaway, { recursive: true, force: true }));
    backend = await openLmdbStorage({ path, retentionMs: opts.storageRetentionMs });
  }
  const opened = backend;
  cleanups.push(() => opened.close());

  const metrics = createServerMetrics();
  const declarative = new DeclarativeValidation(featureGates, metrics.validation, log);

  // Every store reads through a watch cache of its own prefix; namespaces are admitted by lookup.
  const stores: RegistryStore[] = [];
  /** Every kind's store, stored or computed, in definition order (the order of discovery). */
  const served: ReadableStore[] = [];
  const caches: WatchCache[] = [];
  let namespaceStore: RegistryStore | undefined;
  const admission = namespaceLifecycle(naming, async (name) => {
    if (!namespaceStore) return undefined;
    // From the cache first, as kube-apiserver's admission uses its informer; a namespace the
    // cache has not seen yet (just created) is looked up with a consistent read.
    const cached = namespaceStore.cachedView(undefined, name);
    if (cached) return cached;
    try {
      return (await namespaceStore.getEncoded(undefined, name)).view();
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  });
  // Kinds kept in another kind's storage (core Event) share that prefix's cache.
  const cacheByPrefix = new Map<string, WatchCache>();
  for (const def of defs) {
    // Computed kinds store nothing: no cache, nothing to watch or collect.
    if (def.computed) {
      served.push(new ComputedStore(def, def.computed));
      continue;
    }
    const prefix = storagePrefix(def);
    let cache = cacheByPrefix.get(prefix);
    if (!cache) {
      const opened = await openWatchCache(backend, {
        prefix,
        retentionMs: opts.watchCacheRetentionMs,
        // With the gate off, consistent reads always go to storage.
        ...(featureGates.ConsistentListFromCache ? {} : { consistentReadsFromCache: false }),
      });
      cache = opened;
      cacheByPrefix.set(prefix, opened);
      caches.push(opened);
      cleanups.push(() => opened.close());
    }
    const store = new RegistryStore(def, cache, naming, admission, declarative);
    for (const sibling of stores.filter((st) => st.prefix === store.prefix)) {
      sibling.sharesStorageWith(store);
      store.sharesStorageWith(sibling);
    }
    stores.push(store);
    served.push(store);
    if (def.group === '' && def.resource === 'namespaces') namespaceStore = store;
  }

  const watchEnders = new Set<() => void>();
  const minTimeout = (opts.minRequestTimeoutSeconds ?? 1800) * 1000;
  const router = new ApiRouter(served, naming, {
    naming,
    featureGates,
    watches: {
      add(end) {
        watchEnders.add(end);
        return () => watchEnders.delete(end);
      },
      defaultTimeoutMs: () => minTimeout * (1 + Math.random()),
    },
  });

  const openapi = new OpenApi(naming, groupVersions(defs, naming), versionInfo().gitVersion);
  const writeRaw = (ctx: RequestContext, body: string, type: string, headers: Record<string, string> = {}) => {
    if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
    ctx.res.writeHead(200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private', ...headers });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
  };

  let shuttingDown = false;
  let started = false;
  const storageCheck: HealthCheck = {
    name: opts.storageBackend === 'etcd3' ? 'etcd' : 'storage',
    async check() {
      const h = await backend.health();
      if (!h.healthy) throw new Error(h.message);
    },
  };
  const livez: HealthCheck[] = [{ name: 'ping', check() {} }, { name: 'log', check() {} }, storageCheck];
  const readyz: HealthCheck[] = [
    ...livez,
    { name: 'poststarthook/start-system-namespaces-controller', check: () => void (started || fail('not started')) },
    { name: 'shutdown', check: () => void (shuttingDown && fail('process is shutting down')) },
  ];
  const healthz: HealthCheck[] = livez;

  const handler = async (ctx: RequestContext): Promise<void> => {
    if (ctx.info.unroutable) throw errors.noRoute();
    if (await router.handle(ctx)) return;
    const path = ctx.url.pathname.replace(/\/+$/, '') || '/';
    const health = /^\/(livez|readyz|healthz)(?:\/(.+))?$/.exec(path);
    if (health) {
      // Probes read; no other method is served here (TRACE and OPTIONS included).
      if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
      const checks = health[1] === 'livez' ? livez : health[1] === 'readyz' ? readyz : healthz;
      const r = await runHealth(health[1]!, checks, ctx.url.searchParams, health[2]);
      if (!r) throw errors.noRoute();
      ctx.res.writeHead(r.code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
      ctx.res.end(r.body);
      return;
    }
    if ((path === '/version' || path === '/') && ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
    if (path === '/version') return writeRawJson(ctx, 200, versionInfo());
    if (path === '/metrics') {
      const { body, contentType } = await metrics.render();
      return writeRaw(ctx, body, contentType);
    }
    if (path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/')) {
      if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
      const r = openapi.serve(path, ctx.req.headers.accept, ctx.req.headers['if-none-match'], ctx.url.searchParams.get('hash'));
      if (!r) throw errors.noRoute();
      ctx.res.writeHead(r.status, r.body === undefined ? r.headers : { ...r.headers, 'Content-Length': Buffer.byteLength(r.body) });
      ctx.res.end(ctx.req.method === 'HEAD' ? undefined : r.body);
      return;
    }
    if (path === '/') {
      const paths = ['/api', '/api/v1', '/apis', ...new Set(served.filter((s) => s.def.group).flatMap((s) => [`/apis/${s.def.group}`, `/apis/${apiVersionOf(s.def)}`])), '/healthz', '/livez', '/metrics', '/openapi/v2', '/openapi/v3', '/readyz', '/version'];
      return writeRawJson(ctx, 200, { paths: paths.sort() });
    }
    throw errors.noRoute();
  };

  const chain = buildHandlerChain(handler, {
    authenticator: opts.authenticator ?? alwaysAdmin,
    authorizer: opts.authorizer ?? alwaysAllow,
    audit: opts.audit ?? noAudit,
    maxRequestsInflight: opts.maxRequestsInflight ?? 400,
    maxMutatingRequestsInflight: opts.maxMutatingRequestsInflight ?? 200,
    requestTimeoutMs: opts.requestTimeoutMs ?? 60_000,
    responseCompression: featureGates.APIResponseCompression ?? true,
    cbor: featureGates.CBORServingAndStorage ?? false,
    protobufMediaTypes: naming.wire.protobufMediaTypes,
    onInternalError: (e, ctx) => log(`internal error on ${ctx.req.method} ${ctx.url.pathname}: ${e instanceof Error ? e.stack : String(e)}`),
  });

  // kube-apiserver accepts headers up to 1 MiB (long selectors travel in the URL).
  const server: Server = createServer({ keepAlive: true, maxHeaderSize: 1 << 20 }, chain);
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  // Requests per connection whose responses have not been flushed yet, so shutdown closes each
  // connection only once its last response has gone out.
  const inFlight = new Map<Socket, number>();
  let draining = false;
  // Everything written has been flushed by then, so a peer that never closes its side cannot
  // hold the shutdown.
  const endIfIdle = (s: Socket) => {
    if (!inFlight.has(s)) s.end(() => s.destroy());
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    inFlight.set(s, (inFlight.get(s) ?? 0) + 1);
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      const n = (inFlight.get(s) ?? 1) - 1;
      if (n > 0) inFlight.set(s, n);
      else inFlight.delete(s);
      if (draining) endIfIdle(s);
    });
  });
  // Requests Node cannot parse never reach the chain: answer them with a Status all the same.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') endWithStatus(socket, 431, 'Request Header Fields Too Large', 'BadRequest', 'request header fields too large');
    else endWithStatus(socket, 400, 'Bad Request', 'BadRequest', `malformed HTTP request: ${err.code ?? err.message}`);
  });
  // CONNECT is handed over as a bare socket and would be dropped: nothing here tunnels, so 405.
  server.on('connect', (_req, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    endWithStatus(socket, 405, 'Method Not Allowed', 'MethodNotAllowed', errors.methodNotAllowed().message);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.bindAddress ?? '127.0.0.1', () => {
      cleanups.push(() => {
        for (const s of sockets) s.destroy();
        return new Promise<void>((r) => server.close(() => r()));
      });
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;

  const nsController = namespaceStore
    ? new NamespaceController(namespaceStore, stores.filter((s) => s.def.namespaced), naming, opts.namespaceSyncIntervalMs ?? 1000)
    : undefined;
  if (namespaceStore) await ensureSystemNamespaces(namespaceStore, naming);
  nsController?.start();
  cleanups.push(() => nsController?.stop());
  const gc = new GarbageCollector(stores);
  cleanups.push(() => gc.stop());
  await gc.start();
  const controllerContext = {
    stores: new Map(stores.map((s) => [storeKey(s.def.group, s.def.resource), s])),
    naming,
    featureGates,
    serviceClusterIpRange: opts.serviceClusterIpRange,
    eventTtlMs: opts.eventTtlMs,
    log,
  };
  const controllers: Controller[] = [];
  for (const make of builtinControllers) {
    const c = make(controllerContext);
    if (!c) continue;
    cleanups.push(() => c.stop());
    await c.start();
    controllers.push(c);
  }
  started = true;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      shuttingDown = true;
      if (opts.shutdownDelayMs) await new Promise((r) => setTimeout(r, opts.shutdownDelayMs));
      nsController?.stop();
      gc.stop();
      for (const c of controllers) c.stop();
      draining = true;
      // net.Server's close, not http.Server's: the latter destroys every connection whose response
      // is written but not yet flushed (a large list to a slow reader), cutting it short. Here the
      // listener stops, idle connections end, and busy ones end once their response is out.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      for (const end of [...watchEnders]) end();
      for (const s of sockets) endIfIdle(s);
      // In-flight requests finish within their own timeout, as kube-apiserver waits for them;
      // connections still open after that are cut.
      const grace = setTimeout(() => {
        for (const s of sockets) s.destroy();
      }, (opts.requestTimeoutMs ?? 60_000) + 5_000);
      grace.unref();
      await closed;
      clearTimeout(grace);
      for (const c of caches) await c.close();
      await backend.close();
      if (throwaway) rmSync(throwaway, { recursive: true, force: true });
    })());

  const bound = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, listening: `http://${bound}:${address.port}`, port: address.port, naming, featureGates, close };
}

/** A Status written straight to a socket the chain never sees, and the connection closed. */
function endWithStatus(socket: Duplex, code: number, phrase: string, reason: string, message: string): void {
  const body = `${JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })}\n`;
  socket.end(`HTTP/1.1 ${code} ${phrase}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function fail(message: string): never {
  throw new Error(message);
}
