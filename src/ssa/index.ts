// Server-side apply and field ownership for writes, as pure functions over plain objects and the
// kind's schema. Two entry points:
//
// - updateManagedFields: any non-apply write (create, update, patch) records what its manager
//   changed; it never fails on ownership.
// - applyConfig: an apply merges the configuration into the live object, takes ownership of the
//   configuration's fields, removes what the manager stopped applying, and refuses to change
//   fields other managers own (ApplyConflictError) unless forced.
//
// Around the structured-merge core (updater.ts) sit the same layers kube-apiserver stacks, in its
// order: decode live/new managedFields (`[{}]` clears them), strip server-owned metadata from sets,
// one entry per manager identity with the time of its last change, at most 10 Update entries
// (`ancient-changes`), no tracking of objects that never had managedFields until their first
// apply (`before-first-apply`), and the client-side-apply annotation interplay for `kubectl`.

import type { Schema } from '../machinery/schema.ts';
import type { KObject } from '../machinery/meta.ts';
import { FieldSet, makePath } from './fieldpath.ts';
import {
  ApplyConflictError,
  capUpdateManagers,
  cloneManaged,
  decodeManagedFields,
  DEFAULT_MAX_UPDATE_MANAGERS,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  ManagedFieldsError,
  managerIdentifier,
  newVersionedSet,
  type Managed,
  type ManagedFieldsEntry,
  type VersionedSet,
} from './managers.ts';
import { applyOwnership, updateOwnership, type ManagerSets, type UpdaterContext, type VersionView } from './updater.ts';
import { compareTyped, defaultEmptyObject, toFieldSet, typeOf } from './typed.ts';
import { cloneJson, goJson, isJsonMap, valuesEqual, type JsonMap, type JsonValue } from './value.ts';

export { ApplyConflictError, ManagedFieldsError, type ManagedFieldsEntry } from './managers.ts';
export { FieldSet, makePath } from './fieldpath.ts';
export { SsaTypeError } from './typed.ts';

/** A request the reference answers with 400 Bad Request. */
export class SsaBadRequestError extends Error {
  override name = 'SsaBadRequestError';
}

