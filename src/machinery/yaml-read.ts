// The fast path of YAML reading: js-yaml's event parser, and a constructor of our own that gives
// exactly the values the `yaml` library's `toJS` gives for the same text (the reading clients
// have been answered with so far, which tests pin down), about ten times faster on large bodies.
//
// It reads the YAML most clients write: plain, quoted and block scalars in block or flow
// collections, anchors and aliases. An alias is its anchor's value itself, shared, never a copy,
// and aliases are bounded as the `yaml` library bounds them: each use of an anchor multiplies its
// uses so far by the values it stands for (the aliases inside it counted as theirs), and a product
// above 100 refuses the text. Anything else (a parse error, a tag, a merge key `<<`, a directive,
// a collection as a map key, an alias as a key or inside its own anchor, an anchor name of other
// characters than letters, digits, `-` and `_`, a line that starts as an empty key `: ` outside a
// quoted value, several documents where one is expected) is left to the
// `yaml` library: `readYamlFast` answers undefined, and the caller reads the text the slow way,
// which then gives today's value or today's error message.

import type { Event, MappingEvent, ScalarEvent } from 'js-yaml';
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
  /**
   * Whether aliases beyond the bound are an error (`YamlAliasError`, with the `yaml` library's
   * message); otherwise the text is left to the library.
   */
  aliasErrors: boolean;
}

/** Aliases used beyond the bound: the `yaml` library's error. */
export class YamlAliasError extends Error {}

/** The `yaml` library's default `maxAliasCount`, which the request-body reader also uses. */
const MAX_ALIAS_COUNT = 100;

// js-yaml's event types (EVENT_ID) and its plain scalar style.
const DOCUMENT = 1;
const SEQUENCE = 2;
const MAPPING = 3;
const SCALAR = 4;
const ALIAS = 5;
const POP = 6;
const PLAIN = 1;
const NONE = -1;
/** js-yaml's block collection style. */
const BLOCK = 1;

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
  anchor: Anchor | undefined;
}

/** An anchored node, as the `yaml` library keeps it while converting a document. */
interface Anchor {
  value: unknown;
  /** 1, and one more for each alias of it. */
  count: number;
  /** The values it stands for, aliases inside counted as theirs (0: not known yet). */
  aliasCount: number;
  /** Its events: [start, end); end is -1 while a collection is open. */
  start: number;
  end: number;
  /** Its aliasCount is 0 for good. */
  empty: boolean;
}

