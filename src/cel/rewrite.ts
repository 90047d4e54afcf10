// What the compiler does to a parsed expression between cel-js' parser and its checker, and after
// the checker. cel-js cannot replace a built-in overload, so:
//  - calls of the built-in methods our libraries redefine (code-point string indices, ASCII-only
//    case mapping, RE2 `matches`, list indexOf, timestamp accessors in UTC or any time zone)
//    are renamed to the libraries' internal names;
//  - a literal regular expression is compiled now, so a pattern RE2 refuses is a compile error,
//    and duration and timestamp literals are validated (Kubernetes' literal validators);
//  - `==`, `!=` and `+` on lists learn the contract's list types: a list with
//    x-kubernetes-list-type=set or =map compares without regard to order and concatenates as a
//    union or a keyed merge (its runtime value carries its list type, see schema-values.ts);
//  - where cel-js answers differently from cel-go at run time, cel-go's answer: a uint list
//    index, a map literal repeating a key, a selection on a present optional's scalar, string()
//    of bytes that are not UTF-8.
// cel-js' AST nodes are plain objects with public `op`, `args` and `meta`; the interface below is
// the part of them this file relies on.

import { EvaluationError, Optional } from '@marcbachmann/cel-js';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { OVERRIDE_SUFFIX, position, type CelIssue } from './errors.ts';
import { OVERRIDDEN_STRING_METHODS } from './library/strings.ts';
import { compileRegex } from './library/regex.ts';
import { ZONED_GETTERS } from './library/time.ts';
import { listTypeOf, setListType, type ListType } from './list-types.ts';
import { celEquals, items, listsEqual, sameKeys } from './library/values.ts';
import { activeTracker, callPriceOf, charge, operatorPrice, PRICES, resultPriceOf } from './cost.ts';

type EvaluateFn = (ev: unknown, ast: AstNode, ctx: unknown) => unknown;

export interface AstNode {
  op: string;
  args: unknown;
  start: number;
  end: number;
  checkedType?: { kind: string; name: string };
  left?: AstNode;
  right?: AstNode;
  handle?: (left: unknown, right: unknown, ast: AstNode, ev: unknown) => unknown;
  /** What visiting this node costs by itself (see `nodePrice`), once known. */
  costUnits?: number;
  readonly meta: { evaluate: EvaluateFn; alternate?: unknown; macro?: unknown };
  setMeta(key: string, value: unknown): AstNode;
}

interface Evaluator {
  run(ast: AstNode, ctx: unknown): unknown;
}

const RENAMED = new Set([...OVERRIDDEN_STRING_METHODS, 'matches']);
const REGEX_METHODS = new Set(['matches', 'find', 'findAll']);
const ZONED = new Set(ZONED_GETTERS);

function isNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && 'op' in v && 'meta' in v;
}

/** The sub-expressions written in a node (not the nodes a macro expands to). */
function children(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  const visit = (v: unknown, depth: number) => {
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v) && depth < 2) for (const x of v) visit(x, depth + 1);
  };
  visit(node.args, 0);
  return out;
}

function walk(root: AstNode, fn: (node: AstNode) => void): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    fn(node);
    stack.push(...children(node));
  }
}

/**
 * Before type-checking: renames redefined built-ins and compiles literal patterns. Returns the
 * issues found (a pattern RE2 refuses), each at its place in the expression.
 */
