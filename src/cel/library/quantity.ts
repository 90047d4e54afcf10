// Kubernetes' quantity library (release 1.29+): quantity(), isQuantity(), and the members sign,
// isInteger, asInteger, asApproximateFloat, add, sub (a quantity or an int), compareTo,
// isGreaterThan, isLessThan. Values are exact (resource.Quantity's parser from machinery).

import { parseQuantity, quantityString, type Quantity } from '../../machinery/quantity.ts';
import { celError, type Registrar } from './register.ts';

const MAX_INT = (1n << 63n) - 1n;
const MIN_INT = -(1n << 63n);

export class CelQuantity {
  readonly q: Quantity;
  constructor(q: Quantity) {
    this.q = q;
  }
  toString(): string {
    return quantityString(this.q);
  }
}

/** Both values over a common exponent. */
function align(a: Quantity, b: Quantity): [bigint, bigint, number] {
  const e = Math.min(a.exponent, b.exponent);
  return [a.unscaled * 10n ** BigInt(a.exponent - e), b.unscaled * 10n ** BigInt(b.exponent - e), e];
}

function compare(a: Quantity, b: Quantity): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The value as an int64 when it is a whole number that fits. */
function asInt64(q: Quantity): bigint | undefined {
  let v: bigint;
  if (q.exponent >= 0) v = q.unscaled * 10n ** BigInt(q.exponent);
  else {
    const d = 10n ** BigInt(-q.exponent);
    if (q.unscaled % d !== 0n) return undefined;
    v = q.unscaled / d;
  }
  return v > MAX_INT || v < MIN_INT ? undefined : v;
}

/** resource.Quantity.Add: the receiver keeps its format unless it is zero. */
function sum(a: Quantity, b: Quantity, sign: 1n | -1n): CelQuantity {
  const [x, y, e] = align(a, b);
  return new CelQuantity({ unscaled: x + sign * y, exponent: e, format: a.unscaled === 0n ? b.format : a.format });
}

const fromInt = (i: bigint): Quantity => ({ unscaled: i, exponent: 0, format: 'DecimalExponent' });

export function registerQuantity(r: Registrar): void {
  const T = 'kubernetes.Quantity';
  r.env.registerType(T, CelQuantity);
  r.fn(`quantity(string): ${T}`, (s: string) => {
    const q = parseQuantity(s);
    if (typeof q === 'string') throw celError(q);
    return new CelQuantity(q);
  });
  r.fn('isQuantity(string): bool', (s: string) => typeof parseQuantity(s) !== 'string');
  const sign = (x: CelQuantity) => BigInt(x.q.unscaled > 0n ? 1 : x.q.unscaled < 0n ? -1 : 0);
  r.fn(`${T}.sign(): int`, sign);
  r.fn(`sign(${T}): int`, sign);
  r.fn(`${T}.isInteger(): bool`, (x: CelQuantity) => asInt64(x.q) !== undefined);
  r.fn(`${T}.asInteger(): int`, (x: CelQuantity) => {
    const v = asInt64(x.q);
    if (v === undefined) throw celError('cannot convert value to integer');
    return v;
  });
  r.fn(`${T}.asApproximateFloat(): double`, (x: CelQuantity) => Number(x.q.unscaled) * 10 ** x.q.exponent);
  r.fn(`${T}.add(${T}): ${T}`, (x: CelQuantity, y: CelQuantity) => sum(x.q, y.q, 1n));
  r.fn(`${T}.add(int): ${T}`, (x: CelQuantity, y: bigint) => sum(x.q, fromInt(y), 1n));
  r.fn(`${T}.sub(${T}): ${T}`, (x: CelQuantity, y: CelQuantity) => sum(x.q, y.q, -1n));
  r.fn(`${T}.sub(int): ${T}`, (x: CelQuantity, y: bigint) => sum(x.q, fromInt(y), -1n));
  r.fn(`${T}.compareTo(${T}): int`, (x: CelQuantity, y: CelQuantity) => BigInt(compare(x.q, y.q)));
  r.fn(`${T}.isGreaterThan(${T}): bool`, (x: CelQuantity, y: CelQuantity) => compare(x.q, y.q) > 0);
  r.fn(`${T}.isLessThan(${T}): bool`, (x: CelQuantity, y: CelQuantity) => compare(x.q, y.q) < 0);
  r.op(`${T} == ${T}`, (x: CelQuantity, y: CelQuantity) => compare(x.q, y.q) === 0);
}
