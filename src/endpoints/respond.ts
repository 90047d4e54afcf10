// Writing responses: objects and Status errors, with warnings and pretty printing.

import { writeHead, type RequestContext } from '../request/context.ts';
import { errors, isStatusError, type StatusBody, type StatusError } from '../machinery/status.ts';
import { parseBool } from '../machinery/list-options.ts';
import { createGzip } from 'node:zlib';
import { errorEncoder, type Encoder } from './encoder.ts';

/** kube-apiserver's MaxRequestBodyBytes; also what a patch may copy and what its result may weigh. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

function wantsPretty(ctx: RequestContext): boolean {
  try {
    const p = parseBool('pretty', ctx.url.searchParams.get('pretty'));
    if (p !== undefined) return p;
  } catch {
    return false;
  }
  const ua = ctx.req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('PostmanRuntime');
}

function writeWarnings(ctx: RequestContext): void {
  const w = ctx.warnings.header();
  if (w.length && !ctx.res.headersSent) ctx.res.setHeader('Warning', w);
}

/**
 * A value (object, list, Status) in the negotiated encoding; JSON, and a value that has no form in
 * the encoding (protobuf), goes out as JSON.
 */
export function writeObject(ctx: RequestContext, enc: Encoder, code: number, body: unknown, headers: Record<string, string> = {}): void {
  if (!enc.json) {
    const encoded = enc.encode(body);
    if (encoded !== undefined) return send(ctx, code, encoded, enc.contentType, headers);
  }
  writeJson(ctx, code, body, 'application/json', headers);
}

/**
 * A Table, PartialObjectMetadata or PartialObjectMetadataList: its Content-Type names the
 * conversion after the media type, the group as the client spelled it, in kube-apiserver's order
 * (`application/json;g=meta.orch.io;v=v1;as=Table`: its generateMediaTypeWithGVK).
 */
export function writeConverted(ctx: RequestContext, enc: Encoder, code: number, body: unknown): void {
  const c = enc.convert;
  const slash = c ? c.apiVersion.lastIndexOf('/') : -1;
  const params = c ? `;g=${c.apiVersion.slice(0, slash)};v=${c.apiVersion.slice(slash + 1)};as=${c.kind}` : '';
  if (!enc.json) {
    const encoded = enc.encode(body);
    if (encoded !== undefined) return send(ctx, code, encoded, `${enc.contentType}${params}`, {});
  }
  writeJson(ctx, code, body, `application/json${params}`);
}

/** A value as JSON, whatever was negotiated (discovery documents). */
export function writeJson(ctx: RequestContext, code: number, body: unknown, contentType = 'application/json', headers: Record<string, string> = {}): void {
  // Every JSON answer ends with a newline, as kube-apiserver's encoder writes one (clients split on it).
  send(ctx, code, `${wantsPretty(ctx) ? JSON.stringify(body, null, 2) : JSON.stringify(body)}\n`, contentType, headers);
}

/**
 * A document kube-apiserver writes as raw JSON whatever the Accept header (`/version`, the root
 * path list): indented by two spaces, with no newline after it.
 */
export function writeRawJson(ctx: RequestContext, code: number, body: unknown): void {
  send(ctx, code, JSON.stringify(body, null, 2), 'application/json', {});
}

/** A stored object already encoded as JSON, in the negotiated encoding. */
export function writeStoredJson(ctx: RequestContext, enc: Encoder, code: number, json: Buffer): void {
  // Another negotiated encoding encodes the value; JSON goes out as it is.
  if (!enc.json) return writeObject(ctx, enc, code, JSON.parse(json.toString('utf8')));
  writeJsonBytes(ctx, code, json);
}

/** A body that is already JSON (stored objects, lists built from stored bytes, discovery documents). */
export function writeJsonBytes(ctx: RequestContext, code: number, json: Buffer, contentType = 'application/json'): void {
  if (wantsPretty(ctx)) return send(ctx, code, `${JSON.stringify(JSON.parse(json.toString('utf8')), null, 2)}\n`, contentType, {});
  // The bytes may be shared by every read of a stored version: the newline goes out after them
  // rather than into a copy.
  send(ctx, code, json, contentType, {}, true);
}

