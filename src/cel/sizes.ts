// Worst-case sizes of the values a schema admits, as Kubernetes estimates them for the static cost
// of validation rules (SchemaDeclType and its helpers): a string's `maxLength` (× 4: a
// character may take four bytes), an array's `maxItems`, a map's `maxProperties`; without a bound,
// as many as the largest request (3 MiB) can hold given the smallest serialized size of one
// element (an array of booleans holds more elements than an array of objects with required fields).

import type { Schema } from '../machinery/schema.ts';
import { escapeName } from './escaping.ts';

/** Kubernetes' request size limit the unbounded estimates are taken from (MaxRequestSizeBytes). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

const MIN_STRING_SIZE = 2; // ""
const MIN_BOOL_SIZE = 4; // true
const MIN_NUMBER_SIZE = 1; // 0
const MIN_DURATION_SIZE = 3; // "0s"… with quotes
const MAX_DURATION_SIZE = 32;
const DATE_SIZE = 12; // "2006-01-02" with quotes
const MIN_DATETIME_SIZE = 21;
const MAX_DATETIME_SIZE = 32;

/** Bounds of one schema node: what the cost estimator reads by path (`self.spec.items.@items`). */
export interface TypeBounds {
  /** Characters of a string, bytes, elements of a list, entries of a map (0: not a sized value). */
  maxElements: number;
  /** The smallest JSON text a value of this node takes. */
  minSerializedSize: number;
  items?: TypeBounds;
  values?: TypeBounds;
  keys?: TypeBounds;
  fields?: Record<string, TypeBounds>;
}

const UNSIZED_STRING: TypeBounds = { maxElements: 0, minSerializedSize: MIN_STRING_SIZE };

function nonNegative(n: number): number {
  return n < 0 ? 0 : n;
}

function unboundedString(s: Schema): number {
  if (s['x-kubernetes-int-or-string']) return MAX_REQUEST_SIZE_BYTES - 2;
  switch (s.format) {
    case 'duration':
      return MAX_DURATION_SIZE;
    case 'date':
      return DATE_SIZE;
    case 'date-time':
      return MAX_DATETIME_SIZE;
    default:
      return MAX_REQUEST_SIZE_BYTES - 2;
  }
}

const STRING_PROPERTY: Schema = { type: 'string' };
/** metadata.name is a DNS subdomain: at most 253 characters (generateName one less). */
const NAME_MAX_LENGTH = 253;

function capped(s: Schema | undefined, max: number): Schema {
  return { type: 'string', maxLength: s?.maxLength !== undefined && s.maxLength < max ? s.maxLength : max };
}

/** The root (and embedded resources) always declare kind, apiVersion and metadata's names, capped. */
function withTypeAndObjectMeta(s: Schema): Schema {
  const p = s.properties ?? {};
  const meta = p.metadata?.properties ?? {};
  const metadata: Schema = { type: 'object', properties: { name: capped(meta.name, NAME_MAX_LENGTH), generateName: capped(meta.generateName, NAME_MAX_LENGTH - 1) } };
  return { ...s, type: 'object', properties: { ...p, kind: STRING_PROPERTY, apiVersion: STRING_PROPERTY, metadata } };
}

/**
 * The bounds of a schema and everything under it (undefined where Kubernetes declares no type).
 * `escape` names object fields as expressions see them.
 */
export function schemaBounds(s: Schema, resourceRoot = false, escape: (name: string) => string | undefined = escapeName): TypeBounds | undefined {
  if (s['x-kubernetes-int-or-string']) return { maxElements: s.maxLength !== undefined ? nonNegative(s.maxLength) * 4 : unboundedString(s), minSerializedSize: 1 };
  if (resourceRoot) s = withTypeAndObjectMeta(s);
  switch (s.type) {
    case 'array': {
      if (!s.items) return undefined;
      const items = schemaBounds(s.items, s.items['x-kubernetes-embedded-resource'] === true, escape);
      if (!items) return undefined;
      const maxItems = s.maxItems !== undefined ? nonNegative(s.maxItems) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (items.minSerializedSize + 1));
      return { maxElements: maxItems, minSerializedSize: 2, items };
    }
    case 'object': {
      if (s.additionalProperties && !s.properties) {
        const values = schemaBounds(s.additionalProperties, s.additionalProperties['x-kubernetes-embedded-resource'] === true, escape);
        if (!values) return undefined;
        const maxProperties = s.maxProperties !== undefined ? nonNegative(s.maxProperties) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (values.minSerializedSize + 6));
        return { maxElements: maxProperties, minSerializedSize: 2, values, keys: UNSIZED_STRING };
      }
      const fields: Record<string, TypeBounds> = {};
      const required = new Set(s.required ?? []);
      let minSize = 2;
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        const field = schemaBounds(prop, prop['x-kubernetes-embedded-resource'] === true, escape);
        if (!field) continue;
        const escaped = escape(name);
        if (escaped !== undefined) fields[escaped] = field;
        if (required.has(name) && prop.default === undefined) minSize += name.length + field.minSerializedSize + 4;
      }
      return { maxElements: 0, minSerializedSize: minSize, fields };
    }
    case 'string':
      switch (s.format) {
        case 'byte':
          return { maxElements: s.maxLength !== undefined ? nonNegative(s.maxLength) : unboundedString(s), minSerializedSize: MIN_STRING_SIZE };
        case 'duration':
          return { maxElements: unboundedString(s), minSerializedSize: MIN_DURATION_SIZE };
        case 'date':
          return { maxElements: unboundedString(s), minSerializedSize: DATE_SIZE };
        case 'date-time':
          return { maxElements: unboundedString(s), minSerializedSize: MIN_DATETIME_SIZE };
      }
      if (s.maxLength !== undefined) return { maxElements: nonNegative(s.maxLength) * 4, minSerializedSize: MIN_STRING_SIZE };
      if (s.enum && s.enum.length > 0) return { maxElements: Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? v.length : 0))), minSerializedSize: MIN_STRING_SIZE };
      return { maxElements: unboundedString(s), minSerializedSize: MIN_STRING_SIZE };
    case 'boolean':
      return { maxElements: 0, minSerializedSize: MIN_BOOL_SIZE };
    case 'number':
    case 'integer':
      return { maxElements: 0, minSerializedSize: MIN_NUMBER_SIZE };
    default:
      return undefined;
  }
}

/**
 * How many times a rule at a node whose values take at least `minSerializedSize` bytes can run in
 * one request, when it sits under lists or maps of unbounded size (Kubernetes' maxCardinality).
 */
export function maxCardinality(minSerializedSize: number): number {
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize + 1));
}
