// What an embedder (or the command line) configures, and what it gets back from startServer.

import type { AuditLogOptions } from './audit/log-backend.ts';
import type { AuditWebhookOptions } from './audit/webhook-backend.ts';
import type { Naming, NamingProfileName } from '../naming.ts';
import type { Authenticator } from '../auth/authn/authenticator.ts';
import type { Authorizer } from '../auth/authz/authorizer.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { AuditSink } from './filters.ts';
import type { KindDefinition } from '../registry/definition.ts';

/**
 * The settings of {@link startServer}, one for each command-line flag (`--secure-port` is `port`,
 * `--data-dir` is `dataDir`, …). Every one is optional: `startServer()` serves HTTPS on a free
 * loopback port with throw-away storage, client-certificate authentication and `Node,RBAC`
 * authorization, and writes an administrator's kubeconfig.
 */
export interface ServerOptions {
  /** Where the server listens; default 127.0.0.1 (loopback), as on the command line. */
  bindAddress?: string;
  /** The port it serves on (HTTPS, or plain HTTP with `insecureServing`); 0 (default) picks a free one. */
  port?: number;
  /** Where the embedded store keeps its data; absent: a throw-away directory removed on close. */
  dataDir?: string;
  /**
   * CustomResourceDefinition files or directories of them (`.yaml`, `.yml`, `.json`; several
   * documents a file) to install at start (`--crd-dir`): the start returns once every one is
   * Established, as envtest's CRDDirectoryPaths. A bad file is a start-up error.
   */
  crds?: readonly string[];
  storageBackend?: 'lmdb' | 'etcd3';
  etcdServers?: string[];
  /** How long one etcd request may take before it fails (default 10 s); tests of a hung etcd shorten it. */
  etcdRequestTimeoutMs?: number;
  featureGates?: string | Record<string, boolean>;
  /** `--runtime-config` pairs: `coordination.orch.io/v1=false`. */
  runtimeConfig?: string;
  watchCacheRetentionMs?: number;
  /**
   * Test knob: each watch cache keeps event values up to this many bytes (default 64 MiB), so a
   * test reaches the bound with a few large writes.
   */
  watchCacheMaxEventBytes?: number;
  /** How long the embedded store keeps history (resume, Exact reads, continue tokens); default 5 min. */
  storageRetentionMs?: number;
  /**
   * Test knob: the embedded store keeps history values up to about this many bytes (default
   * 128 MiB), so a test proves the bound with a few large writes instead of hundreds.
   */
  storageMaxHistoryBytes?: number;
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  requestTimeoutMs?: number;
  /** While shutting down, /readyz fails for this long before the listener closes. */
  shutdownDelayMs?: number;
  /** Watches without timeoutSeconds end after a random time in [min, 2·min) (default 1800 s). */
  minRequestTimeoutSeconds?: number;
  /** An ended watch whose client does not take what is left is cut after this long (default 5 s). */
  watchEndFlushMs?: number;
  /** How often an idle watch that allows bookmarks gets one (default 60 s, as kube-apiserver's). */
  watchBookmarkIntervalMs?: number;
  naming?: NamingProfileName;
  /**
   * HTTPS (the default): its certificates and TLS settings. Absent: a CA, a serving certificate
   * and the administrator's client certificate are generated (kept in `<dataDir>/pki`, or made
   * once per process without a data directory and kept in the user's certificate cache; see
   * `SecureServingOptions.certificateCache`) and the admin kubeconfig is written.
   */
  secureServing?: SecureServingOptions;
  /**
   * Plain HTTP instead of HTTPS (`--insecure-port`): nothing is encrypted, and unless
   * `authentication` names authenticators every request is an administrator. Refused on an
   * address other than loopback unless `allowRemote` (`--insecure-bind-address`) insists.
   */
  insecureServing?: InsecureServingOptions;
  /**
   * The authenticators of the flags. Absent: over HTTPS, client certificates of the server's CA
   * (and anonymous, see `anonymousAuth`); over plain HTTP, every request an administrator.
   */
  authentication?: AuthenticationOptions;
  /** An authenticator of the embedder's own, in place of those `authentication` describes. */
  authenticator?: Authenticator;
  authorizer?: Authorizer;
  /** `--authorization-mode` and what RBAC needs; ignored when `authorizer` is given. */
  authorization?: AuthorizationOptions;
  /** An audit sink of the embedder's own, in place of what `auditPolicyFile` and `auditLog` describe. */
  audit?: AuditSink;
  /** `--audit-policy-file`: the Policy (audit.orch.io/v1 or audit.k8s.io/v1) deciding what is audited; without it nothing is. */
  auditPolicyFile?: string;
  /** The log backend (`--audit-log-*`): where audit events are written, one JSON line each. */
  auditLog?: AuditLogOptions;
  /** `--encryption-provider-config`: an EncryptionConfiguration file; the resources it names are encrypted at rest. */
  encryptionProviderConfig?: string;
  /** The webhook backend (`--audit-webhook-*`): events are POSTed in batches as EventLists. */
  auditWebhook?: AuditWebhookOptions;
  /** How often the namespace controller looks for terminating namespaces. */
  namespaceSyncIntervalMs?: number;
  /**
   * `--service-cluster-ip-range`: one CIDR or an IPv4,IPv6 pair; the default ServiceCIDR
   * (`kubernetes`) is created from it at start (default 10.0.0.0/24).
   */
  serviceClusterIpRange?: string;
  /** `--event-ttl`: how long an event lives after its last write (default 1 h). */
  eventTtlMs?: number;
  /**
   * Definitions served beside the built-in ones, exactly as they are (`--runtime-config` applies
   * to them too). Not on the command line: tests use it to serve kinds of their own.
   */
  extraKinds?: readonly KindDefinition[];
  /** Where internal errors are reported (default: stderr). */
  log?: (message: string) => void;
}

