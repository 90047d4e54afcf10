// The static worst-case cost of a compiled expression, as cel-go's checker estimates it
// (checker/cost.go) with Kubernetes' library prices (library/cost.go) and schema sizes
// (sizes.ts): the same unit prices as the runtime counter (cost.ts), sizes taken from the literals
// written in the expression or, by path (`self.spec.items.@items`), from the schema's bounds; a
// comprehension costs its range, then its size times the cost of one iteration. A validation rule
// whose worst case exceeds the budget is refused when it is written, with Kubernetes' message.

import type { AstNode } from './rewrite.ts';
import type { CelProgram } from './environment.ts';
import type { SchemaEnvironment } from './schema.ts';
import type { TypeBounds } from './sizes.ts';
import { OVERRIDE_SUFFIX } from './errors.ts';
import { AUTHZ_CHECK_COST, PRICES, STATIC_ESTIMATED_COST_LIMIT } from './cost.ts';
import type { TwoVarKind } from './library/comprehensions.ts';

/** cel-go's estimates saturate at the largest uint64. */
const MAX = 18446744073709551615;

export interface CostEstimate {
  min: number;
  max: number;
}

type Size = CostEstimate;

const UNKNOWN: Size = { min: 0, max: MAX };
const fixed = (n: number): CostEstimate => ({ min: n, max: n });
const ZERO = fixed(0);

const sat = (n: number): number => (n >= MAX ? MAX : n);
const add = (a: CostEstimate, b: CostEstimate): CostEstimate => ({ min: sat(a.min + b.min), max: sat(a.max + b.max) });
const mul = (a: CostEstimate, b: CostEstimate): CostEstimate => ({ min: sat(a.min * b.min), max: sat(a.max * b.max) });
const union = (a: CostEstimate, b: CostEstimate): CostEstimate => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });
function factor(size: Size, f: number): CostEstimate {
  const by = (x: number) => (x > 0 && x > MAX / f ? MAX : sat(Math.ceil(x * f)));
  return { min: by(size.min), max: by(size.max) };
}
const sum = (costs: CostEstimate[]): CostEstimate => costs.reduce(add, ZERO);

const TRAVERSAL = PRICES.stringTraversalFactor;
const SCALAR_TYPES = new Set(['google.protobuf.Duration', 'google.protobuf.Timestamp', 'bool', 'int', 'uint', 'double']);

interface Local {
  path: string[] | undefined;
  size: Size | undefined;
  /** The size of the elements of a list (literal lists). */
  elementSize?: Size;
  /** The sizes of the keys and values of a map (map literals). */
  entrySize?: MapEntrySize;
}

interface MapEntrySize {
  key: Size;
  value: Size;
}

/** Where the estimator finds the bounds of a variable (a rule environment's self and oldSelf). */
export type BoundsOf = (variable: string) => TypeBounds | undefined;

function boundsAt(root: TypeBounds | undefined, path: string[]): TypeBounds | undefined {
  let node = root;
  for (const step of path) {
    if (node === undefined) return undefined;
    node = step === '@items' ? node.items : step === '@values' ? node.values : step === '@keys' ? node.keys : node.fields?.[step];
  }
  return node;
}

const isText = (n: AstNode): boolean => n.checkedType?.name === 'string' || n.checkedType?.name === 'bytes';
const isList = (n: AstNode): boolean => n.checkedType?.kind === 'list';

function argsOf(node: AstNode): AstNode[] {
  return node.args as AstNode[];
}

function literal(node: AstNode): unknown {
  return node.op === 'value' ? node.args : undefined;
}

class Estimator {
  private readonly boundsOf: BoundsOf;
  private readonly paths = new Map<AstNode, string[]>();
  private readonly sizes = new Map<AstNode, Size>();
  private readonly elementSizes = new Map<AstNode, Size>();
  private readonly mapEntrySizes = new Map<AstNode, MapEntrySize>();
  private readonly scopes: Map<string, Local>[] = [];

  constructor(boundsOf: BoundsOf) {
    this.boundsOf = boundsOf;
  }

  private local(name: string): Local | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const v = this.scopes[i]!.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  private path(node: AstNode): string[] | undefined {
    if (node.op === 'id') {
      const v = this.local(node.args as string);
      if (v !== undefined) return v.path;
    }
    return this.paths.get(node);
  }

