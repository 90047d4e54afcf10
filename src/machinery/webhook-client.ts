// The outbound half of a webhook: a JSON object POSTed to the service a kubeconfig-format file
// (or a CRD's conversion settings) names, and its JSON answer, as kube-apiserver's generic
// webhook client sends it. It knows nothing of a request, so every layer from the registry up
// (CRD conversion, authentication, authorization, audit) uses it. Connections are kept alive
// between calls; each attempt has a timeout covering the whole exchange; the answer is bounded in
// size; transient failures (a connection refused or reset, an HTTP 5xx or 429) are retried with
// kube's backoff (a first wait growing 1.5 times per attempt, up to 20% jitter, five attempts in
// all). Each round-trip is reported (`onAttempt`) with kube's metric result; a 401 tells the
// target its token was refused, so a token read from a file is read again. Nothing of the request
// body (which may hold a credential) is ever put in an error message.

import type { IncomingMessage } from 'node:http';

// Node's HTTP modules are taken as CommonJS: importing `node:http` as an ES module builds its
// export facade, which loads Node's fetch implementation at once, tens of milliseconds of a start.
const { Agent: HttpAgent, request: httpRequest } = process.getBuiltinModule('node:http');
const { Agent: HttpsAgent, request: httpsRequest } = process.getBuiltinModule('node:https');

export interface WebhookClientOptions {
  /** Each attempt, the answer's body included; default 30 s, kube's webhook request timeout. */
  timeoutMs?: number;
  /** The wait before the first retry (default 500 ms), growing 1.5 times per retry. */
  initialBackoffMs?: number;
  /** Attempts in all (default 5). */
  attempts?: number;
  /** The largest answer read (default 1 MiB): a larger one is an error. */
  maxResponseBytes?: number;
  /** What a 2xx answer's body is: JSON to return (default), or ignored (audit webhooks answer anything). */
  answer?: 'json' | 'ignored';
  /** Told of every round-trip (each attempt, retries included): how it ended and how long it took. */
  onAttempt?(result: CallResult, seconds: number): void;
}

/**
 * How a round-trip ended, as kube's webhook metrics label it: `success` (a well-formed answer),
 * `timeout` (no answer in time, or HTTP 504), `error` (anything else).
 */
export type CallResult = 'success' | 'timeout' | 'error';

/** What a client needs to reach a service: a kubeconfig's cluster and user, or a CRD's client config. */
export interface OutboundClientConfig {
  /** The cluster's `server`: requests go to exactly this URL (its path included). */
  url: URL;
  /** PEM of the CAs the server's certificate must chain to; absent: the system's roots. */
  ca?: string;
  /** `insecure-skip-tls-verify`: the server's certificate is not checked at all. */
  insecureSkipTlsVerify: boolean;
  /** `tls-server-name`: the name the server's certificate is checked against (and sent as SNI). */
  serverName?: string;
  /** The user's client certificate and key (PEM), presented in the TLS handshake. */
  cert?: string;
  key?: string;
  /** The user's bearer token (`token`, or the current content of `tokenFile`). */
  token?(): string | undefined;
}

/** The service's address and credentials; `tokenRejected` is told of a 401, so a token source re-reads its file. */
export type WebhookTarget = OutboundClientConfig & { tokenRejected?(): void };

export interface WebhookClient {
  /** POSTs `body` as JSON (bytes: JSON already) and resolves with the parsed JSON answer; rejects with a WebhookError. */
  post(body: unknown): Promise<unknown>;
  /** Closes the kept-alive connections. */
  close(): void;
}

