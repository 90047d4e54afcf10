// Routes a request (already parsed into RequestInfo) to discovery, a verb handler or a 404/405.
// Routes are derived from the definitions, never written per kind.

import { writeHead, type RequestContext } from '../request/context.ts';
import type { Naming } from '../naming.ts';
import { errors } from '../machinery/status.ts';
import { RegistryStore, type ReadableStore } from '../registry/store.ts';
import { ReviewStore } from '../registry/review-store.ts';
import { apiVersionOf, deprecationWarning, type KindDefinition } from '../registry/definition.ts';
import { apiServiceName, apiServicePriority } from '../registry/api-priorities.ts';
import {
  aggregatedDiscovery,
  aggregatedDiscoveryRequested,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
  groupVersions,
  type GroupVersion,
} from './discovery.ts';
import {
  handleCreate, handleNamedCreate,
  handleDelete,
  handleDeleteCollection,
  handleGet,
  handleList,
  handlePatch,
  handleReview,
  handleUpdate,
  handleWatch,
  type HandlerEnv,
  type ResourceTarget,
} from './handlers.ts';
import { writeJson, writeJsonBytes } from './respond.ts';
import { createHash } from 'node:crypto';
import { negotiateResponse } from '../negotiation/negotiate.ts';

export class ApiRouter {
  private readonly naming: Naming;
  private readonly env: HandlerEnv;
  private readonly byPath = new Map<string, ReadableStore>();
  /** Aggregated discovery documents and their ETags, per discovery order (APIService priorities can change it). */
  private readonly aggregated = new Map<string, { body: string; etag: string }>();
  private defs: KindDefinition[];
  private readonly apiServices: RegistryStore | undefined;

  constructor(
    stores: readonly ReadableStore[],
    naming: Naming,
    env: HandlerEnv,
  ) {
    this.naming = naming;
    this.env = env;
    for (const s of stores) this.byPath.set(`${apiVersionOf(s.def)}/${s.def.resource}`, s);
    this.defs = stores.map((s) => s.def);
    this.apiServices = stores.find((s): s is RegistryStore => s instanceof RegistryStore && s.def.group === naming.group('apiregistration') && s.def.resource === 'apiservices');
  }

  /**
   * Kinds served from now on (custom resources registered while the server runs), through the
   * same routes and discovery as the kinds it started with.
   */
  add(stores: readonly ReadableStore[]): void {
    for (const s of stores) this.byPath.set(`${apiVersionOf(s.def)}/${s.def.resource}`, s);
    this.defs = [...this.defs, ...stores.map((s) => s.def)];
    this.aggregated.clear();
  }

  /** Kinds no longer served: their paths answer 404 and leave discovery. */
  remove(defs: readonly KindDefinition[]): void {
    const gone = new Set(defs);
    for (const [path, s] of this.byPath) if (gone.has(s.def)) this.byPath.delete(path);
    this.defs = this.defs.filter((d) => !gone.has(d));
    this.aggregated.clear();
  }

  /** Served group versions in discovery order, by the priorities the APIService objects have now. */
  private get gvs(): GroupVersion[] {
    const apiServices = this.apiServices;
    return groupVersions(this.defs, this.naming, apiServices && ((g, v) => apiServicePriority(apiServices.cachedView(undefined, apiServiceName(g, v)))));
  }

  /** Handle `/api…` and `/apis…`; false when the path is not an API path. */
  async handle(ctx: RequestContext): Promise<boolean> {
    const i = ctx.info;
    // The object named by the path (a list by field selector also carries a name, for authorization).
    const name = i.parts[1] ?? '';
    if (!i.apiPrefix) return false;
    if (!i.isResourceRequest) {
      await this.discovery(ctx);
      return true;
    }
    const gv = i.apiPrefix === 'api' ? i.apiVersion : `${i.apiGroup}/${i.apiVersion}`;
    if (i.apiPrefix === 'api' && i.apiGroup) throw errors.noRoute();
    const store = this.byPath.get(`${gv}/${i.resource}`);
    if (!store) throw errors.noRoute();
    // A short request is counted on its store until answered: a store replaced by a changed
    // definition ends its watches only once these are done (kube-apiserver's crdHandler wait group;
    // watches are long-running and not counted).
    if (!(store instanceof RegistryStore) || i.verb === 'watch') return this.serve(ctx, store, name);
    store.requestStarted();
    try {
      return await this.serve(ctx, store, name);
    } finally {
      store.requestEnded();
    }
  }

