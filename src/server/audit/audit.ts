// Audit events as kube-apiserver writes them (`audit.orch.io/v1` Event; `audit.k8s.io/v1` in the
// kubernetes profile): the policy decides each request's level and the stages left out; at
// Metadata the event says who did what to which object and how it was answered; at Request it
// adds the request's body, at RequestResponse the answer's. Secrets are never recorded beyond
// Metadata, whatever the policy says, so their values never reach a log. Every request gets an
// `Audit-ID` (the client's, when it sent one), as kube-apiserver answers.

import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { errors } from '../../machinery/status.ts';
import type { RequestContext } from '../../request/context.ts';
import type { UserInfo } from '../../request/user.ts';
import type { AuditSink } from '../filters.ts';
import { evaluatePolicy, type AuditDecision, type AuditLevel, type AuditPolicy, type AuditStage } from './policy.ts';

/** Bodies larger than this are not recorded (the event says so in an annotation). */
const MAX_RECORDED_BODY_BYTES = 1024 * 1024;

export interface AuditConfig {
  policy: AuditPolicy;
  /**
   * Where each event goes (each backend serializes it as it needs). False when the event could not
   * be stored and the backend is strict about it (`blocking-strict`): a request whose
   * RequestReceived event is lost so is refused.
   */
  write(event: object): boolean | void | Promise<boolean>;
  /** The Event's apiVersion: `audit.orch.io/v1`. */
  apiVersion: string;
  /** Resources (`group/resource` or `group/resource/subresource`) never recorded beyond Metadata: they carry secrets or tokens. */
  secretResources: ReadonlySet<string>;
}

interface Audited {
  id: string;
  decision: AuditDecision;
  received: string;
  /** What every event of the request says alike, found once. */
  requestURI: string;
  user: Record<string, unknown>;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: Record<string, unknown>;
  /** The answer's bytes, kept at RequestResponse. */
  response?: Buffer[];
  responseBytes: number;
}

const LEVEL_RANK: Record<AuditLevel, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

/** RFC 3339 with microseconds, as kube-apiserver writes its audit timestamps (the last one made is kept: events come in runs of the same millisecond). */
let lastMs = NaN;
let lastTime = '';
const microTime = (ms: number) => {
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = `${new Date(ms).toISOString().slice(0, -1)}000Z`;
  }
  return lastTime;
};

function userOf(u: UserInfo): Record<string, unknown> {
  return { username: u.name, ...(u.uid && { uid: u.uid }), ...(u.groups?.length && { groups: u.groups }), ...(u.extra && Object.keys(u.extra).length > 0 && { extra: u.extra }) };
}

function sourceIPs(ctx: RequestContext): string[] {
  const ips: string[] = [];
  const forwarded = ctx.req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') for (const ip of forwarded.split(',')) if (ip.trim()) ips.push(ip.trim());
  const real = ctx.req.headers['x-real-ip'];
  if (typeof real === 'string' && real.trim() && !ips.includes(real.trim())) ips.push(real.trim());
  const remote = ctx.req.socket.remoteAddress;
  if (remote && !ips.includes(remote)) ips.push(remote);
  return ips;
}

