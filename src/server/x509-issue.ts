// Issuing X.509 certificates with `node:crypto` alone: the few DER structures a CA, a serving and
// a client certificate need (RFC 5280), written directly, and signed with ECDSA P-256 / SHA-256.
// Node can read certificates but not make them; a general ASN.1 library costs a start more than
// everything else it loads, for the handful of fields written here.

import { createHash, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';

// ---- DER ----

/** A DER element: its tag, then its length, then its contents. */
function tlv(tag: number, contents: Buffer): Buffer {
  const n = contents.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, contents]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octetString = (b: Buffer) => tlv(0x04, b);
const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const boolean = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** A BIT STRING whose last byte has `unused` padding bits. */
const bitString = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
/** [n] EXPLICIT: a constructed context-specific wrapper. */
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);

/** A non-negative INTEGER from its big-endian magnitude (a leading zero keeps it positive). */
function integer(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return tlv(0x02, m[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes: number[] = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const groups: number[] = [];
    for (let v = arc; ; v = Math.floor(v / 128)) {
      groups.unshift(v & 0x7f);
      if (v < 128) break;
    }
    bytes.push(...groups.map((g, k) => (k < groups.length - 1 ? g | 0x80 : g)));
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), to the second, in UTC. */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

// ---- certificate fields ----

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** A distinguished name: a common name and organizations, one attribute per RDN, in that order. */
export interface DistinguishedName {
  commonName: string;
  organizations?: readonly string[];
}

function name(n: DistinguishedName): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(rdn(OID.commonName, n.commonName), ...(n.organizations ?? []).map((o) => rdn(OID.organization, o)));
}

const extension = (id: string, critical: boolean, value: Buffer) => sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

/** Key usage bits, by their position in RFC 5280's KeyUsage. */
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

/** keyUsage as a DER named-bit BIT STRING: trailing zero bits dropped. */
function keyUsage(usages: readonly (keyof typeof KEY_USAGE)[]): Buffer {
  let bits = 0;
  for (const u of usages) bits |= 0x80 >> KEY_USAGE[u];
  let unused = 0;
  while (unused < 7 && !(bits & (1 << unused))) unused++;
  return bitString(Buffer.from([bits]), unused);
}

/** The key identifier of a public key: SHA-1 of its subjectPublicKey bits (RFC 5280 4.2.1.2, method 1). */
export function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha1').update(subjectPublicKeyBits(spki)).digest();
}

/** The contents of the BIT STRING inside a SubjectPublicKeyInfo (after its unused-bits byte). */
function subjectPublicKeyBits(spki: Buffer): Buffer {
  const [inside] = readTlv(spki, 0);
  const [, algorithmEnd] = readTlv(spki, inside);
  const [start, end] = readTlv(spki, algorithmEnd);
  return spki.subarray(start + 1, end);
}

/** The [contents start, element end] of the DER element at `offset`. */
function readTlv(der: Buffer, offset: number): [number, number] {
  let p = offset + 1;
  const first = der[p++]!;
  let length = first;
  if (first & 0x80) {
    length = 0;
    for (let k = 0; k < (first & 0x7f); k++) length = length * 256 + der[p++]!;
  }
  return [p, p + length];
}

function generalNames(hosts: readonly string[]): Buffer {
  return sequence(
    ...hosts.map((h) => {
      const ip = ipAddressBytes(h);
      return ip ? tlv(0x87, ip) : tlv(0x82, Buffer.from(h, 'ascii')); // [7] iPAddress, [2] dNSName
    }),
  );
}

/**
 * The 4 or 16 bytes of an IP address literal; undefined for anything else (a DNS name). Written
 * out rather than asked of `node:net`, whose IPv6 pattern costs a start tens of milliseconds to
 * compile on first use.
 */
export function ipAddressBytes(text: string): Buffer | undefined {
  const v4 = (s: string): number[] | undefined => {
    const parts = s.split('.');
    if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
    return parts.map(Number);
  };
  if (!text.includes(':')) {
    const b = v4(text);
    return b && Buffer.from(b);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (const [i, p] of parts.entries()) {
      if (i === parts.length - 1 && p.includes('.')) {
        const b = v4(p);
        if (!b) return undefined;
        out.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = Buffer.alloc(16);
  words.forEach((w, i) => bytes.writeUInt16BE(w, 2 * i));
  return bytes;
}

export interface CertificateRequest {
  subject: DistinguishedName;
  /** The issuer's name as its certificate spells it (DER, see `certificateSubject`); the subject's when self-signed. */
  issuer?: Buffer;
  publicKey: KeyObject;
  /** The issuer's private key (the subject's own when self-signed). */
  signingKey: KeyObject;
  /** The issuer's public key, for the authority key identifier. */
  issuerPublicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  ca: boolean;
  usage?: 'server' | 'client';
  /** Subject alternative names: IP addresses and DNS names. */
  hosts?: readonly string[];
}

/** A signed certificate, PEM. */
export function issueCertificate(r: CertificateRequest): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, 16 octets, never zero
  const extensions = [
    extension(OID.basicConstraints, true, r.ca ? sequence(boolean(true)) : sequence()),
    extension(OID.keyUsage, true, keyUsage(r.ca ? ['digitalSignature', 'keyCertSign', 'cRLSign'] : ['digitalSignature', 'keyEncipherment'])),
    ...(r.usage ? [extension(OID.extKeyUsage, false, sequence(oid(r.usage === 'server' ? OID.serverAuth : OID.clientAuth)))] : []),
    extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(r.publicKey))),
    extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, keyIdentifier(r.issuerPublicKey)))),
    ...(r.hosts?.length ? [extension(OID.subjectAltName, false, generalNames(r.hosts))] : []),
  ];
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    r.issuer ?? name(r.subject),
    sequence(time(r.notBefore), time(r.notAfter)),
    name(r.subject),
    r.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, r.signingKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/** The public key of a PEM certificate. */
export const certificatePublicKey = (pem: string): KeyObject => createPublicKey(pem);

/** The subject Name of a PEM certificate, DER as written in it: the issuer field of what it signs. */
export function certificateSubject(pem: string): Buffer {
  const block = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem)?.[1] ?? '';
  const der = Buffer.from(block.replace(/\s/g, ''), 'base64');
  const [certificate] = readTlv(der, 0);
  let [p] = readTlv(der, certificate); // inside tbsCertificate
  if (der[p] === 0xa0) p = readTlv(der, p)[1]; // version, absent in v1
  for (let field = 0; field < 4; field++) p = readTlv(der, p)[1]; // serial, signature, issuer, validity
  return der.subarray(p, readTlv(der, p)[1]);
}