  /** cel-go's computeSize: known sizes, literal sizes, sizes by path, 1 for scalars. */
  private size(node: AstNode): Size | undefined {
    const known = this.sizes.get(node);
    if (known !== undefined) return known;
    const v = literal(node);
    if (node.op === 'value') {
      if (typeof v === 'string') return fixed([...v].length);
      if (v instanceof Uint8Array) return fixed(v.length);
      return fixed(1);
    }
    if (node.op === 'list') return fixed(argsOf(node).length);
    if (node.op === 'map') return fixed((node.args as unknown[]).length);
    const path = this.path(node);
    if (path !== undefined && path.length > 0) {
      const bounds = boundsAt(this.boundsOf(path[0]!), path.slice(1));
      if (bounds !== undefined) return { min: 0, max: bounds.maxElements };
    }
    const t = node.checkedType;
    // cel-go's scalars (bool, int, uint, double, duration, timestamp) have size 1.
    if (t?.kind === 'primitive' && t.name !== 'string' && t.name !== 'bytes') return fixed(1);
    if (t !== undefined && SCALAR_TYPES.has(t.name)) return fixed(1);
    if (node.op === 'id') return this.local(node.args as string)?.size;
    return undefined;
  }

  private sizeOrUnknown(node: AstNode): Size {
    return this.size(node) ?? UNKNOWN;
  }

  /** The size of the elements of a list node (literal lists and paths), if known. */
  private elementSize(node: AstNode): Size | undefined {
    const known = this.elementSizes.get(node);
    if (known !== undefined) return known;
    if (node.op === 'id') {
      const v = this.local(node.args as string);
      if (v?.elementSize !== undefined) return v.elementSize;
    }
    return this.pathElementSize(node);
  }

  /** The sizes of a map literal's keys and values (cel-go's entry size), if known. */
  private mapEntrySize(node: AstNode): MapEntrySize | undefined {
    const known = this.mapEntrySizes.get(node);
    if (known !== undefined) return known;
    if (node.op === 'id') return this.local(node.args as string)?.entrySize;
    return undefined;
  }

  /**
   * The size of a list's elements as Kubernetes' library estimates read it: by path only (the
   * elements of a list written in the expression have no path, so their size is unknown).
   */
  private pathElementSize(node: AstNode): Size | undefined {
    const path = this.path(node);
    if (path !== undefined && path.length > 0) {
      const bounds = boundsAt(this.boundsOf(path[0]!), [...path.slice(1), '@items']);
      if (bounds !== undefined) return { min: 0, max: bounds.maxElements };
    }
    return undefined;
  }

  cost(node: AstNode): CostEstimate {
    switch (node.op) {
      case 'value':
        return ZERO;
      case 'id': {
        if (node.meta.alternate !== undefined) return ZERO;
        const name = node.args as string;
        if (this.local(name) === undefined) this.paths.set(node, [name]);
        return fixed(PRICES.selectAndIdent);
      }
      case '.':
      case '.?': {
        const [operand, field] = node.args as [AstNode, string];
        const c = this.cost(operand);
        const p = this.path(operand);
        if (p !== undefined) this.paths.set(node, [...p, field]);
        if (node.op === '.?') return add(c, fixed(1));
        return operand.checkedType?.kind === 'dyn' ? c : add(c, fixed(PRICES.selectAndIdent));
      }
      case '[]':
      case '[?]': {
        const [target, index] = argsOf(node);
        const c = add(add(this.cost(target!), this.cost(index!)), fixed(1));
        const p = this.path(target!);
        if (p !== undefined) this.paths.set(node, [...p, isList(target!) ? '@items' : '@values']);
        const element = this.elementSizes.get(target!);
        if (element !== undefined) this.sizes.set(node, element);
        return c;
      }
      case 'list': {
        const items = argsOf(node);
        let element: Size | undefined = items.length === 0 ? ZERO : undefined;
        const costs = items.map((x) => {
          const c = this.cost(x);
          const s = this.sizeOrUnknown(x);
          element = element === undefined ? s : union(element, s);
          return c;
        });
        if (element !== undefined) this.elementSizes.set(node, element);
        return add(sum(costs), fixed(PRICES.listCreate));
      }
      case 'map': {
        const entries = node.args as [AstNode, AstNode][];
        let key: Size | undefined = entries.length === 0 ? ZERO : undefined;
        let value: Size | undefined = key;
        const costs = entries.flatMap(([k, v]) => {
          const c = [this.cost(k), this.cost(v)];
          const ks = this.sizeOrUnknown(k);
          const vs = this.sizeOrUnknown(v);
          key = key === undefined ? ks : union(key, ks);
          value = value === undefined ? vs : union(value, vs);
          return c;
        });
        if (key !== undefined && value !== undefined) this.mapEntrySizes.set(node, { key, value });
        return add(sum(costs), fixed(PRICES.mapCreate));
      }
      case '&&':
      case '||': {
        const [l, r] = argsOf(node).map((x) => this.cost(x)) as [CostEstimate, CostEstimate];
        return { min: l.min, max: sat(l.max + r.max) };
      }
      case '?:': {
        const [c, t, f] = argsOf(node);
        const cost = add(this.cost(c!), union(this.cost(t!), this.cost(f!)));
        this.sizes.set(node, union(this.sizeOrUnknown(t!), this.sizeOrUnknown(f!)));
        return cost;
      }
      case '!_':
        return add(this.cost(node.args as unknown as AstNode), fixed(1));
      case '-_': {
        const operand = (Array.isArray(node.args) ? node.args[0] : node.args) as AstNode;
        return operand.op === 'value' ? ZERO : add(this.cost(operand), fixed(1));
      }
      case 'call':
      case 'rcall':
        return this.call(node);
      default:
        if (Array.isArray(node.args) && node.args.length === 2) return this.binary(node);
        return fixed(1);
    }
  }

