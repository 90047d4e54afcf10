// Lease (coordination/v1, namespaced): leader election and heartbeats.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../server/feature-gates.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { markCoveredByDeclarative } from '../../machinery/declarative-validation.ts';
import type { KObject } from '../../machinery/meta.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { int32, microTime, obj, objectSchema, str } from '../schemas.ts';
import { ageColumn, nameColumn } from '../printers.ts';

export function leaseDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  // Coordinated leader election is behind its gate: with the gate off, a new Lease cannot set a
  // strategy or a preferred holder, and an update cannot add them (existing values stay).
  const coordinated = gates.CoordinatedLeaderElection ?? false;
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
    // Declarative validation: the spec's value rules restate validateLease's range checks.
    declarativeValidation: true,
    schema: objectSchema({
      spec: obj({
        holderIdentity: str({
          description:
            'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
        }),
        leaseDurationSeconds: int32({
          minimum: 0,
          exclusiveMinimum: true,
          description: 'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.',
        }),
        acquireTime: { ...microTime(), description: 'acquireTime is a time when the current lease was acquired.' },
        renewTime: { ...microTime(), description: 'renewTime is a time when the current holder of a lease has last updated the lease.' },
        leaseTransitions: int32({ minimum: 0, description: 'leaseTransitions is the number of transitions of a lease between holders.' }),
        strategy: str({
          description:
            'Strategy indicates the strategy for picking the leader for coordinated leader election. If the field is not specified, there is no active coordination for this lease. (Alpha) Using this field requires the CoordinatedLeaderElection feature gate to be enabled.',
        }),
        preferredHolder: str({
          description:
            'PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up. This field can only be set if Strategy is also set.',
        }),
      }, { description: 'spec contains the specification of the Lease.' }),
    }, 'Lease defines a lease concept.'),
    printerColumns: [
      nameColumn,
      { name: 'Holder', type: 'string', description: 'holderIdentity contains the identity of the holder of a current lease.', value: (o) => (o.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '' },
      ageColumn,
    ],
    strategy: {
      prepareForCreate(o) {
        if (coordinated) return;
        const spec = o.spec as LeaseSpec | undefined;
        if (spec) {
          delete spec.strategy;
          delete spec.preferredHolder;
        }
      },
      prepareForUpdate(o, old) {
        if (coordinated) return;
        const spec = o.spec as LeaseSpec | undefined;
        const prev = old.spec as LeaseSpec | undefined;
        if (!spec) return;
        if (prev?.strategy === undefined) delete spec.strategy;
        if (prev?.preferredHolder === undefined) delete spec.preferredHolder;
      },
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

/**
 * ValidateLeaseSpec: positive durations, non-negative transitions, preferredHolder needs a strategy.
 * The two range checks are also the schema's `minimum`s (declarative validation); the
 * preferredHolder rule relates two fields, which a schema cannot say.
 */
function validateLease(obj: KObject): FieldError[] {
  const spec = (obj.spec ?? {}) as LeaseSpec;
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds != null && spec.leaseDurationSeconds <= 0)
    errs.push(markCoveredByDeclarative(fieldError.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0')));
  if (spec.leaseTransitions != null && spec.leaseTransitions < 0)
    errs.push(markCoveredByDeclarative(fieldError.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0')));
  if (spec.preferredHolder && !spec.strategy) errs.push(fieldError.forbidden('spec.preferredHolder', 'preferredHolder is only allowed if strategy is set'));
  return errs;
}
