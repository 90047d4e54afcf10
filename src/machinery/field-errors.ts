// Field errors: the causes of an Invalid (422) Status, worded as Kubernetes' field.Error prints them
// ("<field>: <Kind of error>: <value>: <detail>").

type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with [i] / [key] subscripts, e.g. `metadata.labels`, `spec.taints[0].effect`. */
  field: string;
  /** The full text, field included: what Status.message and details.causes[].message carry. */
  message: string;
}

/** Go-like rendering of a value inside an error text: strings quoted, others as JSON. */
function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return Array.isArray(v) ? `[]${typeof v[0] === 'string' ? 'string' : 'interface {}'}{${v.map(showValue).join(', ')}}` : JSON.stringify(v);
  return String(v);
}

function make(type: FieldErrorType, field: string, body: string): FieldError {
  return { type, field, message: field ? `${field}: ${body}` : body };
}

export const fieldError = {
  required: (field: string, detail = ''): FieldError => make('FieldValueRequired', field, detail ? `Required value: ${detail}` : 'Required value'),
  invalid: (field: string, value: unknown, detail = ''): FieldError =>
    make('FieldValueInvalid', field, `Invalid value: ${showValue(value)}${detail ? `: ${detail}` : ''}`),
  notSupported: (field: string, value: unknown, supported: readonly string[]): FieldError =>
    make('FieldValueNotSupported', field, `Unsupported value: ${showValue(value)}${supported.length ? `: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : ''}`),
  tooLong: (field: string, _value: unknown, max: number): FieldError => make('FieldValueTooLong', field, `Too long: may not be more than ${max} bytes`),
  tooMany: (field: string, actual: number, max: number): FieldError => make('FieldValueTooMany', field, `Too many: ${actual}: must have at most ${max} items`),
  duplicate: (field: string, value: unknown): FieldError => make('FieldValueDuplicate', field, `Duplicate value: ${showValue(value)}`),
  forbidden: (field: string, detail: string): FieldError => make('FieldValueForbidden', field, `Forbidden: ${detail}`),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => make('FieldValueTypeInvalid', field, `Invalid value: ${showValue(value)}: ${detail}`),
};

/** Append `.name` or `[i]` to a field path. */
export function child(path: string, name: string | number): string {
  if (typeof name === 'number') return `${path}[${name}]`;
  return path ? `${path}.${name}` : name;
}
