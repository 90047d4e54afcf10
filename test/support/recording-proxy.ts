// A proxy in front of a test server that records what a client really sent and got: method, path,
// media types, status, and the start of each answer's body (as it streams, for watches).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientRequest } from './tls-clients.ts';

export interface Exchange {
  method: string;
  path: string;
  accept: string;
  contentType: string;
  status: number;
  responseType: string;
  /** The answer's first bytes (up to BODY_LIMIT), as they arrive. */
  body: Buffer;
}

export interface RecordingProxy {
  url: string;
  log: Exchange[];
  /** The exchanges of `method` whose path (without the query) matches `path`. */
  exchanges(method: string, path: RegExp): Exchange[];
  close(): Promise<void>;
}

const BODY_LIMIT = 256 * 1024;

export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const log: Exchange[] = [];
  const proxy = http.createServer((req, res) => {
    // Over HTTPS the proxy is the server's administrator: its clients need no credentials.
    const out = clientRequest(new URL(req.url ?? '/', upstream), { method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
      const exchange: Exchange = {
        method: req.method ?? '',
        path: req.url ?? '',
        accept: String(req.headers.accept ?? ''),
        contentType: String(req.headers['content-type'] ?? ''),
        status: up.statusCode ?? 0,
        responseType: String(up.headers['content-type'] ?? ''),
        body: Buffer.alloc(0),
      };
      log.push(exchange);
      res.writeHead(up.statusCode ?? 502, up.headers);
      // A watch may send nothing for a while: its client must see the headers at once.
      res.flushHeaders();
      up.on('data', (chunk: Buffer) => {
        if (exchange.body.length < BODY_LIMIT) exchange.body = Buffer.concat([exchange.body, chunk.subarray(0, BODY_LIMIT - exchange.body.length)]);
      });
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    log,
    exchanges: (method, path) => log.filter((e) => e.method === method && path.test(e.path.split('?')[0]!)),
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
