// Who a request is, what it may do and what is recorded of it: the parts of the handler chain
// that come from configuration. Today an embedder may hand them in and the defaults let everyone
// in as an administrator; the authentication, authorization and audit flags build them here.

import { alwaysAdmin, type Authenticator } from '../auth/authn/authenticator.ts';
import { alwaysAllow, type Authorizer } from '../auth/authz/authorizer.ts';
import { noAudit, type AuditSink } from './filters.ts';
import type { ServerOptions } from './options.ts';

export function buildAuthenticator(opts: Pick<ServerOptions, 'authenticator'>): Authenticator {
  return opts.authenticator ?? alwaysAdmin;
}

export function buildAuthorizer(opts: Pick<ServerOptions, 'authorizer'>): Authorizer {
  return opts.authorizer ?? alwaysAllow;
}

export function buildAudit(opts: Pick<ServerOptions, 'audit'>): AuditSink {
  return opts.audit ?? noAudit;
}
