// RuntimeClass (n.group('node')/v1): placeholder definition, to be completed with its fields and rules.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { obj, objectSchema } from '../schemas.ts';

export function runtimeClassDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('node'),
    version: 'v1',
    kind: 'RuntimeClass',
    resource: 'runtimeclasses',
    singular: 'runtimeclass',
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: objectSchema({ spec: obj({}, { 'x-kubernetes-preserve-unknown-fields': true }) }),
    strategy: {},
  };
}
