// Who a request is, what it may do and what is recorded of it: the parts of the handler chain
// that come from configuration. An embedder may hand them in; otherwise the authentication flags
// build the authenticator (over plain HTTP with none given, every request is an administrator),
// authorization defaults to the Node and RBAC modes, and audit to recording nothing.

import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { alwaysAdmin, type AuthenticationResult, type Authenticator } from '../auth/authn/authenticator.ts';
import { newAuthenticator } from '../auth/authn/config.ts';
import { parseCertificates } from '../auth/authn/x509.ts';
import type { TokenReviewer } from '../registry/kinds/authentication.ts';
import type { TokenAuthenticator } from '../auth/authn/bearer-token.ts';
import type { TokenCacheStats } from '../auth/authn/token-cache.ts';
import type { ReloadStats } from '../auth/authn/jwt-set.ts';
import type { AnonymousConfig, ValidationContext } from '../auth/authn/jwt-config.ts';
import { alwaysAllow, type Authorizer } from '../auth/authz/authorizer.ts';
import { checkPolicyFile, DEFAULT_AUTHORIZATION_MODES, modeChain, parseAuthorizationModes, type AuthorizationMode } from '../auth/authz/modes.ts';
import { namingProfile, type Naming } from '../naming.ts';
import { privilegedGroups } from '../auth/authz/rbac.ts';
import type { AuthorizationWebhookMetrics, SarVersion } from '../auth/authz/webhook.ts';
import type { AuthorizationConfig } from '../auth/authz/config-file.ts';
import { parseSigningKey, parseVerificationKeys, readKeyFile, type LiveObject, type ServiceAccountConfig, type ServiceAccountGetter } from '../auth/authn/service-account.ts';
import type { LegacyTokenConfig } from '../auth/authn/legacy-service-account.ts';
import { isStatusError } from '../machinery/status.ts';
import type { KObject } from '../machinery/meta.ts';
import { secretTypes } from '../registry/kinds/secret.ts';
import { bootstrapTokenAuthenticator } from '../auth/authn/bootstrap-token.ts';
import type { RegistryStore } from '../registry/store.ts';
import { noAudit, type AuditSink } from './filters.ts';
import type { ClientCas } from './client-cas.ts';
import { requestHeaderNames, type RequestHeaderConfig } from '../auth/authn/request-header.ts';
import { staticCa } from '../auth/authn/ca-file.ts';
import type { ServerOptions, TokenWebhookOptions } from './options.ts';

/** What anonymous requests reach while every request is authorized (system:public-info-viewer's paths). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export interface AuthenticatorContext {
  naming: Naming;
  /** Over HTTPS: the client CAs (PEM) certificates are verified against. */
  clientCa?: string;
  /** Over HTTPS: the client CAs and the authenticating proxy's, followed as their files change (in place of `clientCa`). */
  clientCas?: ClientCas;
  /** Service-account tokens, when the server has a key to sign them with. */
  serviceAccounts?: ServiceAccountConfig;
  /** Secret-based (legacy) service-account tokens, beside them. */
  legacyServiceAccounts?: LegacyTokenConfig;
  log: (message: string) => void;
  /** Where the cache of verified tokens and the configuration reloads report. */
  metrics?: { tokenCache: TokenCacheStats; configReload: ReloadStats };
  /** Registers what must stop with the server (discovery retries, the file watch). */
  onClose?: (close: () => void) => void;
  /** Objects of the stores once they exist: what bootstrap tokens are read from. */
  objects?: ObjectGetter;
}

/**
 * Service-account tokens as the flags (or their defaults) describe them: undefined when there is
 * no key to sign with (plain HTTP without `--service-account-signing-key-file`). `getter` answers
 * lookups once the stores exist.
 */
