// IP addresses and CIDR values: parsing, canonical text and the validation rules Kubernetes
// applies to IP and CIDR fields (its messages included).
//
// Two parsers, as Kubernetes has them:
// - strict: what Go's netip accepts (and `node:net` isIP, which agrees): no leading zeros in
//   IPv4 parts, at most 4 hex digits per IPv6 group, no zone, prefix lengths without leading
//   zeros. A value must pass it to be valid.
// - sloppy: what Kubernetes' legacy parser accepts on top (leading zeros, longer hex groups of a
//   16-bit value). Only used to tell "malformed" apart from "has leading zeros" in messages and
//   for `--service-cluster-ip-range`, which Kubernetes parses that way.
//
// ipaddr.js does the arithmetic and the RFC 5952 text, but never decides validity on its own: it
// reads `010.1.1.1` as octal and `::1.2.3.4` as an IPv4-mapped address, so every string is checked
// with `node:net` first and an embedded dotted quad is converted here.

import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

export type IPFamily = 'IPv4' | 'IPv6';

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
export interface IPAddr {
  family: IPFamily;
  bytes: number[];
}

export interface CIDR {
  /** The address as written (host bits included). */
  address: IPAddr;
  prefixLength: number;
}

const IPV4_SLOPPY = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/;
const DECIMAL = /^\d+$/;
const HEX = /^[0-9a-fA-F]+$/;

/** Decimal digits as Go's dtoi reads them (any leading zeros; huge values fail). */
function decimal(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text.replace(/^0+(?=\d)/, ''));
  return Number.isSafeInteger(n) ? n : undefined;
}

/** IPv4 octets, leading zeros tolerated (each part read as decimal, never octal). */
function sloppyIPv4Octets(text: string): number[] | undefined {
  const m = IPV4_SLOPPY.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(decimal);
  return octets.every((o): o is number => o !== undefined && o <= 255) ? octets : undefined;
}

/** An IPv6 text with its trailing dotted quad (if any) written as two hex groups. */
function dottedTailAsHex(text: string, octetsOf: (s: string) => number[] | undefined): string | undefined {
  const colon = text.lastIndexOf(':');
  const tail = text.slice(colon + 1);
  if (!tail.includes('.')) return text;
  const o = octetsOf(tail);
  if (!o) return undefined;
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  return `${text.slice(0, colon)}:${hex(o[0]!, o[1]!)}:${hex(o[2]!, o[3]!)}`;
}

function ipv6Bytes(text: string): number[] {
  return ipaddr.IPv6.parse(text).toByteArray();
}

/** Strict parse: the forms Go's netip.ParseAddr accepts, without a zone. */
export function parseIP(text: string): IPAddr | undefined {
  if (isIPv4(text)) return { family: 'IPv4', bytes: ipaddr.IPv4.parse(text).toByteArray() };
  if (!isIPv6(text) || text.includes('%')) return undefined;
  const hexOnly = dottedTailAsHex(text, (s) => (isIPv4(s) ? ipaddr.IPv4.parse(s).octets : undefined));
  return hexOnly === undefined ? undefined : { family: 'IPv6', bytes: ipv6Bytes(hexOnly) };
}

/** Sloppy parse: also leading zeros in IPv4 parts and IPv6 groups longer than 4 hex digits. */
function parseIPSloppy(text: string): IPAddr | undefined {
  const strict = parseIP(text);
  if (strict) return strict;
  const v4 = sloppyIPv4Octets(text);
  if (v4) return { family: 'IPv4', bytes: v4 };
  if (text.includes('%') || !text.includes(':')) return undefined;
  const hexOnly = dottedTailAsHex(text, sloppyIPv4Octets);
  if (hexOnly === undefined) return undefined;
  const groups = hexOnly.split(':').map((g) => {
    if (g === '') return g;
    if (!HEX.test(g)) return undefined;
    const n = parseInt(g.replace(/^0+(?=[0-9a-fA-F])/, ''), 16);
    return n <= 0xffff ? n.toString(16) : undefined;
  });
  if (groups.some((g) => g === undefined)) return undefined;
  const normalized = groups.join(':');
  return isIPv6(normalized) ? { family: 'IPv6', bytes: ipv6Bytes(normalized) } : undefined;
}

