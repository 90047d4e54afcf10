// RuntimeClass (n.group('node')/v1, cluster-scoped): the container runtime configuration a Pod
// runs with. A top-level `handler` (no spec), an optional per-Pod resource overhead and optional
// scheduling constraints that admission merges into the Pods using the class.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Label, isPlainObject, labelValue, qualifiedName, validateLabels, type KObject } from '../../machinery/meta.ts';
import { validateImmutable } from '../../machinery/validation.ts';
import { ceilScaled, HUGEPAGES_PREFIX, INTEGER_RESOURCES, isExtendedResource, isHugePages, parseQuantity, validateResourceName } from '../../machinery/resources.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn, type PrinterColumn } from '../printers.ts';
import { arr, describe, int64, obj, objectSchema, quantity, str } from '../schemas.ts';
import { runtimeClassDocs } from './docs/runtime-class.ts';

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

interface RuntimeClassObject extends KObject {
  handler?: string;
  overhead?: { podFixed?: Record<string, string | number> };
  scheduling?: { nodeSelector?: Record<string, string>; tolerations?: Toleration[] };
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

export function runtimeClassDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  const comparisonOperators = gates.TaintTolerationComparisonOperators === true;
  const validate = (o: KObject): FieldError[] => validateRuntimeClass(o as RuntimeClassObject, n, comparisonOperators);
  return {
    group: n.group('node'),
    version: 'v1',
    kind: 'RuntimeClass',
    resource: 'runtimeclasses',
    singular: 'runtimeclass',
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    // Kubernetes' RuntimeClass strategy never sets metadata.generation.
    tracksGeneration: false,
    allowCreateOnUpdate: true,
    schema: describe({
      ...objectSchema({
        handler: str(),
        overhead: obj({ podFixed: obj({}, { additionalProperties: quantity() }) }),
        scheduling: obj({
          nodeSelector: obj({}, { additionalProperties: str(), 'x-kubernetes-map-type': 'atomic' }),
          tolerations: arr(obj({ key: str(), operator: str(), value: str(), effect: str(), tolerationSeconds: int64() }), { 'x-kubernetes-list-type': 'atomic' }),
        }),
      }),
      required: ['handler'],
    }, runtimeClassDocs),
    printerColumns: runtimeClassColumns,
    strategy: {
      validate,
      validateUpdate: (o, old) => [...validate(o), ...validateImmutable((o as RuntimeClassObject).handler, (old as RuntimeClassObject).handler, 'handler')],
      warnings: (o) => deprecatedNodeLabelWarnings(o as RuntimeClassObject, n),
    },
  };
}

const runtimeClassColumns: readonly PrinterColumn[] = [
  nameColumn,
  // Kubernetes takes this description from ObjectMeta's documentation, which has no `handler`.
  { name: 'Handler', type: 'string', description: '', value: (o) => (o as RuntimeClassObject).handler ?? '' },
  ageColumn,
];

function validateRuntimeClass(rc: RuntimeClassObject, n: Naming, comparisonOperators: boolean): FieldError[] {
  const errs: FieldError[] = [];
  // A missing handler is reported by the schema (required); an empty one fails the label rule.
  const handler = rc.handler ?? '';
  for (const m of dns1123Label(handler)) errs.push(fieldError.invalid('handler', handler, m));
  if (rc.overhead) for (const x of validateOverhead(rc.overhead.podFixed ?? {}, 'overhead', n)) errs.push(x);
  if (rc.scheduling) {
    const s = rc.scheduling;
    if (s.nodeSelector) for (const x of validateLabels(s.nodeSelector, 'scheduling.nodeSelector')) errs.push(x);
    for (const x of validateTolerations(s.tolerations ?? [], 'scheduling.tolerations', comparisonOperators)) errs.push(x);
  }
  return errs;
}

// ---- tolerations ----

/**
 * Kubernetes' toleration rules (core ValidateTolerations), plus RuntimeClass's own: no two
 * tolerations alike in key, operator, value and effect. Field paths are Kubernetes' own, including
 * its habit of reporting a bad `Equal` value and a value given with `Exists` on `operator`.
 */
