// Audit events as kube-apiserver writes them (`audit.orch.io/v1` Event; `audit.k8s.io/v1` in the
// kubernetes profile): the policy decides each request's level and the stages left out; at
// Metadata the event says who did what to which object and how it was answered; at Request it
// adds the request's body, at RequestResponse the answer's. Secrets are never recorded beyond
// Metadata, whatever the policy says, so their values never reach a log. A request's events are
// recorded under its Audit-ID (request/audit-id.ts: every request has one, audited or not).
//
// Each event is one JSON line, in the field order of kube's Event type and with the escapes of
// Go's JSON encoder (`<`, `>`, `&`, U+2028 and U+2029 as `\u….`; map keys sorted), so a line is
// what kube-apiserver's log backend writes for the same event. What every stage of a request
// says alike (who, from where, to which object) is serialized once, on its first event; a stage
// the policy leaves out costs nothing, and a Metadata-level request keeps no bodies.

import type { TLSSocket } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import { ByteBuilder } from '../../machinery/byte-builder.ts';
import { errors } from '../../machinery/status.ts';
import type { RequestContext } from '../../request/context.ts';
import type { UserInfo } from '../../request/user.ts';
import type { AuditSink } from '../filters.ts';
import { evaluatePolicy, policyEvaluator, type AuditDecision, type AuditLevel, type AuditPolicy, type AuditStage } from './policy.ts';

/** Bodies larger than this are not recorded (the event says so in an annotation). */
const MAX_RECORDED_BODY_BYTES = 1024 * 1024;

export interface AuditConfig {
  policy: AuditPolicy;
  /**
   * Where each event goes: its JSON line (without the newline), as the UTF-8 bytes `line[0,
   * length)`, in a buffer made again for the next event (a backend copies what it keeps). False
   * when the event could not be stored and the backend is strict about it (`blocking-strict`): a
   * request whose RequestReceived event is lost so is refused.
   */
  write(line: Buffer, length: number): boolean | void | Promise<boolean>;
  /** The Event's apiVersion: `audit.orch.io/v1`. */
  apiVersion: string;
  /** Resources (`group/resource` or `group/resource/subresource`) never recorded beyond Metadata: they carry secrets or tokens. */
  secretResources: ReadonlySet<string>;
}

interface Audited {
  decision: AuditDecision;
  /** `{"kind":…,"level":…,"auditID":`: the line up to its Audit-ID. */
  head: Buffer;
  /** The Audit-ID as a JSON string, when it needs escapes (most are written as they are). */
  escapedID?: string;
  /** The request's arrival, as written (ASCII). */
  received: Buffer;
  /** `","requestURI":…,"user":{…}`: from the stage to the user (an impersonated user comes next). */
  who?: Buffer;
  /** `,"sourceIPs":[…],"userAgent":…`: after the users. */
  where?: Buffer;
  /** `,"objectRef":{…}` as the request's path names it. */
  ref?: Buffer;
  /** The same completed with the request's own object (its name, uid, resourceVersion), once decoded. */
  completedRef?: string;
  /** The answer's bytes, kept at RequestResponse. */
  response?: Buffer[];
  responseBytes: number;
  /** Its last event is written (a panic ends a request without ResponseComplete). */
  done?: boolean;
}

const LEVEL_RANK: Record<AuditLevel, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

/** RFC 3339 with microseconds, as kube-apiserver writes its audit timestamps, as bytes (the last one made is kept: events come in runs of the same millisecond). */
let lastMs = NaN;
let lastTime = Buffer.alloc(0);
const microTime = (ms: number) => {
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = Buffer.from(`${new Date(ms).toISOString().slice(0, -1)}000Z`, 'latin1');
  }
  return lastTime;
};

/** The line buffer's usual size, and the size past which it is given up once its line is written. */
const LINE_BYTES = 64 * 1024;
const LARGE_LINE = 1024 * 1024;
/**
 * The line being made, as UTF-8 bytes in one buffer used again for every event (events are made
 * one at a time, and a backend copies what it keeps): what stays the same from one request to the
 * next (who, from where, to which object, the decision) is copied as bytes encoded once, so an
 * audited request makes no strings of its own to be joined, flattened and encoded (their garbage
 * costs the server more than the copying).
 */
