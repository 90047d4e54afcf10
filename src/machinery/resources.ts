// Resource quantities (`1.5Gi`, `250m`) as exact values, and resource names as Kubernetes checks
// them: shared by every kind with resource lists (Node capacity, RuntimeClass overhead).

import type { Naming } from '../naming.ts';
import { fieldError, type FieldError } from './field-errors.ts';
import { qualifiedName } from './meta.ts';

/** An exact decimal value: num / den, den > 0. */
interface Rational {
  num: bigint;
  den: bigint;
}

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const QUANTITY_RE = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** A resource quantity (`1.5Gi`, `250m`, `1e3`, or a JSON integer) as an exact value. */
export function parseQuantity(q: string | number): Rational | undefined {
  const m = QUANTITY_RE.exec(String(q));
  if (!m) return undefined;
  const [, sign, digits, suffix = ''] = m as unknown as [string, string, string, string | undefined];
  const [whole = '', frac = ''] = digits.split('.');
  let num = BigInt((whole || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (sign === '-') num = -num;
  if (suffix in BINARY_SUFFIX) num *= 1n << BINARY_SUFFIX[suffix]!;
  else {
    const exp = suffix in DECIMAL_SUFFIX ? DECIMAL_SUFFIX[suffix]! : Number(suffix.slice(1));
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  return { num, den };
}

/** Ceiling of a rational times a scale (Quantity.ScaledValue rounds up). */
export const ceilScaled = (r: Rational, scale: bigint): bigint => {
  const n = r.num * scale;
  const q = n / r.den;
  return n % r.den > 0n ? q + 1n : q;
};

// Resource names that are whole numbers (object counts), besides extended resources.
export const INTEGER_RESOURCES = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.storage',
  'storage',
  ...INTEGER_RESOURCES,
]);
const CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
export const HUGEPAGES_PREFIX = 'hugepages-';

export const isHugePages = (name: string) => name.startsWith(HUGEPAGES_PREFIX);

function isNativeResource(name: string, n: Naming): boolean {
  return !name.includes('/') || name.includes(`${n.labelDomain}/`);
}

export function isExtendedResource(name: string, n: Naming): boolean {
  if (isNativeResource(name, n) || name.startsWith('requests.')) return false;
  return qualifiedName(`requests.${name}`).length === 0;
}

export function validateResourceName(name: string, at: string, n: Naming): FieldError[] {
  const qn = qualifiedName(name);
  if (qn.length) return qn.map((m) => fieldError.invalid(at, name, m));
  const errs: FieldError[] = [];
  const bare = !name.includes('/');
  if (bare && !STANDARD_RESOURCES.has(name) && !isHugePages(name) && !(name.startsWith('requests.hugepages-') || name.startsWith('limits.hugepages-')))
    errs.push(fieldError.invalid(at, name, 'must be a standard resource type or fully qualified'));
  if (bare) {
    if (!CONTAINER_RESOURCES.has(name) && !isHugePages(name)) errs.push(fieldError.invalid(at, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name, n) && !isExtendedResource(name, n)) {
    errs.push(fieldError.invalid(at, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/**
 * ValidateResourceQuantityValue: not negative, and a whole number for countable and extended
 * resources. `at` names the field; unparsable quantities are the schema's to report.
 */
export function validateResourceQuantity(name: string, raw: string | number, at: string, n: Naming): FieldError[] {
  const q = parseQuantity(raw);
  if (!q) return [];
  const errs: FieldError[] = [];
  if (q.num < 0n) errs.push(fieldError.invalid(at, String(raw), 'must be greater than or equal to 0'));
  if ((INTEGER_RESOURCES.has(name) || isExtendedResource(name, n)) && ceilScaled(q, 1000n) % 1000n !== 0n) errs.push(fieldError.invalid(at, String(raw), 'must be an integer'));
  return errs;
}
