// Field paths and field sets: the vocabulary of ownership. A path element selects a struct field
// (`f:name`), a map-list item by its key fields (`k:{"name":"x"}`), a set item by its value
// (`v:"a"`) or an atomic-list item by index (`i:0`). A FieldSet is a tree of such elements; a node
// may be a member (owned itself), a parent of members, or both (`"."` in the FieldsV1 encoding).
// Orders, serializations and the set algebra follow the reference implementation exactly, since
// the encoded form is stored and compared byte for byte by clients.

import { compareStrings, compareValues, goJson, goJsonString, isJsonMap, isPlainJsonText, valueToGoString, type JsonValue } from './value.ts';

export type PathElement =
  | { readonly kind: 'field'; readonly name: string; readonly key: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, JsonValue])[]; readonly key: string }
  | { readonly kind: 'value'; readonly value: JsonValue; readonly key: string }
  | { readonly kind: 'index'; readonly index: number; readonly key: string };

/** A path from the object root; the empty path (the whole object) is never owned. */
export type Path = readonly PathElement[];

/** Malformed FieldsV1 content or an invalid path element. */
export class FieldsV1Error extends Error {
  override name = 'FieldsV1Error';
}

// Field elements repeat across every set and object; reuse them (bounded, label keys are free text).
const fieldCache = new Map<string, PathElement>();

export function fieldElement(name: string): PathElement {
  let pe = fieldCache.get(name);
  if (pe) return pe;
  pe = { kind: 'field', name, key: `f:${name}` };
  if (fieldCache.size > 20000) fieldCache.clear();
  fieldCache.set(name, pe);
  return pe;
}

/** A map-list item selector; fields are sorted by name as the reference keeps them. */
export function keyElement(fields: Iterable<readonly [string, JsonValue]>): PathElement {
  const sorted = [...fields].sort((a, b) => compareStrings(a[0], b[0]));
  const key = `k:{${sorted.map(([n, v]) => `${goJsonString(n)}:${goJson(v)}`).join(',')}}`;
  return { kind: 'key', fields: sorted, key };
}

export const valueElement = (value: JsonValue): PathElement => ({
  kind: 'value',
  value,
  // (A plain string, the usual value, is written into the key at once.)
  key: typeof value === 'string' && isPlainJsonText(value, 0, value.length) ? `v:"${value}"` : `v:${goJson(value)}`,
});

export const indexElement = (index: number): PathElement => ({ kind: 'index', index, key: `i:${index}` });

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