export function rewriteBeforeCheck(expression: string, root: AstNode): CelIssue[] {
  const issues: CelIssue[] = [];
  walk(root, (node) => {
    if (node.op !== 'rcall' && node.op !== 'call') return;
    const args = node.args as [string, ...unknown[]];
    const name = args[0];
    if (name === 'has' && node.meta.macro !== undefined) return anyOperandForHas(node.meta.macro as HasMacro);
    const isMethod = node.op === 'rcall';
    const callArgs = (isMethod ? args[2] : args[1]) as unknown[];
    if (REGEX_METHODS.has(name) && (isMethod || name === 'matches')) {
      const pattern = callArgs[isMethod ? 0 : 1];
      if (isNode(pattern) && pattern.op === 'value' && typeof pattern.args === 'string') {
        const re = compileRegex(pattern.args);
        if (typeof re === 'string') issues.push({ message: `invalid regex: ${re}`, ...position(expression, pattern.start) });
      }
    }
    if (!isMethod && (name === 'duration' || name === 'timestamp') && callArgs.length === 1) {
      const lit = callArgs[0];
      if (isNode(lit) && lit.op === 'value' && typeof lit.args === 'string') {
        const problem = name === 'duration' ? durationProblem(lit.args) : timestampProblem(lit.args);
        if (problem) issues.push({ message: `${name} validation failed. reason: ${problem}`, ...position(expression, lit.start) });
      }
    }
    if (isMethod ? RENAMED.has(name) || ZONED.has(name) : name === 'timestamp') args[0] = `${name}${OVERRIDE_SUFFIX}`;
  });
  return issues;
}

/** cel-js' `has` macro: its argument, the selections it tests (set by its type-check), its type-check. */
interface HasMacro {
  args: AstNode[];
  macroHasProps?: AstNode[];
  typeCheck(checker: HasChecker, macro: HasMacro, ctx: unknown): unknown;
}

interface HasChecker {
  check(node: AstNode, ctx: unknown): unknown;
  getType(name: string): unknown;
}

/**
 * cel-go's `has(e.f)` takes any operand `e` (`has(self.items[0].name)`, as Gateway API's rules
 * write); cel-js' type-check accepts only a chain of selections from an identifier. For any other
 * operand the selections are collected and the operand checked here; evaluation already starts
 * from whatever the operand is.
 */
function anyOperandForHas(macro: HasMacro): void {
  const own = macro.typeCheck;
  macro.typeCheck = (checker, m, ctx) => {
    let node = m.args[0];
    if (m.macroHasProps || node?.op !== '.') return own(checker, m, ctx);
    const props: AstNode[] = [];
    while (node.op === '.' || node.op === '.?') {
      props.push(node);
      node = (node.args as [AstNode])[0];
    }
    if (node.op === 'id') return own(checker, m, ctx);
    checker.check(node, ctx);
    props.push(node);
    m.macroHasProps = props;
    return checker.getType('bool');
  };
}

