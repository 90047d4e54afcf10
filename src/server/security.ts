// Who a request is, what it may do and what is recorded of it: the parts of the handler chain
// that come from configuration. An embedder may hand them in; otherwise the authentication flags
// build the authenticator (over plain HTTP with none given, every request is an administrator),
// and authorization and audit default to allowing everything and recording nothing.

import { readFileSync } from 'node:fs';
import { alwaysAdmin, type Authenticator } from '../auth/authn/authenticator.ts';
import { newAuthenticator } from '../auth/authn/config.ts';
import { parseCertificates } from '../auth/authn/x509.ts';
import type { TokenReviewer } from '../registry/kinds/authentication.ts';
import { alwaysAllow, type Authorizer } from '../auth/authz/authorizer.ts';
import type { Naming } from '../naming.ts';
import { noAudit, type AuditSink } from './filters.ts';
import type { ServerOptions } from './options.ts';

export interface AuthenticatorContext {
  naming: Naming;
  /** Over HTTPS: the client CAs (PEM) certificates are verified against. */
  clientCa?: string;
  log: (message: string) => void;
}

/**
 * The request authenticator and, when the flags built it, its token authenticators for TokenReview.
 * Throws (a start-up error) when a configured file cannot be read or parsed.
 */
export function buildAuthenticator(opts: Pick<ServerOptions, 'authenticator' | 'authentication' | 'authorizer'>, ctx: AuthenticatorContext): Authenticator & { reviewToken?: TokenReviewer } {
  if (opts.authenticator) return opts.authenticator;
  const a = opts.authentication;
  if (!a && ctx.clientCa === undefined) return alwaysAdmin;
  let anonymous = a?.anonymousAuth ?? true;
  // As kube-apiserver: anonymous requests are refused while the authorizer allows everything.
  if (anonymous && buildAuthorizer(opts) === alwaysAllow) {
    if (a?.anonymousAuth) ctx.log('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
    anonymous = false;
  }
  const clientCa = ctx.clientCa ?? (a?.clientCaFile === undefined ? undefined : readClientCa(a.clientCaFile));
  const built = newAuthenticator({
    clientCAs: clientCa === undefined ? undefined : parseCertificates(clientCa, '--client-ca-file'),
    tokenAuthFile: a?.tokenAuthFile,
    apiAudiences: a?.apiAudiences,
    anonymous,
    credentialIdKey: `${ctx.naming.group('authentication')}/credential-id`,
    warn: ctx.log,
  });
  return { ...logRejections(ctx.log, built), reviewToken: built.reviewToken };
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
