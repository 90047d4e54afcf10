// Label and field selectors with Kubernetes' syntax, semantics and error wording
// (k8s.io/apimachinery/pkg/labels/selector.go and pkg/fields/selector.go), so that clients such as
// kubectl see the same accept/reject decisions and messages as against kube-apiserver.
// Everything here is linear in the input size: selectors arrive straight from query strings.

/** Every rejection of a selector; callers turn it into a 400 Bad Request. */
export class SelectorParseError extends Error {
  override name = 'SelectorParseError';
}

// ---------------------------------------------------------------------------------------------
// Validation of label keys and values (k8s.io/apimachinery/pkg/util/validation), worded alike.
// Hand-written character loops instead of the regexes, so no input can make them backtrack.

const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const DNS1123_SUBDOMAIN_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** Go's validation.RegexError, including its doubled spaces between examples. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

const isAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
const isLowerAlnum = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

/** `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` */
function isQualifiedNamePart(s: string): boolean {
  if (s.length === 0 || !isAlnum(s[0]) || !isAlnum(s[s.length - 1])) return false;
  for (const c of s) if (!isAlnum(c) && c !== '-' && c !== '_' && c !== '.') return false;
  return true;
}

/** DNS-1123 subdomain: dot-separated labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`. */
function isDns1123Subdomain(s: string): boolean {
  return s.split('.').every((l) => l.length > 0 && isLowerAlnum(l[0]) && isLowerAlnum(l[l.length - 1]) && /^[-a-z0-9]*$/.test(l));
}