const GO_DURATION = /^[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+)$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Why a duration literal is invalid (Go's time.ParseDuration), if it is. */
function durationProblem(text: string): string | undefined {
  return GO_DURATION.test(text) ? undefined : `time: invalid duration ${JSON.stringify(text)}`;
}

/** Why a timestamp literal is invalid (RFC 3339, years 1–9999), if it is. */
function timestampProblem(text: string): string | undefined {
  const t = Date.parse(text);
  if (!RFC3339.test(text) || Number.isNaN(t)) return `parsing time ${JSON.stringify(text)} as RFC 3339: cannot parse`;
  return undefined;
}

/** An operand whose `+` copies: a string, bytes or a list (or unknown until run time). */
function growable(node: AstNode | undefined): boolean {
  const t = node?.checkedType;
  return t?.kind === 'list' || t?.kind === 'dyn' || t?.name === 'string' || t?.name === 'bytes';
}

function mayBeAggregate(node: AstNode | undefined): boolean {
  const kind = node?.checkedType?.kind;
  return kind === 'list' || kind === 'map' || kind === 'dyn';
}

const MAX_INT = (1n << 63n) - 1n;
const MIN_INT = -(1n << 63n);

/**
 * After type-checking: gives `==`, `!=` and `+` on lists the list-type semantics, makes `in` and
 * `==` on lists and maps compare numbers across types (`1u in [1]`), and keeps results in CEL's
 * ranges (int64 negation and conversion, timestamps in years 1–9999, durations within int64
 * nanoseconds), which cel-js' own operators do not; and orders an int against a double as cel-go
 * does (both as doubles). Prices what cel-go prices by size (see cost.ts): operators whose price
 * depends on their operands, functions with a price of their own, comprehensions.
 */
export function rewriteAfterCheck(root: AstNode): void {
  walk(root, (node) => {
    if (priceMacro(node)) return;
    if (node.op === 'map' && Array.isArray(node.args) && node.args.length > 1) return refuseRepeatedKeys(node);
    if (node.op === '[]' && (node.left?.checkedType?.kind === 'list' || node.left?.checkedType?.kind === 'dyn')) {
      // cel-go indexes a list by a uint too (`[7, 8][dyn(0u)]`); cel-js only by an int or a double.
      return binary(node, (l, r, ast, ev) => ast.handle!(l, r instanceof UnsignedInt && (Array.isArray(l) || l instanceof Set) ? r.valueOf() : r, ast, ev), false);
    }
    if ((node.op === '.' || node.op === '[]') && node.left?.checkedType?.kind === 'optional') {
      // A present optional's value is selected as itself: a field of a null, a number or a string
      // is an error in cel-go, where cel-js answers none.
      node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => {
        const target = ev.run(ast.left!, ctx);
        if (target instanceof Optional && target.hasValue() && !isContainer(target.value())) throw new EvaluationError('no such key');
        // As cel-js' own evaluation, from the operand's value.
        return ast.handle!(target, ast.op === '.' ? ast.right : ev.run(ast.right!, ctx), ast, ev);
      });
      return;
    }
    if (node.op === '-_' && node.checkedType?.kind === 'dyn') {
      const negate = node.meta.evaluate;
      node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => RANGES.int!(negate(ev, ast, ctx)));
      return;
    }
    if (node.op === 'in' && (node.right?.checkedType?.kind === 'list' || node.right?.checkedType?.kind === 'dyn')) {
      return binary(node, (l, r, ast, ev) => {
        if (!(Array.isArray(r) || r instanceof Set)) return ast.handle!(l, r, ast, ev);
        for (const x of r) if (celEquals(l, x)) return true;
        return false;
      });
    }
    if (ORDERINGS.has(node.op) && (mixedNumbers(node.left, node.right) || node.left?.checkedType?.kind === 'dyn' || node.right?.checkedType?.kind === 'dyn')) {
      const op = node.op;
      return binary(node, (l, r, ast, ev) => {
        // cel-go orders an int or uint against a double as two doubles.
        if (typeof l === 'number' || typeof r === 'number') {
          const x = asDouble(l);
          const y = asDouble(r);
          if (x !== undefined && y !== undefined) return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
        }
        return ast.handle!(l, r, ast, ev);
      });
    }
    if (node.op === 'call' && (node.args as [string])[0] === 'int') {
      // int(double) refuses the bounds themselves: -2^63 and 2^63 as doubles are out of range.
      const convert = node.meta.evaluate;
      node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => {
        const v = RANGES.int!(convert(ev, ast, ctx));
        if ((v === MIN_INT || v === MAX_INT + 1n) && typeof ev.run(((ast.args as [string, AstNode[]])[1])[0]!, ctx) === 'number') throw new EvaluationError('integer overflow');
        return v;
      });
      return;
    }
    if (node.op === 'call' || node.op === 'rcall') priceCall(node);
    if (node.op === 'call' && (node.args as [string])[0] === 'string') refuseInvalidUtf8(node);
    const range = RANGES[node.checkedType?.name ?? ''];
    if (range && CHECKED_OPS.has(node.op)) {
      const compute = node.meta.evaluate;
      node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => range(compute(ev, ast, ctx)));
      return;
    }
    if (node.op === '+' && (growable(node.left) || growable(node.right))) {
      return binary(node, (l, r, ast, ev) => {
        const type = listTypeOf(l);
        const lists = (Array.isArray(l) || l instanceof Set) && (Array.isArray(r) || r instanceof Set);
        return type !== undefined && lists ? concat(type, items(l), items(r)) : ast.handle!(l, r, ast, ev);
      });
    }
    if (node.op !== '==' && node.op !== '!=') {
      if (PRICED_OPERATORS.has(node.op)) binary(node, (l, r, ast, ev) => ast.handle!(l, r, ast, ev));
      return;
    }
    if (!mayBeAggregate(node.left) && !mayBeAggregate(node.right)) return binary(node, (l, r, ast, ev) => ast.handle!(l, r, ast, ev));
    const op = node.op;
    binary(node, (l, r, ast, ev) => {
      const type = listTypeOf(l);
      const lists = (Array.isArray(l) || l instanceof Set) && (Array.isArray(r) || r instanceof Set);
      if (!lists && !(isMap(l) && isMap(r))) return ast.handle!(l, r, ast, ev);
      // cel-js compares uint elements by identity; CEL compares numbers by value, at any depth.
      const equal = type !== undefined && lists ? listsEqual(type, items(l), items(r)) : celEquals(l, r);
      return op === '==' ? equal : !equal;
    });
  });
}

