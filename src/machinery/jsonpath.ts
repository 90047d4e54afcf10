// The JSONPath dialect of Kubernetes' clients (client-go's util/jsonpath): what kubectl's
// `-o jsonpath` and the API server's custom resource columns, scale paths and selectable fields
// are written in. A template is text with actions in braces (`{.status.replicas}`); an action is
// a chain of fields (`.a.b`, `.*`, `..a` for every depth), array subscripts (`[0]`, `[-1]`,
// `[1:3]`, `[::2]`, `[*]`, unions `[0,2]` and `['a','b']`) and filters
// (`[?(@.type=="Ready")]`, `[?(@.ready)]` for presence). `{range <path>}` … `{end}` repeats the
// actions between them for each value the path finds, relative to it (nested ranges, an empty one
// giving nothing), as kubectl's `-o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'`.
// Evaluation follows client-go with missing keys allowed (a missing field yields nothing, not an
// error), which is how the server uses it.

export class JsonPathError extends Error {}

type Node =
  | { t: 'text'; text: string }
  | { t: 'list'; nodes: Node[] }
  | { t: 'field'; name: string }
  | { t: 'wildcard' }
  | { t: 'recursive' }
  | { t: 'array'; params: [Param, Param, Param] }
  | { t: 'union'; lists: Node[][] }
  | { t: 'filter'; left: Node[]; op: string; right: Node[] }
  | { t: 'literal'; value: string | number | boolean; float?: boolean }
  | { t: 'identifier'; name: 'range' | 'end' };

interface Param {
  value: number;
  known: boolean;
  /** The end of a single index (`[n]` is `[n:n+1]`). */
  derived?: boolean;
}

/** A parsed template: its result sets (one per action) for a value. */
export interface JsonPath {
  readonly source: string;
  /** One list of values per action of the template; throws JsonPathError as client-go's FindResults fails. */
  find(data: unknown): unknown[][];
}

const OPERATORS = ['==', '!=', '<=', '>=', '<', '>'];

/** Parses a template (`{.spec.replicas}` or text around actions); throws JsonPathError with client-go's words. */
export function parseJsonPath(template: string): JsonPath {
  const actions = parseTemplate(template);
  return {
    source: template,
    find(data) {
      return findResults(actions, 0, data, { begin: 0, inRange: 0, end: 0, lastEnd: -1 });
    },
  };
}

/** A path as CRDs write it (`.status.replicas`, without braces): parsed as kube-apiserver does, in braces. */
export function parseFieldPath(path: string): JsonPath {
  return parseJsonPath(`{${path}}`);
}

/** The first action's values, or none (a path that finds nothing, or fails). */
export function firstResults(path: JsonPath, data: unknown): unknown[] {
  try {
    return path.find(data)[0] ?? [];
  } catch (e) {
    if (e instanceof JsonPathError) return [];
    throw e;
  }
}

// ---- parsing ----

function parseTemplate(s: string): Node[] {
  const out: Node[] = [];
  let i = 0;
  while (i < s.length) {
    const open = s.indexOf('{', i);
    if (open < 0) {
      out.push({ t: 'text', text: s.slice(i) });
      break;
    }
    if (open > i) out.push({ t: 'text', text: s.slice(i, open) });
    const close = findClose(s, open + 1);
    if (close < 0) throw new JsonPathError('unclosed action');
    out.push({ t: 'list', nodes: parseAction(s.slice(open + 1, close)) });
    i = close + 1;
  }
  return out;
}

/** The `}` that ends an action starting at `from`, skipping quoted strings. */
function findClose(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'") {
      i = skipQuoted(s, i);
      if (i < 0) return -1;
    } else if (c === '}') return i;
  }
  return -1;
}

function skipQuoted(s: string, at: number): number {
  const q = s[at];
  for (let i = at + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === q) return i;
  }
  return -1;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isTerminator = (c: string | undefined) => c === undefined || isSpace(c) || '.,[]$@{}'.includes(c);

