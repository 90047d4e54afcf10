// The fast path of YAML reading: js-yaml's event parser, and a constructor of our own that gives
// exactly the values the `yaml` library's `toJS` gives for the same text (the reading clients
// have been answered with so far, which tests pin down), about ten times faster on large bodies.
//
// It reads the YAML most clients write: plain, quoted and block scalars in block or flow
// collections. Anything else (a parse error, a tag, an anchor or alias, a merge key `<<`, a
// directive, a collection as a map key, several documents where one is expected) is left to the
// `yaml` library: `readYamlFast` answers undefined, and the caller reads the text the slow way,
// which then gives today's value or today's error message.

import type { Event, ScalarEvent } from 'js-yaml';
import { jsYaml } from './yaml.ts';

/**
 * How plain scalars resolve: '1.1' as the request-body reader configures the `yaml` library
 * (kube-apiserver's YAML 1.1: yes/no/on/off booleans, 0777 octal, no timestamps, no base 60,
 * floats need a digit); 'core' as its default YAML 1.2 core schema.
 */
export type PlainScalars = '1.1' | 'core';

export interface FastRead {
  documents: unknown[];
  /** Whether some map repeats a key (looked for only when asked). */
  repeated: boolean;
}

export interface FastReadOptions {
  scalars: PlainScalars;
  /** Whether more than one document may be read. */
  multi: boolean;
  /** Whether to look for repeated keys. */
  duplicates: boolean;
  /** Nesting deeper than this is left to the slow path (which has its own limits). */
  maxDepth: number;
}

// js-yaml's event types (EVENT_ID) and its plain scalar style.
const DOCUMENT = 1;
const SEQUENCE = 2;
const MAPPING = 3;
const SCALAR = 4;
const POP = 6;
const PLAIN = 1;
const NONE = -1;

const SEQ = 0;
const MAP = 1;
const DOC = 2;

interface Frame {
  kind: typeof SEQ | typeof MAP | typeof DOC;
  value: unknown;
  /** A map's key waiting for its value. */
  key: unknown;
  hasKey: boolean;
  /** A map's keys so far, as resolved (before they become property names). */
  seen: Set<unknown> | undefined;
}

const LONE_CR = /\r(?!\n)/;
const TAB_INDENT = /(?:^|\n)[ \t]*\t/;
const DOCUMENT_END = /(?:^|\n)\.\.\.(?:[ \t\r\n]|$)/;
const INDENTED_MARKER = /(?:^|\n)[ \t]+---/;
const BLOCK_INDENT = /[|>][-+]?[1-9][-+]?[ \t]*(?:#[^\n]*)?(?:\r?\n|$)/;
const EMPTY_KEY = /(?:^|\n)[ \t]*(?:- +)*:(?:[ \t\r\n]|$)/;

/** The text of a document read the fast way, or undefined when it must be read by the `yaml` library. */
export function readYamlFast(text: string, o: FastReadOptions): FastRead | undefined {
  // Where the two parsers read the same text differently: a lone CR is a line break to js-yaml,
  // content to the `yaml` library; a tab in a line's indentation is refused there only.
  if (text.includes('\r') && LONE_CR.test(text)) return undefined;
  if (text.includes('\t') && TAB_INDENT.test(text)) return undefined;
  // Constructs clients hardly write, where the two disagree too: a byte order mark, a document
  // end marker (`...`), an indented `---`, a map entry with an empty key (`: value`), a block
  // scalar's indentation indicator (`|2`).
  if (text.includes('\ufeff') || (text.includes('...') && DOCUMENT_END.test(text)) || (text.includes('---') && INDENTED_MARKER.test(text))) return undefined;
  if (EMPTY_KEY.test(text) || BLOCK_INDENT.test(text)) return undefined;
  const lib = jsYaml();
  let events: Event[];
  try {
    events = lib.parseEvents(text, { maxDepth: o.maxDepth });
  } catch {
    return undefined;
  }
  const { getScalarValue } = lib;
  const resolve = o.scalars === '1.1' ? plain11 : plainCore;
  const documents: unknown[] = [];
  const stack: Frame[] = [];
  let repeated = false;
  let top: Frame | undefined;

  const add = (value: unknown): void => {
    const f = top!;
    if (f.kind === SEQ) {
      (f.value as unknown[]).push(value);
    } else if (f.kind === MAP) {
      if (!f.hasKey) {
        f.key = value;
        f.hasKey = true;
        return;
      }
      const key = f.key;
      f.hasKey = false;
      f.key = undefined;
      if (o.duplicates && !repeated && !(typeof key === 'number' && Number.isNaN(key))) {
        const seen = (f.seen ??= new Set());
        if (seen.has(key)) repeated = true;
        else seen.add(key);
      }
      // As the `yaml` library names properties: null is '', other scalars their string.
      const name = key === null ? '' : String(key);
      const map = f.value as Record<string, unknown>;
      if (name in map) Object.defineProperty(map, name, { value, writable: true, enumerable: true, configurable: true });
      else map[name] = value;
    } else {
      f.value = value;
      f.hasKey = true;
    }
  };
  const atKey = (): boolean => top !== undefined && top.kind === MAP && !top.hasKey;

  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    switch (e.type) {
      case SCALAR: {
        const s = e as ScalarEvent;
        if (s.tagStart !== NONE || s.anchorStart !== NONE) return undefined;
        const source = getScalarValue(text, s);
        if (s.style !== PLAIN) {
          add(source);
          break;
        }
        // A merge key: its semantics are the `yaml` library's own.
        if (o.scalars === '1.1' && source === '<<' && atKey()) return undefined;
        add(resolve(source));
        break;
      }
      case SEQUENCE:
      case MAPPING: {
        if (e.tagStart !== NONE || e.anchorStart !== NONE || atKey()) return undefined;
        const f: Frame = { kind: e.type === SEQUENCE ? SEQ : MAP, value: e.type === SEQUENCE ? [] : {}, key: undefined, hasKey: false, seen: undefined };
        stack.push(f);
        top = f;
        break;
      }
      case DOCUMENT: {
        if (e.directives.length || (!o.multi && documents.length)) return undefined;
        const f: Frame = { kind: DOC, value: null, key: undefined, hasKey: false, seen: undefined };
        stack.push(f);
        top = f;
        break;
      }
      case POP: {
        const f = stack.pop()!;
        top = stack[stack.length - 1];
        if (f.kind === DOC) documents.push(f.value);
        else add(f.value);
        break;
      }
      default:
        // An alias.
        return undefined;
    }
  }
  if (!o.multi && documents.length !== 1) return undefined;
  return { documents, repeated };
}