/** Why a call failed; `retriable` when another attempt may succeed. */
export class WebhookError extends Error {
  readonly retriable: boolean;
  readonly status?: number;
  readonly result: Exclude<CallResult, 'success'>;
  constructor(
    message: string,
    retriable: boolean,
    status?: number,
    result: Exclude<CallResult, 'success'> = status === 504 ? 'timeout' : 'error',
  ) {
    super(message);
    this.retriable = retriable;
    this.status = status;
    this.result = result;
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_BACKOFF_MS = 500;
const DEFAULT_ATTEMPTS = 5;
const DEFAULT_MAX_RESPONSE = 1 << 20;
const BACKOFF_FACTOR = 1.5;
const BACKOFF_JITTER = 0.2;

/** Connection errors worth another attempt (the service restarting, a connection dropped). */
const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'EAI_AGAIN']);

export function webhookClient(config: WebhookTarget, o: WebhookClientOptions = {}): WebhookClient {
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const attempts = Math.max(1, o.attempts ?? DEFAULT_ATTEMPTS);
  const initialBackoff = o.initialBackoffMs ?? DEFAULT_BACKOFF_MS;
  const maxBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE;
  const secure = config.url.protocol === 'https:';
  const agent = secure
    ? new HttpsAgent({
        keepAlive: true,
        ca: config.ca,
        cert: config.cert,
        key: config.key,
        rejectUnauthorized: !config.insecureSkipTlsVerify,
        ...(config.serverName ? { servername: config.serverName } : {}),
      })
    : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;

  const attempt = (payload: Buffer): Promise<unknown> =>
    new Promise((resolve, reject) => {
      let settled = false;
      const done = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f();
      };
      const headers: Record<string, string | number> = { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': payload.length };
      const token = config.token?.();
      if (token) headers.Authorization = `Bearer ${token}`;
      const req = send(config.url, { method: 'POST', agent, headers }, (res) => {
        readBody(res, maxBytes).then(
          (text) => done(() => (res.statusCode! >= 200 && res.statusCode! < 300 ? (o.answer === 'ignored' ? resolve(undefined) : parseAnswer(text, resolve, reject)) : reject(statusError(res)))),
          (e: Error) => done(() => reject(e)),
        );
      });
      const timer = setTimeout(() => {
        done(() => reject(new WebhookError(`the webhook did not answer within ${timeoutMs / 1000}s`, false, undefined, 'timeout')));
        req.destroy();
      }, timeoutMs);
      req.on('error', (e: NodeJS.ErrnoException) => done(() => reject(new WebhookError(e.message, TRANSIENT_CODES.has(e.code ?? '') || e.message === 'socket hang up'))));
      req.end(payload);
    });

  return {
    async post(body) {
      const payload = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
      let wait = initialBackoff;
      for (let i = 1; ; i++) {
        const start = performance.now();
        try {
          const answer = await attempt(payload);
          o.onAttempt?.('success', (performance.now() - start) / 1000);
          return answer;
        } catch (e) {
          o.onAttempt?.(e instanceof WebhookError ? e.result : 'error', (performance.now() - start) / 1000);
          if (e instanceof WebhookError && e.status === 401) config.tokenRejected?.();
          if (!(e instanceof WebhookError) || !e.retriable || i >= attempts) throw e;
        }
        await new Promise((r) => setTimeout(r, wait * (1 + Math.random() * BACKOFF_JITTER)));
        wait *= BACKOFF_FACTOR;
      }
    },
    close: () => agent.destroy(),
  };
}

function statusError(res: IncomingMessage): WebhookError {
  const code = res.statusCode!;
  return new WebhookError(`the webhook answered HTTP ${code}${res.statusMessage ? ` ${res.statusMessage}` : ''}`, code >= 500 || code === 429, code);
}

function parseAnswer(text: string, resolve: (v: unknown) => void, reject: (e: Error) => void): void {
  try {
    resolve(JSON.parse(text));
  } catch {
    reject(new WebhookError('the webhook answered with a body that is not JSON', false));
  }
}

/** The body as text, refusing one larger than `max` bytes. */
function readBody(res: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        res.destroy();
        reject(new WebhookError(`the webhook's answer is larger than ${max} bytes`, false));
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', (e) => reject(new WebhookError(e.message, false)));
    res.on('aborted', () => reject(new WebhookError('the webhook closed the connection while answering', true)));
  });
}
