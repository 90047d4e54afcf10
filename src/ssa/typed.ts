// Objects seen through their schema: which parts are structs, granular maps, sets, map lists or
// atomic values, and what that means for ownership. The schema markers are read as the reference
// reads an OpenAPI schema (kube-openapi's schemaconv), then the field set of a value, the comparison
// of two values and the reconciliation of stored sets with a changed schema follow the reference's
// walkers (sigs.k8s.io/structured-merge-diff typed/tofieldset.go, compare.go, reconcile_schema.go).

import type { Schema } from '../machinery/schema.ts';
import { FieldSet, fieldElement, keyElement, pathString, valueElement, type Path, type PathElement } from './fieldpath.ts';
import { definedKeys, isJsonMap, valuesEqual, type JsonMap, type JsonValue } from './value.ts';

/** A struct or map: declared fields, the type of other keys, and whether it is owned as a whole. */
interface MapAtom {
  readonly fields: ReadonlyMap<string, TypeNode>;
  /** Type of keys that are not declared fields (granular maps, preserved unknown fields). */
  readonly elem: TypeNode;
  readonly atomic: boolean;
  /** No declared fields and deduced elements: unstructured data. */
  readonly untypedDeduced: boolean;
}

export interface ListAtom {
  readonly elem: TypeNode;
  readonly atomic: boolean;
  /** Map-list keys; empty for a set (or an atomic list). */
  readonly keys: readonly string[];
  /** Schema defaults of the key fields, used when an item omits a key. */
  readonly keyDefaults: ReadonlyMap<string, JsonValue>;
}

/** A type as structured merge sees it; unstructured types allow several value shapes. */
export interface TypeNode {
  readonly scalar: boolean;
  readonly map?: MapAtom;
  readonly list?: ListAtom;
  /** The schema allows an explicit null here (kept when normalizing merge results). */
  readonly nullable: boolean;
}

/** A value that does not fit the structure the schema requires (bad list item, duplicate key). */
export class SsaTypeError extends Error {
  override name = 'SsaTypeError';
}

// Unstructured data: maps are granular (every key a field), lists atomic.
const UNTYPED: { scalar: boolean; map?: MapAtom; list?: ListAtom; nullable: boolean } = { scalar: true, nullable: true };
const DEDUCED: { scalar: boolean; map?: MapAtom; list?: ListAtom; nullable: boolean } = { scalar: true, nullable: true };
UNTYPED.map = { fields: new Map(), elem: UNTYPED, atomic: true, untypedDeduced: false };
UNTYPED.list = { elem: UNTYPED, atomic: true, keys: [], keyDefaults: new Map() };
DEDUCED.map = { fields: new Map(), elem: DEDUCED, atomic: false, untypedDeduced: true };
DEDUCED.list = { elem: UNTYPED, atomic: true, keys: [], keyDefaults: new Map() };

const SCALAR: TypeNode = { scalar: true, nullable: false };
const SCALAR_NULLABLE: TypeNode = { scalar: true, nullable: true };

const cache = [new WeakMap<Schema, TypeNode>(), new WeakMap<Schema, TypeNode>()] as const;

/** The structured-merge type of a schema (cached per schema object). */
export function typeOf(schema: Schema): TypeNode {
  return convert(schema, false);
}

function convert(schema: Schema, inheritedPreserve: boolean): TypeNode {
  const c = cache[inheritedPreserve ? 1 : 0];
  const hit = c.get(schema);
  if (hit) return hit;
  const node = build(schema, inheritedPreserve);
  c.set(schema, node);
  return node;
}

