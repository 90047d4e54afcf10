// The controllers every API server runs, in the order they start: namespace deletion and garbage
// collection first, then the others.

import type { Controller, ControllerContext, ControllerFactory } from './controller.ts';
import { namespaceController } from './namespace.ts';
import { garbageCollector } from './garbage-collector.ts';
import { apiServiceController } from './api-services.ts';
import { eventTtl } from './event-ttl.ts';
import { leaseCandidateGc } from './lease-candidate-gc.ts';
import { serviceCidrController } from './service-cidr.ts';
import { serviceAccountsController } from './service-accounts.ts';
import { bootstrapSigner, tokenCleaner } from './bootstrap-tokens.ts';
import { serviceAccountTokensController } from './service-account-tokens.ts';
import { clusterRoleAggregation } from './cluster-role-aggregation.ts';
import { customResourceController } from './custom-resources.ts';

export const builtinControllers: readonly ControllerFactory[] = [namespaceController, garbageCollector, apiServiceController, serviceCidrController, serviceAccountsController, serviceAccountTokensController, leaseCandidateGc, eventTtl, tokenCleaner, bootstrapSigner, clusterRoleAggregation, customResourceController];

/** The controllers that apply to what is served; throws when a flag they read is invalid. */
export function buildControllers(ctx: ControllerContext, factories: readonly ControllerFactory[] = builtinControllers): Controller[] {
  return factories.flatMap((make) => make(ctx) ?? []);
}