/** The annotation kubectl's client-side apply keeps (spelled the same by every kubectl). */
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Fields that are never part of a field set (the reference's stripmeta, plus deletionTimestamp). */
const STRIP_SET = FieldSet.of(
  makePath('apiVersion'),
  makePath('kind'),
  makePath('metadata'),
  makePath('metadata', 'name'),
  makePath('metadata', 'namespace'),
  makePath('metadata', 'creationTimestamp'),
  makePath('metadata', 'deletionTimestamp'),
  makePath('metadata', 'selfLink'),
  makePath('metadata', 'uid'),
  makePath('metadata', 'clusterName'),
  makePath('metadata', 'generation'),
  makePath('metadata', 'managedFields'),
  makePath('metadata', 'resourceVersion'),
);

const CURRENT_OPERATION = 'current-operation';
const BEFORE_FIRST_APPLY = 'before-first-apply';

interface CommonArgs {
  schema: Schema;
  /** The field manager (fieldManager parameter or User-Agent); empty means `unknown`. */
  manager: string;
  /** `group/version` of the endpoint (`v1` for the core group). */
  apiVersion: string;
  /** Set for writes through a subresource (`status`, `scale`); part of the manager's identity. */
  subresource?: string;
  /** RFC 3339 time of the request (seconds), recorded on entries whose manager changed something. */
  now: string;
  /**
   * Paths the endpoint's strategy resets (e.g. `status` on the main resource, `spec` on
   * `/status`): never owned through this endpoint, and changes there take nothing from others.
   */
  resetFields?: FieldSet;
  /**
   * The kind's zero object, the "live" object of a create (default: `defaultEmptyObject(schema)`,
   * top-level structs present and empty as in a typed built-in object; pass `{}` for custom resources).
   */
  emptyObject?: JsonMap;
  /** Nested structs a typed object always has (see UpdaterContext.structs). */
  structs?: FieldSet;
  /** Versions that can still be read; managers recorded at others are dropped. Default: all. */
  isKnownVersion?: (apiVersion: string) => boolean;
  /**
   * Other versions the same objects are served at (`apiVersion` → their schema and the conversion
   * of an object from this version): managers recorded there are compared in their own version.
   */
  otherVersions?: ReadonlyMap<string, OtherVersion>;
  /** Default 10. */
  maxUpdateManagers?: number;
}

interface UpdateManagedFieldsArgs extends CommonArgs {
  /** The stored object; undefined for a create. */
  live: KObject | undefined;
  /** The object about to be stored (after the patch or the PUT body). Receives its managedFields. */
  updated: KObject;
}

interface ApplyConfigArgs extends CommonArgs {
  /** The stored object; undefined when the apply creates it. */
  live: KObject | undefined;
  /** The decoded apply body (the intent). */
  config: KObject;
  force: boolean;
  /** Default LAST_APPLIED_ANNOTATION. */
  lastAppliedAnnotation?: string;
}

function context(a: CommonArgs): UpdaterContext {
  return {
    type: typeOf(a.schema),
    version: a.apiVersion,
    ignored: a.resetFields && !a.resetFields.isEmpty() ? a.resetFields : undefined,
    structs: a.structs && !a.structs.isEmpty() ? a.structs : undefined,
    isKnownVersion: a.isKnownVersion ?? (() => true),
    ...(a.otherVersions?.size ? { otherVersions: versionViews(a.otherVersions) } : {}),
  };
}

export interface OtherVersion {
  schema: Schema;
  /** An object of this version at that one. */
  convert(obj: KObject): KObject;
  /** An object of that version at this one; absent: managers there are not pruned across versions. */
  back?(obj: KObject): KObject;
  /** Reconciling a manager's set there converts the live object (VersionView.reconcileConverts). */
  reconcileConverts?: boolean;
}

const views = new WeakMap<ReadonlyMap<string, OtherVersion>, ReadonlyMap<string, VersionView>>();

/** The versions' types, built once per map (a store passes the same map on every write). */
function versionViews(versions: ReadonlyMap<string, OtherVersion>): ReadonlyMap<string, VersionView> {
  let v = views.get(versions);
  if (!v) {
    v = new Map(
      [...versions].map(([apiVersion, o]): [string, VersionView] => {
        const back = o.back;
        return [
          apiVersion,
          {
            type: typeOf(o.schema),
            convert: (obj: JsonValue) => o.convert(obj as unknown as KObject) as unknown as JsonValue,
            ...(back ? { back: (obj: JsonValue) => back(obj as unknown as KObject) as unknown as JsonValue } : {}),
            ...(o.reconcileConverts ? { reconcileConverts: true } : {}),
          },
        ];
      }),
    );
    views.set(versions, v);
  }
  return v;
}

/** The object without metadata.managedFields, copied only as deep as needed. */
function withoutManagedFields(o: KObject | JsonMap): JsonMap {
  const md = o.metadata;
  if (!isJsonMap(md as JsonValue) || !('managedFields' in (md as JsonMap))) return o as JsonMap;
  const { managedFields: _drop, ...rest } = md as JsonMap;
  return { ...(o as JsonMap), metadata: rest };
}

/** Fills the zero object's top-level structs in, so presence there is not a change. */
function withZeroFields(o: JsonMap, zero: JsonMap): JsonMap {
  let out: JsonMap | undefined;
  for (const k in zero) if (o[k] === undefined) (out ??= { ...o })[k] = cloneJson(zero[k]!);
  return out ?? o;
}

/** Same fields, version and operation: the stored entry (and its encoding) can stay as it is. */
const sameEntry = (a: VersionedSet | undefined, set: FieldSet, apiVersion: string, applied: boolean): a is VersionedSet =>
  a !== undefined && a.apiVersion === apiVersion && a.applied === applied && a.set.equals(set);

/** Removes server-owned metadata from `id`'s set; `prev` is the entry stored before the write. */
function stripMeta(managers: ManagerSets, id: string, prev?: VersionedSet): void {
  const vs = managers.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIP_SET);
  if (set.isEmpty()) managers.delete(id);
  else managers.set(id, sameEntry(prev, set, vs.apiVersion, vs.applied) ? prev : newVersionedSet(set, vs.apiVersion, vs.applied));
}

/** Layers of a non-apply write below "skip untracked objects": identity, time, stripmeta, cap. */
function updateLayers(ctx: UpdaterContext, a: CommonArgs, liveObj: JsonMap, newObj: JsonMap, managed: Managed, manager: string): Managed {
  const id = managerIdentifier({ manager: manager || 'unknown', operation: 'Update', apiVersion: ctx.version, subresource: a.subresource });
  const fields = updateOwnership(ctx, liveObj, newObj, new Map(managed.fields), CURRENT_OPERATION);
  stripMeta(fields, CURRENT_OPERATION);
  const times = new Map(managed.times);
  const vs = fields.get(CURRENT_OPERATION);
  if (vs) {
    // This write changed something: merge into the manager's entry and stamp the time.
    fields.delete(CURRENT_OPERATION);
    const prev = fields.get(id);
    const set = prev ? vs.set.union(prev.set) : vs.set;
    fields.set(id, sameEntry(prev, set, vs.apiVersion, vs.applied) ? prev : newVersionedSet(set, vs.apiVersion, vs.applied));
    times.set(id, a.now);
  }
  return capUpdateManagers({ fields, times }, a.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS);
}

