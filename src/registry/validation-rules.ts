// Validation rules (`x-kubernetes-validations`) of a kind's schema, run by the generic store on
// every create and update, with the semantics of Kubernetes' custom resource validation
// (apiextensions' schema/cel/validation.go):
//
// - Rules run at every node of the object where a value is present (null and absent values are
//   not validated), list items and map values included, with `self` the node's value.
// - Transition rules (naming `oldSelf`) run only on update and only where the node has an old
//   value: object properties and map values are matched by key, items of `x-kubernetes-list-type:
//   map` lists by their keys; items of set and atomic lists have no old value. A rule with
//   `optionalOldSelf` runs everywhere, with `oldSelf` an optional (none where there is no old value).
// - A false rule is one field error at the node (or at its `fieldPath`; `<nil>` at the root
//   itself, as Kubernetes prints its nil root path), of the rule's `reason` (FieldValueInvalid by
//   default, whose value is the node's schema type: `Invalid value: "object": <message>`), its
//   detail the string `messageExpression` gives, else `message`, else `failed rule: <rule>` (a
//   message expression that fails, or gives an empty or over-long text or one with line breaks,
//   falls back to `message`).
// - The rules of `allOf` entries run at their node, after its own rules and before its children,
//   with `self` of the node's type; an entry's properties and items reach only what the node
//   declares; errors inside an entry ratchet by the node's nearest correlated ancestor only.
//   Custom resources (`nestedRules: false`) may not write rules there, as in Kubernetes.
// - The rules do not run when other validation found the object malformed (a missing,
//   unsupported, too long or mistyped value); one error says so.
// - Ratcheting (Kubernetes' CRDValidationRatcheting, on by default): on update, a false rule that
//   is not a transition rule is a warning instead of an error where the value is unchanged — the
//   node's own old value when it is correlated, else that of its nearest correlated ancestor (so
//   an invalid value stored before a rule existed does not block unrelated updates).
// - Cost: each evaluation has the per-call limit, and all of an object's evaluations share one
//   budget; exceeding either ends the validation with Kubernetes' error.
//
// Rules are compiled when the store is built (src/cel/rules.ts); a bad rule in a definition stops
// the server at start-up.

import { isDeepStrictEqual } from 'node:util';
import type { Schema } from '../machinery/schema.ts';
import { fieldError, type FieldError } from '../machinery/field-errors.ts';
import type { CelCostError } from '../cel/errors.ts';
import type { CelProgram } from '../cel/environment.ts';
import type { CompiledRule } from '../cel/rules.ts';
import { MAX_REQUEST_SIZE_BYTES, schemaBounds } from '../cel/sizes.ts';
import { cel, type Cel } from '../cel/load.ts';

/** Kubernetes' PerCallLimit: the cost one evaluation may use. */
export const PER_CALL_COST_LIMIT = 1_000_000;
/** Kubernetes' RuntimeCELCostBudget: the cost all rules of one object may use together. */
export const PER_OBJECT_COST_BUDGET = 10_000_000;
/** Kubernetes' MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** How Kubernetes prints the field of an error at the object's root (a nil field.Path). */
export const ROOT_FIELD = '<nil>';

/** Errors of other validation that stop the rules from running (Kubernetes' hasBlockingErr). */
const BLOCKING = new Set<FieldError['type']>(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);
const NOT_CHECKED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** One schema node on the way to rules: its own rules and the children that lead to more. */
interface RuleNode {
  schema: Schema;
  rules: CompiledRule[];
  properties?: Map<string, RuleNode>;
  items?: RuleNode;
  values?: RuleNode;
  /** The rules under the node's `allOf` entries, checked against the same value. */
  allOf?: RuleNode[];
}

/** The estimated costs of a schema's rules as they are compiled: the limit, the running total, the refusals. */
interface CostTally {
  limit: number;
  total: number;
  problems: string[];
  /** Rules may be written under `allOf` (else they are refused, as in a custom resource's schema). */
  nestedRules: boolean;
}

/** Kubernetes' refusal of rules under allOf, anyOf, oneOf or not in a structural schema. */
export const NESTED_RULES_FORBIDDEN = 'must be empty to be structural';

