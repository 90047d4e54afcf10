// Optional types beyond what cel-js has (`?.`, `[?]`, optional.of/none, value, hasValue, or,
// orValue): optional.ofNonZeroValue, equality of optionals, and the optMap / optFlatMap macros.

import { Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import type { AstNode } from '../rewrite.ts';
import { celError, type Registrar, type MacroChecker as Checker, type MacroContext as Context, type MacroEvaluator as Evaluator, type MacroType as CelType } from './register.ts';
import { celEquals } from './values.ts';

/** The zero value of its type: 0, 0u, 0.0, '', b'', false, null, [], {}, a zero duration. */
function isZero(v: unknown): boolean {
  if (v === null || v === false || v === 0n || v === 0 || v === '') return true;
  if (v instanceof UnsignedInt) return v.valueOf() === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Set || v instanceof Map) return v.size === 0;
  if (v instanceof Duration) return v.seconds === 0n && v.nanos === 0;
  if (v instanceof Date) return v.getTime() === 0;
  if (typeof v === 'object' && v.constructor === Object) return Object.keys(v).length === 0;
  return false;
}

interface OptMacro {
  /** Never a promise: cel-js skips its asynchronous paths. */
  async: false;
  receiver: AstNode;
  args: AstNode[];
  bodyCtx?: Context;
  typeCheck(checker: Checker, macro: OptMacro, ctx: Context): CelType;
  evaluate(ev: Evaluator, macro: OptMacro, ctx: Context): unknown;
}

function optionalMacro(flat: boolean) {
  const name = flat ? 'optFlatMap' : 'optMap';
  return ({ args, receiver }: { args: AstNode[]; receiver: AstNode }): OptMacro => ({
    receiver,
    args,
    async: false,
    typeCheck(checker, macro, ctx) {
      const varNode = macro.args[0]!;
      if (varNode.op !== 'id') throw checker.createError('invalid_macro_argument', `${name}() variable name must be a simple identifier`, varNode);
      const recv = checker.check(macro.receiver, ctx);
      if (recv.kind !== 'optional' && recv.kind !== 'dyn') throw checker.createError('optional_expected', `${name}() receiver must be optional`, macro.receiver);
      macro.bodyCtx = ctx.forkWithVariable(varNode.args as string, recv.kind === 'optional' ? recv.valueType! : checker.getType('dyn'));
      const body = checker.check(macro.args[1]!, macro.bodyCtx);
      if (!flat) return checker.registry.getOptionalType(body);
      if (body.kind !== 'optional' && body.kind !== 'dyn') throw checker.createError('optional_expected', 'optFlatMap() expression must be optional', macro.args[1]!);
      return body;
    },
    evaluate(ev, macro, ctx) {
      const v = ev.run(macro.receiver, ctx);
      if (!(v instanceof Optional)) throw celError(`${name}() receiver must be optional`);
      if (!v.hasValue()) return Optional.none();
      const out = ev.run(macro.args[1]!, macro.bodyCtx!.reuse(ctx).setIterValue(v.value(), ev));
      if (!flat) return Optional.of(out);
      if (!(out instanceof Optional)) throw celError('optFlatMap() expression must be optional');
      return out;
    },
  });
}

export function registerOptionals(r: Registrar): void {
  r.fn('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_ns: unknown, v: unknown) => (isZero(v) ? Optional.none() : Optional.of(v)));
  r.op('optional<A> == optional<A>', (a: Optional, b: Optional) => (a.hasValue() && b.hasValue() ? celEquals(a.value(), b.value()) : a.hasValue() === b.hasValue()));
  r.env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optionalMacro(false), { async: false });
  r.env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optionalMacro(true), { async: false });
}
