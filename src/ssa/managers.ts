// The managedFields list: decoding it into field sets keyed by manager identity, encoding it back
// in the reference's order, the cap on Update managers, and the apply conflict error. Manager
// identity and ordering follow k8s.io/apimachinery/pkg/util/managedfields/internal
// (managedfields.go, capmanagers.go, conflict.go) so clients see the same entries and messages.

import { decodeFieldsV1, encodeFieldsV1, FieldSet, pathString, type Path } from './fieldpath.ts';
import { compareStrings, goJsonString, goQuote, isJsonMap, type JsonMap } from './value.ts';

type Operation = 'Apply' | 'Update';

/** One `metadata.managedFields` entry, keys in the order the reference writes them. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** The fields one manager owns, at the version it wrote them. */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  /** Owned through apply (operation Apply) rather than update. */
  readonly applied: boolean;
  /** The decoded FieldsV1, reused when encoding a set nobody replaced. */
  readonly raw?: Record<string, unknown>;
}

/** Managers by identifier (see managerIdentifier), and the time of each manager's last change. */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export const newVersionedSet = (set: FieldSet, apiVersion: string, applied: boolean): VersionedSet => ({ set, apiVersion, applied });

export const emptyManaged = (): Managed => ({ fields: new Map(), times: new Map() });

export const cloneManaged = (m: Managed): Managed => ({ fields: new Map(m.fields), times: new Map(m.times) });

/** A managedFields list that cannot be decoded. */
export class ManagedFieldsError extends Error {
  override name = 'ManagedFieldsError';
}

interface IdentityParts {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}

/**
 * A manager's identity: the entry without time, fields and fieldsType, as JSON (Go field order,
 * empty fields omitted). Appliers are one identity whatever version they applied at; updaters are
 * one per version.
 */
export function managerIdentifier(e: IdentityParts): string {
  const parts: string[] = [];
  if (e.manager) parts.push(`"manager":${goJsonString(e.manager)}`);
  if (e.operation) parts.push(`"operation":${goJsonString(e.operation)}`);
  if (e.apiVersion && e.operation !== 'Apply') parts.push(`"apiVersion":${goJsonString(e.apiVersion)}`);
  if (e.subresource) parts.push(`"subresource":${goJsonString(e.subresource)}`);
  return `{${parts.join(',')}}`;
}

function parseIdentifier(id: string): IdentityParts {
  const v: unknown = JSON.parse(id);
  if (!isJsonMap(v)) return {};
  const s = (x: unknown) => (typeof x === 'string' ? x : undefined);
  return { manager: s(v.manager), operation: s(v.operation), apiVersion: s(v.apiVersion), subresource: s(v.subresource) };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `[{}]`: the request asks for managedFields to be cleared (an empty list does not). */
export function isResetManagedFields(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 1) return false;
  const e: unknown = list[0];
  if (!isJsonMap(e)) return e === null;
  // Unknown keys are dropped by decoding, so only the entry's own fields count.
  for (const k of ['manager', 'operation', 'apiVersion', 'fieldsType', 'subresource']) if (e[k] !== undefined && e[k] !== null && e[k] !== '') return false;
  return (e.time === undefined || e.time === null) && (e.fieldsV1 === undefined || e.fieldsV1 === null);
}

// Decoded sets are immutable, so one decoding serves every request that reads the same entry:
// by object identity (an object held in memory), else by its JSON text (a fresh copy of it).
const decodedByObject = new WeakMap<object, FieldSet>();
const decodedByText = new Map<string, FieldSet>();
const DECODED_TEXT_LIMIT = 4096;
const DECODED_TEXT_MAX_LENGTH = 64 * 1024;

/**
 * Whether FieldsV1 content's JSON text is at most about `limit` characters (counted from its keys,
 * a few characters of punctuation each: an estimate), looking at no more of it than that. The keys
 * of each object it listed are left in `listed`, for the decoding not to list them again (listing
 * a large object's keys is most of what reading it costs).
 */
function withinTextLength(v: JsonMap, limit: number, listed: Map<object, string[]>): boolean {
  let left = limit;
  const pending: JsonMap[] = [v];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    const keys = Object.keys(at);
    listed.set(at, keys);
    left -= 2;
    for (const k of keys) {
      left -= k.length + 4;
      if (left < 0) return false;
      const sub = at[k];
      if (isJsonMap(sub)) pending.push(sub);
    }
  }
  return true;
}

