// The filter chain, outermost first, in one place (docs/architecture.md, "Request flow"). Each
// filter has one concern; request facts travel in the RequestContext.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authn/authenticator.ts';
import type { Authorizer } from '../auth/authz/authorizer.ts';
import { forbidden } from '../auth/authz/forbidden.ts';
import { asksImpersonation, impersonatedUser } from '../auth/impersonation.ts';
import { errors, isStatusError, StatusError } from '../machinery/status.ts';
import { negotiatedBefore, toStatusError, writeError } from '../endpoints/respond.ts';
import { auditIDOf } from '../request/audit-id.ts';
import { WarningRecorder, type RequestContext } from '../request/context.ts';
import { parseRequestInfo, splitRequestTarget } from '../request/request-info.ts';
import type { RequestLabels, RequestMetrics } from './request-metrics.ts';

export type Handler = (ctx: RequestContext) => Promise<void>;
type Filter = (next: Handler) => Handler;

/**
 * Audit: receives each request's stage events. The audit issue adds policy and backends. An
 * event's `user` is `ctx.user` (who authenticated); a request that impersonates has its
 * `impersonatedUser` in `ctx.impersonatedUser` by the time the response completes.
 */
export interface AuditSink {
  /**
   * A promise: the request waits for it (a blocking backend); a rejection refuses the request.
   * False: the request is not audited, and its completion need not be told.
   */
  requestReceived(ctx: RequestContext): void | false | Promise<void>;
  /** The answer to a request it took is out (or the connection gone), once, with its code. */
  responseComplete(ctx: RequestContext, code: number): void;
  /**
   * Something other than a Status error was thrown while serving a request (a bug: kube-apiserver's
   * panic), before its error answer is written; the request may not have reached the sink. The
   * request's last event is then its Panic stage, not ResponseComplete.
   */
  panicked?(ctx: RequestContext, err: unknown): void;
  /** The request failed authentication and is answered 401 (kube-apiserver's WithFailedAuthenticationAudit). */
  authenticationFailed?(ctx: RequestContext): void;
}

export const noAudit: AuditSink = { requestReceived() {}, responseComplete() {} };

export interface ChainOptions {
  authenticator: Authenticator;
  authorizer: Authorizer;
  audit: AuditSink;
  /** The naming profile's authentication group: impersonating uids and extras is checked in it. */
  authenticationGroup: string;
  /** The naming profile's authorization group: the domain of the decision's audit annotations. */
  authorizationGroup: string;
  /** 0 turns the limit off. */
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  requestTimeoutMs: number;
  /** Gate APIResponseCompression: gzip large get/list responses for clients that accept it. */
  responseCompression: boolean;
  /** Gate CBORServingAndStorage. */
  cbor: boolean;
  /** The accepted spellings of the protobuf media type, in which errors are answered when asked for. */
  protobufMediaTypes: readonly string[];
  /** Called for every error answered with 500, so bugs are seen. */
  onInternalError(err: unknown, ctx: RequestContext): void;
  /** Request counts, durations, sizes, in-flight and long-running requests (none when absent). */
  metrics?: RequestMetrics;
}

const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * A request's end, told from one place to those who follow it: metrics (every request to a served
 * resource or to discovery is counted with its answer's code and timed to its end; a watch: to its
 * close, and counted as long-running while open) and audit (ResponseComplete, once the answer is
 * out). Outermost, so the answer is written by the time the request below has settled.
 */
const instrument = (opts: ChainOptions): Filter => (next) => {
  const metrics = opts.metrics;
  const audit = opts.audit === noAudit ? undefined : opts.audit;
  if (!metrics && !audit) return next;
  return async (ctx) => {
    const labels = metrics?.labels(ctx.req.method ?? 'GET', ctx.info, ctx.url.searchParams, ctx.req.headers['content-type']);
    if (!labels && !audit) return next(ctx);
    const closeLongRunning = labels && LONG_RUNNING_VERBS.has(ctx.info.verb) ? metrics!.longRunning(labels) : undefined;
    try {
      await next(ctx);
    } finally {
      closeLongRunning?.();
      const res = ctx.res;
      // An answer still being made (a large one being compressed, off the event loop) is
      // measured once it is out, as kube-apiserver measures a handler that writes it.
      if (labels) {
        if (res.headersSent || res.writableEnded || res.destroyed) observeAnswer(metrics!, labels, ctx);
        else res.once('close', () => observeAnswer(metrics!, labels, ctx));
      }
      // Audit waits for the whole answer (RequestResponse records it).
      if (ctx.audited) {
        if (res.writableEnded || res.destroyed) audit!.responseComplete(ctx, res.statusCode);
        else res.once('close', () => audit!.responseComplete(ctx, res.statusCode));
      }
    }
  };
};

