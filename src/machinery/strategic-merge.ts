// Strategic merge patch, driven by the kind's schema markers: maps merge key by key (null
// deletes); lists marked `x-kubernetes-patch-strategy: merge` merge by their
// `x-kubernetes-patch-merge-key` (or as a set of scalars), other lists are replaced. Directives:
// `$patch: replace | delete | merge`, `$retainKeys`, `$deleteFromPrimitiveList/<field>`,
// `$setElementOrder/<field>`.

import type { Schema } from './schema.ts';
import { isPlainObject } from './meta.ts';
import { errors } from './status.ts';

type Obj = Record<string, unknown>;

const DELETE_FROM = '$deleteFromPrimitiveList/';
const SET_ORDER = '$setElementOrder/';

export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: Schema | undefined): unknown {
  if (!isPlainObject(patch)) throw errors.badRequest('the strategic merge patch must be a JSON object');
  const out = mergeMap(isPlainObject(original) ? original : {}, patch, schema);
  return out ?? {};
}

const fieldSchema = (s: Schema | undefined, key: string): Schema | undefined => s?.properties?.[key] ?? s?.additionalProperties;

/** Copy a value from the patch into the result, dropping directive keys. */
function clean(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => !(isPlainObject(x) && x.$patch !== undefined && Object.keys(x).length === 1)).map(clean);
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$') && k !== '__proto__') out[k] = clean(x);
  return out;
}

/** The merged map, or undefined when the patch deletes it (`$patch: delete`). */
function mergeMap(orig: Obj, patch: Obj, schema: Schema | undefined): Obj | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return clean(patch) as Obj;
  if (directive !== undefined && directive !== 'merge') throw errors.badRequest(`Unknown patch type: ${String(directive)}`);
  const out: Obj = { ...orig };
  const deletions: [string, unknown[]][] = [];
  const orders: [string, unknown[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key === '__proto__') continue;
    if (key.startsWith(DELETE_FROM)) {
      if (!Array.isArray(value)) throw errors.badRequest(`${key} must be a list`);
      deletions.push([key.slice(DELETE_FROM.length), value]);
      continue;
    }
    if (key.startsWith(SET_ORDER)) {
      if (!Array.isArray(value)) throw errors.badRequest(`${key} must be a list`);
      orders.push([key.slice(SET_ORDER.length), value]);
      continue;
    }
    if (key.startsWith('$')) throw errors.badRequest(`unknown strategic merge patch directive ${JSON.stringify(key)}`);
    const sub = fieldSchema(schema, key);
    const current = out[key];
    if (value === null) delete out[key];
    else if (isPlainObject(value)) {
      const merged = mergeMap(isPlainObject(current) ? current : {}, value, sub);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) out[key] = mergeList(Array.isArray(current) ? current : [], value, sub);
    else out[key] = value;
  }
  for (const [field, values] of deletions) {
    const list = out[field];
    if (Array.isArray(list)) out[field] = list.filter((v) => !values.some((d) => d === v));
  }
  for (const [field, order] of orders) {
    const list = out[field];
    if (Array.isArray(list)) out[field] = reorder(list, order, mergeKeyOf(fieldSchema(schema, field)));
  }
  if (patch.$retainKeys !== undefined) {
    if (!Array.isArray(patch.$retainKeys)) throw errors.badRequest('$retainKeys must be a list');
    const keep = new Set(patch.$retainKeys.map(String));
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function mergeKeyOf(s: Schema | undefined): string | undefined {
  if (!s) return undefined;
  return s['x-kubernetes-patch-merge-key'] ?? (s['x-kubernetes-list-type'] === 'map' ? s['x-kubernetes-list-map-keys']?.[0] : undefined);
}

function mergesList(s: Schema | undefined): boolean {
  if (!s) return false;
  const strategy = s['x-kubernetes-patch-strategy'];
  if (strategy !== undefined) return strategy.split(',').includes('merge');
  return s['x-kubernetes-list-type'] === 'map' || s['x-kubernetes-list-type'] === 'set';
}

function mergeList(orig: unknown[], patch: unknown[], schema: Schema | undefined): unknown[] {
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) return clean(patch) as unknown[];
  if (!mergesList(schema)) return clean(patch) as unknown[];
  const key = mergeKeyOf(schema);
  if (!key) {
    // A set of scalars: union, in order, without duplicates.
    const out = [...orig];
    for (const p of patch) if (!out.some((o) => o === p)) out.push(clean(p));
    return out;
  }
  const out = [...orig];
  for (const p of patch) {
    if (!isPlainObject(p)) throw errors.badRequest(`the list items must be objects with the merge key ${JSON.stringify(key)}`);
    if (!(key in p)) throw errors.badRequest(`map: ${JSON.stringify(p)} does not contain declared merge key: ${key}`);
    const at = out.findIndex((o) => isPlainObject(o) && o[key] === p[key]);
    if (p.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) {
      const merged = mergeMap(out[at] as Obj, p, schema?.items);
      if (merged === undefined) out.splice(at, 1);
      else out[at] = merged;
    } else out.push(clean(p));
  }
  return out;
}

/** `$setElementOrder`: the listed items first in the given order, then the rest as they were. */
function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (v: unknown) => (key && isPlainObject(v) ? v[key] : v);
  const ranked = new Map(order.map((o, i) => [id(o), i]));
  return list
    .map((v, i) => ({ v, i, r: ranked.get(id(v)) ?? order.length + i }))
    .sort((a, b) => a.r - b.r)
    .map(({ v }) => v);
}