export interface AuthorizationOptions {
  /**
   * `--authorization-mode`: AlwaysAllow, AlwaysDeny, ABAC, Node, RBAC, Webhook, in the order they
   * are asked (default Node,RBAC). Members of system:masters are always allowed.
   */
  modes?: string[];
  /** `--authorization-policy-file`: the ABAC policies, one JSON object a line (with mode ABAC only). */
  policyFile?: string;
  /** The `--authorization-webhook-*` flags: the Webhook mode's service. */
  webhook?: AuthorizationWebhookOptions;
  /**
   * `--authorization-config`: an AuthorizationConfiguration file (the authorizers in order, webhooks
   * with their settings), reloaded on change. Not combinable with `modes` nor `webhook`.
   */
  configFile?: string;
  /** How often the configuration file is read again besides change events (default 1 min). Shorter in tests. */
  configReloadIntervalMs?: number;
  /**
   * Where webhooks of `connectionInfo.type: InClusterConfig` read the pod's service-account `token`
   * and `ca.crt` (default /var/run/secrets/kubernetes.io/serviceaccount), and how long a token read
   * is used (default 50 s, as client-go). Not on the command line: it exists because those paths
   * are a pod's, which a server run elsewhere (a test) does not have.
   */
  inClusterServiceAccount?: { dir?: string; tokenRereadMs?: number };
}

export interface AuthorizationWebhookOptions {
  /** `--authorization-webhook-config-file`: kubeconfig-format file of the service (its server and CA; the server's client certificate). */
  configFile?: string;
  /** `--authorization-webhook-version`: the SubjectAccessReview version sent (default v1beta1). */
  version?: string;
  /** `--authorization-webhook-cache-authorized-ttl` (default 5 min; 0 keeps none). */
  authorizedTtlMs?: number;
  /** `--authorization-webhook-cache-unauthorized-ttl` (default 30 s; 0 keeps none). */
  unauthorizedTtlMs?: number;
  /** Each call's timeout (default 30 s, kube's). Not on the command line: tests shorten it. */
  timeoutMs?: number;
}