function validateTolerations(list: readonly Toleration[], path: string, comparisonOperators: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((t, i) => {
    const at = child(path, i);
    const key = t.key ?? '';
    const operator = t.operator ?? '';
    const value = t.value ?? '';
    const effect = t.effect ?? '';
    if (key) for (const m of qualifiedName(key)) errs.push(fieldError.invalid(child(at, 'key'), key, m));
    // An empty key matches every taint, which only makes sense with Exists.
    if (!key && operator !== 'Exists')
      errs.push(fieldError.invalid(child(at, 'operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute')
      errs.push(fieldError.invalid(child(at, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    switch (operator) {
      case '':
      case 'Equal': {
        const problems = labelValue(value);
        if (problems.length) errs.push(fieldError.invalid(child(at, 'operator'), value, problems.join(';')));
        break;
      }
      case 'Exists':
        if (value) errs.push(fieldError.invalid(child(at, 'operator'), value, "value must be empty when `operator` is 'Exists'"));
        break;
      case 'Lt':
      case 'Gt':
        if (!comparisonOperators) {
          errs.push(fieldError.notSupported(child(at, 'operator'), operator, ['Equal', 'Exists']));
          break;
        }
        for (const m of decimalInt64(value)) errs.push(fieldError.invalid(child(at, 'value'), value, m));
        break;
      default:
        errs.push(fieldError.notSupported(child(at, 'operator'), operator, comparisonOperators ? ['Equal', 'Exists', 'Lt', 'Gt'] : ['Equal', 'Exists']));
    }
    if (effect && !(TAINT_EFFECTS as readonly string[]).includes(effect)) errs.push(fieldError.notSupported(child(at, 'effect'), effect, TAINT_EFFECTS));
    const identity = JSON.stringify([key, operator, value, effect]);
    if (seen.has(identity)) errs.push(fieldError.duplicate(at, t));
    else seen.add(identity);
  });
  return errs;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * The value of an `Lt`/`Gt` toleration: a decimal integer written canonically (no sign but a
 * leading `-`, no leading zeros, no `-0`) that fits in 64 bits; problems as messages.
 */
export function decimalInt64(v: string): string[] {
  if (v === '') return ['must be non-empty'];
  if (!/^(0|-?[1-9][0-9]*)$/.test(v)) return ['must be a valid decimal integer in canonical form'];
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) return ['must be a valid 64-bit integer'];
  return [];
}

/** Whether a toleration with `Lt`/`Gt` tolerates a taint value: numbers compared, else no match. */
export function toleratesNumerically(operator: 'Lt' | 'Gt', tolerationValue: string, taintValue: string): boolean {
  if (decimalInt64(tolerationValue).length || decimalInt64(taintValue).length) return false;
  const tol = BigInt(tolerationValue);
  const taint = BigInt(taintValue);
  return operator === 'Lt' ? taint < tol : taint > tol;
}

// ---- overhead ----

/**
 * `overhead.podFixed`, checked as Kubernetes checks container limits (which is where its messages
 * and field paths, `overhead.limits[<resource>]`, come from): valid resource names, no negative
 * quantities, whole numbers for countable and extended resources, huge pages in whole pages and
 * only with cpu or memory.
 */
function validateOverhead(podFixed: Record<string, string | number>, path: string, n: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const limits = child(path, 'limits');
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, raw] of Object.entries(podFixed)) {
    const at = `${limits}[${name}]`;
    for (const x of validateResourceName(name, at, n)) errs.push(x);
    const q = parseQuantity(raw);
    if (!q) continue; // the schema's pattern reports it
    if (q.num < 0n) errs.push(fieldError.invalid(at, String(raw), 'must be greater than or equal to 0'));
    if ((INTEGER_RESOURCES.has(name) || isExtendedResource(name, n)) && ceilScaled(q, 1000n) % 1000n !== 0n)
      errs.push(fieldError.invalid(at, String(raw), 'must be an integer'));
    if (isHugePages(name)) {
      hugePages = true;
      const page = parseQuantity(name.slice(HUGEPAGES_PREFIX.length));
      const pageValue = page && page.num > 0n && ceilScaled(page, 1000n) % 1000n === 0n ? ceilScaled(page, 1n) : 0n;
      if (pageValue === 0n || ceilScaled(q, 1n) % pageValue !== 0n) errs.push(fieldError.invalid(at, String(raw), `${String(raw)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) errs.push(fieldError.forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}

// ---- warnings ----

/** Warnings for node labels Kubernetes deprecated, used as node selector keys. */
function deprecatedNodeLabelWarnings(rc: RuntimeClassObject, n: Naming): string[] {
  const d = n.labelDomain;
  const deprecated: Record<string, string> = {
    [`beta.${d}/arch`]: `deprecated since v1.14; use "${d}/arch" instead`,
    [`beta.${d}/os`]: `deprecated since v1.14; use "${d}/os" instead`,
    [`failure-domain.beta.${d}/region`]: `deprecated since v1.17; use "topology.${d}/region" instead`,
    [`failure-domain.beta.${d}/zone`]: `deprecated since v1.17; use "topology.${d}/zone" instead`,
    [`beta.${d}/instance-type`]: `deprecated since v1.17; use "node.${d}/instance-type" instead`,
  };
  const selector = rc.scheduling?.nodeSelector;
  if (!isPlainObject(selector)) return [];
  return Object.keys(selector)
    .filter((k) => Object.hasOwn(deprecated, k))
    .map((k) => `scheduling.nodeSelector: ${deprecated[k]}`);
}