/** `%#U` of Go's fmt: `U+0021 '!'`. */
const goRune = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} '${c}'`;

function parseAction(s: string): Node[] {
  const nodes: Node[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (isSpace(c) || c === '$' || c === '@') {
      i++;
    } else if (c === '.') {
      if (s[i + 1] === '.') {
        nodes.push({ t: 'recursive' });
        i += 2;
        // `..field` and `..[…]`: what follows applies at every depth.
        if (s[i] !== '[' && s[i] !== '.' && s[i] !== undefined) i = parseField(s, i, nodes);
      } else i = parseField(s, i + 1, nodes);
    } else if (c === '[') {
      i = parseBracket(s, i, nodes);
    } else if (c === '"' || c === "'") {
      const end = skipQuoted(s, i);
      if (end < 0) throw new JsonPathError('unterminated quoted string');
      nodes.push({ t: 'literal', value: unquote(s.slice(i, end + 1)) });
      i = end + 1;
    } else if (/[-+\d]/.test(c)) {
      const m = /^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(s.slice(i));
      if (!m) throw new JsonPathError(`cannot parse number ${s.slice(i)}`);
      nodes.push({ t: 'literal', value: Number(m[0]), float: m[1] !== undefined || m[2] !== undefined });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))!;
      if (m[0] === 'true' || m[0] === 'false') nodes.push({ t: 'literal', value: m[0] === 'true' });
      else if (m[0] === 'range' || m[0] === 'end') nodes.push({ t: 'identifier', name: m[0] });
      else throw new JsonPathError(`unrecognized identifier ${m[0]}`);
      i += m[0].length;
    } else {
      throw new JsonPathError(`unrecognized character in action: ${goRune(c)}`);
    }
  }
  return nodes;
}

/** A field name after `.`, up to a terminator; `\` escapes the next character (`a\.b` is one key). */
function parseField(s: string, i: number, nodes: Node[]): number {
  let name = '';
  while (i < s.length && !isTerminator(s[i])) {
    if (s[i] === '\\' && i + 1 < s.length) i++;
    name += s[i++];
  }
  nodes.push(name === '*' ? { t: 'wildcard' } : { t: 'field', name });
  return i;
}

function unquote(q: string): string {
  const body = q.slice(1, -1);
  if (q[0] === '"') {
    try {
      return JSON.parse(q) as string;
    } catch {
      throw new JsonPathError(`invalid string literal ${q}`);
    }
  }
  return body.replace(/\\(.)/g, '$1');
}

function parseBracket(s: string, at: number, nodes: Node[]): number {
  if (s[at + 1] === '?') {
    // A filter: `[?(` … `)]`, the parentheses balanced outside quotes.
    if (s[at + 2] !== '(') throw new JsonPathError('unterminated filter');
    let depth = 0;
    for (let i = at + 2; i < s.length; i++) {
      const c = s[i];
      if (c === '"' || c === "'") {
        i = skipQuoted(s, i);
        if (i < 0) break;
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) {
        if (s[i + 1] !== ']') throw new JsonPathError('unterminated filter');
        nodes.push(parseFilter(s.slice(at + 3, i)));
        return i + 2;
      }
    }
    throw new JsonPathError('unterminated filter');
  }
  let end = -1;
  for (let i = at + 1; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'") {
      i = skipQuoted(s, i);
      if (i < 0) break;
    } else if (c === ']') {
      end = i;
      break;
    }
  }
  if (end < 0) throw new JsonPathError('unterminated array');
  const body = s.slice(at + 1, end).trim();
  const parts = splitOutsideQuotes(body, ',');
  const lists = parts.map((p): Node[] => {
    const t = p.trim();
    if (t.startsWith("'") || t.startsWith('"')) return [{ t: 'field', name: unquote(t) }];
    if (t === '*') return [{ t: 'array', params: [{ value: 0, known: false }, { value: 0, known: false }, { value: 0, known: false }] }];
    return [{ t: 'array', params: arrayParams(t) }];
  });
  nodes.push(lists.length === 1 ? lists[0]![0]! : { t: 'union', lists });
  return end + 1;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'") {
      const e = skipQuoted(s, i);
      if (e < 0) break;
      i = e;
    } else if (c === sep) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

function arrayParams(t: string): [Param, Param, Param] {
  if (!/^(-?\d*)(:(-?\d*)?)?(:(-?\d*)?)?$/.test(t)) throw new JsonPathError(`invalid array index ${t}`);
  const parts = t.split(':');
  const param = (p: string | undefined): Param => (p === undefined || p === '' ? { value: 0, known: false } : { value: Number(p), known: true });
  const params: [Param, Param, Param] = [param(parts[0]), param(parts[1]), param(parts[2])];
  // A single index takes one element: `[n]` is `[n:n+1]`.
  if (parts.length === 1 && params[0].known) params[1] = { value: params[0].value + 1, known: true, derived: true };
  return params;
}

function parseFilter(body: string): Node {
  let depthQuote = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (depthQuote) {
      if (c === '\\') i++;
      else if (c === depthQuote) depthQuote = '';
      continue;
    }
    if (c === '"' || c === "'") {
      depthQuote = c;
      continue;
    }
    const op = OPERATORS.find((o) => body.startsWith(o, i));
    if (op) return { t: 'filter', left: parseAction(body.slice(0, i)), op, right: parseAction(body.slice(i + op.length)) };
  }
  return { t: 'filter', left: parseAction(body), op: 'exists', right: [] };
}

// ---- evaluation ----

/**
 * Where a template's evaluation is in its ranges (client-go's JSONPath fields): `range` keywords
 * seen and not yet looped over, ranges being looped over, `end` keywords reached, and the index of
 * the last action holding an `end`.
 */
interface RangeState {
  begin: number;
  inRange: number;
  end: number;
  lastEnd: number;
}

/**
 * The result sets of the template's actions from `from` on, for `data` (client-go's FindResults):
 * an action holding `end` ends the range being looped over; an action holding `range` evaluates
 * the actions after it once for each value it finds (and once, results dropped, when it finds
 * none, to reach its `end`), then goes on after that `end`.
 */
function findResults(actions: readonly Node[], from: number, data: unknown, st: RangeState): unknown[][] {
  const out: unknown[][] = [];
  for (let i = from; i < actions.length; i++) {
    const n = actions[i]!;
    const results = n.t === 'text' ? [n.text] : evalList([data], (n as { nodes: Node[] }).nodes, st);
    if (st.end > 0 && st.end <= st.inRange) {
      st.end--;
      st.lastEnd = i;
      break;
    }
    if (st.begin > 0) {
      st.begin--;
      st.inRange++;
      if (results.length > 0) for (const v of results) out.push(...findResults(actions, i + 1, v, st));
      else findResults(actions, i + 1, null, st);
      st.inRange--;
      if (st.lastEnd > i) i = st.lastEnd;
      continue;
    }
    out.push(results);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function evalList(input: unknown[], nodes: readonly Node[], st: RangeState): unknown[] {
  let values = input;
  for (const n of nodes) values = evalNode(values, n, st);
  return values;
}

function evalNode(input: unknown[], n: Node, st: RangeState): unknown[] {
  switch (n.t) {
    case 'identifier':
      if (n.name === 'range') {
        st.begin++;
        return input;
      }
      if (st.inRange === 0) throw new JsonPathError('not in range, nothing to end');
      st.end++;
      return [];
    case 'text':
      return [n.text];
    case 'literal':
      return [n.value];
    case 'list':
      return evalList(input, n.nodes, st);
    case 'field': {
      if (n.name === '') return input;
      const out: unknown[] = [];
      for (const v of input) if (isObject(v) && Object.hasOwn(v, n.name)) out.push(v[n.name]);
      return out;
    }
    case 'wildcard': {
      const out: unknown[] = [];
      for (const v of input) {
        if (isObject(v)) out.push(...Object.values(v));
        else if (Array.isArray(v)) out.push(...v);
      }
      return out;
    }
    case 'recursive': {
      const out: unknown[] = [];
      const walk = (v: unknown) => {
        out.push(v);
        if (isObject(v)) for (const c of Object.values(v)) walk(c);
        else if (Array.isArray(v)) for (const c of v) walk(c);
      };
      for (const v of input) walk(v);
      return out;
    }
    case 'array': {
      const out: unknown[] = [];
      for (const v of input) {
        if (v === null || v === undefined) continue;
        if (!Array.isArray(v)) throw new JsonPathError(`${goType(v)} is not array or slice`);
        out.push(...slice(v, n.params));
      }
      return out;
    }
    case 'union':
      return n.lists.flatMap((l) => evalList(input, l, st));
    case 'filter':
      return evalFilter(input, n, st);
  }
}

function slice(v: unknown[], [p0, p1, p2]: [Param, Param, Param]): unknown[] {
  const len = v.length;
  let start = p0.known ? p0.value : 0;
  if (start < 0) start += len;
  let end = p1.known ? p1.value : len;
  if (end < 0 || (end === 0 && p1.derived)) end += len;
  if (start === end) return [];
  if (start >= len || start < 0) throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`);
  if (end > len || end < 0) throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`);
  if (start > end) throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`);
  let step = 1;
  if (p2.known) {
    if (p2.value <= 0) throw new JsonPathError('step must be > 0');
    step = p2.value;
  }
  const out: unknown[] = [];
  for (let i = start; i < end; i += step) out.push(v[i]);
  return out;
}

