// The one environment builder. A base cel-js environment holds every library the API contract lists, with its
// options (homogeneous aggregate literals, optional types, UTC time zone); each use (schema
// validation rules, claim mappings, user validation, authorization match conditions, …) is a
// clone of it that declares its variables and their types. An environment compiles an expression
// once — parse, our rewrites, type-check — and keeps the program in a bounded cache keyed by
// environment and expression; a program evaluates against an activation, optionally under a cost
// budget.

import { Environment } from '@marcbachmann/cel-js';
import { CelBudgetError, CelCompileError, CelCostError, toCompileError, toEvaluationError } from './errors.ts';
import { activeTracker, CostBudget, CostTracker, withTracker } from './cost.ts';
import { registrar, type Registrar } from './library/register.ts';
import { registerStandard } from './library/standard.ts';
import { registerStrings } from './library/strings.ts';
import { registerLists } from './library/lists.ts';
import { registerRegex } from './library/regex.ts';
import { registerURLs } from './library/urls.ts';
import { registerQuantity } from './library/quantity.ts';
import { registerNet } from './library/net.ts';
import { registerFormat } from './library/named-format.ts';
import { registerSets } from './library/sets.ts';
import { registerSemver } from './library/semver.ts';
import { registerOptionals } from './library/optionals.ts';
import { registerComprehensions } from './library/comprehensions.ts';
import { registerTime } from './library/time.ts';
import { nodePrice, rewriteAfterCheck, rewriteBeforeCheck, type AstNode } from './rewrite.ts';

/** A message type: named fields with their CEL types (cel-js type strings). */
export interface CelObjectType {
  name: string;
  fields: Record<string, string>;
}

export interface CelVariable {
  name: string;
  /** A cel-js type string: `int`, `list<string>`, `map<string, dyn>`, or a declared object type. */
  type: string;
}

/**
 * A library that arrives with another part of the server (the authorizer library with
 * authorization): its types, functions and the variables it brings.
 */
export interface CelExtension {
  name: string;
  register(r: Registrar): void;
  variables?: CelVariable[];
}

export interface EnvironmentSpec {
  /** Object types the variables use, declared before them. */
  types?: CelObjectType[];
  variables: CelVariable[];
  extensions?: CelExtension[];
  /**
   * Kubernetes requires list and map literals to hold one type (`[1, 'a']` does not compile);
   * false relaxes that (only the conformance suite, written for cel-go's default, needs it).
   */
  homogeneousAggregateLiterals?: boolean;
}

/** Structural limits of the parser (Kubernetes caps nesting; these bound the AST). */
const LIMITS = { maxAstNodes: 10_000, maxDepth: 100, maxListElements: 1_000, maxMapEntries: 1_000, maxCallArguments: 32 };

const PROBE = '__celEvaluatorProbe';

let base: Environment | undefined;

/** The environment every use clones: all libraries, no variables. */
function baseEnvironment(): Environment {
  if (base) return base;
  const env = new Environment({ homogeneousAggregateLiterals: true, enableOptionalTypes: true, unlistedVariablesAreDyn: false, limits: LIMITS });
  const r = registrar(env);
  registerStandard(r);
  registerStrings(r);
  registerLists(r);
  registerRegex(r);
  registerURLs(r);
  registerQuantity(r);
  registerNet(r);
  registerFormat(r);
  registerSets(r);
  registerSemver(r);
  registerOptionals(r);
  registerTime(r);
  registerComprehensions(r);
  base = env;
  return env;
}

interface Evaluator {
  run(ast: AstNode, ctx: unknown): unknown;
}

/**
 * Makes the environment's evaluator count each node it visits into the active cost tracker.
 * cel-js keeps its evaluator private, but calls every function handler with it as `this`: a
 * probe function, called once, hands it over.
 */
function countNodes(env: Environment): void {
  let evaluator: Evaluator | undefined;
  env.registerFunction(`${PROBE}(): bool`, function (this: Evaluator) {
    evaluator = this;
    return true;
  });
  env.evaluate(`${PROBE}()`);
  const ev = evaluator!;
  const run = ev.run;
  ev.run = function counted(ast: AstNode, ctx: unknown): unknown {
    const tracker = activeTracker();
    if (tracker !== undefined) {
      let units = ast.costUnits;
      if (units === undefined) units = ast.costUnits = nodePrice(ast);
      if (units !== 0) tracker.add(units);
    }
    return run.call(this, ast, ctx);
  };
}

export interface EvaluateOptions {
  /**
   * The runtime cost limit of this evaluation (Kubernetes' per-expression limit is
   * DEFAULT_PER_CALL_LIMIT); none: unbounded (callers that run user input always set one).
   */
  costLimit?: number;
  /**
   * A total shared by several evaluations (the validation rules of one object): the evaluation
   * runs under the smaller of `costLimit` (default: the budget's per-call limit) and what is
   * left, and what it used is taken from it. Running out throws CelBudgetError.
   */
  budget?: CostBudget;
}

export interface EvaluationResult {
  value: unknown;
  /** The runtime cost used, when a budget was set. */
  cost?: number;
}