  private binary(node: AstNode): CostEstimate {
    const [l, r] = argsOf(node) as [AstNode, AstNode];
    const args = add(this.cost(l), this.cost(r));
    switch (node.op) {
      case '==':
      case '!=':
        return add(args, this.compare(l, r));
      case '<':
      case '<=':
      case '>':
      case '>=':
        return add(args, isText(l) && isText(r) ? this.compare(l, r) : fixed(1));
      case 'in':
        return add(args, isList(r) ? this.sizeOrUnknown(r) : fixed(1));
      case '+': {
        if (isText(l) || isList(l)) {
          const size = add(this.sizeOrUnknown(l), this.sizeOrUnknown(r));
          this.sizes.set(node, size);
          if (isList(l)) {
            const el = this.elementSize(l);
            const er = this.elementSize(r);
            if (el !== undefined && er !== undefined) this.elementSizes.set(node, union(el, er));
            return add(args, fixed(1));
          }
          return add(args, factor(size, TRAVERSAL));
        }
        return add(args, fixed(1));
      }
      default:
        return add(args, fixed(1));
    }
  }

  /** Equality and ordering of strings, bytes, lists, maps: a tenth of the smaller maximum size. */
  private compare(l: AstNode, r: AstNode): CostEstimate {
    const name = l.checkedType?.name;
    // Kubernetes: quantities, IPs and CIDRs compare at 1; URLs by the size of the (right-hand) URL text.
    if (name === 'kubernetes.Quantity' || name === 'net.IP' || name === 'net.CIDR') return fixed(1);
    if (name === 'kubernetes.URL') return factor({ min: 1, max: (this.size(r) ?? fixed(1)).max }, TRAVERSAL);
    const smallestMax = Math.min(this.sizeOrUnknown(l).max, this.sizeOrUnknown(r).max);
    return factor({ min: smallestMax > 0 ? 1 : 0, max: smallestMax }, TRAVERSAL);
  }

  private call(node: AstNode): CostEstimate {
    const isMethod = node.op === 'rcall';
    const rawName = (node.args as [string])[0];
    const name = rawName.replace(OVERRIDE_SUFFIX, '');
    const target = isMethod ? ((node.args as [string, AstNode])[1] as AstNode) : undefined;
    const args = ((isMethod ? (node.args as unknown[])[2] : (node.args as unknown[])[1]) ?? []) as AstNode[];
    const macro = node.meta.macro as { twoVariable?: TwoVarKind } | undefined;
    if (node.meta.alternate !== undefined) return this.comprehension(node, name, target!, args, false);
    if (macro !== undefined) {
      if (macro.twoVariable !== undefined) return this.comprehension(node, macro.twoVariable, target!, args, true);
      if (name === 'has') {
        // A presence test costs what reaching the tested field's parent costs (tests are free).
        const sel = args[0]!;
        const operand = (sel.args as [AstNode])[0];
        return this.cost(operand);
      }
      if (name === 'bind') return this.bind(args);
      return fixed(1);
    }
    const namespace = target?.op === 'id' && target.meta.alternate !== undefined;
    const targetCost = target !== undefined && !namespace ? this.cost(target) : ZERO;
    const argCosts = sum(args.map((a) => this.cost(a)));
    const base = add(targetCost, argCosts);
    const subject = namespace ? args[0] : (target ?? args[0]);
    const own = this.callPrice(name, node, subject, target !== undefined && !namespace ? args : args.slice(1));
    return add(base, own);
  }

