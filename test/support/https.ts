// One HTTPS request with raw headers: a header given as an array is sent once per value (fetch
// would join them into one), for tests of repeated headers such as Impersonate-Group.

import type { OutgoingHttpHeaders } from 'node:http';
import { request } from 'node:https';

export interface RawReply {
  status: number;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export function httpsRequest(server: { url: string; ca?: string }, method: string, path: string, headers: OutgoingHttpHeaders, body?: unknown): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(server.url + path, { method, ca: server.ca, headers: { ...(data ? { 'Content-Type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}
