// The []byte fields of built-in kinds in CBOR: JSON carries them as base64 text, Kubernetes' CBOR
// as byte strings (tagged for base64 when converted to JSON). The protobuf plans say which fields
// hold bytes, so the object is rewritten before encoding only where a kind has such fields.

import { CborBytes } from './cbor.ts';
import { kindPlan, type MessagePlan } from './protobuf/schema.ts';

type Json = Record<string, unknown>;

const holdsBytes = new Map<MessagePlan, boolean>();

/** Whether a message, or one nested in it, has a bytes field. */
function hasBytes(plan: MessagePlan, seen = new Set<MessagePlan>()): boolean {
  const known = holdsBytes.get(plan);
  if (known !== undefined) return known;
  if (seen.has(plan)) return false;
  seen.add(plan);
  const result = plan.declared.some((f) => f.kind === 'bytes' || (f.message !== undefined && hasBytes(f.message, seen)));
  holdsBytes.set(plan, result);
  return result;
}

const bytesOf = (v: unknown): unknown => (typeof v === 'string' ? new CborBytes(Buffer.from(v, 'base64')) : v);

/** A copy of `o` with the bytes fields of `plan` (at any depth) as CBOR byte strings. */
function rewrite(o: Json, plan: MessagePlan): Json {
  const out: Json = { ...o };
  for (const f of plan.declared) {
    const v = o[f.name];
    if (v === undefined || v === null) continue;
    if (f.kind === 'bytes') {
      if (f.map && typeof v === 'object' && !Array.isArray(v)) out[f.name] = Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, bytesOf(x)]));
      else if (!f.map) out[f.name] = f.repeated && Array.isArray(v) ? v.map(bytesOf) : bytesOf(v);
    } else if (f.message !== undefined && hasBytes(f.message)) {
      const m = f.message;
      if (f.repeated && Array.isArray(v)) out[f.name] = v.map((e) => (e !== null && typeof e === 'object' ? rewrite(e as Json, m) : e));
      else if (!f.repeated && typeof v === 'object' && !Array.isArray(v)) out[f.name] = rewrite(v as Json, m);
    }
  }
  return out;
}

/**
 * An object or list as CBOR should carry it: base64 values of []byte fields become byte strings.
 * Values of kinds without such fields are returned as they are.
 */
export function withCborBytes(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const o = value as Json;
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') return value;
  const plan = kindPlan(o.apiVersion, o.kind);
  if (plan === undefined) return value;
  if (o.kind.endsWith('List') && Array.isArray(o.items)) {
    const item = kindPlan(o.apiVersion, o.kind.slice(0, -4));
    if (item === undefined || !hasBytes(item)) return value;
    return { ...o, items: o.items.map((i: unknown) => (i !== null && typeof i === 'object' && !Array.isArray(i) ? rewrite(i as Json, item) : i)) };
  }
  return hasBytes(plan) ? rewrite(o, plan) : value;
}