  /** The price of a call by its function, as cel-go and Kubernetes' library estimate it. */
  private callPrice(name: string, node: AstNode, subject: AstNode | undefined, rest: AstNode[]): CostEstimate {
    const size = (n: AstNode | undefined) => (n === undefined ? UNKNOWN : this.sizeOrUnknown(n));
    switch (name) {
      case 'check':
        return fixed(AUTHZ_CHECK_COST);
      case 'startsWith':
      case 'endsWith':
        return factor(size(rest[0]), TRAVERSAL);
      case 'contains':
        if (subject && isList(subject) && rest[0] !== undefined) return add(mul(size(subject), size(rest[0])), fixed(1));
        return subject && isText(subject) ? mul(factor(size(subject), TRAVERSAL), factor(size(rest[0]), TRAVERSAL)) : fixed(1);
      case 'intersects':
      case 'equivalent':
        // cel-go's sets: 1 and the product of the lists' sizes (twice for equivalent).
        if (!subject || rest[0] === undefined) return fixed(1);
        return add(factor(mul(size(subject), size(rest[0])), name === 'equivalent' ? 2 : 1), fixed(1));
      case 'matches':
      case 'find':
      case 'findAll': {
        const strCost = factor(add(size(subject), fixed(1)), TRAVERSAL);
        const regexCost = factor(size(rest[0]), PRICES.regexLengthFactor);
        if (name !== 'matches') this.sizes.set(node, { min: 0, max: size(subject).max });
        return mul(strCost, regexCost);
      }
      case 'string':
      case 'bytes': {
        // Only string(bytes) and bytes(string) have a price and a result size in cel-go; every other
        // conversion (string(int), string(timestamp), string(string), …) costs 1 and its result's
        // size is unknown. A dyn argument may be either, so the estimate covers both overloads.
        const from = name === 'string' ? 'bytes' : 'string';
        const argType = subject?.checkedType;
        if (!subject || (argType?.name !== from && argType?.kind !== 'dyn')) return fixed(1);
        const s = size(subject);
        this.sizes.set(node, name === 'bytes' ? { min: s.min, max: sat(s.max * 4) } : { min: Math.floor(s.min / 4), max: s.max });
        const traversal = factor(s, TRAVERSAL);
        return argType.kind === 'dyn' ? union(traversal, fixed(1)) : traversal;
      }
      case 'quote': {
        const s = size(subject);
        this.sizes.set(node, { min: s.min + 2, max: sat(s.max * 2 + 2) });
        return factor(s, TRAVERSAL);
      }
      case 'format':
        return factor(size(subject), TRAVERSAL);
      case 'isSorted':
      case 'sum':
      case 'max':
      case 'min':
      case 'indexOf':
      case 'lastIndexOf': {
        if (!subject) return fixed(1);
        if (!isList(subject)) return factor(size(subject), TRAVERSAL);
        let element = fixed(1);
        if (/^list<(string|bytes)>$/.test(subject.checkedType?.name ?? '')) element = add(element, factor(this.pathElementSize(subject) ?? UNKNOWN, TRAVERSAL));
        return mul(size(subject), element);
      }
      case 'url':
      case 'lowerAscii':
      case 'upperAscii':
      case 'substring':
      case 'trim': {
        const s = size(subject);
        this.sizes.set(node, s);
        return factor(s, TRAVERSAL);
      }
      case 'replace': {
        const s = size(subject);
        const old = size(rest[0]);
        const by = size(rest[1]);
        const count: Size = { min: 0, max: 0 };
        const retained: Size = { min: 0, max: 0 };
        if (old.min === 0) {
          count.max = s.max < MAX ? s.max + 1 : s.max;
          retained.max = s.max;
        } else if (by.max <= old.min) retained.max = s.max;
        else count.max = Math.ceil(s.max / old.min);
        if (old.max === 0) {
          count.min = s.min < MAX ? s.min + 1 : s.min;
          retained.min = s.min;
        } else if (old.max <= by.min) retained.min = s.min;
        else count.min = Math.ceil(s.min / old.max);
        this.sizes.set(node, add(mul(count, by), retained));
        return factor(s, 2 * TRAVERSAL);
      }
      case 'split': {
        const s = size(subject);
        const limit = rest[1] !== undefined ? literal(rest[1]) : undefined;
        this.sizes.set(node, { min: 0, max: typeof limit === 'bigint' ? Number(limit) : s.max });
        return factor(s, 2 * TRAVERSAL);
      }
      case 'join': {
        if (!subject) return fixed(1);
        const n = size(subject);
        let s = mul(n, this.pathElementSize(subject) ?? UNKNOWN);
        if (rest[0] !== undefined) s = add(s, mul(size(rest[0]), { min: Math.max(0, n.min - 1), max: Math.max(0, n.max - 1) }));
        this.sizes.set(node, s);
        return factor(s, TRAVERSAL);
      }
      case 'quantity':
      case 'isQuantity':
      case 'semver':
      case 'isSemver':
      case 'cidr':
      case 'isIP':
      case 'isCIDR':
        return factor(size(subject), TRAVERSAL);
      case 'ip':
        // cidr.ip() reads a field; ip(string) parses the string.
        return subject?.checkedType?.name === 'net.CIDR' ? fixed(1) : factor(size(subject), TRAVERSAL);
      case 'isCanonical':
        return factor(size(subject), 2 * TRAVERSAL);
      case 'masked':
      case 'prefixLength':
      case 'family':
      case 'isUnspecified':
      case 'isLoopback':
      case 'isLinkLocalMulticast':
      case 'isLinkLocalUnicast':
      case 'isGlobalUnicast':
        return fixed(1);
      case 'validate':
        // A named format's validation: Kubernetes prices it as a match of its longest pattern (128).
        return subject?.checkedType?.name === 'kubernetes.NamedFormat' ? factor(factor(size(rest[0]), TRAVERSAL), 128 * PRICES.regexLengthFactor) : fixed(1);
      case 'containsIP':
      case 'containsCIDR': {
        // Two addresses of 4 or 16 bytes compared; a CIDR also masked; a string argument parsed first.
        const bytes: Size = { min: 4, max: 16 };
        let cost = factor(add(bytes, bytes), TRAVERSAL);
        if (name === 'containsCIDR') cost = add(add(cost, factor(bytes, TRAVERSAL)), fixed(1));
        if (rest[0] !== undefined && isText(rest[0])) cost = add(cost, factor(size(rest[0]), TRAVERSAL));
        return cost;
      }
      default:
        return fixed(1);
    }
  }

