// LeaseCandidate (n.group('coordination')/v1beta1, and v1alpha2 of the same form; namespaced, served
// only when enabled through --runtime-config): a component's bid to hold a Lease under coordinated leader election. The
// server pings candidates through `pingTime`; live ones answer by updating `renewTime`, and
// candidates left unrenewed are removed by the lease-candidate garbage collector.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { isPlainObject, pathSegmentName, qualifiedName, type KObject } from '../../machinery/meta.ts';
import { configMapKey, validateImmutable } from '../../machinery/validation.ts';
import { markCoveredByDeclarative } from '../declarative-validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn, type PrinterColumn } from '../printers.ts';
import { describe, microTime, obj, objectSchema, str } from '../schemas.ts';
import { leaseCandidateDocs } from './docs/lease-candidate.ts';

interface LeaseCandidateSpec {
  leaseName?: string;
  pingTime?: string;
  renewTime?: string;
  binaryVersion?: string;
  emulationVersion?: string;
  strategy?: string;
}

interface LeaseCandidateObject extends KObject {
  spec?: LeaseCandidateSpec;
}

/** The strategies Kubernetes defines; others must be `<domain>/<name>`. */
const LEASE_STRATEGIES = ['OldestEmulationVersion'] as const;

const specOf = (o: KObject): LeaseCandidateSpec => {
  const spec = (o as LeaseCandidateObject).spec;
  return isPlainObject(spec) ? spec : {};
};

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
    // Names are config-map keys (letters, digits, '-', '_', '.'); the strategy checks that, the
    // generic rule only keeps them usable as a path segment.
    nameRule: 'path-segment',
    tracksGeneration: false,
    allowCreateOnUpdate: true,
    selectableFields: { 'spec.leaseName': (o) => specOf(o).leaseName ?? '' },
    // Declarative validation: the spec's `required` list restates validateLeaseCandidateSpec's
    // Required errors for absent fields. The other rules (empty strings, semantic versions and
    // their order, qualified strategy names) have no schema form with the same errors.
    declarativeValidation: true,
    schema: describe(objectSchema({
      spec: obj(
        {
          leaseName: str(),
          pingTime: microTime(),
          renewTime: microTime(),
          binaryVersion: str(),
          emulationVersion: str(),
          strategy: str(),
        },
        { required: ['leaseName', 'binaryVersion', 'strategy'] },
      ),
    }), leaseCandidateDocs),
    printerColumns: leaseCandidateColumns,
    strategy: {
      validate: (o) => [...validateCandidateName(o), ...validateLeaseCandidateSpec(specOf(o), isPlainObject(o.spec))],
      validateUpdate: (o, old) => [
        ...validateCandidateName(o),
        ...validateLeaseCandidateSpec(specOf(o), isPlainObject(o.spec)),
        ...validateImmutable(specOf(o).leaseName, specOf(old).leaseName, 'spec.leaseName'),
      ],
    },
    enabledByDefault: false,
    // Kubernetes 1.36 still serves the alpha form (off unless --runtime-config turns it on),
    // field for field the same as v1beta1; v1beta1 is the storage version.
    versions: [{ version: 'v1alpha2', deprecatedIn: '1.35', removedIn: '1.38' }],
  };
}

const leaseCandidateColumns: readonly PrinterColumn[] = [
  nameColumn,
  {
    name: 'LeaseName',
    type: 'string',
    description:
      'LeaseName is the name of the lease for which this candidate is contending. The limits on this field are the same as on Lease.name. Multiple lease candidates may reference the same Lease.name. This field is immutable.',
    value: (o) => specOf(o).leaseName ?? '',
  },
  // Kubernetes takes these two descriptions from ObjectMeta's documentation, which has neither.
  { name: 'BinaryVersion', type: 'string', description: '', value: (o) => specOf(o).binaryVersion ?? '' },
  { name: 'EmulationVersion', type: 'string', description: '', value: (o) => specOf(o).emulationVersion ?? '' },
  ageColumn,
];

function validateCandidateName(o: KObject): FieldError[] {
  const name = o.metadata.name;
  // A missing name, or one the generic path-segment rule already rejected, is reported once.
  if (!name || pathSegmentName(name).length) return [];
  return configMapKey(name).map((m) => fieldError.invalid('metadata.name', name, m));
}

// ---- semantic versions ----

interface SemVer {
  major: bigint;
  minor: bigint;
  patch: bigint;
  /** Pre-release identifiers; build metadata takes no part in ordering and is not kept. */
  pre: string[];
}

