/**
 * The embeddable API: start a server in-process (tests, tools) and the building blocks it exposes.
 *
 * @packageDocumentation
 */

export { startServer, type RunningServer, type ServerOptions } from './server/server.ts';
export type { AuthenticationOptions, SecureServingOptions } from './server/options.ts';
export type { Authenticator, AuthenticationResult } from './auth/authn/authenticator.ts';
export type { Authorizer } from './auth/authz/authorizer.ts';
export { namingProfile, type Naming, type NamingProfileName } from './naming.ts';
