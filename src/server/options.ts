// What an embedder (or the command line) configures, and what it gets back from startServer.

import type { Naming, NamingProfileName } from '../naming.ts';
import type { Authenticator } from '../auth/authn/authenticator.ts';
import type { Authorizer } from '../auth/authz/authorizer.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { AuditSink } from './filters.ts';
import type { KindDefinition } from '../registry/definition.ts';

export interface ServerOptions {
  /** Default 127.0.0.1, as on the command line: with no authentication, loopback only unless asked. */
  bindAddress?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Where the embedded store keeps its data; absent: a throw-away directory removed on close. */
  dataDir?: string;
  storageBackend?: 'lmdb' | 'etcd3';
  etcdServers?: string[];
  featureGates?: string | Record<string, boolean>;
  /** `--runtime-config` pairs: `coordination.orch.io/v1=false`. */
  runtimeConfig?: string;
  watchCacheRetentionMs?: number;
  /** How long the embedded store keeps history (resume, Exact reads, continue tokens); default 5 min. */
  storageRetentionMs?: number;
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  requestTimeoutMs?: number;
  /** While shutting down, /readyz fails for this long before the listener closes. */
  shutdownDelayMs?: number;
  /** Watches without timeoutSeconds end after a random time in [min, 2·min) (default 1800 s). */
  minRequestTimeoutSeconds?: number;
  naming?: NamingProfileName;
  /**
   * Serving over HTTPS (`--secure-port` and the TLS flags). Absent: plain HTTP on `port`, as
   * today; `{}` is HTTPS with generated certificates on a free port.
   */
  secureServing?: SecureServingOptions;
  /**
   * The authenticators of the flags. Absent: over HTTPS, client certificates of the server's CA
   * (and anonymous, see `anonymousAuth`); over plain HTTP, every request an administrator.
   */
  authentication?: AuthenticationOptions;
  /** An authenticator of the embedder's own, in place of those `authentication` describes. */
  authenticator?: Authenticator;
  authorizer?: Authorizer;
  audit?: AuditSink;
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

export interface SecureServingOptions {
  /** `--secure-port`: 0 (default here) picks a free port; the command line's default is 6443. */
  port?: number;
  /**
   * `--cert-dir`: where generated certificates are kept and reused on restart. Default
   * `<data dir>/pki`; with no data directory, certificates made once per process.
   */
  certDir?: string;
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

export interface AuthenticationOptions {
  /** `--client-ca-file`: CAs of client certificates. Over HTTPS the default is the server's generated CA. */
  clientCaFile?: string;
  /** `--token-auth-file`: CSV of `token,user,uid[,"group1,group2"]`. */
  tokenAuthFile?: string;
  /** `--api-audiences`: the audiences of the server's own tokens (and of a TokenReview that names none). */
  apiAudiences?: string[];
  /**
   * `--anonymous-auth` (default true): requests with no credential are `system:anonymous`. As in
   * kube-apiserver it is turned off while the authorizer allows everything (the built-in default).
   */
  anonymousAuth?: boolean;
}

export interface RunningServer {
  /** Where clients reach it (loopback when it listens on every interface). */
  url: string;
  /** Where it listens: the bound address and port (`http://0.0.0.0:8080`). */
  listening: string;
  port: number;
  naming: Naming;
  featureGates: FeatureGates;
  /** Over HTTPS: the administrator's kubeconfig (client certificate in `system:masters`), its text and where it is written. */
  kubeconfig?: string;
  kubeconfigPath?: string;
  /** Over HTTPS: the CA (PEM) that issued the serving certificate, for clients to trust. */
  ca?: string;
  /** Graceful stop: readyz fails, watches end, in-flight requests finish, storage closes. */
  close(): Promise<void>;
}
