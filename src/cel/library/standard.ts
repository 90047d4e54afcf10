// What the standard library needs beyond cel-js' own: cross-type numeric equality (`1 == 1.0`,
// `1u == 1`; the orderings cel-js has), and the timestamp and duration conversions it lacks
// (string and int of a timestamp, string of a duration). Timestamps default to UTC.

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { timestampString } from './format.ts';
import type { Registrar } from './register.ts';

const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';

/** Exact equality of an int and a double (2^53 + 1 is not 2^53). */
function intEqualsDouble(i: bigint, d: number): boolean {
  return Number.isInteger(d) && BigInt(d) === i;
}

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
  r.op('int == double', (a: bigint, b: number) => intEqualsDouble(a, b));
  r.op('int == uint', (a: bigint, b: UnsignedInt) => a === b.valueOf());
  r.op('uint == double', (a: UnsignedInt, b: number) => intEqualsDouble(a.valueOf(), b));
  r.fn(`string(${TS}): string`, (d: Date) => timestampString(d));
  r.fn(`int(${TS}): int`, (d: Date) => BigInt(Math.floor(d.getTime() / 1000)));
  r.fn(`timestamp(${TS}): ${TS}`, (d: Date) => d);
  r.fn(`string(${DUR}): string`, (d: Duration) => durationString(d));
  r.fn(`duration(${DUR}): ${DUR}`, (d: Duration) => d);
}
