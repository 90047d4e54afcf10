// The command line: kube-apiserver style flags (`--name=value` or `--name value`) mapped onto
// ServerOptions, and SIGTERM/SIGINT handled as a graceful shutdown.

import { parseDuration } from './durations.ts';
import { startServer, type RunningServer, type ServerOptions } from './server.ts';
import { AUDIT_LOG_MODES, type AuditLogMode } from './audit/log-backend.ts';
import { AUDIT_WEBHOOK_MODES, type AuditWebhookMode } from './audit/webhook-backend.ts';

interface FlagSpec {
  help: string;
  /** A boolean flag: `--name` alone means true. */
  bool?: true;
  apply(o: ServerOptions, v: string): void;
}

/** As Go's strconv.ParseBool. */
const bool = (name: string, v: string): boolean => {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  throw new Error(`invalid argument ${JSON.stringify(v)} for "--${name}" flag: parse error`);
};

/** The TLS settings, made on first use of one of their flags. */
const secure = (o: ServerOptions) => (o.secureServing ??= {});
const authn = (o: ServerOptions) => (o.authentication ??= {});
const sa = (o: ServerOptions) => (authn(o).serviceAccounts ??= {});
const oidc = (o: ServerOptions) => (authn(o).oidc ??= {});
const rh = (o: ServerOptions) => (authn(o).requestHeader ??= {});
const authzWebhook = (o: ServerOptions) => ((o.authorization ??= {}).webhook ??= {});
const list = (v: string) => v.split(',').map((x) => x.trim()).filter(Boolean);

const int = (name: string, v: string): number => {
  if (!/^\d+$/.test(v)) throw new Error(`invalid argument ${JSON.stringify(v)} for "--${name}" flag: must be a non-negative integer`);
  return Number(v);
};

