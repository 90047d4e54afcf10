// Strategic merge patch (`application/strategic-merge-patch+json`) with kube-apiserver's
// semantics, for built-in kinds. The schema markers play the part of Kubernetes' Go struct tags:
// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, `merge,retainKeys`, `replace`) and
// `x-kubernetes-patch-merge-key`. Only the patch strategy decides how a list merges: a list marked
// `merge` merges (by its merge key, or as a set of scalars), every other list is replaced, whatever
// its `x-kubernetes-list-type`. Map types (`x-kubernetes-map-type`) do not matter here either:
// objects always merge key by key, and null deletes a key.
//
// Directives: `$patch: replace | delete` in an object, `$patch: replace | delete` items in a merging
// list of objects, `$retainKeys` (honoured in any object, whatever the field's strategy),
// `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
//
// The order of merged lists follows Kubernetes exactly: items named by the patch (or by
// `$setElementOrder`) take the patch's order, items only on the server keep their relative order and
// are slotted in front of the first patch item that follows them in the stored list; new items
// therefore come first unless `$setElementOrder` says otherwise. Kubernetes computes the order of a
// `$setElementOrder` list against the stored list as its in-place edits left it (deleted items shift
// the rest left, appended items reuse the freed slots); `mergeSlice` reproduces those edits, so the
// result is the same.
//
// Failures answer as kube-apiserver does: a malformed `$deleteFromPrimitiveList`, `$retainKeys` or
// `$setElementOrder` key is 400 BadRequest; a list of lists is 422 Invalid with the generic message;
// every other merge error (unknown `$patch`, a merge key missing, an order that does not match, a
// value of the wrong type) is a 500 Status without a reason, carrying the merge error's text; a
// patch that makes the merge code itself fail is the plain-text 500 of a recovered panic. Bad input
// is never a 500 here: those are 400 with the same text. An unknown `$patch` is refused also where
// Kubernetes drops the map unread (a value of another type than the stored one, or a new field).
// Directives of the wrong type, which Kubernetes reads as something else, are refused with its
// messages for them (docs/rulings.md#r21): a `$retainKeys` item that is not a field name (it would
// clear the object), a `$deleteFromPrimitiveList` that is not a list (ignored, or for null the
// whole list dropped), a `$patch` map given for a list (the list dropped).

import type { Schema } from './schema.ts';
import { isPlainObject } from './meta.ts';
import { errors, StatusError } from './status.ts';

type Obj = Record<string, unknown>;

const DIRECTIVE = '$patch';
const DELETE = 'delete';
const REPLACE = 'replace';
const MERGE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';


type FailureKind = 'BadRequest' | 'Invalid' | 'Unknown' | 'Panic';

/** A merge error, with the way kube-apiserver reports it (interpretStrategicMergePatchError). */
class MergeFailure extends Error {
  readonly kind: FailureKind;
  constructor(
    message: string,
    kind: FailureKind = 'Unknown',
  ) {
    super(message);
    this.kind = kind;
  }
}