  /**
   * A comprehension as cel-go expands the macro: range, accumulator, then the range's size times
   * one iteration (loop condition and step), then the result. One variable: the element of a list
   * or the key of a map; two (`two`): index or key, and element or value. A macro that builds a list
   * or a map gives one of the range's size; a list's elements are the size of what each step adds.
   */
  private comprehension(node: AstNode, name: string, range: AstNode, args: AstNode[], two: boolean): CostEstimate {
    const rangeCost = this.cost(range);
    const count = this.sizeOrUnknown(range);
    const rangePath = this.path(range);
    const list = isList(range);
    const sub = (step: string) => (rangePath === undefined ? undefined : [...rangePath, step]);
    const entry = list ? undefined : this.mapEntrySize(range);
    const element = list ? this.elementSize(range) : entry?.value;
    const scope = new Map<string, Local>();
    if (two) {
      scope.set(args[0]!.args as string, { path: sub(list ? '@indices' : '@keys'), size: list ? undefined : entry?.key });
      scope.set(args[1]!.args as string, { path: sub(list ? '@items' : '@values'), size: element });
    } else {
      scope.set(args[0]!.args as string, { path: sub(list ? '@items' : '@keys'), size: list ? element : entry?.key });
    }
    this.scopes.push(scope);
    const first = two ? 2 : 1;
    const body = args[args.length - 1]!;
    const filter = args.length === first + 2 ? args[first] : undefined;
    /** A step that adds to the accumulator when the filter keeps the element: the filter, then the step or __result__ (1). */
    const filtered = (step: CostEstimate) => (filter === undefined ? step : add(this.cost(filter), union(step, fixed(1))));
    let init = ZERO;
    let loop: CostEstimate;
    let result = fixed(1);
    let builds = true;
    let added: Size | undefined;
    switch (name) {
      case 'all':
      case 'exists': {
        // @not_strictly_false(__result__) (2) or @not_strictly_false(!__result__) (3), then
        // __result__ &&/|| predicate.
        const p = this.cost(body);
        loop = add(fixed(name === 'exists' ? 3 : 2), { min: 1, max: sat(1 + p.max) });
        builds = false;
        break;
      }
      case 'exists_one':
      case 'existsOne':
        // predicate ? __result__ + 1 : __result__, then __result__ == 1
        loop = add(this.cost(body), { min: 1, max: 2 });
        result = fixed(2);
        builds = false;
        break;
      case 'map':
      case 'transformList':
        // __result__ + [transform]
        init = fixed(PRICES.listCreate);
        loop = filtered(add(this.cost(body), fixed(PRICES.listCreate + 2)));
        added = this.sizeOrUnknown(body);
        break;
      case 'filter':
        // predicate ? __result__ + [x] : __result__
        init = fixed(PRICES.listCreate);
        loop = add(this.cost(body), { min: 1, max: PRICES.listCreate + 3 });
        added = this.sizeOrUnknown(args[0]!);
        break;
      case 'transformMap':
        // cel.@mapInsert(__result__, k, transform)
        init = fixed(PRICES.mapCreate);
        loop = filtered(add(this.cost(body), fixed(3)));
        break;
      case 'transformMapEntry':
        // cel.@mapInsert(__result__, entry)
        init = fixed(PRICES.mapCreate);
        loop = filtered(add(this.cost(body), fixed(2)));
        break;
      default:
        loop = fixed(1);
        builds = false;
    }
    this.scopes.pop();
    if (builds) this.sizes.set(node, count);
    if (added !== undefined) this.elementSizes.set(node, union(ZERO, added));
    return add(add(add(rangeCost, init), result), mul(count, loop));
  }

