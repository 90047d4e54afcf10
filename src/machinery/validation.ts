// Validation helpers shared by kind strategies: condition lists and the small value rules
// (CamelCase reasons, qualified condition types) that several kinds state the same way.

import { child, fieldError, type FieldError } from './field-errors.ts';
import { isPlainObject, qualifiedName } from './meta.ts';

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** A single CamelCase word as Kubernetes checks condition reasons: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`. */
const CAMEL_CASE_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export interface ConditionRules {
  /** `reason` must be a CamelCase word when set (or always, with reasonRequired). */
  camelCaseReason?: boolean;
  reasonRequired?: boolean;
  /** `type` must be a qualified name (`CamelCase` or `<domain>/CamelCase`). */
  qualifiedType?: boolean;
  lastTransitionTimeRequired?: boolean;
  /** `message` must be present (it may be empty). */
  messageRequired?: boolean;
  /** Allowed `type` values, when the kind fixes them. */
  types?: readonly string[];
  /** `observedGeneration` must not be negative. */
  observedGeneration?: boolean;
}

/**
 * A `conditions` list: every item has a `type` and a `status` of True/False/Unknown, types are
 * unique, and the kind's extra rules hold.
 */
export function validateConditions(list: unknown, path: string, rules: ConditionRules = {}): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  // An item's field path only when there is an error to report (a list may have tens of thousands).
  const at = (i: number, name: string) => child(child(path, i), name);
  list.forEach((c, i) => {
    if (!isPlainObject(c)) return;
    const type = c.type;
    if (typeof type !== 'string' || type === '') errs.push(fieldError.required(at(i, 'type')));
    else {
      if (seen.has(type)) errs.push(fieldError.duplicate(at(i, 'type'), type));
      seen.add(type);
      if (rules.types && !rules.types.includes(type)) errs.push(fieldError.notSupported(at(i, 'type'), type, rules.types));
      if (rules.qualifiedType) for (const m of qualifiedName(type)) errs.push(fieldError.invalid(at(i, 'type'), type, m));
    }
    const status = c.status;
    if (typeof status !== 'string' || status === '') errs.push(fieldError.required(at(i, 'status')));
    else if (!(CONDITION_STATUSES as readonly string[]).includes(status)) errs.push(fieldError.notSupported(at(i, 'status'), status, CONDITION_STATUSES));
    const reason = c.reason;
    if (typeof reason !== 'string' || reason === '') {
      if (rules.reasonRequired) errs.push(fieldError.required(at(i, 'reason')));
    } else if (rules.camelCaseReason && !CAMEL_CASE_REASON.test(reason)) {
      errs.push(fieldError.invalid(at(i, 'reason'), reason, "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"));
    }
    if (rules.lastTransitionTimeRequired && (c.lastTransitionTime === undefined || c.lastTransitionTime === null || c.lastTransitionTime === ''))
      errs.push(fieldError.required(at(i, 'lastTransitionTime'), 'must be set'));
    if (rules.messageRequired && typeof c.message !== 'string') errs.push(fieldError.required(at(i, 'message')));
    if (rules.observedGeneration && typeof c.observedGeneration === 'number' && c.observedGeneration < 0)
      errs.push(fieldError.invalid(at(i, 'observedGeneration'), c.observedGeneration, 'must be greater than or equal to zero'));
  });
  return errs;
}

/** A field that may not change once set: `field is immutable`, as Kubernetes words it. */
export function validateImmutable(value: unknown, old: unknown, path: string): FieldError[] {
  return JSON.stringify(value) === JSON.stringify(old) ? [] : [fieldError.invalid(path, value ?? null, 'field is immutable')];
}

const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/**
 * IsConfigMapKey: at most 253 characters of `[-._a-zA-Z0-9]`, not `.`, `..` or starting with `..`
 * (keys of ConfigMaps and Secrets, which become file names).
 */
export function configMapKey(v: string): string[] {
  const out: string[] = [];
  if (v.length > 253) out.push('must be no more than 253 characters');
  if (!/^[-._a-zA-Z0-9]+$/.test(v)) out.push(CONFIG_KEY_MSG);
  if (v === '.') out.push("must not be '.'");
  else if (v === '..') out.push("must not be '..'");
  else if (v.startsWith('..')) out.push("must not start with '..'");
  return out;
}
