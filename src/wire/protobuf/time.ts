// RFC 3339 text ↔ the wire's { seconds, nanos }. Time carries whole seconds (Kubernetes writes
// nanos 0 and ignores it when reading); MicroTime carries the fraction, shown with six digits.
// Parsing is by hand: it runs for every timestamp of every object encoded.

interface Instant {
  seconds: number;
  nanos: number;
}

/** Seconds of 0001-01-01T00:00:00Z: Go's zero time, which Kubernetes writes as an empty message. */
export const ZERO_TIME_SECONDS = -62135596800;

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1-12). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The digit at `i` (0-9), or a value above 9 for any other character. */
function digit(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) >>> 0;
}

/** Two digits at `i`, or -1. */
function two(s: string, i: number): number {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a > 9 || b > 9 ? -1 : a * 10 + b;
}

/**
 * Parses RFC 3339 text (`2006-01-02T15:04:05[.fraction](Z|±hh:mm)`); undefined for anything
 * else. The fraction is kept to nanoseconds.
 */
export function parseInstant(text: string): Instant | undefined {
  const n = text.length;
  if (n < 20) return undefined;
  const y1 = two(text, 0);
  const y2 = two(text, 2);
  const month = two(text, 5);
  const day = two(text, 8);
  const hour = two(text, 11);
  const minute = two(text, 14);
  const second = two(text, 17);
  const t = text.charCodeAt(10);
  if (
    (y1 | y2 | month | day | hour | minute | second) < 0 ||
    text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || (t !== 84 && t !== 116) || // - - : : T|t
    month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59
  )
    return undefined;
  const year = y1 * 100 + y2;
  if (day > DAYS_IN_MONTH[month - 1]! || (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)))) return undefined;
  let at = 19;
  let nanos = 0;
  if (text.charCodeAt(at) === 46) {
    // '.': up to nine digits count, more are dropped.
    let scale = 100000000;
    const start = ++at;
    for (let d = digit(text, at); d <= 9; d = digit(text, ++at)) {
      nanos += d * scale;
      scale = scale > 1 ? scale / 10 : 0;
    }
    if (at === start) return undefined;
  }
  let offset = 0;
  const zone = text.charCodeAt(at);
  if (zone === 90 || zone === 122) {
    // 'Z' | 'z'
    if (at + 1 !== n) return undefined;
  } else if ((zone === 43 || zone === 45) && at + 6 === n && text.charCodeAt(at + 3) === 58) {
    // ('+' | '-') hh ':' mm
    const h = two(text, at + 1);
    const m = two(text, at + 4);
    if (h < 0 || h > 23 || m < 0 || m > 59) return undefined;
    offset = (zone === 45 ? -1 : 1) * (h * 3600 + m * 60);
  } else return undefined;
  return { seconds: daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset, nanos };
}

function utcBase(seconds: number): string {
  const d = new Date(seconds * 1000);
  const year = d.getUTCFullYear();
  const pad = (n: number): string => String(n).padStart(2, '0');
  const y = year >= 0 && year <= 9999 ? String(year).padStart(4, '0') : String(year);
  return `${y}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** metav1.Time's JSON: UTC, whole seconds. */
export function formatTime(seconds: number): string {
  return `${utcBase(seconds)}Z`;
}

/** metav1.MicroTime's JSON: UTC, six fraction digits (truncated). */
export function formatMicroTime(seconds: number, nanos: number): string {
  return `${utcBase(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}