export function serviceAccountConfig(opts: Pick<ServerOptions, 'authentication'>, generatedKey: string | undefined, naming: Naming, getter: ServiceAccountGetter): ServiceAccountConfig | undefined {
  const o = opts.authentication?.serviceAccounts ?? {};
  const signingPem = o.signingKeyFile !== undefined ? readKeyFile(o.signingKeyFile, '--service-account-signing-key-file') : generatedKey;
  if (signingPem === undefined) return undefined;
  const signing = parseSigningKey(signingPem, o.signingKeyFile ?? 'the generated service-account key');
  const verification = (o.keyFiles ?? []).flatMap((f) => parseVerificationKeys(readKeyFile(f, '--service-account-key-file'), `--service-account-key-file ${f}`));
  const issuers = o.issuers?.length ? o.issuers : [`https://${naming.profile === 'kubernetes' ? 'kubernetes' : naming.product}.default.svc.cluster.local`];
  for (const i of issuers) if (i.includes(':') && !URL.canParse(i)) throw new Error(`--service-account-issuer ${JSON.stringify(i)} contained a ':' but was not a valid URL`);
  if (o.maxTokenExpirationSeconds !== undefined && o.maxTokenExpirationSeconds < 3600) throw new Error('--service-account-max-token-expiration: the value must be at least 1h');
  return {
    issuers,
    apiAudiences: opts.authentication?.apiAudiences?.length ? opts.authentication.apiAudiences : issuers,
    signing,
    verification,
    maxExpirationSeconds: o.maxTokenExpirationSeconds,
    claimKey: naming.labelDomain,
    extraPrefix: `authentication.${naming.labelDomain}`,
    getter: o.lookup === false ? undefined : getter,
  };
}

/**
 * The request authenticator and, when the flags built it, its token authenticators for TokenReview.
 * Throws (a start-up error) when a configured file cannot be read or parsed.
 */
/**
 * Whether the authentication or authorization configuration holds expressions (JWT
 * authenticators' claim mappings and rules, authorization webhooks' match conditions), compiled
 * as it is read (and read again): the expression language is loaded before.
 */
export function configurationUsesExpressions(opts: Pick<ServerOptions, 'authentication' | 'authorization'>): boolean {
  const a = opts.authentication;
  const oidc = a?.oidc !== undefined && Object.values(a.oidc).some((v) => v !== undefined);
  return a?.authenticationConfig !== undefined || oidc || opts.authorization?.configFile !== undefined;
}

/**
 * The modules of configurations a start may not have: JWT authenticators (`--oidc-*`,
 * `--authentication-config`), the token and authorization webhooks, `--authorization-config` and
 * ABAC. `loadSecurityModules` loads them (together) before the builders run when the options name
 * any of them; a start without them does not load them.
 */
interface OptionalModules {
  jwtConfig: typeof import('../auth/authn/jwt-config.ts');
  jwt: typeof import('../auth/authn/jwt.ts');
  jwtSet: typeof import('../auth/authn/jwt-set.ts');
  tokenWebhook: typeof import('../auth/authn/webhook.ts');
  kubeconfig: typeof import('../auth/kubeconfig.ts');
  webhookClient: typeof import('../machinery/webhook-client.ts');
  authorizationWebhook: typeof import('../auth/authz/webhook.ts');
  configFile: typeof import('../auth/authz/config-file.ts');
  abac: typeof import('../auth/authz/abac.ts');
}
let optionalModules: OptionalModules | undefined;

export async function loadSecurityModules(opts: Pick<ServerOptions, 'authentication' | 'authorization'>): Promise<void> {
  const a = opts.authentication;
  const z = opts.authorization;
  const needed =
    configurationUsesExpressions(opts) || a?.tokenWebhook?.configFile !== undefined || z?.webhook?.configFile !== undefined || z?.policyFile !== undefined || (z?.modes ?? []).some((m) => m === 'ABAC' || m === 'Webhook');
  if (optionalModules || !needed) return;
  const [jwtConfig, jwt, jwtSet, tokenWebhook, kubeconfig, webhookClient, authorizationWebhook, configFile, abac] = await Promise.all([
    import('../auth/authn/jwt-config.ts'),
    import('../auth/authn/jwt.ts'),
    import('../auth/authn/jwt-set.ts'),
    import('../auth/authn/webhook.ts'),
    import('../auth/kubeconfig.ts'),
    import('../machinery/webhook-client.ts'),
    import('../auth/authz/webhook.ts'),
    import('../auth/authz/config-file.ts'),
    import('../auth/authz/abac.ts'),
  ]);
  optionalModules = { jwtConfig, jwt, jwtSet, tokenWebhook, kubeconfig, webhookClient, authorizationWebhook, configFile, abac };
}

