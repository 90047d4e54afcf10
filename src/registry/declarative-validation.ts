// Declarative validation of migrated kinds: the value rules a kind's schema states (`minimum`,
// `required`, `enum`, …) run next to the strategy's hand-written checks and the two results are
// compared, as kube-apiserver does for types moved to declarative validation (KEP-5073).
//
// - A kind opts in with `declarativeValidation: true`: the value rules under its own fields (all
//   but `apiVersion`, `kind` and `metadata`) then duplicate hand-written checks. Decoding stops
//   enforcing those rules for it (type errors still end a request there, as a 400).
// - Gate DeclarativeValidation on: at validation time both sides run; every difference counts on
//   the mismatch metrics and is logged; the hand-written errors decide.
// - Gate DeclarativeValidationTakeover on as well: the declarative errors decide instead, replacing
//   the hand-written errors marked as covered by them (others, e.g. cross-field rules, stay).
// - Gate DeclarativeValidation off: only the hand-written checks run (takeover has no effect).
//
// A hand-written error is "covered" when the strategy marks it with markCoveredByDeclarative:
// it says the schema reports the same problem. Errors are matched by type and field, never by
// text, so a covered error without a declarative counterpart, and a declarative error without a
// covered counterpart, are each one mismatch.

import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { KindDefinition } from './definition.ts';
import type { FieldError } from '../machinery/field-errors.ts';
import type { KObject } from '../machinery/meta.ts';
import { validateAgainstSchema } from '../machinery/schema-validate.ts';
import { errors } from '../machinery/status.ts';

type ValidationOperation = 'create' | 'update';

/** Where mismatches and failures of declarative validation are counted. */
export interface DeclarativeValidationMetrics {
  /** One difference between the two results, for e.g. `lease_create`. */
  mismatch(identifier: string): void;
  /** Declarative validation threw instead of returning errors. */
  panic(identifier: string): void;
}

// ---- covered-by-declarative markers ----

// Kept beside the errors rather than on them, so the marker never reaches a Status response.
const covered = new WeakSet<FieldError>();

/** Marks a hand-written error as one the kind's schema also reports (same type, same field). */
export function markCoveredByDeclarative<T extends FieldError>(err: T): T {
  covered.add(err);
  return err;
}

function isCoveredByDeclarative(err: FieldError): boolean {
  return covered.has(err);
}

// ---- what the schema's declarative rules cover ----

/** Envelope and ObjectMeta: validated the same way for every kind, never migrated. */
const SHARED_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Whether an error path lies under a kind's own fields (`spec.x`, `status.y[0]`, `handler`),
 * where a migrated kind's schema rules are declarative validation; root-level errors and those
 * under the envelope or metadata are not.
 */