function evalFilter(input: unknown[], n: Extract<Node, { t: 'filter' }>, st: RangeState): unknown[] {
  const out: unknown[] = [];
  for (const v of input) {
    if (v === null || v === undefined) continue;
    if (!Array.isArray(v)) throw new JsonPathError(`${goType(v)} is not array or slice and cannot be filtered`);
    for (const item of v) {
      const lefts = evalList([item], n.left, st);
      if (n.op === 'exists') {
        if (lefts.length > 0) out.push(item);
        continue;
      }
      if (lefts.length === 0) continue;
      if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time');
      const rights = evalList([item], n.right, st);
      if (rights.length === 0) continue;
      if (rights.length > 1) throw new JsonPathError('can only compare one element at a time');
      if (compare(lefts[0], rights[0], n.op, literalFloat(n.right))) out.push(item);
    }
  }
  return out;
}

/** Whether the right side is a number literal written as a float (`1.0`): Go compares kinds, not values. */
function literalFloat(right: readonly Node[]): boolean | undefined {
  const last = right[right.length - 1];
  return last?.t === 'literal' && typeof last.value === 'number' ? last.float === true : undefined;
}

type Kind = 'bool' | 'int' | 'float' | 'string' | 'invalid';

function kindOf(v: unknown, float?: boolean): Kind {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return float ?? !Number.isInteger(v) ? 'float' : 'int';
  return 'invalid';
}

