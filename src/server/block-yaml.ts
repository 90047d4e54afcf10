// A reader of the YAML that CRD generators write (controller-gen, kubebuilder, helm's rendered
// output): block mappings and sequences, plain, quoted and literal scalars, comments and `---`
// between documents. It gives what the YAML library gives for these documents (YAML 1.2, core
// schema) many times faster, and gives up — undefined, the caller then asks the library — on
// anything else: flow collections other than `[]` and `{}`, anchors, aliases, tags, directives,
// folded scalars, kept line breaks, explicit keys, tabs, carriage returns, indentation it does not expect, and any
// text the library would refuse. So a file it reads means the same as it does to the library,
// and a file it does not read is read by the library, with its errors.

class Unsupported extends Error {}

const bail = (): never => {
  throw new Unsupported();
};

/** The documents of `text` (null for an empty one), or undefined when the text is not of the block subset read here. */
export function parseBlockYaml(text: string): unknown[] | undefined {
  if (/[\t\r\u0085\u2028\u2029\ufeff]/.test(text)) return undefined;
  try {
    return new BlockReader(text).documents();
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** A plain scalar's value under the core schema, tested in the library's order. */
function resolvePlain(s: string): unknown {
  // Most plain scalars are words: none of the patterns can match them.
  const c = s.charCodeAt(0);
  const maybe = s === '' || c === 0x7e /* ~ */ || c === 0x2b /* + */ || c === 0x2d /* - */ || c === 0x2e /* . */ || (c >= 0x30 && c <= 0x39) || 'nNtTfF'.includes(s[0]!);
  if (!maybe) return s;
  if (NULL.test(s)) return null;
  if (BOOL.test(s)) return s[0] === 't' || s[0] === 'T';
  if (INT_OCT.test(s)) return parseInt(s.substring(2), 8);
  if (INT.test(s)) return parseInt(s, 10);
  if (INT_HEX.test(s)) return parseInt(s.substring(2), 16);
  if (FLOAT_NAN.test(s)) bail();
  if (FLOAT_EXP.test(s) || FLOAT.test(s)) return parseFloat(s);
  return s;
}

/** Characters a plain scalar may not start with (the indicators), beside `-`, `?` and `:` followed by a space. */
const INDICATORS = new Set([...',[]{}#&*!|>\'"%@`']);

const ESCAPES: Record<string, string> = {
  '0': '\0', a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ', '"': '"', '/': '/', '\\': '\\',
  N: '\u0085', _: '\u00a0', L: '\u2028', P: '\u2029',
};
const HEX_ESCAPES: Record<string, number> = { x: 2, u: 4, U: 8 };

/** Without the spaces at its start (only spaces: JavaScript's trim takes more than YAML's white space). */
const trimStart = (s: string): string => s.slice(indentOf(s));

function trimEnd(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x20) end--;
  return s.slice(0, end);
}

const indentOf = (line: string): number => {
  let n = 0;
  while (line.charCodeAt(n) === 0x20) n++;
  return n;
};

/** A line of spaces only (or none). */
const isEmpty = (line: string): boolean => indentOf(line) === line.length;

/** A line that holds nothing for the structure: spaces, or a comment. */
const isBlank = (line: string): boolean => {
  const n = indentOf(line);
  return n === line.length || line.charCodeAt(n) === 0x23;
};

const isMarker = (line: string): boolean => line.startsWith('---') || line.startsWith('...');

/** `-` alone or followed by a space: a sequence entry. */
const isEntry = (content: string): boolean => content[0] === '-' && (content.length === 1 || content[1] === ' ');

class BlockReader {
  private readonly lines: string[];
  private i = 0;

  constructor(text: string) {
    this.lines = text.split('\n');
  }

  documents(): unknown[] {
    const docs: unknown[] = [];
    const n = this.lines.length;
    for (;;) {
      this.skipBlank();
      if (this.i >= n) return docs;
      const line = this.lines[this.i]!;
      if (line.startsWith('%') || line.startsWith('...')) bail();
      let marked = false;
      if (line.startsWith('---')) {
        if (!/^---[ ]*(?:#.*)?$/.test(line)) bail();
        this.i++;
        marked = true;
        this.skipBlank();
      }
      if (this.i >= n || this.lines[this.i]!.startsWith('---')) {
        if (marked) docs.push(null);
        continue;
      }
      docs.push(this.node(-1, false));
      this.skipBlank();
      if (this.i < n && !this.lines[this.i]!.startsWith('---')) bail();
    }
  }

  private skipBlank(): void {
    while (this.i < this.lines.length && isBlank(this.lines[this.i]!)) this.i++;
  }

  /** The block node on the lines from here indented more than `parent` (null when none is); `sameIndentSequence`: a sequence at `parent` is the node (a mapping's value). */
  private node(parent: number, sameIndentSequence: boolean): unknown {
    this.skipBlank();
    if (this.i >= this.lines.length) return null;
    const line = this.lines[this.i]!;
    const indent = indentOf(line);
    if (indent === 0 && isMarker(line)) return null;
    const content = line.slice(indent);
    if (indent < parent || (indent === parent && !(sameIndentSequence && isEntry(content)))) return null;
    if (isEntry(content)) return this.sequence(indent);
    if (this.entryKey(content) !== undefined) return this.mapping(indent, indent);
    return this.value(content, indent, parent);
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      this.skipBlank();
      if (this.i >= this.lines.length) return out;
      const line = this.lines[this.i]!;
      const at = indentOf(line);
      if (at < indent || (at === 0 && isMarker(line))) return out;
      if (at > indent) bail();
      if (!isEntry(line.slice(at))) return out;
      let col = at + 1;
      while (line.charCodeAt(col) === 0x20) col++;
      const rest = line.slice(col);
      if (rest === '' && col > at + 1) bail();
      if (rest === '' || rest[0] === '#') {
        this.i++;
        out.push(this.node(indent, false));
      } else if (isEntry(rest)) bail();
      else if (this.entryKey(rest) !== undefined) out.push(this.mapping(col, col, true));
      else out.push(this.value(rest, col, indent));
    }
  }

  /** A mapping whose keys are at `indent`; `compact`: its first key follows a sequence's `-` on the current line, at column `firstCol`. */
  private mapping(indent: number, firstCol: number, compact = false): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let first = true; ; first = false) {
      let content: string;
      if (first && compact) content = this.lines[this.i]!.slice(firstCol);
      else {
        this.skipBlank();
        if (this.i >= this.lines.length) return out;
        const line = this.lines[this.i]!;
        const at = indentOf(line);
        if (at < indent || (at === 0 && isMarker(line))) return out;
        if (at > indent) bail();
        content = line.slice(at);
        if (isEntry(content)) {
          // A sequence at a mapping's indentation is the value of the key before it, read there.
          bail();
        }
      }
      const entry = this.entryKey(content) ?? bail();
      const [key, rest] = entry;
      if (key === '__proto__' || key === '<<') bail();
      const col = (first && compact ? firstCol : indent) + (content.length - rest.length);
      const v = trimStart(rest);
      // (Spaces after a colon that ends its line are left to the library.)
      if (v === '' && rest !== '') bail();
      if (v === '' || v[0] === '#') {
        this.i++;
        out[key] = this.node(indent, true);
      } else out[key] = this.value(v, col + (rest.length - v.length), indent);
    }
  }

  /** `key:` at the start of `content`: the key and what follows the colon; undefined when the line is no mapping entry. */
  private entryKey(content: string): [string, string] | undefined {
    const q = content[0];
    if (q === '"' || q === "'") {
      const end = q === "'" ? closingSingle(content, 1) : closingDouble(content, 1);
      if (end < 0) return undefined;
      let j = end + 1;
      while (content.charCodeAt(j) === 0x20) j++;
      if (content[j] !== ':' || !(j + 1 === content.length || content[j + 1] === ' ')) return undefined;
      const key = q === "'" ? content.slice(1, end).replaceAll("''", "'") : decodeDoubleLine(content.slice(1, end));
      return [key, content.slice(j + 1)];
    }
    if (q === undefined || INDICATORS.has(q) || ((q === '-' || q === '?' || q === ':') && (content.length === 1 || content[1] === ' '))) return undefined;
    let j = content.indexOf(':');
    while (j >= 0 && !(j + 1 === content.length || content[j + 1] === ' ')) j = content.indexOf(':', j + 1);
    if (j < 0) return undefined;
    const key = trimEnd(content.slice(0, j));
    if (key.includes(' #')) return undefined;
    // A key the core schema reads as another type (`true:`, `1:`) is left to the library.
    if (typeof resolvePlain(key) !== 'string' || key === '') bail();
    return [key, content.slice(j + 1)];
  }

  /** A scalar starting at column `col` of the current line (`text` from there on); its continuation lines are indented more than `parent`. */
  private value(text: string, col: number, parent: number): unknown {
    const c = text[0]!;
    if (c === '|') return this.literal(text, parent);
    if (c === "'" || c === '"') return this.quoted(c, col, parent);
    if (text.startsWith('[]') || text.startsWith('{}')) {
      const after = trimStart(text.slice(2));
      if (after !== '' && after[0] !== '#') bail();
      this.i++;
      return c === '[' ? [] : {};
    }
    if (INDICATORS.has(c) || ((c === '-' || c === '?' || c === ':') && (text.length === 1 || text[1] === ' '))) bail();
    if (text.startsWith('---') || text.startsWith('...')) bail();
    return this.plain(text, parent);
  }

  private plain(text: string, parent: number): unknown {
    const first = plainLine(text);
    let out = first.text;
    this.i++;
    if (first.comment) return resolvePlain(out);
    let lines = 1;
    let empty = 0;
    for (let j = this.i; j < this.lines.length; j++) {
      const line = this.lines[j]!;
      if (isEmpty(line)) {
        empty++;
        continue;
      }
      const at = indentOf(line);
      if (at <= parent || line.charCodeAt(at) === 0x23 || (at === 0 && isMarker(line))) break;
      const next = plainLine(line.slice(at));
      out += empty === 0 ? ` ${next.text}` : '\n'.repeat(empty);
      if (empty > 0) out += next.text;
      empty = 0;
      lines++;
      this.i = j + 1;
      if (next.comment) break;
    }
    return lines === 1 ? resolvePlain(out) : out;
  }

  private quoted(q: string, col: number, parent: number): string {
    let line = this.lines[this.i]!;
    let j = col + 1;
    let out = '';
    /** How much of `out` a line break may trim (escaped spaces stay). */
    let kept = 0;
    for (;;) {
      if (j >= line.length) {
        // A line break: trailing spaces go, empty lines are newlines, one break is a space.
        let end = out.length;
        while (end > kept && out.charCodeAt(end - 1) === 0x20) end--;
        out = out.slice(0, end);
        let empty = 0;
        for (;;) {
          this.i++;
          if (this.i >= this.lines.length) bail();
          line = this.lines[this.i]!;
          if (!isEmpty(line)) break;
          empty++;
        }
        const at = indentOf(line);
        if (at <= parent || (at === 0 && isMarker(line))) bail();
        out += empty === 0 ? ' ' : '\n'.repeat(empty);
        kept = out.length;
        j = at;
        continue;
      }
      const ch = line[j]!;
      if (ch === q) {
        if (q === "'" && line[j + 1] === "'") {
          out += "'";
          j += 2;
          continue;
        }
        break;
      }
      if (ch === '\\' && q === '"') {
        if (j + 1 === line.length) {
          // An escaped line break: the lines join with nothing between them.
          this.i++;
          if (this.i >= this.lines.length) bail();
          line = this.lines[this.i]!;
          if (isEmpty(line)) bail();
          const at = indentOf(line);
          if (at <= parent) bail();
          kept = out.length;
          j = at;
          continue;
        }
        const [decoded, width] = decodeEscape(line, j);
        out += decoded;
        kept = out.length;
        j += width;
        continue;
      }
      out += ch;
      j++;
    }
    const after = trimStart(line.slice(j + 1));
    if (after !== '' && after[0] !== '#') bail();
    if (after !== '' && line[j + 1] !== ' ') bail();
    this.i++;
    return out;
  }

  /** A literal block scalar (`|`, `|-`) whose header is `header`. */
  private literal(header: string, parent: number): string {
    // (A document that is a block scalar is left to the library.)
    if (parent < 0) bail();
    // Keeping trailing line breaks (`|+`) and explicit indentation are left to the library.
    const m = /^\|(-?)(?:[ ]+#.*|[ ]*)$/.exec(header);
    if (!m) bail();
    const strip = m![1] === '-';
    this.i++;
    let start = this.i;
    let leading = 0;
    while (start < this.lines.length && isEmpty(this.lines[start]!)) {
      leading = Math.max(leading, this.lines[start]!.length);
      start++;
    }
    if (start >= this.lines.length) bail();
    const indent = indentOf(this.lines[start]!);
    if (indent <= parent || leading > indent) bail();
    const body: string[] = [];
    for (let k = this.i; k < start; k++) body.push('');
    let end = start;
    let last = start;
    for (; end < this.lines.length; end++) {
      const line = this.lines[end]!;
      if (isEmpty(line)) {
        if (line.length > indent) bail();
        body.push('');
        continue;
      }
      if (indentOf(line) < indent) break;
      body.push(line.slice(indent));
      last = end;
    }
    // (A last line without a line break after it is left to the library.)
    if (last === this.lines.length - 1) bail();
    const text = body.slice(0, last - this.i + 1).join('\n');
    this.i = last + 1;
    return strip ? text : `${text}\n`;
  }
}

/** A plain scalar's text on one line: up to a comment, trailing spaces trimmed; a `: ` inside is left to the library. */
function plainLine(text: string): { text: string; comment: boolean } {
  const hash = text.indexOf(' #');
  const body = trimEnd(hash < 0 ? text : text.slice(0, hash));
  if (body.includes(': ') || body.endsWith(':')) bail();
  return { text: body, comment: hash >= 0 };
}

/** The index of the quote closing a single-quoted scalar begun before `from` on this line, or -1. */
function closingSingle(s: string, from: number): number {
  for (let j = from; j < s.length; j++) {
    if (s[j] !== "'") continue;
    if (s[j + 1] === "'") j++;
    else return j;
  }
  return -1;
}

function closingDouble(s: string, from: number): number {
  for (let j = from; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === '"') return j;
  }
  return -1;
}

/** A double-quoted scalar's text on one line, escapes decoded. */
function decodeDoubleLine(s: string): string {
  let out = '';
  for (let j = 0; j < s.length; ) {
    if (s[j] !== '\\') {
      out += s[j++];
      continue;
    }
    if (j + 1 >= s.length) bail();
    const [decoded, width] = decodeEscape(s, j);
    out += decoded;
    j += width;
  }
  return out;
}

/** The escape at `s[j]` (a backslash): its text and how many characters it took. */
function decodeEscape(s: string, j: number): [string, number] {
  const e = s[j + 1]!;
  const simple = ESCAPES[e];
  if (simple !== undefined) return [simple, 2];
  const digits = HEX_ESCAPES[e];
  if (digits === undefined) bail();
  const hex = s.slice(j + 2, j + 2 + digits!);
  if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) bail();
  const code = parseInt(hex, 16);
  if (code > 0x10ffff) bail();
  return [String.fromCodePoint(code), 2 + digits!];
}
