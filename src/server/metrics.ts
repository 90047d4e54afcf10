// The server's metrics, served at /metrics in the Prometheus text format. Each server has a
// registry of its own (never prom-client's global one), so servers sharing a process (tests)
// count separately; later code adds its metrics to `registry`.
//
// Names, help texts and labels are kube-apiserver's, so dashboards and alerts written for it
// work here. Kubernetes builds them from namespace `apiserver` and subsystem `validation`:
// documentation speaks of `declarative_validation_mismatch_total`, the scraped series is
// `apiserver_validation_declarative_validation_mismatch_total`. Help texts carry the stability
// prefix (`[BETA]`, `[ALPHA]`) that Kubernetes' metrics framework adds.

import { Counter, Registry } from 'prom-client';
import type { DeclarativeValidationMetrics } from '../registry/declarative-validation.ts';

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
  return {
    registry,
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
