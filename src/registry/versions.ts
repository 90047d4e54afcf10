// Kinds served at several versions with one storage version (KindDefinition.versions): each other
// version becomes a definition of its own, kept in the storage version's storage through its pair
// of conversions (StorageConversion), so routes, discovery, OpenAPI, the store and watches treat
// it as any kind kept in another kind's storage. Its strategy, columns and selectable fields are
// the storage version's, run on the object converted to the storage form. A kind whose versions
// convert through a webhook (KindDefinition.conversion.convert) converts in its codec instead,
// asynchronously (VersionedJson): its versions bring their own strategy, columns and subresources,
// and the pair here only rewrites the envelope.

import { createHash } from 'node:crypto';
import type { KObject } from '../machinery/meta.ts';
import { apiVersionOf, type KindDefinition, type ServedVersion, type StorageConversion, type SubresourceDefinition } from './definition.ts';

/** The definition's form with its envelope set to `at`'s group, version and kind. */
function withEnvelope(obj: KObject, at: { group: string; version: string; kind: string }): KObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
  return { apiVersion: apiVersionOf(at), kind: at.kind, metadata, ...rest } as KObject;
}

/** Puts `source`'s fields into `target` in place (a strategy's hooks change the object they get). */
function replaceFields(target: KObject, source: KObject): void {
  const t = target as unknown as Record<string, unknown>;
  for (const k of Object.keys(t)) delete t[k];
  Object.assign(t, source);
}

/** The conversion pair between `v`'s form and the storage version `base`'s. */
function conversionOf(base: KindDefinition, v: ServedVersion): StorageConversion {
  const served = { group: base.group, version: v.version, kind: base.kind };
  return {
    group: base.group,
    version: base.version,
    kind: base.kind,
    resource: base.resource,
    toStorage: (o) => withEnvelope(v.toStorage ? v.toStorage(o) : o, base),
    fromStorage: (o) => withEnvelope(v.fromStorage ? v.fromStorage(o) : o, served),
  };
}

/** The definition of `base` at the other version `v`, kept in `base`'s storage. */
function versionDefinition(base: KindDefinition, v: ServedVersion): KindDefinition {
  const c = conversionOf(base, v);
  const s = base.strategy;
  const up = (o: KObject): KObject => c.toStorage(o);
  /** A hook that changes its object, run on the storage form and copied back. */
  const inPlace = (f: ((o: KObject) => void) | undefined) =>
    f &&
    ((o: KObject) => {
      const stored = up(o);
      f(stored);
      replaceFields(o, c.fromStorage(stored));
    });
  // A view subresource's request is its own kind, not this one's: only the stored object converts.
  const subresources =
    v.subresources ??
    base.subresources?.map(
      (sub): SubresourceDefinition => ({
        ...sub,
        apply: (request, stored) => c.fromStorage(sub.apply(sub.view ? request : up(request), up(stored))),
        ...(sub.view ? { view: { ...sub.view, read: (stored: KObject, purpose: 'get' | 'update') => sub.view!.read(up(stored), purpose) } } : {}),
      }),
    );
  const { versions: _v, enabledByDefault: _e, deprecatedIn: _d, deprecationMessage: _m, removedIn: _r, subresources: _s, selectableFields: _f, printerColumns: _p, ...rest } = base;
  return {
    ...rest,
    version: v.version,
    schema: v.schema ?? base.schema,
    storedAs: c,
    ...(v.enabledByDefault !== undefined ? { enabledByDefault: v.enabledByDefault } : {}),
    ...(v.deprecatedIn ? { deprecatedIn: v.deprecatedIn } : {}),
    ...(v.deprecationMessage ? { deprecationMessage: v.deprecationMessage } : {}),
    ...(v.removedIn ? { removedIn: v.removedIn } : {}),
    ...(v.selectableFields
      ? { selectableFields: v.selectableFields }
      : // A webhook's conversion is not synchronous: a version converted by one has only its own.
        base.selectableFields && !base.conversion?.convert
        ? { selectableFields: Object.fromEntries(Object.entries(base.selectableFields).map(([f, get]) => [f, (o: KObject) => get(up(o))])) }
        : {}),
    ...(v.printerColumns
      ? { printerColumns: v.printerColumns }
      : base.printerColumns
        ? { printerColumns: base.printerColumns.map((col) => ({ ...col, value: (o: KObject, now: number) => col.value(up(o), now) })) }
        : {}),
    ...(subresources?.length ? { subresources } : {}),
    ...(base.namedCreates ? { namedCreates: base.namedCreates.map((nc) => ({ ...nc, create: (parent: KObject, request: KObject, opts: { dryRun: boolean }) => nc.create(up(parent), request, opts) })) } : {}),
    ...(base.guardWrite
      ? { guardWrite: (w: Parameters<NonNullable<KindDefinition['guardWrite']>>[0]) => base.guardWrite!({ ...w, object: up(w.object), old: w.old && up(w.old) }) }
      : {}),
    strategy: v.strategy ?? {
      defaults: inPlace(s.defaults),
      prepareForCreate: inPlace(s.prepareForCreate),
      prepareForUpdate:
        s.prepareForUpdate &&
        ((o, old) => {
          const stored = up(o);
          s.prepareForUpdate!(stored, up(old));
          replaceFields(o, c.fromStorage(stored));
        }),
      prepareForDelete: inPlace(s.prepareForDelete),
      validate: s.validate && ((o) => s.validate!(up(o))),
      validateUpdate: s.validateUpdate && ((o, old, sub) => s.validateUpdate!(up(o), up(old), sub)),
      pendingFinalization: s.pendingFinalization && ((o) => s.pendingFinalization!(up(o))),
      deleteConflict: s.deleteConflict && ((o) => s.deleteConflict!(up(o))),
      warnings: s.warnings && ((o, old) => s.warnings!(up(o), old && up(old))),
    },
  };
}

/**
 * Every definition with its other served versions as definitions of their own, each right after
 * the storage version's (discovery sorts them by priority).
 */
export function expandVersions(defs: readonly KindDefinition[]): KindDefinition[] {
  return defs.flatMap((d) => {
    if (!d.versions?.length) return [d];
    if (d.storedAs || d.computed || d.review) throw new Error(`${d.kind}: only a kind kept in its own storage can be served at several versions`);
    const seen = new Set([d.version]);
    for (const v of d.versions) {
      if (seen.has(v.version)) throw new Error(`${d.kind}: version ${v.version} is declared twice`);
      seen.add(v.version);
    }
    const { versions: _v, ...storage } = d;
    return [storage, ...d.versions.map((v) => versionDefinition(d, v))];
  });
}

/** The contract's default for a version no definition or flag decides: GA on, alpha and beta off. */
export const enabledByDefault = (d: Pick<KindDefinition, 'version' | 'enabledByDefault'>): boolean => d.enabledByDefault ?? !/^v\d+(alpha|beta)\d+$/.test(d.version);

/**
 * kube-apiserver's storageVersionHash of a stored resource: the first 8 bytes of the SHA-256 of
 * `<group>/<version>/<kind>` of the version objects are stored at (the core group is empty), in
 * standard base64; kube-apiserver's storage version where the definition names it. Clients
 * compare it to notice a change of storage version.
 */
export function storageVersionHash(d: Pick<KindDefinition, 'group' | 'version' | 'kind' | 'storedAs' | 'storageVersion'>): string {
  const at = d.storageVersion ?? d.storedAs ?? d;
  return createHash('sha256').update(`${at.group}/${at.version}/${at.kind}`).digest().subarray(0, 8).toString('base64');
}