/** Whether a schema (or an allOf entry, or anything under it) carries rules: its validation needs the expression language (loadCel). */
export function hasRules(s: Schema): boolean {
  if (s['x-kubernetes-validations']?.length) return true;
  return Object.values(s.properties ?? {}).some(hasRules) || (s.items !== undefined && hasRules(s.items)) || (s.additionalProperties !== undefined && hasRules(s.additionalProperties)) || (s.allOf ?? []).some(hasRules);
}

/** Refuses every rule under an allOf entry, at Kubernetes' field path. */
function refuseNestedRules(s: Schema, at: string, tally: CostTally): void {
  if (s['x-kubernetes-validations']?.length) tally.problems.push(`${at}.x-kubernetes-validations: Forbidden: ${NESTED_RULES_FORBIDDEN}`);
  for (const [name, p] of Object.entries(s.properties ?? {})) refuseNestedRules(p, `${at}.properties[${name}]`, tally);
  if (s.items) refuseNestedRules(s.items, `${at}.items`, tally);
  if (s.additionalProperties) refuseNestedRules(s.additionalProperties, `${at}.additionalProperties`, tally);
  (s.allOf ?? []).forEach((e, i) => refuseNestedRules(e, `${at}.allOf[${i}]`, tally));
}

/**
 * The rules of one node, compiled, and their worst-case cost checked as Kubernetes checks it when
 * a schema is written: each rule's and message expression's estimated cost, times the node's
 * cardinality (how many times it can run in one object: the product of the maxItems or
 * maxProperties of the lists and maps above it, or, under one without, how many values of the
 * node's minimum size a request can hold), is at most the per-expression limit, and all of them
 * together at most the per-schema limit.
 */
function buildNode(schema: Schema, resourceRoot: boolean, at: string, bound: number | undefined, tally: CostTally, validation: Schema = schema): RuleNode | undefined {
  // The rules of an allOf entry are compiled in the node's environment (`self` of the node's type),
  // as Kubernetes compiles them against the node's structural schema.
  const own = validation['x-kubernetes-validations'];
  const rulesSchema = validation === schema || !own?.length ? schema : { ...schema, 'x-kubernetes-validations': own };
  const rules = validation === schema || own?.length ? cel().rules.compileRules(rulesSchema, { resourceRoot, at }) : [];
  // Under a list or map without maxItems / maxProperties (`bound` undefined), Kubernetes counts how
  // many values of the node's own minimum size a request can hold, not the product of estimates.
  const cardinality = bound ?? (rules.length ? Math.floor(MAX_REQUEST_SIZE_BYTES / ((schemaBounds(schema, resourceRoot)?.minSerializedSize ?? 0) + 1)) : 0);
  // (Compiled in order: the i-th compiled rule is the node's i-th; a node of the same content may have compiled them.)
  const { checkEstimatedCost, estimateCost } = cel().estimate;
  for (const [i, c] of rules.entries()) {
    const where = `${at}.x-kubernetes-validations[${i}]`;
    tally.total = Math.min(Number.MAX_SAFE_INTEGER, tally.total + estimateCost(c.program, c.env).max * cardinality);
    const failures = [checkEstimatedCost(c.program, c.env, `${where}.rule`, { cardinality, limit: tally.limit })];
    if (c.messageProgram)
      failures.push(checkEstimatedCost(c.messageProgram, c.env, `${where}.messageExpression`, { cardinality, limit: tally.limit, costName: 'estimated messageExpression cost' }));
    for (const f of failures) if (f) tally.problems.push(`${f.field}: Forbidden: ${f.message}`);
  }
  // Children: those the validation schema describes, where the node declares them too (an allOf
  // entry's properties off the node's structure carry nothing to check).
  let properties: Map<string, RuleNode> | undefined;
  for (const [name, vp] of Object.entries(validation.properties ?? {})) {
    const p = schema.properties?.[name];
    if (p === undefined || !Object.hasOwn(schema.properties!, name)) continue;
    const n = buildNode(p, p['x-kubernetes-embedded-resource'] === true, `${at}.properties[${name}]`, bound, tally, validation === schema ? p : vp);
    if (n) (properties ??= new Map()).set(name, n);
  }
  // A declared maxItems / maxProperties multiplies the bound; a list or map without one leaves it unbounded.
  const below = (container: Schema): number | undefined => {
    const declared = container.type === 'array' ? container.maxItems : container.maxProperties;
    return bound === undefined || declared === undefined ? undefined : Math.min(Number.MAX_SAFE_INTEGER, bound * Math.max(0, declared));
  };
  const it = schema.items;
  const items = it && validation.items ? buildNode(it, it['x-kubernetes-embedded-resource'] === true, `${at}.items`, below(schema), tally, validation === schema ? it : validation.items) : undefined;
  const ap = schema.additionalProperties;
  const vap = validation.additionalProperties;
  const values = ap && vap ? buildNode(ap, ap['x-kubernetes-embedded-resource'] === true, `${at}.additionalProperties`, below(schema), tally, validation === schema ? ap : vap) : undefined;
  let allOf: RuleNode[] | undefined;
  (validation.allOf ?? []).forEach((entry, i) => {
    const where = `${at}.allOf[${i}]`;
    if (!tally.nestedRules) return refuseNestedRules(entry, where, tally);
    if (!hasRules(entry)) return;
    const n = buildNode(schema, resourceRoot, where, bound, tally, entry);
    if (n) (allOf ??= []).push(n);
  });
  if (rules.length === 0 && !properties && !items && !values && !allOf) return undefined;
  return { schema, rules, properties, items, values, allOf };
}

