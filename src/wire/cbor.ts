// CBOR (RFC 8949) as kube-apiserver speaks it (gate CBORServingAndStorage): a body is one data
// item, prefixed with the self-described CBOR tag (55799, d9 d9 f7). Encoding is deterministic:
// map keys sorted bytewise by their encoding, strings (keys included) as byte strings, integers
// in their shortest form, floats in the shortest width that keeps their value, definite lengths
// only. Decoding is strict: duplicate map keys, invalid UTF-8 in text strings, NaN and infinities,
// nesting deeper than 64 and more than 1024 items in one array or map are refused, as
// Kubernetes' decoder refuses them; byte strings and text strings both decode to strings, tags
// to their content, and indefinite lengths are accepted.

import { ByteBuilder } from '../machinery/byte-builder.ts';

const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);
const MAX_DEPTH = 64;
const MAX_ITEMS = 1024;

class CborError extends Error {
  override name = 'CborError';
}

// ---- encoding ----

class Out extends ByteBuilder {
  /** A major type with its argument in the shortest form. */
  head(major: number, n: number): void {
    const m = major << 5;
    if (n < 24) this.byte(m | n);
    else if (n < 0x100) {
      this.byte(m | 24);
      this.byte(n);
    } else if (n < 0x10000) {
      this.ensure(3);
      this.buf[this.at++] = m | 25;
      this.buf.writeUInt16BE(n, this.at);
      this.at += 2;
    } else if (n < 0x100000000) {
      this.ensure(5);
      this.buf[this.at++] = m | 26;
      this.buf.writeUInt32BE(n, this.at);
      this.at += 4;
    } else {
      this.ensure(9);
      this.buf[this.at++] = m | 27;
      this.buf.writeBigUInt64BE(BigInt(n), this.at);
      this.at += 8;
    }
  }
}

/** The shortest float encoding that keeps the value (half, single, double). */
function writeFloat(out: Out, v: number): void {
  if (!Number.isFinite(v)) throw new CborError(`cannot encode ${v}: NaN and infinities have no JSON form`);
  const half = toHalf(v);
  if (half !== undefined) {
    out.byte(0xf9);
    out.byte(half >> 8);
    out.byte(half & 0xff);
    return;
  }
  const f32 = new DataView(new ArrayBuffer(4));
  f32.setFloat32(0, v);
  if (f32.getFloat32(0) === v) {
    out.byte(0xfa);
    out.bytes(new Uint8Array(f32.buffer));
    return;
  }
  const f64 = new DataView(new ArrayBuffer(8));
  f64.setFloat64(0, v);
  out.byte(0xfb);
  out.bytes(new Uint8Array(f64.buffer));
}

/** The IEEE half-precision bits of `v` when exact, else undefined. */
function toHalf(v: number): number | undefined {
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  const exp = Math.floor(Math.log2(a));
  if (exp >= -14 && exp <= 15) {
    const mant = a / 2 ** exp - 1;
    const bits = mant * 1024;
    if (Number.isInteger(bits)) return sign | ((exp + 15) << 10) | bits;
    return undefined;
  }
  if (exp < -14 && exp >= -24) {
    const bits = a / 2 ** -24;
    if (Number.isInteger(bits)) return sign | bits;
  }
  return undefined;
}

/**
 * A []byte value (base64 text in JSON): written as Kubernetes writes it, a byte string under tag
 * 22 ("expected later conversion to base64"), so that its JSON form is the base64 text again.
 */
export class CborBytes {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

/** Tag 22: the byte string that follows becomes base64 text when converted to JSON. */
const TAG_BASE64_LATER = 22;

function writeValue(out: Out, v: unknown, depth: number): void {
  if (depth > MAX_DEPTH) throw new CborError('nesting too deep');
  if (v === null || v === undefined) return out.byte(0xf6);
  if (v instanceof CborBytes) {
    out.head(6, TAG_BASE64_LATER);
    out.head(2, v.bytes.length);
    return out.bytes(v.bytes);
  }
  if (v === false) return out.byte(0xf4);
  if (v === true) return out.byte(0xf5);
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v >= 0 ? out.head(0, v) : out.head(1, -1 - v);
    return writeFloat(out, v);
  }
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    out.head(2, b.length);
    return out.bytes(b);
  }
  if (Array.isArray(v)) {
    out.head(4, v.length);
    for (const item of v) writeValue(out, item, depth + 1);
    return;
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    // Deterministic order: bytewise by the keys' encodings (shorter keys first, then by bytes).
    const keyed = entries.map(([k, x]) => [Buffer.from(k, 'utf8'), x] as const);
    keyed.sort(([a], [b]) => a.length - b.length || Buffer.compare(a, b));
    out.head(5, keyed.length);
    for (const [k, x] of keyed) {
      out.head(2, k.length);
      out.bytes(k);
      writeValue(out, x, depth + 1);
    }
    return;
  }
  throw new CborError(`cannot encode a ${typeof v}`);
}

/** One body: the self-described tag, then the value. */
export function encodeCbor(value: unknown): Buffer {
  const out = new Out();
  out.bytes(SELF_DESCRIBED);
  writeValue(out, value, 0);
  return Buffer.from(out.result());
}

// ---- decoding ----

const utf8 = new TextDecoder('utf-8', { fatal: true });

