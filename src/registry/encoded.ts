// An object as the store holds it: its JSON bytes (with metadata.resourceVersion spliced in) and,
// only when someone needs to look inside, its parsed form. Reads and watch fan-out pass stored
// bytes through without parsing or re-encoding; one watch event is serialized once however many
// watchers get it.

import type { KObject } from '../machinery/meta.ts';

export class EncodedObject {
  /** The JSON as consecutive byte ranges (zero-copy slices of the stored value). */
  private chunks: Buffer[] | undefined;
  /** Produces the chunks on first use (previous states that most watchers never show). */
  private produce: (() => Buffer[]) | undefined;
  private whole: Buffer | undefined;
  private parsed: KObject | undefined;
  private lines: Map<string, Buffer> | undefined;

  constructor(chunks: Buffer[] | (() => Buffer[]) | undefined, parsed?: KObject) {
    if (typeof chunks === 'function') this.produce = chunks;
    else this.chunks = chunks;
    this.parsed = parsed;
  }

  static of(obj: KObject): EncodedObject {
    return new EncodedObject(undefined, obj);
  }

  parts(): Buffer[] {
    if (this.chunks === undefined) {
      this.chunks = this.produce ? this.produce() : [Buffer.from(JSON.stringify(this.parsed))];
      this.produce = undefined;
    }
    return this.chunks;
  }

  bytes(): Buffer {
    if (this.whole === undefined) {
      const parts = this.parts();
      this.whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    }
    return this.whole;
  }

  json(): string {
    return this.bytes().toString('utf8');
  }

  /** The parsed object, shared: callers must not modify it (use `copy()` for that). */
  view(): KObject {
    return (this.parsed ??= JSON.parse(this.json()) as KObject);
  }

  copy(): KObject {
    return JSON.parse(this.json()) as KObject;
  }

  /** `{"type":…,"object":…}\n` as bytes, made once per event type. */
  watchLine(type: string): Buffer {
    this.lines ??= new Map();
    let line = this.lines.get(type);
    if (line === undefined) {
      line = Buffer.concat([Buffer.from(`{"type":"${type}","object":`), ...this.parts(), LINE_END]);
      this.lines.set(type, line);
    }
    return line;
  }
}

const LINE_END = Buffer.from('}\n');
