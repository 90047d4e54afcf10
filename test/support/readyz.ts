// Another client's view of the server while one request runs: /readyz polled every ~10 ms on one
// kept-alive connection, from a worker thread of its own. A poller on the test's own event loop
// would see nothing of a server in the same process that holds the loop: its timers could not fire
// until the loop is free again, so it would never be waiting when the server is busy.

import { Worker } from 'node:worker_threads';
import { tlsFor } from './tls-clients.ts';

const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require(workerData.tls ? 'node:https' : 'node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1, ...workerData.tls });
let stopping = false;
let worst = 0;
let polls = 0;
parentPort.on('message', () => (stopping = true));
const once = () => new Promise((resolve, reject) => http.get(workerData.url + '/readyz', { agent }, (res) => res.resume().on('end', resolve)).on('error', reject));
(async () => {
  while (!stopping) {
    const start = performance.now();
    await once();
    worst = Math.max(worst, performance.now() - start);
    if (++polls === 1) parentPort.postMessage({ started: true });
    await new Promise((r) => setTimeout(r, 10));
  }
  agent.destroy();
  parentPort.postMessage({ worst, polls });
})().catch((e) => parentPort.postMessage({ error: String(e) }));
`;

export interface ReadyzPoller {
  /** Stops polling; the worst latency seen (ms) and the number of polls. */
  stop(): Promise<{ worstMs: number; polls: number }>;
}

/** Starts polling `url`/readyz; resolves once the first answer has come back. */
export async function pollReadyz(url: string): Promise<ReadyzPoller> {
  const worker = new Worker(POLLER, { eval: true, workerData: { url, tls: tlsFor(url) } });
  const replies: { started?: boolean; worst?: number; polls?: number; error?: string }[] = [];
  let wake: (() => void) | undefined;
  worker.on('message', (m) => {
    replies.push(m);
    wake?.();
  });
  const next = async () => {
    while (replies.length === 0) await new Promise<void>((r) => (wake = r));
    const m = replies.shift()!;
    if (m.error) throw new Error(`polling /readyz: ${m.error}`);
    return m;
  };
  await next();
  return {
    async stop() {
      worker.postMessage('stop');
      const m = await next();
      await worker.terminate();
      return { worstMs: m.worst ?? NaN, polls: m.polls ?? 0 };
    },
  };
}

/**
 * `run`'s answer, and the worst /readyz latency another client saw while it ran (its failure is
 * rethrown once the poller has stopped).
 */
export async function whileReadyzPolled<T>(url: string, run: () => Promise<T>): Promise<{ answer: T; worstMs: number; polls: number }> {
  const poller = await pollReadyz(url);
  const answered = await run().then(
    (answer) => ({ answer }),
    (failure: unknown) => ({ failure }),
  );
  const seen = await poller.stop();
  if (!('answer' in answered)) throw answered.failure;
  return { answer: answered.answer, ...seen };
}