const badPrimitiveList = () => new MergeFailure('invalid patch format of primitive list', 'BadRequest');
const badRetainKeys = () => new MergeFailure('invalid patch format of retainKeys', 'BadRequest');
const badSetElementOrder = () => new MergeFailure('invalid patch format of setElementOrder list', 'BadRequest');
const listOfLists = () => new MergeFailure('lists of lists are not supported', 'Invalid');
const panic = (why: string) => new MergeFailure(`runtime error: ${why}`, 'Panic');
const noMergeKey = (m: Obj, key: string) => new MergeFailure(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
const badArgType = (expected: string, actual: unknown) => new MergeFailure(`expected a ${expected}, but received a ${goTypeName(actual)}`);
const badPatchType = (directive: unknown, m: Obj) => new MergeFailure(`unknown patch type: ${goFormat(directive, 's')} in map: ${goFormat(m)}`);

/** Top-level fields that are struct values (never absent) in Kubernetes' Go types. */
const STRUCT_FIELDS = ['metadata', 'spec', 'status'] as const;

const SLICE_TYPE = '[]interface {}';
const MAP_TYPE = 'map[string]interface {}';

/**
 * Apply a strategic merge patch to a stored object: the merged object, or a StatusError as
 * kube-apiserver answers. Neither argument is modified, unless `consume` says both are the
 * caller's to give away (its own copies): then the merge works in them, copying nothing.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: Schema | undefined, consume = false): unknown {
  const copy: (v: unknown) => unknown = consume ? (v) => v : cloneJson;
  // The patch document decodes into a Go map: null leaves it empty, anything else but an object
  // fails to decode.
  if (patch === null) return copy(original);
  if (!isPlainObject(patch)) throw errors.badRequest(`json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`);
  const start = isPlainObject(original) ? (copy(original) as Obj) : {};
  // Kubernetes merges into the object as its Go struct converts: metadata, spec and status are
  // struct values there, present (possibly empty) even when unset, so directives under them apply.
  const seeded = STRUCT_FIELDS.filter((k) => !hasOwn(start, k) && schema?.properties?.[k]?.properties !== undefined);
  for (const k of seeded) start[k] = {};
  try {
    const merged = mergeMap(start, copy(patch) as Obj, schema);
    // An empty one the object did not have stays absent.
    for (const k of seeded) {
      const v = own(merged, k);
      if (isPlainObject(v) && Object.keys(v).length === 0) delete merged[k];
    }
    return merged;
  } catch (e) {
    if (!(e instanceof MergeFailure)) throw e;
    switch (e.kind) {
      case 'BadRequest':
        throw errors.badRequest(e.message);
      case 'Invalid':
        throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
      // kube-apiserver answers these with a 500 (a plain error, or a panic of its merge code);
      // the patch is what is wrong, and bad input here is never a 500: 400 with the same text.
      case 'Panic':
        throw errors.badRequest(`the patch could not be applied: ${e.message}`);
      default:
        throw errors.badRequest(e.message);
    }
  }
}

// ---- JSON values as Go sees them ----

const hasOwn = (o: Obj, k: string): boolean => Object.hasOwn(o, k);
const own = (o: Obj, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

/** Set a key, `__proto__` included (as an ordinary key, as JSON.parse makes it). */
function put(o: Obj, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function cloneJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(cloneJson);
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) put(out, k, cloneJson(v[k]));
  return out;
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  return 'bool';
}

/** The Go type a decoded JSON value has (integers decode as int64, as kube-apiserver keeps them). */
type GoType = 'nil' | 'string' | 'bool' | 'int64' | 'float64' | 'slice' | 'map';

function goType(v: unknown): GoType {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (isPlainObject(v)) return 'map';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return Number.isSafeInteger(v) ? 'int64' : 'float64';
}

function goTypeName(v: unknown): string {
  const t = goType(v);
  if (t === 'nil') return '%!s(<nil>)';
  if (t === 'slice') return SLICE_TYPE;
  if (t === 'map') return MAP_TYPE;
  return t;
}

/** Go's `==` on two interface values; comparing two maps or two slices panics. */
function goEquals(a: unknown, b: unknown): boolean {
  const ta = goType(a);
  if (ta !== goType(b)) return false;
  if (ta === 'map' || ta === 'slice') throw panic(`comparing uncomparable type ${ta === 'map' ? MAP_TYPE : SLICE_TYPE}`);
  return ta === 'nil' || a === b;
}

/** A Go map keyed by these values: hashing a map or a slice panics. */
function hashable(v: unknown): void {
  if (isPlainObject(v)) throw panic(`hash of unhashable type ${MAP_TYPE}`);
  if (Array.isArray(v)) throw panic(`hash of unhashable type ${SLICE_TYPE}`);
}

/**
 * A comparable value as a Map key: two values have the same key exactly when Go's `==` holds
 * between them (same type and value). Maps and slices have none: they equal nothing here. Lookups
 * by these keys keep list merges linear where a scan per item would make them quadratic.
 */
function scalarKey(v: unknown): string | undefined {
  switch (goType(v)) {
    case 'nil':
      return 'n';
    case 'string':
      return `s${v as string}`;
    case 'bool':
      return v ? 'b1' : 'b0';
    case 'int64':
      return `i${v as number}`;
    case 'float64':
      return `f${v as number}`;
    default:
      return undefined;
  }
}

