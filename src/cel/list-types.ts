// The x-kubernetes-list-type a list value was converted under, carried by the array itself (a
// non-enumerable symbol property, so it is still a plain CEL list to cel-js): `set` lists compare
// as sets, `map` lists by their keys, and both concatenate as the API contract says (rewrite.ts).

export type ListType = { type: 'set' } | { type: 'map'; keys: string[] };

const LIST_TYPE: unique symbol = Symbol('x-kubernetes-list-type');

type Marked = unknown[] & { [LIST_TYPE]?: ListType };

export function setListType<T extends unknown[]>(list: T, type: ListType): T {
  Object.defineProperty(list, LIST_TYPE, { value: type, enumerable: false });
  return list;
}

export function listTypeOf(value: unknown): ListType | undefined {
  return Array.isArray(value) ? (value as Marked)[LIST_TYPE] : undefined;
}
