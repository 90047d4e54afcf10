// Field ownership on the write path: which manager wrote which fields (metadata.managedFields),
// computed by the structured-merge module from the kind's schema. Every create, update and patch
// records an `Update` entry for its manager; an apply records an `Apply` entry (see the apply
// handler). The strategy's reset fields are never owned through an endpoint: `status` through the
// main resource of a kind with /status, everything but status through /status.

import type { KObject } from '../machinery/meta.ts';
import { FieldSet, makePath, updateManagedFields, applyConfig, type OtherVersion } from '../ssa/index.ts';
import { nowTimestamp } from '../machinery/meta.ts';
import { apiVersionOf, type KindDefinition } from './definition.ts';

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
  }

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

  /** A non-apply write: `updated` gets its managedFields (never fails on ownership). */
  update(live: KObject | undefined, updated: KObject, manager: string, subresource?: string): KObject {
    return updateManagedFields({ schema: this.def.schema, live, updated, manager, apiVersion: this.apiVersion, subresource, now: nowTimestamp(), resetFields: this.resetFor(subresource), structs: this.structs, otherVersions: this.otherVersions });
  }

  /** An apply: the merged object with managedFields; throws ApplyConflictError on conflicts. */
  apply(live: KObject | undefined, config: KObject, manager: string, force: boolean, subresource?: string): KObject {
    return applyConfig({ schema: this.def.schema, live, config, manager, apiVersion: this.apiVersion, subresource, force, now: nowTimestamp(), resetFields: this.resetFor(subresource), structs: this.structs, otherVersions: this.otherVersions });
  }
}
