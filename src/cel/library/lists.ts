// Kubernetes' list library: isSorted, sum, min, max, indexOf, lastIndexOf. min and max of an
// empty list are errors ("min called on empty list"); sum of an empty list is the zero of its
// element type.

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { OVERRIDE_SUFFIX } from '../errors.ts';
import { celError, type Registrar } from './register.ts';
import { celCompare, celEquals, items } from './values.ts';

const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';
const COMPARABLE = ['int', 'uint', 'double', 'bool', DURATION, TIMESTAMP, 'string', 'bytes'];
const MAX_INT = (1n << 63n) - 1n;
const MIN_INT = -(1n << 63n);

function add(a: unknown, b: unknown): unknown {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    const s = a + b;
    if (s > MAX_INT || s < MIN_INT) throw celError('integer overflow');
    return s;
  }
  if (a instanceof UnsignedInt && b instanceof UnsignedInt) return new UnsignedInt(a.valueOf() + b.valueOf());
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  if (a instanceof Duration && b instanceof Duration) return a.addDuration(b);
  throw celError('no such overload');
}

function extreme(name: 'min' | 'max', list: unknown): unknown {
  const all = items(list);
  if (all.length === 0) throw celError(`${name} called on empty list`);
  let best = all[0];
  for (const v of all.slice(1)) {
    const c = celCompare(v, best);
    if (name === 'min' ? c < 0 : c > 0) best = v;
  }
  return best;
}

export function registerLists(r: Registrar): void {
  for (const t of COMPARABLE) {
    r.fn(`list<${t}>.isSorted(): bool`, (list: unknown) => {
      const all = items(list);
      for (let i = 1; i < all.length; i++) if (celCompare(all[i - 1], all[i]) > 0) return false;
      return true;
    });
    r.fn(`list<${t}>.min(): ${t}`, (list: unknown) => extreme('min', list));
    r.fn(`list<${t}>.max(): ${t}`, (list: unknown) => extreme('max', list));
  }
  const zero: Record<string, () => unknown> = { int: () => 0n, uint: () => new UnsignedInt(0n), double: () => 0, [DURATION]: () => new Duration(0n, 0) };
  for (const [t, init] of Object.entries(zero)) {
    r.fn(`list<${t}>.sum(): ${t}`, (list: unknown) => {
      const all = items(list);
      return all.reduce((acc, v) => add(acc, v), init());
    });
  }
  r.fn(`list<A>.indexOf${OVERRIDE_SUFFIX}(A): int`, (list: unknown, v: unknown) => {
    const all = items(list);
    return BigInt(all.findIndex((x) => celEquals(x, v)));
  });
  r.fn(`list<A>.lastIndexOf${OVERRIDE_SUFFIX}(A): int`, (list: unknown, v: unknown) => {
    const all = items(list);
    for (let i = all.length - 1; i >= 0; i--) if (celEquals(all[i], v)) return BigInt(i);
    return -1n;
  });
}
