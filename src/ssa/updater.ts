// The ownership bookkeeping of writes (the reference's merge/update.go Updater): which managers
// lose fields a write changed or removed, the conflicts an apply meets, and the pruning of fields
// an applier stopped applying. Managers recorded at another version of the same objects (another
// group serving them: core and events.k8s.io Events; another version of a custom resource) are
// compared in their own version, through the conversions the context is given, and an applier
// whose last apply was at another version is pruned in that version, as the reference's Updater
// does with its Converter; a version without a view shares this one's paths. Managers at versions
// the server no longer knows are dropped, as the reference drops managers whose version it cannot
// convert to.

import { FieldSet } from './fieldpath.ts';
import { ApplyConflictError, newVersionedSet, type ConflictSets, type VersionedSet } from './managers.ts';
import { mergeValues, removeItems } from './merge.ts';
import { compareTyped, dropNulls, ensureNamedFieldsAreMembers, reconcileFieldSet, toFieldSet, type Comparison, type TypeNode } from './typed.ts';
import { valuesEqual, type JsonValue } from './value.ts';

export interface UpdaterContext {
  readonly type: TypeNode;
  /** The version of the objects being written. */
  readonly version: string;
  /** Paths this endpoint resets: never owned through it, and its changes there take nothing from others. */
  readonly ignored?: FieldSet;
  /**
   * Always-present structs of a typed object (a Node's status.nodeInfo): a write that adds or drops
   * one changes its fields, never the struct itself, as when Kubernetes compares typed objects.
   */
  readonly structs?: FieldSet;
  readonly isKnownVersion: (apiVersion: string) => boolean;
  /** Other versions the same objects are served at, with their types and conversions. */
  readonly otherVersions?: ReadonlyMap<string, VersionView>;
}

/** Another version of the objects being written: its type, and the conversions from and back to this version. */
export interface VersionView {
  readonly type: TypeNode;
  convert(obj: JsonValue): JsonValue;
  /** An object of that version in this version's form; absent: it cannot be converted back. */
  back?(obj: JsonValue): JsonValue;
  /**
   * Reconciling a manager's set at that version converts the live object there, as the reference
   * does (it needs only the schema, but a conversion that fails fails the write).
   */
  readonly reconcileConverts?: boolean;
}

const viewOf = (ctx: UpdaterContext, apiVersion: string): VersionView | undefined => (apiVersion === ctx.version ? undefined : ctx.otherVersions?.get(apiVersion));

/** The type of objects at `apiVersion` (this version's when it has no view). */
const typeAt = (ctx: UpdaterContext, apiVersion: string): TypeNode => viewOf(ctx, apiVersion)?.type ?? ctx.type;

/**
 * `obj`, of version `from`, at version `to`; undefined when the views cannot convert it (the
 * reference's missing version). A version without a view has this version's form.
 */
function convertBetween(ctx: UpdaterContext, obj: JsonValue, from: string, to: string): JsonValue | undefined {
  if (from === to) return obj;
  const source = viewOf(ctx, from);
  let here = obj;
  if (source) {
    if (!source.back) return undefined;
    here = source.back(obj);
  }
  const target = viewOf(ctx, to);
  return target ? target.convert(here) : here;
}

export type ManagerSets = Map<string, VersionedSet>;

// Sets are immutable and decoded sets are shared between requests, so reconciling one set with
// one type is done once.
const reconciled = new WeakMap<TypeNode, WeakMap<FieldSet, FieldSet | null>>();

function reconcileCached(set: FieldSet, t: TypeNode): FieldSet | undefined {
  let byType = reconciled.get(t);
  if (!byType) reconciled.set(t, (byType = new WeakMap()));
  let r = byType.get(set);
  if (r === undefined) byType.set(set, (r = reconcileFieldSet(set, t) ?? null));
  return r ?? undefined;
}

/**
 * Adapts every manager's set to the current schema (atomic ↔ granular changes). `live`: the live
 * object, converted to each version whose view asks for it (VersionView.reconcileConverts).
 */