function optional(): OptionalModules {
  if (!optionalModules) throw new Error('the modules of this authentication or authorization configuration are not loaded (loadSecurityModules runs first)');
  return optionalModules;
}

export function buildAuthenticator(opts: Pick<ServerOptions, 'authenticator' | 'authentication' | 'authorizer' | 'authorization'>, ctx: AuthenticatorContext): Authenticator & { reviewToken?: TokenReviewer } {
  if (opts.authenticator) return opts.authenticator;
  const a = opts.authentication;
  if (!a && ctx.clientCa === undefined) return alwaysAdmin;
  const jwt = jwtAuthenticators(a ?? {}, ctx);
  let anonymous: boolean | { paths: ReadonlySet<string> } = a?.anonymousAuth ?? true;
  if (jwt.anonymous) anonymous = !jwt.anonymous.enabled ? false : jwt.anonymous.conditions?.length ? { paths: new Set(jwt.anonymous.conditions.map((c) => c.path)) } : true;
  // kube-apiserver turns anonymous off while the authorizer allows everything, and its default
  // roles open only the health and version paths to anonymous requests: here they reach those.
  if (anonymous && allowsEverything(opts)) {
    if (a?.anonymousAuth || jwt.anonymous) ctx.log(`AnonymousAuth is not allowed with the AlwaysAllow authorizer: anonymous requests reach only ${[...PUBLIC_PATHS].join(', ')}. You should use a different authorizer`);
    // Paths the configuration names stay limited to the public ones.
    anonymous = { paths: anonymous === true ? PUBLIC_PATHS : new Set([...anonymous.paths].filter((p) => PUBLIC_PATHS.has(p))) };
  }
  const clientCa = ctx.clientCa ?? (a?.clientCaFile === undefined ? undefined : readClientCa(a.clientCaFile));
  const cas = ctx.clientCas;
  const built = newAuthenticator({
    clientCAs: cas ? () => cas.client.certificates() : clientCa === undefined ? undefined : parseCertificates(clientCa, '--client-ca-file'),
    clientCaTrustHandshake: cas?.handshakeIsOwn,
    requestHeader: requestHeaderConfig(a?.requestHeader, cas),
    tokenAuthFile: a?.tokenAuthFile,
    serviceAccounts: ctx.serviceAccounts,
    legacyServiceAccounts: ctx.legacyServiceAccounts,
    apiAudiences: ctx.serviceAccounts?.apiAudiences ?? a?.apiAudiences,
    anonymous,
    credentialIdKey: credentialIdKey(ctx),
    warn: ctx.log,
    tokenAuthenticators: jwt.tokens,
    tokenWebhook: tokenWebhook(a?.tokenWebhook, ctx.serviceAccounts?.apiAudiences ?? a?.apiAudiences ?? [], ctx),
    tokenCache: { successTtlMs: a?.tokenCacheTtlMs, stats: ctx.metrics?.tokenCache },
    bootstrapTokens: bootstrapTokens(a, ctx),
  });
  return { ...logRejections(ctx.log, built), reviewToken: built.reviewToken };
}

/** `--enable-bootstrap-token-auth`: tokens of the system namespace's bootstrap token Secrets. */
function bootstrapTokens(a: ServerOptions['authentication'], ctx: AuthenticatorContext): TokenAuthenticator | undefined {
  const objects = ctx.objects;
  if (!a?.enableBootstrapTokenAuth || !objects) return undefined;
  return bootstrapTokenAuthenticator({ secret: (name) => objects('', 'secrets', ctx.naming.systemNamespace, name), secretType: secretTypes(ctx.naming).bootstrapToken });
}

