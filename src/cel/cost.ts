// The runtime cost of an evaluation, priced as Kubernetes prices it (cel-go's runtime cost tracker
// with the Kubernetes library's prices). Evaluation is synchronous, so one tracker is active at a
// time: the program sets it before it runs and clears it after. Two things charge it:
//  - every AST node the evaluator visits, at the unit price of its kind (`nodePrice`: identifiers,
//    field selections and indexes 1, list literals 10, map literals 30, constants and the logical
//    operators nothing); the evaluator's `run` is replaced once per environment by a counting one
//    (environment.ts), which also prices each comprehension iteration;
//  - operators and functions whose work grows with their operands (`callPrice`: string equality
//    and ordering, `in` on a list, `contains`, `startsWith`, `matches`, the string, list, regex,
//    URL and quantity libraries), charged before the work is done (rewrite.ts wraps them).
// Budgets: a per-expression limit (Kubernetes' PerCallLimit) and a total per object for
// validation rules (RuntimeCELCostBudget), both configurable (`CostBudget`).

import { CelBudgetError, CelCostError } from './errors.ts';
import { CelCIDR } from './library/net.ts';
import { CelFormat } from './library/named-format.ts';

/** Kubernetes' limit on one evaluation (PerCallLimit). */
export const DEFAULT_PER_CALL_LIMIT = 1_000_000;
/** Kubernetes' total for the validation rules of one object (RuntimeCELCostBudget). */
export const DEFAULT_RUNTIME_BUDGET = 10_000_000;
/** Kubernetes' limit on the estimated cost of one rule (StaticEstimatedCostLimit). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Kubernetes' limit on the estimated cost of all rules of one schema (StaticEstimatedCRDCostLimit). */
export const STATIC_ESTIMATED_TOTAL_COST_LIMIT = 100_000_000;

/**
 * An authorization check of the authorizer library: fixed, and large, so that an expression under
 * the per-call limit makes at most two (Kubernetes' library/cost.go).
 */
export const AUTHZ_CHECK_COST = 350_000;

/** cel-go's unit prices (common/cost.go). */
export const PRICES = {
  selectAndIdent: 1,
  listCreate: 10,
  mapCreate: 30,
  structCreate: 40,
  stringTraversalFactor: 0.1,
  regexLengthFactor: 0.25,
} as const;

export class CostTracker {
  readonly limit: number;
  used = 0;
  constructor(limit: number) {
    this.limit = limit;
  }
  add(units: number): void {
    this.used += units;
    if (this.used > this.limit) throw new CelCostError(this.limit);
  }
}

/**
 * What the validation rules of one object may spend together. Each rule runs under the smaller of
 * the per-expression limit and what is left; a rule that needs more than what is left ends the
 * object's validation with Kubernetes' message (`CelBudgetError`).
 */
export class CostBudget {
  readonly total: number;
  readonly perCallLimit: number;
  remaining: number;
  constructor(
    total: number = DEFAULT_RUNTIME_BUDGET,
    perCallLimit: number = DEFAULT_PER_CALL_LIMIT,
  ) {
    this.total = total;
    this.perCallLimit = perCallLimit;
    this.remaining = total;
  }
  /** The limit of the next evaluation: the per-expression limit, or less when less is left. */
  nextLimit(): number {
    return Math.min(this.perCallLimit, this.remaining);
  }
  /** Records what an evaluation used. */
  spend(units: number): void {
    if (units > this.remaining) {
      this.remaining = -1;
      throw new CelBudgetError();
    }
    this.remaining -= units;
  }
  get exhausted(): boolean {
    return this.remaining <= 0;
  }
}

let active: CostTracker | undefined;

/** The tracker of the evaluation under way, if it tracks cost. */
export function activeTracker(): CostTracker | undefined {
  return active;
}

/** Charges the running evaluation, if it tracks cost. */
export function charge(units: number): void {
  if (active !== undefined) active.add(units);
}