const FLAGS: Record<string, FlagSpec> = {
  'bind-address': {
    help: 'IP address to serve HTTPS on (default 127.0.0.1; 0.0.0.0 opens it to every interface)',
    apply: (o, v) => (o.bindAddress = v),
  },
  'secure-port': { help: 'port to serve HTTPS on (default 6443; 0 picks a free one)', apply: (o, v) => (o.port = int('secure-port', v)) },
  'insecure-port': {
    help: 'serve plain HTTP on this port instead of HTTPS: nothing is encrypted and, without --token-auth-file, every request is an administrator; loopback only',
    apply: (o, v) => {
      o.insecureServing ??= {};
      o.port = int('insecure-port', v);
    },
  },
  'insecure-bind-address': {
    help: 'with --insecure-port: listen on this address even if it is not loopback',
    apply: (o, v) => {
      o.insecureServing = { allowRemote: true };
      o.bindAddress = v;
    },
  },
  'data-dir': { help: 'directory of the embedded store (default ./data)', apply: (o, v) => (o.dataDir = v) },
  'crd-dir': {
    help: 'CustomResourceDefinition files or directories of them (YAML or JSON) to install at start, served before the server says it is ready (repeatable, or comma-separated)',
    apply: (o, v) => (o.crds = [...(o.crds ?? []), ...v.split(',').filter(Boolean)]),
  },
  'storage-backend': {
    help: 'lmdb (embedded, default) or etcd3',
    apply: (o, v) => {
      if (v !== 'lmdb' && v !== 'etcd3') throw new Error(`invalid --storage-backend ${JSON.stringify(v)}: expected lmdb or etcd3`);
      o.storageBackend = v;
    },
  },
  'etcd-servers': { help: 'comma-separated etcd URLs, for --storage-backend=etcd3', apply: (o, v) => (o.etcdServers = v.split(',').filter(Boolean)) },
  'feature-gates': { help: 'comma-separated Gate=true|false pairs', apply: (o, v) => (o.featureGates = v) },
  'runtime-config': { help: 'comma-separated key[=bool] pairs (true when the value is left out): api/all, api/ga, api/beta, api/alpha, <group>/<version> (api/v1 for the core group) or <group>/<version>/<resource>', apply: (o, v) => (o.runtimeConfig = v) },
  'watch-cache-retention': { help: 'how long the watch cache keeps events (default 75s)', apply: (o, v) => (o.watchCacheRetentionMs = parseDuration(v)) },
  'max-requests-inflight': { help: 'concurrent non-mutating requests (default 400; 0 = no limit)', apply: (o, v) => (o.maxRequestsInflight = int('max-requests-inflight', v)) },
  'max-mutating-requests-inflight': { help: 'concurrent mutating requests (default 200; 0 = no limit)', apply: (o, v) => (o.maxMutatingRequestsInflight = int('max-mutating-requests-inflight', v)) },
  'request-timeout': { help: 'timeout of non-long-running requests (default 1m0s)', apply: (o, v) => (o.requestTimeoutMs = parseDuration(v)) },
  'min-request-timeout': { help: 'minimum watch timeout in seconds (default 1800)', apply: (o, v) => (o.minRequestTimeoutSeconds = int('min-request-timeout', v)) },
  'shutdown-delay-duration': { help: 'how long /readyz fails before the server stops listening (default 0s)', apply: (o, v) => (o.shutdownDelayMs = parseDuration(v)) },
  'encryption-provider-config': { help: 'EncryptionConfiguration file: the resources it names are encrypted at rest (aescbc, aesgcm, secretbox, identity)', apply: (o, v) => (o.encryptionProviderConfig = v) },
  'audit-policy-file': { help: 'audit Policy file: which requests are audited, at which level; nothing is audited without it and a backend', apply: (o, v) => (o.auditPolicyFile = v) },
  'audit-log-path': { help: "audit events go to this file, one JSON line each ('-' for standard output)", apply: (o, v) => ((o.auditLog ??= { path: '' }).path = v) },
  'audit-log-maxsize': { help: 'megabytes of the audit log before it is rotated (default 0: never)', apply: (o, v) => ((o.auditLog ??= { path: '' }).maxSizeMB = int('audit-log-maxsize', v)) },
  'audit-log-maxbackup': { help: 'rotated audit log files kept (default 0: all)', apply: (o, v) => ((o.auditLog ??= { path: '' }).maxBackups = int('audit-log-maxbackup', v)) },
  'audit-log-maxage': { help: 'days a rotated audit log file is kept (default 0: any age)', apply: (o, v) => ((o.auditLog ??= { path: '' }).maxAgeDays = int('audit-log-maxage', v)) },
  'audit-log-mode': {
    help: 'how events reach the log: blocking (default; written at the end of each turn of the event loop), blocking-strict (each written at once; a request whose arrival cannot be logged is refused) or batch (queued and written in the background)',
    apply: (o, v) => {
      if (!(AUDIT_LOG_MODES as readonly string[]).includes(v)) throw new Error(`--audit-log-mode ${JSON.stringify(v)}: must be one of ${AUDIT_LOG_MODES.join(', ')}`);
      (o.auditLog ??= { path: '' }).mode = v as AuditLogMode;
    },
  },
  'audit-log-batch-buffer-size': { help: 'batch mode: events queued before new ones are dropped (default 10000)', apply: (o, v) => ((o.auditLog ??= { path: '' }).batchBufferSize = Math.max(1, int('audit-log-batch-buffer-size', v))) },
  'audit-log-batch-max-size': { help: 'batch mode: the most events in a batch (default 1)', apply: (o, v) => ((o.auditLog ??= { path: '' }).batchMaxSize = Math.max(1, int('audit-log-batch-max-size', v))) },
  'audit-log-batch-max-wait': { help: 'batch mode: how long an event waits for its batch to fill (default 0s)', apply: (o, v) => ((o.auditLog ??= { path: '' }).batchMaxWaitMs = parseDuration(v)) },
  'audit-webhook-config-file': { help: 'kubeconfig-format file of the audit webhook: audit events are POSTed there in batches', apply: (o, v) => ((o.auditWebhook ??= { configFile: '' }).configFile = v) },
  'audit-webhook-mode': {
    help: 'how events reach the webhook: batch (the default; buffered and sent in batches), blocking (each sent as it comes; a request waits for its arrival to be sent) or blocking-strict (and is refused when it could not be)',
    apply: (o, v) => {
      if (!(AUDIT_WEBHOOK_MODES as readonly string[]).includes(v)) throw new Error(`--audit-webhook-mode ${JSON.stringify(v)}: must be one of ${AUDIT_WEBHOOK_MODES.join(', ')}`);
      (o.auditWebhook ??= { configFile: '' }).mode = v as AuditWebhookMode;
    },
  },
  'audit-webhook-batch-max-size': { help: 'events in one batch at most (default 400)', apply: (o, v) => ((o.auditWebhook ??= { configFile: '' }).maxBatchSize = Math.max(1, int('audit-webhook-batch-max-size', v))) },
  'audit-webhook-batch-max-wait': { help: 'how long an event waits for its batch to fill (default 30s)', apply: (o, v) => ((o.auditWebhook ??= { configFile: '' }).maxBatchWaitMs = parseDuration(v)) },
  'audit-webhook-batch-buffer-size': { help: 'events buffered before new ones are dropped (default 10000)', apply: (o, v) => ((o.auditWebhook ??= { configFile: '' }).bufferSize = int('audit-webhook-batch-buffer-size', v)) },
  'audit-webhook-initial-backoff': { help: 'wait before retrying a failed batch (default 10s)', apply: (o, v) => ((o.auditWebhook ??= { configFile: '' }).initialBackoffMs = parseDuration(v)) },
  'event-ttl': { help: 'how long events are kept after their last write (default 1h0m0s)', apply: (o, v) => (o.eventTtlMs = parseDuration(v)) },
  'service-cluster-ip-range': { help: 'CIDR (or IPv4,IPv6 pair) of the default ServiceCIDR (default 10.0.0.0/24)', apply: (o, v) => (o.serviceClusterIpRange = v) },
  'cert-dir': { help: 'where generated certificates are kept (default <data-dir>/pki)', apply: (o, v) => (secure(o).certDir = v) },
  'tls-cert-file': { help: 'serving certificate (PEM), in place of a generated one', apply: (o, v) => (secure(o).tlsCertFile = v) },
  'tls-private-key-file': { help: 'private key of --tls-cert-file (PEM)', apply: (o, v) => (secure(o).tlsPrivateKeyFile = v) },
  'tls-min-version': { help: 'VersionTLS12 (default) or VersionTLS13', apply: (o, v) => (secure(o).tlsMinVersion = v) },
  'tls-cipher-suites': { help: 'comma-separated IANA cipher suite names for TLS 1.2 (default: safe ones)', apply: (o, v) => (secure(o).tlsCipherSuites = list(v)) },
  'advertise-address': { help: 'address clients reach the server on; added to the generated serving certificate', apply: (o, v) => (secure(o).advertiseAddress = v) },
  'client-ca-file': { help: 'CAs of client certificates (default over HTTPS: the generated CA)', apply: (o, v) => (authn(o).clientCaFile = v) },
  'token-auth-file': { help: 'CSV of bearer tokens: token,user,uid,"group1,group2"', apply: (o, v) => (authn(o).tokenAuthFile = v) },
  'authorization-mode': {
    help: 'comma-separated authorizers, asked in order: AlwaysAllow, AlwaysDeny, ABAC, Node, RBAC, Webhook (default Node,RBAC)',
    apply: (o, v) => ((o.authorization ??= {}).modes = list(v)),
  },
  'authorization-policy-file': {
    help: 'ABAC policies, one JSON object a line, used with --authorization-mode=ABAC',
    apply: (o, v) => ((o.authorization ??= {}).policyFile = v),
  },
  'authorization-webhook-config-file': {
    help: 'kubeconfig-format file of the authorization webhook (its server and CA; the client certificate the server presents), for mode Webhook',
    apply: (o, v) => (authzWebhook(o).configFile = v),
  },
  'authorization-webhook-version': { help: 'SubjectAccessReview version sent to the authorization webhook: v1 or v1beta1 (default v1beta1)', apply: (o, v) => (authzWebhook(o).version = v) },
  'authorization-webhook-cache-authorized-ttl': { help: "how long the authorization webhook's allow answers are kept (default 5m0s)", apply: (o, v) => (authzWebhook(o).authorizedTtlMs = parseDuration(v)) },
  'authorization-webhook-cache-unauthorized-ttl': { help: "how long the authorization webhook's other answers are kept (default 30s)", apply: (o, v) => (authzWebhook(o).unauthorizedTtlMs = parseDuration(v)) },
  'authorization-config': {
    help: 'AuthorizationConfiguration file (authorizers in order; webhooks with timeout, cache, failure policy, match conditions), reloaded on change; not with --authorization-mode or --authorization-webhook-*',
    apply: (o, v) => ((o.authorization ??= {}).configFile = v),
  },
  'anonymous-auth': {
    help: 'requests with no credential are system:anonymous (default true; while every request is authorized, only on /healthz, /livez, /readyz and /version)',
    bool: true,
    apply: (o, v) => (authn(o).anonymousAuth = bool('anonymous-auth', v)),
  },
  'service-account-issuer': {
    help: 'issuer of service-account tokens (repeatable: each is accepted, the first signs; default https://orch.default.svc.cluster.local, or kubernetes.default… in the kubernetes profile)',
    apply: (o, v) => (sa(o).issuers = [...(sa(o).issuers ?? []), v]),
  },
  'service-account-signing-key-file': { help: 'private key (PEM) service-account tokens are signed with (default generated into --cert-dir)', apply: (o, v) => (sa(o).signingKeyFile = v) },
  'service-account-key-file': { help: 'PEM keys service-account tokens are verified with (repeatable)', apply: (o, v) => (sa(o).keyFiles = [...(sa(o).keyFiles ?? []), v]) },
  'service-account-lookup': { help: 'refuse tokens of service accounts that are gone (default true)', bool: true, apply: (o, v) => (sa(o).lookup = bool('service-account-lookup', v)) },
  'service-account-max-token-expiration': { help: 'the longest lifetime of a requested service-account token', apply: (o, v) => (sa(o).maxTokenExpirationSeconds = Math.floor(parseDuration(v) / 1000)) },
  'api-audiences': { help: 'comma-separated audiences of the API (default: the service-account issuers)', apply: (o, v) => (authn(o).apiAudiences = list(v)) },
  'oidc-issuer-url': { help: 'URL of the OpenID issuer (https only); its discovery and keys verify ID tokens', apply: (o, v) => (oidc(o).issuerUrl = v) },
  'oidc-client-id': { help: 'client ID every ID token must carry as audience; needed with --oidc-issuer-url', apply: (o, v) => (oidc(o).clientId = v) },
  'oidc-username-claim': { help: 'claim used as the user name (default sub)', apply: (o, v) => (oidc(o).usernameClaim = v) },
  'oidc-username-prefix': { help: "prefix of user names (default <issuer URL># unless the claim is email; '-' for none)", apply: (o, v) => (oidc(o).usernamePrefix = v) },
  'oidc-groups-claim': { help: 'claim holding the groups (a string or a list of strings)', apply: (o, v) => (oidc(o).groupsClaim = v) },
  'oidc-groups-prefix': { help: 'prefix of group names', apply: (o, v) => (oidc(o).groupsPrefix = v) },
  'oidc-required-claim': {
    help: 'key=value a token must hold (repeatable)',
    apply: (o, v) => {
      const eq = v.indexOf('=');
      if (eq < 0) throw new Error(`invalid argument ${JSON.stringify(v)} for "--oidc-required-claim" flag: ${v} must be formatted as key=value`);
      (oidc(o).requiredClaims ??= {})[v.slice(0, eq)] = v.slice(eq + 1);
    },
  },
  'oidc-ca-file': { help: "CA of the OpenID issuer's serving certificate (default: the system's roots)", apply: (o, v) => (oidc(o).caFile = v) },
  'oidc-signing-algs': { help: 'comma-separated accepted signing algorithms (default RS256; RS, ES or PS with 256, 384 or 512)', apply: (o, v) => (oidc(o).signingAlgs = list(v)) },
  'authentication-config': {
    help: 'AuthenticationConfiguration file (JWT authenticators, anonymous paths), reloaded on change; not with --oidc-* flags',
    apply: (o, v) => (authn(o).authenticationConfig = v),
  },
  'requestheader-client-ca-file': { help: "CAs of the authenticating proxy's client certificate; its request headers name the user", apply: (o, v) => (rh(o).clientCaFile = v) },
  'requestheader-allowed-names': { help: 'comma-separated Common Names the proxy certificate may have (repeatable; default: any)', apply: (o, v) => (rh(o).allowedNames = [...(rh(o).allowedNames ?? []), ...v.split(',')]) },
  'requestheader-username-headers': { help: 'comma-separated headers naming the user, first with a value wins (repeatable; X-Remote-User is usual)', apply: (o, v) => (rh(o).usernameHeaders = [...(rh(o).usernameHeaders ?? []), ...v.split(',')]) },
  'requestheader-group-headers': { help: 'comma-separated headers naming groups (repeatable; X-Remote-Group is usual)', apply: (o, v) => (rh(o).groupHeaders = [...(rh(o).groupHeaders ?? []), ...v.split(',')]) },
  'requestheader-extra-headers-prefix': { help: 'comma-separated prefixes of headers giving extras (repeatable; X-Remote-Extra- is usual)', apply: (o, v) => (rh(o).extraHeadersPrefix = [...(rh(o).extraHeadersPrefix ?? []), ...v.split(',')]) },
  'requestheader-uid-headers': { help: 'comma-separated headers giving the uid, first with a value wins (repeatable; X-Remote-Uid is usual)', apply: (o, v) => (rh(o).uidHeaders = [...(rh(o).uidHeaders ?? []), ...v.split(',')]) },
  // The webhook flags; without a config file the others change nothing. The file is read at start.
  'authentication-token-webhook-config-file': {
    help: 'kubeconfig-format file of the token-review webhook (its server and CA; the client certificate the server presents); tokens no other authenticator knows are reviewed there',
    apply: (o, v) => ((authn(o).tokenWebhook ??= { configFile: '' }).configFile = v),
  },
  'authentication-token-webhook-cache-ttl': { help: "how long the webhook's answers are kept (default 2m0s; 0 keeps none)", apply: (o, v) => ((authn(o).tokenWebhook ??= { configFile: '' }).cacheTtlMs = parseDuration(v)) },
  'authentication-token-webhook-version': {
    help: 'TokenReview version sent to the webhook: v1 or v1beta1 (default v1beta1)',
    apply: (o, v) => {
      if (v !== 'v1' && v !== 'v1beta1') throw new Error(`invalid --authentication-token-webhook-version ${JSON.stringify(v)}: expected v1 or v1beta1`);
      (authn(o).tokenWebhook ??= { configFile: '' }).version = v;
    },
  },
  'enable-bootstrap-token-auth': {
    help: 'bootstrap tokens (Secrets bootstrap-token-<id> of the system namespace) authenticate; the token cleaner and the bootstrap signer run',
    bool: true,
    apply: (o, v) => (authn(o).enableBootstrapTokenAuth = bool('enable-bootstrap-token-auth', v)),
  },
  naming: {
    help: 'naming profile: orch (default) or kubernetes',
    apply: (o, v) => {
      if (v !== 'orch' && v !== 'kubernetes') throw new Error(`invalid --naming ${JSON.stringify(v)}: expected orch or kubernetes`);
      o.naming = v;
    },
  },
};

