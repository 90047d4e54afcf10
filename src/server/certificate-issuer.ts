// X.509 certificates issued with node:crypto alone: the few shapes the server makes for itself (a
// self-signed CA, serving and client certificates under it), DER-encoded here and signed with
// ECDSA P-256 / SHA-256. A general certificate library costs a start more to load (its ASN.1
// schemas and dependency injection) than issuing all of the server's certificates takes.

import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import ipaddr from 'ipaddr.js';

// ---- DER ----

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV: `tag` and the concatenated contents. */
function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const octetString = (b: Buffer) => tlv(0x04, b);
const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);

/** A BIT STRING of whole bytes (a key, a signature). */
const bitString = (b: Buffer) => tlv(0x03, Buffer.from([0]), b);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const base128: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280, 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii')) : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

/** One element of DER at `offset` of `der`: where its contents are, and where it ends. */
function element(der: Buffer, offset: number): { tag: number; start: number; end: number } {
  const tag = der[offset]!;
  let len = der[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[start + i]!;
    start += n;
  }
  if (start + len > der.length) throw new Error('truncated DER');
  return { tag, start, end: start + len };
}

/** The elements of the constructed element at `offset`. */
function children(der: Buffer, offset: number): { tag: number; offset: number; start: number; end: number }[] {
  const outer = element(der, offset);
  const out: { tag: number; offset: number; start: number; end: number }[] = [];
  for (let at = outer.start; at < outer.end; ) {
    const e = element(der, at);
    out.push({ ...e, offset: at });
    at = e.end;
  }
  return out;
}

// ---- certificates ----

const OIDS = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

const SIGNATURE_ALGORITHM = sequence(oid(OIDS.ecdsaWithSha256));

/** A distinguished name, one attribute per RDN in the order given. */
export interface Subject {
  commonName: string;
  organizations?: readonly string[];
}

function name(subject: Subject): Buffer {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  return sequence(rdn(OIDS.commonName, subject.commonName), ...(subject.organizations ?? []).map((o) => rdn(OIDS.organization, o)));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [TRUE] : []), octetString(value));
}

/** keyUsage bits (RFC 5280, 4.2.1.3), as a named-bit BIT STRING without trailing zero bits. */
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

function keyUsage(usages: readonly (keyof typeof KEY_USAGE)[]): Buffer {
  let byte = 0;
  for (const u of usages) byte |= 0x80 >> KEY_USAGE[u];
  let unused = 0;
  while (unused < 7 && !(byte & (1 << unused))) unused++;
  return tlv(0x03, Buffer.from([unused, byte]));
}

/** The public key's bits of a SubjectPublicKeyInfo (DER). */
function publicKeyBits(spki: Buffer): Buffer {
  const [, key] = children(spki, 0);
  if (!key || key.tag !== 0x03) throw new Error('not a SubjectPublicKeyInfo');
  return spki.subarray(key.start + 1, key.end);
}

/** RFC 5280's first method: the SHA-1 of the public key's bits. */
const keyIdentifier = (spki: Buffer) => createHash('sha1').update(publicKeyBits(spki)).digest();

/**
 * A host's address bytes when it is an IP address (dotted quad, or IPv6 text: a colon, which no
 * host name has); not node:net's isIP, whose IPv6 pattern costs a start milliseconds to compile.
 */
function ipBytes(host: string): number[] | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return ipaddr.IPv4.isValidFourPartDecimal(host) ? ipaddr.IPv4.parse(host).toByteArray() : undefined;
  if (!host.includes(':')) return undefined;
  if (!ipaddr.IPv6.isValid(host)) throw new Error(`${host}: not an IP address`);
  return ipaddr.IPv6.parse(host).toByteArray();
}

/** A positive serial number of 16 random bytes. */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return tlv(0x02, bytes);
}

export interface IssueRequest {
  subject: Subject;
  /** The new certificate's public key. */
  publicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** Absent: self-signed with `signingKey` (a CA). */
  issuer?: X509Certificate;
  signingKey: KeyObject;
  usage: 'ca' | 'server' | 'client';
  /** Subject alternative names: IP addresses and DNS names. */
  hosts?: readonly string[];
}

/** A certificate, PEM. */
export function issueCertificate(r: IssueRequest): string {
  const spki = r.publicKey.export({ type: 'spki', format: 'der' });
  const subject = name(r.subject);
  let issuerName = subject;
  let authorityKey = keyIdentifier(spki);
  if (r.issuer) {
    const tbs = children(r.issuer.raw, children(r.issuer.raw, 0)[0]!.offset);
    // version, serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, ...
    const explicitVersion = tbs[0]!.tag === 0xa0 ? 1 : 0;
    const issuerSubject = tbs[4 + explicitVersion]!;
    const issuerKey = tbs[5 + explicitVersion]!;
    issuerName = r.issuer.raw.subarray(issuerSubject.offset, issuerSubject.end);
    authorityKey = keyIdentifier(r.issuer.raw.subarray(issuerKey.offset, issuerKey.end));
  }
  const extensions: Buffer[] = [];
  if (r.usage === 'ca') {
    extensions.push(extension(OIDS.basicConstraints, true, sequence(TRUE)));
    extensions.push(extension(OIDS.keyUsage, true, keyUsage(['digitalSignature', 'keyCertSign', 'cRLSign'])));
    extensions.push(extension(OIDS.subjectKeyIdentifier, false, octetString(authorityKey)));
  } else {
    extensions.push(extension(OIDS.basicConstraints, true, sequence()));
    extensions.push(extension(OIDS.keyUsage, true, keyUsage(['digitalSignature', 'keyEncipherment'])));
    extensions.push(extension(OIDS.extKeyUsage, false, sequence(oid(r.usage === 'server' ? OIDS.serverAuth : OIDS.clientAuth))));
    extensions.push(extension(OIDS.authorityKeyIdentifier, false, sequence(tlv(0x80, authorityKey))));
    if (r.hosts?.length) {
      const names = r.hosts.map((h) => {
        const ip = ipBytes(h);
        return ip ? tlv(0x87, Buffer.from(ip)) : tlv(0x82, Buffer.from(h, 'ascii'));
      });
      extensions.push(extension(OIDS.subjectAltName, false, sequence(...names)));
    }
  }
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    serialNumber(),
    SIGNATURE_ALGORITHM,
    issuerName,
    sequence(time(r.notBefore), time(r.notAfter)),
    subject,
    spki,
    tlv(0xa3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, { key: r.signingKey, dsaEncoding: 'der' });
  const der = sequence(tbs, SIGNATURE_ALGORITHM, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}(?=.)/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
}

/** A new ECDSA P-256 key pair. */
export function newKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

/** A private key as PKCS#8 PEM. */
export const privateKeyPem = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

export const readPrivateKey = (pem: string): KeyObject => createPrivateKey(pem);
