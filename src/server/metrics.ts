// The server's metrics, served at /metrics in the Prometheus text format. Each server has a
// registry of its own (never prom-client's global one), so servers sharing a process (tests)
// count separately; later code adds its metrics to `registry`.
//
// Names, help texts and labels are kube-apiserver's, so dashboards and alerts written for it
// work here. Kubernetes builds them from namespace `apiserver` and subsystem `validation`:
// documentation speaks of `declarative_validation_mismatch_total`, the scraped series is
// `apiserver_validation_declarative_validation_mismatch_total`. Help texts carry the stability
// prefix (`[BETA]`, `[ALPHA]`) that Kubernetes' metrics framework adds.

import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry } from './prom.ts';
import type { StorageObserver } from '../storage/instrumented.ts';
import { featureGateStates, parseFeatureGates, type FeatureGates } from '../machinery/feature-gates.ts';
import type { DeclarativeValidationMetrics } from '../registry/declarative-validation.ts';
import type { TokenCacheStats } from '../auth/authn/token-cache.ts';
import type { ReloadStats } from '../auth/authn/jwt-set.ts';
import type { AuthorizationWebhookMetrics } from '../auth/authz/webhook.ts';
import type { ConversionWebhookMetrics } from '../registry/webhook-conversion.ts';

export const VALIDATION_METRICS = {
  mismatch: 'apiserver_validation_declarative_validation_mismatch_total',
  mismatchByIdentifier: 'apiserver_validation_declarative_validation_parity_discrepancies_total',
  panic: 'apiserver_validation_declarative_validation_panic_total',
  panicByIdentifier: 'apiserver_validation_declarative_validation_panics_total',
} as const;

export interface ServerMetrics {
  /** Where every metric of this server is registered. */
  readonly registry: Registry;
  /** Declarative validation's counters (mismatches, panics). */
  readonly validation: DeclarativeValidationMetrics;
  /** The cache in front of the bearer token authenticators, and the reloads of `--authentication-config`. */
  readonly authentication: { tokenCache: TokenCacheStats; configReload: ReloadStats };
  /** Times storage requests (etcd_request_duration_seconds). */
  readonly storage: StorageObserver;
  /** Counts the events of one watch of a kind (apiserver_watch_events_total): call the result per event. */
  watchEvents(group: string, version: string, kind: string): () => void;
  /** A deprecated kind version was asked for (apiserver_requested_deprecated_apis). */
  deprecatedRequest(group: string, version: string, resource: string, subresource: string, removedRelease: string): void;
  /** The kinds whose stored objects and watchers are reported at each scrape. */
  reportStores(stores: () => readonly ReportedStore[]): void;
  /** The reloads of `--authorization-config`. */
  readonly authorizationConfigReload: { reloaded(ok: boolean): void };
  /** The authorization webhooks' round-trips, fail-open decisions and match conditions. */
  readonly authorizationWebhooks: AuthorizationWebhookMetrics;
  /** CRD conversion webhooks: conversions by CRD and versions, reviews by result. */
  readonly conversionWebhooks: ConversionWebhookMetrics;
  /** An allow or deny of a configured authorizer (apiserver_authorization_decisions_total). */
  authorizationDecision(type: string, name: string, decision: 'allowed' | 'denied'): void;
  /** The exposition: body and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

/** What a served kind reports: its names, and its objects and watchers now. */
export interface ReportedStore {
  group: string;
  version: string;
  kind: string;
  resource: string;
  /** Stored as another kind: its figures are that kind's, reported there. */
  shared: boolean;
  stats: { objects: number; watchers: number };
}

/** apiextensions-apiserver's buckets for a CRD's conversions: 1 ms doubling, fifteen of them. */
const CRD_CONVERSION_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/** apiextensions-apiserver's buckets for conversion webhook requests (5 ms to 60 s). */
const CONVERSION_WEBHOOK_BUCKETS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60];

/** kube-apiserver's buckets for etcd_request_duration_seconds. */
const STORAGE_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