function decodeSet(fieldsV1: unknown): FieldSet {
  if (!isJsonMap(fieldsV1)) return decodeFieldsV1(fieldsV1);
  const hit = decodedByObject.get(fieldsV1);
  if (hit) return hit;
  // A large entry is decoded for the request that brings it, not kept: the cache holds at most
  // DECODED_TEXT_LIMIT texts, and texts of any size would let a few requests pin a lot of memory.
  // (Its size is estimated without writing its text: for a large entry that text would be thrown
  // away, and writing it costs as much as decoding.)
  const listed = new Map<object, string[]>();
  if (!withinTextLength(fieldsV1, DECODED_TEXT_MAX_LENGTH, listed)) {
    const decoded = decodeFieldsV1(fieldsV1, listed);
    decodedByObject.set(fieldsV1, decoded);
    return decoded;
  }
  const text = JSON.stringify(fieldsV1);
  let set = decodedByText.get(text);
  if (set) {
    // Refresh its place in the (insertion-ordered) map: least recently used go first.
    decodedByText.delete(text);
  } else set = decodeFieldsV1(fieldsV1);
  decodedByText.set(text, set);
  if (decodedByText.size > DECODED_TEXT_LIMIT) decodedByText.delete(decodedByText.keys().next().value!);
  decodedByObject.set(fieldsV1, set);
  return set;
}

