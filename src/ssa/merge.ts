// Merging an applied configuration into a live object, and removing a field set from an object,
// by the schema (the reference's typed/merge.go and typed/remove.go). Values of the configuration
// win; granular maps and structs merge key by key; sets and map lists merge item by item, keeping
// the live order and placing the configuration's items as the reference orders them; atomic parts
// are replaced whole. Nothing is ever removed by a merge.

import { FieldSet, fieldElement, pathElementString, type PathElement } from './fieldpath.ts';
import { chooseShape, itemElementAt, listItemElement, shapeOf, SsaTypeError, type ListAtom, type TypeNode } from './typed.ts';
import { definedKeys, isJsonMap, type JsonMap, type JsonValue } from './value.ts';

/**
 * The result of merging `rhs` (the configuration, partially specified) into `lhs` (the live
 * value). Duplicate items in `rhs` are refused with an SsaTypeError; duplicates in `lhs` are kept.
 * Returns undefined only when both are undefined.
 */
export function mergeValues(t: TypeNode, lhs: JsonValue | undefined, rhs: JsonValue | undefined): JsonValue | undefined {
  if (lhs === undefined && rhs === undefined) return undefined;
  return mergeWalk(t, lhs, rhs, []);
}

function mergeWalk(t: TypeNode, l: JsonValue | undefined, r: JsonValue | undefined, path: PathElement[]): JsonValue | undefined {
  const choice = chooseShape(t, l, r);
  switch (choice.shape) {
    case 'scalar':
      return r !== undefined ? r : l;
    case 'list': {
      const list = t.list!;
      const la = Array.isArray(l) ? l : undefined;
      const ra = Array.isArray(r) ? r : undefined;
      // Both empty or absent: a leaf, so an empty list and a null stay distinct.
      if (list.atomic || ((!la || la.length === 0) && (!ra || ra.length === 0))) return r !== undefined ? r : l;
      return mergeListItems(list, la, ra, path);
    }
    case 'map': {
      const m = t.map!;
      if (m.atomic) return r !== undefined ? r : l;
      const lm = isJsonMap(l) ? l : undefined;
      const rm = isJsonMap(r) ? r : undefined;
      const lk = lm ? definedKeys(lm) : [];
      const rk = rm ? definedKeys(rm) : [];
      if (lk.length === 0 && rk.length === 0) return r !== undefined ? r : l;
      const out: JsonMap = {};
      let any = false;
      if (lm)
        for (const k of lk) {
          const lv = lm[k]!;
          path.push(fieldElement(k));
          const v = mergeWalk(m.fields.get(k) ?? m.elem, lv, rm?.[k], path);
          path.pop();
          if (v !== undefined) {
            out[k] = v;
            any = true;
          }
        }
      if (rm)
        for (const k of rk) {
          const rv = rm[k]!;
          if (lm && lm[k] !== undefined) continue;
          path.push(fieldElement(k));
          const v = mergeWalk(m.fields.get(k) ?? m.elem, undefined, rv, path);
          path.pop();
          if (v !== undefined) {
            out[k] = v;
            any = true;
          }
        }
      return any ? out : undefined;
    }
  }
}

interface Indexed {
  pes: PathElement[];
  /** First item per element; null for an element that appears more than once. */
  observed: Map<string, JsonValue>;
}

function indexItems(list: ListAtom, items: JsonValue[] | undefined, allowDuplicates: boolean, path: PathElement[]): Indexed {
  const pes: PathElement[] = [];
  const observed = new Map<string, JsonValue>();
  if (!items) return { pes, observed };
  items.forEach((item, i) => {
    const pe = itemElementAt(list, item, path, i);
    if (observed.has(pe.key)) {
      if (!allowDuplicates) throw new SsaTypeError(`${path.map(pathElementString).join('')}: duplicate entries for key ${pathElementString(pe)}`);
      // Duplicated live items are not merged with the configuration's item.
      observed.set(pe.key, null);
    } else observed.set(pe.key, item);
    pes.push(pe);
  });
  return { pes, observed };
}

