// Equality and ordering of CEL values as the libraries need them (list indexOf, min, max,
// isSorted), over cel-js' representations: bigint (int), UnsignedInt (uint), number (double),
// string, boolean, null, Uint8Array (bytes), Date (timestamp), Duration, arrays and Sets (lists),
// Maps and plain objects (maps and objects).

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celError } from './register.ts';
import { listTypeOf, type ListType } from '../list-types.ts';

type Num = bigint | number;

function numeric(v: unknown): Num | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  return undefined;
}

function durationNanos(d: Duration): bigint {
  return d.seconds * 1_000_000_000n + BigInt(d.nanos);
}

function entries(v: object): [unknown, unknown][] {
  return v instanceof Map ? [...v.entries()] : Object.entries(v);
}

/** CEL equality (heterogeneous numbers compare by value; NaN equals nothing). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na == nb; // eslint-disable-line eqeqeq
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Duration && b instanceof Duration) return durationNanos(a) === durationNanos(b);
  const listA = Array.isArray(a) || a instanceof Set;
  const listB = Array.isArray(b) || b instanceof Set;
  if (listA || listB) {
    if (!(listA && listB)) return false;
    const x = [...(a as Iterable<unknown>)];
    const y = [...(b as Iterable<unknown>)];
    const type = listTypeOf(a);
    if (type !== undefined) return listsEqual(type, x, y);
    return x.length === y.length && x.every((v, i) => celEquals(v, y[i]));
  }
  // Maps, and objects of one schema type (instances of one class, fields as own properties).
  if (!(isMap(a) && isMap(b)) && a.constructor !== b.constructor) return false;
  const ea = entries(a);
  const mb = new Map(entries(b));
  return ea.length === mb.size && ea.every(([k, v]) => mb.has(k) && celEquals(v, mb.get(k)));
}

function isMap(v: object): boolean {
  return v instanceof Map || v.constructor === Object || v.constructor === undefined;
}

/** Ordering of two comparable CEL values: negative, zero or positive. */
export function celCompare(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (a instanceof Duration && b instanceof Duration) {
    const d = durationNanos(a) - durationNanos(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  throw celError('no such overload');
}

/** A list value's items, whatever its representation. */
export function items(list: unknown): unknown[] {
  return Array.isArray(list) ? list : [...(list as Iterable<unknown>)];
}

function field(v: unknown, k: string): unknown {
  return v instanceof Map ? v.get(k) : (v as Record<string, unknown> | null)?.[k];
}

/** Whether two entries of a map list have the same key fields. */
export function sameKeys(keys: string[], a: unknown, b: unknown): boolean {
  return keys.every((k) => celEquals(field(a, k), field(b, k)));
}

/** Equality of a set list (order ignored) or a map list (entries matched by key). */
export function listsEqual(type: ListType, a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  if (type.type === 'set') return a.every((x) => b.some((y) => celEquals(x, y)));
  return a.every((x) => {
    const y = b.find((v) => sameKeys(type.keys, x, v));
    return y !== undefined && celEquals(x, y);
  });
}