/** Decodes `metadata.managedFields`; a missing list is empty. Throws ManagedFieldsError. */
export function decodeManagedFields(list: unknown): Managed {
  const out = emptyManaged();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new ManagedFieldsError('managedFields must be a list');
  list.forEach((raw: unknown, i) => {
    if (!isJsonMap(raw)) throw new ManagedFieldsError(`managed fields entry ${i} must be an object`);
    const operation = str(raw.operation);
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = str(raw.apiVersion);
    if (apiVersion.length < 1) throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = str(raw.fieldsType);
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${goQuote(fieldsType)} in managed fields entry ${i}`);
    const id = managerIdentifier({ manager: str(raw.manager), operation, apiVersion, subresource: str(raw.subresource) });
    let set: FieldSet;
    try {
      set = decodeSet(raw.fieldsV1 ?? {});
    } catch (e) {
      throw new ManagedFieldsError(`error decoding versioned set of managed fields entry ${i}: ${(e as Error).message}`);
    }
    const vs: VersionedSet = { set, apiVersion, applied: operation === 'Apply', ...(isJsonMap(raw.fieldsV1) ? { raw: raw.fieldsV1 } : {}) };
    out.fields.set(id, vs);
    out.times.set(id, typeof raw.time === 'string' && raw.time !== '' ? raw.time : undefined);
  });
  return out;
}

/** Unix seconds of a timestamp; absent or unreadable counts as 0, as a nil time does. */
function timeSeconds(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Encodes managers as `metadata.managedFields`, sorted as the reference sorts them. */
export function encodeManagedFields(m: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, vs] of m.fields) {
    const idp = parseIdentifier(id);
    const operation: Operation = vs.applied ? 'Apply' : idp.operation === 'Apply' ? 'Apply' : 'Update';
    const time = m.times.get(id);
    const e: ManagedFieldsEntry = {
      manager: idp.manager ?? '',
      operation,
      apiVersion: vs.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: vs.raw ?? encodeFieldsV1(vs.set),
      ...(idp.subresource ? { subresource: idp.subresource } : {}),
    };
    entries.push(e);
  }
  return sortManagedFieldsEntries(entries);
}

const cmpStr = compareStrings;

const EMPTY_SET = new FieldSet();

/** Apply entries first, then oldest first, then by manager, apiVersion, subresource. */
export function sortManagedFieldsEntries(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  return entries.sort(
    (p, q) =>
      cmpStr(p.operation, q.operation) ||
      timeSeconds(p.time) - timeSeconds(q.time) ||
      cmpStr(p.manager, q.manager) ||
      cmpStr(p.apiVersion, q.apiVersion) ||
      cmpStr(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** Update entries kept before the oldest are merged into `ancient-changes`. */
export const DEFAULT_MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Keeps at most `max` Update managers: the oldest are merged, per apiVersion, into an
 * `ancient-changes` entry that takes the time of the newest entry merged into it.
 */
export function capUpdateManagers(m: Managed, max = DEFAULT_MAX_UPDATE_MANAGERS): Managed {
  const updaters = [...m.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return m;
  const seconds = new Map(updaters.map((id) => [id, timeSeconds(m.times.get(id))]));
  updaters.sort((a, b) => seconds.get(a)! - seconds.get(b)! || cmpStr(a, b));
  const out = cloneManaged(m);
  const firstOfVersion = new Map<string, string>();
  // The sets merged into a bucket so far, united once when the bucket is read: uniting them one
  // by one would copy the growing bucket for every manager merged into it.
  const merged = new Map<string, FieldSet[]>();
  const entry = (id: string): VersionedSet | undefined => {
    const vs = out.fields.get(id);
    const parts = merged.get(id);
    if (!vs || !parts) return vs;
    merged.delete(id);
    const united = newVersionedSet(FieldSet.unionAll(parts), vs.apiVersion, vs.applied);
    out.fields.set(id, united);
    return united;
  };
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const vs = entry(id)!;
    const time = out.times.get(id);
    const version = vs.apiVersion;
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: version });
    const first = firstOfVersion.get(version);
    if (first === undefined) {
      firstOfVersion.set(version, id);
      continue;
    }
    if (!out.fields.has(bucket)) {
      out.fields.set(bucket, entry(first)!);
      out.fields.delete(first);
    }
    const parts = merged.get(bucket) ?? [entry(bucket)!.set];
    parts.push(vs.set);
    out.fields.set(bucket, newVersionedSet(EMPTY_SET, vs.apiVersion, vs.applied));
    merged.set(bucket, parts);
    out.fields.delete(id);
    merged.delete(id);
    length--;
    out.times.set(bucket, time);
  }
  for (const id of [...merged.keys()]) entry(id);
  return out;
}

// ---- conflicts ----

interface ApplyConflict {
  /** The other manager's name. */
  manager: string;
  operation: Operation;
  /** Version of the other manager's entry. */
  apiVersion: string;
  subresource?: string;
  /** The field as the reference prints it, e.g. `.spec.replicas`. */
  field: string;
  /** The manager as printed in messages: `"name"`, plus `with subresource "s"` and `using v1` for updaters. */
  printedManager: string;
}

/** A `FieldManagerConflict` status cause. */
interface ConflictCause {
  type: 'FieldManagerConflict';
  message: string;
  field: string;
}

/** How the reference names a manager in conflict messages. */
function printManager(id: string): string {
  let p: IdentityParts;
  try {
    p = parseIdentifier(id);
  } catch {
    return goQuote(id);
  }
  let s = goQuote(p.manager ?? '');
  if (p.subresource) s += ` with subresource ${goQuote(p.subresource)}`;
  if (p.operation === 'Update') s += ` using ${p.apiVersion ?? ''}`;
  return s;
}

/** Conflicting paths per manager identifier, with the manager's set version. */
export type ConflictSets = Map<string, { set: FieldSet; apiVersion: string }>;

/**
 * An apply refused because fields it sets to new values are owned by other managers. The message,
 * the causes and their order are the reference's (409 Conflict, reason Conflict).
 */
export class ApplyConflictError extends Error {
  override name = 'ApplyConflictError';
  readonly conflicts: ApplyConflict[];
  readonly causes: ConflictCause[];
  /** Identifier and path of each conflict (used to forgive conflicts known from client-side apply). */
  readonly raw: { id: string; path: Path; apiVersion: string }[];

  constructor(raw: { id: string; path: Path; apiVersion: string }[]) {
    // Grouped by manager identifier (sorted), paths in set order within a manager.
    const sorted = [...raw].sort((a, b) => cmpStr(a.id, b.id));
    super(conflictMessage(sorted));
    this.raw = sorted;
    this.conflicts = sorted.map(({ id, path, apiVersion }) => {
      const p = parseIdentifier(id);
      return {
        manager: p.manager ?? '',
        operation: p.operation === 'Apply' ? 'Apply' : 'Update',
        apiVersion,
        ...(p.subresource ? { subresource: p.subresource } : {}),
        field: pathString(path),
        printedManager: printManager(id),
      };
    });
    this.causes = this.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with ${c.printedManager}`, field: c.field }));
  }

  static fromSets(sets: ConflictSets): ApplyConflictError {
    const raw: { id: string; path: Path; apiVersion: string }[] = [];
    for (const [id, { set, apiVersion }] of [...sets].sort(([a], [b]) => cmpStr(a, b))) set.iterate((path) => raw.push({ id, path, apiVersion }));
    return new ApplyConflictError(raw);
  }
}

function conflictMessage(conflicts: { id: string; path: Path }[]): string {
  if (conflicts.length === 1) return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.id)}: ${pathString(conflicts[0]!.path)}`;
  const byManager = new Map<string, Path[]>();
  for (const c of conflicts) {
    const l = byManager.get(c.id);
    if (l) l.push(c.path);
    else byManager.set(c.id, [c.path]);
  }
  const lines: string[] = [];
  for (const id of [...byManager.keys()].sort(cmpStr)) {
    lines.push(`conflicts with ${printManager(id)}:`);
    for (const p of byManager.get(id)!) lines.push(`- ${pathString(p)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