export interface RuleCostLimits {
  /** The cost one evaluation may use (default PER_CALL_COST_LIMIT). */
  perCall?: number;
  /** The cost all evaluations of one object may use together (default PER_OBJECT_COST_BUDGET). */
  perObject?: number;
  /** The estimated worst-case cost one rule may have, times its cardinality (default STATIC_ESTIMATED_COST_LIMIT). */
  estimated?: number;
  /** The estimated worst-case cost of all rules of the schema together (default STATIC_ESTIMATED_TOTAL_COST_LIMIT). */
  estimatedTotal?: number;
  /**
   * Whether rules may be written under `allOf` (default true, as Kubernetes allows for the
   * declarative validation of built-in types); false refuses them as a custom resource's
   * structural schema refuses them ("must be empty to be structural").
   */
  nestedRules?: boolean;
}

/**
 * The rules of a kind's schema, compiled; undefined when the schema has none. Throws
 * RuleDefinitionError. A schema with rules needs the expression language loaded (loadCel).
 */
export function ruleValidator(schema: Schema, limits: RuleCostLimits = {}): RuleValidator | undefined {
  // Most schemas (every built-in kind's) have no rule: nothing to compile, size or refuse.
  if (!hasRules(schema)) return undefined;
  const { cost, estimate, rules } = cel();
  const tally: CostTally = { limit: limits.estimated ?? cost.STATIC_ESTIMATED_COST_LIMIT, total: 0, problems: [], nestedRules: limits.nestedRules ?? true };
  const root = buildNode(schema, true, '<root>', 1, tally);
  const totalLimit = limits.estimatedTotal ?? cost.STATIC_ESTIMATED_TOTAL_COST_LIMIT;
  if (tally.total > totalLimit) tally.problems.push(`<root>.x-kubernetes-validations: Forbidden: ${estimate.costErrorMessage('total CRD cost', tally.total, totalLimit)}`);
  if (tally.problems.length > 0) throw new rules.RuleDefinitionError(tally.problems);
  return root && new RuleValidator(root, { perCall: limits.perCall ?? PER_CALL_COST_LIMIT, perObject: limits.perObject ?? PER_OBJECT_COST_BUDGET });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The state of one object's validation: its errors and the budget left (negative: stopped). */
interface Run {
  errors: FieldError[];
  warn?: (message: string) => void;
  remaining: number;
  perCall: number;
  /** The expression language's error classes (loaded when the validator was built). */
  failures: Cel['errors'];
}

export class RuleValidator {
  private readonly root: RuleNode;
  private readonly limits: Required<Pick<RuleCostLimits, 'perCall' | 'perObject'>>;
  private readonly failures = cel().errors;
  constructor(
    root: RuleNode,
    limits: Required<Pick<RuleCostLimits, 'perCall' | 'perObject'>>,
  ) {
    this.root = root;
    this.limits = limits;
  }

  /**
   * The field errors of `obj` (on update, `old` is the stored object); errors that ratchet go to
   * `warn` as warnings. `prior`: the errors other validation found; when one of them means the
   * object is malformed (a missing, unsupported, too long or mistyped value) the rules do not run
   * and one error says so, as in Kubernetes.
   */
  validate(obj: unknown, old?: unknown, warn?: (message: string) => void, prior: readonly FieldError[] = []): FieldError[] {
    if (prior.some((e) => BLOCKING.has(e.type))) return [fieldError.invalid(ROOT_FIELD, 'null', NOT_CHECKED)];
    const run: Run = { errors: [], warn, remaining: this.limits.perObject, perCall: this.limits.perCall, failures: this.failures };
    validateNode(this.root, '', obj, old, NEVER, run);
    return run.errors;
  }
}

/** Whether a node's errors ratchet: its value (or its nearest correlated ancestor's) is unchanged. */
type Unchanged = () => boolean;
const NEVER: Unchanged = () => false;

function unchangedFrom(value: unknown, old: unknown): Unchanged {
  let answer: boolean | undefined;
  return () => (answer ??= isDeepStrictEqual(value, old));
}

/**
 * Validates one node: its own rules, then its allOf entries' rules (against the same value), then
 * its children. `fixed`: inside an allOf entry, where errors ratchet only by the entry's node's
 * nearest correlated ancestor (Kubernetes does not correlate allOf subtrees on their own).
 */
function validateNode(node: RuleNode, path: string, value: unknown, old: unknown, parentUnchanged: Unchanged, run: Run, fixed?: Unchanged): void {
  if (value === undefined || value === null || run.remaining < 0) return;
  if (old === null) old = undefined;
  const unchanged = fixed ?? (old === undefined ? parentUnchanged : unchangedFrom(value, old));
  if (node.rules.length > 0) evaluateRules(node, path, value, old, unchanged, run);
  if (run.remaining < 0) return;
  for (const entry of node.allOf ?? []) {
    validateNode(entry, path, value, old, parentUnchanged, run, fixed ?? parentUnchanged);
    if (run.remaining < 0) return;
  }
  if (Array.isArray(value)) {
    if (!node.items) return;
    const oldItem = correlateItems(node.schema, old);
    for (let i = 0; i < value.length && run.remaining >= 0; i++) validateNode(node.items, `${path}[${i}]`, value[i], oldItem(value[i]), unchanged, run, fixed);
  } else if (isObject(value)) {
    const oldMap = isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) {
      if (run.remaining < 0) return;
      const prop = node.properties?.get(k);
      if (prop) validateNode(prop, path ? `${path}.${k}` : k, v, oldMap?.[k], unchanged, run, fixed);
      else if (node.values) validateNode(node.values, `${path}[${k}]`, v, oldMap?.[k], unchanged, run, fixed);
    }
  }
}

