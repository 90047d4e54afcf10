// The runtime cost counter's hooks. Evaluation is synchronous, so one tracker is active at a time:
// the program sets it before it runs and clears it after. Two things charge it:
//  - every AST node the evaluator visits (the evaluator's `run` is replaced once per environment
//    by a counting one, see environment.ts), which also counts each comprehension iteration;
//  - every library function whose work grows with its input (string and regex functions by
//    length, list functions by size), through `charge`, as Kubernetes' cost model prices them.
// The static estimator and the exact Kubernetes unit prices are the next step (README.md).

import { CelCostError } from './errors.ts';

export class CostTracker {
  used = 0;
  constructor(readonly limit: number) {}
  add(units: number): void {
    this.used += units;
    if (this.used > this.limit) throw new CelCostError(this.limit);
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

/** Kubernetes prices string traversal at 0.1 unit a character, rounded up. */
export function traversalCost(length: number): number {
  return Math.ceil(length * 0.1);
}