const ANCHOR_NAME = /^[A-Za-z0-9_-]+$/;
const SPACE_AFTER = /^(?:[ \t\r\n]|)$/;
const AFTER_ALIAS = /^(?:[ \t\r\n,\]}]|)$/;
const LONE_CR = /\r(?!\n)/;
const TAB_INDENT = /(?:^|\n)[ \t]*\t/;
const DOCUMENT_END = /(?:^|\n)\.\.\.(?:[ \t\r\n]|$)/;
const INDENTED_MARKER = /(?:^|\n)[ \t]+---/;
const BLOCK_INDENT = /[|>][-+]?[1-9][-+]?[ \t]*(?:#[^\n]*)?(?:\r?\n|$)/;
const EMPTY_KEY = /(?:^|\n)[ \t]*(?:- +)*:(?:[ \t\r\n]|$)/;
/** Each such line's colon. */
const EMPTY_KEY_COLONS = /(?:^|\n)[ \t]*(?:- +)*(:)(?=[ \t\r\n]|$)/dg;
const SINGLE_QUOTED = 2;
const DOUBLE_QUOTED = 3;

/** The text of a document read the fast way, or undefined when it must be read by the `yaml` library. */
export function readYamlFast(text: string, o: FastReadOptions): FastRead | undefined {
  // Where the two parsers read the same text differently: a lone CR is a line break to js-yaml,
  // content to the `yaml` library; a tab in a line's indentation is refused by the library only.
  if (text.includes('\r') && LONE_CR.test(text)) return undefined;
  if (text.includes('\t') && TAB_INDENT.test(text)) return undefined;
  // Constructs clients hardly write, where the two disagree too: a byte order mark, a document
  // end marker (`...`), an indented `---`, a block
  // scalar's indentation indicator (`|2`).
  if (text.includes('\ufeff') || (text.includes('...') && DOCUMENT_END.test(text)) || (text.includes('---') && INDENTED_MARKER.test(text))) return undefined;
  if (BLOCK_INDENT.test(text)) return undefined;
  // A line that starts as an empty key (`: `) is read the fast way only when it is inside a quoted
  // value (a long expression folded over lines, as generated CRDs have): looked at once parsed.
  const colonLines = EMPTY_KEY.test(text);
  /** With such lines: the spans of quoted scalars that are not keys, in the text's order. */
  const quoted: number[] = [];
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

  let anchors = new Map<string, Anchor>();
  /** The anchor each alias (by event index) stood for. */
  const aliased = new Map<number, Anchor>();
  const anchor = (e: { anchorStart: number; anchorEnd: number }, value: unknown, start: number, end: number): Anchor | undefined => {
    const name = text.slice(e.anchorStart, e.anchorEnd);
    // Names of other characters, or not followed by a space, are read differently by the two parsers.
    if (!ANCHOR_NAME.test(name) || !SPACE_AFTER.test(text.charAt(e.anchorEnd))) return undefined;
    const a: Anchor = { value, count: 1, aliasCount: 0, start, end, empty: false };
    anchors.set(name, a);
    return a;
  };
  /** As the `yaml` library counts an anchor's values: the most of any value or alias inside it. */
  const aliasCount = (a: Anchor): number => {
    if (a.empty) return 0;
    if (events[a.start]!.type === SCALAR) return 1;
    let most = 0;
    for (let j = a.start + 1; j < a.end - 1; j++) {
      const t = events[j]!.type;
      if (t === SCALAR) {
        if (most < 1) most = 1;
      } else if (t === ALIAS) {
        const target = aliased.get(j)!;
        const n = target.count * target.aliasCount;
        if (n > most) most = n;
      }
    }
    // An anchor once aliased counts at least 1 unless it holds nothing but empty collections and
    // aliases of such: then it counts 0 for good, and is not looked through again.
    if (most === 0) a.empty = true;
    return most;
  };

  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    switch (e.type) {
      case SCALAR: {
        const s = e as ScalarEvent;
        if (s.tagStart !== NONE) return undefined;
        if (colonLines && (s.style === SINGLE_QUOTED || s.style === DOUBLE_QUOTED) && !atKey()) quoted.push(s.valueStart, s.valueEnd);
        const source = getScalarValue(text, s);
        let value: unknown;
        if (s.style !== PLAIN) value = source;
        // A merge key: its semantics are the `yaml` library's own.
        else if (o.scalars === '1.1' && source === '<<' && atKey()) return undefined;
        else value = resolve(source);
        if (s.anchorStart !== NONE && !anchor(s, value, i, i + 1)) return undefined;
        add(value);
        break;
      }
      case SEQUENCE:
      case MAPPING: {
        if (e.tagStart !== NONE || atKey()) return undefined;
        // A block mapping as a map's value starts on a line of its own: js-yaml reads one that
        // follows its key on the same line (after an anchor, `a: &x b: 1`), which the `yaml`
        // library (and Kubernetes' decoder) refuses.
        if (e.type === MAPPING && (e as MappingEvent).style === BLOCK && top?.kind === MAP && !lineStartsAt(text, (e as MappingEvent).start)) return undefined;
        const f: Frame = { kind: e.type === SEQUENCE ? SEQ : MAP, value: e.type === SEQUENCE ? [] : {}, key: undefined, hasKey: false, seen: undefined, anchor: undefined };
        if (e.anchorStart !== NONE && !(f.anchor = anchor(e, f.value, i, -1))) return undefined;
        stack.push(f);
        top = f;
        break;
      }
      case ALIAS: {
        const name = text.slice(e.anchorStart, e.anchorEnd);
        const a = anchors.get(name);
        // An undefined alias, one inside its own anchor and one as a key are the library's.
        if (!a || a.end === NONE || atKey() || !AFTER_ALIAS.test(text.charAt(e.anchorEnd))) return undefined;
        a.count += 1;
        if (a.aliasCount === 0) a.aliasCount = aliasCount(a);
        if (a.count * a.aliasCount > MAX_ALIAS_COUNT) return aliasesExceeded(events, i + 1, o);
        aliased.set(i, a);
        add(a.value);
        break;
      }
      case DOCUMENT: {
        if (e.directives.length || (!o.multi && documents.length)) return undefined;
        anchors = new Map();
        const f: Frame = { kind: DOC, value: null, key: undefined, hasKey: false, seen: undefined, anchor: undefined };
        stack.push(f);
        top = f;
        break;
      }
      case POP: {
        // The end of a collection or document.
        const f = stack.pop()!;
        top = stack[stack.length - 1];
        if (f.anchor) f.anchor.end = i + 1;
        if (f.kind === DOC) documents.push(f.value);
        else add(f.value);
        break;
      }
      default:
        return undefined;
    }
  }
  if (!o.multi && documents.length !== 1) return undefined;
  if (colonLines && !colonsQuoted(text, quoted)) return undefined;
  return { documents, repeated };
}

/** Whether only indentation precedes offset `at` on its line. */
function lineStartsAt(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) return true;
    if (c !== 0x20) return false;
  }
  return true;
}

/** Whether the colon of every line that starts as an empty key is inside one of the quoted spans ([start, end) pairs in order). */
function colonsQuoted(text: string, spans: readonly number[]): boolean {
  let i = 0;
  for (const m of text.matchAll(EMPTY_KEY_COLONS)) {
    const at = m.indices![1]![0];
    while (i < spans.length && spans[i + 1]! <= at) i += 2;
    if (i >= spans.length || spans[i]! > at) return false;
  }
  return true;
}

/**
 * Aliases went beyond the bound. The `yaml` library reports it when it converts the document,
 * after its parse and tag checks: when the rest holds nothing the fast reader leaves to the
 * library (a tag, a directive, another document), that is the answer; otherwise the library's.
 */
function aliasesExceeded(events: Event[], from: number, o: FastReadOptions): undefined {
  if (!o.aliasErrors) return undefined;
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === DOCUMENT || ((e.type === SCALAR || e.type === SEQUENCE || e.type === MAPPING) && e.tagStart !== NONE)) return undefined;
  }
  throw new YamlAliasError('Excessive alias count indicates a resource exhaustion attack');
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
