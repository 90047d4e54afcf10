// The expression language, loaded the first time something needs it: a start whose kinds,
// authenticators and authorizers hold no expression never loads it (the library, its Kubernetes
// additions and the base environment cost a start tens of milliseconds). What needs it awaits
// loadCel() once at a point that waits anyway — building the store of a kind whose schema has
// validation rules, the first write of a kind whose validation compiles rules (CRDs), reading an
// authentication or authorization configuration — and then uses cel() synchronously. This module
// imports the language's modules only dynamically, and only their types statically.

export interface Cel {
  errors: typeof import('./errors.ts');
  rules: typeof import('./rules.ts');
  estimate: typeof import('./estimate.ts');
  cost: typeof import('./cost.ts');
  uses: typeof import('./uses.ts');
  regex: typeof import('./library/regex.ts');
}

let loaded: Cel | undefined;
let loading: Promise<Cel> | undefined;

/** Loads the expression language (once); resolves with its modules. */
export function loadCel(): Promise<Cel> {
  return (loading ??= Promise.all([import('./errors.ts'), import('./rules.ts'), import('./estimate.ts'), import('./cost.ts'), import('./uses.ts'), import('./library/regex.ts')]).then(
    ([errors, rules, estimate, cost, uses, regex]) => (loaded = { errors, rules, estimate, cost, uses, regex }),
  ));
}

/** The loaded expression language; throws when nothing awaited loadCel() before (a bug of the caller). */
export function cel(): Cel {
  if (loaded === undefined) throw new Error('the expression language is used before it was loaded: await loadCel() first');
  return loaded;
}
