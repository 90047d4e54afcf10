// The string formats custom resources are checked against, as kube-apiserver checks them (the
// formats apiextensions supports, validated as kube-openapi's format registry does). A format
// name is compared without its dashes (`date-time` is `datetime`); a format Kubernetes does not
// know is no constraint at all.

import { isIPv4, isIPv6 } from 'node:net';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const CREDIT_CARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?$/;
/** Go's time.ParseDuration: a sequence of decimal numbers with units, signed. */
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
/** kube-openapi's other duration form: `<number> <unit>` pairs with long unit names. */
const LONG_DURATION = /^((\d+)\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?|[a-z]+))+$/;
const LONG_UNITS = new Set(['ns', 'us', 'µs', 'ms', 's', 'm', 'h', 'd', 'w', 'nanosecond', 'nanoseconds', 'microsecond', 'microseconds', 'millisecond', 'milliseconds', 'second', 'seconds', 'sec', 'minute', 'minutes', 'min', 'hour', 'hours', 'hr', 'day', 'days', 'week', 'weeks', 'wk']);
const MAC_COLON = /^([0-9a-fA-F]{2})([:-][0-9a-fA-F]{2})+$/;
const MAC_DOT = /^([0-9a-fA-F]{4})(\.[0-9a-fA-F]{4})+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

function isDate(v: string): boolean {
  const m = DATE.exec(v);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** The date-time layouts kube-openapi accepts: RFC 3339 with or without seconds and fraction, `T` or a space. */
function isDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (m === null || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  return Number(m[4]) <= 23 && Number(m[5]) <= 59 && (m[6] === undefined || Number(m[6]) <= 59);
}

function isDuration(v: string): boolean {
  if (GO_DURATION.test(v)) return true;
  const text = v.trim();
  if (!LONG_DURATION.test(text)) return false;
  for (const m of text.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) if (!LONG_UNITS.has(m[2]!)) return false;
  return true;
}

/** Go's net.ParseMAC: 6, 8 or 20 octets, colon, dash or dot separated. */
function isMac(v: string): boolean {
  let octets: number;
  if (MAC_COLON.test(v)) {
    if (v.includes(':') && v.includes('-')) return false;
    octets = (v.length + 1) / 3;
  } else if (MAC_DOT.test(v)) octets = ((v.length + 1) / 5) * 2;
  else return false;
  return octets === 6 || octets === 8 || octets === 20;
}

/** Go's net.ParseCIDR: an address, a slash and a prefix length of its family. */
function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const ip = v.slice(0, slash);
  const bits = v.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(bits)) return false;
  if (isIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && !ip.includes('%') && Number(bits) <= 128;
}

/** Go's url.ParseRequestURI: an absolute URI or an absolute path, no spaces or control characters. */
function isUri(v: string): boolean {
  if (v.length === 0 || /[\s\x00-\x1f\x7f]/.test(v)) return false;
  if (v.startsWith('/')) return true;
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:(.*)$/.exec(v);
  if (m === null) return false;
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}

/** Go's net/mail.ParseAddress: `local@domain`, optionally as `Name <local@domain>`. */
function isEmail(v: string): boolean {
  const angle = /^[^<>]*<([^<>]+)>$/.exec(v.trim());
  const addr = angle ? angle[1]! : v.trim();
  return /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/.test(addr) && !addr.startsWith('.') && !addr.includes('..');
}

function isbn10(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (10 - i) * (s[i] === 'X' ? 10 : Number(s[i]));
  return sum % 11 === 0;
}

function isbn13(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(s[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(s[12]);
}

function isCreditCard(v: string): boolean {
  const s = v.replace(/\D/g, '');
  if (!CREDIT_CARD.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < s.length; i++) {
    let d = Number(s[s.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

const CHECKS: Record<string, (v: string) => boolean> = {
  bsonobjectid: (v) => BSON_OBJECT_ID.test(v),
  uri: isUri,
  email: isEmail,
  hostname: (v) => v.length <= 255 && HOSTNAME.test(v),
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v) && !v.includes('%'),
  cidr: isCidr,
  mac: isMac,
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID3.test(v),
  uuid4: (v) => UUID4.test(v),
  uuid5: (v) => UUID5.test(v),
  isbn: (v) => isbn10(v) || isbn13(v),
  isbn10,
  isbn13,
  creditcard: isCreditCard,
  ssn: (v) => SSN.test(v),
  hexcolor: (v) => HEX_COLOR.test(v),
  rgbcolor: (v) => RGB_COLOR.test(v),
  byte: (v) => BASE64.test(v),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (v) => v.length <= 63 && DNS_LABEL.test(v),
  k8slongname: (v) => v.length <= 253 && DNS_SUBDOMAIN.test(v),
};

/** Whether the string format is one Kubernetes checks custom resources' values against. */
export function isKnownFormat(format: string): boolean {
  return Object.hasOwn(CHECKS, format.replaceAll('-', ''));
}

/** True when `v` is not of the (known) string format; unknown formats accept everything. */
export function formatProblem(format: string, v: string): boolean {
  const key = format.replaceAll('-', '');
  if (!Object.hasOwn(CHECKS, key)) return false;
  return !CHECKS[key]!(v);
}