function build(s: Schema, inheritedPreserve: boolean): TypeNode {
  const preserve = inheritedPreserve || s['x-kubernetes-preserve-unknown-fields'] === true;
  const nullable = s.nullable === true;
  if (s['x-kubernetes-int-or-string']) return nullable ? SCALAR_NULLABLE : SCALAR;
  const hasProps = s.properties !== undefined && Object.keys(s.properties).length > 0;
  let type = s.type;
  if (!type) {
    if (hasProps || s.additionalProperties) type = 'object';
    else if (s.items) type = 'array';
    // No type and nothing else: any JSON, read as unstructured.
    else return DEDUCED;
  }
  switch (type) {
    case 'object': {
      const fields = new Map<string, TypeNode>();
      for (const [name, sub] of Object.entries(s.properties ?? {})) fields.set(name, convert(sub, preserve));
      // Keys not declared: the additionalProperties type, else unstructured (for an object without
      // properties, for preserved unknown fields, and leniently for stray keys).
      const elem = s.additionalProperties ? convert(s.additionalProperties, preserve) : DEDUCED;
      const map: MapAtom = { fields, elem, atomic: s['x-kubernetes-map-type'] === 'atomic', untypedDeduced: fields.size === 0 && elem === DEDUCED };
      return { scalar: false, map, nullable };
    }
    case 'array': {
      const elem = s.items ? convert(s.items, preserve) : DEDUCED;
      const listType = s['x-kubernetes-list-type'];
      let atomic = true;
      let keys: string[] = [];
      if (listType === 'set') atomic = false;
      else if (listType === 'map') {
        const k = s['x-kubernetes-list-map-keys'];
        if (k && k.length) {
          atomic = false;
          keys = [...k];
        }
      } else if (listType === undefined) {
        const strategy = s['x-kubernetes-patch-strategy'];
        if (strategy === 'merge' || strategy === 'merge,retainKeys') {
          atomic = false;
          const mk = s['x-kubernetes-patch-merge-key'];
          if (mk) keys = [mk];
        }
      }
      const keyDefaults = new Map<string, JsonValue>();
      for (const k of keys) {
        const d = s.items?.properties?.[k]?.default;
        if (d !== undefined) keyDefaults.set(k, d as JsonValue);
      }
      return { scalar: false, list: { elem, atomic, keys, keyDefaults }, nullable };
    }
    default:
      return nullable ? SCALAR_NULLABLE : SCALAR;
  }
}

// ---- choosing the shape of a value ----

type Shape = 'map' | 'list' | 'scalar';

/** The shape the type gives this value ('orig' when the value fits none, as the reference does). */
function deduceKey(t: TypeNode, v: JsonValue | undefined): Shape | 'orig' {
  if (v !== undefined && v !== null) {
    if (typeof v !== 'object') {
      if (t.scalar) return 'scalar';
    } else if (Array.isArray(v)) {
      if (t.list) return 'list';
    } else if (t.map) return 'map';
  }
  const n = (t.map ? 1 : 0) + (t.list ? 1 : 0) + (t.scalar ? 1 : 0);
  if (n === 1) return t.map ? 'map' : t.list ? 'list' : 'scalar';
  return 'orig';
}

/** The handler of an undeduced type: map first, then scalar, then list. */
const resolveShape = (t: TypeNode, k: Shape | 'orig'): Shape => (k !== 'orig' ? k : t.map ? 'map' : t.scalar ? 'scalar' : 'list');

interface ShapeChoice {
  shape: Shape;
  /** When lhs and rhs need different handlers, the lhs one (visited first, for its effects). */
  lhsShape?: Shape;
}

/** How a walker over lhs/rhs handles this node (merge, compare). */
export function chooseShape(t: TypeNode, lhs: JsonValue | undefined, rhs: JsonValue | undefined): ShapeChoice {
  const kl = deduceKey(t, lhs);
  if (rhs === undefined) return { shape: resolveShape(t, kl) };
  const kr = deduceKey(t, rhs);
  if (lhs === undefined || kl === kr) return { shape: resolveShape(t, kr) };
  return { shape: resolveShape(t, kr), lhsShape: resolveShape(t, kl) };
}

export const shapeOf = (t: TypeNode, v: JsonValue | undefined): Shape => resolveShape(t, deduceKey(t, v));

// ---- list items ----

