// Read a watch stream over HTTP as parsed events, with bounded waits.

export interface WatchEventJson {
  type: string;
  // Parsed JSON of unknown shape; tests assert on its fields.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  object: any;
}

export interface WatchReader {
  /** The next `n` events (waits up to `timeoutMs`, then fails). */
  next(n: number, timeoutMs?: number): Promise<WatchEventJson[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  status: Promise<number>;
  close(): void;
}

export function readWatch(url: string, headers: Record<string, string> = {}): WatchReader {
  const abort = new AbortController();
  const queue: WatchEventJson[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: Error | undefined;
  let resolveStatus!: (s: number) => void;
  const status = new Promise<number>((r) => (resolveStatus = r));
  const ended = (async () => {
    try {
      const res = await fetch(url, { headers, signal: abort.signal });
      resolveStatus(res.status);
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) queue.push(JSON.parse(line) as WatchEventJson);
        }
        wake?.();
      }
      if (buf.trim()) queue.push(JSON.parse(buf) as WatchEventJson);
    } catch (e) {
      if (!abort.signal.aborted) failure = e as Error;
    } finally {
      done = true;
      wake?.();
    }
  })();
  return {
    ended,
    status,
    async next(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length < n) {
        if (done) throw failure ?? new Error(`watch ended after ${queue.length} of ${n} events`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${n} events (have ${queue.length}: ${JSON.stringify(queue.map((e) => e.type))})`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
      return queue.splice(0, n);
    },
    close() {
      abort.abort();
    },
  };
}