  /** cel.bind: an empty range (a list literal), the value, and the body with the name bound to it. */
  private bind(args: AstNode[]): CostEstimate {
    const [name, value, body] = args as [AstNode, AstNode, AstNode];
    const valueCost = this.cost(value);
    this.scopes.push(new Map([[name.args as string, { path: this.path(value), size: this.size(value), elementSize: this.elementSizes.get(value), entrySize: this.mapEntrySizes.get(value) }]]));
    const bodyCost = this.cost(body);
    this.scopes.pop();
    return add(add(fixed(PRICES.listCreate), valueCost), bodyCost);
  }
}

/** Where a program's variables take their sizes from: a schema environment, or none. */
export type SizeSource = SchemaEnvironment | BoundsOf | undefined;

/**
 * The minimum and maximum cost of evaluating `program`, worst case over every value its
 * variables' schemas admit (`env`: the rule environment it was compiled in, for the bounds of
 * `self` and `oldSelf`; without one, variables' sizes are unknown).
 */
export function estimateCost(program: CelProgram, env?: SizeSource): CostEstimate {
  const boundsOf: BoundsOf = env === undefined ? () => undefined : typeof env === 'function' ? env : (name) => env.variableType(name)?.bounds;
  return new Estimator(boundsOf).cost(program.root);
}

/**
 * Kubernetes' wording of an estimated cost over its limit: "<what> exceeds budget by factor of
 * <N>x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays,
 * maps, and strings are declared)"; N as Go formats it (six decimals under 1.5, one up to 100,
 * then "more than 100x").
 */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const exceed = cost / limit;
  const factorText = exceed > 100 ? 'more than 100x' : exceed < 1.5 ? `${exceed.toFixed(6)}x` : `${exceed.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factorText} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

export interface CostCheckOptions {
  /** The limit (Kubernetes' StaticEstimatedCostLimit by default). */
  limit?: number;
  /** How many times the rule can run in one object (rules under lists and maps), 1 by default. */
  cardinality?: number;
  /** What the message calls the cost: "estimated rule cost" or "estimated messageExpression cost". */
  costName?: string;
}

export interface CostCheckFailure {
  /** The field path of the refused expression (`…x-kubernetes-validations[0].rule`). */
  field: string;
  /** Kubernetes' message. */
  message: string;
  /** The estimated worst case, times the cardinality. */
  cost: number;
}

/**
 * Refuses an expression whose worst-case cost (times how many times it can run) exceeds the
 * budget, as Kubernetes refuses it when a schema is written (a Forbidden cause at `field`).
 */
export function checkEstimatedCost(program: CelProgram, env: SizeSource, field: string, options: CostCheckOptions = {}): CostCheckFailure | undefined {
  const limit = options.limit ?? STATIC_ESTIMATED_COST_LIMIT;
  const cost = sat(estimateCost(program, env).max * (options.cardinality ?? 1));
  if (cost <= limit) return undefined;
  return { field, cost, message: costErrorMessage(options.costName ?? 'estimated rule cost', cost, limit) };
}
