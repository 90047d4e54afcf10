// Lease (coordination/v1, namespaced): leader election and heartbeats.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { markCoveredByDeclarative } from '../declarative-validation.ts';
import type { KObject } from '../../machinery/meta.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { describe, int32, microTime, obj, objectSchema, str } from '../schemas.ts';
import { leaseDocs } from './docs/lease.ts';
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
    schema: describe(
      objectSchema({
        spec: obj({
          holderIdentity: str(),
          leaseDurationSeconds: int32({ minimum: 0, exclusiveMinimum: true }),
          acquireTime: microTime(),
          renewTime: microTime(),
          leaseTransitions: int32({ minimum: 0 }),
          strategy: str(),
          preferredHolder: str(),
        }),
      }),
      leaseDocs,
    ),
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