/** The element that selects a list item: its key fields (map list) or its value (set). */
export function listItemElement(list: ListAtom, item: JsonValue): PathElement {
  if (list.keys.length > 0) {
    if (item === null) throw new Error('associative list with keys may not have a null element');
    if (!isJsonMap(item)) throw new Error('associative list with keys may not have non-map elements');
    const fields: [string, JsonValue][] = [];
    for (const k of list.keys) {
      const v = item[k];
      if (v !== undefined) fields.push([k, v]);
      else {
        const d = list.keyDefaults.get(k);
        if (d === undefined) throw new Error(`associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
        fields.push([k, d]);
      }
    }
    return keyElement(fields);
  }
  if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
  if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
  if (typeof item === 'object') throw new Error("associative list without keys has an element that's a map type");
  return valueElement(item);
}

/** listItemElement with the reference's error text: `<path>: element <i>: <problem>`. */
export function itemElementAt(list: ListAtom, item: JsonValue, path: Path, index: number): PathElement {
  try {
    return listItemElement(list, item);
  } catch (e) {
    throw new SsaTypeError(`${pathString(path)}: element ${index}: ${(e as Error).message}`);
  }
}

// ---- field set of a value ----

/**
 * Every leaf field and list/map item mentioned by the value (typed ToFieldSet). Struct fields with
 * children are not members themselves; map keys, list items, nulls and empty maps are.
 */
export function toFieldSet(t: TypeNode, value: JsonValue | undefined): FieldSet {
  const b = new SetBuilder();
  if (value !== undefined) walkToSet(t, value, b);
  return b.root;
}

/**
 * Builds a set along a depth-first walk: the node of each path prefix is created when a member
 * is first inserted below it, so inserting is O(1) instead of a descent from the root.
 */
class SetBuilder {
  readonly root = new FieldSet();
  readonly path: PathElement[] = [];
  /** nodes[i]: the set holding members at depth i (path[0..i) as prefix), when created. */
  private readonly nodes: (FieldSet | undefined)[] = [this.root];

  push(pe: PathElement): void {
    this.path.push(pe);
    this.nodes.length = this.path.length;
  }

  pop(): void {
    this.path.pop();
    this.nodes.length = this.path.length + 1;
  }

  /** Inserts the current path. */
  insert(): void {
    const n = this.path.length;
    if (n === 0) return;
    let i = n - 1;
    while (this.nodes[i] === undefined) i--;
    for (; i < n - 1; i++) this.nodes[i + 1] = this.nodes[i]!.descend(this.path[i]!);
    this.nodes[n - 1]!.insertMember(this.path[n - 1]!);
  }
}

/** Returns whether `v` is a map with nothing in it (a member itself, where it is a field's value). */
function walkToSet(t: TypeNode, v: JsonValue, b: SetBuilder): boolean {
  switch (shapeOf(t, v)) {
    case 'scalar':
      b.insert();
      return false;
    case 'list': {
      const list = t.list!;
      if (list.atomic) {
        b.insert();
        return false;
      }
      // (A map where a list belongs is a member when it is empty, as a field's empty map is.)
      if (!Array.isArray(v)) return isJsonMap(v) && definedKeys(v).length === 0;
      const pes = v.map((item, i) => itemElementAt(list, item, b.path, i));
      let counts: Map<string, number> | undefined;
      if (pes.length > 1) {
        const seen = new Set<string>();
        for (const pe of pes) {
          if (seen.has(pe.key)) (counts ??= new Map()).set(pe.key, 2);
          seen.add(pe.key);
        }
      }
      for (let i = 0; i < v.length; i++) {
        const pe = pes[i]!;
        b.push(pe);
        if (counts?.has(pe.key)) b.insert(); // duplicated items are owned whole
        else {
          walkToSet(list.elem, v[i]!, b);
          b.insert();
        }
        b.pop();
      }
      return false;
    }
    case 'map': {
      const m = t.map!;
      if (m.atomic) {
        b.insert();
        return false;
      }
      if (!isJsonMap(v)) return false;
      const keys = definedKeys(v);
      for (const k of keys) {
        const val = v[k]!;
        const field = m.fields.get(k);
        b.push(fieldElement(k));
        if (walkToSet(field ?? m.elem, val, b) || val === null || !field) b.insert();
        b.pop();
      }
      return keys.length === 0;
    }
  }
}

// ---- comparison ----

export interface Comparison {
  /** Present in both, different. */
  modified: FieldSet;
  /** Only in the new value. */
  added: FieldSet;
  /** Only in the old value. */
  removed: FieldSet;
}

/** What changed from lhs to rhs, field by field (typed Compare). */
export function compareTyped(t: TypeNode, lhs: JsonValue | undefined, rhs: JsonValue | undefined): Comparison {
  const c: Comparison = { modified: new FieldSet(), added: new FieldSet(), removed: new FieldSet() };
  if (lhs !== undefined || rhs !== undefined) cmpWalk(t, lhs, rhs, [], c);
  return c;
}

function cmpWalk(t: TypeNode, l: JsonValue | undefined, r: JsonValue | undefined, path: PathElement[], c: Comparison): void {
  if (l === undefined || r === undefined) {
    // Only one side: every node of it is added (or removed). A create compares the whole object
    // this way, so it is walked once, building the set as it goes.
    const v = l === undefined ? r : l;
    if (v === undefined) return;
    let node = l === undefined ? c.added : c.removed;
    if (path.length === 0) {
      oneSidedContents(t, v, path, node);
      return;
    }
    for (let i = 0; i < path.length - 1; i++) node = node.descend(path[i]!);
    oneSidedWalk(t, v, path, node);
    return;
  }
  const choice = chooseShape(t, l, r);
  if (choice.lhsShape) cmpHandle(choice.lhsShape, t, l, r, path, c);
  const leaf = cmpHandle(choice.shape, t, l, r, path, c);
  if (!leaf) {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  }
}

function cmpLeaf(l: JsonValue | undefined, r: JsonValue | undefined, path: PathElement[], c: Comparison): true {
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
  else if (!valuesEqual(r, l)) c.modified.insert(path);
  return true;
}

/** Returns true when the node was handled as a leaf. */
function cmpHandle(shape: Shape, t: TypeNode, l: JsonValue | undefined, r: JsonValue | undefined, path: PathElement[], c: Comparison): boolean {
  if (shape === 'scalar') return cmpLeaf(l, r, path, c);
  if (shape === 'list') {
    const list = t.list!;
    const la = Array.isArray(l) ? l : undefined;
    const ra = Array.isArray(r) ? r : undefined;
    if (list.atomic || ((!la || la.length === 0) && (!ra || ra.length === 0))) return cmpLeaf(l, r, path, c);
    if (!la?.length || !ra?.length) {
      // Items on one side only: each is added (or removed) with everything below it, as the
      // item-by-item comparison would find, in one walk into the set under the list.
      const removed = !ra?.length;
      let node = removed ? c.removed : c.added;
      for (const pe of path) node = node.descend(pe);
      walkBelow(t, (removed ? la : ra)!, true, path, node);
      return false;
    }
    cmpListItems(list, la, ra, path, c);
    return false;
  }
  const m = t.map!;
  if (m.atomic) return cmpLeaf(l, r, path, c);
  const lm = isJsonMap(l) ? l : undefined;
  const rm = isJsonMap(r) ? r : undefined;
  const lk = lm ? definedKeys(lm) : [];
  const rk = rm ? definedKeys(rm) : [];
  if (lk.length === 0 && rk.length === 0) return cmpLeaf(l, r, path, c);
  if (lm)
    for (const k of lk) {
      const lv = lm[k]!;
      path.push(fieldElement(k));
      cmpWalk(m.fields.get(k) ?? m.elem, lv, rm?.[k], path, c);
      path.pop();
    }
  if (rm)
    for (const k of rk) {
      const rv = rm[k]!;
      if (lm && lm[k] !== undefined) continue;
      path.push(fieldElement(k));
      cmpWalk(m.fields.get(k) ?? m.elem, undefined, rv, path, c);
      path.pop();
    }
  return false;
}

/**
 * cmpWalk of a value whose other side is missing: `v` is at `path`, whose last element is made a
 * member of `parent`, and everything below it a member of the child set under that element. The
 * same members as the two-sided walk, without its per-item bookkeeping or a descent from the root
 * for every field.
 */
function oneSidedWalk(t: TypeNode, v: JsonValue, path: PathElement[], parent: FieldSet): void {
  walkUnder(t, v, path, parent);
  parent.insertMember(path[path.length - 1]!);
}

/**
 * What is below `v` (at `path`) into `parent`'s child set under the path's last element; a leaf
 * gets no child set.
 */
function walkUnder(t: TypeNode, v: JsonValue, path: PathElement[], parent: FieldSet): void {
  const below = oneSidedBelow(t, v);
  if (below) walkBelow(t, v, below, path, parent.descend(path[path.length - 1]!));
}

/**
 * What the walk goes below in `v`, rather than taking it as a leaf: true for a granular, non-empty
 * list, the keys of a granular, non-empty map (so that the map is enumerated once), else false.
 */
function oneSidedBelow(t: TypeNode, v: JsonValue): string[] | boolean {
  const shape = shapeOf(t, v);
  if (shape === 'scalar') return false;
  if (shape === 'list') return !t.list!.atomic && Array.isArray(v) && v.length > 0;
  if (t.map!.atomic || !isJsonMap(v)) return false;
  const keys = definedKeys(v);
  return keys.length > 0 && keys;
}

/** The members below `v` (at `path`) into `node`, the set under `path`; nothing for a leaf. */
function oneSidedContents(t: TypeNode, v: JsonValue, path: PathElement[], node: FieldSet): void {
  const below = oneSidedBelow(t, v);
  if (below) walkBelow(t, v, below, path, node);
}

function walkBelow(t: TypeNode, v: JsonValue, below: string[] | true, path: PathElement[], node: FieldSet): void {
  if (below === true) {
    const items = v as JsonValue[];
    const list = t.list!;
    // Every item's element first (the first bad item fails the walk before anything below it).
    const pes = new Array<PathElement>(items.length);
    for (let i = 0; i < items.length; i++) pes[i] = itemElementAt(list, items[i]!, path, i);
    // Every element a member; `node` is this list's own, built here, so an element it has
    // already is a repeat.
    const repeated = node.insertMembers(pes);
    // Then what is below each item, but a repeated item is owned whole, nothing below it looked
    // at, as the reference does.
    for (let i = 0; i < items.length; i++) {
      const pe = pes[i]!;
      if (repeated?.has(pe.key)) continue;
      path.push(pe);
      walkUnder(list.elem, items[i]!, path, node);
      path.pop();
    }
    return;
  }
  const m = t.map!;
  const map = v as JsonMap;
  for (const k of below) {
    const sub = map[k]!;
    path.push(fieldElement(k));
    oneSidedWalk(m.fields.get(k) ?? m.elem, sub, path, node);
    path.pop();
  }
}

function cmpListItems(list: ListAtom, lhs: JsonValue[], rhs: JsonValue[], path: PathElement[], c: Comparison): void {
  // One entry per element with its first item on each side; the full lists only for repeats
  // (rare), so a long list costs one small object per item.
  interface Entry {
    pe: PathElement;
    l: JsonValue | undefined;
    r: JsonValue | undefined;
    lMore?: JsonValue[];
    rMore?: JsonValue[];
  }
  const entries = new Map<string, Entry>();
  for (let i = 0; i < lhs.length; i++) {
    const item = lhs[i]!;
    const pe = itemElementAt(list, item, path, i);
    const e = entries.get(pe.key);
    if (!e) entries.set(pe.key, { pe, l: item, r: undefined });
    else if (e.l === undefined) e.l = item;
    else (e.lMore ??= [e.l]).push(item);
  }
  for (let i = 0; i < rhs.length; i++) {
    const item = rhs[i]!;
    const pe = itemElementAt(list, item, path, i);
    const e = entries.get(pe.key);
    if (!e) entries.set(pe.key, { pe, l: undefined, r: item });
    else if (e.r === undefined) e.r = item;
    else (e.rMore ??= [e.r]).push(item);
  }
  for (const e of entries.values()) {
    path.push(e.pe);
    if (!e.lMore && !e.rMore) {
      cmpWalk(list.elem, e.l, e.r, path, c);
      path.pop();
      continue;
    }
    const l = e.lMore ?? (e.l === undefined ? [] : [e.l]);
    const r = e.rMore ?? (e.r === undefined ? [] : [e.r]);
    if (l.length >= 2 && r.length >= 2) {
      if (l.length !== r.length || l.some((x, i) => !valuesEqual(x, r[i]))) c.modified.insert(path);
    } else if (l.length >= 2) {
      if (r.length) cmpWalk(list.elem, undefined, r[0], path, c);
      c.removed.insert(path);
    } else {
      if (l.length) cmpWalk(list.elem, l[0], undefined, path, c);
      c.added.insert(path);
    }
    path.pop();
  }
}

// ---- set helpers that need the schema ----

/**
 * The set plus every declared struct field that has owned children (EnsureNamedFieldsAreMembers);
 * map keys and list items are not added. Used where removal must see named parents.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: TypeNode | undefined): FieldSet {
  const m = t?.map;
  let changed = false;
  const out = new FieldSet();
  for (const pe of set.memberElements()) out.insertMember(pe);
  for (const { pe, set: sub } of set.childEntries()) {
    let childType: TypeNode | undefined;
    if (pe.kind === 'field' && m) {
      const f = m.fields.get(pe.name);
      if (f && !set.hasMember(pe)) {
        out.insertMember(pe);
        changed = true;
      }
      childType = f ?? m.elem;
    } else if (pe.kind === 'key' && t?.list) childType = t.list.elem;
    const next = ensureNamedFieldsAreMembers(sub, childType);
    if (next !== sub) changed = true;
    out.attach(pe, next);
  }
  return changed ? out : set;
}

/**
 * Adapts a stored set to the current schema (ReconcileFieldSetWithSchema): a part that became
 * atomic is owned as one member by whoever owned something inside it. A part that became granular
 * keeps its single member, which no later change conflicts with. Returns undefined when unchanged.
 */
export function reconcileFieldSet(set: FieldSet, t: TypeNode): FieldSet | undefined {
  const toRemove: PathElement[][] = [];
  reconcileWalk(t, set, [], false, toRemove);
  if (!toRemove.length) return undefined;
  const paths = FieldSet.of(...toRemove);
  return set.recursiveDifference(paths).union(paths);
}

function reconcileWalk(t: TypeNode, set: FieldSet | undefined, path: PathElement[], isAtomic: boolean, toRemove: PathElement[][]): void {
  if (t.map) {
    const m = t.map;
    if (m.untypedDeduced) return;
    if (!isAtomic && m.atomic) {
      if (set && set.size() > 0) toRemove.push([...path]);
      return;
    }
    if (set) visitReconcile(set, path, toRemove, (pe) => (pe.kind === 'field' ? (m.fields.get(pe.name) ?? m.elem) : m.elem));
    return;
  }
  if (t.scalar) return;
  if (t.list) {
    const list = t.list;
    if (!isAtomic && list.atomic) {
      toRemove.push([...path]);
      return;
    }
    if (set) visitReconcile(set, path, toRemove, () => list.elem);
  }
}

function visitReconcile(set: FieldSet, path: PathElement[], toRemove: PathElement[][], typeAt: (pe: PathElement) => TypeNode): void {
  for (const { pe, set: sub } of set.childEntries()) {
    if (set.hasMember(pe)) continue;
    path.push(pe);
    reconcileWalk(typeAt(pe), sub, path, false, toRemove);
    path.pop();
  }
  for (const pe of set.memberElements()) {
    const sub = set.child(pe);
    path.push(pe);
    reconcileWalk(typeAt(pe), sub, path, !sub, toRemove);
    path.pop();
  }
}

// ---- values by path ----

/** The value at `path` in `value` (undefined when absent). */
export function valueAt(t: TypeNode, value: JsonValue | undefined, path: Path): JsonValue | undefined {
  let cur = value;
  let type: TypeNode | undefined = t;
  for (const pe of path) {
    if (cur === undefined || cur === null) return undefined;
    switch (pe.kind) {
      case 'field': {
        if (!isJsonMap(cur)) return undefined;
        const m: MapAtom | undefined = type?.map;
        type = m ? (m.fields.get(pe.name) ?? m.elem) : undefined;
        cur = cur[pe.name];
        break;
      }
      case 'index':
        if (!Array.isArray(cur)) return undefined;
        type = type?.list?.elem;
        cur = cur[pe.index];
        break;
      case 'key':
      case 'value': {
        if (!Array.isArray(cur)) return undefined;
        const list: ListAtom | undefined = type?.list;
        if (!list) return undefined;
        const items: JsonValue[] = cur;
        cur = items.find((item) => {
          try {
            return listItemElement(list, item).key === pe.key;
          } catch {
            return false;
          }
        });
        type = list.elem;
        break;
      }
    }
  }
  return cur;
}

// ---- normalization ----

/**
 * Drops properties whose value is null where the schema does not allow null, as decoding into
 * the typed object does (a null asks for the field to be unset); unstructured parts keep nulls.
 * Returns the same value when nothing changes.
 */
export function dropNulls(t: TypeNode, v: JsonValue): JsonValue {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const list = t.list;
    if (!list || list.elem === UNTYPED) return v;
    let out: JsonValue[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      const y = dropNulls(list.elem, x);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  const m = t.map;
  if (!m || m === DEDUCED.map || m === UNTYPED.map) return v;
  let out: JsonMap | undefined;
  for (const k in v) {
    const x = v[k];
    if (x === undefined) continue;
    const ft = m.fields.get(k) ?? m.elem;
    if (x === null) {
      if (!ft.nullable) {
        out ??= { ...v };
        delete out[k];
      }
      continue;
    }
    const y = dropNulls(ft, x);
    if (y !== x) (out ??= { ...v })[k] = y;
  }
  return out ?? v;
}

const emptyObjects = new WeakMap<Schema, JsonMap>();

/**
 * The zero object of a built-in kind: the struct-typed top-level fields (metadata, spec, status)
 * exist and are empty, as in a freshly allocated typed object, so that a first write of `spec.x`
 * owns `spec.x` and not `spec` itself. Custom resources are unstructured: pass `{}` instead.
 */
export function defaultEmptyObject(schema: Schema): JsonMap {
  let hit = emptyObjects.get(schema);
  if (hit) return hit;
  hit = {};
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    if (k === 'metadata' || (s.properties && Object.keys(s.properties).length > 0 && (s.type === 'object' || s.type === undefined))) hit[k] = {};
  }
  emptyObjects.set(schema, hit);
  return hit;
}