/** Runs `fn` with `tracker` active (none: untracked), restoring the previous one after. */
export function withTracker<T>(tracker: CostTracker | undefined, fn: () => T): T {
  const previous = active;
  active = tracker;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/** ⌈length × 0.1⌉: what cel-go charges to read a string of this length once. */
export function traversalCost(length: number): number {
  return Math.ceil(length * PRICES.stringTraversalFactor);
}

/** Code points of a string (cel-go's size of a string). */
function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function isMapValue(v: object): boolean {
  return v instanceof Map || v.constructor === Object || v.constructor === undefined;
}

/** cel-go's actual size of a value: characters, bytes, elements, entries; 1 for everything else. */
export function actualSize(v: unknown): number {
  if (typeof v === 'string') return runeCount(v);
  if (typeof v !== 'object' || v === null) return 1;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length;
  if (v instanceof Set || v instanceof Map) return v.size;
  if (isMapValue(v)) return Object.keys(v).length;
  return 1;
}

/**
 * Kubernetes' traversal cost of a value (library/cost.go): a tenth of a unit a character, rounded
 * down, for strings and bytes; the sum over the elements of a list and the entries of a map; 1
 * for anything else.
 */
export function valueTraversalCost(v: unknown): number {
  if (typeof v === 'string') return Math.floor(runeCount(v) * PRICES.stringTraversalFactor);
  if (typeof v !== 'object' || v === null) return 1;
  if (v instanceof Uint8Array) return Math.floor(v.length * PRICES.stringTraversalFactor);
  if (Array.isArray(v) || v instanceof Set) {
    let cost = 0;
    for (const x of v) cost += valueTraversalCost(x);
    return cost;
  }
  if (v instanceof Map) {
    let cost = 0;
    for (const [k, x] of v) cost += valueTraversalCost(k) + valueTraversalCost(x);
    return cost;
  }
  if (isMapValue(v)) {
    let cost = 0;
    for (const [k, x] of Object.entries(v)) cost += valueTraversalCost(k) + valueTraversalCost(x);
    return cost;
  }
  return 1;
}

const isText = (v: unknown): boolean => typeof v === 'string' || v instanceof Uint8Array;

/**
 * The price of a binary operator on these operands (cel-go's runtime prices): equality and
 * ordering ⌈0.1 × the smaller size⌉, `in` on a list its size, string and bytes concatenation
 * ⌈0.1 × both sizes⌉; list concatenation is charged by the size of the list it builds (cel-go
 * concatenates lazily at 1, but here a concatenation copies, so what it copies is paid for);
 * every other operator 1.
 */
export function operatorPrice(op: string, l: unknown, r: unknown): number {
  switch (op) {
    case '==':
    case '!=':
      return traversalCost(Math.min(actualSize(l), actualSize(r)));
    case '<':
    case '<=':
    case '>':
    case '>=':
      return isText(l) && isText(r) ? traversalCost(Math.min(actualSize(l), actualSize(r))) : 1;
    case 'in':
      return Array.isArray(r) || r instanceof Set ? actualSize(r) : 1;
    case '+':
      if (isText(l) && isText(r)) return traversalCost(actualSize(l) + actualSize(r));
      if ((Array.isArray(l) || l instanceof Set) && (Array.isArray(r) || r instanceof Set)) return Math.max(1, actualSize(l) + actualSize(r));
      return 1;
    default:
      return 1;
  }
}

/** ⌈0.1 × (1 + |input|)⌉ × ⌈0.25 × |pattern|⌉: cel-go's price of a regex match. */
export function regexPrice(input: unknown, pattern: unknown): number {
  return traversalCost(1 + actualSize(input)) * Math.ceil(actualSize(pattern) * PRICES.regexLengthFactor);
}

type Price = (args: unknown[]) => number;

/** A sets function's price: its receiver is the namespace, then the two lists. */
const setsPrice = (a: unknown[], factor: number): number => (a.length === 3 ? 1 + Math.floor(actualSize(a[1]) * actualSize(a[2]) * factor) : 1);

const byFirst: Price = (a) => traversalCost(actualSize(a[0]));
const twiceFirst: Price = (a) => Math.ceil(actualSize(a[0]) * 2 * PRICES.stringTraversalFactor);
const traverseFirst: Price = (a) => valueTraversalCost(a[0]);
const one: Price = () => 1;

/**
 * Functions with a price of their own, by name (receiver first in `args`); any other call costs 1.
 * cel-go's built-ins (runtimecost.go) and the Kubernetes libraries (library/cost.go).
 */
const CALL_PRICES: Record<string, Price> = {
  // cel-go
  startsWith: byFirst,
  endsWith: byFirst,
  contains: (a) => (typeof a[0] === 'string' ? traversalCost(actualSize(a[0])) * traversalCost(actualSize(a[1])) : setsPrice(a, 1)),
  // cel-go's sets: 1 and the product of the lists' sizes (twice for equivalent).
  intersects: (a) => setsPrice(a, 1),
  equivalent: (a) => setsPrice(a, 2),
  matches: (a) => regexPrice(a[0], a[1]),
  bytes: (a) => (typeof a[0] === 'string' ? byFirst(a) : 1),
  string: (a) => (a[0] instanceof Uint8Array ? byFirst(a) : 1),
  quote: (a) => traversalCost(actualSize(a[1])),
  format: byFirst,
  // Kubernetes' libraries
  isSorted: traverseFirst,
  sum: traverseFirst,
  max: traverseFirst,
  min: traverseFirst,
  indexOf: traverseFirst,
  lastIndexOf: traverseFirst,
  url: byFirst,
  lowerAscii: byFirst,
  upperAscii: byFirst,
  substring: byFirst,
  trim: byFirst,
  replace: twiceFirst,
  split: twiceFirst,
  find: (a) => regexPrice(a[0], a[1]),
  findAll: (a) => regexPrice(a[0], a[1]),
  quantity: byFirst,
  isQuantity: byFirst,
  semver: byFirst,
  isSemver: byFirst,
  // IP and CIDR: parsing a string is a traversal of it; an accessor is nominal.
  cidr: byFirst,
  isIP: byFirst,
  isCIDR: byFirst,
  ip: (a) => (a[0] instanceof CelCIDR ? 1 : byFirst(a)),
  isCanonical: (a) => Math.ceil(actualSize(a[1]) * 2 * PRICES.stringTraversalFactor),
  masked: one,
  prefixLength: one,
  family: one,
  isUnspecified: one,
  isLoopback: one,
  isLinkLocalMulticast: one,
  isLinkLocalUnicast: one,
  isGlobalUnicast: one,
  // format: a regex of the format's size over the string, as cel-go prices a match.
  validate: (a) => (a[0] instanceof CelFormat ? Math.ceil((1 + actualSize(a[1])) * PRICES.stringTraversalFactor) * Math.ceil(a[0].maxRegexSize * PRICES.regexLengthFactor) : 1),
  containsIP: (a) => traversalCost(actualSize(a[0]) * 2) + (typeof a[1] === 'string' ? traversalCost(actualSize(a[1])) : 0),
  containsCIDR: (a) => traversalCost(actualSize(a[0]) * 2) + traversalCost(actualSize(a[0])) + 1 + (typeof a[1] === 'string' ? traversalCost(actualSize(a[1])) : 0),
  sign: one,
  check: () => AUTHZ_CHECK_COST,
};

/** Functions whose price depends on what they return (join: by the string it builds). */
const RESULT_PRICES: Record<string, (result: unknown) => number> = {
  join: (result) => Math.ceil(actualSize(result) * 2 * PRICES.stringTraversalFactor),
};

/** The price function of a call, if the function has one (else the call costs 1). */
export function callPriceOf(name: string): Price | undefined {
  return Object.hasOwn(CALL_PRICES, name) ? CALL_PRICES[name] : undefined;
}

export function resultPriceOf(name: string): ((result: unknown) => number) | undefined {
  return Object.hasOwn(RESULT_PRICES, name) ? RESULT_PRICES[name] : undefined;
}