/** Operators whose price depends on their operands (string equality and ordering, `in`, `+`). */
const PRICED_OPERATORS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', '+']);

type Combine = (l: unknown, r: unknown, ast: AstNode, ev: Evaluator) => unknown;

/**
 * Gives a binary operator its evaluation: both operands, then (when cost is tracked) the price
 * cel-go gives the operator on them, then `combine`. The node itself costs nothing more.
 */
function binary(node: AstNode, combine: Combine, priced = true): void {
  const op = node.op;
  if (priced) node.costUnits = 0;
  node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => {
    const l = ev.run(ast.left!, ctx);
    const r = ev.run(ast.right!, ctx);
    const tracker = priced ? activeTracker() : undefined;
    if (tracker !== undefined) tracker.add(operatorPrice(op, l, r));
    return combine(l, r, ast, ev);
  });
}

/** Values whose fields or entries can be selected: maps and objects, lists (by index). */
function isContainer(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !(v instanceof Date);
}

/**
 * A map literal whose entries repeat a key fails when it is evaluated, as in cel-go ("Failed with
 * repeated key"; keys equal across numeric types count: `{0: 1, 0u: 2}`). cel-js keeps the last.
 */
function refuseRepeatedKeys(node: AstNode): void {
  const entries = node.args as [AstNode, AstNode][];
  const build = node.meta.evaluate;
  node.setMeta('evaluate', (ev: Evaluator, ast: AstNode, ctx: unknown) => {
    const keys: unknown[] = [];
    const values: unknown[] = [];
    for (const [k, v] of entries) {
      const key = ev.run(k, ctx);
      if (key instanceof Promise) return build(ev, ast, ctx);
      if (keys.some((x) => celEquals(x, key))) throw new EvaluationError('Failed with repeated key');
      keys.push(key);
      values.push(ev.run(v, ctx));
    }
    if (values.some((x) => x instanceof Promise)) return build(ev, ast, ctx);
    // The object cel-js builds for a map literal (keys as property names, never the prototype's).
    const out: Record<string, unknown> = {};
    keys.forEach((k, i) => {
      const name = String(k);
      if (name !== '__proto__' && name !== 'constructor' && name !== 'prototype') out[name] = values[i];
    });
    return out;
  });
}

/** string(bytes) of bytes that are not UTF-8 fails, as in cel-go; cel-js substitutes U+FFFD. */
function refuseInvalidUtf8(node: AstNode): void {
  const handle = node.handle as unknown as Handle | undefined;
  if (handle === undefined) return;
  const strict = new TextDecoder('utf-8', { fatal: true });
  const guarded: Handle = (values, a, b) => {
    const v = values[0];
    if (v instanceof Uint8Array) {
      try {
        strict.decode(v);
      } catch {
        throw new EvaluationError('invalid UTF-8');
      }
    }
    return handle(values, a, b);
  };
  node.handle = guarded as unknown as AstNode['handle'];
}

type Handle = (values: unknown[], a: unknown, b: unknown) => unknown;