function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  const [mantissa, exp] = v.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(v);
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A value as Go's fmt prints it with %v (or %s), as the merge errors quote them. */
function goFormat(v: unknown, verb: 'v' | 's' = 'v', nested = false): string {
  const t = goType(v);
  const bad = (text: string) => (verb === 's' ? `%!s(${t}=${text})` : text);
  switch (t) {
    case 'nil':
      return verb === 's' && !nested ? '%!s(<nil>)' : '<nil>';
    case 'string':
      return v as string;
    case 'bool':
      return bad(String(v));
    case 'int64':
      return bad(String(v));
    case 'float64':
      return bad(goFloat(v as number));
    case 'slice':
      return `[${(v as unknown[]).map((x) => goFormat(x, verb, true)).join(' ')}]`;
    case 'map': {
      const m = v as Obj;
      return `map[${Object.keys(m)
        .sort(byteOrder)
        .map((k) => `${k}:${goFormat(m[k], verb, true)}`)
        .join(' ')}]`;
    }
  }
}

// ---- the schema as patch metadata ----

interface PatchMeta {
  /** The schema of the field (of its items, for a list). */
  schema: Schema | undefined;
  strategies: string[];
  mergeKey: string;
}

/** The field's patch metadata, as Kubernetes reads a struct field's tags (a map's values have none). */
function fieldMeta(schema: Schema | undefined, key: string): PatchMeta {
  const props = schema?.properties;
  const prop = props && Object.hasOwn(props, key) ? props[key] : undefined;
  if (!prop) return { schema: schema?.additionalProperties, strategies: [], mergeKey: '' };
  const strategy = prop['x-kubernetes-patch-strategy'];
  return { schema: prop, strategies: strategy ? strategy.split(',') : [], mergeKey: prop['x-kubernetes-patch-merge-key'] ?? '' };
}

function listMeta(schema: Schema | undefined, key: string): PatchMeta {
  const meta = fieldMeta(schema, key);
  return { ...meta, schema: meta.schema?.items };
}

/** The strategy besides retainKeys (which only matters when a patch is computed, not applied). */
function patchStrategy(strategies: readonly string[]): string {
  if (strategies.length === 0) return '';
  if (strategies.length === 1) return strategies[0] === RETAIN_KEYS_STRATEGY ? '' : strategies[0]!;
  if (strategies.length === 2) {
    if (strategies[0] === RETAIN_KEYS_STRATEGY) return strategies[1]!;
    if (strategies[1] === RETAIN_KEYS_STRATEGY) return strategies[0]!;
  }
  throw new MergeFailure(`unexpected patch strategy: ${goFormat(strategies)}`);
}

// ---- maps ----

function mergeMap(original: Obj, patch: Obj, schema: Schema | undefined): Obj {
  if (hasOwn(patch, DIRECTIVE)) return directiveInMap(own(patch, DIRECTIVE), patch);
  applyRetainKeys(original, patch);
  applyElementOrders(original, patch, schema);
  for (const key of Object.keys(patch)) {
    const patchValue = own(patch, key);
    let k = key;
    const deleteList = key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    if (deleteList) k = extractKey(key, DELETE_FROM_PRIMITIVE_LIST);
    // A deletion list must be a list: anything else would be ignored, or (null) drop the whole field.
    if (deleteList && !Array.isArray(patchValue)) throw badPrimitiveList();
    // A `$patch` map given for a list would drop the list (Kubernetes removes directive maps from
    // values of another type): refused with the message of a list of the wrong type.
    if (isPlainObject(patchValue) && hasOwn(patchValue, DIRECTIVE) && (Array.isArray(own(original, k)) || fieldMeta(schema, k).schema?.type === 'array')) {
      const directive = own(patchValue, DIRECTIVE);
      throw directive === REPLACE || directive === DELETE ? badArgType(SLICE_TYPE, patchValue) : badPatchType(directive, patchValue);
    }
    // null deletes the key; a null for a key the object does not have is dropped.
    if (patchValue === null) {
      delete original[k];
      continue;
    }
    if (!hasOwn(original, k) || goType(own(original, k)) !== goType(patchValue)) {
      if (!deleteList) putPatchValue(original, k, patchValue);
      continue;
    }
    const current = own(original, k);
    if (isPlainObject(current)) {
      const meta = fieldMeta(schema, k);
      const strategy = patchStrategy(meta.strategies);
      put(original, k, strategy === REPLACE ? patchValue : mergeMap(current, patchValue as Obj, meta.schema));
    } else if (Array.isArray(current)) {
      const meta = listMeta(schema, k);
      put(original, k, mergeSliceHandler(current, patchValue as unknown[], meta.schema, patchStrategy(meta.strategies), meta.mergeKey, deleteList));
    } else putPatchValue(original, k, patchValue);
  }
  return original;
}

