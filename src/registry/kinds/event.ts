// Event (n.group('events')/v1): placeholder definition, to be completed with its fields and rules.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { obj, objectSchema } from '../schemas.ts';

export function eventDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('events'),
    version: 'v1',
    kind: 'Event',
    resource: 'events',
    singular: 'event',
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: objectSchema({ spec: obj({}, { 'x-kubernetes-preserve-unknown-fields': true }) }),
    strategy: {},
  };
}
