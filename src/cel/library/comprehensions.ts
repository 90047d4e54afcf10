// cel-go's two-variable comprehensions (ext.TwoVarComprehensions, in Kubernetes' base environment
// since 1.33): over a list the index and the element, over a map the key and the value.
//
//   <range>.all(k, v, p)  <range>.exists(k, v, p)  <range>.existsOne(k, v, p) (also exists_one)
//   <range>.transformList(k, v, [filter,] e)      → list of e
//   <range>.transformMap(k, v, [filter,] e)       → map of k to e
//   <range>.transformMapEntry(k, v, [filter,] e)  → map merging the map e of each element
//
// They are receiver macros with three or four arguments; cel-js finds a macro by name and argument
// count (its own one-variable `all(x, p)` has two), so each is registered once per arity with a
// type-check and an evaluation of its own, as cel-js' `cel.bind` is. Both follow cel-go's expansion
// of the macro into a comprehension, whose runtime cost is charged here as cel-go's tracker counts
// it (README, "Cost"): all/exists absorb an error of one element when another decides the
// result; existsOne and the transforms go through every element and end in the error their
// accumulator carries; transformMapEntry refuses a key produced twice ("insert failed: key 1
// already exists", keys equal across numeric types).

import { EvaluationError, Optional, TypeError as CheckError } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import type { AstNode } from '../rewrite.ts';
import { charge, PRICES } from '../cost.ts';
import type { Registrar, MacroChecker as Checker, MacroContext as Context, MacroEvaluator as Evaluator, MacroType as CelType } from './register.ts';

export type TwoVarKind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

/** The macros by name (`exists_one` is cel-go's other name of existsOne). */
export const TWO_VARIABLE_MACROS: Record<string, TwoVarKind> = {
  all: 'all',
  exists: 'exists',
  existsOne: 'existsOne',
  exists_one: 'existsOne',
  transformList: 'transformList',
  transformMap: 'transformMap',
  transformMapEntry: 'transformMapEntry',
};

/** cel-go's accumulator names (the visible one and the hidden one); an iteration variable may not take them. */
const ACCUMULATORS = new Set(['__result__', '@result']);


/** A two-variable comprehension as written, with what its type-check found. */
export interface TwoVarMacro {
  /** Never a promise: cel-js skips its asynchronous paths. */
  async: false;
  twoVariable: TwoVarKind;
  receiver: AstNode;
  /** The two variables, then the filter (when four arguments), then the predicate or transform. */
  args: AstNode[];
  filter: AstNode | undefined;
  body: AstNode;
  keyCtx?: Context;
  bodyCtx?: Context;
  /** The range's key type (`int` for a list), to give a map's keys back their type. */
  keyType?: CelType;
  typeCheck(checker: Checker, macro: TwoVarMacro, ctx: Context): CelType;
  evaluate(ev: Evaluator, macro: TwoVarMacro, ctx: Context): unknown;
}

function variableName(checker: Checker, node: AstNode): string {
  if (node.op !== 'id') throw checker.createError('invalid_macro_argument', 'argument must be a simple name', node);
  return node.args as string;
}

function typeCheck(checker: Checker, m: TwoVarMacro, ctx: Context): CelType {
  const [first, second] = m.args as [AstNode, AstNode];
  const keyName = variableName(checker, first);
  const valueName = variableName(checker, second);
  if (keyName === valueName) throw checker.createError('invalid_macro_argument', `duplicate variable name: ${keyName}`, second);
  if (ACCUMULATORS.has(keyName)) throw checker.createError('invalid_macro_argument', 'iteration variable overwrites accumulator variable', first);
  if (ACCUMULATORS.has(valueName)) throw checker.createError('invalid_macro_argument', 'iteration variable overwrites accumulator variable', second);

  const dyn = checker.getType('dyn');
  const range = checker.check(m.receiver, ctx);
  let keyType: CelType;
  let valueType: CelType;
  if (range.kind === 'list') {
    keyType = checker.getType('int');
    valueType = range.valueType ?? dyn;
  } else if (range.kind === 'map') {
    keyType = range.keyType ?? dyn;
    valueType = range.valueType ?? dyn;
  } else if (range.kind === 'dyn') {
    keyType = dyn;
    valueType = dyn;
  } else {
    throw checker.createError('invalid_comprehension_range', `Expression of type '${checker.formatType(range)}' cannot be range of a comprehension (must be list, map, or dynamic).`, m.receiver);
  }
  // An element type still open (`[]`, `{}`) is any type.
  if (keyType.kind === 'param') keyType = dyn;
  if (valueType.kind === 'param') valueType = dyn;
  m.keyType = keyType;
  m.keyCtx = ctx.forkWithVariable(keyName, keyType);
  m.bodyCtx = m.keyCtx.forkWithVariable(valueName, valueType);

  const body = checker.check(m.body, m.bodyCtx);
  const format = (t: CelType) => checker.formatType(t);
  switch (m.twoVariable) {
    case 'all':
    case 'exists':
      // __result__ && p, __result__ || p
      if (!body.isDynOrBool()) throw checker.createError('no_matching_overload', `found no matching overload for '${m.twoVariable === 'all' ? '_&&_' : '_||_'}' applied to '(bool, ${format(body)})'`, m.body);
      return checker.getType('bool');
    case 'existsOne':
      // p ? __result__ + 1 : __result__
      if (!body.isDynOrBool()) throw checker.createError('no_matching_overload', `found no matching overload for '_?_:_' applied to '(${format(body)}, int, int)'`, m.body);
      return checker.getType('bool');
    default:
  }
  let result: CelType;
  if (m.twoVariable === 'transformList') result = checker.registry.getListType(body);
  else if (m.twoVariable === 'transformMap') result = checker.registry.getMapType(keyType, body);
  else if (body.kind === 'map') result = body;
  else if (body.kind === 'dyn') result = checker.registry.getMapType(dyn, dyn);
  else throw checker.createError('no_matching_overload', `found no matching overload for 'cel.@mapInsert' applied to '(map<dyn, dyn>, ${format(body)})'`, m.body);
  if (m.filter !== undefined) {
    const filter = checker.check(m.filter, m.bodyCtx);
    if (!filter.isDynOrBool()) throw checker.createError('no_matching_overload', `found no matching overload for '_?_:_' applied to '(${format(filter)}, ${format(result)}, ${format(result)})'`, m.filter);
  }
  return result;
}