const credentialIdKey = (ctx: AuthenticatorContext) => `authentication.${ctx.naming.labelDomain}/credential-id`;

/**
 * The JWT authenticators of `--oidc-*` or of `--authentication-config` (never both), and the
 * anonymous section of the file. Throws a start-up error of one line on a bad flag or file.
 */
function jwtAuthenticators(a: NonNullable<ServerOptions['authentication']>, ctx: AuthenticatorContext): { tokens: TokenAuthenticator[]; anonymous?: AnonymousConfig } {
  const oidc = a.oidc;
  const oidcSet = oidc !== undefined && Object.values(oidc).some((v) => v !== undefined);
  const validation: ValidationContext = {
    reservedDomains: ctx.naming.profile === 'kubernetes' ? ['k8s.io', 'kubernetes.io'] : [ctx.naming.annotationDomain],
    reservedFor: ctx.naming.profile === 'kubernetes' ? 'Kubernetes' : ctx.naming.product,
  };
  const refresh = a.jwtKeyRefreshIntervalMs;
  const jwtOptions = { credentialIdKey: credentialIdKey(ctx), log: ctx.log, refreshIntervalMs: refresh, discoveryRetryMs: refresh };
  if (a.authenticationConfig !== undefined) {
    if (oidcSet) throw new Error('authentication-config file and oidc-* flags are mutually exclusive');
    const { decodeAuthenticationConfiguration, validateAuthenticationConfiguration, ALLOWED_SIGNING_ALGS } = optional().jwtConfig;
    const { reloadingJwtAuthenticators } = optional().jwtSet;
    const path = a.authenticationConfig;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new Error(`failed to load authentication configuration from file ${JSON.stringify(path)}: ${(e as Error).message}`);
    }
    const group = ctx.naming.group('apiserver.config');
    let config;
    try {
      config = decodeAuthenticationConfiguration(text, group);
    } catch (e) {
      throw new Error(`failed to load authentication configuration from file ${JSON.stringify(path)}: ${(e as Error).message}`);
    }
    if (config.anonymous && a.anonymousAuth !== undefined) throw new Error('anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
    const v = validateAuthenticationConfiguration(config, validation);
    if (v.errors.length) throw new Error(`invalid authentication configuration: ${aggregate(v.errors.map((e) => e.message))}`);
    for (const j of config.jwt ?? []) if (j.issuer.egressSelectorType) throw new Error(`oidc: egress lookup required with egress selector type ${JSON.stringify(j.issuer.egressSelectorType)}`);
    const reloading = reloadingJwtAuthenticators({
      path,
      initialText: text,
      initial: v.compiled,
      anonymous: config.anonymous,
      group,
      validation,
      // Every known algorithm is accepted with the file, as kube-apiserver does.
      jwt: { ...jwtOptions, signingAlgs: ALLOWED_SIGNING_ALGS },
      log: ctx.log,
      stats: ctx.metrics?.configReload,
    });
    ctx.onClose?.(() => reloading.close());
    return { tokens: [reloading], anonymous: config.anonymous };
  }
  if (!oidcSet) return { tokens: [] };
  if (!oidc.issuerUrl || !oidc.clientId) throw new Error('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
  const { ALLOWED_SIGNING_ALGS, compileJwtAuthenticator, jwtFromOidcFlags } = optional().jwtConfig;
  const { newJwtAuthenticator } = optional().jwt;
  const { jwtUnion } = optional().jwtSet;
  let ca: string | undefined;
  if (oidc.caFile !== undefined) {
    try {
      ca = readFileSync(oidc.caFile, 'utf8');
    } catch (e) {
      throw new Error(`--oidc-ca-file: ${(e as Error).message}`);
    }
  }
  const signingAlgs = oidc.signingAlgs ?? ['RS256'];
  for (const alg of signingAlgs) if (!ALLOWED_SIGNING_ALGS.includes(alg)) throw new Error(`oidc: unsupported signing alg: ${JSON.stringify(alg)}`);
  const entry = jwtFromOidcFlags({ ...oidc, issuerUrl: oidc.issuerUrl, clientId: oidc.clientId, ca });
  const r = compileJwtAuthenticator(entry, validation, 'jwt[0]');
  if (!r.compiled) throw new Error(`invalid authentication configuration: ${aggregate(r.errors.map((e) => e.message))}`);
  const authenticator = newJwtAuthenticator(r.compiled, { ...jwtOptions, signingAlgs });
  ctx.onClose?.(() => authenticator.close());
  return { tokens: [jwtUnion([authenticator])] };
}

/**
 * The token-review webhook of `--authentication-token-webhook-*`, or undefined when no config file
 * is given. Throws a start-up error of one line on a missing or unusable file or a bad version.
 */
function tokenWebhook(o: TokenWebhookOptions | undefined, implicitAudiences: readonly string[], ctx: AuthenticatorContext): TokenAuthenticator | undefined {
  if (!o?.configFile) return undefined;
  const { WEBHOOK_VERSIONS, webhookTokenAuthenticator } = optional().tokenWebhook;
  const { loadKubeconfig } = optional().kubeconfig;
  const { webhookClient } = optional().webhookClient;
  const version = o.version ?? 'v1beta1';
  if (!(WEBHOOK_VERSIONS as readonly string[]).includes(version)) throw new Error(`unsupported authentication webhook version ${JSON.stringify(version)}, supported versions are "v1", "v1beta1"`);
  let config;
  try {
    config = loadKubeconfig(o.configFile);
  } catch (e) {
    throw new Error(`--authentication-token-webhook-config-file: ${(e as Error).message}`);
  }
  const client = webhookClient(config, { timeoutMs: o.requestTimeoutMs, initialBackoffMs: o.retryInitialBackoffMs });
  const authenticator = webhookTokenAuthenticator({
    client,
    group: ctx.naming.group('authentication'),
    version,
    implicitAudiences,
    cacheTtlMs: o.cacheTtlMs ?? 2 * 60_000,
  });
  ctx.onClose?.(() => authenticator.close());
  return authenticator;
}

/** As Go's error aggregate prints several errors. */
const aggregate = (messages: readonly string[]) => (messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);

/** A rejected credential is logged, as kube-apiserver logs it: why, never the credential itself. */
function logRejections(log: (message: string) => void, inner: Authenticator): Authenticator {
  const logged = (r: AuthenticationResult): AuthenticationResult => {
    if (r.kind === 'rejected') log(`Unable to authenticate the request: ${r.message}`);
    return r;
  };
  const known = inner.known;
  return {
    authenticate: async (req) => logged(await inner.authenticate(req)),
    ...(known && {
      known(req: IncomingMessage) {
        const r = known(req);
        return r && logged(r);
      },
    }),
  };
}

/**
 * The authenticating proxy the `--requestheader-*` flags describe: none without
 * `--requestheader-client-ca-file`, as kube-apiserver. Its CAs are the followed file over HTTPS,
 * read once otherwise (no certificate reaches a plain HTTP server anyway).
 */
function requestHeaderConfig(r: NonNullable<ServerOptions['authentication']>['requestHeader'], cas: ClientCas | undefined): RequestHeaderConfig | undefined {
  if (r?.clientCaFile === undefined) return undefined;
  const usernameHeaders = requestHeaderNames('requestheader-username-headers', r.usernameHeaders);
  const groupHeaders = requestHeaderNames('requestheader-group-headers', r.groupHeaders);
  const extraHeaderPrefixes = requestHeaderNames('requestheader-extra-headers-prefix', r.extraHeadersPrefix);
  const uidHeaders = requestHeaderNames('requestheader-uid-headers', r.uidHeaders);
  const allowedNames = requestHeaderNames('requestheader-allowed-names', r.allowedNames);
  let source = cas?.requestHeader;
  if (!source) {
    let pem: string;
    try {
      pem = readFileSync(r.clientCaFile, 'utf8');
    } catch (e) {
      throw new Error(`--requestheader-client-ca-file: ${(e as Error).message}`);
    }
    source = staticCa(pem, `--requestheader-client-ca-file ${r.clientCaFile}`);
  }
  const ca = source;
  return { roots: () => ca.certificates(), trustHandshake: cas?.handshakeIsOwn, allowedNames, usernameHeaders, groupHeaders, extraHeaderPrefixes, uidHeaders };
}

function readClientCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--client-ca-file: ${(e as Error).message}`);
  }
}

/** The checked `--authorization-mode` list (the default when none is given), or the types `--authorization-config` names. */
export function authorizationModes(opts: Pick<ServerOptions, 'authorization'> & { naming?: ServerOptions['naming'] }): AuthorizationMode[] {
  const file = authorizationConfigFile(opts);
  if (file) return parseAuthorizationModes([...new Set(file.config.authorizers.map((a) => a.type))]);
  const w = opts.authorization?.webhook;
  const modes = parseAuthorizationModes(opts.authorization?.modes ?? DEFAULT_AUTHORIZATION_MODES);
  checkPolicyFile(modes, opts.authorization?.policyFile);
  if (modes.includes('Webhook') && !w?.configFile) throw new Error("authorization-mode Webhook's authorization config file not passed");
  if (w?.configFile && !modes.includes('Webhook')) throw new Error('cannot specify --authorization-webhook-config-file without mode Webhook');
  return modes;
}

// --- `--authorization-config` and the Webhook mode's flags -------------------------------------
const configFiles = new WeakMap<object, { text: string; config: AuthorizationConfig }>();

/** The configuration file, read and validated once per options; undefined without the flag. */
function authorizationConfigFile(opts: Pick<ServerOptions, 'authorization'> & { naming?: ServerOptions['naming'] }): { text: string; config: AuthorizationConfig } | undefined {
  const a = opts.authorization;
  if (a?.configFile === undefined) return undefined;
  const known = configFiles.get(a);
  if (known) return known;
  if (a.modes !== undefined || (a.webhook && Object.values(a.webhook).some((v) => v !== undefined)))
    throw new Error('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
  const loaded = optional().configFile.loadAuthorizationConfig(a.configFile, namingProfile(opts.naming ?? 'orch').group('apiserver.config'));
  configFiles.set(a, loaded);
  return loaded;
}

export interface AuthorizerContext {
  naming: Naming;
  log: (message: string) => void;
  /** Registers what must stop with the server (the file watch, the webhooks' connections). */
  onClose?: (close: () => void) => void;
  /** Where reloads of `--authorization-config` report. */
  configReload?: { reloaded(ok: boolean): void };
  /** Where the authorization webhooks report their calls and match conditions. */
  webhookMetrics?: AuthorizationWebhookMetrics;
  /** Where the configuration file's authorizers report their allows and denies. */
  decided?(type: string, name: string, decision: 'allowed' | 'denied'): void;
}

/** The Webhook mode of the flags: a webhook with no match conditions whose failures are no opinion. */
function flagWebhook(opts: Pick<ServerOptions, 'authorization'>, ctx: AuthorizerContext): Authorizer | undefined {
  const w = opts.authorization?.webhook;
  if (!w?.configFile) return undefined;
  const { SAR_VERSIONS, webhookAuthorizer } = optional().authorizationWebhook;
  const { loadKubeconfig } = optional().kubeconfig;
  const { webhookClient } = optional().webhookClient;
  const version = w.version ?? 'v1beta1';
  if (!(SAR_VERSIONS as readonly string[]).includes(version)) throw new Error(`unsupported webhook authorizer version ${JSON.stringify(version)}, supported versions are "v1", "v1beta1"`);
  let config;
  try {
    config = loadKubeconfig(w.configFile);
  } catch (e) {
    throw new Error(`--authorization-webhook-config-file: ${(e as Error).message}`);
  }
  const authorizer = webhookAuthorizer({
    name: 'webhook',
    client: webhookClient(config, { timeoutMs: w.timeoutMs, onAttempt: ctx.webhookMetrics && ((result, seconds) => ctx.webhookMetrics!.evaluation('webhook', result, seconds)) }),
    metrics: ctx.webhookMetrics,
    group: ctx.naming.group('authorization'),
    version: version as SarVersion,
    authorizedTtlMs: w.authorizedTtlMs ?? 5 * 60_000,
    unauthorizedTtlMs: w.unauthorizedTtlMs ?? 30_000,
    failurePolicy: 'NoOpinion',
    log: ctx.log,
  });
  ctx.onClose?.(() => authorizer.close());
  return authorizer;
}

/** The authorizer `--authorization-config` describes, reloaded as its file changes. */
function fileAuthorizer(opts: Pick<ServerOptions, 'authorization'>, file: { text: string; config: AuthorizationConfig }, rbac: Authorizer | undefined, ctx: AuthorizerContext, node?: Authorizer): Authorizer {
  const a = opts.authorization!;
  const reloading = optional().configFile.reloadingAuthorizer({
    path: a.configFile!,
    group: ctx.naming.group('apiserver.config'),
    initialText: file.text,
    initial: file.config,
    authorizationGroup: ctx.naming.group('authorization'),
    first: privilegedGroups,
    builtIn: (type) => modeChain(parseAuthorizationModes([type]), { alwaysAllow, rbac, node }),
    log: ctx.log,
    stats: ctx.configReload,
    pollIntervalMs: a.configReloadIntervalMs,
    inCluster: a.inClusterServiceAccount,
    webhookMetrics: ctx.webhookMetrics,
    decided: ctx.decided,
  });
  ctx.onClose?.(() => reloading.close());
  return reloading;
}

/** Whether every request is allowed (kube-apiserver then turns anonymous requests off). */
function allowsEverything(opts: Pick<ServerOptions, 'authorizer' | 'authorization'>): boolean {
  return opts.authorizer ? opts.authorizer === alwaysAllow : authorizationModes(opts).includes('AlwaysAllow');
}

/**
 * The embedder's authorizer, or the chain of the modes (`rbac` is the RBAC authorizer when RBAC is
 * one, `node` the Node authorizer when Node is).
 */
export function buildAuthorizer(opts: Pick<ServerOptions, 'authorizer' | 'authorization' | 'naming'>, rbac?: Authorizer, ctx?: AuthorizerContext, node?: Authorizer): Authorizer {
  if (opts.authorizer) return opts.authorizer;
  const modes = authorizationModes(opts);
  const context = ctx ?? { naming: namingProfile(opts.naming ?? 'orch'), log: () => {} };
  const file = authorizationConfigFile(opts);
  if (file) return fileAuthorizer(opts, file, rbac, context, node);
  if (modes.length === 1 && modes[0] === 'AlwaysAllow') return alwaysAllow;
  // ABAC: the policy file, read once (kube-apiserver does not reload it).
  const policyFile = opts.authorization?.policyFile;
  const abac = modes.includes('ABAC') && policyFile ? optional().abac.abacFromFile(policyFile, context.naming, context.log) : undefined;
  return modeChain(modes, { alwaysAllow, rbac, node, abac, webhook: modes.includes('Webhook') ? flagWebhook(opts, context) : undefined });
}

/**
 * The audit sink: the embedder's, or the policy file's with the log backend (kube-apiserver audits
 * only with a policy and a backend; a policy without a backend, or a backend without a policy, is
 * a start-up error here, not a silent no-op). `onClose` is given what closes the log.
 */
export async function buildAudit(
  opts: Pick<ServerOptions, 'audit' | 'auditPolicyFile' | 'auditLog' | 'auditWebhook'>,
  naming: Naming,
  log: (message: string) => void,
  onClose: (close: () => unknown) => void,
): Promise<AuditSink> {
  if (opts.audit) return opts.audit;
  const logPath = opts.auditLog?.path;
  const webhookFile = opts.auditWebhook?.configFile;
  if (!opts.auditPolicyFile && !logPath && !webhookFile) return noAudit;
  if (!opts.auditPolicyFile) throw new Error('--audit-log-path and --audit-webhook-config-file need --audit-policy-file: without a policy nothing is audited');
  if (!logPath && !webhookFile) throw new Error('--audit-policy-file needs a backend: --audit-log-path or --audit-webhook-config-file');
  // Audit's modules are loaded only by a start that audits.
  const [{ readAuditPolicy }, { auditLogBackend }, { policyAudit }, { auditWebhookBackend }] = await Promise.all([
    import('./audit/policy.ts'),
    import('./audit/log-backend.ts'),
    import('./audit/audit.ts'),
    import('./audit/webhook-backend.ts'),
  ]);
  const policy = readAuditPolicy(opts.auditPolicyFile, ['audit.k8s.io', naming.group('audit')]);
  const apiVersion = `${naming.group('audit')}/v1`;
  // Each backend answers false when it lost an event and its mode is blocking-strict (a blocking webhook: once sent).
  const backends: ((line: Buffer, length: number) => boolean | Promise<boolean>)[] = [];
  if (webhookFile) {
    const webhook = auditWebhookBackend({ ...opts.auditWebhook, configFile: webhookFile }, apiVersion, log);
    onClose(() => webhook.close());
    backends.push((line, length) => webhook.write(line.toString('utf8', 0, length)));
  }
  if (logPath) {
    const file = auditLogBackend({ ...opts.auditLog, path: logPath }, log);
    onClose(() => file.close());
    backends.push((line, length) => file.writeBytes(line, length));
  }
  return policyAudit({
    policy,
    write: (line, length) => {
      let stored = true;
      let waiting: Promise<boolean>[] | undefined;
      for (const b of backends) {
        const r = b(line, length);
        if (typeof r === 'boolean') stored = r && stored;
        else (waiting ??= []).push(r);
      }
      return waiting ? Promise.all(waiting).then((all) => stored && all.every(Boolean)) : stored;
    },
    apiVersion,
    secretResources: new Set(['/secrets', '/serviceaccounts/token', `${naming.group('authentication')}/tokenreviews`]),
  });
}

/** An object of the stores (undefined when absent or not served). */
export type ObjectGetter = (group: string, resource: string, namespace: string | undefined, name: string) => Promise<KObject | undefined>;

/** Objects a service-account or bootstrap token names, read from the stores once they exist (before: none). */
export function storeLookups(): { getter: ServiceAccountGetter; object: ObjectGetter; bind(stores: readonly RegistryStore[]): void } {
  let stores: readonly RegistryStore[] = [];
  const object: ObjectGetter = async (group, resource, namespace, name) => {
    const store = stores.find((s) => s.def.group === group && s.def.resource === resource);
    if (!store) return undefined;
    try {
      return await store.get(store.def.namespaced ? namespace : undefined, name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  };
  const live = async (group: string, resource: string, namespace: string | undefined, name: string): Promise<LiveObject | undefined> => {
    const obj = await object(group, resource, namespace, name);
    if (!obj) return undefined;
    const deletion = obj.metadata.deletionTimestamp;
    return { uid: obj.metadata.uid ?? '', deleting: deletion !== undefined && Date.parse(deletion) <= Date.now() };
  };
  return {
    object,
    getter: {
      serviceAccount: (namespace, name) => live('', 'serviceaccounts', namespace, name),
      bound: (kind, namespace, name) => live('', kind === 'Pod' ? 'pods' : kind === 'Secret' ? 'secrets' : 'nodes', namespace, name),
    },
    bind(s) {
      stores = s;
    },
  };
}