/** The request's duration and its answer's code and size, into the request metrics. */
function observeAnswer(metrics: RequestMetrics, labels: RequestLabels, ctx: RequestContext): void {
  // A HEAD answer's Content-Length is the body it did not send.
  const length = ctx.req.method === 'HEAD' ? 0 : Number(ctx.answerHeaders?.['Content-Length'] ?? ctx.res.getHeader('content-length'));
  metrics.observe(labels, ctx.res.statusCode, (Date.now() - ctx.receivedAt) / 1000, Number.isFinite(length) ? length : 0);
}

/** A bug anywhere below answers 500 with a Status; the server keeps serving. */
const recoverPanics = (opts: ChainOptions): Filter => (next) => async (ctx) => {
  try {
    await next(ctx);
  } catch (e) {
    if (!isStatusError(e)) {
      // A sink that fails here (an embedder's) must not cost the client its answer.
      try {
        opts.audit.panicked?.(ctx, e);
      } catch (auditError) {
        opts.onInternalError(auditError, ctx);
      }
    }
    const err = toStatusError(e);
    if (err.code >= 500 && !(e instanceof StatusError)) opts.onInternalError(e, ctx);
    // A handler that negotiated its answer's encoding before failing is answered in it.
    if (!ctx.res.headersSent) writeError(ctx, err, negotiatedBefore(e));
    else ctx.res.destroy();
  }
};

/** A request that is not long-running must be answered within the timeout (504 otherwise). */
const timeout = (opts: ChainOptions): Filter => (next) => async (ctx) => {
  if (LONG_RUNNING_VERBS.has(ctx.info.verb) || opts.requestTimeoutMs <= 0) return next(ctx);
  ctx.deadline = ctx.receivedAt + opts.requestTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // A body still arriving (too slowly) will never be read: the connection ends with the answer.
      if (!ctx.req.complete) {
        if (!ctx.res.headersSent) ctx.res.setHeader('Connection', 'close');
        ctx.res.once('finish', () => ctx.req.socket.destroy());
      }
      reject(errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded'));
    }, opts.requestTimeoutMs);
  });
  try {
    await Promise.race([next(ctx), expired]);
  } finally {
    clearTimeout(timer);
  }
};

const authentication = (opts: ChainOptions): Filter => (next) => async (ctx) => {
  const start = performance.now();
  let r;
  try {
    // An answer known at once (a cached token, a remembered certificate) waits for nothing.
    r = opts.authenticator.known?.(ctx.req) ?? (await opts.authenticator.authenticate(ctx.req));
  } catch (e) {
    opts.metrics?.authenticated('error', (performance.now() - start) / 1000);
    if (isStatusError(e) && e.code === 401) opts.audit.authenticationFailed?.(ctx);
    throw e;
  }
  opts.metrics?.authenticated(r.kind === 'authenticated' ? 'success' : 'failure', (performance.now() - start) / 1000, r.kind === 'authenticated' ? r.user.name : undefined);
  if (r.kind !== 'authenticated') {
    opts.audit.authenticationFailed?.(ctx);
    throw new StatusError(401, 'Unauthorized', 'Unauthorized');
  }
  ctx.user = r.user;
  ctx.effectiveUser = r.user;
  return next(ctx);
};

/**
 * Audit: the request's arrival. Its end is told by `instrument` (once the answer is out) and a
 * panic by `recoverPanics`, which wait for the request anyway: this layer adds no frame of its own.
 */
const audit = (opts: ChainOptions): Filter => (next) => {
  if (opts.audit === noAudit) return next;
  return (ctx) => {
    const received = opts.audit.requestReceived(ctx);
    if (received === false) return next(ctx);
    if (!received) {
      ctx.audited = true;
      return next(ctx);
    }
    // A blocking webhook: the request waits for its arrival to be sent (a rejection refuses it,
    // with no event of its end: kube-apiserver's "failed to store audit event").
    return received.then(() => {
      ctx.audited = true;
      return next(ctx);
    });
  };
};