/** Smaller bodies are sent as they are: compressing them costs more than it saves (kube-apiserver: 128 KiB). */
const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** Whether the client accepts gzip (`Accept-Encoding: gzip`, not with q=0). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

const NEWLINE = Buffer.from('\n');

/** `newline`: write a newline after `text` (which lacks one) without copying it. */
function send(ctx: RequestContext, code: number, text: string | Buffer, contentType: string, headers: Record<string, string>, newline = false): void {
  const { res } = ctx;
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const verb = ctx.info.verb;
  if (ctx.compression && code === 200 && (verb === 'get' || verb === 'list') && body.length >= GZIP_THRESHOLD_BYTES && acceptsGzip(ctx.req.headers['accept-encoding'])) {
    // Level 1, as kube-apiserver: most of the gain for a fraction of the work, off the event loop.
    gzipped(newline ? [body, NEWLINE] : [body], (err, zipped) => {
      if (err || res.headersSent) {
        if (!res.headersSent) sendPlain(ctx, code, body, contentType, headers, newline);
        else res.end();
        return;
      }
      sendPlain(ctx, code, zipped!, contentType, { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' }, false);
    });
    return;
  }
  sendPlain(ctx, code, body, contentType, headers, newline);
}

/** The gzip of consecutive parts, without joining them first. */
function gzipped(parts: Buffer[], done: (err: Error | null, zipped?: Buffer) => void): void {
  const z = createGzip({ level: 1 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  z.once('error', (e: Error) => done(e));
  z.once('end', () => done(null, Buffer.concat(out)));
  for (const p of parts) z.write(p);
  z.end();
}

function sendPlain(ctx: RequestContext, code: number, body: Buffer, contentType: string, headers: Record<string, string>, newline: boolean): void {
  const { res } = ctx;
  writeWarnings(ctx);
  writeHead(ctx, code, { 'Content-Type': contentType, 'Content-Length': body.length + (newline ? 1 : 0), 'Cache-Control': 'no-cache, private', ...headers });
  if (ctx.req.method === 'HEAD') return void res.end();
  if (!newline) return void res.end(body);
  res.write(body);
  res.end(NEWLINE);
}

/** A body the store produced in the negotiated encoding (JSON bytes get their newline and pretty printing). */
export function writeBody(ctx: RequestContext, enc: Encoder, code: number, body: Buffer): void {
  if (enc.json) return writeJsonBytes(ctx, code, body);
  send(ctx, code, body, enc.contentType, {});
}

export function writeStatus(ctx: RequestContext, enc: Encoder, status: StatusBody, headers: Record<string, string> = {}): void {
  ctx.responseStatus = status;
  writeObject(ctx, enc, status.code, status, headers);
}

/**
 * An error, in the encoding its handler negotiated; one written before (or without) negotiation
 * negotiates the Accept header for errors, once.
 */
export function writeError(ctx: RequestContext, err: StatusError, enc?: Encoder): void {
  writeStatus(ctx, enc ?? errorEncoder(ctx.req.headers.accept, { cbor: ctx.cbor, protobuf: ctx.statusProtobufTypes }), err.status, err.headers);
}

/** The encoders handlers negotiated before they failed, by what they threw. */
const negotiatedBy = new WeakMap<object, Encoder>();

/**
 * Remember the encoding a handler negotiated before it failed with `e`, so the error writer
 * answers in it rather than negotiating again; `e` itself is rethrown unchanged.
 */
export function failedAfterNegotiating(e: unknown, enc: Encoder): unknown {
  if (typeof e === 'object' && e !== null && !negotiatedBy.has(e)) negotiatedBy.set(e, enc);
  return e;
}

/** The encoding negotiated before `e` was thrown, if any. */
export function negotiatedBefore(e: unknown): Encoder | undefined {
  return typeof e === 'object' && e !== null ? negotiatedBy.get(e) : undefined;
}

/** Any thrown value as a Status: StatusErrors as they are, anything else is a bug (500). */
export function toStatusError(e: unknown): StatusError {
  if (isStatusError(e)) return e;
  return errors.internal(e instanceof Error ? e.message : String(e));
}

/** Read the request body up to the limit; 413 beyond it. */
export async function readBody(ctx: RequestContext, limit = MAX_REQUEST_BODY_BYTES): Promise<string> {
  return (await readBodyBytes(ctx, limit)).toString('utf8');
}

/** Writes of this many bytes' worth of work (request and stored object) on are prepared by a worker. */
export const OFF_LOOP_BYTES = 64 * 1024;

/**
 * A body from this size on is gathered into shared memory: it may cross to a write worker (above),
 * and shared memory crosses without a copy, which for a large body costs the event loop its time
 * and fresh pages. Nothing writes into a body once it is read.
 */
function joinChunks(chunks: Buffer[], size: number): Buffer {
  if (chunks.length === 1 && size < OFF_LOOP_BYTES) return chunks[0]!;
  if (size < OFF_LOOP_BYTES) return Buffer.concat(chunks, size);
  const body = Buffer.from(new SharedArrayBuffer(size));
  let at = 0;
  for (const c of chunks) at += c.copy(body, at);
  return body;
}

/** The request body as bytes (binary encodings), with the same limit. */
export function readBodyBytes(ctx: RequestContext, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const { req } = ctx;
  // A compressed (or otherwise encoded) body is never decoded, so it must not be parsed as it is.
  const encoding = req.headers['content-encoding']?.trim();
  if (encoding && encoding.toLowerCase() !== 'identity') {
    closeAfterAnswer(ctx);
    return Promise.reject(errors.unsupportedContentEncoding(encoding));
  }
  if (Number(req.headers['content-length'] ?? NaN) > limit) return Promise.reject(tooLarge(ctx, limit));
  // Listeners are inline (unnamed) functions: this runs on every write request, and the TypeScript
  // loader wraps every named function it creates.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      settled = true;
      req.pause();
      reject(tooLarge(ctx, limit));
    });
    req.once('end', () => {
      if (settled) return;
      settled = true;
      const body = joinChunks(chunks, size);
      // Kept for audit at the Request level (a reference to the bytes read, not a copy).
      ctx.requestBody = body;
      resolve(body);
    });
    // A client that goes away or breaks the framing mid-body is the client's problem, not a bug.
    req.once('error', (e: Error) => {
      if (settled) return;
      settled = true;
      reject(errors.badRequest(`the request body could not be read: ${e.message}`));
    });
    req.once('aborted', () => {
      if (settled) return;
      settled = true;
      reject(errors.badRequest('the request body could not be read: the client closed the connection'));
    });
  });
}

/** The rest of an oversized body is not read: the connection ends after the 413. */
function tooLarge(ctx: RequestContext, limit: number) {
  closeAfterAnswer(ctx);
  return errors.entityTooLarge(limit);
}

/** How long a connection ending with an unread body stays open after the answer (Go's server waits 500 ms too). */
const LINGER_MS = 500;

/**
 * The connection ends after this answer, with the request body unread. Closing a socket whose input
 * still holds the client's bytes makes the kernel reset the connection, and a client that receives
 * the reset while still sending loses the answer it has not read yet. So, as Go's server does, the
 * write side is closed once the answer is out, what still arrives is read and dropped, and the
 * socket is destroyed when the client closes its side or after a short delay.
 */
function closeAfterAnswer(ctx: RequestContext): void {
  ctx.res.setHeader('Connection', 'close');
  const socket = ctx.req.socket;
  // Node's server calls destroySoon once the last answer on a closing connection is written.
  socket.destroySoon = () => {
    socket.end();
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
  };
}
