// Conversions between a served form and a storage form that differ only in the names of
// top-level fields (core v1 Event ↔ events/v1 Event): a pair of StorageConversion functions
// built from one table of renames, so the two directions cannot disagree.

import type { KObject } from '../machinery/meta.ts';
import type { Schema } from '../machinery/schema.ts';
import { apiVersionOf, type StorageConversion } from './definition.ts';

interface RenamedForm {
  group: string;
  version: string;
  kind: string;
  schema: Schema;
}

/** `[served name, stored name]` of every field whose name differs; other fields keep theirs. */
export type FieldRenames = readonly (readonly [string, string])[];

/**
 * Copies `obj` with its fields renamed, in the order the target schema declares them (as a typed
 * Kubernetes object is written), unknown fields last; values are shared, not copied.
 */
function renamed(obj: KObject, names: ReadonlyMap<string, string>, target: RenamedForm): KObject {
  const source = obj as unknown as Record<string, unknown>;
  const moved: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) moved[names.get(k) ?? k] = v;
  const out: Record<string, unknown> = { apiVersion: apiVersionOf(target), kind: target.kind, metadata: obj.metadata };
  for (const k of Object.keys(target.schema.properties ?? {})) if (!(k in out) && moved[k] !== undefined) out[k] = moved[k];
  for (const [k, v] of Object.entries(moved)) if (!(k in out)) out[k] = v;
  return out as unknown as KObject;
}

export function renamingConversion(served: RenamedForm, stored: RenamedForm & { resource: string }, renames: FieldRenames): StorageConversion {
  const toStored = new Map(renames.map(([s, t]) => [s, t]));
  const toServed = new Map(renames.map(([s, t]) => [t, s]));
  return {
    group: stored.group,
    version: stored.version,
    kind: stored.kind,
    resource: stored.resource,
    toStorage: (o) => renamed(o, toStored, stored),
    fromStorage: (o) => renamed(o, toServed, served),
  };
}

/** The served schema: the stored one's properties under their served names, in `order`. */
export function renamedSchema(stored: Schema, renames: FieldRenames, order: readonly string[], description?: string): Schema {
  const toStored = new Map(renames.map(([s, t]) => [s, t]));
  const from = stored.properties ?? {};
  const properties: Record<string, Schema> = {};
  for (const k of ['apiVersion', 'kind', 'metadata', ...order]) {
    const s = from[toStored.get(k) ?? k];
    if (!s) throw new Error(`renamedSchema: the stored schema has no field for ${k}`);
    properties[k] = s;
  }
  return { ...stored, properties, ...(description ? { description } : {}) };
}
