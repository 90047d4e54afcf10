// Kubernetes' IP and CIDR libraries (base environment 1.30+): ip(), isIP(), ip.isCanonical(),
// cidr(), isCIDR(), the members family, isUnspecified, isLoopback, isLinkLocalMulticast,
// isLinkLocalUnicast, isGlobalUnicast (IPs), containsIP, containsCIDR, ip, masked, prefixLength
// (CIDRs), string() of both and equality. Addresses parse as Go's netip does (machinery/ip.ts's
// strict parser: no leading zeros, no zone), and IPv4-mapped IPv6 addresses are refused, as the
// libraries refuse them; a CIDR may have host bits set (masked() clears them).

import { formatIP, isIPv4Mapped, networkOf, parseIP, type CIDR, type IPAddr } from '../../machinery/ip.ts';
import { celError, type Registrar } from './register.ts';

export class CelIP {
  readonly addr: IPAddr;
  constructor(addr: IPAddr) {
    this.addr = addr;
  }
}

export class CelCIDR {
  readonly cidr: CIDR;
  constructor(cidr: CIDR) {
    this.cidr = cidr;
  }
}

/** Why Go's netip.ParseAddr refuses `s`, in its words (the common cases; others in general terms). */
function addrProblem(s: string): string {
  if (s === '') return 'unable to parse IP';
  if (s.includes(':')) return s.includes('%') && s.endsWith('%') ? 'missing zone' : 'unable to parse IPv6 address';
  const fields = s.split('.');
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '.' && (c < '0' || c > '9')) return `unexpected character (at ${JSON.stringify(s.slice(i))})`;
  }
  for (const f of fields.slice(0, 4)) {
    if (f === '') return 'IPv4 field must have at least one digit';
    if (f.length > 1 && f.startsWith('0')) return 'IPv4 field has octet with leading zero';
    if (Number(f) > 255) return 'IPv4 field has value >255';
  }
  return fields.length < 4 ? 'IPv4 address too short' : 'IPv4 address too long';
}

/** The address in `s`, or the library's error text. */
function parseAddr(s: string): IPAddr | string {
  const zone = s.indexOf('%');
  if (zone > 0 && s.includes(':') && parseIP(s.slice(0, zone)) && zone < s.length - 1) return `IP address ${JSON.stringify(s)} with zone value is not allowed`;
  const addr = parseIP(s);
  if (!addr) return `IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): ${addrProblem(s)}`;
  if (isIPv4Mapped(addr)) return `IPv4-mapped IPv6 address ${JSON.stringify(s)} is not allowed`;
  return addr;
}

const PARSE_PREFIX = 'network address parse error during conversion from string';

/** The CIDR in `s` (host bits kept), or the library's error text. */
function parsePrefix(s: string): CIDR | string {
  const fail = (why: string) => `${PARSE_PREFIX}: ${PARSE_PREFIX}: netip.ParsePrefix(${JSON.stringify(s)}): ${why}`;
  const slash = s.lastIndexOf('/');
  if (slash < 0) return fail('no \'/\'');
  const text = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (text.includes('%')) return fail('IPv6 zones cannot be present in a prefix');
  const addr = parseIP(text);
  if (!addr) return fail(`ParseAddr(${JSON.stringify(text)}): ${addrProblem(text)}`);
  if (!/^(0|[1-9]\d*)$/.test(bits)) return fail(`bad bits after slash: ${JSON.stringify(bits)}`);
  const prefixLength = Number(bits);
  if (prefixLength > addr.bytes.length * 8) return fail(`prefix length out of range`);
  if (isIPv4Mapped(addr)) return `${PARSE_PREFIX}: IPv4-mapped IPv6 address ${JSON.stringify(s)} is not allowed`;
  return { address: addr, prefixLength };
}

const sameAddr = (a: IPAddr, b: IPAddr) => a.family === b.family && a.bytes.every((x, i) => x === b.bytes[i]);

/** Whether the first `bits` bits of two addresses of one family agree. */
function samePrefix(a: IPAddr, b: IPAddr, bits: number): boolean {
  if (a.family !== b.family) return false;
  for (let i = 0; i * 8 < bits; i++) {
    const n = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - n)) & 0xff;
    if ((a.bytes[i]! & mask) !== (b.bytes[i]! & mask)) return false;
  }
  return true;
}

