// Sends one generated request and judges the answer: a Status with a 4xx code (or a 2xx where the
// request is valid), never a 5xx, a hang or a dropped connection; /readyz answered within 1 s
// while the request runs and right after; headers within what clients read; no internal error in
// the server's log; the sentinels byte-for-byte unchanged.

import type { FuzzCase } from './case.ts';
import { substitute, type Harness } from './harness.ts';
import { decodeBody, exchange, ExchangeError, type Answer } from './wire.ts';

export const READYZ_BOUND_MS = 1000;
/** Node's HTTP client refuses answers with more header bytes than this (its default limit). */
export const HEADER_BOUND_BYTES = 16 * 1024;

interface Readiness {
  worst: number;
  failures: string[];
}

/** /readyz on fresh connections, one after another, until `done` settles. */
function pollReadyz(url: string, done: Promise<unknown>): Promise<Readiness> {
  let finished = false;
  const end = () => void (finished = true);
  done.then(end, end);
  const out: Readiness = { worst: 0, failures: [] };
  return (async () => {
    do {
      const t0 = performance.now();
      try {
        const a = await exchange(url, { method: 'GET', target: '/readyz' }, { timeoutMs: 30_000 });
        const ms = performance.now() - t0;
        out.worst = Math.max(out.worst, ms);
        if (a.status !== 200) out.failures.push(`/readyz answered ${a.status}`);
        if (ms > READYZ_BOUND_MS) out.failures.push(`/readyz took ${Math.round(ms)} ms (bound ${READYZ_BOUND_MS} ms)`);
      } catch (e) {
        out.failures.push(`/readyz: ${(e as Error).message}`);
        break;
      }
      if (!finished) await Promise.race([done, new Promise((r) => setTimeout(r, 50))]).catch(() => {});
    } while (!finished);
    return out;
  })();
}

function describeAnswer(a: Answer): string {
  return `${a.status} ${a.headers['content-type'] ?? ''} ${JSON.stringify(a.body.subarray(0, 300).toString('utf8'))}`;
}

export interface Outcome {
  failures: string[];
  status?: number;
  ms: number;
  readyzWorst: number;
}

/** Wait until the server answers /readyz quickly again (after a request that held it). */
async function settle(h: Harness): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && h.alive()) {
    const t0 = performance.now();
    try {
      await exchange(h.url, { method: 'GET', target: '/readyz' }, { timeoutMs: 30_000 });
      if (performance.now() - t0 < READYZ_BOUND_MS) return;
    } catch {
      // still busy
    }
  }
}

/**
 * One case; a case whose only failure is a slow /readyz runs once more, and fails only if it is
 * slow again: the machine is shared, and one late answer may be someone else's load.
 */
export async function runCase(h: Harness, c: FuzzCase): Promise<Outcome> {
  const first = await runOnce(h, c);
  if (first.failures.length === 0 || !first.failures.every((f) => /^\/readyz (right after )?took/.test(f))) return first;
  const again = await runOnce(h, c);
  return again.failures.length === 0 ? again : { ...again, failures: [...again.failures, `(the first run too: ${first.failures.join('; ')})`] };
}

async function runOnce(h: Harness, c: FuzzCase): Promise<Outcome> {
  const failures: string[] = [];
  const names = h.names();
  for (const s of c.setup ?? []) {
    const res = await fetch(h.url + substitute(s.path, names), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: substitute(JSON.stringify(s.body), names), signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    if (res.status !== 201) return { failures: [`set-up POST ${s.path} answered ${res.status}: ${text.slice(0, 300)}`], ms: 0, readyzWorst: 0 };
  }
  const request = {
    method: c.method,
    target: substitute(c.target, names),
    headers: c.headers ? Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, substitute(v, names)])) : undefined,
    body: c.body === undefined ? undefined : substitute(c.body, names),
  };
  const sent = exchange(h.url, request, { timeoutMs: c.timeoutMs ?? 10_000, streamMs: c.stream ? 300 : undefined });
  const readiness = pollReadyz(h.url, sent);
  let a: Answer | undefined;
  try {
    a = await sent;
  } catch (e) {
    failures.push(e instanceof ExchangeError ? `${e.kind === 'timeout' ? 'hang' : 'dropped connection'}: ${e.message}` : String(e));
  }
  const r = await readiness;
  failures.push(...r.failures);
  if (!a) await settle(h);
  else {
    const after = performance.now();
    try {
      await exchange(h.url, { method: 'GET', target: '/readyz' }, { timeoutMs: 30_000 });
      const ms = performance.now() - after;
      if (ms > READYZ_BOUND_MS) failures.push(`/readyz right after took ${Math.round(ms)} ms`);
    } catch (e) {
      failures.push(`/readyz right after: ${(e as Error).message}`);
    }
  }
  if (a) {
    const s = a.status;
    if (s >= 500) failures.push(`answered ${describeAnswer(a)}`);
    else if (s < 200 || (s >= 300 && s < 400)) failures.push(`answered ${describeAnswer(a)}`);
    else if (c.expect === 'ok' && s >= 300) failures.push(`a valid request was refused: ${describeAnswer(a)}`);
    else if (c.expect === 'error' && s < 300) failures.push(`an invalid request was accepted: ${describeAnswer(a)}`);
    if (s >= 400 && c.method !== 'HEAD') {
      const st = decodeBody(a) as Record<string, unknown> | undefined;
      if (st?.kind !== 'Status' || st.apiVersion !== 'v1' || st.status !== 'Failure' || st.code !== s || typeof st.reason !== 'string' || typeof st.message !== 'string')
        failures.push(`${s} without a matching Status: ${describeAnswer(a)}`);
    }
    if (a.headerBytes > HEADER_BOUND_BYTES) failures.push(`${a.headerBytes} bytes of headers (${a.warnings.length} Warning headers); clients stop at ${HEADER_BOUND_BYTES}`);
  }
  if (!h.alive()) {
    failures.push(`the server exited (${h.server.child.exitCode ?? h.server.child.signalCode}): ${h.server.stderr().slice(-500)}`);
    await h.restartIfDead();
    return { failures, status: a?.status, ms: a?.ms ?? 0, readyzWorst: r.worst };
  }
  for (const line of h.internalErrors()) failures.push(`server log: ${line.slice(0, 300)}`);
  const diffs = await h.checkSentinels();
  if (diffs.length > 0) failures.push(`sentinels changed (the request ${a ? `answered ${a.status}` : 'had no answer'}):\n  ${diffs.join('\n  ')}`);
  return { failures, status: a?.status, ms: a?.ms ?? 0, readyzWorst: r.worst };
}
