// Field paths and field sets: the vocabulary of ownership. A path element selects a struct field
// (`f:name`), a map-list item by its key fields (`k:{"name":"x"}`), a set item by its value
// (`v:"a"`) or an atomic-list item by index (`i:0`). A FieldSet is a tree of such elements; a node
// may be a member (owned itself), a parent of members, or both (`"."` in the FieldsV1 encoding).
// Orders, serializations and the set algebra follow the reference implementation exactly, since
// the encoded form is stored and compared byte for byte by clients.

import { compareStrings, comparesNatively, compareValues, goJson, goJsonString, isJsonMap, isPlainJsonText, valueToGoString, type JsonValue } from './value.ts';

// Sorting and merging a long list's items compare elements many times, so the common ones say how
// they compare fastest: a field whose name has no surrogate (`native`) by JavaScript's own string
// comparison (the reference's order by code point without a loop over characters), a plain string
// value (`plain`: its key is `v:"…"` around the value as it is) by its key (see plainValueOrder).
export type PathElement =
  | { readonly kind: 'field'; readonly name: string; readonly key: string; readonly native?: boolean }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, JsonValue])[]; readonly key: string }
  | { readonly kind: 'value'; readonly value: JsonValue; readonly key: string; readonly plain?: boolean }
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
  pe = { kind: 'field', name, key: `f:${name}`, native: comparesNatively(name) };
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

export function valueElement(value: JsonValue): PathElement {
  if (typeof value !== 'string') return { kind: 'value', value, key: `v:${goJson(value)}` };
  // (A plain string, the usual value, is written into the key at once.)
  if (isPlainJsonText(value, 0, value.length)) return { kind: 'value', value, key: `v:"${value}"`, plain: true };
  return { kind: 'value', value, key: `v:${goJson(value)}` };
}

export const indexElement = (index: number): PathElement => ({ kind: 'index', index, key: `i:${index}` });

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

/** The reference's order of path elements: fields < keys < values < indexes, then by content. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field': {
      const o = b as typeof a;
      return a.native && o.native ? nativeOrder(a.name, o.name) : compareStrings(a.name, o.name);
    }
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
    case 'value': {
      const o = b as typeof a;
      return a.plain && o.plain ? plainValueOrder(a.key, o.key, a.value as string, o.value as string) : compareValues(a.value, o.value);
    }
    case 'index': {
      const bi = (b as typeof a).index;
      return a.index === bi ? 0 : a.index < bi ? -1 : 1;
    }
  }
}

const nativeOrder = (a: string, b: string): number => (a === b ? 0 : a < b ? -1 : 1);

/**
 * The order of two plain string values (printable ASCII), from their keys `v:"…"`: a key is a
 * string of its own (a value decoded from FieldsV1 is a slice of its key, which compares several
 * times slower). The keys order as the values do, but where one value is the other followed by a
 * character below the quote (a space or `!`): only then are the values compared.
 */
