// resource.Quantity as Kubernetes parses and writes it: the same grammar, the same rounding (up to
// nano units, binary amounts capped at 2^63-1), the same remembered suffix family (BinarySI,
// DecimalSI, DecimalExponent) and the same canonical form (no fraction, the largest suffix that
// loses nothing). A quantity already written canonically comes back byte for byte as it was sent,
// because Kubernetes keeps the text it parsed in that case.

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** An exact value, `unscaled × 10^exponent`, with the format it is written back in. */
export interface Quantity {
  unscaled: bigint;
  exponent: number;
  format: QuantityFormat;
  /** The text it was parsed from, when Kubernetes would write that text back unchanged. */
  text?: string;
}

const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const MAX_INT64 = (1n << 63n) - 1n;
const NANO = -9;
const DECIMAL_SUFFIXES: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]));
const SUFFIX_CHARS = 'eEinumkKMGTP';

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

interface Parts {
  positive: boolean;
  /** The signed number without its suffix, as written. */
  value: string;
  /** Integer digits without leading zeros ('0' when none). */
  num: string;
  denom: string;
  suffix: string;
}

/** The grammar's pieces (Kubernetes' parseQuantityString); undefined when the text does not fit it. */
function split(str: string): Parts | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    i = ++pos;
    while (isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** A suffix's base, exponent and format; undefined for an unknown one. */
function interpret(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]!, format: 'DecimalSI' };
  if (suffix in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    const parsed = BigInt(suffix.slice(1));
    if (parsed > MAX_INT64 || parsed < -MAX_INT64 - 1n) return undefined;
    // Go keeps the exponent in an int32.
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

/** ParseQuantity: the quantity, or Kubernetes' error message. */
export function parseQuantity(str: string): Quantity | string {
  if (str.length === 0) return QUANTITY_FORMAT_ERROR;
  if (str === '0') return { unscaled: 0n, exponent: 0, format: 'DecimalSI', text: str };
  const parts = split(str);
  if (!parts) return QUANTITY_FORMAT_ERROR;
  const { positive, value, num, denom } = parts;
  const suffix = interpret(parts.suffix);
  if (!suffix) return QUANTITY_SUFFIX_ERROR;
  const { base, exponent } = suffix;
  let { format } = suffix;

  // Kubernetes' int64 fast path decides whether the text it was given is written back as it was.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format !== 'BinarySI') {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else if (exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.floor((exponent * 3) / 10) - 1;
  } else precision = -1;
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const v = BigInt(shifted);
      let result = v * mantissa;
      if (result <= MAX_INT64) {
        if (!positive) result = -result;
        const keep = format === 'BinarySI' ? exponent % 10 === 0 && (v & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return { unscaled: result, exponent: scale, format, ...(keep ? { text: str } : {}) };
      }
    }
  }

  const dec = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
  if (!dec || dec[2]! + (dec[3] ?? '') === '') return QUANTITY_NUMERIC_ERROR;
  let unscaled = BigInt(dec[2]! + (dec[3] ?? ''));
  let exp = -(dec[3] ?? '').length;
  if (base === 10) exp += exponent;
  else unscaled <<= BigInt(exponent);
  // Rounded up (away from zero) to nano units.
  if (unscaled !== 0n && exp < NANO) {
    const d = 10n ** BigInt(NANO - exp);
    unscaled = (unscaled + d - 1n) / d;
    exp = NANO;
  }
  if (format === 'BinarySI' && compare(unscaled, exp, MAX_INT64, 0) > 0) {
    unscaled = MAX_INT64;
    exp = 0;
  }
  if (format === 'BinarySI' && unscaled > 0n && compare(unscaled, exp, 1n, 0) < 0) format = 'DecimalSI';
  if (dec[1] === '-') unscaled = -unscaled;
  return { unscaled, exponent: exp, format };
}

/** Sign of a×10^ae − b×10^be. */
function compare(a: bigint, ae: number, b: bigint, be: number): number {
  const e = Math.min(ae, be);
  const x = a * 10n ** BigInt(ae - e);
  const y = b * 10n ** BigInt(be - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The value as an integer when it is one. */
function asInteger(q: Quantity): bigint | undefined {
  if (q.exponent >= 0) return q.unscaled * 10n ** BigInt(q.exponent);
  const d = 10n ** BigInt(-q.exponent);
  return q.unscaled % d === 0n ? q.unscaled / d : undefined;
}

/** Divides out `factor` while it divides evenly; the rest and how many times. */
function removeFactors(value: bigint, factor: bigint): [bigint, number] {
  let times = 0;
  while (value !== 0n && value % factor === 0n) {
    value /= factor;
    times++;
  }
  return [value, times];
}

/** Quantity.String: the remembered text, else the canonical form. */
export function quantityString(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.unscaled === 0n) return '0';
  let format = q.format;
  let whole: bigint | undefined;
  if (format === 'BinarySI') {
    whole = asInteger(q);
    if (compare(q.unscaled < 0n ? -q.unscaled : q.unscaled, q.exponent, 1024n, 0) < 0 || whole === undefined) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const [amount, times] = removeFactors(whole!, 1024n);
    return `${amount}${BINARY_BY_EXPONENT.get(times * 10) ?? ''}`;
  }
  let [amount, exponent] = removeFactors(q.unscaled, 10n);
  exponent += q.exponent;
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent--;
  }
  const suffix = format === 'DecimalSI' ? (DECIMAL_BY_EXPONENT.get(exponent) ?? '') : exponent === 0 ? '' : `e${exponent}`;
  return `${amount}${suffix}`;
}

const PLAIN_DECIMAL = /^[1-9]\d{0,17}[numkMGTPE]?$/;
const PLAIN_BINARY = /^([1-9]\d{0,13})([KMGTPE])i$/;
const BINARY_EXPONENT: Record<string, number> = { K: 10, M: 20, G: 30, T: 40, P: 50, E: 60 };

/**
 * The common already-canonical spellings (`4`, `3500m`, `16Gi`) that parseQuantity would keep as
 * written, recognised without its arithmetic: the same conditions, read off the text.
 */
function keptAsWritten(text: string): boolean {
  if (PLAIN_DECIMAL.test(text)) return !/000[numkMGTPE]?$/.test(text);
  const m = PLAIN_BINARY.exec(text);
  if (!m) return false;
  const digits = m[1]!;
  const exponent = BINARY_EXPONENT[m[2]!]!;
  return 15 - digits.length - Math.floor((exponent * 3) / 10) - 1 >= 0 && Number(digits) % 8 !== 0;
}

/**
 * A quantity as Kubernetes writes back what it decoded from JSON (a string, or the text of a
 * number, surrounding spaces ignored), or its error message.
 */
export function canonicalQuantity(input: string | number): { text: string } | { error: string } {
  if (typeof input === 'string' && keptAsWritten(input)) return { text: input };
  const q = parseQuantity(String(input).trim());
  return typeof q === 'string' ? { error: q } : { text: quantityString(q) };
}
