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
import { Counter, Gauge, Registry } from 'prom-client';
import type { DeclarativeValidationMetrics } from '../registry/declarative-validation.ts';
import type { TokenCacheStats } from '../auth/authn/token-cache.ts';
import type { ReloadStats } from '../auth/authn/jwt-set.ts';

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
  /** The reloads of `--authorization-config`. */
  readonly authorizationConfigReload: { reloaded(ok: boolean): void };
  /** The exposition: body and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
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
  const tokenCacheRequests = new Counter({ name: 'authentication_token_cache_request_total', help: '[ALPHA] ', labelNames: ['status'] as const, registers });
  const tokenCacheFetches = new Counter({ name: 'authentication_token_cache_fetch_total', help: '[ALPHA] ', labelNames: ['status'] as const, registers });
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
  return {
    registry,
    authorizationConfigReload: {
      reloaded(ok) {
        const labels = { status: ok ? 'success' : 'failure', apiserver_id_hash: idHash };
        authzReloads.inc(labels);
        authzLastReload.set(labels, Date.now() / 1000);
      },
    },
    authentication: {
      tokenCache: {
        request: (hit) => tokenCacheRequests.inc({ status: hit ? 'hit' : 'miss' }),
        fetch: (ok) => tokenCacheFetches.inc({ status: ok ? 'ok' : 'error' }),
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