/** HTTPS: the serving certificate and the TLS versions and ciphers offered (the `--tls-*` and `--cert-dir` flags). */
export interface SecureServingOptions {
  /**
   * `--cert-dir`: where generated certificates are kept and reused on restart. Default
   * `<data dir>/pki`; with no data directory, certificates made once per process and kept in
   * `certificateCache`.
   */
  certDir?: string;
  /**
   * Where a server with neither a certificate directory nor a data directory keeps the CA,
   * serving and administrator pairs it made, for the next such server of the same user to reuse
   * rather than make (a first start then loads no certificate library): one file, mode 0600, in
   * a directory of mode 0700 that this user owns. A cache that is anything else, or that holds
   * anything but a valid set, is not used. The service-account signing key is never kept there.
   * Default `$XDG_CACHE_HOME/orch-apiserver/pki` (`~/.cache/orch-apiserver/pki`); `false`:
   * certificates made once per process and kept nowhere.
   */
  certificateCache?: string | false;
  /** `--tls-cert-file` / `--tls-private-key-file`: the serving pair (PEM), in place of a generated one. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** `--tls-min-version`: VersionTLS12 (default) or VersionTLS13 (Go's names). */
  tlsMinVersion?: string;
  /** `--tls-cipher-suites`: IANA names, as kube-apiserver takes them. */
  tlsCipherSuites?: string[];
  /** `--advertise-address`: put in the generated serving certificate and the admin kubeconfig. */
  advertiseAddress?: string;
}

export interface InsecureServingOptions {
  /** Listen on an address other than loopback all the same. */
  allowRemote?: boolean;
}

/** How requests are authenticated: client certificates, an authenticating proxy, tokens (the `--client-ca-file`, `--requestheader-*`, `--token-auth-file`, `--service-account-*`, `--oidc-*` and webhook flags). */
export interface AuthenticationOptions {
  /** `--client-ca-file`: CAs of client certificates. Over HTTPS the default is the server's generated CA. */
  clientCaFile?: string;
  /** `--token-auth-file`: CSV of `token,user,uid[,"group1,group2"]`. */
  tokenAuthFile?: string;
  /**
   * `--api-audiences`: the audiences of the server's own tokens (and of a TokenReview that names
   * none); default the service-account issuers.
   */
  apiAudiences?: string[];
  /**
   * `--anonymous-auth` (default true): requests with no credential are `system:anonymous`. While
   * the authorizer allows everything (the built-in default), only the public health and version
   * paths (`/healthz`, `/livez`, `/readyz`, `/version`) are open to them: kube-apiserver turns
   * anonymous off with that authorizer, and its default roles open those paths to anonymous.
   */
  anonymousAuth?: boolean;
  /** Service-account tokens: what signs them (TokenRequest) and what they are verified with. */
  serviceAccounts?: ServiceAccountOptions;
  /** The `--oidc-*` flags: one JWT authenticator (OpenID Connect ID tokens). */
  oidc?: OidcOptions;
  /**
   * `--authentication-config`: an AuthenticationConfiguration file (JWT authenticators, anonymous
   * with path conditions), reloaded on change. Not combinable with `oidc`, nor with
   * `anonymousAuth` when the file sets `anonymous`.
   */
  authenticationConfig?: string;
  /**
   * The least time between two fetches of a JWT issuer's key set (a token with an unknown key
   * fetches it again) and between two failed discoveries; default 10 s. Shorter in tests.
   */
  jwtKeyRefreshIntervalMs?: number;
  /** The authenticating proxy (`--requestheader-*`). */
  requestHeader?: RequestHeaderOptions;
  /**
   * How often at most the client CA files (`--client-ca-file`, `--requestheader-client-ca-file`)
   * go unread: they are read again when they change, and at least this often (default one minute).
   */
  caReloadIntervalMs?: number;
  /** Webhook token authentication: bearer tokens reviewed by a remote service, the last token authenticator. */
  tokenWebhook?: TokenWebhookOptions;
  /**
   * How long a bearer token that authenticated is remembered (default 10 s, kube-apiserver's fixed
   * value; 0: never). Not on the command line: tests shorten it.
   */
  tokenCacheTtlMs?: number;
  /**
   * `--enable-bootstrap-token-auth`: bootstrap tokens (`<id>.<secret>`, Secrets
   * `bootstrap-token-<id>` of the system namespace) authenticate, and the token cleaner and the
   * bootstrap signer run; `cluster-info` is created in the public namespace when missing.
   */
  enableBootstrapTokenAuth?: boolean;
}

/**
 * The authenticating proxy, as kube-apiserver's `--requestheader-*` flags: requests on a connection
 * whose client certificate verifies against `clientCaFile` (and has an allowed Common Name) are
 * the user its headers name. Without `clientCaFile`, or without username headers, no proxy counts.
 */
