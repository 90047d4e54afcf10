// ServiceCIDR (n.group('networking')/v1, cluster-scoped): a range that Service cluster IPs are
// allocated from, at most one CIDR per IP family. The CIDRs are immutable, except that a
// single-family range may gain its second family (how a cluster becomes dual-stack). Status
// carries conditions and changes only through /status, which changes nothing else.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { cidrFamily, validateCIDR } from '../../machinery/ip.ts';
import { isPlainObject, type KObject } from '../../machinery/meta.ts';
import { validateConditions, type ConditionRules } from '../../machinery/validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { arr, condition, describe, int64, obj, objectSchema, str } from '../schemas.ts';
import { CIDRS_DESCRIPTION, serviceCidrDocs } from './docs/service-cidr.ts';
import { keepStatus, statusOnlySubresource } from './status-subresource.ts';

/** Every ServiceCIDR condition field is required; reason CamelCase, type qualified (docs/rulings.md#r12). */
const SERVICE_CIDR_CONDITION_RULES: ConditionRules = {
  camelCaseReason: true,
  reasonRequired: true,
  qualifiedType: true,
  lastTransitionTimeRequired: true,
  messageRequired: true,
  observedGeneration: true,
};

const cidrsOf = (o: KObject): unknown[] | undefined => {
  const spec = o.spec;
  return isPlainObject(spec) && Array.isArray(spec.cidrs) ? spec.cidrs : undefined;
};

const conditionsOf = (o: KObject): unknown => (isPlainObject(o.status) ? o.status.conditions : undefined);

export function serviceCidrDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'ServiceCIDR',
    resource: 'servicecidrs',
    singular: 'servicecidr',
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: describe(
      objectSchema({
        spec: obj({ cidrs: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }),
        status: obj({
          conditions: arr(
            { ...condition({ observedGeneration: int64() }), required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
            { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' },
          ),
        }),
      }),
      serviceCidrDocs,
    ),
    // As Kubernetes' status strategy, /status keeps all of the stored metadata.
    subresources: [statusOnlySubresource],
    printerColumns: [
      nameColumn,
      { name: 'CIDRs', type: 'string', description: CIDRS_DESCRIPTION, value: (o) => (cidrsOf(o) ?? []).join(',') },
      ageColumn,
    ],
    strategy: {
      // As in Kubernetes, a new object keeps the status it was created with (validated below);
      // updates of the main resource keep the stored status.
      prepareForUpdate: keepStatus,
      validate: (o) => [...validateCidrs(cidrsOf(o), o.spec), ...validateConditions(conditionsOf(o), 'status.conditions', SERVICE_CIDR_CONDITION_RULES)],
      validateUpdate: (o, old) => [...validateCidrsUpdate(cidrsOf(o) ?? [], cidrsOf(old) ?? [], o.spec), ...validateConditions(conditionsOf(o), 'status.conditions', SERVICE_CIDR_CONDITION_RULES)],
    },
  };
}

const PATH = 'spec.cidrs';

/** One or two CIDRs in canonical subnet form, of different families. */
function validateCidrs(cidrs: unknown[] | undefined, spec: unknown): FieldError[] {
  if (!cidrs?.length) return [fieldError.required(PATH, 'at least one CIDR required')];
  if (cidrs.length > 2) return [fieldError.invalid(PATH, spec, 'may only hold up to 2 values')];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => {
    for (const m of validateCIDR(String(c))) errs.push(fieldError.invalid(child(PATH, i), c, m));
  });
  if (cidrs.length === 2) {
    const family = cidrFamily(String(cidrs[0]));
    if (family !== undefined && family === cidrFamily(String(cidrs[1])))
      errs.push(fieldError.invalid(PATH, cidrs, 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  }
  return errs;
}

/** Unchanged CIDRs, or a single CIDR joined by a second one of the other family. */
function validateCidrsUpdate(cidrs: unknown[], old: unknown[], spec: unknown): FieldError[] {
  const immutable = 'field is immutable';
  if (cidrs.length === old.length) {
    return old.flatMap((c, i) => (c === cidrs[i] ? [] : [fieldError.invalid(child(PATH, i), cidrs[i], immutable)]));
  }
  if (old.length === 1 && cidrs.length === 2) {
    const errs = cidrs[0] === old[0] ? [] : [fieldError.invalid(child(PATH, 0), cidrs[0], immutable)];
    return [...errs, ...validateCidrs(cidrs, spec)];
  }
  return [fieldError.invalid(PATH, cidrs, immutable)];
}