/** Impersonation: the request acts as the user its headers ask for, if the authenticated user may. */
const impersonation = (opts: ChainOptions): Filter => (next) => async (ctx) => {
  if (!asksImpersonation(ctx.req)) return next(ctx);
  const user = await impersonatedUser(ctx.user!, ctx.req, opts.authorizer, opts.authenticationGroup);
  if (user) {
    ctx.impersonatedUser = user;
    ctx.effectiveUser = user;
  }
  return next(ctx);
};

/** Max-in-flight: separate budgets for reads and writes; long-running requests are not counted. */
const maxInFlight = (opts: ChainOptions): Filter => {
  let reads = 0;
  let writes = 0;
  return (next) => async (ctx) => {
    if (LONG_RUNNING_VERBS.has(ctx.info.verb)) return next(ctx);
    const mutating = MUTATING_VERBS.has(ctx.info.verb);
    const limit = mutating ? opts.maxMutatingRequestsInflight : opts.maxRequestsInflight;
    if (limit > 0 && (mutating ? writes : reads) >= limit) throw errors.tooManyRequests();
    if (mutating) opts.metrics?.inflight('mutating', ++writes);
    else opts.metrics?.inflight('readOnly', ++reads);
    try {
      await next(ctx);
    } finally {
      if (mutating) opts.metrics?.inflight('mutating', --writes);
      else opts.metrics?.inflight('readOnly', --reads);
    }
  };
};

const AUTHORIZED = { allow: 'allowed', deny: 'denied', 'no-opinion': 'no-opinion' } as const;

/**
 * kube-apiserver's WithAuthorization: the authorizers' decision for the user the request acts as,
 * recorded for audit (`authorization.<domain>/decision` and `/reason`, as kube-apiserver
 * annotates its events), then the request served or refused with 403.
 */
const authorization = (opts: ChainOptions): Filter => {
  const decisionKey = `${opts.authorizationGroup}/decision`;
  const reasonKey = `${opts.authorizationGroup}/reason`;
  return (next) => async (ctx) => {
    const start = performance.now();
    let d;
    try {
      const attrs = { user: ctx.effectiveUser!, info: ctx.info };
      // A decision reached at once (rules in memory, the privileged groups) waits for nothing.
      d = opts.authorizer.known?.(attrs) ?? (await opts.authorizer.authorize(attrs));
    } catch (e) {
      opts.metrics?.authorized('error', (performance.now() - start) / 1000);
      ctx.auditAnnotations[reasonKey] = 'internal error';
      throw e;
    }
    opts.metrics?.authorized(AUTHORIZED[d.decision], (performance.now() - start) / 1000);
    ctx.auditAnnotations[decisionKey] = d.decision === 'allow' ? 'allow' : 'forbid';
    ctx.auditAnnotations[reasonKey] = d.reason ?? '';
    if (d.decision !== 'allow') throw forbidden(ctx.effectiveUser!.name, ctx.info, d.reason);
    return next(ctx);
  };
};

/** Build the whole chain around the handler; the order is the one of kube-apiserver. */
export function buildHandlerChain(handler: Handler, opts: ChainOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const filters: Filter[] = [
    instrument(opts),
    recoverPanics(opts),
    timeout(opts),
    authentication(opts),
    audit(opts),
    impersonation(opts),
    maxInFlight(opts),
    authorization(opts),
  ];
  const chain = filters.reduceRight((next, f) => f(next), handler);
  return (req, res) => {
    const { path, url } = splitRequestTarget(req.url ?? '/');
    let badPath = false;
    let info;
    try {
      info = parseRequestInfo(req.method ?? 'GET', path, url.searchParams);
    } catch {
      // An invalid percent-escape in the path (Go's server answers these 400 too).
      badPath = true;
      info = parseRequestInfo(req.method ?? 'GET', '/', url.searchParams);
    }
    const ctx: RequestContext = {
      req,
      res,
      url,
      info,
      receivedAt: Date.now(),
      warnings: new WarningRecorder(),
      auditAnnotations: {},
      audited: false,
      auditID: auditIDOf(req),
      answerHeaders: undefined,
      compression: opts.responseCompression,
      cbor: opts.cbor,
      statusProtobufTypes: opts.protobufMediaTypes,
    };
    if (badPath) {
      writeError(ctx, errors.badRequest(`invalid URL escape in path ${JSON.stringify(path.slice(0, 200))}`));
      return;
    }
    // recoverPanics answers every error; nothing escapes to the socket.
    void chain(ctx).catch((e) => {
      opts.onInternalError(e, ctx);
      res.destroy();
    });
  };
}
