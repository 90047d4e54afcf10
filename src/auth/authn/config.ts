// The authenticator the server's flags describe, assembled in kube-apiserver's order: the
// authenticating proxy's headers, client certificates, then bearer tokens (the token file, service
// accounts, bootstrap tokens, the JWT authenticators, then the webhook), all in one union whose users gain
// `system:authenticated`; anonymous last, reached only by requests that carry no credential.
// The bearer token union sits behind one cache (token-cache.ts), for requests and TokenReviews alike.

import type { X509Certificate } from 'node:crypto';
import { errors } from '../../machinery/status.ts';
import type { TokenReviewer } from '../../registry/kinds/authentication.ts';
import type { Authenticator } from './authenticator.ts';
import { anonymous, anonymousOn } from './anonymous.ts';
import { audienceAgnostic, authenticateBearer, bearerToken, bearerTokenOf, intersect, tokenUnion, type TokenAuthenticator } from './bearer-token.ts';
import { tokenFileAuthenticator } from './token-file.ts';
import { serviceAccountAuthenticator, type ServiceAccountConfig } from './service-account.ts';
import { cachedTokenAuthenticator, type TokenCacheOptions } from './token-cache.ts';
import { legacyServiceAccountAuthenticator, type LegacyTokenConfig } from './legacy-service-account.ts';
import { authenticatedGroupAdder, failOnError, union, withAuthenticatedGroup } from './union.ts';
import { x509Authenticator, type Roots } from './x509.ts';
import { requestHeaderAuthenticator, type RequestHeaderConfig } from './request-header.ts';

export interface AuthenticatorConfig {
  /** `--client-ca-file`'s certificates (as they are now, when the file is followed): client certificates are verified against them. */
  clientCAs?: readonly X509Certificate[] | Roots;
  /** Whether the TLS handshake's verdict on a client certificate was reached against the client CAs alone (default yes). */
  clientCaTrustHandshake?: () => boolean;
  /** The authenticating proxy (`--requestheader-*`): first in the union, as in kube-apiserver. */
  requestHeader?: RequestHeaderConfig;
  /** `--token-auth-file`. */
  tokenAuthFile?: string;
  /** `--api-audiences`: what the server's own tokens are for; a request's token must be for one of them. */
  apiAudiences?: readonly string[];
  /** Service-account tokens. */
  serviceAccounts?: ServiceAccountConfig;
  /** Secret-based (legacy) service-account tokens. */
  legacyServiceAccounts?: LegacyTokenConfig;
  /** `--anonymous-auth`: on every path, on some paths only, or off. */
  anonymous: boolean | { paths: ReadonlySet<string> };
  /** The extra key a certificate's fingerprint is given under (`authentication.orch.io/credential-id`). */
  credentialIdKey: string;
  /** Start-up warnings (an empty or repeated token in the token file). */
  warn?: (message: string) => void;
  /** Token authenticators built elsewhere (the JWT authenticators), after the token file. */
  tokenAuthenticators?: readonly TokenAuthenticator[];
  /** The token-review webhook: the last token authenticator; it checks audiences itself. */
  tokenWebhook?: TokenAuthenticator;
  /** The cache in front of the token authenticators (default: kube-apiserver's, 10 s for a success). */
  tokenCache?: TokenCacheOptions;
  /** `--enable-bootstrap-token-auth`: bootstrap tokens, after service-account tokens, before the JWT authenticators. */
  bootstrapTokens?: TokenAuthenticator;
}

/**
 * The request authenticator, and the same token authenticators for TokenReview (`reviewToken`).
 * Throws (a start-up error) when a configured file cannot be read or parsed.
 */
export function newAuthenticator(c: AuthenticatorConfig): Authenticator & { reviewToken: TokenReviewer } {
  const authenticators: Authenticator[] = [];
  const tokens: TokenAuthenticator[] = [];
  const apiAudiences = c.apiAudiences ?? [];
  if (c.requestHeader) authenticators.push(requestHeaderAuthenticator(c.requestHeader));
  const clientCAs = c.clientCAs;
  if (typeof clientCAs === 'function') authenticators.push(x509Authenticator(clientCAs, c.credentialIdKey, c.clientCaTrustHandshake));
  else if (clientCAs?.length) authenticators.push(x509Authenticator(() => clientCAs, c.credentialIdKey, c.clientCaTrustHandshake));
  if (c.tokenAuthFile !== undefined) tokens.push(audienceAgnostic(apiAudiences, tokenFileAuthenticator(c.tokenAuthFile, c.warn)));
  // Legacy tokens before the bound ones, as kube-apiserver orders them.
  if (c.legacyServiceAccounts) tokens.push(legacyServiceAccountAuthenticator(c.legacyServiceAccounts));
  if (c.serviceAccounts) tokens.push(serviceAccountAuthenticator(c.serviceAccounts));
  if (c.bootstrapTokens) tokens.push(audienceAgnostic(apiAudiences, c.bootstrapTokens));
  // ID tokens are for their client, not the API: as kube-apiserver, they count as the API's own.
  for (const t of c.tokenAuthenticators ?? []) tokens.push(audienceAgnostic(apiAudiences, t));
  if (c.tokenWebhook) tokens.push(c.tokenWebhook);
  const bearer = cachedTokenAuthenticator(tokenUnion(tokens), c.tokenCache);
  if (tokens.length) authenticators.push(bearerToken(bearer, apiAudiences));
  const identified = authenticatedGroupAdder(union(authenticators));
  const withAnonymous = !c.anonymous ? identified : failOnError(identified, c.anonymous === true ? anonymous : anonymousOn(c.anonymous.paths));
  return { authenticate: withAnonymous.authenticate, ...(withAnonymous.known && { known: withAnonymous.known }), reviewToken: tokenReviewer(bearer) };
}

/**
 * TokenReview: the token as a request's bearer token would carry it, through the bearer token
 * authenticators only (never certificates or anonymous), for `audiences`.
 */
function tokenReviewer(tokens: TokenAuthenticator): TokenReviewer {
  return async (token, audiences) => {
    const bearer = bearerTokenOf(`Bearer ${token}`);
    if (bearer === undefined) return { authenticated: false };
    const r = withAuthenticatedGroup(await authenticateBearer(tokens, bearer, audiences));
    if (r.kind !== 'authenticated') return { authenticated: false, ...(r.kind === 'rejected' ? { error: r.message } : {}) };
    // An authenticator that said the token is for none of the audiences asked is a bug, as
    // kube-apiserver treats it.
    if (audiences.length && r.audiences && intersect(audiences, r.audiences).length === 0) throw errors.internal('error validating audiences');
    return { authenticated: true, user: r.user, ...(r.audiences ? { audiences: r.audiences } : {}) };
  };
}