export function isDeclarativeField(field: string): boolean {
  const end = field.search(/[.[]/);
  const first = end < 0 ? field : field.slice(0, end);
  return first !== '' && !SHARED_FIELDS.has(first);
}

/** Whether decoding leaves this schema error to declarative validation (a migrated kind's value rule). */
export function leftToDeclarative(def: Pick<KindDefinition, 'declarativeValidation'>, err: FieldError): boolean {
  return def.declarativeValidation === true && err.type !== 'FieldValueTypeInvalid' && isDeclarativeField(err.field);
}

/**
 * The declarative errors of an object: its schema's value rules under the kind's own fields. Type
 * errors (including formats and integer ranges) are left out: decoding has rejected them already.
 */
export function declarativeErrors(def: Pick<KindDefinition, 'schema'>, obj: KObject): FieldError[] {
  return validateAgainstSchema(obj, def.schema).errors.filter((e) => e.type !== 'FieldValueTypeInvalid' && isDeclarativeField(e.field));
}

// ---- comparison ----

const sameError = (a: FieldError, b: FieldError): boolean => a.type === b.type && a.field === b.field && a.message === b.message;
const correspond = (a: FieldError, b: FieldError): boolean => a.type === b.type && a.field === b.field;
const render = (e: FieldError): string => `{Type=${JSON.stringify(e.type)}, Field=${JSON.stringify(e.field)}}`;

/**
 * The differences between hand-written and declarative errors, one text each. Each covered
 * hand-written error claims every declarative error of its type and field (one to many); a
 * covered error claiming none, and a declarative error nobody claims, are differences. Identical
 * hand-written errors (the same check run twice) count once.
 */
export function gatherMismatches(handwritten: readonly FieldError[], declarative: readonly FieldError[], takeover: boolean): string[] {
  const out: string[] = [];
  if (handwritten.length === 0 && declarative.length === 0) return out;
  const consequence = takeover
    ? 'Declarative validation is authoritative (DeclarativeValidationTakeover): disabling that gate restores the hand-written result.'
    : 'Hand-written validation is authoritative, so the response is unaffected.';
  const unique: FieldError[] = [];
  for (const e of handwritten) if (!unique.some((u) => sameError(u, e))) unique.push(e);
  let unclaimed = [...declarative];
  for (const h of unique) {
    if (!isCoveredByDeclarative(h)) continue;
    const rest = unclaimed.filter((d) => !correspond(h, d));
    if (rest.length === unclaimed.length) {
      out.push(`declarative validation mismatch: hand-written error ${render(h)} has no declarative counterpart. ${consequence}`);
    }
    unclaimed = rest;
  }
  for (const d of unclaimed) out.push(`declarative validation mismatch: declarative error ${render(d)} has no hand-written counterpart. ${consequence}`);
  return out;
}

/** The metric label for a validation: the kind in lower case, the subresource, the operation (`lease_create`, `node_status_update`). */
export function validationIdentifier(kind: string, op: ValidationOperation, subresource?: string): string {
  return `${kind.toLowerCase()}${subresource ? `_${subresource.replaceAll('/', '_')}` : ''}_${op}`;
}

interface MigrationCheck {
  /** Gate DeclarativeValidation. */
  enabled: boolean;
  /** Gate DeclarativeValidationTakeover (no effect unless `enabled`). */
  takeover: boolean;
  identifier: string;
  /** All hand-written errors of the object, covered or not. */
  handwritten: FieldError[];
  declarative: () => FieldError[];
  metrics: DeclarativeValidationMetrics;
  log: (message: string) => void;
}

/**
 * Runs declarative validation beside the hand-written result, reports the differences and returns
 * the authoritative errors. A throwing declarative validator is counted as a panic; under takeover
 * the request then fails (there is no authoritative answer), otherwise it is only logged.
 */
export function validateWithMigrationChecks(c: MigrationCheck): FieldError[] {
  if (!c.enabled) return c.handwritten;
  let declarative: FieldError[];
  try {
    declarative = c.declarative();
  } catch (e) {
    c.metrics.panic(c.identifier);
    const message = `panic during declarative validation: ${e instanceof Error ? e.message : String(e)}`;
    if (c.takeover) throw errors.internal(message);
    c.log(`${c.identifier}: ${message}`);
    return c.handwritten;
  }
  for (const detail of gatherMismatches(c.handwritten, declarative, c.takeover)) {
    c.log(`${c.identifier}: ${detail}`);
    c.metrics.mismatch(c.identifier);
  }
  return c.takeover ? [...c.handwritten.filter((e) => !isCoveredByDeclarative(e)), ...declarative] : c.handwritten;
}

/** One server's declarative validation: its gates, its metrics, its log. */
/** One thing declarative validation counted or logged, as it crosses threads (see `recording`). */
export type DeclarativeEvent = { mismatch: string } | { panic: string } | { log: string };

export class DeclarativeValidation {
  private readonly metrics: DeclarativeValidationMetrics;
  private readonly log: (message: string) => void;
  readonly enabled: boolean;
  readonly takeover: boolean;

  constructor(
    gates: FeatureGates,
    metrics: DeclarativeValidationMetrics,
    log: (message: string) => void,
  ) {
    this.metrics = metrics;
    this.log = log;
    this.enabled = gates.DeclarativeValidation === true;
    this.takeover = this.enabled && gates.DeclarativeValidationTakeover === true;
  }

  /**
   * Declarative validation whose counts and log lines are handed to `record` (a worker thread's,
   * to be replayed where the metrics live).
   */
  static recording(gates: FeatureGates, record: (e: DeclarativeEvent) => void): DeclarativeValidation {
    return new DeclarativeValidation(gates, { mismatch: (id) => record({ mismatch: id }), panic: (id) => record({ panic: id }) }, (m) => record({ log: m }));
  }

  /** Counts and logs what a recording instance recorded, as if validation had run here. */
  replay(events: readonly DeclarativeEvent[]): void {
    for (const e of events) {
      if ('mismatch' in e) this.metrics.mismatch(e.mismatch);
      else if ('panic' in e) this.metrics.panic(e.panic);
      else this.log(e.log);
    }
  }

  /**
   * The authoritative errors of a create or update of `obj`, given the hand-written ones. Kinds
   * that are not migrated get their hand-written errors back untouched.
   */
  validate(def: KindDefinition, op: ValidationOperation, obj: KObject, handwritten: FieldError[], subresource?: string): FieldError[] {
    if (def.declarativeValidation !== true) return handwritten;
    return validateWithMigrationChecks({
      enabled: this.enabled,
      takeover: this.takeover,
      identifier: validationIdentifier(def.kind, op, subresource),
      handwritten,
      declarative: () => declarativeErrors(def, obj),
      metrics: this.metrics,
      log: this.log,
    });
  }
}
