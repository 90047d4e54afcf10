// How a library adds its functions to an environment: a typed face over cel-js' registration, so
// each library file states its signatures and handlers and nothing else.

import type { Environment } from '@marcbachmann/cel-js';
import { EvaluationError } from '@marcbachmann/cel-js';
import type { AstNode } from '../rewrite.ts';

/** A CEL value as cel-js represents it (bigint, number, string, boolean, null, Uint8Array, …). */
export type CelValue = unknown;

/** cel-js calls a handler with the CEL values of its arguments, receiver first. */
type Handler = (...args: never[]) => unknown;

export interface Registrar {
  readonly env: Environment;
  /** `'string.charAt(int): string'` or `'url(string): URL'`. */
  fn(signature: string, handler: Handler): void;
  /** `'int == double'`: an operator overload. */
  op(signature: string, handler: Handler): void;
}

export function registrar(env: Environment): Registrar {
  return {
    env,
    fn: (signature, handler) => void env.registerFunction(signature, handler, { async: false }),
    op: (signature, handler) => void env.registerOperator(signature, handler as Parameters<Environment['registerOperator']>[1]),
  };
}

/** An error a library function raises: an evaluation error with cel-go's message. */
export function celError(message: string): EvaluationError {
  return new EvaluationError(message);
}

/** A bigint argument as a safe JavaScript number (indices and counts). */
export function toIndex(v: bigint): number {
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : v < BigInt(Number.MIN_SAFE_INTEGER) ? Number.MIN_SAFE_INTEGER : Number(v);
}

// The parts of cel-js' checker, evaluator and contexts a macro (a function taking `ast`
// arguments) uses: cel-js does not export their types.
export interface MacroType {
  kind: string;
  name: string;
  keyType?: MacroType;
  valueType?: MacroType;
  isDynOrBool(): boolean;
}
export interface MacroChecker {
  check(node: AstNode, ctx: MacroContext): MacroType;
  getType(name: string): MacroType;
  formatType(t: MacroType): string;
  registry: { getListType(t: MacroType): MacroType; getMapType(k: MacroType, v: MacroType): MacroType; getOptionalType(t: MacroType): MacroType };
  createError(code: string, message: string, node: AstNode): Error;
}
export interface MacroContext {
  forkWithVariable(name: string, type: MacroType): MacroContext;
  reuse(parent: MacroContext): MacroContext;
  setIterValue(v: unknown, ev: MacroEvaluator): MacroContext;
}
export interface MacroEvaluator {
  run(node: AstNode, ctx: MacroContext): unknown;
}