class In {
  readonly b: Uint8Array;
  at = 0;
  constructor(b: Uint8Array) {
    this.b = b;
  }
  need(n: number): void {
    if (this.at + n > this.b.length) throw new CborError('unexpected end of data');
  }
  u8(): number {
    this.need(1);
    return this.b[this.at++]!;
  }
  /** The argument of an initial byte; -1 for an indefinite length. */
  arg(info: number): number {
    if (info < 24) return info;
    const dv = new DataView(this.b.buffer, this.b.byteOffset, this.b.byteLength);
    switch (info) {
      case 24:
        return this.u8();
      case 25:
        this.need(2);
        this.at += 2;
        return dv.getUint16(this.at - 2);
      case 26:
        this.need(4);
        this.at += 4;
        return dv.getUint32(this.at - 4);
      case 27: {
        this.need(8);
        this.at += 8;
        const n = dv.getBigUint64(this.at - 8);
        if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new CborError('integer overflows int64 as JSON numbers hold it');
        return Number(n);
      }
      case 31:
        return -1;
      default:
        throw new CborError(`invalid additional information ${info}`);
    }
  }
  slice(n: number): Uint8Array {
    this.need(n);
    this.at += n;
    return this.b.subarray(this.at - n, this.at);
  }
}

const BREAK = Symbol('break');

/** The content of a string of `major` type (definite length `n`, or chunks when n < 0). */
function readChunks(input: In, major: 2 | 3, n: number): Uint8Array {
  const parts: Uint8Array[] = [];
  if (n >= 0) parts.push(input.slice(n));
  else {
    for (;;) {
      const ib = input.u8();
      if (ib === 0xff) break;
      if (ib >> 5 !== major) throw new CborError('indefinite-length string with a chunk of another type');
      const len = input.arg(ib & 0x1f);
      if (len < 0) throw new CborError('nested indefinite-length string');
      parts.push(input.slice(len));
    }
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function readBytes(input: In, n: number): Buffer {
  const bytes = readChunks(input, 2, n);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function readString(input: In, major: 2 | 3, n: number): string {
  const bytes = readChunks(input, major, n);
  if (major === 2) return Buffer.from(bytes).toString('utf8');
  try {
    return utf8.decode(bytes);
  } catch {
    throw new CborError('invalid UTF-8 in a text string');
  }
}

function readValue(input: In, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new CborError(`exceeded max nesting level ${MAX_DEPTH}`);
  const ib = input.u8();
  const major = ib >> 5;
  const info = ib & 0x1f;
  switch (major) {
    case 0:
      return input.arg(info);
    case 1: {
      const n = input.arg(info);
      return -1 - n;
    }
    case 2:
    case 3:
      return readString(input, major, input.arg(info));
    case 4: {
      const n = input.arg(info);
      const out: unknown[] = [];
      for (let i = 0; n < 0 || i < n; i++) {
        const v = readValue(input, depth + 1);
        if (v === BREAK) {
          if (n < 0) break;
          throw new CborError('unexpected break');
        }
        out.push(v);
        if (out.length > MAX_ITEMS) throw new CborError(`exceeded max number of elements ${MAX_ITEMS} for CBOR array`);
      }
      return out;
    }
    case 5: {
      const n = input.arg(info);
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      for (let i = 0; n < 0 || i < n; i++) {
        const k = readValue(input, depth + 1);
        if (k === BREAK) {
          if (n < 0) break;
          throw new CborError('unexpected break');
        }
        if (typeof k !== 'string') throw new CborError('map keys must be strings');
        if (seen.has(k)) throw new CborError(`found duplicate map key ${JSON.stringify(k)}`);
        seen.add(k);
        if (seen.size > MAX_ITEMS) throw new CborError(`exceeded max number of key-value pairs ${MAX_ITEMS} for CBOR map`);
        const v = readValue(input, depth + 1);
        if (v === BREAK) throw new CborError('unexpected break');
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    case 6: {
      // A tag: its content stands for it (the self-described tag, a date, …), except that a byte
      // string tagged for later base64 conversion (a []byte value) is read as its base64 text.
      const tag = input.arg(info);
      if (tag === TAG_BASE64_LATER) {
        input.need(1);
        const next = input.b[input.at]!;
        if (next >> 5 === 2) {
          input.at++;
          return readBytes(input, input.arg(next & 0x1f)).toString('base64');
        }
      }
      return readValue(input, depth + 1);
    }
    default: {
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22 || info === 23) return null;
      if (info === 31) return BREAK;
      let v: number;
      const dv = new DataView(input.b.buffer, input.b.byteOffset, input.b.byteLength);
      if (info === 25) {
        const h = (input.u8() << 8) | input.u8();
        const e = (h >> 10) & 0x1f;
        const m = h & 0x3ff;
        v = (h & 0x8000 ? -1 : 1) * (e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15));
      } else if (info === 26) {
        input.need(4);
        v = dv.getFloat32(input.at);
        input.at += 4;
      } else if (info === 27) {
        input.need(8);
        v = dv.getFloat64(input.at);
        input.at += 8;
      } else throw new CborError(`unsupported simple value ${info}`);
      if (!Number.isFinite(v)) throw new CborError('NaN and infinities are not allowed');
      return v;
    }
  }
}

/** One body (with or without the self-described tag); trailing bytes are an error. */
export function decodeCbor(bytes: Uint8Array): unknown {
  const input = new In(bytes);
  const v = readValue(input, 0);
  if (v === BREAK) throw new CborError('unexpected break');
  if (input.at !== bytes.length) throw new CborError(`${bytes.length - input.at} bytes left after the data item`);
  return v;
}