/** A map's key as cel-js keeps it (a property name), back in the range's key type. */
function typedKey(key: string, type: CelType | undefined): unknown {
  switch (type?.name) {
    case 'int':
      return /^-?\d+$/.test(key) ? BigInt(key) : key;
    case 'uint':
      return /^\d+$/.test(key) ? new UnsignedInt(BigInt(key)) : key;
    case 'bool':
      return key === 'true' ? true : key === 'false' ? false : key;
    default:
      return key;
  }
}

/** The name cel-js gives a map key (maps with int, uint or bool keys are objects, keys as property names). */
function propertyName(key: unknown): string {
  if (key instanceof UnsignedInt) return key.valueOf().toString();
  return String(key);
}

/** The Go type cel-go names in its message (`%T` of the value). */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'types.Null';
  if (typeof v === 'bigint') return 'types.Int';
  if (typeof v === 'number') return 'types.Double';
  if (typeof v === 'boolean') return 'types.Bool';
  if (typeof v === 'string') return 'types.String';
  if (v instanceof UnsignedInt) return 'types.Uint';
  if (v instanceof Uint8Array) return 'types.Bytes';
  if (v instanceof Date) return 'types.Timestamp';
  if (v instanceof Duration) return 'types.Duration';
  if (v instanceof Optional) return '*types.Optional';
  return 'types.Unknown';
}

function isMapValue(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !(v instanceof Date) && !(v instanceof UnsignedInt) && !(v instanceof Duration) && !(v instanceof Optional) && !Array.isArray(v) && !(v instanceof Set);
}

/** The entries a comprehension visits: index and element of a list, key and value of a map. */
function entriesOf(range: unknown, keyType: CelType | undefined): [unknown, unknown][] {
  if (Array.isArray(range) || range instanceof Set) return [...range].map((v, i) => [BigInt(i), v]);
  if (range instanceof Map) return [...range.entries()];
  if (isMapValue(range)) return Object.entries(range).map(([k, v]) => [typedKey(k, keyType), v]);
  throw new EvaluationError(`unsupported comprehension range type: ${goTypeName(range)}`);
}

/** An error a quantifier may absorb when another element decides (not a cost limit, which stops it). */
function absorbable(e: unknown): boolean {
  return e instanceof EvaluationError || e instanceof CheckError || e instanceof RangeError;
}

/** Sets a property, own even where the name is one of Object's (`__proto__`). */
function put(out: Record<string, unknown>, name: string, v: unknown): void {
  if (name === '__proto__' || name === 'constructor' || name === 'prototype') Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true });
  else out[name] = v;
}

function mapEntries(v: object): [unknown, unknown][] {
  return v instanceof Map ? [...v.entries()] : Object.entries(v);
}