/** text/template's comparison functions as client-go uses them: kinds must agree. */
function compare(l: unknown, r: unknown, op: string, rightFloat: boolean | undefined): boolean {
  const lk = kindOf(l);
  const rk = kindOf(r, rightFloat);
  if (lk === 'invalid' || rk === 'invalid') throw new JsonPathError('invalid type for comparison');
  if (lk !== rk) throw new JsonPathError('incompatible types for comparison');
  if (op === '==') return l === r;
  if (op === '!=') return l !== r;
  if (lk === 'bool') throw new JsonPathError('invalid type for comparison');
  const a = l as number | string;
  const b = r as number | string;
  switch (op) {
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '>=':
      return a >= b;
  }
  throw new JsonPathError(`unrecognized filter operator ${op}`);
}

function goType(v: unknown): string {
  if (isObject(v)) return 'map[string]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return 'interface {}';
}

// ---- printing ----

/**
 * One value as client-go's PrintResults writes it: objects and arrays as Go's encoding/json
 * writes them (keys sorted, HTML characters escaped), strings as they are, numbers as Go's fmt
 * prints int64 and float64, null as text/template's `<no value>`.
 */
export function printJsonPathValue(v: unknown): string {
  if (v === null || v === undefined) return '<no value>';
  if (typeof v === 'object') return goJson(v);
  if (typeof v === 'number') return goNumber(v);
  return String(v);
}

/** fmt's %v of a JSON number: an integer as int64, otherwise float64's shortest %g. */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  // Go's shortest %g: an exponent below 1e-4 and from 1e6 on.
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(n);
}

function goJson(v: unknown): string {
  const sorted = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sorted);
    if (isObject(x)) return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])]));
    return x;
  };
  return JSON.stringify(sorted(v)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