function setManagedFields(o: KObject, entries: ManagedFieldsEntry[]): void {
  if (entries.length) o.metadata.managedFields = entries;
  else delete o.metadata.managedFields;
}

function decodeOrEmpty(list: unknown): Managed {
  try {
    return decodeManagedFields(list);
  } catch {
    return emptyManaged();
  }
}

/**
 * Records the managedFields of a non-apply write on `updated` (mutated and returned). The manager
 * takes every field the write added or changed; fields the write removed leave every manager.
 * `updated.metadata.managedFields` from the request is honoured when valid and non-empty (except
 * through a subresource), `[{}]` clears the history first (so the requester owns what it changed),
 * and an existing object without managedFields stays untracked. Never throws: on an internal
 * failure the live object's managedFields are kept.
 */
export function updateManagedFields(args: UpdateManagedFieldsArgs): KObject {
  const { live, updated } = args;
  try {
    const ctx = context(args);
    let managed: Managed;
    let reset = false;
    const requested = updated.metadata.managedFields;
    if (args.subresource) managed = decodeOrEmpty(live?.metadata.managedFields);
    else if (isResetManagedFields(requested)) {
      managed = emptyManaged();
      reset = true;
    } else {
      let fromRequest: Managed | undefined;
      try {
        fromRequest = decodeManagedFields(requested);
      } catch {
        fromRequest = undefined;
      }
      managed = fromRequest && fromRequest.fields.size > 0 ? fromRequest : decodeOrEmpty(live?.metadata.managedFields);
    }
    // An existing object nobody tracks stays untracked until its first apply.
    if (managed.fields.size === 0 && live !== undefined && !reset) {
      delete updated.metadata.managedFields;
      return updated;
    }
    const zero = args.emptyObject ?? defaultEmptyObject(args.schema);
    const liveObj = live ? withZeroFields(withoutManagedFields(live), zero) : cloneJson(zero);
    const newObj = withZeroFields(withoutManagedFields(updated), zero);
    const result = updateLayers(ctx, args, liveObj, newObj, managed, args.manager);
    setManagedFields(updated, encodeManagedFields(result));
    return updated;
  } catch {
    const kept = live?.metadata.managedFields;
    if (kept !== undefined) updated.metadata.managedFields = kept;
    else delete updated.metadata.managedFields;
    return updated;
  }
}

interface ApplyOutcome {
  /** The changed object (without managedFields), or undefined when unchanged. */
  object: JsonMap | undefined;
  managed: Managed;
}

/** Layers of an apply from "skip untracked objects" down. */
function applyLayers(ctx: UpdaterContext, a: ApplyConfigArgs, liveObj: JsonMap, config: JsonMap, managed: Managed, zero: JsonMap, force: boolean): ApplyOutcome {
  if (managed.fields.size === 0) {
    // First apply to an untracked object: whatever exists belongs to `before-first-apply`.
    managed = updateLayers(ctx, a, cloneJson(zero), liveObj, managed, BEFORE_FIRST_APPLY);
  }
  const id = managerIdentifier({ manager: a.manager || 'unknown', operation: 'Apply', subresource: a.subresource });
  const res = applyOwnership(ctx, liveObj, config, new Map(managed.fields), id, force);
  stripMeta(res.managers, id, managed.fields.get(id));
  const times = new Map(managed.times);
  if (res.object !== undefined) times.set(id, a.now);
  return { object: res.object as JsonMap | undefined, managed: { fields: res.managers, times } };
}

/**
 * The fields client-side apply last set and still hold their value: conflicts on them are
 * forgiven when kubectl moves to server-side apply. Undefined when there is no usable annotation.
 */
function lastAppliedFields(ctx: UpdaterContext, liveObj: JsonMap, key: string): FieldSet | undefined {
  const ann = (liveObj.metadata as JsonMap | undefined)?.annotations;
  const text = isJsonMap(ann) ? ann[key] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonMap(last) || last.apiVersion !== ctx.version) return undefined;
  try {
    const set = toFieldSet(ctx.type, last);
    const cmp = compareTyped(ctx.type, last, liveObj);
    return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
  } catch {
    return undefined;
  }
}

/** The annotation's new value: the applied configuration without the annotation, as JSON. */
function buildLastApplied(config: JsonMap, key: string): string {
  const copy = cloneJson(config);
  const md = copy.metadata;
  if (isJsonMap(md) && isJsonMap(md.annotations)) {
    delete md.annotations[key];
    if (Object.keys(md.annotations).length === 0) delete md.annotations;
  }
  return `${goJson(copy)}\n`;
}

