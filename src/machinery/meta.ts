// Object metadata: the shapes every object shares, timestamps, and the validation of names,
// labels, annotations and finalizers with kube-apiserver's messages.

import { child, fieldError, type FieldError } from './field-errors.ts';

interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [field: string]: unknown;
}

/** Any API object: the envelope plus kind-specific fields. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 3339 in UTC with whole seconds: metav1.Time's wire form. */
export const nowTimestamp = (ms = Date.now()): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** metav1.MicroTime: microsecond precision. */
export const nowMicroTimestamp = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const dns1123LabelRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123SubdomainRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const qualifiedNamePartRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const labelValueRe = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QUALIFIED_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** Problems with a DNS-1123 label (≤ 63), as message strings; empty when valid. */
export function dns1123Label(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!dns1123LabelRe.test(v)) out.push(DNS1123_LABEL_MSG);
  return out;
}

const dns1035LabelRe = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** Problems with a DNS-1035 label (≤ 63), as message strings; empty when valid. */
export function dns1035Label(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!dns1035LabelRe.test(v)) out.push(DNS1035_LABEL_MSG);
  return out;
}

export function dns1123Subdomain(v: string): string[] {
  const out: string[] = [];
  if (v.length > 253) out.push('must be no more than 253 characters');
  if (!dns1123SubdomainRe.test(v)) out.push(DNS1123_SUBDOMAIN_MSG);
  return out;
}

/** A name usable as one URL path segment (the rule of kinds without a stricter one). */
export function pathSegmentName(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const out: string[] = [];
  for (const bad of ['/', '%']) if (v.includes(bad)) out.push(`may not contain '${bad}'`);
  return out;
}