const line = new ByteBuilder(LINE_BYTES);
const bytesOf = (s: string) => Buffer.from(s, 'utf8');
const STAGE: Record<AuditStage, Buffer> = {
  RequestReceived: bytesOf(',"stage":"RequestReceived'),
  ResponseStarted: bytesOf(',"stage":"ResponseStarted'),
  ResponseComplete: bytesOf(',"stage":"ResponseComplete'),
  Panic: bytesOf(',"stage":"Panic'),
};
const RESPONSE_STATUS = bytesOf(',"responseStatus":');
const RECEIVED_AT = bytesOf(',"requestReceivedTimestamp":"');
const STAGE_AT = bytesOf('","stageTimestamp":"');
const QUOTE = 0x22;
const CLOSE = 0x7d;

const str = JSON.stringify as (s: string) => string;

/** Go's encoding of a JSON map: keys in order. */
function sortedMap(m: Record<string, unknown>): string {
  const keys = Object.keys(m).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${str(keys[i]!)}:${JSON.stringify(m[keys[i]!])}`;
  return `${out}}`;
}

/** authentication/v1 UserInfo as kube's Event holds it (its `extra` a map: keys sorted, as Go writes a map). */
function userOf(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups?.length) out.groups = u.groups;
  if (u.extra) {
    const keys = Object.keys(u.extra);
    if (keys.length > 0) {
      const extra: Record<string, string[]> = {};
      for (const k of keys.sort()) extra[k] = u.extra[k]!;
      out.extra = extra;
    }
  }
  return out;
}

/** A user as the Event writes it: made once per user (an authenticator's cache hands out the same one). */
const userJSONs = new WeakMap<UserInfo, string>();
function userJSON(u: UserInfo): string {
  let json = userJSONs.get(u);
  if (json === undefined) userJSONs.set(u, (json = JSON.stringify(userOf(u))));
  return json;
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

/** Go's JSON encoder escapes these (HTML-safe output); a line without them is returned as it is. */
const GO_ESCAPED = /[<>&\u2028\u2029]/;
const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
const goEscape = (line: string) => (GO_ESCAPED.test(line) ? line.replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!) : line);

/** What a JSON string holds as it is: one of our UUIDs, and most IDs a client gives (ASCII only). */
const PLAIN_ID = /^[\w.:-]*$/;
/** An Audit-ID as Go writes it, when it needs escapes; undefined when it is written as it is (in quotes). */
const escapedID = (id: string) => (PLAIN_ID.test(id) ? undefined : goEscape(str(id)));

/** A JSON body as JSON text, or undefined (not JSON, too large, not parseable). */
function jsonBody(bytes: Buffer | undefined, contentType: string | undefined, dropManaged: boolean, gzip = false): string | undefined {
  if (!bytes || bytes.length === 0 || bytes.length > MAX_RECORDED_BODY_BYTES) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!type.endsWith('json') && type !== 'application/apply-patch+yaml') return undefined;
  try {
    const text = (gzip ? gunzipSync(bytes, { maxOutputLength: MAX_RECORDED_BODY_BYTES }) : bytes).toString('utf8');
    if (type === 'application/apply-patch+yaml') return str(text);
    const body: unknown = JSON.parse(text);
    return JSON.stringify(dropManaged ? dropManagedFields(body) : body);
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

/**
 * The Event's objectRef (kube's ObjectReference, in its field order): what the path names, and
 * what it leaves out taken from the request's own object, as kube-apiserver's LogRequestObject.
 */
function objectRef(info: RequestContext['info'], obj?: RequestContext['requestObject']): string {
  const ref: Record<string, string> = { resource: info.resource };
  const namespace = info.namespace || obj?.namespace;
  if (namespace) ref.namespace = namespace;
  const name = info.name || obj?.name;
  if (name) ref.name = name;
  if (obj?.uid) ref.uid = obj.uid;
  if (info.apiGroup) ref.apiGroup = info.apiGroup;
  ref.apiVersion = info.apiVersion;
  if (obj?.resourceVersion) ref.resourceVersion = obj.resourceVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return goEscape(`,"objectRef":${JSON.stringify(ref)}`);
}

/** `{"metadata":{},"code":…}` by code, as bytes: most answers are no Status, and a few codes make them all. */
const codeOnly: Buffer[] = [];

/**
 * metav1.Status as the Event's responseStatus holds it: a Status the request was answered with
 * (a failure, or a success such as a deletion's) copied in its bounded fields, empty ones left
 * out; the code is always the answer's.
 */
function statusJSON(ctx: RequestContext, code: number): string | Buffer {
  const s = ctx.responseStatus;
  if (!s) return (codeOnly[code] ??= bytesOf(`{"metadata":{},"code":${code}}`));
  let out = `{"metadata":{},"status":${str(s.status)}`;
  if (s.message) out += `,"message":${str(s.message)}`;
  if (s.reason) out += `,"reason":${str(s.reason)}`;
  if (s.details !== undefined) out += `,"details":${JSON.stringify(s.details)}`;
  return goEscape(`${out},"code":${code}}`);
}

/** Which credentials a request that failed authentication tried, in kube-apiserver's words. */
function authenticationMethods(ctx: RequestContext): string {
  const methods: string[] = [];
  const authorization = (ctx.req.headers.authorization ?? '').trim();
  if (/^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6), 'base64');
    // Go's BasicAuth: standard base64 of `user:password`.
    if (decoded.toString('base64').replace(/=+$/, '') === authorization.slice(6).replace(/=+$/, '') && decoded.includes(':')) methods.push('basic');
  }
  const parts = authorization.split(' ');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') methods.push('bearer');
  if ((ctx.url.searchParams.get('access_token') ?? '').trim()) methods.push('access_token');
  const socket = ctx.req.socket as TLSSocket;
  if (socket.encrypted && typeof socket.getPeerCertificate === 'function' && Object.keys(socket.getPeerCertificate()).length > 0) methods.push('x509');
  return methods.length ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}

/** kube-apiserver's blocking-strict: a request whose arrival could not be recorded is not served. */
function refuseUnstored(stored: boolean): void {
  if (!stored) throw errors.internal('failed to store audit event');
}

/**
 * What a connection's last audited request said of where it came from and what it asked, as
 * written: the next request on the connection that sends the same headers, path and verb, as the
 * same user, says the same.
 */
interface ConnectionMemo {
  forwarded: string | string[] | undefined;
  realIP: string | string[] | undefined;
  userAgent: string | undefined;
  where: Buffer;
  url: string | undefined;
  verb: string;
  user: UserInfo | undefined;
  who: Buffer;
  ref: Buffer | undefined;
}

/** The last annotations written and their bytes: requests mostly carry the same few (the authorization decision). */
let lastAnnotations: { keys: string[]; values: string[]; bytes: Buffer } | undefined;

/** `,"annotations":{…}` (keys sorted, as Go writes a map), or undefined when there are none. */
function annotationsJSON(m: Record<string, string>): Buffer | undefined {
  const last = lastAnnotations;
  let n = 0;
  let same = last !== undefined;
  for (const k in m) {
    if (same && (last!.keys[n] !== k || last!.values[n] !== m[k])) same = false;
    n++;
  }
  if (n === 0) return undefined;
  if (same && n === last!.keys.length) return last!.bytes;
  const keys = Object.keys(m);
  const bytes = bytesOf(goEscape(`,"annotations":${sortedMap(m)}`));
  lastAnnotations = { keys, values: keys.map((k) => m[k]!), bytes };
  return bytes;
}

export function policyAudit(c: AuditConfig): AuditSink {
  const lastOn = new WeakMap<object, ConnectionMemo>();
  // Each request's audit state rides on its context (a property keyed by this sink's symbol) rather
  // than in a WeakMap: a weak entry per request is work for every young-generation collection.
  const AUDITED = Symbol('audited');
  const decide = policyEvaluator(c.policy);
  type Carrying = RequestContext & { [AUDITED]?: Audited };
  const kindAndVersion = `{"kind":"Event","apiVersion":${str(c.apiVersion)},"level":"`;
  const HEAD = Object.fromEntries((['Metadata', 'Request', 'RequestResponse'] as const).map((l) => [l, bytesOf(`${kindAndVersion}${l}","auditID":`)])) as Record<AuditLevel, Buffer>;
  /** False (or a promise of false) when a strict backend could not store the event. */
  const emit = (ctx: RequestContext, a: Audited, stage: AuditStage, status?: string | Buffer): boolean | Promise<boolean> => {
    if (a.decision.omitStages.has(stage)) return true;
    const info = ctx.info;
    if (a.who === undefined) {
      // What every stage says alike, once: one serialization of each run of fields, or none when
      // the connection's last request said the same (a keep-alive client repeats itself).
      const req = ctx.req;
      const url = req.url ?? '/';
      const headers = req.headers;
      const forwarded = headers['x-forwarded-for'];
      const realIP = headers['x-real-ip'];
      const userAgent = headers['user-agent'];
      let memo = lastOn.get(req.socket);
      if (!memo || memo.forwarded !== forwarded || memo.realIP !== realIP || memo.userAgent !== userAgent) {
        const where: { sourceIPs: string[]; userAgent?: string } = { sourceIPs: sourceIPs(ctx) };
        if (typeof userAgent === 'string') where.userAgent = userAgent;
        memo = { forwarded, realIP, userAgent, where: bytesOf(goEscape(`,${JSON.stringify(where).slice(1, -1)}`)), url: undefined, verb: '', user: undefined, who: Buffer.alloc(0), ref: undefined };
        lastOn.set(req.socket, memo);
      }
      // The path and the verb make the request's facts: the same reference to the object.
      if (memo.url !== url || memo.verb !== info.verb || memo.user !== ctx.user) {
        memo.url = url;
        memo.verb = info.verb;
        memo.user = ctx.user;
        memo.who = bytesOf(goEscape(`","requestURI":${str(url)},"verb":${str(info.verb)},"user":${ctx.user ? userJSON(ctx.user) : '{}'}`));
        memo.ref = info.isResourceRequest ? bytesOf(objectRef(info)) : undefined;
      }
      a.who = memo.who;
      a.where = memo.where;
      a.ref = memo.ref;
    }
    // Once the request's own object is decoded, kube-apiserver completes the reference with it.
    if (stage !== 'RequestReceived' && ctx.requestObject && !a.completedRef) a.completedRef = info.isResourceRequest ? objectRef(info, ctx.requestObject) : '';
    line.at = 0;
    line.bytes(a.head);
    if (a.escapedID === undefined) {
      line.byte(QUOTE);
      line.ascii(ctx.auditID);
      line.byte(QUOTE);
    } else line.text(a.escapedID);
    line.bytes(STAGE[stage]);
    line.bytes(a.who!);
    if (ctx.impersonatedUser) line.text(goEscape(`,"impersonatedUser":${userJSON(ctx.impersonatedUser)}`));
    line.bytes(a.where!);
    if (a.completedRef) line.text(a.completedRef);
    else if (a.ref) line.bytes(a.ref);
    if (status !== undefined) {
      line.bytes(RESPONSE_STATUS);
      if (typeof status === 'string') line.text(status);
      else line.bytes(status);
    }
    const level = a.decision.level;
    if (level !== 'Metadata' && stage !== 'RequestReceived') {
      const body = jsonBody(ctx.requestBody, ctx.req.headers['content-type'], a.decision.omitManagedFields);
      if (body !== undefined) line.text(goEscape(`,"requestObject":${body}`));
      if (level === 'RequestResponse' && stage === 'ResponseComplete' && a.response && a.responseBytes <= MAX_RECORDED_BODY_BYTES) {
        const type = ctx.answerHeaders?.['Content-Type'] ?? ctx.res.getHeader('content-type');
        const encoding = ctx.answerHeaders?.['Content-Encoding'] ?? ctx.res.getHeader('content-encoding');
        const answer = jsonBody(Buffer.concat(a.response), String(type ?? ''), a.decision.omitManagedFields, encoding === 'gzip');
        if (answer !== undefined) line.text(goEscape(`,"responseObject":${answer}`));
      }
    }
    // kube-apiserver stamps the arrival's stage with the arrival's time.
    line.bytes(RECEIVED_AT);
    line.bytes(a.received);
    line.bytes(STAGE_AT);
    line.bytes(stage === 'RequestReceived' ? a.received : microTime(Date.now()));
    line.byte(QUOTE);
    const annotations = annotationsJSON(ctx.auditAnnotations);
    if (annotations) line.bytes(annotations);
    line.byte(CLOSE);
    const stored = c.write(line.buf, line.at);
    // A line with large bodies does not keep its buffer's size.
    if (line.buf.length > LARGE_LINE) line.buf = Buffer.allocUnsafe(LINE_BYTES);
    return stored === undefined || stored;
  };
  return {
    requestReceived(ctx) {
      const id = ctx.auditID;
      let decision = decide(ctx.user, ctx.info);
      if (decision.level === 'None') return false;
      const i = ctx.info;
      if (LEVEL_RANK[decision.level] > LEVEL_RANK.Metadata && i.isResourceRequest && (c.secretResources.has(`${i.apiGroup}/${i.resource}`) || c.secretResources.has(`${i.apiGroup}/${i.resource}/${i.subresource}`)))
        decision = { ...decision, level: 'Metadata' };
      const a: Audited = {
        decision,
        head: HEAD[decision.level],
        escapedID: escapedID(id),
        received: microTime(ctx.receivedAt),
        responseBytes: 0,
      };
      (ctx as Carrying)[AUDITED] = a;
      const received = emit(ctx, a, 'RequestReceived');
      const res = ctx.res;
      if (ctx.info.verb === 'watch') {
        // A watch's answer starts long before it completes: that is a stage of its own.
        if (!decision.omitStages.has('ResponseStarted')) {
          const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
          res.writeHead = ((...args: unknown[]) => {
            const r = writeHead(...args);
            emit(ctx, a, 'ResponseStarted', statusJSON(ctx, res.statusCode));
            return r;
          }) as typeof res.writeHead;
        }
      } else if (decision.level === 'RequestResponse' && !decision.omitStages.has('ResponseComplete')) {
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
      if (typeof received === 'boolean') return refuseUnstored(received);
      // A blocking webhook: the request waits for its arrival to be sent.
      return received.then(refuseUnstored);
    },
    responseComplete(ctx, code) {
      const a = (ctx as Carrying)[AUDITED];
      if (!a || a.done) return;
      a.done = true;
      emit(ctx, a, 'ResponseComplete', statusJSON(ctx, code));
    },
    authenticationFailed(ctx) {
      // kube-apiserver's WithFailedAuthenticationAudit: the policy as for a request of no user, one
      // event at ResponseStarted, whose status says which credentials were tried.
      const id = ctx.auditID;
      const decision = evaluatePolicy(c.policy, undefined, ctx.info);
      if (decision.level === 'None') return;
      const a: Audited = { decision, head: HEAD[decision.level], escapedID: escapedID(id), received: microTime(ctx.receivedAt), responseBytes: 0, done: true };
      emit(ctx, a, 'ResponseStarted', goEscape(`{"metadata":{},"message":${str(authenticationMethods(ctx))},"code":401}`));
    },
    panicked(ctx, err) {
      // kube-apiserver's WithAudit on a panic: this stage and a 500 made up here, and no ResponseComplete.
      const a = (ctx as Carrying)[AUDITED];
      if (!a || a.done) return;
      a.done = true;
      const message = `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`;
      emit(ctx, a, 'Panic', goEscape(`{"metadata":{},"status":"Failure","message":${str(message)},"reason":"InternalError","code":500}`));
    },
  };
}