/** A call of a function with a price of its own is charged that price (before it runs). */
function priceCall(node: AstNode): void {
  if (node.meta.alternate !== undefined || node.meta.macro !== undefined) return;
  const name = (node.args as [string])[0].replace(OVERRIDE_SUFFIX, '');
  const price = callPriceOf(name);
  const afterwards = resultPriceOf(name);
  const handle = node.handle as unknown as Handle | undefined;
  if ((price === undefined && afterwards === undefined) || handle === undefined) return;
  node.costUnits = 0;
  const priced: Handle = price
    ? (values, a, b) => {
        const tracker = activeTracker();
        if (tracker !== undefined) tracker.add(price(values));
        return handle(values, a, b);
      }
    : (values, a, b) => {
        const out = handle(values, a, b);
        const tracker = activeTracker();
        if (tracker !== undefined) tracker.add(afterwards!(out));
        return out;
      };
  node.handle = priced as unknown as AstNode['handle'];
}

interface Comprehension {
  op: 'comprehension';
  args: { kind?: string; condition?: (accu: unknown) => boolean; step: AstNode };
}

/**
 * Prices a macro as cel-go prices its expansion: `has` costs the selections before the tested
 * one (presence tests are free in Kubernetes); `cel.bind` a list literal (its empty range); a
 * comprehension its range, then at each iteration its step with cel-go's accumulator overhead
 * (all: the loop condition `@not_strictly_false(__result__)` 2, exists: `@not_strictly_false(!__result__)`
 * 3, and `__result__` in the step 1; map and filter build `__result__ + [x]`; exists_one counts
 * `__result__ + 1`; an element a filter drops, or exists_one does not count, costs nothing more than
 * its predicate), and its result (`__result__` 1, exists_one `__result__ == 1` 2). Returns whether the
 * node is a macro; two-variable comprehensions price themselves (library/comprehensions.ts).
 */
function priceMacro(node: AstNode): boolean {
  if (node.op !== 'call' && node.op !== 'rcall') return false;
  const name = (node.args as [string])[0];
  const macro = node.meta.macro as { macroHasProps?: unknown[]; twoVariable?: string } | undefined;
  if (macro !== undefined) {
    // A two-variable comprehension charges its accumulator and result itself (library/comprehensions.ts).
    node.costUnits = name === 'has' ? Math.max(0, (macro.macroHasProps?.length ?? 2) - 2) : name === 'bind' ? PRICES.listCreate : macro.twoVariable !== undefined ? 0 : 1;
    return true;
  }
  const alternate = node.meta.alternate as Comprehension | undefined;
  if (alternate?.op !== 'comprehension') return false;
  const args = alternate.args;
  node.costUnits = name === 'exists_one' ? 2 : 1;
  const condition = args.condition;
  if (args.kind === 'quantifier' && condition !== undefined && !('priced' in condition)) {
    // all: @not_strictly_false(__result__); exists: @not_strictly_false(!__result__).
    const price = name === 'exists' ? 3 : 2;
    const priced = (accu: unknown) => {
      charge(price);
      return condition(accu);
    };
    args.condition = Object.assign(priced, { priced: true });
    args.step.costUnits = 1;
  }
  return true;
}

/** Namespaces written as receivers of global functions (`strings.quote`): free, as in cel-go. */
const NAMESPACES = new Set(['strings', 'optional', 'cel', 'math', 'ip', 'format', 'sets']);

/**
 * What visiting a node costs by itself, as cel-go's tracker prices it: constants and the logical
 * operators nothing; identifiers, field selections, indexes, calls and other operators 1; list
 * literals 10, map literals 30; comprehension accumulators as cel-go's expansion reads them.
 * Nodes whose price depends on their values are priced by their evaluation (`binary`,
 * `priceCall`, `priceMacro`) and cost nothing here.
 */