// YAML 1.1 plain scalars, as the request-body reader's `yaml` options resolve them (the first
// matching test of its schema, in the schema's order).
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const TRUE_11 = /^(?:Y|y|[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const FALSE_11 = /^(?:N|n|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
const BIN_11 = /^[-+]?0b[0-1_]+$/;
const OCT_11 = /^[-+]?0[0-7_]+$/;
const INT_11 = /^[-+]?[0-9][0-9_]*$/;
const HEX_11 = /^[-+]?0x[0-9a-fA-F_]+$/;
const NAN_INF = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXP_11 = /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$/;
const FRACTION_11 = /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*\.[0-9_]*)$/;

/** An integer as the `yaml` library's YAML 1.1 tags read it: sign, prefix of `skip` characters, underscores. */
function int11(s: string, skip: number, radix: number): number {
  const sign = s[0];
  const n = parseInt(s.substring(sign === '-' || sign === '+' ? skip + 1 : skip).replace(/_/g, ''), radix);
  return sign === '-' ? -1 * n : n;
}

const nanInf = (s: string): number => (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity);

function plain11(s: string): unknown {
  if (s === '') return null;
  switch (s.charCodeAt(0)) {
    case 0x7e: // ~
      return s === '~' ? null : s;
    case 0x6e: // n
    case 0x4e: // N
      return NULL.test(s) ? null : FALSE_11.test(s) ? false : s;
    case 0x66: // f
    case 0x46: // F
      return FALSE_11.test(s) ? false : s;
    case 0x6f: // o
    case 0x4f: // O
      return TRUE_11.test(s) ? true : FALSE_11.test(s) ? false : s;
    case 0x74: // t
    case 0x54: // T
    case 0x79: // y
    case 0x59: // Y
      return TRUE_11.test(s) ? true : s;
    case 0x2b: // +
    case 0x2d: // -
    case 0x2e: // .
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: // 0-4
    case 0x35: case 0x36: case 0x37: case 0x38: case 0x39: // 5-9
      if (BIN_11.test(s)) return int11(s, 2, 2);
      if (OCT_11.test(s)) return int11(s, 1, 8);
      if (INT_11.test(s)) return int11(s, 0, 10);
      if (HEX_11.test(s)) return int11(s, 2, 16);
      if (NAN_INF.test(s)) return nanInf(s);
      if (EXP_11.test(s) || FRACTION_11.test(s)) return parseFloat(s.replace(/_/g, ''));
      return s;
  }
  return s;
}

// YAML 1.2 core schema plain scalars, as the `yaml` library's default schema resolves them.
const BOOL_CORE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const OCT_CORE = /^0o[0-7]+$/;
const INT_CORE = /^[-+]?[0-9]+$/;
const HEX_CORE = /^0x[0-9a-fA-F]+$/;
const EXP_CORE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FRACTION_CORE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

function plainCore(s: string): unknown {
  if (s === '') return null;
  switch (s.charCodeAt(0)) {
    case 0x7e: // ~
    case 0x6e: // n
    case 0x4e: // N
      return NULL.test(s) ? null : s;
    case 0x74: // t
    case 0x54: // T
    case 0x66: // f
    case 0x46: // F
      return BOOL_CORE.test(s) ? s[0] === 't' || s[0] === 'T' : s;
    case 0x2b: // +
    case 0x2d: // -
    case 0x2e: // .
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: // 0-4
    case 0x35: case 0x36: case 0x37: case 0x38: case 0x39: // 5-9
      if (OCT_CORE.test(s)) return parseInt(s.substring(2), 8);
      if (INT_CORE.test(s)) return parseInt(s, 10);
      if (HEX_CORE.test(s)) return parseInt(s.substring(2), 16);
      if (NAN_INF.test(s)) return nanInf(s);
      if (EXP_CORE.test(s) || FRACTION_CORE.test(s)) return parseFloat(s);
      return s;
  }
  return s;
}
