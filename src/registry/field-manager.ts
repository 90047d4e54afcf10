// Field ownership on the write path: which manager wrote which fields (metadata.managedFields),
// computed by the structured-merge module from the kind's schema. Every create, update and patch
// records an `Update` entry for its manager; an apply records an `Apply` entry (see the apply
// handler). The strategy's reset fields are never owned through an endpoint: `status` through the
// main resource of a kind with /status, everything but status through /status.
//
// Managers recorded at another version of a kind whose versions a webhook converts are compared
// on the object converted to their version, as kube-apiserver's field manager converts through
// the CRD's converter. The ownership computation is synchronous and the webhook is not: such a
// write first runs it recording the conversions it asks for (answered with the object as it is,
// the outcome thrown away), converts them (one review per version asked for), and runs it again
// with the answers, until a run asks for none it lacks (a prune at the applier's last version
// asks in steps). A failed conversion fails an apply with the webhook's error and leaves an
// update's managedFields as they were stored (kube-apiserver's UpdateNoErrors).

import type { KObject } from '../machinery/meta.ts';
import type { Schema } from '../machinery/schema.ts';
import { errors } from '../machinery/status.ts';
import { FieldSet, makePath, updateManagedFields, applyConfig, type OtherVersion } from '../ssa/index.ts';
import { nowTimestamp } from '../machinery/meta.ts';
import { apiVersionOf, type KindDefinition, type VersionConversion } from './definition.ts';

/** How many times one write's ownership is computed while it still asks for conversions. */
const MAX_CONVERSION_ROUNDS = 8;

/** One write's conversions: those answered (by target and content), those asked for, a failure. */
interface ConversionRound {
  known: Map<string, KObject>;
  missed: Map<string, { obj: KObject; target: string }>;
  failed?: unknown;
}