/** A JSON body as an object, or undefined (not JSON, too large, not parseable). */
function jsonBody(bytes: Buffer | undefined, contentType: string | undefined, gzip = false): unknown {
  if (!bytes || bytes.length === 0 || bytes.length > MAX_RECORDED_BODY_BYTES) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!type.endsWith('json') && type !== 'application/apply-patch+yaml') return undefined;
  try {
    const text = (gzip ? gunzipSync(bytes, { maxOutputLength: MAX_RECORDED_BODY_BYTES }) : bytes).toString('utf8');
    return type === 'application/apply-patch+yaml' ? text : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function dropManagedFields(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const o = v as { metadata?: Record<string, unknown>; items?: unknown[] };
  const out: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  if (o.metadata && 'managedFields' in o.metadata) {
    const { managedFields: _, ...rest } = o.metadata;
    out.metadata = rest;
  }
  if (Array.isArray(o.items)) out.items = o.items.map(dropManagedFields);
  return out;
}

export function policyAudit(c: AuditConfig): AuditSink {
  const audited = new WeakMap<RequestContext, Audited>();
  /** False (or a promise of false) when a strict backend could not store the event. */
  const emit = (ctx: RequestContext, a: Audited, stage: AuditStage, code?: number): boolean | Promise<boolean> => {
    if (a.decision.omitStages.has(stage)) return true;
    const info = ctx.info;
    const level = a.decision.level;
    const event: Record<string, unknown> = {
      kind: 'Event',
      apiVersion: c.apiVersion,
      level,
      auditID: a.id,
      stage,
      requestURI: a.requestURI,
      verb: info.verb,
      user: a.user,
      ...(ctx.impersonatedUser && { impersonatedUser: userOf(ctx.impersonatedUser) }),
      sourceIPs: a.sourceIPs,
      ...(a.userAgent !== undefined && { userAgent: a.userAgent }),
    };
    if (a.objectRef) event.objectRef = a.objectRef;
    if (code !== undefined) {
      const s = ctx.responseStatus;
      event.responseStatus = s && s.status === 'Failure' ? { metadata: {}, status: s.status, message: s.message, reason: s.reason, ...(s.details !== undefined && { details: s.details }), code } : { metadata: {}, code };
    }
    if (LEVEL_RANK[level] >= LEVEL_RANK.Request && stage !== 'RequestReceived') {
      const body = jsonBody(ctx.requestBody, ctx.req.headers['content-type']);
      if (body !== undefined) event.requestObject = a.decision.omitManagedFields ? dropManagedFields(body) : body;
    }
    if (level === 'RequestResponse' && stage === 'ResponseComplete' && a.response) {
      const body = a.responseBytes <= MAX_RECORDED_BODY_BYTES ? jsonBody(Buffer.concat(a.response), String(ctx.res.getHeader('content-type') ?? ''), ctx.res.getHeader('content-encoding') === 'gzip') : undefined;
      if (body !== undefined) event.responseObject = a.decision.omitManagedFields ? dropManagedFields(body) : body;
    }
    event.requestReceivedTimestamp = a.received;
    event.stageTimestamp = microTime(Date.now());
    for (const _ in ctx.auditAnnotations) {
      event.annotations = { ...ctx.auditAnnotations };
      break;
    }
    const stored = c.write(event);
    return stored === undefined || stored;
  };
  return {
    requestReceived(ctx) {
      const given = ctx.req.headers['audit-id'];
      const id = typeof given === 'string' && given.length > 0 && given.length <= 128 ? given : randomUUID();
      if (!ctx.res.headersSent) ctx.res.setHeader('Audit-ID', id);
      let decision = evaluatePolicy(c.policy, ctx.user, ctx.info);
      if (decision.level === 'None') return;
      const i = ctx.info;
      if (LEVEL_RANK[decision.level] > LEVEL_RANK.Metadata && i.isResourceRequest && (c.secretResources.has(`${i.apiGroup}/${i.resource}`) || c.secretResources.has(`${i.apiGroup}/${i.resource}/${i.subresource}`)))
        decision = { ...decision, level: 'Metadata' };
      const userAgent = ctx.req.headers['user-agent'];
      const a: Audited = {
        id,
        decision,
        received: microTime(ctx.receivedAt),
        requestURI: ctx.req.url ?? '/',
        user: ctx.user ? userOf(ctx.user) : { username: '' },
        sourceIPs: sourceIPs(ctx),
        ...(typeof userAgent === 'string' && { userAgent }),
        ...(i.isResourceRequest && {
          objectRef: {
            resource: i.resource,
            ...(i.namespace && { namespace: i.namespace }),
            ...(i.name && { name: i.name }),
            ...(i.apiGroup && { apiGroup: i.apiGroup }),
            apiVersion: i.apiVersion,
            ...(i.subresource && { subresource: i.subresource }),
          },
        }),
        responseBytes: 0,
      };
      audited.set(ctx, a);
      const received = emit(ctx, a, 'RequestReceived');
      const res = ctx.res;
      const longRunning = ctx.info.verb === 'watch';
      if (longRunning) {
        // A watch's answer starts long before it completes: that is a stage of its own.
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
        res.writeHead = ((...args: unknown[]) => {
          const r = writeHead(...args);
          emit(ctx, a, 'ResponseStarted', res.statusCode);
          return r;
        }) as typeof res.writeHead;
      } else if (decision.level === 'RequestResponse') {
        const chunks: Buffer[] = [];
        a.response = chunks;
        const keep = (chunk: unknown, encoding: unknown) => {
          if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
          const b = Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
          a.responseBytes += b.length;
          if (a.responseBytes <= MAX_RECORDED_BODY_BYTES) chunks.push(b);
        };
        const write = res.write.bind(res) as (...args: unknown[]) => boolean;
        const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
        res.write = ((...args: unknown[]) => {
          keep(args[0], args[1]);
          return write(...args);
        }) as typeof res.write;
        res.end = ((...args: unknown[]) => {
          keep(args[0], args[1]);
          return end(...args);
        }) as typeof res.end;
      }
      // kube-apiserver's blocking-strict: a request whose arrival could not be recorded is not served.
      const refuse = (stored: boolean) => {
        if (!stored) throw errors.internal('failed to store audit event');
      };
      if (typeof received === 'boolean') return refuse(received);
      // A blocking webhook: the request waits for its arrival to be sent.
      return received.then(refuse);
    },
    responseComplete(ctx, code) {
      const a = audited.get(ctx);
      if (a) emit(ctx, a, 'ResponseComplete', code);
    },
  };
}
