// The managed fields of a Scale (the `scale` subresource): what an object's managers own of its
// desired replica count, as the autoscaling/v1 Scale's `spec.replicas`, and back. A write through
// `/scale` runs field ownership on the Scale with the managed fields `toScale` gives, then
// `fromScale` folds the Scale's entries into the object's, as the reference's scale handler
// (k8s.io/apimachinery/pkg/util/managedfields/scalehandler.go) does:
//
// - to the Scale: only managers whose set has the object's replicas path, at a version whose path
//   is known, appear, each owning `spec.replicas` at `autoscaling/v1`, with its time;
// - back: entries at a version the kind does not know are dropped; an entry without the replicas
//   path stays as it was; one with the path keeps it only when the same manager identity still owns
//   it on the Scale (its entry and time then stay as they were), else loses the path; a Scale
//   manager the object did not have owning `spec.replicas` becomes an entry at the written
//   version, owning the replicas path, with the time the object held for that identity (none for a
//   new one).
//
// A manager identity includes the version of Update entries, and the Scale's entries are at
// `autoscaling/v1`: an updater known to the object is a different identity on the Scale, so the
// object's entry loses the path and the Scale's becomes an entry of its own.

import { FieldSet, makePath } from './fieldpath.ts';
import { decodeManagedFields, emptyManaged, encodeManagedFields, ManagedFieldsError, newVersionedSet, type Managed, type ManagedFieldsEntry } from './managers.ts';

/** The Scale's group and version. */
export const SCALE_API_VERSION = 'autoscaling/v1';

const REPLICAS_IN_SCALE = makePath('spec', 'replicas');

/**
 * Each version of the kind (`group/version`) and the field path of its desired replicas
 * (`['spec', 'replicas']`), or null for a version without the scale subresource.
 */
export type ReplicasPaths = ReadonlyMap<string, readonly string[] | null>;

function decode(list: unknown): Managed {
  try {
    return decodeManagedFields(list);
  } catch (e) {
    throw new ManagedFieldsError(`failed to decode managed fields: ${(e as Error).message}`);
  }
}

/** The managed fields the Scale of an object carries, from the object's `managedFields`. */
export function managedFieldsToScale(objectEntries: unknown, paths: ReplicasPaths): ManagedFieldsEntry[] {
  const parent = decode(objectEntries);
  const out = emptyManaged();
  for (const [id, vs] of parent.fields) {
    const path = paths.get(vs.apiVersion);
    if (!path) continue;
    if (!vs.set.has(makePath(...path))) continue;
    out.fields.set(id, newVersionedSet(FieldSet.of(REPLICAS_IN_SCALE), SCALE_API_VERSION, vs.applied));
    out.times.set(id, parent.times.get(id));
  }
  return encodeManagedFields(out);
}

/**
 * The object's `managedFields` after a write through its Scale: `objectEntries` as stored,
 * `scaleEntries` as field ownership left them on the Scale, `apiVersion` the version written.
 */
export function managedFieldsFromScale(objectEntries: unknown, scaleEntries: unknown, apiVersion: string, paths: ReplicasPaths): ManagedFieldsEntry[] {
  const parent = decode(objectEntries);
  const scale = decode(scaleEntries);
  const remaining = new Map(scale.fields);
  const out = emptyManaged();
  for (const [id, vs] of parent.fields) {
    if (!paths.has(vs.apiVersion)) continue;
    const segments = paths.get(vs.apiVersion);
    const path = segments ? makePath(...segments) : undefined;
    if (!path || !vs.set.has(path)) {
      out.fields.set(id, vs);
      out.times.set(id, parent.times.get(id));
      continue;
    }
    if (!remaining.has(id)) {
      // The replicas path went to another manager through the Scale.
      const rest = vs.set.difference(FieldSet.of(path));
      if (!rest.isEmpty()) {
        out.fields.set(id, newVersionedSet(rest, vs.apiVersion, vs.applied));
        out.times.set(id, parent.times.get(id));
      }
    } else {
      out.fields.set(id, vs);
      out.times.set(id, parent.times.get(id));
      remaining.delete(id);
    }
  }
  const own = paths.get(apiVersion);
  for (const [id, vs] of remaining) {
    if (!own || !vs.set.has(REPLICAS_IN_SCALE)) continue;
    out.fields.set(id, newVersionedSet(FieldSet.of(makePath(...own)), apiVersion, vs.applied));
    out.times.set(id, parent.times.get(id));
  }
  return encodeManagedFields(out);
}