function mergeListItems(list: ListAtom, lhs: JsonValue[] | undefined, rhs: JsonValue[] | undefined, path: PathElement[]): JsonValue | undefined {
  const R = indexItems(list, rhs, false, path);
  const L = indexItems(list, lhs, true, path);
  const out: JsonValue[] = [];
  const mergeItem = (pe: PathElement, lc: JsonValue | undefined, rc: JsonValue | undefined) => {
    path.push(pe);
    const v = mergeWalk(list.elem, lc, rc, path);
    path.pop();
    if (v !== undefined) out.push(v);
  };

  // Items present on both sides, in the configuration's order.
  const shared: PathElement[] = R.pes.filter((pe) => L.observed.has(pe.key));
  let sharedAt = 0;
  let nextShared: PathElement | undefined = shared[sharedAt++];
  const mergedRHS = new Set<string>();
  const lLen = L.pes.length;
  const rLen = R.pes.length;
  let lI = 0;
  let rI = 0;
  while (lI < lLen || rI < rLen) {
    if (lI < lLen && rI < rLen) {
      const pe = L.pes[lI]!;
      if (pe.key === R.pes[rI]!.key) {
        mergedRHS.add(pe.key);
        mergeItem(pe, L.observed.get(pe.key), R.observed.get(pe.key));
        lI++;
        rI++;
        nextShared = shared[sharedAt++];
        continue;
      }
      if (R.observed.has(pe.key) && nextShared !== undefined && nextShared.key !== pe.key) {
        // A shared item, but not the one due now: it comes when the configuration reaches it.
        lI++;
        continue;
      }
    }
    if (lI < lLen) {
      const pe = L.pes[lI]!;
      if (!R.observed.has(pe.key)) {
        mergeItem(pe, lhs![lI], undefined);
        lI++;
        continue;
      } else if (mergedRHS.has(pe.key)) lI++;
    }
    if (rI < rLen) {
      const pe = R.pes[rI]!;
      mergedRHS.add(pe.key);
      mergeItem(pe, L.observed.get(pe.key), R.observed.get(pe.key));
      rI++;
      if (nextShared !== undefined && nextShared.key === pe.key) nextShared = shared[sharedAt++];
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The value without the members of `toRemove` (typed RemoveItems): a removed member takes its
 * whole subtree; a container left with nothing becomes null, as the reference leaves it.
 */
export function removeItems(t: TypeNode, value: JsonValue, toRemove: FieldSet): JsonValue {
  if (toRemove.isEmpty()) return value;
  return removeWalk(t, value, toRemove);
}

function removeWalk(t: TypeNode, v: JsonValue, toRemove: FieldSet): JsonValue {
  switch (shapeOf(t, v)) {
    case 'scalar':
      return v;
    case 'list': {
      const list = t.list!;
      if (!Array.isArray(v) || v.length === 0 || list.atomic) return null;
      const items: JsonValue[] = [];
      for (const item of v) {
        let pe: PathElement | undefined;
        try {
          pe = listItemElement(list, item);
        } catch {
          items.push(item);
          continue;
        }
        if (toRemove.hasMember(pe)) continue;
        const sub = toRemove.child(pe);
        items.push(sub && !sub.isEmpty() ? removeWalk(list.elem, item, sub) : item);
      }
      return items.length > 0 ? items : null;
    }
    case 'map': {
      const m = t.map!;
      if (!isJsonMap(v) || m.atomic) return null;
      const out: JsonMap = {};
      let any = false;
      for (const k of definedKeys(v)) {
        const val = v[k]!;
        const pe = fieldElement(k);
        if (toRemove.hasMember(pe)) continue;
        const sub = toRemove.child(pe);
        out[k] = sub && !sub.isEmpty() ? removeWalk(m.fields.get(k) ?? m.elem, val, sub) : val;
        any = true;
      }
      return any ? out : null;
    }
  }
}