function reorderLike(o: JsonMap, like: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const k in like) if (o[k] !== undefined) out[k] = o[k]!;
  for (const k in o) if (out[k] === undefined) out[k] = o[k]!;
  return out;
}

function removeZeroFields(o: JsonMap, zero: JsonMap, live: JsonMap | undefined, config: JsonMap): void {
  for (const k in zero) {
    const v = o[k];
    if (live?.[k] === undefined && config[k] === undefined && isJsonMap(v) && Object.keys(v).length === 0) delete o[k];
  }
}

/**
 * Server-side apply of `config` by `manager`. Returns the object to store, with its managedFields;
 * when the apply changes nothing the very `live` object is returned (`result === live`), so no
 * write and no new resourceVersion is needed. Throws ApplyConflictError (409) when fields the
 * configuration changes are owned by other managers and `force` is false, SsaBadRequestError (400)
 * for a configuration that sets managedFields or has the wrong version, SsaTypeError for values
 * that break the schema's list rules, and ManagedFieldsError when the live managedFields are corrupt.
 */
export function applyConfig(args: ApplyConfigArgs): KObject {
  const { live, config } = args;
  const cfgMeta = config.metadata as JsonMap | undefined;
  if (cfgMeta && cfgMeta.managedFields !== undefined && cfgMeta.managedFields !== null) throw new SsaBadRequestError('metadata.managedFields must be nil');
  if (config.apiVersion !== args.apiVersion)
    throw new SsaBadRequestError(`Incorrect version specified in apply patch. Specified patch version: ${typeof config.apiVersion === 'string' ? config.apiVersion : ''}, expected: ${args.apiVersion}`);
  const ctx = context(args);
  let managed: Managed;
  try {
    managed = decodeManagedFields(live?.metadata.managedFields);
  } catch (e) {
    throw new ManagedFieldsError(`failed to decode managed fields: ${(e as Error).message}`);
  }
  const zero = args.emptyObject ?? defaultEmptyObject(args.schema);
  const liveBare = live ? withoutManagedFields(live) : undefined;
  const liveObj = withZeroFields(liveBare ?? {}, zero);
  const configObj = config as JsonMap;
  const annotation = args.lastAppliedAnnotation ?? LAST_APPLIED_ANNOTATION;

  let outcome: ApplyOutcome;
  try {
    outcome = applyLayers(ctx, args, liveObj, configObj, cloneManaged(managed), zero, args.force);
  } catch (e) {
    // kubectl moving from client-side apply: conflicts on what its annotation recorded are forgiven.
    if (!(e instanceof ApplyConflictError) || args.manager !== 'kubectl') throw e;
    const allowed = lastAppliedFields(ctx, liveObj, annotation);
    if (!allowed) throw e;
    const remaining = e.raw.filter((c) => !allowed.has(c.path));
    if (remaining.length) throw new ApplyConflictError(remaining);
    outcome = applyLayers(ctx, args, liveObj, configObj, cloneManaged(managed), zero, true);
  }

  const entries = encodeManagedFields(outcome.managed);
  const lastApplied = args.manager === 'kubectl' ? lastAppliedUpdate(live ?? (configObj as KObject), outcome.object, configObj, annotation) : undefined;
  if (outcome.object === undefined && live && lastApplied === undefined && valuesEqual(entries as unknown as JsonValue, (live.metadata.managedFields ?? []) as JsonValue)) return live;

  let result: KObject;
  if (outcome.object !== undefined) {
    let obj = cloneJson(outcome.object);
    removeZeroFields(obj, zero, liveBare, configObj);
    // A created object keeps the configuration's field order (merging put the zero object first).
    if (!liveBare) obj = reorderLike(obj, configObj);
    result = obj as KObject;
    if (!isJsonMap(result.metadata as JsonValue)) result.metadata = {};
  } else {
    result = { ...(liveBare as KObject), metadata: { ...((liveBare as KObject | undefined)?.metadata ?? {}) } };
  }
  setManagedFields(result, entries);
  if (lastApplied !== undefined) result.metadata.annotations = { ...(result.metadata.annotations ?? {}), [annotation]: lastApplied };
  return result;
}

/**
 * kubectl's server-side apply keeps an existing client-side apply annotation current: the new
 * value when the resulting object carries a non-empty annotation that differs, else undefined.
 */
function lastAppliedUpdate(live: KObject, changed: JsonMap | undefined, config: JsonMap, key: string): string | undefined {
  const md = (changed ? changed.metadata : live.metadata) as JsonMap | undefined;
  const ann = md?.annotations;
  const current = isJsonMap(ann) ? ann[key] : undefined;
  if (typeof current !== 'string' || current === '') return undefined;
  const next = buildLastApplied(config, key);
  return next === current ? undefined : next;
}