export function createServerMetrics(featureGates: FeatureGates = parseFeatureGates()): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const features = new Gauge({
    name: 'kubernetes_feature_enabled',
    help: '[BETA] This metric records the data about the stage and enablement of a k8s feature.',
    labelNames: ['name', 'stage'] as const,
    registers,
  });
  for (const g of featureGateStates(featureGates)) features.set({ name: g.name, stage: g.stage }, g.enabled ? 1 : 0);
  const mismatch = new Counter({
    name: VALIDATION_METRICS.mismatch,
    help: '[BETA] Number of times declarative validation results differed from handwritten validation results for core types.',
    registers,
  });
  const mismatchByIdentifier = new Counter({
    name: VALIDATION_METRICS.mismatchByIdentifier,
    help: '[ALPHA] Number of discrepancies between declarative and handwritten validation, broken down by validation identifier.',
    labelNames: ['validation_identifier'] as const,
    registers,
  });
  const panic = new Counter({
    name: VALIDATION_METRICS.panic,
    help: '[BETA] Number of times declarative validation has panicked during validation.',
    registers,
  });
  const panicByIdentifier = new Counter({
    name: VALIDATION_METRICS.panicByIdentifier,
    help: '[ALPHA] Number of panics in declarative validation, broken down by validation identifier.',
    labelNames: ['validation_identifier'] as const,
    registers,
  });
  // Counted in plain numbers (every authenticated request counts one) and given to prom-client when scraped.
  const tokenCacheCounts = { hit: 0, miss: 0, ok: 0, error: 0 };
  const countedByStatus = (name: string, statuses: readonly (keyof typeof tokenCacheCounts)[]) =>
    new Counter({
      name,
      help: '[ALPHA] ',
      labelNames: ['status'] as const,
      registers,
      collect() {
        this.reset();
        for (const status of statuses) if (tokenCacheCounts[status] > 0) this.inc({ status }, tokenCacheCounts[status]);
      },
    });
  countedByStatus('authentication_token_cache_request_total', ['hit', 'miss']);
  countedByStatus('authentication_token_cache_fetch_total', ['ok', 'error']);
  // One server: its identity hash is that of its name, as kube-apiserver labels by its id.
  const idHash = `sha256:${createHash('sha256').update('orch-apiserver').digest('hex')}`;
  const reloads = new Counter({
    name: 'apiserver_authentication_config_controller_automatic_reloads_total',
    help: '[BETA] Total number of automatic reloads of authentication configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers,
  });
  const lastReload = new Gauge({
    name: 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
    help: '[BETA] Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers,
  });
  const storageDuration = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: '[ALPHA] Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'type'] as const,
    buckets: STORAGE_BUCKETS,
    registers,
  });
  const watchEventsTotal = new Counter({
    name: 'apiserver_watch_events_total',
    help: '[ALPHA] Number of events sent in watch clients',
    labelNames: ['group', 'version', 'kind'] as const,
    registers,
  });
  const deprecatedApis = new Gauge({
    name: 'apiserver_requested_deprecated_apis',
    help: '[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] as const,
    registers,
  });
  let stores: () => readonly ReportedStore[] = () => [];
  new Gauge({
    name: 'apiserver_storage_objects',
    help: '[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    labelNames: ['resource'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of stores()) this.set({ resource: s.group ? `${s.resource}.${s.group}` : s.resource }, s.stats.objects);
    },
  });
  new Gauge({
    name: 'apiserver_registered_watchers',
    help: '[ALPHA] Number of currently registered watchers for a given resources',
    labelNames: ['group', 'version', 'kind'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of stores()) if (!s.shared) this.set({ group: s.group, version: s.version, kind: s.kind }, s.stats.watchers);
    },
  });
  const authzReloads = new Counter({
    name: 'apiserver_authorization_config_controller_automatic_reloads_total',
    help: '[BETA] Total number of automatic reloads of authorization configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers,
  });
  const authzLastReload = new Gauge({
    name: 'apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds',
    help: '[BETA] Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'] as const,
    registers,
  });
  // The authorization webhooks (kube's webhook authorizer metrics and its match condition metrics).
  const webhookEvaluations = new Counter({ name: 'apiserver_authorization_webhook_evaluations_total', help: '[BETA] Round-trips to authorization webhooks.', labelNames: ['name', 'result'] as const, registers });
  const webhookDuration = new Histogram({
    name: 'apiserver_authorization_webhook_duration_seconds',
    help: '[BETA] Request latency in seconds.',
    labelNames: ['name', 'result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const webhookFailOpen = new Counter({ name: 'apiserver_authorization_webhook_evaluations_fail_open_total', help: '[BETA] NoOpinion results due to webhook timeout or error.', labelNames: ['name', 'result'] as const, registers });
  const matchErrors = new Counter({
    name: 'apiserver_authorization_match_condition_evaluation_errors_total',
    help: '[ALPHA] Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.',
    labelNames: ['type', 'name'] as const,
    registers,
  });
  const matchExclusions = new Counter({
    name: 'apiserver_authorization_match_condition_exclusions_total',
    help: '[ALPHA] Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.',
    labelNames: ['type', 'name'] as const,
    registers,
  });
  const matchSeconds = new Histogram({
    name: 'apiserver_authorization_match_condition_evaluation_seconds',
    help: '[ALPHA] Authorization match condition evaluation time in seconds, split by authorizer type and name.',
    labelNames: ['type', 'name'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25],
    registers,
  });
  const authorizationWebhooks: AuthorizationWebhookMetrics = {
    evaluation(name, result, seconds) {
      webhookEvaluations.inc({ name, result });
      webhookDuration.observe({ name, result }, seconds);
    },
    failOpen: (name, result) => webhookFailOpen.inc({ name, result }),
    matchConditions(name, seconds, outcome) {
      const labels = { type: 'Webhook', name };
      matchSeconds.observe(labels, seconds);
      if (outcome === 'excluded') matchExclusions.inc(labels);
      if (outcome === 'error') matchErrors.inc(labels);
    },
  };
  const decisions = new Counter({
    name: 'apiserver_authorization_decisions_total',
    help: '[ALPHA] Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
    labelNames: ['type', 'name', 'decision'] as const,
    registers,
  });
  const crdConversion = new Histogram({
    name: 'apiserver_crd_conversion_webhook_duration_seconds',
    help: '[ALPHA] CRD webhook conversion duration in seconds',
    labelNames: ['crd_name', 'from_version', 'to_version', 'succeeded'] as const,
    buckets: CRD_CONVERSION_BUCKETS,
    registers,
  });
  const conversionRequests = new Counter({
    name: 'apiserver_conversion_webhook_request_total',
    help: '[ALPHA] Counter for conversion webhook requests with success/failure and failure error type',
    labelNames: ['result', 'failure_type'] as const,
    registers,
  });
  const conversionRequestSeconds = new Histogram({
    name: 'apiserver_conversion_webhook_duration_seconds',
    help: '[ALPHA] Conversion webhook request latency',
    labelNames: ['result', 'failure_type'] as const,
    buckets: CONVERSION_WEBHOOK_BUCKETS,
    registers,
  });
  const conversionWebhooks: ConversionWebhookMetrics = {
    converted(crdName, fromVersion, toVersion, succeeded, seconds) {
      crdConversion.observe({ crd_name: crdName, from_version: fromVersion, to_version: toVersion, succeeded: String(succeeded) }, seconds);
    },
    reviewed(failureType, seconds) {
      const labels = { result: failureType ? 'failure' : 'success', failure_type: failureType };
      conversionRequests.inc(labels);
      conversionRequestSeconds.observe(labels, seconds);
    },
  };
  return {
    registry,
    conversionWebhooks,
    authorizationWebhooks,
    authorizationDecision: (type, name, decision) => decisions.inc({ type, name, decision }),
    storage: (operation, type, seconds) => storageDuration.observe({ operation, type }, seconds),
    watchEvents(group, version, kind) {
      const child = watchEventsTotal.labels({ group, version, kind });
      return () => child.inc();
    },
    deprecatedRequest(group, version, resource, subresource, removedRelease) {
      deprecatedApis.set({ group, version, resource, subresource, removed_release: removedRelease }, 1);
    },
    reportStores(s) {
      stores = s;
    },
    authorizationConfigReload: {
      reloaded(ok) {
        const labels = { status: ok ? 'success' : 'failure', apiserver_id_hash: idHash };
        authzReloads.inc(labels);
        authzLastReload.set(labels, Date.now() / 1000);
      },
    },
    authentication: {
      tokenCache: {
        request: (hit) => void (hit ? tokenCacheCounts.hit++ : tokenCacheCounts.miss++),
        fetch: (ok) => void (ok ? tokenCacheCounts.ok++ : tokenCacheCounts.error++),
      },
      configReload: {
        reloaded(ok) {
          const labels = { status: ok ? 'success' : 'failure', apiserver_id_hash: idHash };
          reloads.inc(labels);
          lastReload.set(labels, Date.now() / 1000);
        },
      },
    },
    validation: {
      mismatch(identifier) {
        mismatch.inc();
        mismatchByIdentifier.inc({ validation_identifier: identifier });
      },
      panic(identifier) {
        panic.inc();
        panicByIdentifier.inc({ validation_identifier: identifier });
      },
    },
    async render() {
      return { body: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