function evaluate(ev: Evaluator, m: TwoVarMacro, ctx: Context): unknown {
  const range = ev.run(m.receiver, ctx);
  const entries = entriesOf(range, m.keyType);
  const keyCtx = m.keyCtx!.reuse(ctx);
  const bodyCtx = m.bodyCtx!.reuse(keyCtx);
  const bind = (k: unknown, v: unknown) => {
    keyCtx.setIterValue(k, ev);
    bodyCtx.setIterValue(v, ev);
  };
  const n = entries.length;
  switch (m.twoVariable) {
    case 'all':
    case 'exists': {
      // init true/false; per element the loop condition @not_strictly_false(__result__) (2) or
      // @not_strictly_false(!__result__) (3), then __result__ &&/|| p (1 + p); the result __result__ (1).
      const decisive = m.twoVariable === 'exists';
      const condition = decisive ? 3 : 2;
      let error: unknown;
      for (let i = 0; i < n; i++) {
        charge(condition);
        bind(entries[i]![0], entries[i]![1]);
        charge(1);
        let v: unknown;
        try {
          v = ev.run(m.body, bodyCtx);
        } catch (e) {
          if (!absorbable(e)) throw e;
          error ??= e;
          continue;
        }
        if (v === decisive) {
          // The condition is read once more when elements remain, and stops the loop.
          if (i + 1 < n) charge(condition);
          charge(1);
          return decisive;
        }
        if (typeof v !== 'boolean') error ??= new EvaluationError('no such overload');
      }
      charge(1);
      if (error !== undefined) throw error;
      return !decisive;
    }
    case 'existsOne': {
      // per element p ? __result__ + 1 (2) : __result__ (0: cel-go reads the untaken branch of a
      // conditional without counting it); the result __result__ == 1 (2). No element stops it: an
      // error becomes the accumulator, and an error of a later predicate replaces it (the
      // conditional gives its condition's error).
      let count = 0;
      let error: unknown;
      for (const [k, v] of entries) {
        bind(k, v);
        const p = attempt(ev, m.body, bodyCtx);
        if (p instanceof Failure) error = p.error;
        else if (typeof p !== 'boolean') error = new EvaluationError('no such overload');
        else if (p) {
          charge(2);
          count++;
        }
      }
      charge(2);
      if (error !== undefined) throw error;
      return count === 1;
    }
    case 'transformList':
    case 'transformMap':
    case 'transformMapEntry': {
      // init [] (10) or {} (30); per kept element __result__ + [e] (12),
      // cel.@mapInsert(__result__, k, e) (3) or cel.@mapInsert(__result__, e) (2), plus e; the
      // result (1). An error becomes the accumulator and stays (the step's first argument), unless
      // a later filter fails, whose error the conditional gives instead.
      const list = m.twoVariable === 'transformList';
      charge(list ? PRICES.listCreate : PRICES.mapCreate);
      const step = list ? PRICES.listCreate + 2 : m.twoVariable === 'transformMap' ? 3 : 2;
      const items: unknown[] = [];
      const out: Record<string, unknown> = {};
      let error: unknown;
      for (const [k, v] of entries) {
        bind(k, v);
        if (m.filter !== undefined) {
          const f = attempt(ev, m.filter, bodyCtx);
          if (f instanceof Failure || typeof f !== 'boolean') {
            error = f instanceof Failure ? f.error : new EvaluationError('no such overload');
            continue;
          }
          if (!f) continue;
        }
        charge(step);
        const e = attempt(ev, m.body, bodyCtx);
        if (error !== undefined) continue;
        if (e instanceof Failure) error = e.error;
        else if (list) items.push(e);
        else if (m.twoVariable === 'transformMap') put(out, propertyName(k), e);
        else error = insertEntries(out, e);
      }
      charge(1);
      if (error !== undefined) throw error;
      return list ? items : out;
    }
  }
}

/** An evaluation error a comprehension carries on with, as cel-go's error values. */
class Failure {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/** The value of `node`, or the evaluation error it ended in (a cost limit is not one: it stops everything). */
function attempt(ev: Evaluator, node: AstNode, ctx: Context): unknown {
  try {
    return ev.run(node, ctx);
  } catch (e) {
    if (!absorbable(e)) throw e;
    return new Failure(e);
  }
}

/**
 * cel.@mapInsert(__result__, entry): the entry map's keys and values added; a key already there
 * is an error (keys compare as CEL values: 1, 1u and 1.0 are one key, as their property names are).
 */
function insertEntries(out: Record<string, unknown>, entry: unknown): unknown {
  if (!isMapValue(entry)) return new EvaluationError('no such overload');
  for (const [key, value] of mapEntries(entry)) {
    const name = propertyName(key);
    if (Object.prototype.hasOwnProperty.call(out, name)) return new EvaluationError(`insert failed: key ${name} already exists`);
    put(out, name, value);
  }
  return undefined;
}

function expander(kind: TwoVarKind, arity: 3 | 4) {
  return ({ args, receiver }: { args: AstNode[]; receiver: AstNode }): TwoVarMacro => ({
    async: false,
    twoVariable: kind,
    receiver,
    args,
    filter: arity === 4 ? args[2] : undefined,
    body: args[arity - 1]!,
    typeCheck,
    evaluate,
  });
}

export function registerComprehensions(r: Registrar): void {
  const define = (name: string, kind: TwoVarKind, arity: 3 | 4, result: string) => {
    const params = Array.from({ length: arity }, () => 'ast').join(', ');
    r.env.registerFunction(`list.${name}(${params}): ${result}`, expander(kind, arity), { async: false });
  };
  for (const name of ['all', 'exists', 'existsOne', 'exists_one']) define(name, TWO_VARIABLE_MACROS[name]!, 3, 'bool');
  for (const arity of [3, 4] as const) {
    define('transformList', 'transformList', arity, 'list<dyn>');
    define('transformMap', 'transformMap', arity, 'map<dyn, dyn>');
    define('transformMapEntry', 'transformMapEntry', arity, 'map<dyn, dyn>');
  }
}
