// The Audit-ID of a request, as kube-apiserver's WithAuditInit gives every request one, audited or
// not: the client's `Audit-ID` header when it sent a usable one, else a new random UUID. Every
// answer carries it back, and the audit events of the request (if any) are recorded under it.

import type { IncomingMessage } from 'node:http';
import { randomFillSync } from 'node:crypto';

/** A client's Audit-ID longer than this is not taken: it would be echoed and written into every event. */
const MAX_CLIENT_ID_LENGTH = 128;

/** UUIDs made 256 at a time: one draw from the CSPRNG, one string of their text. */
const UUIDS = 256;
const uuidBytes = Buffer.alloc(16 * UUIDS);
const uuidText = Buffer.alloc(36 * UUIDS);
const HEX_DIGITS = Buffer.from('0123456789abcdef');
let uuids = '';
let uuidAt = UUIDS;

/**
 * A random (version 4) UUID, as crypto.randomUUID makes it, but as a slice of a string made for
 * 256 of them (no copy: V8 keeps a long enough substring as a view of its parent), where
 * randomUUID's is a concatenation of 20 pieces that the header's validation and every write flatten.
 */
export function newUUID(): string {
  if (uuidAt === UUIDS) {
    randomFillSync(uuidBytes);
    let j = 0;
    for (let i = 0; i < uuidBytes.length; i++) {
      const k = i & 15;
      if (k === 4 || k === 6 || k === 8 || k === 10) uuidText[j++] = 0x2d;
      let b = uuidBytes[i]!;
      if (k === 6) b = (b & 0x0f) | 0x40;
      else if (k === 8) b = (b & 0x3f) | 0x80;
      uuidText[j++] = HEX_DIGITS[b >> 4]!;
      uuidText[j++] = HEX_DIGITS[b & 0x0f]!;
    }
    uuids = uuidText.toString('latin1');
    uuidAt = 0;
  }
  const at = 36 * uuidAt++;
  return uuids.slice(at, at + 36);
}

/** The request's Audit-ID: the client's, when it sent a usable one, else a new UUID. */
export function auditIDOf(req: IncomingMessage): string {
  const given = req.headers['audit-id'];
  return typeof given === 'string' && given.length > 0 && given.length <= MAX_CLIENT_ID_LENGTH ? given : newUUID();
}