export function qualifiedName(v: string): string[] {
  const parts = v.split('/');
  let name = v;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (!prefix) out.push('prefix part must be non-empty');
    else for (const m of dns1123Subdomain(prefix)) out.push(`prefix part ${m}`);
  } else if (parts.length > 2) {
    return [`a qualified name ${QUALIFIED_NAME_MSG.slice('name part '.length)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (!name) out.push('name part must be non-empty');
  else {
    if (name.length > 63) out.push('name part must be no more than 63 characters');
    if (!qualifiedNamePartRe.test(name)) out.push(QUALIFIED_NAME_MSG);
  }
  return out;
}

export function labelValue(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!labelValueRe.test(v)) out.push(LABEL_VALUE_MSG);
  return out;
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (labels === undefined || labels === null) return errs;
  if (!isPlainObject(labels)) return [fieldError.typeInvalid(path, labels, `${path} in body must be of type object`)];
  // Keys, then each value: Object.entries makes a pair per key, twice the cost on a map of many.
  for (const k of Object.keys(labels)) {
    const v = labels[k];
    for (const m of qualifiedName(k)) errs.push(fieldError.invalid(path, k, m));
    if (typeof v !== 'string') errs.push(fieldError.typeInvalid(child(path, k), v, `${child(path, k)} in body must be of type string`));
    else for (const m of labelValue(v)) errs.push(fieldError.invalid(path, v, m));
  }
  return errs;
}

export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (annotations === undefined || annotations === null) return errs;
  if (!isPlainObject(annotations)) return [fieldError.typeInvalid(path, annotations, `${path} in body must be of type object`)];
  let size = 0;
  for (const k of Object.keys(annotations)) {
    const v = annotations[k];
    for (const m of qualifiedName(k.toLowerCase())) errs.push(fieldError.invalid(path, k, m));
    if (typeof v !== 'string') errs.push(fieldError.typeInvalid(child(path, k), v, `${child(path, k)} in body must be of type string`));
    else size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push({ type: 'FieldValueTooLong', field: path, message: `${path}: Too long: must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  return errs;
}

export function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  if (finalizers === undefined || finalizers === null) return [];
  if (!Array.isArray(finalizers)) return [fieldError.typeInvalid(path, finalizers, `${path} in body must be of type array`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  finalizers.forEach((f, i) => {
    const p = child(path, i);
    if (typeof f !== 'string') {
      errs.push(fieldError.typeInvalid(p, f, `${p} in body must be of type string`));
      return;
    }
    for (const m of qualifiedName(f)) errs.push(fieldError.invalid(p, f, m));
    if (seen.has(f)) errs.push(fieldError.duplicate(p, f));
    seen.add(f);
  });
  return errs;
}

/**
 * Each owner reference names an owner (ValidateOwnerReferences: the field paths are the list's, not
 * the item's, as there), core Events own nothing, and at most one owner is the controller.
 */
export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let first: string | undefined;
  for (const ref of refs) {
    if (!isPlainObject(ref)) continue;
    // A value of another type than string is the schema's to report.
    const missing = (v: unknown) => v === '' || v === undefined || v === null;
    if (missing(ref.apiVersion) || typeof ref.apiVersion === 'string') {
      const parts = ((ref.apiVersion as string | undefined) ?? '').split('/');
      const version = parts.length === 1 ? parts[0] : parts.length === 2 ? parts[1] : '';
      if (!version) errs.push(fieldError.invalid(child(path, 'apiVersion'), ref.apiVersion ?? '', 'version must not be empty'));
    }
    for (const f of ['kind', 'name', 'uid'] as const) if (missing(ref[f])) errs.push(fieldError.invalid(child(path, f), '', 'must not be empty'));
    if (ref.apiVersion === 'v1' && ref.kind === 'Event') errs.push(fieldError.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    if (ref.controller !== true) continue;
    const name = `${String(ref.kind ?? '')}/${String(ref.name ?? '')}`;
    if (first === undefined) first = name;
    else errs.push(fieldError.invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${first} and ${name}`));
  }
  return errs;
}

const FIELD_MANAGER_MAX_LENGTH = 128;
const SUBRESOURCE_MAX_LENGTH = 256;

/** kube-apiserver's ValidateFieldManager: at most 128 bytes, every character printable (Go's unicode.IsPrint). */
export function validateFieldManager(manager: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldError.tooLong(path, manager, FIELD_MANAGER_MAX_LENGTH));
  let at = 0;
  for (const ch of manager) {
    if (ch !== ' ' && !/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) {
      const code = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      errs.push(fieldError.invalid(path, manager, `invalid character ${code} (at position ${at})`));
    }
    at += Buffer.byteLength(ch);
  }
  return errs;
}

/**
 * kube-apiserver's ValidateManagedFields, part of ValidateObjectMeta: each entry's operation is
 * `Apply` or `Update`, its fieldsType (when given) `FieldsV1`, its manager a valid field manager,
 * its subresource at most 256 bytes. Values of another type are the schema's to report.
 */
export function validateManagedFields(entries: unknown, path: string): FieldError[] {
  if (!Array.isArray(entries)) return [];
  const errs: FieldError[] = [];
  entries.forEach((e: unknown, i) => {
    if (!isPlainObject(e)) return;
    const at = child(path, i);
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    const operation = text(e.operation);
    if (operation !== 'Apply' && operation !== 'Update') errs.push(fieldError.invalid(child(at, 'operation'), operation, 'must be `Apply` or `Update`'));
    const fieldsType = text(e.fieldsType);
    if (fieldsType !== '' && fieldsType !== 'FieldsV1') errs.push(fieldError.invalid(child(at, 'fieldsType'), fieldsType, 'must be `FieldsV1`'));
    errs.push(...validateFieldManager(text(e.manager), child(at, 'manager')));
    const subresource = text(e.subresource);
    if (Buffer.byteLength(subresource) > SUBRESOURCE_MAX_LENGTH) errs.push(fieldError.tooLong(child(at, 'subresource'), subresource, SUBRESOURCE_MAX_LENGTH));
  });
  return errs;
}

/**
 * Whether an update leaves the object as it was: equal values (object keys in any order, as a typed
 * object serializes them in one order), not counting `metadata.resourceVersion` (a precondition,
 * not content) nor the `time` of managedFields entries that are otherwise equal. Kubernetes bumps a
 * manager's time only when its operation changed the object, so an update that changes nothing
 * writes nothing.
 */
export function unchangedByUpdate(updated: KObject, old: KObject): boolean {
  const { resourceVersion: _a, managedFields: mfA, ...metaA } = updated.metadata;
  const { resourceVersion: _b, managedFields: mfB, ...metaB } = old.metadata;
  const { metadata: _ma, ...restA } = updated;
  const { metadata: _mb, ...restB } = old;
  if (!sameJson(metaA, metaB) || !sameJson(restA, restB)) return false;
  const a = Array.isArray(mfA) ? mfA : [];
  const b = Array.isArray(mfB) ? mfB : [];
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const ea = a[i];
    const eb = b[i];
    if (!isPlainObject(ea) || !isPlainObject(eb)) {
      if (!sameJson(ea, eb)) return false;
      continue;
    }
    const { time: _ta, ...restEa } = ea;
    const { time: _tb, ...restEb } = eb;
    if (!sameJson(restEa, restEb)) return false;
  }
  return true;
}

/** JSON value equality: object keys in any order, undefined members as absent (JSON drops them). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  let defined = 0;
  for (const k of Object.keys(a)) {
    const v = a[k];
    if (v === undefined) continue;
    defined++;
    if (!Object.hasOwn(b, k) || !sameJson(v, b[k])) return false;
  }
  let definedB = 0;
  for (const k of Object.keys(b)) if (b[k] !== undefined) definedB++;
  return defined === definedB;
}

/** The generated suffix alphabet and length of kube-apiserver's name generator. */
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_PREFIX = 58;

export function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return base.slice(0, MAX_GENERATED_PREFIX) + suffix;
}