export function reconcileManagers(ctx: UpdaterContext, managers: ManagerSets, live?: JsonValue): ManagerSets {
  const out: ManagerSets = new Map();
  const converted = new Set<string>();
  for (const [id, vs] of managers) {
    if (!ctx.isKnownVersion(vs.apiVersion)) continue;
    const view = viewOf(ctx, vs.apiVersion);
    if (live !== undefined && view?.reconcileConverts && !converted.has(vs.apiVersion)) {
      converted.add(vs.apiVersion);
      view.convert(live);
    }
    const r = reconcileCached(vs.set, viewOf(ctx, vs.apiVersion)?.type ?? ctx.type);
    out.set(id, r ? newVersionedSet(r, vs.apiVersion, vs.applied) : vs);
  }
  return out;
}

const noChange = (): Comparison => ({ added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() });

const exclude = (c: Comparison, ignored: FieldSet | undefined): Comparison =>
  ignored ? { added: c.added.recursiveDifference(ignored), modified: c.modified.recursiveDifference(ignored), removed: c.removed.recursiveDifference(ignored) } : c;

const withoutStructs = (c: Comparison, structs: FieldSet | undefined): Comparison =>
  structs ? { added: c.added.difference(structs), modified: c.modified, removed: c.removed.difference(structs) } : c;

/**
 * Takes from every manager but `workflow` the fields the write changed (a conflict unless forced)
 * or removed. Mutates and returns `managers`; throws ApplyConflictError when not forced.
 */
function takeOwnership(
  ctx: UpdaterContext,
  oldObj: JsonValue,
  newObj: JsonValue,
  managers: ManagerSets,
  workflow: string,
  force: boolean,
  same = valuesEqual(oldObj, newObj),
): { managers: ManagerSets; compare: Comparison } {
  // Equal values compare as no change at all; skip the walk that would find nothing.
  const compare = same ? noChange() : withoutStructs(exclude(compareTyped(ctx.type, oldObj, newObj), ctx.ignored), ctx.structs);
  // Managers of another version see the change in that version, compared once per version.
  const byVersion = new Map<string, { changed: FieldSet; removed: FieldSet }>([[ctx.version, { changed: compare.modified.union(compare.added), removed: compare.removed }]]);
  const changeIn = (apiVersion: string): { changed: FieldSet; removed: FieldSet } => {
    const view = viewOf(ctx, apiVersion);
    if (!view) return byVersion.get(ctx.version)!;
    let c = byVersion.get(apiVersion);
    if (!c) {
      // The endpoint's reset paths are left out in every version, as the reference filters each.
      const cmp = same ? noChange() : exclude(compareTyped(view.type, view.convert(oldObj), view.convert(newObj)), ctx.ignored);
      byVersion.set(apiVersion, (c = { changed: cmp.modified.union(cmp.added), removed: cmp.removed }));
    }
    return c;
  };
  const conflicts: ConflictSets = new Map();
  const removedFrom: [string, FieldSet][] = [];
  for (const [id, vs] of managers) {
    if (id === workflow) continue;
    if (!ctx.isKnownVersion(vs.apiVersion)) {
      managers.delete(id);
      continue;
    }
    const { changed, removed } = changeIn(vs.apiVersion);
    const c = vs.set.intersection(changed);
    if (!c.isEmpty()) conflicts.set(id, { set: c, apiVersion: vs.apiVersion });
    if (!removed.isEmpty()) removedFrom.push([id, removed]);
  }
  if (!force && conflicts.size > 0) throw ApplyConflictError.fromSets(conflicts);
  for (const [id, { set }] of conflicts) {
    const vs = managers.get(id)!;
    managers.set(id, newVersionedSet(vs.set.difference(set), vs.apiVersion, vs.applied));
  }
  for (const [id, removed] of removedFrom) {
    const vs = managers.get(id)!;
    const next = vs.set.difference(removed);
    if (!next.equals(vs.set)) managers.set(id, newVersionedSet(next, vs.apiVersion, vs.applied));
  }
  for (const [id, vs] of managers) if (vs.set.isEmpty()) managers.delete(id);
  return { managers, compare };
}

/** A non-apply write: `workflow` takes every field the write added or changed (Updater.Update). */
export function updateOwnership(ctx: UpdaterContext, liveObj: JsonValue, newObj: JsonValue, managers: ManagerSets, workflow: string): ManagerSets {
  const { managers: out, compare } = takeOwnership(ctx, liveObj, newObj, reconcileManagers(ctx, managers, liveObj), workflow, true);
  const prev = out.get(workflow);
  let set = (prev?.set ?? new FieldSet()).difference(compare.removed).union(compare.modified).union(compare.added);
  if (ctx.ignored) set = set.recursiveDifference(ctx.ignored);
  if (set.isEmpty()) out.delete(workflow);
  else out.set(workflow, newVersionedSet(set, ctx.version, false));
  return out;
}

