// Values a built-in kind's Go types rewrite while decoding: metav1.Time is written back in UTC at
// whole seconds, metav1.MicroTime in UTC with six fraction digits, resource.Quantity in its
// canonical form. Done once, where a request object is decoded (create, update, every patch type,
// apply, in every encoding), so what is stored and returned is what Kubernetes would store and return.

import { GO_TYPE, type Schema } from './schema.ts';
import { canonicalQuantity } from './quantity.ts';

/** A quantity Kubernetes cannot decode: the request is a 400, as its JSON decoding fails. */
export class QuantityDecodeError extends Error {}

const RFC3339 = /^(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)$/;

/** The timestamp as Time (`fraction: false`) or MicroTime writes it; undefined when it is no RFC 3339 time. */
export function normalizeTimestamp(text: string, fraction: boolean): string | undefined {
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

const holdsGoTypes = new WeakMap<Schema, boolean>();

/** Whether anything under the schema is rewritten (schemas are ours, finite and acyclic). */
function hasGoTypes(s: Schema): boolean {
  let known = holdsGoTypes.get(s);
  if (known === undefined) {
    known =
      s[GO_TYPE] !== undefined ||
      Object.values(s.properties ?? {}).some(hasGoTypes) ||
      (s.items ? hasGoTypes(s.items) : false) ||
      (s.additionalProperties ? hasGoTypes(s.additionalProperties) : false);
    holdsGoTypes.set(s, known);
  }
  return known;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Rewrite, in place, every value of a Go-typed field to Kubernetes' form. Values of the wrong
 * type or invalid timestamps are left for validation to report; an unparsable quantity throws
 * QuantityDecodeError with Kubernetes' message.
 */
export function normalizeGoTypes(value: unknown, schema: Schema): void {
  const stack: { holder: Record<string, unknown> | unknown[]; key: string | number; schema: Schema }[] = [];
  const visit = (v: unknown, s: Schema) => {
    if (Array.isArray(v)) {
      if (s.items && hasGoTypes(s.items)) for (let i = 0; i < v.length; i++) stack.push({ holder: v, key: i, schema: s.items });
    } else if (isObject(v)) {
      for (const [k, p] of Object.entries(s.properties ?? {})) if (Object.hasOwn(v, k) && hasGoTypes(p)) stack.push({ holder: v, key: k, schema: p });
      const values = s.additionalProperties;
      if (values && hasGoTypes(values)) for (const k of Object.keys(v)) if (!s.properties?.[k]) stack.push({ holder: v, key: k, schema: values });
    }
  };
  if (hasGoTypes(schema)) visit(value, schema);
  while (stack.length) {
    const { holder, key, schema: s } = stack.pop()!;
    const v = (holder as Record<string | number, unknown>)[key];
    const type = s[GO_TYPE];
    if (type === 'Quantity') {
      if (typeof v !== 'string' && typeof v !== 'number') continue;
      const q = canonicalQuantity(v);
      if ('error' in q) throw new QuantityDecodeError(q.error);
      (holder as Record<string | number, unknown>)[key] = q.text;
    } else if (type === 'Time' || type === 'MicroTime') {
      if (typeof v !== 'string') continue;
      const t = normalizeTimestamp(v, type === 'MicroTime');
      if (t !== undefined) (holder as Record<string | number, unknown>)[key] = t;
    } else visit(v, s);
  }
}
