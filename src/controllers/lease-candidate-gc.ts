// Placeholder: garbage collection of stale LeaseCandidates (to be written).

import type { ControllerFactory } from './controller.ts';

export const leaseCandidateGc: ControllerFactory = () => undefined;