interface ApplyResult {
  /** The merged object, or undefined when it equals the live one. */
  object: JsonValue | undefined;
  managers: ManagerSets;
}

/** An apply (Updater.Apply): merge, own the configuration's fields, prune, settle ownership. */
export function applyOwnership(ctx: UpdaterContext, liveObj: JsonValue, config: JsonValue, managers: ManagerSets, workflow: string, force: boolean): ApplyResult {
  const ms = reconcileManagers(ctx, managers, liveObj);
  let merged: JsonValue = mergeValues(ctx.type, liveObj, config) ?? {};
  const lastSet = ms.get(workflow);
  let set = toFieldSet(ctx.type, config);
  if (ctx.ignored) set = set.recursiveDifference(ctx.ignored);
  ms.set(workflow, newVersionedSet(set, ctx.version, true));
  merged = prune(ctx, merged, ms, workflow, lastSet);
  const same = valuesEqual(liveObj, merged);
  const { managers: out } = takeOwnership(ctx, liveObj, merged, ms, workflow, force, same);
  // Nulls ask for a field to be unset: the stored object does not carry them.
  const clean = dropNulls(ctx.type, merged);
  const unchanged = clean === merged ? same : valuesEqual(liveObj, clean);
  return { object: unchanged ? undefined : clean, managers: out };
}

/**
 * Removes the fields, list items and map entries `workflow` applied last time, no longer applies,
 * and nobody else owns (Updater.prune with addBackOwnedItems and addBackDanglingItems). The last
 * applied set is pruned in its own version (the merged object converted there and the result back),
 * and each version's managers add back what they own in theirs.
 * `full` skips the shortcut taken when nothing was dropped (for tests).
 */
export function prune(ctx: UpdaterContext, merged: JsonValue, managers: ManagerSets, workflow: string, lastSet: VersionedSet | undefined, full = false): JsonValue {
  if (!lastSet || lastSet.set.isEmpty() || !ctx.isKnownVersion(lastSet.apiVersion)) return merged;
  const lastVersion = lastSet.apiVersion;
  const current = managers.get(workflow)?.set;
  // Nothing dropped since the last apply (at this version): every path pruning could remove is owned again.
  if (!full && lastVersion === ctx.version && current && lastSet.set.difference(current).isEmpty()) return merged;
  const convertedMerged = convertBetween(ctx, merged, ctx.version, lastVersion);
  if (convertedMerged === undefined) return merged;
  const t = typeAt(ctx, lastVersion);
  const named = (s: FieldSet, at: TypeNode) => ensureNamedFieldsAreMembers(s, at);
  const last = named(lastSet.set, t);
  let pruned = removeItems(t, convertedMerged, last);
  // Add back what others (or this configuration) own, version by version, the last applied one first.
  const managedAt = new Map<string, FieldSet>([[lastVersion, new FieldSet()]]);
  for (const vs of managers.values()) if (ctx.isKnownVersion(vs.apiVersion)) managedAt.set(vs.apiVersion, (managedAt.get(vs.apiVersion) ?? new FieldSet()).union(vs.set));
  let mergedAt = convertedMerged;
  let at = lastVersion;
  for (const [version, managed] of managedAt) {
    const m = convertBetween(ctx, mergedAt, at, version);
    const p = convertBetween(ctx, pruned, at, version);
    if (m === undefined || p === undefined) continue;
    const vt = typeAt(ctx, version);
    const mergedSet = named(toFieldSet(vt, m), vt);
    pruned = removeItems(vt, m, mergedSet.difference(named(toFieldSet(vt, p), vt).union(named(managed, vt))));
    mergedAt = m;
    at = version;
  }
  // Add back what this manager did not own last time.
  const prunedLast = convertBetween(ctx, pruned, at, lastVersion);
  if (prunedLast === undefined) return merged;
  const mergedSet = named(toFieldSet(t, convertedMerged), t);
  const result = removeItems(t, convertedMerged, mergedSet.difference(named(toFieldSet(t, prunedLast), t)).intersection(last));
  return convertBetween(ctx, result, lastVersion, ctx.version) ?? merged;
}
