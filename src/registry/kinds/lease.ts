// Lease (coordination/v1, namespaced): leader election and heartbeats.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import type { KObject } from '../../machinery/meta.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { int32, microTime, obj, objectSchema, str } from '../schemas.ts';
import { ageColumn, nameColumn } from '../printers.ts';

export function leaseDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
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
    printerColumns: [
      nameColumn,
      { name: 'Holder', type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease.', value: (o) => (o.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '' },
      ageColumn,
    ],
    strategy: {
      validate: validateLease,
      validateUpdate: (obj) => validateLease(obj),
    },
  };
}

interface LeaseSpec {
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

/** ValidateLeaseSpec: positive durations, non-negative transitions, preferredHolder needs a strategy. */
function validateLease(obj: KObject): FieldError[] {
  const spec = (obj.spec ?? {}) as LeaseSpec;
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds != null && spec.leaseDurationSeconds <= 0)
    errs.push(fieldError.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  if (spec.leaseTransitions != null && spec.leaseTransitions < 0)
    errs.push(fieldError.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  if (spec.preferredHolder && !spec.strategy) errs.push(fieldError.forbidden('spec.preferredHolder', 'preferredHolder is only allowed if strategy is set'));
  return errs;
}