export function nodePrice(node: AstNode): number {
  if (node.costUnits !== undefined) return node.costUnits;
  switch (node.op) {
    case 'value':
    case '&&':
    case '||':
    case '?:':
    case 'comprehension':
      return 0;
    case 'id':
      if (node.meta.alternate !== undefined || NAMESPACES.has(node.args as string)) return 0;
      return PRICES.selectAndIdent;
    case '[]':
    case '[?]':
      // cel-go prices an index by a variable as one qualification, the variable included.
      return (node.args as AstNode[])[1]?.op === 'id' ? 0 : PRICES.selectAndIdent;
    case 'list':
      return PRICES.listCreate;
    case 'map':
      return PRICES.mapCreate;
    case '-_':
      // A negative number literal is a constant in cel-go.
      return (Array.isArray(node.args) ? (node.args[0] as AstNode) : (node.args as AstNode))?.op === 'value' ? 0 : 1;
    case 'accuValue':
      // Only ever the untaken branch of a conditional (`p ? __result__ + [x] : __result__`), which
      // cel-go reads as an attribute of the conditional without counting it.
      return 0;
    case 'accuInc':
      return 2;
    case 'accuPush':
      return PRICES.listCreate + 2;
    default:
      return 1;
  }
}

const ORDERINGS = new Set(['<', '<=', '>', '>=']);
const NUMERIC = new Set(['int', 'uint', 'double']);

function mixedNumbers(l: AstNode | undefined, r: AstNode | undefined): boolean {
  const a = l?.checkedType?.name;
  const b = r?.checkedType?.name;
  return a !== b && NUMERIC.has(a ?? '') && NUMERIC.has(b ?? '') && (a === 'double' || b === 'double');
}

function asDouble(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return v instanceof UnsignedInt ? Number(v.valueOf()) : undefined;
}

function isMap(v: unknown): boolean {
  return v instanceof Map || (typeof v === 'object' && v !== null && (v.constructor === Object || v.constructor === undefined));
}

const MAX_UINT = (1n << 64n) - 1n;
const MIN_SECONDS = -62135596800; // 0001-01-01T00:00:00Z
const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z
const MAX_DURATION_NANOS = (1n << 63n) - 1n; // cel-go's durations are Go's: int64 nanoseconds

/** Operators and calls whose results cel-js does not keep in CEL's ranges. */
const CHECKED_OPS = new Set(['call', '-_', '+', '-', '/', '*']);

const RANGES: Record<string, (v: unknown) => unknown> = {
  int: (v) => {
    if (typeof v === 'bigint' && (v > MAX_INT || v < MIN_INT)) throw new EvaluationError('integer overflow');
    return v;
  },
  uint: (v) => {
    if (v instanceof UnsignedInt && (v.valueOf() > MAX_UINT || v.valueOf() < 0n)) throw new EvaluationError('unsigned integer overflow');
    return v;
  },
  'google.protobuf.Timestamp': (v) => {
    if (v instanceof Date && !(v.getTime() >= MIN_SECONDS * 1000 && v.getTime() < (MAX_SECONDS + 1) * 1000)) throw new EvaluationError('timestamp out of range');
    return v;
  },
  'google.protobuf.Duration': (v) => {
    const d = v as { seconds?: unknown; nanos?: unknown } | null;
    if (typeof d?.seconds === 'bigint' && typeof d.nanos === 'number') {
      const nanos = d.seconds * 1_000_000_000n + BigInt(d.nanos);
      if (nanos > MAX_DURATION_NANOS || nanos < -MAX_DURATION_NANOS) throw new EvaluationError('duration out of range');
    }
    return v;
  },
};

/** Set: X, then what of Y is not in X. Map: X with Y's entry for each shared key, then Y's new keys. */
function concat(type: ListType, a: unknown[], b: unknown[]): unknown[] {
  let out: unknown[];
  if (type.type === 'set') out = [...a, ...b.filter((y) => !a.some((x) => celEquals(x, y)))];
  else {
    out = a.map((x) => b.find((y) => sameKeys(type.keys, x, y)) ?? x);
    for (const x of b.filter((y) => !a.some((x) => sameKeys(type.keys, x, y)))) out.push(x);
  }
  return setListType(out, type);
}
