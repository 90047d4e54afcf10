// Timestamp accessors, in UTC or in the time zone of their argument: an IANA name
// ('America/New_York') or a fixed offset ('+11:00', '-02:30', '02:00'), as cel-go accepts.
// cel-js' own accept IANA names only and compute the day of the year in the process's local time
// zone, so ours are registered under internal names the compiler maps those calls to
// (rewrite.ts); the duration accessors of the same names are registered there too.

import { OVERRIDE_SUFFIX } from '../errors.ts';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { celError, type Registrar } from './register.ts';

const TS = 'google.protobuf.Timestamp';
const OFFSET = /^([+-]?)(\d{2}):(\d{2})$/;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    } catch {
      throw celError(`invalid time zone: ${tz}`);
    }
    if (formatters.size > 512) formatters.clear();
    formatters.set(tz, f);
  }
  return f;
}

/** The wall-clock time in `tz`, as a Date whose UTC fields are that wall clock. */
export function inZone(d: Date, tz: string): Date {
  const m = OFFSET.exec(tz);
  if (m) {
    const minutes = (Number(m[2]) * 60 + Number(m[3])) * (m[1] === '-' ? -1 : 1);
    return new Date(d.getTime() + minutes * 60_000);
  }
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(d)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return new Date(Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!, d.getUTCMilliseconds()));
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000);
}

const GETTERS: Record<string, (d: Date) => number> = {
  getFullYear: (d) => d.getUTCFullYear(),
  getMonth: (d) => d.getUTCMonth(),
  getDate: (d) => d.getUTCDate(),
  getDayOfMonth: (d) => d.getUTCDate() - 1,
  getDayOfWeek: (d) => d.getUTCDay(),
  getDayOfYear: (d) => dayOfYear(d),
  getHours: (d) => d.getUTCHours(),
  getMinutes: (d) => d.getUTCMinutes(),
  getSeconds: (d) => d.getUTCSeconds(),
  getMilliseconds: (d) => d.getUTCMilliseconds(),
};

/** Accessors this library replaces. */
export const ZONED_GETTERS = Object.keys(GETTERS);

const DURATION_GETTERS: Record<string, (d: Duration) => bigint> = {
  getHours: (d) => d.getHours(),
  getMinutes: (d) => d.getMinutes(),
  getSeconds: (d) => d.getSeconds(),
  getMilliseconds: (d) => d.getMilliseconds(),
};

export function registerTime(r: Registrar): void {
  for (const [name, get] of Object.entries(GETTERS)) {
    r.fn(`${TS}.${name}${OVERRIDE_SUFFIX}(): int`, (d: Date) => BigInt(get(d)));
    r.fn(`${TS}.${name}${OVERRIDE_SUFFIX}(string): int`, (d: Date, tz: string) => BigInt(get(inZone(d, tz))));
  }
  for (const [name, get] of Object.entries(DURATION_GETTERS)) r.fn(`google.protobuf.Duration.${name}${OVERRIDE_SUFFIX}(): int`, get);
}
