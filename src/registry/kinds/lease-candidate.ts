// LeaseCandidate (n.group('coordination')/v1beta1): placeholder definition, to be completed with its fields and rules.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { obj, objectSchema } from '../schemas.ts';

export function leaseCandidateDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('coordination'),
    version: 'v1beta1',
    kind: 'LeaseCandidate',
    resource: 'leasecandidates',
    singular: 'leasecandidate',
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: objectSchema({ spec: obj({}, { 'x-kubernetes-preserve-unknown-fields': true }) }),
    strategy: {},
    enabledByDefault: false,
  };
}
