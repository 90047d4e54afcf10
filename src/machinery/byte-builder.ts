// Bytes put together in one buffer, as an encoder writes them: the buffer grows as needed (what it
// holds copied into the larger one), and can be emptied and filled again.

export class ByteBuilder {
  buf: Buffer;
  /** How many bytes are written. */
  at = 0;
  constructor(size = 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }
  /** Room for `n` bytes more. */
  ensure(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.at++] = b;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }
  /** The bytes `b[0, end)` (no view of them made). */
  copyFrom(b: Buffer, end: number): void {
    this.ensure(end);
    this.at += b.copy(this.buf, this.at, 0, end);
  }
  /** A string, as UTF-8. */
  text(s: string): void {
    this.ensure(s.length * 3);
    this.at += this.buf.write(s, this.at, 'utf8');
  }
  /** A string of ASCII characters only, as they are (no string made for it, none encoded). */
  ascii(s: string): void {
    this.ensure(s.length);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < s.length; i++) b[at++] = s.charCodeAt(i);
    this.at = at;
  }
  /** What is written (a view of the buffer, valid until it is written again). */
  result(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}
