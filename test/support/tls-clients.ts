// The test process as a client of servers that serve HTTPS: each server's CA and administrator
// certificate, read from the kubeconfig that startServer returns, kept by origin. fetch reaches
// them through a global dispatcher that presents them; node:https requests, raw TLS sockets,
// kubectl, client-node and the Python client take them from here.

import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Agent, Pool, setGlobalDispatcher } from 'undici';
import { parse } from 'yaml';

/** What a client needs to reach an HTTPS server as its administrator (PEM). */
export interface ClientTls {
  ca: string;
  cert: string;
  key: string;
}

const byOrigin = new Map<string, ClientTls>();

interface KubeconfigShape {
  clusters?: { cluster?: Record<string, string> }[];
  users?: { user?: Record<string, string> }[];
}

const fromBase64 = (v: string | undefined, what: string): string => {
  if (!v) throw new Error(`the kubeconfig has no ${what}`);
  return Buffer.from(v, 'base64').toString('utf8');
};

/** The CA and client certificate of a kubeconfig with embedded data (as the server writes it). */
export function credentialsOf(kubeconfig: string): ClientTls {
  const kc = parse(kubeconfig) as KubeconfigShape;
  const cluster = kc.clusters?.[0]?.cluster ?? {};
  const user = kc.users?.[0]?.user ?? {};
  return {
    ca: fromBase64(cluster['certificate-authority-data'], 'certificate-authority-data'),
    cert: fromBase64(user['client-certificate-data'], 'client-certificate-data'),
    key: fromBase64(user['client-key-data'], 'client-key-data'),
  };
}

/** Remembers a started server's credentials (a server over plain HTTP has none). */
export function registerServer(server: { url: string; kubeconfig?: string }): void {
  if (!server.kubeconfig) return;
  const origin = new URL(server.url).origin;
  const creds = credentialsOf(server.kubeconfig);
  const before = byOrigin.get(origin);
  byOrigin.set(origin, creds);
  // A server on a port an earlier one used, with other certificates: connections made for the
  // earlier one are kept per origin, so start afresh.
  if (before && (before.ca !== creds.ca || before.cert !== creds.cert)) installDispatcher();
}

/** The credentials for a URL's server, if it serves HTTPS and was registered. */
export function tlsFor(url: string | URL): ClientTls | undefined {
  return byOrigin.get(new URL(url).origin);
}

function installDispatcher(): void {
  setGlobalDispatcher(
    new Agent({
      factory: (origin, opts) => {
        const creds = tlsFor(String(origin));
        return new Pool(origin, creds ? { ...opts, connect: { ...creds } } : opts);
      },
    }),
  );
}
installDispatcher();

/** node:http's or node:https's request for the URL, with the server's credentials over HTTPS. */
export function clientRequest(url: string | URL, options: RequestOptions, onResponse?: (res: IncomingMessage) => void): ClientRequest {
  const u = new URL(url);
  if (u.protocol !== 'https:') return httpRequest(u, options, onResponse);
  return httpsRequest(u, { ...options, ...tlsFor(u) }, onResponse);
}

/** The last TLS session ticket of each origin: a new raw connection resumes it (a cheaper handshake), as https agents do. */
const sessions = new Map<string, Buffer>();

/** A connection to the URL's server: TCP, or TLS with its credentials (writes wait for the handshake). */
export function clientSocket(url: string | URL, opts: { allowHalfOpen?: boolean } = {}): Socket {
  const u = new URL(url);
  const port = Number(u.port);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (u.protocol !== 'https:') return netConnect({ host, port, ...opts });
  const creds = tlsFor(u);
  const key = `${u.origin} ${creds?.cert ?? ''}`;
  const socket = tlsConnect({ host, port, ...opts, ...creds, session: sessions.get(key) });
  socket.on('session', (session: Buffer) => sessions.set(key, session));
  return socket;
}
