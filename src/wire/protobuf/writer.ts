// A protobuf byte writer tuned for this codec: one growing buffer, and a nested message's length
// written before its content by reserving room for it (the caller's guess, usually the size the
// same field needed last time) and moving the content when the guess was wrong. Short ASCII
// strings are copied by a loop, longer ones by Buffer's native UTF-8 writer. One writer is
// reused across calls (the encoder is synchronous), so an encode allocates only its result.

const INITIAL_SIZE = 64 * 1024;
/** A scratch buffer grown past this is dropped after use rather than kept. */
const KEEP_LIMIT = 8 * 1024 * 1024;

export class WireWriter {
  buf: Buffer = Buffer.allocUnsafe(INITIAL_SIZE);
  pos = 0;

  reset(): void {
    if (this.buf.length > KEEP_LIMIT) this.buf = Buffer.allocUnsafe(INITIAL_SIZE);
    this.pos = 0;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** One byte (a one-byte tag, or a zero value). */
  byte(b: number): this {
    this.ensure(1);
    this.buf[this.pos++] = b;
    return this;
  }

  /** An unsigned varint below 2^32 (tags, lengths, non-negative int32). */
  uint32(v: number): this {
    this.ensure(5);
    const buf = this.buf;
    let p = this.pos;
    while (v > 0x7f) {
      buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[p++] = v;
    this.pos = p;
    return this;
  }

  /** A signed 32-bit integer: negative values take ten bytes (sign-extended), as in Go. */
  int32(v: number): this {
    return v >= 0 ? this.uint32(v) : this.int64(v);
  }

  /** A signed 64-bit integer given as a JS number (exact up to 2^53). */
  int64(v: number): this {
    if (v >= 0 && v <= 0xffffffff) return this.uint32(v);
    this.ensure(10);
    if (v > 0) {
      // Up to 2^53: exact in floating point, seven bits at a time.
      const buf = this.buf;
      let p = this.pos;
      while (v > 0x7f) {
        buf[p++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      buf[p++] = v;
      this.pos = p;
      return this;
    }
    // Negative: two's complement in 64 bits, ten bytes.
    let big = BigInt.asUintN(64, BigInt(Math.trunc(v)));
    const buf = this.buf;
    let p = this.pos;
    while (big > 0x7fn) {
      buf[p++] = Number(big & 0x7fn) | 0x80;
      big >>= 7n;
    }
    buf[p++] = Number(big);
    this.pos = p;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  /** A length-prefixed UTF-8 string. */
  string(s: string): this {
    const n = s.length;
    if (n < 43) {
      // At most 3 bytes per UTF-16 unit: the length fits one byte.
      this.ensure(1 + 3 * n);
      const buf = this.buf;
      const start = this.pos;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          const written = buf.write(s, start + 1, 'utf8');
          buf[start] = written;
          this.pos = start + 1 + written;
          return this;
        }
        buf[p++] = c;
      }
      buf[start] = n;
      this.pos = p;
      return this;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.buf.write(s, this.pos, len, 'utf8');
    this.pos += len;
    return this;
  }

  /** A float64 as fixed 64 bits, little-endian. */
  double(v: number): this {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
    return this;
  }

  /** Length-prefixed bytes. */
  bytes(b: Uint8Array): this {
    this.uint32(b.length);
    this.raw(b);
    return this;
  }

  /** Bytes as they are, no length. */
  raw(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /**
   * A managed field set (nested objects with `{}` leaves) as compact JSON text, as
   * JSON.stringify would write it; written directly, it costs a fraction of JSON.stringify.
   * Anything that is not an object is left to JSON.stringify.
   */
  fieldSet(v: unknown): this {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return this.utf8(JSON.stringify(v));
    this.byte(0x7b); // {
    let first = true;
    // JSON-parsed objects have no inherited enumerable keys.
    for (const key in v) {
      const value = (v as Record<string, unknown>)[key];
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      if (!first) this.byte(0x2c); // ,
      first = false;
      this.jsonKey(key);
      this.fieldSet(value);
    }
    return this.byte(0x7d); // }
  }

  /**
   * A JSON string and its colon: printable ASCII copied, `"` and `\\` escaped (field sets name
   * list items as `k:{"uid":"…"}`), anything else via JSON.stringify.
   */
  private jsonKey(key: string): void {
    const n = key.length;
    this.ensure(2 * n + 3);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c === 0x22 || c === 0x5c) {
        buf[p++] = 0x5c;
        buf[p++] = c;
      } else if (c >= 0x20 && c < 0x7f) buf[p++] = c;
      else {
        this.utf8(JSON.stringify(key));
        this.byte(0x3a);
        return;
      }
    }
    buf[p++] = 0x22;
    buf[p++] = 0x3a; // :
    this.pos = p;
  }

  /** UTF-8 text with no length. */
  utf8(s: string): this {
    this.ensure(3 * s.length);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    return this;
  }

  /**
   * Starts a length-delimited value, reserving `reserve` bytes for its length (a guess: the
   * content is moved when the length needs another size). Pass the result to `ldelim`.
   */
  fork(reserve = 1): number {
    this.ensure(reserve);
    const mark = this.pos;
    this.pos += reserve;
    return mark;
  }

  /**
   * Ends the value started at `mark` with `reserve` bytes reserved, writing its length in
   * front of it; returns the length's size, a good reserve for the next value of its kind.
   */
  ldelim(mark: number, reserve = 1): number {
    const start = mark + reserve;
    const len = this.pos - start;
    const size = len < 0x80 ? 1 : len < 0x4000 ? 2 : len < 0x200000 ? 3 : len < 0x10000000 ? 4 : 5;
    if (size !== reserve) {
      if (size > reserve) this.ensure(size - reserve);
      this.buf.copyWithin(mark + size, start, this.pos);
      this.pos += size - reserve;
    }
    const out = this.buf;
    let v = len;
    let p = mark;
    while (v > 0x7f) {
      out[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[p] = v;
    return size;
  }

  /** A copy of what was written. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }
}
