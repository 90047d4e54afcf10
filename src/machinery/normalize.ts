// Values a built-in kind's Go types rewrite while decoding: metav1.Time is written back in UTC at
// whole seconds, metav1.MicroTime in UTC with six fraction digits, resource.Quantity in its
// canonical form. Done once, where a request object is decoded (create, update, every patch type,
// apply, in every encoding), so what is stored and returned is what Kubernetes would store and return;
// a MicroTime with fewer or more fraction digits is accepted and rewritten (docs/rulings.md#r19).

import { GO_TYPE, type GoType, type Schema } from './schema.ts';
import { canonicalQuantity } from './quantity.ts';

/** A quantity Kubernetes cannot decode: the request is a 400, as its JSON decoding fails. */
export class QuantityDecodeError extends Error {}

const RFC3339 = /^(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)$/;

/** The timestamp as Time (`fraction: false`) or MicroTime writes it; undefined when it is no RFC 3339 time. */
function normalizeTimestamp(text: string, fraction: boolean): string | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, date, clock, frac = '', zone] = m as unknown as [string, string, string, string | undefined, string];
  const local = `${date}T${clock}`;
  const utc = (ms: number) => (Number.isNaN(ms) ? undefined : new Date(ms).toISOString());
  // A date that does not exist (February 30) is left for validation to report.
  if (utc(Date.parse(`${local}Z`))?.slice(0, 19) !== local) return undefined;
  const inUtc = zone === 'Z' || zone === 'z' ? `${local}Z` : utc(Date.parse(`${local}${zone}`));
  // Beyond four-digit years ISO strings grow a sign: such times stay as written.
  if (inUtc === undefined || !/^\d{4}-/.test(inUtc)) return undefined;
  const base = inUtc.slice(0, 19);
  return fraction ? `${base}.${frac.slice(0, 6).padEnd(6, '0')}Z` : `${base}Z`;
}

/** What of a schema holds Go-typed values: its own type, and the properties, items or map values to visit. */
interface Plan {
  type?: GoType;
  properties: [string, Plan][];
  items?: Plan;
  values?: Plan;
  /** Keys that are properties (not map values). */
  named?: Set<string>;
}

const plans = new WeakMap<Schema, Plan | null>();

/** The plan of a schema, null when nothing under it is rewritten (schemas are ours, finite and acyclic). */
function planOf(s: Schema): Plan | null {
  let plan = plans.get(s);
  if (plan !== undefined) return plan;
  const properties: [string, Plan][] = [];
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const child = planOf(p);
    if (child) properties.push([k, child]);
  }
  const items = s.items ? planOf(s.items) : null;
  const values = s.additionalProperties ? planOf(s.additionalProperties) : null;
  const type = s[GO_TYPE];
  plan =
    type || properties.length || items || values
      ? { type, properties, ...(items ? { items } : {}), ...(values ? { values, named: new Set(Object.keys(s.properties ?? {})) } : {}) }
      : null;
  plans.set(s, plan);
  return plan;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value in Kubernetes' form (the same value when it already is, or cannot be read). */
function rewrite(v: unknown, type: GoType): unknown {
  if (type === 'Quantity') {
    if (typeof v !== 'string' && typeof v !== 'number') return v;
    const q = canonicalQuantity(v);
    if ('error' in q) throw new QuantityDecodeError(q.error);
    return q.text;
  }
  if (typeof v !== 'string') return v;
  const micro = type === 'MicroTime';
  // Clients mostly send the normal form already: no date arithmetic for it.
  if ((micro ? MICRO_FORM : TIME_FORM).test(v)) return v;
  return normalizeTimestamp(v, micro) ?? v;
}

const TIME_FORM = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const MICRO_FORM = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

function walk(v: unknown, plan: Plan): void {
  if (Array.isArray(v)) {
    const items = plan.items;
    if (!items) return;
    for (let i = 0; i < v.length; i++) {
      if (items.type) v[i] = rewrite(v[i], items.type);
      else walk(v[i], items);
    }
    return;
  }
  if (!isObject(v)) return;
  for (const [k, p] of plan.properties) {
    if (!Object.hasOwn(v, k)) continue;
    if (p.type) v[k] = rewrite(v[k], p.type);
    else walk(v[k], p);
  }
  const values = plan.values;
  if (!values) return;
  for (const k of Object.keys(v)) {
    if (plan.named!.has(k)) continue;
    if (values.type) v[k] = rewrite(v[k], values.type);
    else walk(v[k], values);
  }
}

/**
 * Rewrite, in place, every value of a Go-typed field to Kubernetes' form. Values of the wrong
 * type or invalid timestamps are left for validation to report; an unparsable quantity throws
 * QuantityDecodeError with Kubernetes' message.
 */
export function normalizeGoTypes(value: unknown, schema: Schema): void {
  const plan = planOf(schema);
  if (plan) walk(value, plan);
}