/** A manager name from a User-Agent, as kube-apiserver derives it: up to the first `/`, printable, at most 128 characters. */
export function managerFromUserAgent(ua: string | undefined): string {
  const prefix = (ua ?? '').split('/')[0] ?? '';
  let out = '';
  for (const ch of prefix) {
    if (!/\P{C}/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}

export class FieldManager {
  private readonly def: KindDefinition;
  private readonly apiVersion: string;
  private readonly mainReset: FieldSet | undefined;
  private readonly statusReset: FieldSet;

  /** Always-present nested structs (KindDefinition.valueStructs). */
  private readonly structs: FieldSet | undefined;

  constructor(def: KindDefinition) {
    this.def = def;
    this.apiVersion = apiVersionOf(def);
    this.structs = def.valueStructs?.length ? FieldSet.of(...def.valueStructs.map((p) => makePath(...p.split('.')))) : undefined;
    const hasStatus = def.subresources?.some((s) => s.name === 'status') ?? false;
    this.mainReset = hasStatus ? FieldSet.of(makePath('status')) : undefined;
    const others = Object.keys(def.schema.properties ?? {}).filter((k) => !['apiVersion', 'kind', 'metadata', 'status'].includes(k));
    this.statusReset = FieldSet.of(...others.map((k) => makePath(k)));
    const recorded = def.recordedVersions;
    if (recorded) {
      const known = new Set(recorded.map((r) => r.apiVersion));
      this.isKnownVersion = (apiVersion) => known.has(apiVersion);
      // Versions the webhook alone reaches (not served): served ones are added as their stores are built.
      for (const r of recorded) if (r.schema && r.apiVersion !== this.apiVersion) this.addConvertedVersion(r.apiVersion, r.schema);
    }
  }

  /** Whether managers recorded at `apiVersion` are kept (KindDefinition.recordedVersions). */
  private readonly isKnownVersion: ((apiVersion: string) => boolean) | undefined;

  private resetFor(subresource: string | undefined): FieldSet | undefined {
    if (!subresource) return this.mainReset;
    return subresource === 'status' ? this.statusReset : undefined;
  }

  /**
   * Other versions (or groups) serving the same stored objects, whose managers' fields are
   * compared in their own version (see StorageConversion).
   */
  private readonly otherVersions = new Map<string, OtherVersion>();

  /** Objects of this kind are also served as `apiVersion`, with `schema`, converted by `convert`. */
  addVersion(apiVersion: string, version: OtherVersion): void {
    this.otherVersions.set(apiVersion, version);
  }

  /** Versions whose objects the kind's (asynchronous) conversion gives. */
  private readonly convertedVersions = new Set<string>();
  /** The conversions of the write whose ownership is being computed now (synchronously). */
  private round: ConversionRound | undefined;

  /**
   * Objects of this kind are also served as `apiVersion`, with `schema`, converted by the kind's
   * batch conversion (a CRD's webhook): writes meeting managers recorded there convert first.
   */
  addConvertedVersion(apiVersion: string, schema: Schema): void {
    if (!this.def.conversion?.convert) throw new Error(`${this.apiVersion} ${this.def.kind} has no batch conversion`);
    this.convertedVersions.add(apiVersion);
    // As kube-apiserver's field manager, every write converts the live object for each such
    // manager (to reconcile its set), so an unreachable webhook fails an apply even when nothing changes.
    this.otherVersions.set(apiVersion, { schema, convert: (o) => this.lookup(o, apiVersion), back: (o) => this.lookup(o, this.apiVersion), reconcileConverts: true });
  }

  /**
   * A non-apply write: `updated` gets its managedFields (never fails on ownership). Asynchronous
   * only when a manager it compares was recorded at a version a webhook converts.
   */
  update(live: KObject | undefined, updated: KObject, manager: string, subresource?: string): KObject | Promise<KObject> {
    const args = { schema: this.def.schema, live, updated, manager, apiVersion: this.apiVersion, subresource, now: nowTimestamp(), resetFields: this.resetFor(subresource), structs: this.structs, otherVersions: this.otherVersions, ...(this.isKnownVersion && { isKnownVersion: this.isKnownVersion }) };
    // The managers compared are the request's (when it gives valid ones, not through a subresource) or the stored ones.
    const requested = updated.metadata.managedFields;
    if (!this.meetsConvertedVersion(live?.metadata.managedFields) && (subresource || !this.meetsConvertedVersion(requested))) return updateManagedFields(args);
    const had = 'managedFields' in updated.metadata;
    return this.converting(() => {
      // Each run starts from the request's own managedFields.
      if (had) updated.metadata.managedFields = requested;
      else delete updated.metadata.managedFields;
      return updateManagedFields(args);
    });
  }

  /**
   * An apply: the merged object with managedFields; throws ApplyConflictError on conflicts.
   * Asynchronous only when a manager was recorded at a version a webhook converts.
   */
  apply(live: KObject | undefined, config: KObject, manager: string, force: boolean, subresource?: string): KObject | Promise<KObject> {
    const args = { schema: this.def.schema, live, config, manager, apiVersion: this.apiVersion, subresource, force, now: nowTimestamp(), resetFields: this.resetFor(subresource), structs: this.structs, otherVersions: this.otherVersions, ...(this.isKnownVersion && { isKnownVersion: this.isKnownVersion }) };
    if (!this.meetsConvertedVersion(live?.metadata.managedFields)) return applyConfig(args);
    return this.converting(() => applyConfig(args));
  }

  /** Whether a managedFields list has an entry at a version a webhook converts. */
  private meetsConvertedVersion(entries: unknown): boolean {
    if (this.convertedVersions.size === 0 || !Array.isArray(entries)) return false;
    return entries.some((e: unknown) => typeof e === 'object' && e !== null && this.convertedVersions.has(String((e as { apiVersion?: unknown }).apiVersion)));
  }

  /**
   * `obj` at `target`, as the current run's conversions have it. One not converted yet is asked
   * for and answered unconverted (the run's outcome is thrown away); after a failed conversion
   * the failure is thrown. An object without an apiVersion (the empty object a create starts from)
   * converts to itself, as kube-apiserver's converter passes an empty object through.
   */
  private lookup(obj: KObject, target: string): KObject {
    if (typeof obj.apiVersion !== 'string' || obj.apiVersion === target) return obj;
    const round = this.round;
    if (!round) throw new Error(`a conversion to ${target} outside a write`);
    const key = `${target}\n${JSON.stringify(obj)}`;
    const known = round.known.get(key);
    if (known) return structuredClone(known);
    if (round.failed !== undefined) throw round.failed;
    round.missed.set(key, { obj, target });
    return obj;
  }

  /** Runs `compute` until it asks for no conversion it lacks, converting between runs. */
  private async converting<T>(compute: () => T): Promise<T> {
    const round: ConversionRound = { known: new Map(), missed: new Map() };
    for (let runs = 0; ; runs++) {
      let result: { value: T } | { error: unknown };
      this.round = round;
      try {
        result = { value: compute() };
      } catch (error) {
        result = { error };
      } finally {
        this.round = undefined;
      }
      if (round.missed.size === 0) {
        if ('error' in result) throw result.error;
        return result.value;
      }
      if (runs >= MAX_CONVERSION_ROUNDS) throw errors.internal(`field ownership of ${this.apiVersion} ${this.def.kind} still needs conversions after ${runs + 1} runs`);
      await this.convertMissed(round, this.def.conversion!.convert!);
    }
  }

  /** Converts what the last run asked for: one batch per target version. */
  private async convertMissed(round: ConversionRound, convert: NonNullable<VersionConversion['convert']>): Promise<void> {
    const byTarget = new Map<string, [string, KObject][]>();
    for (const [key, { obj, target }] of round.missed) {
      let batch = byTarget.get(target);
      if (!batch) byTarget.set(target, (batch = []));
      batch.push([key, obj]);
    }
    round.missed.clear();
    try {
      await Promise.all(
        [...byTarget].map(async ([target, batch]) => {
          const converted = await convert(
            batch.map(([, o]) => o),
            target,
          );
          batch.forEach(([key], i) => round.known.set(key, converted[i]!));
        }),
      );
    } catch (e) {
      round.failed = e;
    }
  }
}
