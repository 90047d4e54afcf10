// An object as the store holds it: its JSON text (with metadata.resourceVersion set) and, only
// when someone needs to look inside, its parsed form. Reads and watch fan-out pass stored bytes
// through without parsing; one watch event is serialized once however many watchers get it.

import type { KObject } from '../machinery/meta.ts';

export class EncodedObject {
  private text: string | undefined;
  /** Produces the text on first use (previous states that most watchers never show). */
  private produce: (() => string) | undefined;
  private parsed: KObject | undefined;
  private lines: Map<string, string> | undefined;

  constructor(text: string | (() => string) | undefined, parsed?: KObject) {
    if (typeof text === 'function') this.produce = text;
    else this.text = text;
    this.parsed = parsed;
  }

  static of(obj: KObject): EncodedObject {
    return new EncodedObject(undefined, obj);
  }

  json(): string {
    if (this.text === undefined) {
      this.text = this.produce ? this.produce() : JSON.stringify(this.parsed);
      this.produce = undefined;
    }
    return this.text;
  }

  /** The parsed object, shared: callers must not modify it (use `copy()` for that). */
  view(): KObject {
    return (this.parsed ??= JSON.parse(this.json()) as KObject);
  }

  copy(): KObject {
    return JSON.parse(this.json()) as KObject;
  }

  /** `{"type":…,"object":…}\n`, made once per event type. */
  watchLine(type: string): string {
    this.lines ??= new Map();
    let line = this.lines.get(type);
    if (line === undefined) {
      line = `{"type":"${type}","object":${this.json()}}\n`;
      this.lines.set(type, line);
    }
    return line;
  }
}
