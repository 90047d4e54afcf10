// The audit webhook backend (`--audit-webhook-config-file`). `--audit-webhook-mode`, as kube-apiserver's:
// - `blocking`: each event is POSTed on its own (an EventList of one) as it is given; a request
//   waits for its RequestReceived event to be sent (failures are logged, the request goes on).
// - `blocking-strict`: the same, but a request whose RequestReceived event could not be sent is
//   refused (kube-apiserver's "failed to store audit event").
// - `batch` (the default), below:
// events are buffered (at most `bufferSize`; past that they are dropped and the drop is logged, so
// a slow or dead webhook never holds up a request or grows the server's memory) and POSTed as an
// EventList when a batch reaches `maxBatchSize` events or its first event has waited
// `maxBatchWaitMs`. One batch is in flight at a time; a failed batch is retried with backoff by the
// webhook client and then dropped (and logged). Closing sends what is buffered, within a bound.

import { loadKubeconfig } from '../../auth/kubeconfig.ts';
import { webhookClient } from '../../machinery/webhook-client.ts';

export type AuditWebhookMode = 'batch' | 'blocking' | 'blocking-strict';
export const AUDIT_WEBHOOK_MODES: readonly AuditWebhookMode[] = ['batch', 'blocking', 'blocking-strict'];

export interface AuditWebhookOptions {
  /** `--audit-webhook-config-file`: kubeconfig-format file naming the service and how to reach it. */
  configFile: string;
  /** `--audit-webhook-mode` (default batch). */
  mode?: AuditWebhookMode;
  /** `--audit-webhook-batch-max-size` (default 400). */
  maxBatchSize?: number;
  /** `--audit-webhook-batch-max-wait` (default 30 s). */
  maxBatchWaitMs?: number;
  /** `--audit-webhook-batch-buffer-size` (default 10000). */
  bufferSize?: number;
  /** `--audit-webhook-initial-backoff` (default 10 s). */
  initialBackoffMs?: number;
}

export interface AuditWebhookBackend {
  /** Batch: queues the event, given as its JSON line (true). Blocking modes: sends it; the answer says whether it was sent (always true in blocking). */
  write(line: string): boolean | Promise<boolean>;
  /** Sends what is buffered (waiting at most `timeoutMs`), then closes the connections. */
  close(timeoutMs?: number): Promise<void>;
}

export function auditWebhookBackend(o: AuditWebhookOptions, apiVersion: string, log: (message: string) => void): AuditWebhookBackend {
  let config;
  try {
    config = loadKubeconfig(o.configFile);
  } catch (e) {
    throw new Error(`--audit-webhook-config-file: ${(e as Error).message}`);
  }
  const client = webhookClient(config, { initialBackoffMs: o.initialBackoffMs ?? 10_000, answer: 'ignored' });
  // The events are JSON already: the list is put together around them, not serialized again.
  const listHead = `{"kind":"EventList","apiVersion":${JSON.stringify(apiVersion)},"metadata":{},"items":[`;
  const eventList = (lines: readonly string[]) => Buffer.from(`${listHead}${lines.join(',')}]}`);
  if (o.mode === 'blocking' || o.mode === 'blocking-strict') {
    const strict = o.mode === 'blocking-strict';
    const inFlight = new Set<Promise<boolean>>();
    let closed = false;
    return {
      write(line) {
        if (closed) return !strict;
        const sent = client.post(eventList([line])).then(
          () => true,
          (e: unknown) => {
            log(`audit webhook: 1 event dropped: ${(e as Error).message}`);
            return !strict;
          },
        );
        inFlight.add(sent);
        void sent.finally(() => inFlight.delete(sent));
        return sent;
      },
      async close(timeoutMs = 5_000) {
        closed = true;
        await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
        client.close();
      },
    };
  }
  const maxBatch = o.maxBatchSize ?? 400;
  const maxWait = o.maxBatchWaitMs ?? 30_000;
  const bufferSize = o.bufferSize ?? 10_000;
  let buffer: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let dropped = 0;
  let closed = false;

  const send = async (items: string[]) => {
    try {
      await client.post(eventList(items));
    } catch (e) {
      log(`audit webhook: ${items.length} events dropped: ${(e as Error).message}`);
    }
  };
  // One batch at a time; whatever arrived meanwhile goes next, as soon as it is a full batch or due.
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (sending || buffer.length === 0) return;
    const items = buffer.splice(0, maxBatch);
    sending = send(items).finally(() => {
      sending = undefined;
      if (buffer.length >= maxBatch || closed) flush();
      else if (buffer.length > 0) schedule();
    });
  };
  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(flush, maxWait);
    timer.unref();
  };
  return {
    write(line) {
      if (closed) return true;
      if (buffer.length >= bufferSize) {
        // Logged once per run of drops, not once per event.
        if (dropped++ === 0) log('audit webhook: the buffer is full; events are dropped until it drains');
        return true;
      }
      if (dropped) {
        log(`audit webhook: ${dropped} events were dropped`);
        dropped = 0;
      }
      buffer.push(line);
      if (buffer.length >= maxBatch) flush();
      else schedule();
      return true;
    },
    async close(timeoutMs = 5_000) {
      closed = true;
      const deadline = Date.now() + timeoutMs;
      flush();
      while ((sending || buffer.length) && Date.now() < deadline) {
        await Promise.race([sending ?? Promise.resolve(), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
        if (!sending) flush();
      }
      clearTimeout(timer);
      client.close();
    },
  };
}