const UINT64_MAX = (1n << 64n) - 1n;
const SEMVER_RE = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A strict semantic version (`1.31.0`, `1.32.0-alpha.1+abc`; no `v`), or undefined. */
export function parseSemVer(v: string): SemVer | undefined {
  const m = SEMVER_RE.exec(v);
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].map((s) => BigInt(s!));
  if (nums.some((x) => x > UINT64_MAX)) return undefined;
  const pre = m[4] ? m[4].split('.') : [];
  for (const id of pre) if (/^[0-9]+$/.test(id) && ((id.length > 1 && id.startsWith('0')) || BigInt(id) > UINT64_MAX)) return undefined;
  return { major: nums[0]!, minor: nums[1]!, patch: nums[2]!, pre };
}

const ZERO: SemVer = { major: 0n, minor: 0n, patch: 0n, pre: [] };

const cmp = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** Semantic version precedence: -1, 0 or 1. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  const core = cmp(a.major, b.major) || cmp(a.minor, b.minor) || cmp(a.patch, b.patch);
  if (core) return core;
  // A release ranks above its pre-releases.
  if (!a.pre.length && !b.pre.length) return 0;
  if (!a.pre.length) return 1;
  if (!b.pre.length) return -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    const xn = /^[0-9]+$/.test(x);
    const yn = /^[0-9]+$/.test(y);
    const c = xn && yn ? cmp(BigInt(x), BigInt(y)) : xn ? -1 : yn ? 1 : x < y ? -1 : x > y ? 1 : 0;
    if (c) return c;
  }
  return Math.sign(a.pre.length - b.pre.length);
}

// ---- spec ----

/** ValidateCoordinatedLeaseStrategy: a Kubernetes-defined strategy, or a qualified `<domain>/<name>`. */
function validateStrategy(strategy: string, path: string): FieldError[] {
  if (!strategy.includes('/')) return (LEASE_STRATEGIES as readonly string[]).includes(strategy) ? [] : [fieldError.notSupported(path, strategy, LEASE_STRATEGIES)];
  return qualifiedName(strategy).map((m) => fieldError.invalid(path, strategy, m));
}

/**
 * ValidateLeaseCandidateSpec: leaseName, binaryVersion and strategy are required; versions are
 * strict semantic versions with emulationVersion ≤ binaryVersion; OldestEmulationVersion needs an
 * emulationVersion. `specGiven`: the object has a spec, so the schema's `required` list reports
 * absent fields too (those errors are marked as covered by declarative validation).
 */
function validateLeaseCandidateSpec(spec: LeaseCandidateSpec, specGiven = false): FieldError[] {
  const errs: FieldError[] = [];
  // Required, and covered when the schema says so too: absent (or null) inside a given spec. An
  // empty string is only the hand-written rule's.
  const required = (field: keyof LeaseCandidateSpec): FieldError => {
    const err = fieldError.required(`spec.${field}`);
    return specGiven && spec[field] == null ? markCoveredByDeclarative(err) : err;
  };
  if (!spec.leaseName) errs.push(required('leaseName'));
  const emulation = spec.emulationVersion ?? '';
  const binary = spec.binaryVersion ?? '';
  // An unparsable version counts as 0.0.0 in the comparisons below, as in Kubernetes.
  let ev = ZERO;
  if (emulation) {
    const parsed = parseSemVer(emulation);
    if (parsed) ev = parsed;
    else errs.push(fieldError.invalid('spec.emulationVersion', emulation, 'must be a valid semantic version'));
  }
  let bv = ZERO;
  if (!binary) errs.push(required('binaryVersion'));
  else {
    const parsed = parseSemVer(binary);
    if (parsed) bv = parsed;
    else errs.push(fieldError.invalid('spec.binaryVersion', binary, 'must be a valid semantic version'));
  }
  if (binary && emulation && compareSemVer(bv, ev) < 0) errs.push(fieldError.invalid('spec.binaryVersion', binary, 'must be greater than or equal to `emulationVersion`'));
  const strategy = spec.strategy ?? '';
  if (!strategy) errs.push(required('strategy'));
  else {
    if (strategy === 'OldestEmulationVersion' && compareSemVer(ev, ZERO) === 0)
      errs.push(fieldError.required('spec.emulationVersion', "must be specified when `strategy` is 'OldestEmulationVersion'"));
    // Kubernetes appends the field name once more here: its errors read `spec.strategy.strategy`.
    for (const x of validateStrategy(strategy, 'spec.strategy.strategy')) errs.push(x);
  }
  return errs;
}