/** The options the flags describe (`'help'` for --help); throws on a flag it cannot parse. */
export function parseArgs(argv: readonly string[]): ServerOptions | 'help' {
  // Loopback by default: while every authenticated request is authorized, the server is for this machine.
  const o: ServerOptions = { bindAddress: '127.0.0.1', port: 6443, dataDir: 'data' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return 'help';
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const spec = FLAGS[m[1]!];
    if (!spec) throw new Error(`unknown flag: --${m[1]}`);
    let value = m[2];
    if (value === undefined && spec.bool) value = 'true';
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new Error(`flag needs an argument: --${m[1]}`);
    }
    spec.apply(o, value);
  }
  if (o.insecureServing && !argv.some((a) => /^--insecure-port(=|$)/.test(a))) throw new Error('--insecure-bind-address needs --insecure-port');
  return o;
}

function usage(): string {
  return ['Usage: orch-apiserver [flags]', '', ...Object.entries(FLAGS).map(([k, f]) => `  --${k.padEnd(32)} ${f.help}`)].join('\n');
}

/** Where the server listens, on what storage, and who it lets in. */
function banner(server: RunningServer, opts: ServerOptions): string {
  const storage = `${opts.storageBackend ?? 'lmdb'}${opts.storageBackend === 'etcd3' ? '' : ` in ${opts.dataDir}`}`;
  const first = `orch-apiserver serving on ${server.listening} (storage: ${storage})`;
  if (server.kubeconfigPath)
    return [first, `Administrator's kubeconfig (client certificate in group system:masters): export KUBECONFIG=${server.kubeconfigPath}`].join('\n');
  if (opts.authentication) return first;
  return [first, 'Plain HTTP with no authentication: every request is treated as an administrator.'].join('\n');
}

export async function main(argv: readonly string[]): Promise<void> {
  let opts: ServerOptions | 'help';
  try {
    opts = parseArgs(argv);
  } catch (e) {
    process.stderr.write(`Error: ${(e as Error).message}\n\n${usage()}\n`);
    process.exit(2);
  }
  if (opts === 'help') {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const server = await startServer(opts).catch((e: Error) => {
    process.stderr.write(`Error: ${e.message}\n`);
    process.exit(1);
  });
  process.stderr.write(`${banner(server, opts)}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`${signal}: shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (e: Error) => {
        process.stderr.write(`shutdown failed: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