export interface RequestHeaderOptions {
  /** `--requestheader-client-ca-file`: the CAs of the proxy's client certificate, followed as it changes. */
  clientCaFile?: string;
  /** `--requestheader-allowed-names`: the Common Names a proxy may have; empty, any. */
  allowedNames?: string[];
  /** `--requestheader-username-headers`: in order, the first with a value names the user (X-Remote-User is usual). */
  usernameHeaders?: string[];
  /** `--requestheader-group-headers`: every value is a group (X-Remote-Group is usual). */
  groupHeaders?: string[];
  /** `--requestheader-extra-headers-prefix`: headers with these prefixes give extras (X-Remote-Extra- is usual). */
  extraHeadersPrefix?: string[];
  /** `--requestheader-uid-headers`: in order, the first with a value is the uid (X-Remote-Uid is usual). */
  uidHeaders?: string[];
}

export interface TokenWebhookOptions {
  /**
   * `--authentication-token-webhook-config-file`: a kubeconfig-format file; its cluster is the
   * service (`server`, its CA), its user the server's credential there (client certificate and key).
   */
  configFile: string;
  /** `--authentication-token-webhook-cache-ttl`: how long answers are kept (default 2 min; 0 keeps none). */
  cacheTtlMs?: number;
  /** `--authentication-token-webhook-version`: the TokenReview version sent (default v1beta1). */
  version?: 'v1' | 'v1beta1';
  /** Each call's timeout, the answer included (default 30 s). */
  requestTimeoutMs?: number;
  /** The wait before the first retry of a failed call (default 500 ms; kube's backoff then grows it 1.5 times, five attempts in all). */
  retryInitialBackoffMs?: number;
}

export interface ServiceAccountOptions {
  /**
   * `--service-account-issuer` (repeatable): tokens of each are accepted, the first names the
   * tokens this server signs. Default `https://kubernetes.default.svc.cluster.local` (the orch
   * profile: `https://orch.default.svc.cluster.local`).
   */
  issuers?: string[];
  /** `--service-account-signing-key-file`: default, a key generated with the certificates (`<cert dir>/sa.key`). */
  signingKeyFile?: string;
  /** `--service-account-key-file` (repeatable): more keys (PEM, public or private) tokens are verified with. */
  keyFiles?: string[];
  /** `--service-account-lookup` (default true): a token of an account (or bound object) that is gone is refused. */
  lookup?: boolean;
  /** `--service-account-max-token-expiration`: the longest lifetime a requested token gets. */
  maxTokenExpirationSeconds?: number;
}

export interface OidcOptions {
  /** `--oidc-issuer-url`: https only; where discovery and the keys are fetched. */
  issuerUrl?: string;
  /** `--oidc-client-id`: the audience every token must carry. */
  clientId?: string;
  /** `--oidc-username-claim` (default `sub`). */
  usernameClaim?: string;
  /** `--oidc-username-prefix`: default `<issuer>#` unless the claim is `email`; `-` for none. */
  usernamePrefix?: string;
  /** `--oidc-groups-claim`: a string or a list of strings. */
  groupsClaim?: string;
  /** `--oidc-groups-prefix`. */
  groupsPrefix?: string;
  /** `--oidc-required-claim` (repeatable): `key=value` pairs every token must hold. */
  requiredClaims?: Record<string, string>;
  /** `--oidc-ca-file`: the CA of the issuer's serving certificate (default: system roots). */
  caFile?: string;
  /** `--oidc-signing-algs` (default RS256). */
  signingAlgs?: string[];
}

/** A started server, as {@link startServer} returns it. */
export interface RunningServer {
  /** Where clients reach it (loopback when it listens on every interface). */
  url: string;
  /** Where it listens: the bound address and port (`http://0.0.0.0:8080`). */
  listening: string;
  /** The port it listens on (the one picked when `port` was 0). */
  port: number;
  /** The naming profile it serves (API group suffix, wire-level names). */
  naming: Naming;
  /** The feature gates in force, after defaults and `featureGates`. */
  featureGates: FeatureGates;
  /** Over HTTPS (the default): the administrator's kubeconfig (client certificate in `system:masters`), its text and where it is written. */
  kubeconfig?: string;
  kubeconfigPath?: string;
  /** Over HTTPS: the CA (PEM) that issued the serving certificate, for clients to trust. */
  ca?: string;
  /** Graceful stop: readyz fails, watches end, in-flight requests finish, storage closes. */
  close(): Promise<void>;
}
