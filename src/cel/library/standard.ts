// What the standard library needs beyond cel-js' own: the timestamp and duration conversions it
// lacks (string and int of a timestamp, string of a duration, int of a uint, ordering of bytes),
// and timestamp() of a string as RFC 3339 strictly (cel-js hands the text to Date, which reads a
// time without a zone in the process's local zone); the compiler maps timestamp() calls to it.
// Cross-type numeric comparisons are cel-js' own: orderings (`1 < 1.5`, `1u < 2`) type-check, and
// equality across numeric types holds at run time (`dyn(1) == 1.0`); as in cel-go, `1 == 1.0`
// written with both types known is a compile error, since `_==_` takes two values of one type.

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { timestampString } from './format.ts';
import { OVERRIDE_SUFFIX } from '../errors.ts';
import { celError, type Registrar } from './register.ts';

const MAX_INT = (1n << 63n) - 1n;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const MIN_TIME = -62135596800000; // 0001-01-01T00:00:00Z
const MAX_TIME = 253402300799999; // 9999-12-31T23:59:59.999Z

const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';

function durationString(d: Duration): string {
  const nanos = d.seconds * 1_000_000_000n + BigInt(d.nanos);
  const neg = nanos < 0n;
  const abs = neg ? -nanos : nanos;
  const secs = abs / 1_000_000_000n;
  const frac = abs % 1_000_000_000n;
  const fracText = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${neg ? '-' : ''}${secs}${fracText}s`;
}

export function registerStandard(r: Registrar): void {
  // cel-go's checker keeps the old checker's nullness: null compares with an optional (an opaque
  // type), a duration or a timestamp (`format.dns1123Label().validate(self) == null`, as CRDs
  // write); such a value never equals null.
  for (const t of ['optional<dyn>', DUR, TS]) r.op(`${t} == null`, () => false);
  for (const op of ['<', '<=', '>', '>=']) {
    r.op(`bytes ${op} bytes`, (a: Uint8Array, b: Uint8Array) => {
      const c = Buffer.compare(a, b);
      return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
    });
  }
  r.fn('int(uint): int', (u: UnsignedInt) => {
    if (u.valueOf() > MAX_INT) throw celError('integer overflow');
    return u.valueOf();
  });
  r.fn(`string(${TS}): string`, (d: Date) => timestampString(d));
  r.fn(`int(${TS}): int`, (d: Date) => BigInt(Math.floor(d.getTime() / 1000)));
  const T = `timestamp${OVERRIDE_SUFFIX}`;
  r.fn(`${T}(${TS}): ${TS}`, (d: Date) => d);
  r.fn(`${T}(string): ${TS}`, (s: string) => {
    const d = RFC3339.test(s) ? new Date(s) : undefined;
    if (d === undefined || Number.isNaN(d.getTime()) || d.getTime() < MIN_TIME || d.getTime() > MAX_TIME) throw celError(`timestamp() requires a string in RFC 3339 format: ${JSON.stringify(s)}`);
    return d;
  });
  r.fn(`${T}(int): ${TS}`, (i: bigint) => {
    const ms = Number(i) * 1000;
    if (!(ms >= MIN_TIME && ms <= MAX_TIME)) throw celError('timestamp out of range');
    return new Date(ms);
  });
  r.fn(`string(${DUR}): string`, (d: Duration) => durationString(d));
  r.fn(`duration(${DUR}): ${DUR}`, (d: Duration) => d);
}