/** `::ffff:a.b.c.d`: an IPv4 address carried in IPv6 form. */
export function isIPv4Mapped(ip: IPAddr): boolean {
  return ip.family === 'IPv6' && ip.bytes.slice(0, 10).every((b) => b === 0) && ip.bytes[10] === 0xff && ip.bytes[11] === 0xff;
}

/**
 * The canonical text: dotted decimal for IPv4, RFC 5952 for IPv6 (lower case, the longest run of
 * two or more zero groups as `::`), an IPv4-mapped address as `::ffff:` and a dotted quad.
 */
export function formatIP(ip: IPAddr): string {
  if (ip.family === 'IPv4') return ip.bytes.join('.');
  if (isIPv4Mapped(ip)) return `::ffff:${ip.bytes.slice(12).join('.')}`;
  return (ipaddr.fromByteArray(ip.bytes) as ipaddr.IPv6).toRFC5952String();
}

const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/**
 * Kubernetes' IsValidIP: a strictly parsed address, not IPv4-mapped, in canonical form. Returns
 * the detail messages (empty when valid).
 */
export function validateIP(text: string): string[] {
  if (!parseIPSloppy(text)) return [INVALID_IP];
  const ip = parseIP(text);
  if (!ip) return ['must not have leading 0s'];
  if (isIPv4Mapped(ip)) return ['must not be an IPv4-mapped IPv6 address'];
  const canonical = formatIP(ip);
  return text === canonical ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/** Strict parse of `<address>/<prefix length>` (Go's netip.ParsePrefix, without zones). */
export function parseCIDR(text: string): CIDR | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIP(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (!address || !/^(0|[1-9]\d{0,2})$/.test(bits)) return undefined;
  const prefixLength = Number(bits);
  return prefixLength <= address.bytes.length * 8 ? { address, prefixLength } : undefined;
}

/** Sloppy parse, as Kubernetes' ParseCIDRSloppy: leading zeros in the address and prefix length. */
export function parseCIDRSloppy(text: string): CIDR | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseIPSloppy(text.slice(0, slash));
  const prefixLength = decimal(text.slice(slash + 1));
  if (!address || prefixLength === undefined || prefixLength > address.bytes.length * 8) return undefined;
  return { address, prefixLength };
}

/** The network of a CIDR: its address with the host bits cleared. */
export function networkOf(cidr: CIDR): IPAddr {
  const bytes = cidr.address.bytes.map((b, i) => {
    const bitsHere = Math.min(8, Math.max(0, cidr.prefixLength - i * 8));
    return b & ((0xff << (8 - bitsHere)) & 0xff);
  });
  return { family: cidr.address.family, bytes };
}

/** Canonical `<network>/<prefix length>` text of a CIDR. */
export function formatCIDR(cidr: CIDR): string {
  return `${formatIP(networkOf(cidr))}/${cidr.prefixLength}`;
}

/**
 * Kubernetes' IsValidCIDR for subnet values: strictly parsed, not IPv4-mapped, no host bits set,
 * in canonical form. Returns the detail messages (empty when valid).
 */
export function validateCIDR(text: string): string[] {
  if (!parseCIDRSloppy(text)) return [INVALID_CIDR];
  const cidr = parseCIDR(text);
  if (!cidr) return ['must not have leading 0s in IP or prefix length'];
  if (isIPv4Mapped(cidr.address)) return ['must not have an IPv4-mapped IPv6 address'];
  if (formatIP(networkOf(cidr)) !== formatIP(cidr.address)) return ['must not have bits set beyond the prefix length'];
  const canonical = formatCIDR(cidr);
  return text === canonical ? [] : [`must be in canonical form (${JSON.stringify(canonical)})`];
}

/**
 * The family of a CIDR text as Kubernetes tells it (sloppy parse; an IPv4-mapped address counts
 * as IPv4), undefined when it cannot be parsed.
 */
export function cidrFamily(text: string): IPFamily | undefined {
  const cidr = parseCIDRSloppy(text);
  if (!cidr) return undefined;
  return isIPv4Mapped(cidr.address) ? 'IPv4' : cidr.address.family;
}