/** A value the object did not have (or had with another type): nulls dropped, `$patch` maps removed. */
function putPatchValue(original: Obj, k: string, value: unknown): void {
  discardNulls(value);
  const [v, keep] = removeDirectives(value);
  if (keep) put(original, k, v);
  else delete original[k];
}

function discardNulls(v: unknown): void {
  if (Array.isArray(v)) for (const x of v) discardNulls(x);
  else if (isPlainObject(v))
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
}

/**
 * Drops the maps that carry a `$patch` directive (and list items that are such maps). Kubernetes
 * drops them whatever the directive says; a value that is no directive at all is refused here, so
 * a typo never silently deletes the field it sits in.
 */
function removeDirectives(v: unknown): [unknown, boolean] {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const [y, keep] = removeDirectives(x);
      if (keep) out.push(y);
    }
    return [out, true];
  }
  if (!isPlainObject(v)) return [v, true];
  if (hasOwn(v, DIRECTIVE)) {
    const directive = own(v, DIRECTIVE);
    if (directive !== REPLACE && directive !== DELETE) throw badPatchType(directive, v);
    return [null, false];
  }
  for (const k of Object.keys(v)) {
    const [y, keep] = removeDirectives(v[k]);
    if (keep) put(v, k, y);
    else delete v[k];
  }
  return [v, true];
}

function directiveInMap(directive: unknown, patch: Obj): Obj {
  if (directive === REPLACE) {
    delete patch[DIRECTIVE];
    return patch;
  }
  if (directive === DELETE) return {};
  throw badPatchType(directive, patch);
}

/** `$retainKeys`: keys of the object not listed are cleared; the patch may only set listed keys. */
function applyRetainKeys(original: Obj, patch: Obj): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = own(patch, RETAIN_KEYS);
  delete patch[RETAIN_KEYS];
  // Only field names can be retained: another value would retain nothing and clear the object.
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) throw badRetainKeys();
  const listed = new Set(list);
  const retained = (k: string) => listed.has(k);
  for (const k of Object.keys(patch)) {
    if (own(patch, k) === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained(k)) throw badRetainKeys();
  }
  for (const k of Object.keys(original)) if (!retained(k)) delete original[k];
}

/** The field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key names. */
function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw prefix === DELETE_FROM_PRIMITIVE_LIST ? badPrimitiveList() : badSetElementOrder();
  return key.slice(slash + 1);
}

// ---- $setElementOrder ----

/** Merges each list that has a `$setElementOrder` directive, then puts it in that order. */
function applyElementOrders(original: Obj, patch: Obj, schema: Schema | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = own(patch, key);
    delete patch[key];
    if (!Array.isArray(order)) throw badArgType(SLICE_TYPE, order);
    const field = extractKey(key, SET_ELEMENT_ORDER);
    const foundOriginal = hasOwn(original, field);
    const foundPatch = hasOwn(patch, field);
    let originalList: unknown[] = [];
    let patchList: unknown[] = [];
    if (foundOriginal) {
      const v = own(original, field);
      if (!Array.isArray(v)) throw badArgType(SLICE_TYPE, v);
      originalList = v;
    }
    if (foundPatch) {
      const v = own(patch, field);
      if (!Array.isArray(v)) throw badArgType(SLICE_TYPE, v);
      patchList = v;
    }
    const meta = listMeta(schema, field);
    const strategy = patchStrategy(meta.strategies);
    validateOrderOfPatch(patchList, order, meta.mergeKey);
    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchList)[0] as unknown[];
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalList, patchList, meta.schema, strategy, meta.mergeKey, false);
    else continue;
    const [patchItems, serverOnly] = meta.mergeKey ? partitionMaps(merged, order, meta.mergeKey) : partitionScalars(merged, order);
    // The stored list as the merge left it: Kubernetes orders against it after its in-place edits.
    const kind = elementKind(originalList, patchList);
    put(original, field, normalizeOrder(patchItems, serverOnly, order, originalList, meta.mergeKey, kind));
    delete patch[field];
  }
}

