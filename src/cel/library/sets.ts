// cel-go's sets extension (Kubernetes' base environment 1.29+): sets.contains(a, b) — every element
// of b is in a; sets.equivalent(a, b) — each contains the other; sets.intersects(a, b) — one element
// in both. Elements compare with CEL equality (1 == 1.0 across numeric types).

import { celEquals, items } from './values.ts';
import type { Registrar } from './register.ts';

const has = (list: unknown[], v: unknown): boolean => list.some((x) => celEquals(x, v));
const contains = (a: unknown, b: unknown): boolean => {
  const all = items(a);
  return items(b).every((v) => has(all, v));
};

export function registerSets(r: Registrar): void {
  class SetsNamespace {}
  r.env.registerType('SetsNamespace', SetsNamespace);
  r.env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  r.fn('SetsNamespace.contains(list<A>, list<A>): bool', (_ns: unknown, a: unknown, b: unknown) => contains(a, b));
  r.fn('SetsNamespace.equivalent(list<A>, list<A>): bool', (_ns: unknown, a: unknown, b: unknown) => contains(a, b) && contains(b, a));
  r.fn('SetsNamespace.intersects(list<A>, list<A>): bool', (_ns: unknown, a: unknown, b: unknown) => {
    const other = items(b);
    return items(a).some((v) => has(other, v));
  });
}