/** The reference's order of path elements: fields < keys < values < indexes, then by content. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key': {
      const fa = a.fields;
      const fb = (b as typeof a).fields;
      const n = Math.min(fa.length, fb.length);
      for (let i = 0; i < n; i++) {
        const c = compareStrings(fa[i]![0], fb[i]![0]);
        if (c !== 0) return c;
        const d = compareValues(fa[i]![1], fb[i]![1]);
        if (d !== 0) return d;
      }
      return fa.length === fb.length ? 0 : fa.length < fb.length ? -1 : 1;
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index': {
      const bi = (b as typeof a).index;
      return a.index === bi ? 0 : a.index < bi ? -1 : 1;
    }
  }
}

/** How the reference prints one element: `.name`, `[name="x",port=80]`, `[="a"]`, `[0]`. */
export function pathElementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([n, v]) => `${n}=${valueToGoString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueToGoString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** A path as the reference prints it in conflicts, e.g. `.spec.containers[name="c"].image`. */
export const pathString = (path: Path): string => path.map(pathElementString).join('');

/** A path from parts: a string is a field, a number an index, an element itself. */
export function makePath(...parts: (string | number | PathElement)[]): PathElement[] {
  return parts.map((p) => (typeof p === 'string' ? fieldElement(p) : typeof p === 'number' ? indexElement(p) : p));
}

interface ChildNode {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

const byElement = (a: PathElement, b: PathElement) => comparePathElements(a, b);

/**
 * A set of field paths, stored as a tree. Sets produced by the algebra share subtrees with their
 * operands, so only a set built fresh (with `insert`) may be mutated, and only while building.
 */
export class FieldSet {
  // (Loops over members use forEach: a for-of over a Map's entries makes an array per entry, and a
  // set of a long list's items has hundreds of thousands.)
  private members = new Map<string, PathElement>();
  private readonly children = new Map<string, ChildNode>();
  private sortedMembersCache: PathElement[] | undefined;
  private sortedChildrenCache: ChildNode[] | undefined;
  /** Known to hold a member somewhere below (see isEmpty). */
  private nonEmpty = false;

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds `path` as a member; its parents are not members unless inserted too. */
  insert(path: Path): void {
    if (path.length === 0) return;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.descend(path[i]!);
    s.insertMember(path[path.length - 1]!);
  }

  /** Adds `pe` as a member (building only); false when it was one already. */
  insertMember(pe: PathElement): boolean {
    // One lookup: a new key grows the map.
    const n = this.members.size;
    this.members.set(pe.key, pe);
    if (this.members.size === n) return false;
    this.sortedMembersCache = undefined;
    return true;
  }

  /** The child set under `pe`, created when missing (building only). */
  descend(pe: PathElement): FieldSet {
    const c = this.children.get(pe.key);
    if (c) return c.set;
    const set = new FieldSet();
    this.children.set(pe.key, { pe, set });
    this.sortedChildrenCache = undefined;
    return set;
  }

  /** Attaches a freshly built subtree under `pe` (building only); merges into an existing one. */
  attach(pe: PathElement, set: FieldSet): void {
    const c = this.children.get(pe.key);
    if (c) {
      // Two spellings of one element (e.g. `v:1` and `v:1.0`): keep both subtrees.
      for (const p of set.paths()) c.set.insert(p);
      return;
    }
    this.children.set(pe.key, { pe, set });
    this.sortedChildrenCache = undefined;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1; i++) {
      s = s.children.get(path[i]!.key)?.set;
      if (!s) return false;
    }
    return s.members.has(path[path.length - 1]!.key);
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(pe.key);
  }

  /** The subtree under `pe` (paths below it, without the prefix), if any. */
  child(pe: PathElement): FieldSet | undefined {
    return this.children.get(pe.key)?.set;
  }

  /** The subtree under `pe`, empty when there is none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe.key)?.set ?? EMPTY;
  }

  get memberCount(): number {
    return this.members.size;
  }

  get childCount(): number {
    return this.children.size;
  }

  /** True when no path at any depth is a member. */
  isEmpty(): boolean {
    if (this.members.size > 0 || this.nonEmpty) return false;
    for (const c of this.children.values())
      if (!c.set.isEmpty()) {
        // Nothing is ever removed from a set, so once it has a member it keeps one: remember it,
        // or the algebra, which asks this at every level, would walk deep sets again and again.
        this.nonEmpty = true;
        return false;
      }
    return true;
  }

  /** Number of member paths. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  union(o: FieldSet): FieldSet {
    if (o === this || o.isBare()) return this;
    if (this.isBare()) return o;
    const out = new FieldSet();
    out.members = new Map(this.members);
    o.members.forEach((pe, k) => out.members.set(k, pe));
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      out.children.set(k, oc ? { pe: c.pe, set: c.set.union(oc.set) } : c);
    }
    for (const [k, oc] of o.children) if (!this.children.has(k)) out.children.set(k, oc);
    return out;
  }

  /**
   * The union of many sets in one walk: each node of each set is visited once (uniting them two
   * at a time would copy the growing result again for every set). Subtrees only one set has are
   * shared with it.
   */
  static unionAll(sets: readonly FieldSet[]): FieldSet {
    const present = sets.filter((s) => !s.isBare());
    if (present.length === 0) return new FieldSet();
    if (present.length === 1) return present[0]!;
    const out = new FieldSet();
    const groups = new Map<string, { pe: PathElement; sets: FieldSet[] }>();
    for (const s of present) {
      if (out.members.size === 0) out.members = new Map(s.members);
      else s.members.forEach((pe, k) => out.members.set(k, pe));
      for (const [k, c] of s.children) {
        const g = groups.get(k);
        if (g) g.sets.push(c.set);
        else groups.set(k, { pe: c.pe, sets: [c.set] });
      }
    }
    for (const [k, g] of groups) out.children.set(k, g.sets.length === 1 ? { pe: g.pe, set: g.sets[0]! } : { pe: g.pe, set: FieldSet.unionAll(g.sets) });
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    if (o.isBare() || this.isBare()) return out;
    this.members.forEach((pe, k) => {
      if (o.members.has(k)) out.members.set(k, pe);
    });
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      if (!oc) continue;
      const r = c.set.intersection(oc.set);
      if (!r.isEmpty()) out.children.set(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Paths of this set not in `o`; a member of `o` does not remove the paths below it. */
  difference(o: FieldSet): FieldSet {
    if (o.isBare() || this.isBare()) return this;
    const out = new FieldSet();
    this.members.forEach((pe, k) => {
      if (!o.members.has(k)) out.members.set(k, pe);
    });
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      if (!oc) {
        out.children.set(k, c);
        continue;
      }
      const r = c.set.difference(oc.set);
      if (!r.isEmpty()) out.children.set(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Like difference, but a member of `o` also removes every path below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    if (o.isBare() || this.isBare()) return this;
    const out = new FieldSet();
    this.members.forEach((pe, k) => {
      if (!o.members.has(k)) out.members.set(k, pe);
    });
    for (const [k, c] of this.children) {
      if (o.members.has(k)) continue;
      const oc = o.children.get(k);
      if (!oc) {
        out.children.set(k, c);
        continue;
      }
      const r = c.set.recursiveDifference(oc.set);
      if (!r.isEmpty()) out.children.set(k, { pe: c.pe, set: r });
    }
    return out;
  }

  /** Only the leaf paths: members that have no member below them. */
  leaves(): FieldSet {
    const out = new FieldSet();
    this.members.forEach((pe, k) => {
      const c = this.children.get(k);
      if (!c || c.set.isEmpty()) out.members.set(k, pe);
    });
    for (const [k, c] of this.children) {
      const l = c.set.leaves();
      if (!l.isEmpty()) out.children.set(k, { pe: c.pe, set: l });
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    if (o === this) return true;
    if (this.members.size !== o.members.size) return false;
    for (const k of this.members.keys()) if (!o.members.has(k)) return false;
    let n = 0;
    for (const [k, c] of this.children) {
      if (c.set.isEmpty()) continue;
      n++;
      const oc = o.children.get(k);
      if (!oc || !c.set.equals(oc.set)) return false;
    }
    let m = 0;
    for (const c of o.children.values()) if (!c.set.isEmpty()) m++;
    return n === m;
  }

  sortedMembers(): readonly PathElement[] {
    return (this.sortedMembersCache ??= [...this.members.values()].sort(byElement));
  }

  sortedChildren(): readonly { readonly pe: PathElement; readonly set: FieldSet }[] {
    return (this.sortedChildrenCache ??= [...this.children.values()].sort((a, b) => comparePathElements(a.pe, b.pe)));
  }

  /** Unsorted iteration over the direct children (for walks where order does not matter). */
  childEntries(): IterableIterator<{ readonly pe: PathElement; readonly set: FieldSet }> {
    return this.children.values();
  }

  memberElements(): IterableIterator<PathElement> {
    return this.members.values();
  }

  /** Calls fn for every member path in the reference's order (members first, then each child). */
  iterate(fn: (path: Path) => void, prefix: PathElement[] = []): void {
    for (const pe of this.sortedMembers()) fn([...prefix, pe]);
    for (const c of this.sortedChildren()) {
      prefix.push(c.pe);
      c.set.iterate(fn, prefix);
      prefix.pop();
    }
  }

  paths(): Path[] {
    const out: Path[] = [];
    this.iterate((p) => out.push(p));
    return out;
  }

  toString(): string {
    return this.paths().map(pathString).join('\n');
  }

  /** No members and no children at all (cheaper than isEmpty, used for fast paths). */
  private isBare(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }
}

const EMPTY = new FieldSet();

// ---- FieldsV1 ----

/** Encodes a set as FieldsV1: `{}` leaves, `"."` for an element that is also a parent, sorted keys. */
export function encodeFieldsV1(set: FieldSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  emitContents(set, false, out);
  return out;
}

function emitContents(set: FieldSet, includeSelf: boolean, out: Record<string, unknown>): void {
  const ms = set.sortedMembers();
  const cs = set.sortedChildren();
  if (includeSelf && (ms.length > 0 || cs.length > 0)) out['.'] = {};
  let mi = 0;
  let ci = 0;
  while (mi < ms.length || ci < cs.length) {
    const m = ms[mi];
    const c = cs[ci];
    const cmp = m === undefined ? 1 : c === undefined ? -1 : comparePathElements(m, c.pe);
    if (cmp < 0) {
      out[m!.key] = {};
      mi++;
    } else {
      const inner: Record<string, unknown> = {};
      emitContents(c!.set, cmp === 0, inner);
      out[c!.pe.key] = inner;
      ci++;
      if (cmp === 0) mi++;
    }
  }
}

class UnknownElementType extends Error {}

/** Parses one serialized element (`f:x`, `k:{…}`, `v:…`, `i:N`). */
export function parsePathElement(s: string): PathElement {
  if (s.length < 2) throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: key must be 2 characters long`);
  if (s[1] !== ':') throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: missing colon`);
  // Most values are plain strings, already written as the key would be: no parse, no rewrite.
  if (s.charCodeAt(0) === 0x76 /* v */ && isPlainStringLiteral(s, 2)) return { kind: 'value', value: s.slice(3, -1), key: s };
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldElement(rest);
    case 'v': {
      let v: unknown;
      try {
        v = JSON.parse(rest);
      } catch (e) {
        throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: ${(e as Error).message}`);
      }
      return valueElement(v as JsonValue);
    }
    case 'k': {
      let v: unknown;
      try {
        v = JSON.parse(rest);
      } catch (e) {
        throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: ${(e as Error).message}`);
      }
      if (!isJsonMap(v)) throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: a key must be a JSON object`);
      return keyElement(Object.entries(v));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest)) throw new FieldsV1Error(`invalid path element ${JSON.stringify(s)}: the index is not an integer`);
      return indexElement(Number(rest));
    }
    default:
      throw new UnknownElementType(s);
  }
}

