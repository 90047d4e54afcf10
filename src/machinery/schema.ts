// The structural OpenAPI v3 schema subset that kind definitions are written in. It is the one
// source for decoding (unknown/duplicate fields), validation, defaulting, OpenAPI publication and,
// later, structured merge (the x-kubernetes-* markers).

type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/**
 * The Go type behind a built-in kind's field whose JSON decoding rewrites the value (metav1.Time,
 * metav1.MicroTime, resource.Quantity). A symbol, so it follows spreads of the schema but is never
 * published: OpenAPI shows these as Kubernetes does (`date-time` strings, the Quantity type), and
 * custom resources, whose schemas never carry it, keep their values as written.
 */
export const GO_TYPE: unique symbol = Symbol('go type');
export type GoType = 'Time' | 'MicroTime' | 'Quantity';

/**
 * On a kind's root schema: how values are checked and errors worded. Custom resources are checked
 * by kube-openapi's validator in Kubernetes (`spec.size in body should be less than or equal to
 * 10`): their objects are unstructured, so a mistyped value is one more Invalid cause (422) found
 * at validation time (where an update's unchanged values ratchet), non-nullable nulls are dropped
 * while decoding, `format`s are kube-openapi's, and `anyOf` / `oneOf` / `not` are enforced with
 * its messages. Built-in kinds are checked by their own validation (`must be less than or equal
 * to 10`, the default), a mistyped value failing their typed decoding (400). A symbol, never
 * published.
 */
export const ERROR_WORDING: unique symbol = Symbol('error wording');

export interface Schema {
  [GO_TYPE]?: GoType;
  [ERROR_WORDING]?: 'openapi';
  type?: SchemaType;
  description?: string;
  /**
   * Not a published keyword: the description of the named type an object field is published as
   * (`NodeSpec`), where `description` is the field's own.
   */
  typeDescription?: string;
  /** Object fields. */
  properties?: Record<string, Schema>;
  /** Map values (an object whose keys are free). */
  additionalProperties?: Schema;
  required?: string[];
  /** Array items. */
  items?: Schema;
  format?: string;
  enum?: (string | number | boolean)[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  /** OpenAPI 3.0 / JSON Schema draft 4: the bound itself is excluded. */
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  minProperties?: number;
  multipleOf?: number;
  pattern?: string;
  /** Any JSON value is accepted (e.g. RawExtension). */
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  /** Integer or string (IntOrString). */
  'x-kubernetes-int-or-string'?: boolean;
  /** The field holds embedded object metadata (apiVersion, kind, metadata). */
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** Strategic merge markers (read as listType=map with this key when no list type is given). */
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  /** Expression rules the value at this node must satisfy (evaluated with `self` of its type). */
  'x-kubernetes-validations'?: ValidationRule[];
  /**
   * More value validations the value must also satisfy, as a structural schema's `allOf`: each entry
   * restricts values (bounds, `pattern`, `enum`, `required`, rules) but declares no type or structure
   * of its own; its `properties`, `items` and `additionalProperties` apply only where the node itself
   * declares them.
   */
  allOf?: Schema[];
  /** Value validations of which the value must satisfy at least one (as allOf's entries, no types). */
  anyOf?: Schema[];
  /** Value validations of which the value must satisfy exactly one. */
  oneOf?: Schema[];
  /** A value validation the value must not satisfy. */
  not?: Schema;
}

/** Whether a kind's values are checked as kube-openapi checks custom resources (ERROR_WORDING). */
export const isUnstructured = (s: Schema): boolean => s[ERROR_WORDING] === 'openapi';

/** Why a failed validation rule is reported: the type of its field error (default FieldValueInvalid). */
export type ValidationRuleReason = 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';

/** One entry of `x-kubernetes-validations`, as Kubernetes' ValidationRule. */
export interface ValidationRule {
  /** An expression of `self` (and `oldSelf` for a transition rule) that must evaluate to true. */
  rule: string;
  /** The error detail when the rule is false (default: `failed rule: <rule>`). */
  message?: string;
  /** An expression giving the detail instead; it must evaluate to a string. */
  messageExpression?: string;
  reason?: ValidationRuleReason;
  /** Where the error is reported, relative to this node (`.spec.replicas`, `.labels['a.b']`). */
  fieldPath?: string;
  /** The rule also runs where no old value exists, with `oldSelf` an optional. */
  optionalOldSelf?: boolean;
}
