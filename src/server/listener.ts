// The listener: HTTP or HTTPS on one address and port, with the connection bookkeeping a graceful
// shutdown needs. Over TLS a client certificate is asked for but not required nor checked here:
// the client-certificate authenticator verifies it, so a bad one is a 401, not a failed handshake.
// A connection whose first byte is not a TLS record is answered as Go's server answers plain HTTP
// sent to an HTTPS port: 400 and the connection closed.

import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { SecureVersion } from 'node:tls';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errors } from '../machinery/status.ts';

// Node's HTTP modules are taken as CommonJS: importing `node:http` as an ES module builds its
// export facade, which loads Node's fetch implementation at once, tens of milliseconds of a start.
const { createServer } = process.getBuiltinModule('node:http');
const { createServer: createHttpsServer } = process.getBuiltinModule('node:https');

export interface ListenOptions {
  /** Default 127.0.0.1. */
  bindAddress?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Serve HTTPS with these; absent: plain HTTP. */
  tls?: ListenerTls;
}

export interface ListenerTls {
  /** PEM. */
  cert: string;
  key: string;
  /** The client CAs, named to clients in the handshake so they pick a matching certificate. */
  clientCA?: string;
  minVersion: SecureVersion;
  /** OpenSSL cipher list. */
  ciphers: string;
}

export interface Listener {
  /** Where clients reach it (loopback when it listens on every interface). */
  readonly url: string;
  /** The bound address and port. */
  readonly listening: string;
  readonly port: number;
  /**
   * Graceful close: no new connections are accepted, then `whenClosedToNew` runs (open watches end
   * there), idle connections end and busy ones end once their last response is out. Connections
   * still open after `graceMs` are cut. Resolves when every connection is closed.
   */
  drain(graceMs: number, whenClosedToNew: () => void): Promise<void>;
  /** Immediate close: every connection is cut (a start that failed half-way). */
  destroy(): Promise<void>;
  /** Over TLS: new handshakes name (and accept) these client CAs (PEM); open connections keep theirs. */
  setClientCA(pem: string): void;
}

export async function listen(options: ListenOptions, handle: RequestListener): Promise<Listener> {
  // kube-apiserver accepts headers up to 1 MiB (long selectors travel in the URL).
  const tls = options.tls;
  const server: Server = tls
    ? createHttpsServer(
        { keepAlive: true, maxHeaderSize: 1 << 20, cert: tls.cert, key: tls.key, ca: tls.clientCA, requestCert: true, rejectUnauthorized: false, minVersion: tls.minVersion, ciphers: tls.ciphers },
        handle,
      )
    : createServer({ keepAlive: true, maxHeaderSize: 1 << 20 }, handle);
  server.keepAliveTimeout = 65_000;
  // Over TLS a plain TCP server accepts connections and hands those that begin a TLS handshake to
  // the HTTPS server; the HTTP server itself never listens.
  const front: NetServer = tls ? new NetServer({ pauseOnConnect: true }, (s) => sortConnection(s, server)) : server;
  // The connections requests arrive on (over TLS, the TLS sockets), and every TCP connection, some
  // perhaps still in their handshake, to cut them all when needed.
  const sockets = new Set<Socket>();
  const connections = new Set<Socket>();
  front.on('connection', (s: Socket) => {
    connections.add(s);
    s.once('close', () => connections.delete(s));
  });
  server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    // Accepted before the shutdown began but through its handshake only after: it has no request
    // yet, and ends as the other idle connections did instead of holding the shutdown.
    if (draining) setImmediate(() => endIfIdle(s));
  });
  // Requests per connection whose responses have not been flushed yet, so shutdown closes each
  // connection only once its last response has gone out.
  const inFlight = new Map<Socket, number>();
  let draining = false;
  // Everything written has been flushed by then, so a peer that never closes its side cannot
  // hold the shutdown.
  const endIfIdle = (s: Socket) => {
    if (!inFlight.has(s)) s.end(() => s.destroy());
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    inFlight.set(s, (inFlight.get(s) ?? 0) + 1);
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      const n = (inFlight.get(s) ?? 1) - 1;
      if (n > 0) inFlight.set(s, n);
      else inFlight.delete(s);
      if (draining) endIfIdle(s);
    });
  });
  // Requests Node cannot parse never reach the chain: answer them with a Status all the same.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') endWithStatus(socket, 431, 'Request Header Fields Too Large', 'BadRequest', 'request header fields too large');
    else endWithStatus(socket, 400, 'Bad Request', 'BadRequest', `malformed HTTP request: ${err.code ?? err.message}`);
  });
  // CONNECT is handed over as a bare socket and would be dropped: nothing here tunnels, so 405.
  server.on('connect', (_req, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    endWithStatus(socket, 405, 'Method Not Allowed', 'MethodNotAllowed', errors.methodNotAllowed().message);
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port ?? 0, options.bindAddress ?? '127.0.0.1', () => resolve());
  });
  const address = front.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  const bound = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const scheme = tls ? 'https' : 'http';
  return {
    url: `${scheme}://${host}:${address.port}`,
    listening: `${scheme}://${bound}:${address.port}`,
    port: address.port,
    async drain(graceMs, whenClosedToNew) {
      draining = true;
      // net.Server's close, not http.Server's: the latter destroys every connection whose response
      // is written but not yet flushed (a large list to a slow reader), cutting it short. Here the
      // listener stops, idle connections end, and busy ones end once their response is out.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(front, () => resolve()));
      whenClosedToNew();
      for (const s of sockets) endIfIdle(s);
      const grace = setTimeout(() => {
        for (const s of sockets) s.destroy();
        for (const s of connections) s.destroy();
      }, graceMs);
      grace.unref();
      await closed;
      clearTimeout(grace);
    },
    setClientCA(pem) {
      if (!tls) return;
      (server as ReturnType<typeof createHttpsServer>).setSecureContext({ cert: tls.cert, key: tls.key, ca: pem, minVersion: tls.minVersion, ciphers: tls.ciphers });
    },
    destroy() {
      for (const s of sockets) s.destroy();
      for (const s of connections) s.destroy();
      return new Promise<void>((r) => front.close(() => r()));
    },
  };
}

/** Node's default for the TLS handshake. */
const HANDSHAKE_TIMEOUT_MS = 120_000;

/** A TLS handshake's first record is a handshake record (content type 22). */
const TLS_HANDSHAKE = 0x16;

/**
 * Reads a new connection's first bytes and puts them back: a TLS handshake goes to the HTTPS
 * server, anything else is answered 400 as Go's server answers it, and closed.
 */
function sortConnection(socket: Socket, https: Server): void {
  socket.on('error', () => socket.destroy());
  // A connection that never says anything is closed when a TLS handshake would have timed out.
  socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy());
  socket.once('data', (first: Buffer) => {
    socket.pause();
    socket.setTimeout(0);
    if (first[0] === TLS_HANDSHAKE) {
      socket.unshift(first);
      https.emit('connection', socket);
      return;
    }
    socket.end('HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
  });
  socket.resume();
}

/** A Status written straight to a socket the chain never sees, and the connection closed. */
function endWithStatus(socket: Duplex, code: number, phrase: string, reason: string, message: string): void {
  const body = `${JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })}\n`;
  socket.end(`HTTP/1.1 ${code} ${phrase}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