/** The patch list's items (deletions aside) must appear in `$setElementOrder`, in the same order. */
function validateOrderOfPatch(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const kept = mergeKey ? splitDeletions(patchList)[0] : patchList;
  let p = 0;
  let o = 0;
  while (p < kept.length && o < order.length) {
    const item = kept[p];
    if (isPlainObject(item) && hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (mergeKeyEquals(item, order[o], mergeKey)) p++;
    o++;
  }
  if (p < kept.length && o >= order.length)
    throw new MergeFailure(`the order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(order)}`);
}

function mergeKeyEquals(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return goEquals(left, right);
  if (!isPlainObject(left)) throw badArgType(MAP_TYPE, left);
  if (!isPlainObject(right)) throw badArgType(MAP_TYPE, right);
  if (!hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return goEquals(own(left, mergeKey), own(right, mergeKey));
}

/** Items of a list of maps, and those among them that are `$patch: delete` directives. */
function splitDeletions(list: unknown[]): [unknown[], unknown[]] {
  const kept: unknown[] = [];
  const deleted: unknown[] = [];
  for (const v of list) {
    if (!isPlainObject(v)) throw badArgType(MAP_TYPE, v);
    if (own(v, DIRECTIVE) === DELETE) deleted.push(v);
    else kept.push(v);
  }
  return [kept, deleted];
}

// ---- lists ----

type ElementKind = 'map' | 'other';

/** The common type of the lists' items: they must all have the same one, and not be lists. */
function elementKind(...lists: unknown[][]): ElementKind {
  let first: GoType | undefined;
  for (const list of lists)
    for (const v of list) {
      const t = goType(v);
      if (first === undefined) {
        if (t === 'nil') throw panic('invalid memory address or nil pointer dereference');
        if (t === 'slice') throw listOfLists();
        first = t;
      } else if (t !== first) throw new MergeFailure(`list element types are not identical: ${goFormat(lists)}`);
    }
  if (first === undefined) throw new MergeFailure('no elements in any of the given slices');
  return first === 'map' ? 'map' : 'other';
}

function mergeSliceHandler(original: unknown[], patch: unknown[], schema: Schema | undefined, strategy: string, mergeKey: string, deleteList: boolean): unknown[] {
  // A deletion list applies whatever the field's strategy.
  if (strategy === MERGE || deleteList) return mergeSlice(original, patch, schema, mergeKey, deleteList);
  return patch;
}

/**
 * Merges a list. Like Kubernetes' Go code, this edits `original` in place where Go does (deleted
 * items shift the rest left; new items fill the slots freed at the end): a `$setElementOrder`
 * directive then orders against the list as these edits left it.
 */
function mergeSlice(original: unknown[], patch: unknown[], schema: Schema | undefined, mergeKey: string, deleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  let merged: unknown[];
  let serverOrder: unknown[] = original;
  let patchOrder: unknown[] = patch;
  if (kind !== 'map') {
    if (deleteList) return deleteFromList(original, patch);
    merged = dedupeScalars([...original, ...patch]);
  } else {
    if (!mergeKey) throw new MergeFailure('cannot merge lists without merge key for struct');
    const backed = new GoSlice(original);
    const replaced = applySpecialItems(backed, patch, mergeKey);
    const base = replaced ?? backed;
    serverOrder = base.items();
    patchOrder = replaced ? [] : patch.filter((v) => !hasOwn(v as Obj, DIRECTIVE));
    merged = mergeItems(base, patchOrder, mergeKey, schema);
  }
  const [patchItems, serverOnly] = mergeKey ? partitionMaps(merged, patchOrder, mergeKey) : partitionScalars(merged, patchOrder);
  return normalizeOrder(patchItems, serverOnly, patchOrder, serverOrder, mergeKey, kind);
}

/**
 * A Go slice over a backing array: `original`'s own array until an append outgrows it. Removing an
 * item shifts the following ones left within the array; an append writes the next free slot.
 */
class GoSlice {
  private readonly backing: unknown[];
  private arr: unknown[];
  private len: number;
  constructor(backing: unknown[]) {
    this.backing = backing;
    this.arr = backing;
    this.len = backing.length;
  }
  items(): unknown[] {
    return this.arr.slice(0, this.len);
  }
  at(i: number): unknown {
    return this.arr[i];
  }
  get length(): number {
    return this.len;
  }
  set(i: number, v: unknown): void {
    this.arr[i] = v;
  }
  removeAt(i: number): void {
    for (let j = i; j < this.len - 1; j++) this.arr[j] = this.arr[j + 1];
    this.len--;
  }
  /**
   * Removes the items at `positions` (of the current slice), one after the other in that order,
   * as repeated removeAt calls would, in one pass: each removal leaves the slot it frees at the end
   * holding the slice's last item at that moment.
   */
  removeInOrder(positions: readonly number[]): void {
    const n = this.len;
    const removed = new Uint8Array(n);
    const frozen: unknown[] = [];
    let last = n - 1;
    for (const p of positions) {
      while (removed[last]) last--;
      frozen.push(this.arr[last]);
      removed[p] = 1;
    }
    let w = 0;
    for (let r = 0; r < n; r++) if (!removed[r]) this.arr[w++] = this.arr[r];
    for (let i = 0; i < frozen.length; i++) this.arr[n - 1 - i] = frozen[i];
    this.len = n - positions.length;
  }
  append(v: unknown): void {
    if (this.arr === this.backing && this.len >= this.backing.length) this.arr = this.backing.slice(0, this.len);
    this.arr[this.len++] = v;
  }
}

/**
 * The `$patch` items of a merging list: deletions remove every stored item with that key;
 * `$patch: replace` makes the list the patch's other items. Returns the replacement, if any.
 */
function applySpecialItems(original: GoSlice, patch: unknown[], mergeKey: string): GoSlice | undefined {
  const plain: unknown[] = [];
  let replace = false;
  // Deletions by comparable keys are looked up in an index of the stored items and done in one
  // pass at the end, in the order one-by-one removal would take them (nothing observes the list
  // in between); any other key value takes the scan, which fails as Go's comparison does.
  const index = keyIndex(original, mergeKey);
  const removal: number[] = [];
  const removed = new Set<number>();
  for (const v of patch) {
    const item = v as Obj;
    if (!hasOwn(item, DIRECTIVE)) {
      plain.push(item);
      continue;
    }
    const directive = own(item, DIRECTIVE);
    if (directive === DELETE) {
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      const value = own(item, mergeKey);
      if (index) {
        const key = scalarKey(value);
        // A map or a list equals no key: the scan only finds out whether Go's comparison panics.
        if (key === undefined) findByKey(original, mergeKey, value);
        else
          for (const at of index.get(key) ?? []) {
            if (removed.has(at)) continue;
            removed.add(at);
            removal.push(at);
          }
        continue;
      }
      for (;;) {
        const at = findByKey(original, mergeKey, value);
        if (at < 0) break;
        original.removeAt(at);
      }
    } else if (directive === REPLACE) replace = true;
    else if (directive === MERGE) throw new MergeFailure('merging lists cannot yet be specified in the patch');
    else throw badPatchType(directive, item);
  }
  if (removal.length) original.removeInOrder(removal);
  return replace ? new GoSlice(plain) : undefined;
}

/**
 * Positions of the items by their merge key's value (comparable values only), ascending; undefined
 * when an item is not a map (the scan then reports it).
 */
function keyIndex(list: GoSlice, mergeKey: string): Map<string, number[]> | undefined {
  const index = new Map<string, number[]>();
  for (let i = 0; i < list.length; i++) {
    const v = list.at(i);
    if (!isPlainObject(v)) return undefined;
    if (!hasOwn(v, mergeKey)) continue;
    const key = scalarKey(own(v, mergeKey));
    if (key === undefined) continue;
    const at = index.get(key);
    if (at) at.push(i);
    else index.set(key, [i]);
  }
  return index;
}

function findByKey(list: GoSlice | unknown[], key: string, value: unknown): number {
  const n = list.length;
  for (let i = 0; i < n; i++) {
    const v = list instanceof GoSlice ? list.at(i) : list[i];
    if (!isPlainObject(v)) throw new MergeFailure(`value for key ${i} is not a map`);
    if (hasOwn(v, key) && goEquals(own(v, key), value)) return i;
  }
  return -1;
}

/** Patch items merge into the stored item with the same key, or are appended as they are. */
function mergeItems(original: GoSlice, patch: unknown[], mergeKey: string, schema: Schema | undefined): unknown[] {
  // The first item with each comparable key, kept up to date as items merge and append; any other
  // key value (or a list that is not all maps) takes the scan, as does everything after a merge
  // that dropped an item's key (a null key merged with null).
  let first: Map<string, number> | undefined = new Map();
  for (let i = original.length - 1; i >= 0; i--) {
    const v = original.at(i);
    if (!isPlainObject(v)) {
      first = undefined;
      break;
    }
    const key = hasOwn(v, mergeKey) ? scalarKey(own(v, mergeKey)) : undefined;
    if (key !== undefined) first.set(key, i);
  }
  for (const v of patch) {
    const item = v as Obj;
    if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const value = own(item, mergeKey);
    const key = first ? scalarKey(value) : undefined;
    const at = key !== undefined ? (first!.get(key) ?? -1) : findByKey(original, mergeKey, value);
    if (at >= 0) {
      const merged = mergeMap(original.at(at) as Obj, item, schema);
      original.set(at, merged);
      if (key !== undefined && !(hasOwn(merged, mergeKey) && scalarKey(own(merged, mergeKey)) === key)) first = undefined;
    } else {
      original.append(item);
      if (key !== undefined && !first!.has(key)) first!.set(key, original.length - 1);
    }
  }
  return original.items();
}

/** The keys of hashable values (a map or a slice panics, as hashing it does in Go). */
function hashedKeys(values: unknown[]): Set<string | undefined> {
  const keys = new Set<string | undefined>();
  for (const v of values) {
    hashable(v);
    keys.add(scalarKey(v));
  }
  return keys;
}

function deleteFromList(current: unknown[], toDelete: unknown[]): unknown[] {
  // Strings (nearly every such list) are looked up as they are, without a key made for each.
  const strings = new Set<string>();
  const others = new Set<string | undefined>();
  for (const v of toDelete) {
    hashable(v);
    if (typeof v === 'string') strings.add(v);
    else others.add(scalarKey(v));
  }
  const kept: unknown[] = [];
  for (const v of current) {
    hashable(v);
    if (!(typeof v === 'string' ? strings.has(v) : others.has(scalarKey(v)))) kept.push(v);
  }
  return kept;
}

/**
 * Go's in-place deduplication (a repeat is overwritten by the last item; the order changes): for
 * each position in turn, every later repeat of its value, in ascending order, is overwritten by the
 * current last item (itself checked again when it is a repeat too). The positions of each value are
 * tracked, so this is the same sequence of moves without rescanning the list for every item.
 */
function dedupeScalars(s: unknown[]): unknown[] {
  const keys = s.map((v) => scalarKey(v) ?? '');
  const positions = new Map<string, Set<number>>();
  keys.forEach((k, i) => {
    const at = positions.get(k);
    if (at) at.add(i);
    else positions.set(k, new Set([i]));
  });
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    const k = keys[i]!;
    const own = positions.get(k)!;
    own.delete(i);
    if (own.size === 0) continue;
    for (const p of [...own].sort((a, b) => a - b)) {
      if (p > last) break;
      own.delete(p);
      for (;;) {
        const moved = s[last];
        const mk = keys[last]!;
        positions.get(mk)!.delete(last);
        s[p] = moved;
        keys[p] = mk;
        s.length = last;
        keys.length = last;
        last--;
        if (p > last) break;
        if (mk !== k) {
          positions.get(mk)!.add(p);
          break;
        }
      }
    }
  }
  return s;
}

function partitionScalars(list: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const named = hashedKeys(by);
  const inList: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of list) {
    hashable(v);
    (named.has(scalarKey(v)) ? inList : rest).push(v);
  }
  return [inList, rest];
}