/** The old item of a new one: by its keys in a map-type list; none in set and atomic lists. */
function correlateItems(schema: Schema, old: unknown): (item: unknown) => unknown {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (schema['x-kubernetes-list-type'] !== 'map' || !keys?.length || !Array.isArray(old)) return () => undefined;
  const keyOf = (item: unknown): string | undefined => (isObject(item) ? JSON.stringify(keys.map((k) => item[k] ?? null)) : undefined);
  let byKey: Map<string, unknown> | undefined;
  return (item) => {
    const k = keyOf(item);
    if (k === undefined) return undefined;
    if (!byKey) {
      byKey = new Map();
      for (const o of old) {
        const ok = keyOf(o);
        if (ok !== undefined && !byKey.has(ok)) byKey.set(ok, o);
      }
    }
    return byKey.get(k);
  };
}

/** What a rule's errors name: its message, else its expression. */
const ruleErrorString = (c: CompiledRule): string => (c.rule.message ? c.rule.message.trim() : c.rule.rule.trim());
const ruleMessageOrDefault = (c: CompiledRule): string => (c.rule.message ? c.rule.message.trim() : `failed rule: ${ruleErrorString(c)}`);

/**
 * Runs one program under the per-call limit and what is left of the object's budget: the one
 * place that calls the expression language's cost API. A CelCostError whose limit is below the
 * per-call limit means the object's budget ran out.
 */
