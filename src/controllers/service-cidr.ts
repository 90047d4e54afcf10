// Placeholder: the default ServiceCIDR controller (to be written).

import type { ControllerFactory } from './controller.ts';

export const serviceCidrController: ControllerFactory = () => undefined;