const inRange = (ip: IPAddr, first: number, bits: number) => samePrefix(ip, { family: ip.family, bytes: [first, ...new Array<number>(ip.bytes.length - 1).fill(0)] }, bits);
const isZero = (ip: IPAddr) => ip.bytes.every((b) => b === 0);
const isLoopback = (ip: IPAddr) => (ip.family === 'IPv4' ? ip.bytes[0] === 127 : ip.bytes.slice(0, 15).every((b) => b === 0) && ip.bytes[15] === 1);
const isMulticast = (ip: IPAddr) => (ip.family === 'IPv4' ? inRange(ip, 224, 4) : ip.bytes[0] === 0xff);
const isLinkLocalUnicast = (ip: IPAddr) => (ip.family === 'IPv4' ? ip.bytes[0] === 169 && ip.bytes[1] === 254 : ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80);
/** Go's netip: 224.0.0.0/24, ff02::/16. */
const isLinkLocalMulticast = (ip: IPAddr) => (ip.family === 'IPv4' ? ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0 : ip.bytes[0] === 0xff && ip.bytes[1] === 0x02);
/** Go's netip: not unspecified, not the IPv4 broadcast address, not loopback, multicast or link-local unicast. */
const isGlobalUnicast = (ip: IPAddr) => !isZero(ip) && !(ip.family === 'IPv4' && ip.bytes.every((b) => b === 255)) && !isLoopback(ip) && !isMulticast(ip) && !isLinkLocalUnicast(ip);

const prefixString = (c: CIDR) => `${formatIP(c.address)}/${c.prefixLength}`;

function containsCIDR(outer: CIDR, inner: CIDR): boolean {
  return inner.prefixLength >= outer.prefixLength && samePrefix(outer.address, inner.address, outer.prefixLength);
}

export function registerNet(r: Registrar): void {
  const IP = 'net.IP';
  const CIDR_T = 'net.CIDR';
  r.env.registerType(IP, CelIP);
  r.env.registerType(CIDR_T, CelCIDR);
  const ip = (s: string): CelIP => {
    const a = parseAddr(s);
    if (typeof a === 'string') throw celError(a);
    return new CelIP(a);
  };
  const cidr = (s: string): CelCIDR => {
    const c = parsePrefix(s);
    if (typeof c === 'string') throw celError(c);
    return new CelCIDR(c);
  };
  r.fn(`ip(string): ${IP}`, ip);
  r.fn('isIP(string): bool', (s: string) => typeof parseAddr(s) !== 'string');
  class IPNamespace {}
  r.env.registerType('IPNamespace', IPNamespace);
  r.env.registerConstant('ip', 'IPNamespace', new IPNamespace());
  r.fn('IPNamespace.isCanonical(string): bool', (_ns: unknown, s: string) => formatIP(ip(s).addr) === s);
  r.fn(`${IP}.family(): int`, (a: CelIP) => (a.addr.family === 'IPv4' ? 4n : 6n));
  r.fn(`${IP}.isUnspecified(): bool`, (a: CelIP) => isZero(a.addr));
  r.fn(`${IP}.isLoopback(): bool`, (a: CelIP) => isLoopback(a.addr));
  r.fn(`${IP}.isLinkLocalMulticast(): bool`, (a: CelIP) => isLinkLocalMulticast(a.addr));
  r.fn(`${IP}.isLinkLocalUnicast(): bool`, (a: CelIP) => isLinkLocalUnicast(a.addr));
  r.fn(`${IP}.isGlobalUnicast(): bool`, (a: CelIP) => isGlobalUnicast(a.addr));
  r.fn(`string(${IP}): string`, (a: CelIP) => formatIP(a.addr));
  r.op(`${IP} == ${IP}`, (a: CelIP, b: CelIP) => sameAddr(a.addr, b.addr));

  r.fn(`cidr(string): ${CIDR_T}`, cidr);
  r.fn('isCIDR(string): bool', (s: string) => typeof parsePrefix(s) !== 'string');
  r.fn(`${CIDR_T}.containsIP(${IP}): bool`, (c: CelCIDR, a: CelIP) => samePrefix(c.cidr.address, a.addr, c.cidr.prefixLength));
  r.fn(`${CIDR_T}.containsIP(string): bool`, (c: CelCIDR, s: string) => samePrefix(c.cidr.address, ip(s).addr, c.cidr.prefixLength));
  r.fn(`${CIDR_T}.containsCIDR(${CIDR_T}): bool`, (c: CelCIDR, o: CelCIDR) => containsCIDR(c.cidr, o.cidr));
  r.fn(`${CIDR_T}.containsCIDR(string): bool`, (c: CelCIDR, s: string) => containsCIDR(c.cidr, cidr(s).cidr));
  r.fn(`${CIDR_T}.ip(): ${IP}`, (c: CelCIDR) => new CelIP(c.cidr.address));
  r.fn(`${CIDR_T}.masked(): ${CIDR_T}`, (c: CelCIDR) => new CelCIDR({ address: networkOf(c.cidr), prefixLength: c.cidr.prefixLength }));
  r.fn(`${CIDR_T}.prefixLength(): int`, (c: CelCIDR) => BigInt(c.cidr.prefixLength));
  r.fn(`string(${CIDR_T}): string`, (c: CelCIDR) => prefixString(c.cidr));
  r.op(`${CIDR_T} == ${CIDR_T}`, (a: CelCIDR, b: CelCIDR) => a.cidr.prefixLength === b.cidr.prefixLength && sameAddr(a.cidr.address, b.cidr.address));
}
