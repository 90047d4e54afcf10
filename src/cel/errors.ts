// The errors an expression can end in, each a typed class with the wording cel-go (and so
// Kubernetes) gives, whatever the underlying evaluator said. Callers match on the class: a compile
// error is the writer's mistake (422 at create/update), an evaluation error is the data's, and a
// cost error means the expression ran out of its budget.

import { EvaluationError, ParseError, TypeError as CheckError } from '@marcbachmann/cel-js';

/** What every error of this module is. */
export class CelError extends Error {
  override name = 'CelError';
}

/** One issue found while compiling, at a 1-based line and column of the expression. */
export interface CelIssue {
  message: string;
  line: number;
  column: number;
}

/**
 * The expression does not parse or does not type-check. The message lists each issue as cel-go
 * prints it (`ERROR: <input>:1:5: undeclared reference to 'x' (in container '')`), followed by
 * the offending line and a caret, so it reads the same as Kubernetes' "compilation failed: …".
 */
export class CelCompileError extends CelError {
  readonly expression: string;
  readonly issues: CelIssue[];
  override name = 'CelCompileError';
  constructor(
    expression: string,
    issues: CelIssue[],
  ) {
    super(issues.map((i) => formatIssue(expression, i)).join('\n'));
    this.expression = expression;
    this.issues = issues;
  }
}

/** The expression failed while running (no such key, division by zero, a bad argument …). */
export class CelEvaluationError extends CelError {
  override name = 'CelEvaluationError';
}

/** The expression used more than its runtime cost budget; it was stopped there. */
export class CelCostError extends CelEvaluationError {
  readonly limit: number;
  override name = 'CelCostError';
  constructor(limit: number) {
    super('operation cancelled: actual cost limit exceeded');
    this.limit = limit;
  }
}

/**
 * The validation rules of one object used up their total budget: Kubernetes stops validating the
 * object with this message (as a field.Invalid at the rule's schema node).
 */
export class CelBudgetError extends CelCostError {
  override name = 'CelBudgetError';
  constructor() {
    super(0);
    this.message = 'validation failed due to running out of cost budget, no further validation rules will be run';
  }
}

function formatIssue(expression: string, issue: CelIssue): string {
  const line = expression.split('\n')[issue.line - 1] ?? '';
  return `ERROR: <input>:${issue.line}:${issue.column}: ${issue.message}\n | ${line}\n | ${'.'.repeat(Math.max(0, issue.column - 1))}^`;
}

/** 1-based line and column of an offset. */
export function position(expression: string, offset: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < expression.length; i++) {
    if (expression[i] === '\n') {
      line++;
      column = 1;
    } else column++;
  }
  return { line, column };
}

/** Internal names of functions that replace a built-in one carry this suffix; users never see it. */
export const OVERRIDE_SUFFIX = '__k8s';
const OVERRIDE_RE = new RegExp(OVERRIDE_SUFFIX, 'g');

const OPERATOR_NAMES: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '==': '_==_',
  '!=': '_!=_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  in: '@in',
};

/** A check-time message of cel-js, in cel-go's words where the two differ. */
export function checkMessage(summary: string, code: string): string {
  const s = summary.replace(OVERRIDE_RE, '');
  let m: RegExpExecArray | null;
  if (code === 'unknown_variable' && (m = /^Unknown variable: (.*)$/.exec(s))) return `undeclared reference to '${m[1]}' (in container '')`;
  if (code === 'no_such_overload' && (m = /^no such overload: (\S+) (\S+) (\S+)$/.exec(s))) {
    return `found no matching overload for '${OPERATOR_NAMES[m[2]!] ?? m[2]}' applied to '(${m[1]}, ${m[3]})'`;
  }
  if (code === 'no_such_overload' && (m = /^no such overload: ([-!])(\S+)$/.exec(s))) {
    return `found no matching overload for '${m[1] === '-' ? '-_' : '!_'}' applied to '(${m[2]})'`;
  }
  if (code === 'no_matching_overload' && (m = /^found no matching overload for '(?:(\S+)\.)?([\w]+)\((.*)\)'$/.exec(s))) {
    const args = m[1] ? [m[1], ...(m[3] ? [m[3]] : [])].join(', ') : m[3];
    return `found no matching overload for '${m[2]}' applied to '${m[1] ? `${m[1]}.` : ''}(${m[1] ? (m[3] ?? '') : args})'`;
  }
  if (code === 'no_such_key' && (m = /^No such key: (.*)$/.exec(s))) return `undefined field '${m[1]}'`;
  return s;
}

/** A run-time message of cel-js, in cel-go's words where the two differ. */
export function evaluationMessage(summary: string, code: string): string {
  const s = summary.replace(OVERRIDE_RE, '');
  let m: RegExpExecArray | null;
  if (code === 'no_such_key' && (m = /^No such key: (.*)$/.exec(s))) return `no such key: ${m[1]}`;
  if (code === 'no_such_overload' || code === 'no_matching_overload') return 'no such overload';
  if (/^division by zero/i.test(s)) return 'division by zero';
  if (/^modulus by zero/i.test(s)) return 'modulus by zero';
  return s;
}

/** Turns whatever a compile threw into a CelCompileError (a bug in a library stays a bug). */
export function toCompileError(expression: string, error: unknown): CelCompileError {
  if (error instanceof CelCompileError) return error;
  if (error instanceof ParseError || error instanceof CheckError) {
    const at = position(expression, error.range?.start ?? 0);
    const message = error instanceof ParseError ? `Syntax error: ${error.summary.replace(OVERRIDE_RE, '')}` : checkMessage(error.summary, error.code);
    return new CelCompileError(expression, [{ message, ...at }]);
  }
  if (error instanceof EvaluationError) {
    const at = position(expression, error.range?.start ?? 0);
    return new CelCompileError(expression, [{ message: evaluationMessage(error.summary, error.code), ...at }]);
  }
  // cel-js' checker throws a plain Error when two operator overloads fit an operand whose type is
  // still an unbound parameter (`{}.a > 1`): an ambiguous call, which the writer must make precise.
  const m = error instanceof Error ? /^Operator overload '(.*?)' overlaps with '(.*?)'/.exec(error.message) : null;
  if (m) return new CelCompileError(expression, [{ message: `ambiguous overloads: '${m[1]}' and '${m[2]}' both apply (make the operand types known)`, line: 1, column: 1 }]);
  throw error;
}

/** Turns whatever an evaluation threw into a CelEvaluationError; other errors are bugs and pass. */
export function toEvaluationError(error: unknown): CelEvaluationError {
  if (error instanceof CelEvaluationError) return error;
  if (error instanceof EvaluationError || error instanceof CheckError) return new CelEvaluationError(evaluationMessage(error.summary, error.code));
  if (error instanceof RangeError) return new CelEvaluationError(error.message);
  throw error;
}
