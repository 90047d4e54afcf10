// What the server answers besides the API: health (`/livez` `/readyz` `/healthz`), `/version`,
// `/metrics`, OpenAPI and the index of paths at `/`.

import type { Naming } from '../naming.ts';
import { errors } from '../machinery/status.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { writeHead, type RequestContext } from '../request/context.ts';
import type { ApiRouter } from '../endpoints/router.ts';
import { writeRawJson } from '../endpoints/respond.ts';
import type { OpenApi } from '../endpoints/openapi.ts';
import { groupVersions } from '../endpoints/discovery.ts';
import type { Handler } from './filters.ts';
import { runHealth, type HealthCheck } from './health.ts';
import type { ServerMetrics } from './metrics.ts';
import { versionInfo } from './version.ts';

/** Where the server is in its life, as /readyz reports it. */
export interface ServerPhase {
  /** The post-start work (system namespaces, controllers' first passes) is done. */
  started: boolean;
  /** The default RBAC roles and bindings are in place (kube's rbac/bootstrap-roles post-start hook). */
  rbacBootstrapped?: boolean;
  /** Shutdown has begun: load balancers should stop sending requests. */
  shuttingDown: boolean;
}

export interface HealthEndpoints {
  livez: readonly HealthCheck[];
  readyz: readonly HealthCheck[];
  healthz: readonly HealthCheck[];
}

export function healthEndpoints(storage: HealthCheck, phase: Readonly<ServerPhase>): HealthEndpoints {
  const livez: HealthCheck[] = [{ name: 'ping', check() {} }, { name: 'log', check() {} }, storage];
  const readyz: HealthCheck[] = [
    ...livez,
    { name: 'poststarthook/start-system-namespaces-controller', check: () => void (phase.started || fail('not started')) },
    { name: 'poststarthook/rbac/bootstrap-roles', check: () => void (phase.rbacBootstrapped || fail('not finished')) },
    { name: 'shutdown', check: () => void (phase.shuttingDown && fail('process is shutting down')) },
  ];
  return { livez, readyz, healthz: livez };
}

export interface NonApiParts {
  health: HealthEndpoints;
  metrics: ServerMetrics;
  /** The served kinds now: a new array whenever kinds are added or removed (custom resources). */
  defs: () => readonly KindDefinition[];
  naming: Naming;
}

/** OpenAPI and the path index of a set of kinds, built once per set. */
function documents(defs: readonly KindDefinition[], naming: Naming) {
  // Built on the first request for it, its modules loaded then: a start needs none of it.
  let built: Promise<OpenApi> | undefined;
  const openapi = () =>
    (built ??= import('../endpoints/openapi.ts')
      .then(({ OpenApi }) => new OpenApi(naming, groupVersions(defs, naming), versionInfo().gitVersion))
      .catch((e: unknown) => {
        built = undefined;
        throw e;
      }));
  const groups = defs.filter((d) => d.group && !d.unlisted).flatMap((d) => [`/apis/${d.group}`, `/apis/${apiVersionOf(d)}`]);
  const index = { paths: ['/api', '/api/v1', '/apis', ...new Set(groups), '/healthz', '/livez', '/metrics', '/openapi/v2', '/openapi/v3', '/readyz', '/version'].sort() };
  return { openapi, index };
}

/** The non-API paths; anything else is 404. */
export function nonApiRoutes(parts: NonApiParts): Handler {
  const { health: checks, metrics } = parts;
  let built: ({ defs: readonly KindDefinition[] } & ReturnType<typeof documents>) | undefined;
  // Rebuilt on the first request after the set of kinds changed.
  const current = () => {
    const defs = parts.defs();
    if (!built || defs !== built.defs) built = { defs, ...documents(defs, parts.naming) };
    return built;
  };
  return async (ctx) => {
    const path = ctx.url.pathname.replace(/\/+$/, '') || '/';
    const health = /^\/(livez|readyz|healthz)(?:\/(.+))?$/.exec(path);
    if (health) {
      // Probes read; no other method is served here (TRACE and OPTIONS included).
      if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
      const list = health[1] === 'livez' ? checks.livez : health[1] === 'readyz' ? checks.readyz : checks.healthz;
      const r = await runHealth(health[1]!, list, ctx.url.searchParams, health[2]);
      if (!r) throw errors.noRoute();
      writeHead(ctx, r.code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
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
      const r = (await current().openapi()).serve(path, ctx.req.headers.accept, ctx.req.headers['if-none-match'], ctx.url.searchParams.get('hash'));
      if (!r) throw errors.noRoute();
      writeHead(ctx, r.status, r.body === undefined ? { ...r.headers } : { ...r.headers, 'Content-Length': Buffer.byteLength(r.body) });
      ctx.res.end(ctx.req.method === 'HEAD' ? undefined : r.body);
      return;
    }
    if (path === '/') return writeRawJson(ctx, 200, current().index);
    throw errors.noRoute();
  };
}

/** The innermost handler of the chain: the API first, then the other paths. */
export function routeRequests(router: ApiRouter, nonApi: Handler): Handler {
  return async (ctx) => {
    if (ctx.info.unroutable) throw errors.noRoute();
    if (await router.handle(ctx)) return;
    return nonApi(ctx);
  };
}

function writeRaw(ctx: RequestContext, body: string, type: string): void {
  if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw errors.methodNotAllowed();
  writeHead(ctx, 200, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private' });
  ctx.res.end(ctx.req.method === 'HEAD' ? undefined : body);
}

function fail(message: string): never {
  throw new Error(message);
}