function plainValueOrder(x: string, y: string, a: string, b: string): number {
  if (x === y) return 0;
  // The position of the shorter key's closing quote, in the longer key.
  const c = (x.length < y.length ? y : x).charCodeAt(Math.min(x.length, y.length) - 1);
  if (c === 0x20 || c === 0x21) return compareStrings(a, b);
  return x < y ? -1 : 1;
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

/** No members: what a new node starts with (never mutated; insertMember replaces it). */
const NO_MEMBERS: readonly PathElement[] = Object.freeze([]);

/**
 * A set of field paths, stored as a tree. Sets produced by the algebra share subtrees with their
 * operands, so only a set built fresh (with `insert`) may be mutated, and only while building.
 *
 * A node's members are kept as a list sorted in the reference's order, as a map by key, or both:
 * a set built member by member has the map (and sorts it when asked), one built from a whole list
 * at once (a long list's items, a decoded FieldsV1 node) or by the algebra from sorted operands
 * has only the sorted list, and the map is made only when something looks one member up. A long
 * list's ownership thus costs a sort of an (almost always) sorted array and merges, which stay
 * linear in its length, where a map of hundreds of thousands of entries does not (every lookup a
 * cache miss, every entry a pointer from the old generation into the young one).
 */
export class FieldSet {
  // (Loops over members use forEach: a for-of over a Map's entries makes an array per entry, and a
  // set of a long list's items has hundreds of thousands.)
  private index: Map<string, PathElement> | undefined;
  private sorted: readonly PathElement[] | undefined = NO_MEMBERS;
  private readonly children = new Map<string, ChildNode>();
  private sortedChildrenCache: ChildNode[] | undefined;
  /** Known to hold a member somewhere below (see isEmpty). */
  private nonEmpty = false;

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** A node whose members are `sorted` (in the reference's order, no key twice). */
  private static withSorted(sorted: readonly PathElement[]): FieldSet {
    const s = new FieldSet();
    s.sorted = sorted.length === 0 ? NO_MEMBERS : sorted;
    return s;
  }

  /** The members by key, made from the sorted list when first needed. */
  private get members(): Map<string, PathElement> {
    if (this.index === undefined) {
      const m = new Map<string, PathElement>();
      for (const pe of this.sorted!) m.set(pe.key, pe);
      this.index = m;
    }
    return this.index;
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
    const members = this.members;
    // One lookup: a new key grows the map.
    const n = members.size;
    members.set(pe.key, pe);
    if (members.size === n) return false;
    this.sorted = undefined;
    return true;
  }

  /**
   * Adds every element of `pes` as a member (building only), in one sort rather than one map
   * entry each; returns the keys met more than once (in `pes` or already members), if any.
   */
  insertMembers(pes: readonly PathElement[]): Set<string> | undefined {
    let repeated: Set<string> | undefined;
    if (this.memberCount > 0) {
      for (const pe of pes) if (!this.insertMember(pe)) (repeated ??= new Set()).add(pe.key);
      return repeated;
    }
    // A stable sort keeps a repeat after its first occurrence; equal elements are adjacent, and
    // the first of each key is kept.
    const all = pes.slice().sort(byElement);
    const out: PathElement[] = [];
    let runStart = 0;
    for (let i = 0; i < all.length; i++) {
      const pe = all[i]!;
      if (out.length > runStart && byElement(out[out.length - 1]!, pe) !== 0) runStart = out.length;
      if (out.length > runStart && hasKeyIn(out, runStart, pe.key)) (repeated ??= new Set()).add(pe.key);
      else out.push(pe);
    }
    this.index = undefined;
    this.sorted = out;
    return repeated;
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
    return s.hasMember(path[path.length - 1]!);
  }

  hasMember(pe: PathElement): boolean {
    return this.memberCount > 0 && this.members.has(pe.key);
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
    return this.index !== undefined ? this.index.size : this.sorted!.length;
  }

  get childCount(): number {
    return this.children.size;
  }

  /** True when no path at any depth is a member. */
  isEmpty(): boolean {
    if (this.memberCount > 0 || this.nonEmpty) return false;
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
    let n = this.memberCount;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  union(o: FieldSet): FieldSet {
    if (o === this || o.isBare()) return this;
    if (this.isBare()) return o;
    const out = this.mergesWith(o) && this.memberCount > 0 && o.memberCount > 0 ? FieldSet.withSorted(mergeUnion(this.sorted!, o.sorted!)) : this.unionByKey(o);
    for (const [k, c] of this.children) {
      const oc = o.children.get(k);
      out.children.set(k, oc ? { pe: c.pe, set: c.set.union(oc.set) } : c);
    }
    for (const [k, oc] of o.children) if (!this.children.has(k)) out.children.set(k, oc);
    return out;
  }

  private unionByKey(o: FieldSet): FieldSet {
    const out = new FieldSet();
    if (o.memberCount === 0) out.adoptMembers(this);
    else if (this.memberCount === 0) out.adoptMembers(o);
    else {
      const m = new Map(this.members);
      o.members.forEach((pe, k) => m.set(k, pe));
      out.useIndex(m);
    }
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
    const withMembers = present.filter((s) => s.memberCount > 0);
    if (withMembers.length === 1) out.adoptMembers(withMembers[0]!);
    else if (withMembers.length > 1) {
      const m = new Map(withMembers[0]!.members);
      for (let i = 1; i < withMembers.length; i++) withMembers[i]!.members.forEach((pe, k) => m.set(k, pe));
      out.useIndex(m);
    }
    const groups = new Map<string, { pe: PathElement; sets: FieldSet[] }>();
    for (const s of present)
      for (const [k, c] of s.children) {
        const g = groups.get(k);
        if (g) g.sets.push(c.set);
        else groups.set(k, { pe: c.pe, sets: [c.set] });
      }
    for (const [k, g] of groups) out.children.set(k, g.sets.length === 1 ? { pe: g.pe, set: g.sets[0]! } : { pe: g.pe, set: FieldSet.unionAll(g.sets) });
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    if (o.isBare() || this.isBare()) return new FieldSet();
    const out = this.mergesWith(o) ? FieldSet.withSorted(mergeSelect(this.sorted!, o.sorted!, true)) : this.selectByKey(o, true);
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
    const out = this.membersWithout(o);
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
    const out = this.membersWithout(o);
    for (const [k, c] of this.children) {
      if (o.hasMember(c.pe)) continue;
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
    if (this.children.size === 0) out.adoptMembers(this);
    else {
      const kept: PathElement[] = [];
      this.eachMember((pe) => {
        const c = this.children.get(pe.key);
        if (!c || c.set.isEmpty()) kept.push(pe);
      });
      out.useKept(kept, this.sorted !== undefined);
    }
    for (const [k, c] of this.children) {
      const l = c.set.leaves();
      if (!l.isEmpty()) out.children.set(k, { pe: c.pe, set: l });
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    if (o === this) return true;
    if (this.memberCount !== o.memberCount) return false;
    if (!this.sameMembers(o)) return false;
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
    return (this.sorted ??= [...this.index!.values()].sort(byElement));
  }

  sortedChildren(): readonly { readonly pe: PathElement; readonly set: FieldSet }[] {
    return (this.sortedChildrenCache ??= [...this.children.values()].sort((a, b) => comparePathElements(a.pe, b.pe)));
  }

  /** Unsorted iteration over the direct children (for walks where order does not matter). */
  childEntries(): IterableIterator<{ readonly pe: PathElement; readonly set: FieldSet }> {
    return this.children.values();
  }

  memberElements(): IterableIterator<PathElement> {
    return this.sorted !== undefined ? this.sorted.values() : this.index!.values();
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
    return this.memberCount === 0 && this.children.size === 0;
  }

  /** Calls fn for every member, in order when the sorted list is at hand. */
  private eachMember(fn: (pe: PathElement) => void): void {
    if (this.sorted !== undefined) for (const pe of this.sorted) fn(pe);
    else this.index!.forEach(fn);
  }

  /**
   * `o`'s members as this node's: a sorted list is shared (a list is never changed, inserting
   * replaces it), a map is copied (inserting changes it).
   */
  private adoptMembers(o: FieldSet): void {
    if (o.sorted !== undefined) {
      this.sorted = o.sorted;
      this.index = undefined;
    } else this.useIndex(new Map(o.index));
  }

  private useIndex(m: Map<string, PathElement>): void {
    this.index = m;
    this.sorted = undefined;
  }

  /** Members picked from this node's, in its order: sorted when `sorted`, else made a map. */
  private useKept(kept: PathElement[], sorted: boolean): void {
    if (sorted) {
      this.sorted = kept;
      this.index = undefined;
      return;
    }
    const m = new Map<string, PathElement>();
    for (const pe of kept) m.set(pe.key, pe);
    this.useIndex(m);
  }

  /** Whether the members of this and `o` are compared by merging their sorted lists: both have one. */
  private mergesWith(o: FieldSet): boolean {
    return this.sorted !== undefined && o.sorted !== undefined;
  }

  /** A node with this one's members that `o` does not have (no children yet). */
  private membersWithout(o: FieldSet): FieldSet {
    if (o.memberCount === 0 || this.memberCount === 0) {
      const out = new FieldSet();
      out.adoptMembers(this);
      return out;
    }
    return this.mergesWith(o) ? FieldSet.withSorted(mergeSelect(this.sorted!, o.sorted!, false)) : this.selectByKey(o, false);
  }

  /** A node with this one's members that `o` has (`keep`) or has not, looked up by key. */
  private selectByKey(o: FieldSet, keep: boolean): FieldSet {
    const out = new FieldSet();
    const om = o.memberCount > 0 ? o.members : undefined;
    const kept: PathElement[] = [];
    this.eachMember((pe) => {
      if ((om?.has(pe.key) ?? false) === keep) kept.push(pe);
    });
    out.useKept(kept, this.sorted !== undefined);
    return out;
  }

  private sameMembers(o: FieldSet): boolean {
    if (this.memberCount === 0) return true;
    const a = this.sorted;
    const b = o.sorted;
    if (a !== undefined && b !== undefined) {
      let i = 0;
      while (i < a.length && a[i]!.key === b[i]!.key) i++;
      if (i === a.length) return true;
      // (Only elements that compare equal under different keys can be in another order.)
      if (byElement(a[i]!, b[i]!) !== 0) return false;
    }
    const om = o.members;
    let same = true;
    this.eachMember((pe) => {
      if (same && !om.has(pe.key)) same = false;
    });
    return same;
  }
}

/** Whether `key` is among `list[from..]`. */
function hasKeyIn(list: readonly PathElement[], from: number, key: string): boolean {
  for (let i = from; i < list.length; i++) if (list[i]!.key === key) return true;
  return false;
}

/** The elements of sorted `a` that sorted `b` has (`keep`) or has not, in order. */
function mergeSelect(a: readonly PathElement[], b: readonly PathElement[], keep: boolean): PathElement[] {
  const out: PathElement[] = [];
  let j = 0;
  for (const pe of a) {
    // b[j] is the first element of b not before pe; b has pe when one of the run of elements
    // comparing equal to it there has its key.
    while (j < b.length && b[j] !== pe && byElement(b[j]!, pe) < 0) j++;
    let found = false;
    for (let k = j; k < b.length; k++) {
      const e = b[k]!;
      if (e === pe || e.key === pe.key) {
        found = true;
        break;
      }
      if (byElement(e, pe) !== 0) break;
    }
    if (found === keep) out.push(pe);
  }
  return out;
}

/** The union of sorted `a` and `b`, sorted; an element both have is `b`'s, as a map's set keeps the last. */
function mergeUnion(a: readonly PathElement[], b: readonly PathElement[]): PathElement[] {
  const out: PathElement[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j === b.length) out.push(a[i++]!);
    else if (i === a.length) out.push(b[j++]!);
    else {
      const c = byElement(a[i]!, b[j]!);
      if (c < 0) out.push(a[i++]!);
      else if (c > 0) out.push(b[j++]!);
      else {
        // A run of equal elements on each side: a's first, those of b's not already there after.
        const from = out.length;
        const first = b[j]!;
        while (i < a.length && byElement(a[i]!, first) === 0) out.push(a[i++]!);
        const runEnd = out.length;
        while (j < b.length && byElement(b[j]!, first) === 0) {
          const e = b[j++]!;
          let at = -1;
          for (let k = from; k < runEnd; k++) if (out[k]!.key === e.key) at = k;
          if (at >= 0) out[at] = e;
          else out.push(e);
        }
      }
    }
  }
  return out;
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
  if (s.charCodeAt(0) === 0x76 /* v */ && isPlainStringLiteral(s, 2)) return { kind: 'value', value: s.slice(3, -1), key: s, plain: true };
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
  // Members are added at once, in one sort (see FieldSet.insertMembers).
  let members: PathElement[] | undefined;
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
      (members ??= []).push(pe);
      continue;
    }
    const sub = readNode(value, { parent: trail, pe }, listed);
    if (sub.isMember) (members ??= []).push(pe);
    if (sub.children) (children ??= new FieldSet()).attach(pe, sub.children);
  }
  if (members) (children ??= new FieldSet()).insertMembers(members);
  if (!children) isMember = true;
  return { children, isMember };
}
