// Lease (coordination/v1, namespaced): leader election and heartbeats.

import type { Naming } from '../../naming.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { int32, microTime, obj, objectSchema, str } from '../schemas.ts';

export function leaseDefinition(n: Naming): KindDefinition {
  return {
    group: n.group('coordination'),
    version: 'v1',
    kind: 'Lease',
    resource: 'leases',
    singular: 'lease',
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    // As in Kubernetes, a PUT of a missing Lease creates it (leader election relies on it).
    allowCreateOnUpdate: true,
    schema: objectSchema({
      spec: obj({
        holderIdentity: str(),
        leaseDurationSeconds: int32(),
        acquireTime: microTime(),
        renewTime: microTime(),
        leaseTransitions: int32(),
        strategy: str(),
        preferredHolder: str(),
      }),
    }),
    strategy: {},
  };
}