function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [`a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const errs: string[] = [];
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) errs.push('prefix part must be no more than 253 characters');
      if (!isDns1123Subdomain(prefix)) errs.push(`prefix part ${regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com')}`);
    }
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!isQualifiedNamePart(name)) errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (value !== '' && !isQualifiedNamePart(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** Go's `%#v` of a []string, as field.Invalid prints a value list. */
function goStrings(vals: readonly string[]): string {
  return vals.length === 0 ? '[]string(nil)' : `[]string{${vals.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** field.Invalid(...).Error(); a nil path prints as `<nil>` in Go, which kubectl users do see. */
const invalid = (path: string, shownValue: string, detail: string): string => `${path}: Invalid value: ${shownValue}: ${detail}`;

/** utilerrors.NewAggregate(...).Error(): one message alone, several deduplicated in brackets. */
function aggregate(msgs: string[]): string {
  const uniq = [...new Set(msgs)];
  return uniq.length === 1 ? uniq[0] : `[${uniq.join(', ')}]`;
}

function keyError(key: string, path: string): string | undefined {
  const errs = qualifiedNameErrors(key);
  return errs.length ? invalid(path, JSON.stringify(key), errs.join('; ')) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Label selectors.

/** selection.Operator spellings; `!` is DoesNotExist, `gt`/`lt` are `>`/`<`. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  /** Requirements sorted by key (all must hold). */
  readonly requirements: readonly LabelRequirement[];
  /** True when the selector does not restrict anything (matches every object). */
  readonly empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
  /** Canonical form, as Kubernetes' Selector.String(). */
  toString(): string;
}

/** strconv.ParseInt(s, 10, 64): optional sign, decimal digits, int64 range; undefined otherwise. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  // Bound the digit count first so a huge numeric string never reaches BigInt.
  if (s.replace(/^[+-]?0*/, '').length > 19) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  // Own properties only: `constructor` is a valid label key and must not hit Object.prototype.
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value as string);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const have = parseInt64(value as string);
      const want = parseInt64(r.values[0]);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
  }
}

const OPERATOR_TEXT: Record<LabelOperator, string> = { '=': '=', '==': '==', '!=': '!=', in: ' in ', notin: ' notin ', gt: '>', lt: '<', exists: '', '!': '' };

/** Requirement.String(): the operator as written (`==` stays `==`), values sorted. */
function requirementString(r: LabelRequirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const vals = [...r.values].sort().join(',');
  const set = r.operator === 'in' || r.operator === 'notin';
  return `${r.key}${OPERATOR_TEXT[r.operator]}${set ? `(${vals})` : vals}`;
}

function makeSelector(reqs: LabelRequirement[]): LabelSelector {
  // Sorted by key for a deterministic String(); Array#sort is stable, Go's sort.Sort nearly so.
  const requirements = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
    toString: () => requirements.map(requirementString).join(','),
  };
}

/** labels.Nothing(): what a nil metav1.LabelSelector means. */
const NOTHING: LabelSelector = { requirements: [], empty: false, matches: () => false, toString: () => '' };

/**
 * labels.NewRequirement: the validation shared by parsed and object-form requirements, with Go's
 * field paths (`key`, `values`, `values[i][<key>]`) and all errors aggregated into one message.
 */
export function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  const ke = keyError(key, 'key');
  if (ke) errs.push(ke);
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(invalid('values', goStrings(values), "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(invalid('values', goStrings(values), 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(invalid('values', goStrings(values), 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(invalid('values', goStrings(values), "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`values[${i}]`, JSON.stringify(v), "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const ve = labelValueErrors(v);
    if (ve.length) errs.push(invalid(`values[${i}][${key}]`, JSON.stringify(v), ve.join('; ')));
  });
  if (errs.length) throw new SelectorParseError(aggregate(errs));
  return { key, operator, values };
}

// Lexer. Tokens are the literal operator spellings, plus identifiers and end of input.
export type TokenKind = 'ident' | 'end' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';
interface Token {
  kind: TokenKind;
  lit: string;
}

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => '=!(),><'.includes(c);

/**
 * Go's Lexer: whitespace separates, special characters form (at most two-character) operators,
 * anything else runs into an identifier. Unlike Go we do not treat a NUL byte as end of input:
 * Go silently drops everything after ` \0`, which would let a selector hide a suffix.
 */
export function lex(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i])) i++;
    if (i >= s.length) {
      out.push({ kind: 'end', lit: '' });
      return out;
    }
    if (isSpecial(s[i])) {
      const two = s.slice(i, i + 2);
      const lit = two === '==' || two === '!=' ? two : s[i];
      out.push({ kind: lit as TokenKind, lit });
      i += lit.length;
      continue;
    }
    const start = i;
    while (i < s.length && !isSpecial(s[i]) && !isWhitespace(s[i])) i++;
    const lit = s.slice(start, i);
    out.push({ kind: lit === 'in' || lit === 'notin' ? lit : 'ident', lit });
  }
}

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

/** Go's recursive-descent Parser, one method per production, with its error texts. */
class LabelParser {
  private readonly toks: Token[];
  private pos = 0;
  constructor(toks: Token[]) {
    this.toks = toks;
  }

  /**
   * In the "values" context `in`/`notin` are plain identifiers (so `in in (in)` parses); only the
   * operator position reads them as keywords. Reads past the end stay on the end token.
   */
  private peek(values = true): Token {
    const t = this.toks[Math.min(this.pos, this.toks.length - 1)];
    return values && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'ident', lit: t.lit } : t;
  }
  private next(values = true): Token {
    const t = this.peek(values);
    this.pos++;
    return t;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end') return reqs;
      if (t.kind !== 'ident' && t.kind !== '!') throw new SelectorParseError(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (e) {
        throw new SelectorParseError(`unable to parse requirement: ${(e as Error).message}`);
      }
      const sep = this.next();
      if (sep.kind === 'end') return reqs;
      if (sep.kind !== ',') throw new SelectorParseError(`found '${sep.lit}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.kind !== 'ident' && after.kind !== '!') throw new SelectorParseError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let t = this.next();
    const negated = t.kind === '!';
    if (negated) t = this.next();
    if (t.kind !== 'ident') throw new SelectorParseError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    // Go validates the key here with a nil field path before anything else.
    const ke = keyError(key, '<nil>');
    if (ke) throw new SelectorParseError(ke);
    const la = this.peek().kind;
    // `!key` is complete on its own; anything after it is reported by parse() as a bad separator.
    if (negated) return newRequirement(key, '!', []);
    if (la === 'end' || la === ',') return newRequirement(key, 'exists', []);

    const opTok = this.next(false);
    const ops: Partial<Record<TokenKind, LabelOperator>> = { in: 'in', notin: 'notin', '=': '=', '==': '==', '!=': '!=', '>': 'gt', '<': 'lt' };
    const op = ops[opTok.kind];
    if (!op) throw new SelectorParseError(`found '${opTok.lit}', expected: ${BINARY_OPERATORS}`);
    const values = op === 'in' || op === 'notin' ? this.valueSet() : this.exactValue();
    return newRequirement(key, op, [...values].sort());
  }

  /** `(a,b,c)`; empty members (`()`, `(,a)`, `(a,,b)`) stand for the empty value (docs/rulings.md#r18). */
  private valueSet(): Set<string> {
    const open = this.next();
    if (open.kind !== '(') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return new Set(['']);
    }
    if (first.kind !== 'ident' && first.kind !== ',') throw new SelectorParseError(`found '${first.lit}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    for (;;) {
      const t = this.next();
      if (t.kind === 'ident') {
        set.add(t.lit);
        const la = this.peek();
        if (la.kind === ')') break;
        if (la.kind !== ',') throw new SelectorParseError(`found '${la.lit}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        if (set.size === 0) set.add('');
        const la = this.peek().kind;
        if (la === ')') {
          set.add('');
          break;
        }
        // The next comma is left for the loop: `(a,,)` is a, then "" twice, then the end.
        if (la === ',') set.add('');
      } else {
        throw new SelectorParseError(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    this.next(); // the ')' seen by lookahead
    return set;
  }

  /** The single value after `=`, `==`, `!=`, `>`, `<`; empty when the requirement ends there. */
  private exactValue(): string[] {
    const la = this.peek().kind;
    if (la === 'end' || la === ',') return [''];
    const t = this.next();
    if (t.kind !== 'ident') throw new SelectorParseError(`found '${t.lit}', expected: identifier`);
    return [t.lit];
  }
}

/** labels.Parse: the `labelSelector` query parameter. The empty string selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return makeSelector(new LabelParser(lex(text)).parse());
  } catch (e) {
    // The contract is "only SelectorParseError"; anything else (e.g. a RangeError) is re-labelled.
    if (e instanceof SelectorParseError) throw e;
    throw new SelectorParseError(`unable to parse selector: ${(e as Error)?.message ?? String(e)}`);
  }
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/**
 * metav1.LabelSelectorAsSelector: the object form found in specs. null/undefined selects nothing
 * (as in Kubernetes), an object with no terms selects everything.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return NOTHING;
  const ops: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };
  const reqs: LabelRequirement[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) reqs.push(newRequirement(k, '=', [v]));
  for (const expr of sel.matchExpressions ?? []) {
    const op = Object.hasOwn(ops, expr.operator) ? ops[expr.operator] : undefined;
    if (!op) throw new SelectorParseError(`${JSON.stringify(String(expr.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(expr.key, op, [...(expr.values ?? [])]));
  }
  return makeSelector(reqs);
}

// ---------------------------------------------------------------------------------------------
// Field selectors.

interface FieldRequirement {
  readonly field: string;
  /** `==` is folded into `=`, as Kubernetes does. */
  readonly op: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  /** Sorted by their canonical text. */
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  /** A missing field reads as "", so `spec.nodeName=` selects objects without one. */
  matches(fields: Record<string, string>): boolean;
  /**
   * The value an `=` requirement pins `field` to, for narrowing a lookup. With several `=` terms
   * on one field the first wins, as in Kubernetes: they must all hold, so narrowing by any is sound.
   */
  requiresExactMatch(field: string): string | undefined;
  /** Canonical form with values re-escaped. */
  toString(): string;
}

/** fields.EscapeValue: makes any string safe as a field selector value. */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes; bare `,` and `=` are errors. */
function unescapeFieldValue(s: string): string {
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    // Go prints the rune with %v, i.e. as its number (`61` for '='); kept for identical messages.
    else if (c === ',' || c === '=') throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Split on commas not preceded by an escaping backslash (the backslash stays in the term). */
function splitFieldTerms(s: string): string[] {
  if (s === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    if (inSlash) inSlash = false;
    else if (s[i] === '\\') inSlash = true;
    else if (s[i] === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** fields.ParseSelector: the `fieldSelector` query parameter. The empty string selects everything. */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitFieldTerms(text)) {
    if (term === '') continue;
    // The first operator occurrence splits the term; the field itself has no escaping.
    const m = /!=|==|=/.exec(term);
    if (!m) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${term}'`);
    const field = term.slice(0, m.index);
    const value = unescapeFieldValue(term.slice(m.index + m[0].length));
    // Kubernetes' identity Transform drops a term whose field and value are both empty (`=`).
    if (field === '' && value === '') continue;
    requirements.push({ field, op: m[0] === '!=' ? '!=' : '=', value });
  }
  // Kubernetes sorts the raw terms; sorting the normalised ones instead (`==` folded, escapes
  // canonical) gives the same set of terms but makes toString() a fixed point of parsing.
  const render = (r: FieldRequirement): string => `${r.field}${r.op}${escapeFieldValue(r.value)}`;
  requirements.sort((a, b) => (render(a) < render(b) ? -1 : render(a) > render(b) ? 1 : 0));
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) => requirements.every((r) => ((Object.hasOwn(fields, r.field) ? fields[r.field] : '') === r.value) === (r.op === '=')),
    requiresExactMatch: (field) => requirements.find((r) => r.op === '=' && r.field === field)?.value,
    toString: () => requirements.map(render).join(','),
  };
}

/** Rejects fields a resource does not index, worded as kube-apiserver's field label conversion. */
export function validateFieldSelectorFields(sel: FieldSelector, allowed: readonly string[]): void {
  for (const r of sel.requirements) {
    if (!allowed.includes(r.field)) throw new SelectorParseError(`field label not supported: ${r.field}`);
  }
}