export class CelProgram {
  readonly expression: string;
  /** The type the expression evaluates to (`bool`, `string`, `list<string>`, `dyn` …). */
  readonly outputType: string;
  private readonly evaluateRoot: (activation: Record<string, unknown>) => unknown;
  /** The checked AST (read by the cost estimator). */
  readonly root: AstNode;
  constructor(
    expression: string,
    outputType: string,
    evaluateRoot: (activation: Record<string, unknown>) => unknown,
    root: AstNode,
  ) {
    this.expression = expression;
    this.outputType = outputType;
    this.evaluateRoot = evaluateRoot;
    this.root = root;
  }

  /** The evaluator visits the nodes below the root through its counted `run`; the root is priced here. */
  private run(activation: Record<string, unknown>): unknown {
    const tracker = activeTracker();
    if (tracker !== undefined) tracker.add(this.root.costUnits ?? (this.root.costUnits = nodePrice(this.root)));
    return this.evaluateRoot(activation);
  }

  /** The value of the expression; throws CelEvaluationError (CelCostError when over budget). */
  evaluate(activation: Record<string, unknown>, options: EvaluateOptions = {}): EvaluationResult {
    const budget = options.budget;
    if (budget !== undefined) return this.evaluateWithin(activation, budget, options.costLimit ?? budget.perCallLimit);
    const tracker = options.costLimit === undefined ? undefined : new CostTracker(options.costLimit);
    try {
      const value = withTracker(tracker, () => this.run(activation));
      return tracker ? { value, cost: tracker.used } : { value };
    } catch (e) {
      throw toEvaluationError(e);
    }
  }

  private evaluateWithin(activation: Record<string, unknown>, budget: CostBudget, perCall: number): EvaluationResult {
    if (budget.exhausted) throw new CelBudgetError();
    const limit = Math.min(perCall, budget.remaining);
    const tracker = new CostTracker(limit);
    let value: unknown;
    try {
      value = withTracker(tracker, () => this.run(activation));
    } catch (e) {
      if (e instanceof CelCostError) {
        // Kubernetes runs no further rule of the object once one is stopped by cost: stopped by
        // what was left of the total, the total ran out; stopped by its own limit, that error.
        if (limit < perCall) budget.spend(budget.remaining + 1);
        budget.remaining = -1;
        throw e;
      }
      budget.spend(Math.min(tracker.used, budget.remaining));
      throw toEvaluationError(e);
    }
    budget.spend(tracker.used);
    return { value, cost: tracker.used };
  }
}

type Compiled = CelProgram | CelCompileError;

/** Programs by environment and expression, least recently used first. */
class ProgramCache {
  private readonly capacity: number;
  private readonly entries = new Map<string, Compiled>();
  constructor(capacity: number) {
    this.capacity = capacity;
  }
  get(key: string): Compiled | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }
  set(key: string, value: Compiled): void {
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
  get size(): number {
    return this.entries.size;
  }
}

const cache = new ProgramCache(4096);
let nextId = 0;

export class CelEnvironment {
  /** Distinguishes this environment's programs in the shared cache. */
  readonly id = `env${nextId++}`;
  private readonly env: Environment;
  readonly variables: readonly CelVariable[];

  constructor(spec: EnvironmentSpec) {
    const env = spec.homogeneousAggregateLiterals === false ? baseEnvironment().clone({ homogeneousAggregateLiterals: false }) : baseEnvironment().clone();
    for (const t of spec.types ?? []) env.registerType(t.name, { fields: t.fields });
    const variables = [...spec.variables];
    for (const ext of spec.extensions ?? []) {
      ext.register(registrar(env));
      variables.push(...(ext.variables ?? []));
    }
    for (const v of variables) env.registerVariable(v.name, v.type);
    countNodes(env);
    this.env = env;
    this.variables = variables;
  }

  /** The compiled program, from the cache when this expression was compiled before. */
  compile(expression: string): CelProgram {
    const key = `${this.id}\n${expression}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = this.compileUncached(expression);
      cache.set(key, compiled);
    }
    if (compiled instanceof CelCompileError) throw compiled;
    return compiled;
  }

  private compileUncached(expression: string): Compiled {
    try {
      if (expression.includes(PROBE)) return new CelCompileError(expression, [{ message: `undeclared reference to '${PROBE}' (in container '')`, line: 1, column: expression.indexOf(PROBE) + 1 }]);
      const parsed = this.env.parse(expression);
      const root = parsed.ast as unknown as AstNode;
      const issues = rewriteBeforeCheck(expression, root);
      if (issues.length > 0) return new CelCompileError(expression, issues);
      const checked = parsed.check();
      if (!checked.valid) return toCompileError(expression, checked.error);
      rewriteAfterCheck(root);
      return new CelProgram(expression, checked.type ?? 'dyn', (activation) => parsed(activation), root);
    } catch (e) {
      return toCompileError(expression, e);
    }
  }
}

/** How many programs the shared cache holds (for tests). */
export function cachedPrograms(): number {
  return cache.size;
}
