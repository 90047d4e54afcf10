// JSON values as structured merge sees them: the total order, the equality, the canonical JSON
// text and the human-readable form used in field paths. Numbers are one JS type here; the order
// and equality compare them numerically, which is what the reference does between its integer
// and float kinds, so nothing observable depends on the split.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonMap;
export interface JsonMap {
  [key: string]: JsonValue;
}

export const isJsonMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The keys of `m` that hold a value, in its order. A map with many keys is stored by V8 as a
 * dictionary, and every enumeration of one (`for…in`, even one that stops at its first key, or
 * `Object.keys`) sorts all its keys, so a walk enumerates each map once, through this, and tests
 * emptiness by the length of the result.
 */
export function definedKeys(m: JsonMap): string[] {
  const keys = Object.keys(m);
  let n = 0;
  for (const k of keys) if (m[k] !== undefined) keys[n++] = k;
  keys.length = n;
  return keys;
}

/** Rank of a value's kind in the total order: numbers < strings < booleans < lists < maps < null. */
function kindRank(v: JsonValue): number {
  switch (typeof v) {
    case 'number':
      return 0;
    case 'string':
      return 1;
    case 'boolean':
      return 2;
    default:
      if (v === null) return 5;
      return Array.isArray(v) ? 3 : 4;
  }
}

/**
 * Whether `s` has no surrogate: JavaScript's own comparison of two such strings (by UTF-16 code
 * unit) is the reference's (by code point, as Go compares UTF-8 bytes).
 */
export const comparesNatively = (s: string): boolean => !SURROGATE.test(s);

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Strings ordered by their UTF-8 bytes (the order of Go's strings.Compare), which is code-point
 * order; JS `<` compares UTF-16 units and differs only when a surrogate pair meets U+E000..U+FFFF.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
    const cx = a.codePointAt(i) ?? x;
    const cy = b.codePointAt(i) ?? y;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const sortedKeys = (m: JsonMap): string[] => Object.keys(m).filter((k) => m[k] !== undefined).sort(compareStrings);

/** The reference's total order of values (value.Compare). */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a === false ? -1 : 1;
    case 3: {
      const la = a as JsonValue[];
      const lb = b as JsonValue[];
      const n = Math.min(la.length, lb.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(la[i]!, lb[i]!);
        if (c !== 0) return c;
      }
      return la.length === lb.length ? 0 : la.length < lb.length ? -1 : 1;
    }
    case 4: {
      const ma = a as JsonMap;
      const mb = b as JsonMap;
      const ka = sortedKeys(ma);
      const kb = sortedKeys(mb);
      const n = Math.min(ka.length, kb.length);
      for (let i = 0; i < n; i++) {
        const c = compareStrings(ka[i]!, kb[i]!);
        if (c !== 0) return c;
        const d = compareValues(ma[ka[i]!]!, mb[kb[i]!]!);
        if (d !== 0) return d;
      }
      return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

/** Deep equality as the reference compares values: maps by keys regardless of order, lists in order. */
export function valuesEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let na = 0;
  for (const k in a) {
    const va = a[k];
    if (va === undefined) continue;
    na++;
    if (!Object.prototype.hasOwnProperty.call(b, k) || !valuesEqual(va, b[k])) return false;
  }
  let nb = 0;
  for (const k in b) if (b[k] !== undefined) nb++;
  return na === nb;
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const htmlEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A string as Go's encoding/json writes it (HTML-safe: `<`, `>`, `&`, U+2028/9 escaped). */
export function goJsonString(s: string): string {
  // Most names and keys are plain ASCII needing no escape at all.
  if (isPlainJsonText(s, 0, s.length)) return `"${s}"`;
  return JSON.stringify(s).replace(HTML_UNSAFE, htmlEscape);
}

/**
 * Whether `s` from `start` to `end` is printable ASCII that Go's JSON writes as it is inside a
 * string literal (no quote, backslash or HTML-unsafe character).
 */
export function isPlainJsonText(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) return false;
  }
  return true;
}

/** A value as Go's encoding/json writes it: map keys sorted, strings HTML-safe. */
export function goJson(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return goJsonString(v);
    case 'number':
    case 'boolean':
      return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  return `{${sortedKeys(v)
    .map((k) => `${goJsonString(k)}:${goJson(v[k]!)}`)
    .join(',')}}`;
}

/** Go's strconv.Quote (the `%q` verb) for the strings that appear in names and keys. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c < 0xa0) || c === 0x2028 || c === 0x2029 || (c >= 0xd800 && c < 0xe000) || c === 0xfeff)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * A number as Go's `%v` prints a float64 (shortest digits, exponent form from 1e+06 or below
 * 1e-04). Numbers in stored field sets are decoded as floats by the reference, so this is how
 * numeric keys appear in conflict paths.
 */
export function goFloatString(n: number): string {
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : Number.isNaN(n) ? 'NaN' : '-Inf';
  const [mant, expStr] = n.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

/** The reference's human-readable form of a value (value.ToString), used in path strings. */
export function valueToGoString(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
      return goFloatString(v);
    case 'string':
      return goQuote(v);
    case 'boolean':
      return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(valueToGoString).join(',')}]`;
  return sortedKeys(v)
    .map((k) => `${k}=${valueToGoString(v[k]!)}`)
    .join('');
}

/** A deep copy of a JSON value (objects parsed from JSON only: no cycles, no undefined). */
export function cloneJson<T extends JsonValue>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => cloneJson(x)) as T;
  const out: JsonMap = {};
  for (const k in v) {
    const x = v[k];
    if (x !== undefined) out[k] = cloneJson(x);
  }
  return out as T;
}
