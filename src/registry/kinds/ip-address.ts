// IPAddress (n.group('networking')/v1): placeholder definition, to be completed with its fields and rules.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { obj, objectSchema } from '../schemas.ts';

export function ipAddressDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'IPAddress',
    resource: 'ipaddresses',
    singular: 'ipaddress',
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: objectSchema({ spec: obj({}, { 'x-kubernetes-preserve-unknown-fields': true }) }),
    strategy: {},
  };
}
