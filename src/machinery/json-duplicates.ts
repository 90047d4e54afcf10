// Duplicate object keys in a JSON text. JSON.parse silently keeps the last value of a repeated key,
// while Kubernetes reports each repetition (as a Strict error or a Warn warning), so the raw text has
// to be scanned separately. The text is assumed valid (JSON.parse already accepted it), which lets
// the scanner track only the structure it needs: containers, object keys and array positions.

import { child } from './field-errors.ts';

interface Frame {
  parent: Frame | null;
  /** The key or index under which this container sits in its parent (unused for the root). */
  segment: string | number;
  isObject: boolean;
  /** Object: the next string is a key (after `{` or `,`), not a value (after `:`). */
  expectKey: boolean;
  /** Array: position of the current element. */
  index: number;
  /** Object: the key whose value is being read (the segment of a container opened as that value). */
  key: string;
  /**
   * Object: keys seen so far. Most objects have a handful of keys, for which a linear scan of an
   * array beats allocating and hashing into a Set; larger objects switch to a Set so the scan
   * stays linear overall.
   */
  keys: string[] | Set<string> | undefined;
  /** The container's own path, computed only when a duplicate below it needs it. */
  path: string | undefined;
  /** Object: the keys already reported as repeated (each is reported once). */
  reported: Set<string> | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/**
 * Paths of the repeated object keys in `text`, in document order of their first repetition, each
 * once however often it repeats (Kubernetes' decoder dedupes its strict errors too):
 * `kind`, `metadata.labels.a`, `spec.taints[0].key`. Keys are compared after unescaping, so
 * `"a"` and `"\u0061"` are the same key. The scan stops at `limit` paths.
 */
export function findDuplicateKeys(text: string, limit = Infinity): string[] {
  const found: string[] = [];
  const n = text.length;
  let top: Frame | null = null;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      if (top !== null && top.isObject && top.expectKey) {
        const raw = text.slice(i + 1, end);
        // Only escaped keys pay for a real decode; JSON.parse of the quoted slice is exact because
        // the slice is a valid JSON string literal.
        const key = raw.indexOf('\\') === -1 ? raw : (JSON.parse(text.slice(i, end + 1)) as string);
        if (seenBefore(top, key) && !(top.reported ??= new Set()).has(key)) {
          top.reported.add(key);
          found.push(child(pathOf(top), key));
          if (found.length >= limit) return found;
        }
        top.key = key;
      }
      i = end + 1;
      continue;
    }
    switch (c) {
      case LBRACE:
      case LBRACKET:
        top = {
          parent: top,
          segment: top === null ? '' : top.isObject ? top.key : top.index,
          isObject: c === LBRACE,
          expectKey: true,
          index: 0,
          key: '',
          keys: undefined,
          path: top === null ? '' : undefined,
          reported: undefined,
        };
        break;
      case RBRACE:
      case RBRACKET:
        if (top !== null) top = top.parent;
        break;
      case COMMA:
        if (top !== null) {
          if (top.isObject) top.expectKey = true;
          else top.index++;
        }
        break;
      case COLON:
        if (top !== null) top.expectKey = false;
        break;
      default:
        // Whitespace, numbers, true/false/null: nothing structural.
        break;
    }
    i++;
  }
  return found;
}

const SMALL_OBJECT = 8;

/** Records `key` in the object frame; true when it was already there. */
function seenBefore(frame: Frame, key: string): boolean {
  const keys = frame.keys;
  if (keys === undefined) {
    frame.keys = [key];
    return false;
  }
  if (Array.isArray(keys)) {
    for (let k = 0; k < keys.length; k++) if (keys[k] === key) return true;
    if (keys.length < SMALL_OBJECT) keys.push(key);
    else frame.keys = new Set(keys).add(key);
    return false;
  }
  if (keys.has(key)) return true;
  keys.add(key);
  return false;
}

/**
 * Whether containers in `text` (valid JSON) nest deeper than `max`. A scan of the text, without
 * allocating: walking the parsed value instead costs as much as parsing it again.
 */
export function jsonNestingExceeds(text: string, max: number): boolean {
  const n = text.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (c === LBRACE || c === LBRACKET) {
      if (++depth > max) return true;
    } else if (c === RBRACE || c === RBRACKET) depth--;
  }
  return false;
}

/** Index of the quote closing the string literal that opens at `start`. */
function closingQuote(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    j = text.indexOf('"', j);
    if (j === -1) return text.length; // unreachable for valid JSON; keeps the scan terminating
    // A quote is escaped when an odd number of backslashes precede it. Each backslash run is
    // counted once, since runs end at the previous quote at the latest, so this stays linear.
    let k = j - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) return j;
    j++;
  }
}

/**
 * The path of a container. Computed lazily and memoised per frame, so the paths of many
 * duplicates under the same deep container share one computation (and, through string
 * concatenation, one prefix) instead of rebuilding it from the root each time.
 */
function pathOf(frame: Frame): string {
  if (frame.path !== undefined) return frame.path;
  const chain: Frame[] = [];
  let f: Frame | null = frame;
  while (f !== null && f.path === undefined) {
    chain.push(f);
    f = f.parent;
  }
  let base = f === null ? '' : (f.path as string);
  for (let k = chain.length - 1; k >= 0; k--) {
    const g = chain[k];
    base = g.parent === null ? '' : child(base, g.segment);
    g.path = base;
  }
  return base;
}