function partitionMaps(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  // The comparable keys of `by`, when it is all maps (otherwise the scan reports the first that is not).
  let named: Set<string> | undefined = new Set();
  for (const b of by) {
    if (!isPlainObject(b)) {
      named = undefined;
      break;
    }
    const key = hasOwn(b, mergeKey) ? scalarKey(own(b, mergeKey)) : undefined;
    if (key !== undefined) named.add(key);
  }
  const inList: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of list) {
    if (!isPlainObject(v)) throw badArgType(MAP_TYPE, v);
    if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    const value = own(v, mergeKey);
    const key = named ? scalarKey(value) : undefined;
    (key !== undefined ? named!.has(key) : findByKey(by, mergeKey, value) >= 0) ? inList.push(v) : rest.push(v);
  }
  return [inList, rest];
}

// ---- order ----

/**
 * Positions in an order list: by merge key for maps, by value otherwise, the first position of
 * each; -1 for an item it does not name. Values that cannot be compared name nothing.
 */
class OrderIndex {
  private readonly mergeKey: string;
  private readonly kind: ElementKind;
  private readonly first = new Map<string, number>();
  constructor(
    order: unknown[],
    mergeKey: string,
    kind: ElementKind,
  ) {
    this.mergeKey = mergeKey;
    this.kind = kind;
    order.forEach((v, i) => {
      const key = this.keyOf(v);
      if (key !== undefined && !this.first.has(key)) this.first.set(key, i);
    });
  }
  private keyOf(v: unknown): string | undefined {
    return scalarKey(this.kind === 'map' ? (isPlainObject(v) && hasOwn(v, this.mergeKey) ? own(v, this.mergeKey) : null) : v);
  }
  indexOf(item: unknown): number {
    const key = this.keyOf(item);
    return key === undefined ? -1 : (this.first.get(key) ?? -1);
  }
}

