// The built-in controllers started by every API server (besides namespace deletion and garbage
// collection, which the server wires itself).

import type { ControllerFactory } from './controller.ts';
import { apiServiceController } from './api-services.ts';
import { eventTtl } from './event-ttl.ts';
import { leaseCandidateGc } from './lease-candidate-gc.ts';
import { serviceCidrController } from './service-cidr.ts';

export const builtinControllers: readonly ControllerFactory[] = [apiServiceController, serviceCidrController, leaseCandidateGc, eventTtl];