/**
 * Whether `text` from `start` on is a JSON string literal of printable ASCII without escapes (nor
 * characters Go's JSON would escape): the string it stands for is what is between its quotes.
 */
function isPlainStringLiteral(text: string, start: number): boolean {
  const end = text.length - 1;
  return end > start && text.charCodeAt(start) === 0x22 && text.charCodeAt(end) === 0x22 && isPlainJsonText(text, start + 1, end);
}

/**
 * Decodes FieldsV1 content (the parsed JSON object). Element types this version does not know are
 * dropped, as the reference does; anything else malformed is a FieldsV1Error.
 */
export function decodeFieldsV1(fields: unknown, listed?: ReadonlyMap<object, string[]>): FieldSet {
  if (fields === null || fields === undefined) return new FieldSet();
  if (!isJsonMap(fields)) throw new FieldsV1Error('FieldsV1 must be a JSON object');
  return readNode(fields, undefined, listed).children ?? new FieldSet();
}

/** Where the decoding is, as a chain of elements: printed only for an error message. */
interface Trail {
  readonly parent: Trail | undefined;
  readonly pe: PathElement;
}

function trailString(t: Trail | undefined): string {
  const parts: string[] = [];
  for (let at = t; at; at = at.parent) parts.push(pathElementString(at.pe));
  return parts.reverse().join('');
}