function evaluateWithBudget(program: CelProgram, activation: Record<string, unknown>, run: Run): { value: unknown; cost: number } {
  const r = program.evaluate(activation, { costLimit: Math.min(run.perCall, run.remaining) });
  return { value: r.value, cost: r.cost ?? 0 };
}

const outOfObjectBudget = (e: CelCostError, run: Run): boolean => e.limit < run.perCall;

function evaluateRules(node: RuleNode, nodePath: string, value: unknown, old: unknown, unchanged: Unchanged, run: Run): void {
  const { CelCostError, CelEvaluationError } = run.failures;
  const type = node.schema.type ?? '';
  // Kubernetes validates from a nil field path: an error at the root itself names the field `<nil>`.
  const path = nodePath || ROOT_FIELD;
  if (run.remaining <= 0) {
    run.errors.push(fieldError.invalid(path, type, OUT_OF_BUDGET));
    run.remaining = -1;
    return;
  }
  const activations = new Map<CompiledRule['env'], Record<string, unknown>>();
  const activationOf = (c: CompiledRule): Record<string, unknown> => {
    let a = activations.get(c.env);
    // oldSelf is converted only for environments whose rules name it.
    if (!a) activations.set(c.env, (a = c.env.activation({ self: value, oldSelf: node.rules.some((r) => r.env === c.env && r.usesOldSelf) ? old : undefined })));
    return a;
  };
  for (const c of node.rules) {
    const optionalOldSelf = c.rule.optionalOldSelf === true;
    if (c.usesOldSelf && old === undefined && !optionalOldSelf) continue;
    const activation = activationOf(c);
    let result: unknown;
    try {
      const r = evaluateWithBudget(c.program, activation, run);
      run.remaining -= r.cost;
      result = r.value;
    } catch (e) {
      if (e instanceof CelCostError) {
        run.errors.push(
          fieldError.invalid(
            path,
            type,
            outOfObjectBudget(e, run) ? OUT_OF_BUDGET : `'${e.message}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(c)}`,
          ),
        );
        run.remaining = -1;
        return;
      }
      if (!(e instanceof CelEvaluationError)) throw e;
      run.errors.push(
        fieldError.invalid(
          path,
          type,
          e.message.startsWith('no such overload')
            ? `'${e.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(c)}`
            : `${e.message} evaluating rule: ${ruleErrorString(c)}`,
        ),
      );
      continue;
    }
    if (result === true) continue;
    const at = c.fieldPath ? (nodePath ? `${nodePath}.${c.fieldPath}` : c.fieldPath) : path;
    let detail: string | undefined;
    if (c.messageProgram) {
      try {
        const m = evaluateWithBudget(c.messageProgram, activation, run);
        run.remaining -= m.cost;
        detail = messageText(m.value);
      } catch (e) {
        if (e instanceof CelCostError) {
          run.errors.push(
            fieldError.invalid(
              at,
              type,
              outOfObjectBudget(e, run)
                ? 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'
                : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(c.rule.messageExpression)}`,
            ),
          );
          run.remaining = -1;
          return;
        }
        if (!(e instanceof CelEvaluationError)) throw e;
        // Any other failure of the message expression falls back to the rule's message.
      }
    }
    const err = reasonError(c, at, type, detail ?? ruleMessageOrDefault(c));
    if (!c.usesOldSelf && unchanged()) run.warn?.(err.message);
    else run.errors.push(err);
  }
}

/** A message expression's result as an error detail; undefined when it cannot be one (the rule's message is used). */
function messageText(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const text = v.trim();
  if (Buffer.byteLength(text, 'utf8') > MAX_MESSAGE_BYTES || /\n/.test(text) || text.length === 0) return undefined;
  return text;
}

function reasonError(c: CompiledRule, at: string, type: string, detail: string): FieldError {
  switch (c.rule.reason) {
    case 'FieldValueForbidden':
      return fieldError.forbidden(at, detail);
    case 'FieldValueRequired':
      return fieldError.required(at, detail);
    case 'FieldValueDuplicate':
      return fieldError.duplicate(at, type);
    default:
      return fieldError.invalid(at, type, detail);
  }
}
