// Requests sent byte for byte on their own connection (so paths are not cleaned, methods not
// filtered and headers not rewritten by a client library), and answers read as they arrive: the
// exchange ends when the body is complete (Content-Length reached or the last chunk seen), when
// the server closes the connection, or at a deadline.

import { parse as parseYaml } from 'yaml';
import { decodeObject } from '../../../src/wire/protobuf/index.ts';
import { decodeCbor } from '../../../src/wire/cbor.ts';
import { clientSocket } from '../tls-clients.ts';

export interface RawRequest {
  method: string;
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  /** Header names in lower case; repeated headers joined with `, ` (Warning is kept apart). */
  headers: Record<string, string>;
  /** Every header line as sent, for the size of the header block. */
  headerBytes: number;
  warnings: string[];
  body: Buffer;
  ms: number;
  /** The stream was still open when the caller stopped reading (a watch). */
  streaming: boolean;
}

export class ExchangeError extends Error {
  readonly kind: 'timeout' | 'dropped';
  constructor(
    message: string,
    kind: 'timeout' | 'dropped',
  ) {
    super(message);
    this.kind = kind;
  }
}

export function encodeRequest(r: RawRequest, host = 'fuzz'): Buffer {
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body);
  const lines = [`${r.method} ${r.target} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
  for (const [k, v] of Object.entries(r.headers ?? {})) lines.push(`${k}: ${v}`);
  if (body) lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
}

interface Head {
  status: number;
  headers: Record<string, string>;
  headerBytes: number;
  warnings: string[];
  bodyStart: number;
}

function parseHead(data: Buffer): Head | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const text = data.subarray(0, end).toString('latin1');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  const warnings: string[] = [];
  for (const line of text.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    if (name === 'warning') warnings.push(value);
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(m[1]), headers, headerBytes: end + 4, warnings, bodyStart: end + 4 };
}

/** The body of a chunked message once its last chunk arrived, else undefined. */
function dechunk(data: Buffer): Buffer | undefined {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(data.subarray(at, eol).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size)) return Buffer.concat(out);
    if (size === 0) return Buffer.concat(out);
    if (data.length < eol + 2 + size + 2) return undefined;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Every chunk received so far of a chunked body (all of it when the body is complete; what came before a stream was cut short). */
export function partialChunks(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(eol + 2, Math.min(data.length, eol + 2 + size)));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

export interface ExchangeOptions {
  /** No complete answer by then: an ExchangeError of kind timeout. */
  timeoutMs: number;
  /** A 2xx answer whose body is still open after this long is a stream: stop reading and resolve. */
  streamMs?: number;
}

/** One request on a fresh connection. */
export function exchange(url: string, r: RawRequest, opts: ExchangeOptions): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const socket = clientSocket(url);
    let data = Buffer.alloc(0);
    let head: Head | undefined;
    let settled = false;
    let streamTimer: NodeJS.Timeout | undefined;
    const finish = (a: Answer | ExchangeError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (streamTimer) clearTimeout(streamTimer);
      socket.destroy();
      if (a instanceof ExchangeError) reject(a);
      else resolve(a);
    };
    const answer = (body: Buffer, streaming: boolean): Answer => ({ status: head!.status, headers: head!.headers, headerBytes: head!.headerBytes, warnings: head!.warnings, body, ms: performance.now() - t0, streaming });
    const timer = setTimeout(() => {
      finish(new ExchangeError(`no complete answer within ${opts.timeoutMs} ms (received ${JSON.stringify(data.subarray(0, 200).toString('latin1'))})`, 'timeout'));
    }, opts.timeoutMs);
    const tryComplete = (closed: boolean) => {
      head ??= parseHead(data);
      if (!head) {
        if (closed) finish(new ExchangeError(`connection closed without an answer (received ${JSON.stringify(data.subarray(0, 200).toString('latin1'))})`, 'dropped'));
        return;
      }
      const raw = data.subarray(head.bodyStart);
      if (r.method === 'HEAD' || head.status === 204 || head.status === 304) return finish(answer(Buffer.alloc(0), false));
      if (head.headers['transfer-encoding']?.includes('chunked')) {
        const body = dechunk(raw);
        if (body) return finish(answer(body, false));
        if (closed) return finish(new ExchangeError(`connection closed inside a chunked body (status ${head.status})`, 'dropped'));
      } else if (head.headers['content-length'] !== undefined) {
        const n = Number(head.headers['content-length']);
        if (raw.length >= n) return finish(answer(raw.subarray(0, n), false));
        if (closed) return finish(new ExchangeError(`connection closed after ${raw.length} of ${n} body bytes (status ${head.status})`, 'dropped'));
      } else if (closed) {
        return finish(answer(raw, false));
      }
      if (opts.streamMs !== undefined && !streamTimer && head.status < 300) {
        streamTimer = setTimeout(() => {
          const body = data.subarray(head!.bodyStart);
          finish(answer(head!.headers['transfer-encoding']?.includes('chunked') ? partialChunks(body) : body, true));
        }, opts.streamMs);
      }
    };
    socket.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      tryComplete(false);
    });
    socket.on('error', () => {});
    socket.on('close', () => tryComplete(true));
    socket.write(encodeRequest(r));
  });
}

export interface DecodedStatus {
  kind?: unknown;
  apiVersion?: unknown;
  status?: unknown;
  code?: unknown;
  reason?: unknown;
  message?: unknown;
}

/** The answer's body decoded by its Content-Type (JSON, YAML, protobuf, CBOR); undefined if it does not decode. */
export function decodeBody(a: Answer): unknown {
  const type = (a.headers['content-type'] ?? '').toLowerCase();
  try {
    if (type.startsWith('application/yaml')) return parseYaml(a.body.toString('utf8'));
    if (type.startsWith('application/vnd.') && type.includes('protobuf')) return decodeObject(a.body);
    if (type.startsWith('application/cbor')) return decodeCbor(a.body);
    return JSON.parse(a.body.toString('utf8'));
  } catch {
    return undefined;
  }
}