const where = (trail: Trail | undefined): string => (trail ? ` at ${trailString(trail)}` : '');

/** True for `{}`: a leaf, the common case, which needs no walk of its own. */
function isEmptyMap(v: unknown): boolean {
  if (!isJsonMap(v)) return false;
  for (const _ in v) return false;
  return true;
}

/** `listed` has the keys of objects already listed (see decodeFieldsV1's callers). */
function readNode(obj: unknown, trail: Trail | undefined, listed: ReadonlyMap<object, string[]> | undefined): { children: FieldSet | undefined; isMember: boolean } {
  if (obj === null) return { children: undefined, isMember: true };
  if (!isJsonMap(obj)) throw new FieldsV1Error(`FieldsV1${where(trail)}: expected an object, found ${JSON.stringify(obj)}`);
  let children: FieldSet | undefined;
  let isMember = false;
  for (const key of listed?.get(obj) ?? Object.keys(obj)) {
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe: PathElement;
    try {
      pe = parsePathElement(key);
    } catch (e) {
      if (e instanceof UnknownElementType) continue;
      throw new FieldsV1Error(`FieldsV1${where(trail)}: ${(e as Error).message}`);
    }
    const value = obj[key];
    if (isEmptyMap(value)) {
      (children ??= new FieldSet()).insertMember(pe);
      continue;
    }
    const sub = readNode(value, { parent: trail, pe }, listed);
    if (sub.isMember) (children ??= new FieldSet()).insertMember(pe);
    if (sub.children) (children ??= new FieldSet()).attach(pe, sub.children);
  }
  if (!children) isMember = true;
  return { children, isMember };
}
