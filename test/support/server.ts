// Start an API server in-process for a test file, on an ephemeral port with throw-away storage.

import { after } from 'node:test';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/server.ts';
import { registerServer } from './tls-clients.ts';

const started: RunningServer[] = [];
// Registered when this module loads, so it belongs to the file's root: every server started by the
// file (in hooks or tests) is closed once all its tests are done.
after(async () => {
  await Promise.all(started.map((s) => s.close()));
});

/**
 * A server for the current test file; closed when the file's tests end. It serves HTTPS, and this
 * process's clients (fetch, `api`, kubectl, client-node) reach it as the administrator of the
 * kubeconfig it returns.
 */
export async function testServer(opts: ServerOptions = {}): Promise<RunningServer> {
  const server = await startTrusted({ namespaceSyncIntervalMs: 200, log: (m) => process.stderr.write(`${m}\n`), ...opts });
  started.push(server);
  return server;
}

/** startServer, its credentials registered for this process's clients; the caller closes it. */
export async function startTrusted(opts: ServerOptions = {}): Promise<RunningServer> {
  const server = await startServer(opts);
  registerServer(server);
  return server;
}

/** fetch against the server with JSON in and out (as its administrator over HTTPS). */
export async function api(server: { url: string }, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const res = await fetch(server.url + path, {
    method,
    headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

/** A GET's status and its answer's Audit-ID, the body left unread (a watch's never ends). */
export async function auditIDOf(server: { url: string }, path: string, headers: Record<string, string> = {}): Promise<{ status: number; id: string | null }> {
  const stop = new AbortController();
  const res = await fetch(server.url + path, { headers, signal: stop.signal });
  const answer = { status: res.status, id: res.headers.get('audit-id') };
  stop.abort();
  return answer;
}

/** Polls `cond` (a server state, a client's output) until it holds; throws after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
