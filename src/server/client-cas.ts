// The CAs of client certificates over HTTPS: the client CAs (`--client-ca-file`, or the generated
// CA) and the authenticating proxy's (`--requestheader-client-ca-file`). Both files are followed as
// they change; the handshake names and accepts the certificates of both, and takes a new bundle
// for new connections as soon as either changes. Each authenticator still verifies a certificate
// against its own CAs only: the handshake's verdict stands for it only while the handshake's CAs
// are its own (one bundle, or two with the same content, neither changed since the start).

import { caFile, staticCa, type CaSource } from '../auth/authn/ca-file.ts';
import type { ServerOptions } from './options.ts';

export interface ClientCas {
  client: CaSource;
  requestHeader?: CaSource;
  /** Whether a handshake's verdict was reached against one bundle alone. */
  handshakeIsOwn(): boolean;
  /** The bundle the handshake uses (PEM). */
  handshakePem(): string;
  /** `listener` runs after either bundle changed. */
  onChange(listener: () => void): void;
  close(): void;
}

/** Throws a start-up error when a file cannot be read or holds no certificate. */
export function clientCas(opts: Pick<ServerOptions, 'authentication'>, generatedOrFileCa: string, log: (message: string) => void): ClientCas {
  const a = opts.authentication;
  const intervalMs = a?.caReloadIntervalMs;
  const client = a?.clientCaFile !== undefined ? caFile(a.clientCaFile, { flag: '--client-ca-file', intervalMs, log }) : staticCa(generatedOrFileCa, 'the generated CA');
  let requestHeader: CaSource | undefined;
  try {
    const path = a?.requestHeader?.clientCaFile;
    if (path !== undefined) requestHeader = caFile(path, { flag: '--requestheader-client-ca-file', intervalMs, log });
  } catch (e) {
    client.close();
    throw e;
  }
  return {
    client,
    requestHeader,
    handshakeIsOwn: () => client.unchanged && (!requestHeader || (requestHeader.unchanged && requestHeader.pem() === client.pem())),
    handshakePem: () => (requestHeader ? `${client.pem().trimEnd()}\n${requestHeader.pem().trimEnd()}\n` : client.pem()),
    onChange(listener) {
      client.onChange(listener);
      requestHeader?.onChange(listener);
    },
    close() {
      client.close();
      requestHeader?.close();
    },
  };
}