/**
 * The patch's items in the patch's order and the server-only items in the stored order, merged:
 * a server-only item goes before the next patch item when it came before it in the stored list.
 */
function normalizeOrder(patchItems: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  const fromPatch = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const fromServer = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const inServer = new OrderIndex(serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < fromServer.length && j < fromPatch.length) {
    const si = inServer.indexOf(fromServer[i]);
    const pi = inServer.indexOf(fromPatch[j]);
    if (si >= 0 && pi >= 0 && si < pi) out.push(fromServer[i++]);
    else out.push(fromPatch[j++]);
  }
  return [...out, ...fromServer.slice(i), ...fromPatch.slice(j)];
}

function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let toSort = items;
  let deleted: unknown[] = [];
  if (kind === 'map') {
    for (const list of [items, order])
      for (const v of list) {
        if (!isPlainObject(v)) throw badArgType(MAP_TYPE, v);
        if (!hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      }
    [toSort, deleted] = splitDeletions(items);
  }
  // Each item's position is looked up once; the sort then makes Go's comparisons on positions.
  const index = new OrderIndex(order, mergeKey, kind);
  const sorted = toSort.map((item) => ({ item, at: index.indexOf(item) }));
  stableSort(sorted, (a, b) => (a.at >= 0 && b.at >= 0 ? a.at < b.at : true));
  return [...sorted.map((s) => s.item), ...deleted];
}

/**
 * Go's sort.SliceStable (insertion sort of blocks of 20, then SymMerge): the same comparisons in the
 * same order, so items the order does not name land where Kubernetes puts them.
 */
function stableSort<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const lessAt = (i: number, j: number) => less(data[i], data[j]);
  const swap = (i: number, j: number) => {
    const t = data[i];
    data[i] = data[j];
    data[j] = t;
  };
  const insertionSort = (a: number, b: number) => {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
  };
  const swapRange = (a: number, b: number, n: number) => {
    for (let i = 0; i < n; i++) swap(a + i, b + i);
  };
  const rotate = (a: number, m: number, b: number) => {
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      let i = m;
      let j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const n = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = n - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = n - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };
  const n = data.length;
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertionSort(a, b);
    a = b;
    b += blockSize;
  }
  insertionSort(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
}
