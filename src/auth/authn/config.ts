// The authenticator the server's flags describe, assembled in kube-apiserver's order: client
// certificates, then bearer tokens (the token file, then the JWT authenticators), all in one union whose users gain
// `system:authenticated`; anonymous last, reached only by requests that carry no credential.

import type { X509Certificate } from 'node:crypto';
import type { Authenticator } from './authenticator.ts';
import { anonymous, anonymousOn } from './anonymous.ts';
import { bearerToken, tokenUnion, type TokenAuthenticator } from './bearer-token.ts';
import { tokenFileAuthenticator } from './token-file.ts';
import { authenticatedGroupAdder, failOnError, union } from './union.ts';
import { x509Authenticator } from './x509.ts';

export interface AuthenticatorConfig {
  /** `--client-ca-file`'s certificates: client certificates are verified against them. */
  clientCAs?: readonly X509Certificate[];
  /** `--token-auth-file`. */
  tokenAuthFile?: string;
  /** `--anonymous-auth`: on every path, on some paths only, or off. */
  anonymous: boolean | { paths: ReadonlySet<string> };
  /** The extra key a certificate's fingerprint is given under (`authentication.orch.io/credential-id`). */
  credentialIdKey: string;
  /** Start-up warnings (an empty or repeated token in the token file). */
  warn?: (message: string) => void;
  /** Token authenticators built elsewhere (the JWT authenticators), after the token file. */
  tokenAuthenticators?: readonly TokenAuthenticator[];
}

/** Throws (a start-up error) when a configured file cannot be read or parsed. */
export function newAuthenticator(c: AuthenticatorConfig): Authenticator {
  const authenticators: Authenticator[] = [];
  const tokens: TokenAuthenticator[] = [];
  if (c.clientCAs?.length) authenticators.push(x509Authenticator(c.clientCAs, c.credentialIdKey));
  if (c.tokenAuthFile !== undefined) tokens.push(tokenFileAuthenticator(c.tokenAuthFile, c.warn));
  tokens.push(...(c.tokenAuthenticators ?? []));
  if (tokens.length) authenticators.push(bearerToken(tokenUnion(tokens)));
  const identified = authenticatedGroupAdder(union(authenticators));
  if (!c.anonymous) return identified;
  return failOnError(identified, c.anonymous === true ? anonymous : anonymousOn(c.anonymous.paths));
}
