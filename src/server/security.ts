// Who a request is, what it may do and what is recorded of it: the parts of the handler chain
// that come from configuration. An embedder may hand them in; otherwise the authentication flags
// build the authenticator (over plain HTTP with none given, every request is an administrator),
// and authorization and audit default to allowing everything and recording nothing.

import { readFileSync } from 'node:fs';
import { alwaysAdmin, type Authenticator } from '../auth/authn/authenticator.ts';
import { newAuthenticator } from '../auth/authn/config.ts';
import { parseCertificates } from '../auth/authn/x509.ts';
import { alwaysAllow, type Authorizer } from '../auth/authz/authorizer.ts';
import type { Naming } from '../naming.ts';
import { noAudit, type AuditSink } from './filters.ts';
import type { ServerOptions } from './options.ts';

/** What anonymous requests reach while every request is authorized (system:public-info-viewer's paths). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export interface AuthenticatorContext {
  naming: Naming;
  /** Over HTTPS: the client CAs (PEM) certificates are verified against. */
  clientCa?: string;
  log: (message: string) => void;
}

/** Throws (a start-up error) when a configured file cannot be read or parsed. */
export function buildAuthenticator(opts: Pick<ServerOptions, 'authenticator' | 'authentication' | 'authorizer'>, ctx: AuthenticatorContext): Authenticator {
  if (opts.authenticator) return opts.authenticator;
  const a = opts.authentication;
  if (!a && ctx.clientCa === undefined) return alwaysAdmin;
  let anonymous: boolean | { paths: ReadonlySet<string> } = a?.anonymousAuth ?? true;
  // kube-apiserver turns anonymous off while the authorizer allows everything, and its default
  // roles open only the health and version paths to anonymous requests: here they reach those.
  if (anonymous && buildAuthorizer(opts) === alwaysAllow) {
    if (a?.anonymousAuth) ctx.log(`AnonymousAuth is not allowed with the AlwaysAllow authorizer: anonymous requests reach only ${[...PUBLIC_PATHS].join(', ')}. You should use a different authorizer`);
    anonymous = { paths: PUBLIC_PATHS };
  }
  const clientCa = ctx.clientCa ?? (a?.clientCaFile === undefined ? undefined : readClientCa(a.clientCaFile));
  return logRejections(ctx.log, newAuthenticator({
    clientCAs: clientCa === undefined ? undefined : parseCertificates(clientCa, '--client-ca-file'),
    tokenAuthFile: a?.tokenAuthFile,
    anonymous,
    credentialIdKey: `${ctx.naming.group('authentication')}/credential-id`,
    warn: ctx.log,
  }));
}

/** A rejected credential is logged, as kube-apiserver logs it: why, never the credential itself. */
function logRejections(log: (message: string) => void, inner: Authenticator): Authenticator {
  return {
    async authenticate(req) {
      const r = await inner.authenticate(req);
      if (r.kind === 'rejected') log(`Unable to authenticate the request: ${r.message}`);
      return r;
    },
  };
}

function readClientCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--client-ca-file: ${(e as Error).message}`);
  }
}

export function buildAuthorizer(opts: Pick<ServerOptions, 'authorizer'>): Authorizer {
  return opts.authorizer ?? alwaysAllow;
}

export function buildAudit(opts: Pick<ServerOptions, 'audit'>): AuditSink {
  return opts.audit ?? noAudit;
}
