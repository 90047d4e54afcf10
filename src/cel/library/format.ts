// string.format(list) of the extended string library: %s, %d, %f, %e, %b, %o, %x, %X and %%,
// with an optional precision (`%.3f`), and cel-go's error wording.

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import { celError } from './register.ts';

const MAX_PRECISION = 1000;

function typeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  if (Array.isArray(v) || v instanceof Set) return 'list';
  if (v instanceof Optional) return 'optional_type';
  return 'map';
}

/** RFC 3339 with nanosecond-trimmed fraction, as Go prints a timestamp. */
export function timestampString(d: Date): string {
  const iso = d.toISOString();
  return iso.replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z');
}

function doubleString(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return String(v);
}

/** The %s rendering of a value (strings inside lists and maps are not quoted either). */
function asString(v: unknown): string {
  if (typeof v === 'object' && v !== null && v.constructor?.name === 'Type') return (v as { name: string }).name;
  switch (typeName(v)) {
    case 'null_type':
      return 'null';
    case 'string':
      return v as string;
    case 'double':
      return doubleString(v as number);
    case 'bytes':
      return Buffer.from(v as Uint8Array).toString('utf8');
    case 'google.protobuf.Timestamp':
      return timestampString(v as Date);
    case 'list': {
      const items = [...(v as Iterable<unknown>)];
      return `[${items.map((i) => asString(i)).join(', ')}]`;
    }
    case 'map': {
      const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as object);
      const rendered = entries.map(([k, val]) => [asString(k), asString(val)] as const);
      rendered.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return `{${rendered.map(([k, val]) => `${k}: ${val}`).join(', ')}}`;
    }
    default:
      return String(v);
  }
}

function integer(v: unknown, clause: string): bigint {
  if (typeof v === 'bigint') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  throw celError(`error during formatting: ${clause} clause can only be used on integers, was given ${typeName(v)}`);
}

function float(v: unknown, clause: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof UnsignedInt) return Number(v.valueOf());
  throw celError(`error during formatting: ${clause} clause can only be used on doubles, was given ${typeName(v)}`);
}

function special(v: number): string | undefined {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return undefined;
}

/** toFixed, with Go's rounding of an exact tie to the even digit (2.5 → "2"). */
function fixed(v: number, precision: number): string {
  const scaled = v * 10 ** precision;
  if (Number.isFinite(scaled) && Math.abs(scaled % 1) === 0.5) {
    const down = Math.trunc(scaled);
    const even = down % 2 === 0 ? down : down + Math.sign(scaled);
    return (even / 10 ** precision).toFixed(precision);
  }
  return v.toFixed(precision);
}

function exponent(v: number, precision: number): string {
  const s = v.toExponential(precision);
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

function hex(v: unknown, upper: boolean): string {
  let out: string;
  if (typeof v === 'string') out = Buffer.from(v, 'utf8').toString('hex');
  else if (v instanceof Uint8Array) out = Buffer.from(v).toString('hex');
  else if (typeof v === 'bigint' || v instanceof UnsignedInt) {
    const n = typeof v === 'bigint' ? v : v.valueOf();
    out = n < 0n ? `-${(-n).toString(16)}` : n.toString(16);
  } else throw celError(`error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(v)}`);
  return upper ? out.toUpperCase() : out;
}

export function formatString(format: string, args: unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    i++;
    if (i >= format.length) throw celError('error during formatting: unexpected end of string');
    if (format[i] === '%') {
      out += '%';
      continue;
    }
    let precision: number | undefined;
    if (format[i] === '.') {
      const m = /^\.(\d+)/.exec(format.slice(i));
      if (!m) throw celError('error during formatting: could not find end of precision specifier');
      precision = Number(m[1]);
      if (precision > MAX_PRECISION) throw celError(`error during formatting: precision ${precision} exceeds maximum allowed precision ${MAX_PRECISION}`);
      i += m[0].length;
      if (i >= format.length) throw celError('error during formatting: could not find end of precision specifier');
    }
    const clause = format[i]!;
    if (!'sdfeboxX'.includes(clause)) throw celError(`error during formatting: unrecognized formatting clause "${clause}"`);
    if (next >= args.length) throw celError(`index ${next} out of range`);
    const arg = args[next++];
    switch (clause) {
      case 's':
        out += asString(arg);
        break;
      case 'd':
        if (typeof arg === 'number') {
          const s = special(arg);
          if (s !== undefined) {
            out += s;
            break;
          }
        }
        out += integer(arg, 'decimal').toString();
        break;
      case 'f': {
        const v = float(arg, 'fixed-point');
        out += special(v) ?? fixed(v, precision ?? 6);
        break;
      }
      case 'e': {
        const v = float(arg, 'scientific');
        out += special(v) ?? exponent(v, precision ?? 6);
        break;
      }
      case 'b':
        if (typeof arg === 'boolean') out += arg ? '1' : '0';
        else {
          const n = integer(arg, 'binary');
          out += n < 0n ? `-${(-n).toString(2)}` : n.toString(2);
        }
        break;
      case 'o': {
        const n = integer(arg, 'octal');
        out += n < 0n ? `-${(-n).toString(8)}` : n.toString(8);
        break;
      }
      case 'x':
      case 'X':
        out += hex(arg, clause === 'X');
        break;
    }
  }
  return out;
}