  private serve(ctx: RequestContext, store: ReadableStore, name: string): Promise<boolean> {
    const i = ctx.info;
    const def = store.def;
    const named = i.subresource ? def.namedCreates?.find((c) => c.name === i.subresource) : undefined;
    if (named) {
      if (i.parts.length > 3 || (def.namespaced && !i.namespace) || (!def.namespaced && i.namespacePath)) throw errors.noRoute();
      if (ctx.req.method !== 'POST') throw errors.methodNotAllowed();
      return this.run(handleNamedCreate(ctx, this.env, { store, namespace: def.namespaced ? i.namespace : undefined, name, create: named }));
    }
    let subresource;
    if (i.subresource) {
      subresource = def.subresources?.find((s) => s.name === i.subresource);
      if (!subresource || i.parts.length > 3) throw errors.noRoute();
    }
    // A namespaced kind under a namespace, or across all namespaces (list/watch only); a
    // cluster-scoped kind never under one, namespaces included (`namespaces/<name>` is the namespace
    // object itself, `namespaces/<ns>/namespaces` nothing).
    const namespaced = def.namespaced;
    if (!namespaced && i.namespacePath) throw errors.noRoute();
    if (namespaced && !i.namespace && name) throw errors.noRoute();
    if (i.parts.length > 3) throw errors.noRoute();
    // As kube-apiserver, on every route of a deprecated kind version.
    const deprecated = deprecationWarning(def);
    if (deprecated) {
      ctx.warnings.add(deprecated);
      // As kube-apiserver: an audit annotation, and the metric of deprecated APIs asked for.
      ctx.auditAnnotations[this.naming.annotation('deprecated')] = 'true';
      if (def.removedIn) ctx.auditAnnotations[this.naming.annotation('removed-release')] = def.removedIn;
      this.env.deprecatedRequest?.(def.group, def.version, def.resource, i.subresource, def.removedIn ?? '');
    }
    const target: ResourceTarget<ReadableStore> = { store, namespace: namespaced ? i.namespace || undefined : undefined, name, subresource };
    const m = ctx.req.method;
    if (name) {
      if (m === 'GET' || m === 'HEAD') return this.run(handleGet(ctx, this.env, target));
      // A read-only store's kind has no other verbs: the handler would refuse them the same way.
      if (!writable(target)) throw errors.methodNotAllowed();
      if (m === 'PUT') return this.run(handleUpdate(ctx, this.env, target));
      if (m === 'PATCH') return this.run(handlePatch(ctx, this.env, target));
      if (m === 'DELETE' && !subresource) return this.run(handleDelete(ctx, this.env, target));
      throw errors.methodNotAllowed();
    }
    if ((m === 'GET' || m === 'HEAD') && i.verb !== 'watch') return this.run(handleList(ctx, this.env, target));
    if (m === 'POST' && store instanceof ReviewStore) return this.run(handleReview(ctx, this.env, { ...target, store }));
    if (!writable(target)) throw errors.methodNotAllowed();
    if (m === 'GET' || m === 'HEAD') return this.run(handleWatch(ctx, this.env, target));
    if (namespaced && !i.namespace) throw errors.methodNotAllowed();
    if (m === 'POST') return this.run(handleCreate(ctx, this.env, target));
    if (m === 'DELETE') return this.run(handleDeleteCollection(ctx, this.env, target));
    throw errors.methodNotAllowed();
  }

  private async run(p: Promise<void>): Promise<boolean> {
    await p;
    return true;
  }

  private async discovery(ctx: RequestContext): Promise<void> {
    const i = ctx.info;
    const m = ctx.req.method;
    if (m !== 'GET' && m !== 'HEAD') throw errors.methodNotAllowed();
    const accept = ctx.req.headers.accept;
    if (!i.apiVersion && !i.apiGroup) {
      const aggregated = aggregatedDiscoveryRequested(this.naming, accept);
      if (aggregated) {
        const version = aggregated.includes(';v=v2beta1;') ? 'v2beta1' : 'v2';
        const gvs = this.gvs;
        const key = `${i.apiPrefix}/${version}/${gvs.map(apiVersionOf).join(',')}`;
        let doc = this.aggregated.get(key);
        if (!doc) {
          // Orders seen are few (priorities change rarely); forget them all rather than grow.
          if (this.aggregated.size >= 64) this.aggregated.clear();
          const body = JSON.stringify(aggregatedDiscovery(this.naming, gvs, i.apiPrefix === 'api', version));
          doc = { body, etag: `"${createHash('sha256').update(body).digest('hex')}"` };
          this.aggregated.set(key, doc);
        }
        // Clients revalidate with the ETag; an unchanged document is a 304 without a body.
        if (ctx.req.headers['if-none-match'] === doc.etag) {
          writeHead(ctx, 304, { ETag: doc.etag });
          ctx.res.end();
          return;
        }
        ctx.res.setHeader('ETag', doc.etag);
        return writeJsonBytes(ctx, 200, Buffer.from(doc.body), aggregated);
      }
      negotiateResponse(accept);
      const host = ctx.req.headers.host ?? 'localhost';
      return writeJson(ctx, 200, i.apiPrefix === 'api' ? apiVersions(host) : apiGroupList(this.gvs));
    }
    negotiateResponse(accept);
    if (i.apiPrefix === 'apis' && !i.apiVersion) {
      const doc = apiGroupDocument(this.gvs, i.apiGroup);
      if (!doc) throw errors.noRoute();
      return writeJson(ctx, 200, doc);
    }
    const gv = this.gvs.find((g) => g.group === (i.apiPrefix === 'api' ? '' : i.apiGroup) && g.version === i.apiVersion);
    if (!gv || (i.apiPrefix === 'api' && i.apiGroup)) throw errors.noRoute();
    writeJson(ctx, 200, apiResourceList(gv));
  }
}

/** Whether the target's store takes watches and writes (a stored kind's). */
function writable(t: ResourceTarget<ReadableStore>): t is ResourceTarget {
  return t.store instanceof RegistryStore;
}
