// OpenAPI v3 schemas as expression types, and JSON values under a schema as expression values,
// exactly as the API contract's type table (and Kubernetes' SchemaDeclType / UnstructuredToVal) has them:
//
//   object with properties         → an object type, one field per property (names escaped)
//   object with additionalProperties → map<string, T>
//   x-kubernetes-embedded-resource → object; apiVersion, kind, metadata.name and
//                                    metadata.generateName always declared (so is the root)
//   x-kubernetes-preserve-unknown-fields → the declared properties only (unknown fields are not
//                                    accessible); with no type at all the field is not declared
//   x-kubernetes-int-or-string     → dyn holding an int or a string
//   array                          → list<T>; list-type set / map values compare and concatenate
//                                    as sets / keyed maps (list-types.ts, rewrite.ts)
//   boolean / number / integer     → bool / double / int (64-bit, a bigint, never a double)
//   string, format byte / date / date-time / duration → bytes / timestamp / timestamp / duration
//
// A null field of an object is absent, as Kubernetes treats it.

import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { Schema } from '../machinery/schema.ts';
import { CelEnvironment, type CelObjectType, type CelVariable, type CelExtension } from './environment.ts';
import { setListType } from './list-types.ts';
import { escapeName, unescapeName } from './escaping.ts';
import { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { Optional } from '@marcbachmann/cel-js';
import { timestampString } from './library/format.ts';
import { celEquals } from './library/values.ts';
import { celError } from './library/register.ts';
import { schemaBounds, type TypeBounds } from './sizes.ts';

/** A schema's expression type: a cel-js type string plus the object types it uses. */
export interface SchemaType {
  /** The type string (`int`, `list<string>`, `object.spec`, …). */
  type: string;
  /** How to turn a JSON value under this schema into an expression value. */
  convert(value: unknown): unknown;
  /** Worst-case sizes under this schema, for the cost estimator (set on variables' types). */
  bounds?: TypeBounds;
}

const META_NAME: Schema = { type: 'string' };

/** Kubernetes' WithTypeAndObjectMeta: the root and embedded resources always expose these. */
function withTypeAndObjectMeta(s: Schema): Schema {
  const p = s.properties ?? {};
  const meta = p.metadata;
  if (p.kind?.type === 'string' && p.apiVersion?.type === 'string' && meta?.type === 'object' && meta.properties?.name?.type === 'string' && meta.properties?.generateName?.type === 'string') return s;
  return {
    ...s,
    type: 'object',
    properties: { ...p, kind: META_NAME, apiVersion: META_NAME, metadata: { type: 'object', properties: { name: META_NAME, generateName: META_NAME } } },
  };
}

/** Builds the object types and converters of a schema tree. */
class TypeBuilder {
  private readonly escape: (name: string) => string | undefined;
  readonly objectTypes: CelObjectType[] = [];
  readonly classes = new Map<string, new () => object>();
  /** Property names as Kubernetes escapes them for schemas; the built-in request types keep theirs. */
  constructor(escape: (name: string) => string | undefined = escapeName) {
    this.escape = escape;
  }

  build(s: Schema, name: string, resourceRoot: boolean): SchemaType | undefined {
    if (s['x-kubernetes-int-or-string']) return { type: 'dyn', convert: intOrString };
    if (resourceRoot) s = withTypeAndObjectMeta(s);
    switch (s.type) {
      case 'array': {
        if (!s.items) return undefined;
        const item = this.build(s.items, `${name}._items`, s.items['x-kubernetes-embedded-resource'] === true);
        if (!item) return undefined;
        const listType = s['x-kubernetes-list-type'];
        const keys = s['x-kubernetes-list-map-keys'] ?? [];
        return {
          type: `list<${item.type}>`,
          convert: (v) => {
            if (!Array.isArray(v)) return v;
            const out = v.map((x) => item.convert(x));
            if (listType === 'set') return setListType(out, { type: 'set' });
            if (listType === 'map') return setListType(out, { type: 'map', keys: keys.map((k) => escapeName(k) ?? k) });
            return out;
          },
        };
      }
      case 'object':
        // `properties: {}` beside additionalProperties is a map too (definitions write maps that way).
        if (s.additionalProperties && Object.keys(s.properties ?? {}).length === 0) {
          const value = this.build(s.additionalProperties, `${name}._values`, s.additionalProperties['x-kubernetes-embedded-resource'] === true);
          if (!value) return undefined;
          return {
            type: `map<string, ${value.type}>`,
            convert: (v) => (isObject(v) ? new Map(Object.entries(v).map(([k, x]) => [k, value.convert(x)])) : v),
          };
        }
        return this.object(s, name);
      case 'string':
        return stringType(s.format);
      case 'boolean':
        return { type: 'bool', convert: identity };
      case 'number':
        return { type: 'double', convert: identity };
      case 'integer':
        return { type: 'int', convert: toInt };
      default:
        return undefined;
    }
  }

  private object(s: Schema, name: string): SchemaType {
    const fields: Record<string, string> = {};
    const converters: [string, string, (v: unknown) => unknown][] = [];
    for (const [prop, ps] of Object.entries(s.properties ?? {})) {
      const escaped = this.escape(prop);
      if (escaped === undefined) continue;
      const t = this.build(ps, `${name}.${escaped}`, ps['x-kubernetes-embedded-resource'] === true);
      if (!t) continue;
      fields[escaped] = t.type;
      converters.push([prop, escaped, t.convert]);
    }
    const Class = class CelObject {};
    this.objectTypes.push({ name, fields });
    this.classes.set(name, Class);
    return {
      type: name,
      convert: (v) => {
        if (!isObject(v)) return v;
        const out = new Class() as Record<string, unknown>;
        for (const [prop, escaped, convert] of converters) {
          const x = v[prop];
          if (x !== undefined && x !== null) out[escaped] = convert(x);
        }
        return out;
      },
    };
  }
}

const identity = (v: unknown) => v;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toInt(v: unknown): unknown {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'bigint') return v;
  return v;
}

function intOrString(v: unknown): unknown {
  return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
}

function stringType(format: string | undefined): SchemaType {
  switch (format) {
    case 'byte':
      return { type: 'bytes', convert: (v) => (typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : v) };
    case 'date':
    case 'date-time':
      return {
        type: 'google.protobuf.Timestamp',
        convert: (v) => {
          if (typeof v !== 'string') return v;
          const d = new Date(format === 'date' ? `${v}T00:00:00Z` : v);
          return Number.isNaN(d.getTime()) ? v : d;
        },
      };
    case 'duration':
      return { type: 'google.protobuf.Duration', convert: (v) => (typeof v === 'string' ? (parseDuration(v) ?? v) : v) };
    default:
      return { type: 'string', convert: identity };
  }
}

const UNITS: Record<string, bigint> = { ns: 1n, us: 1_000n, µs: 1_000n, μs: 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n, d: 86_400_000_000_000n, w: 604_800_000_000_000n };

/** A duration as Kubernetes' schemas write it (Go's form, plus days and weeks); undefined if invalid. */
export function parseDuration(text: string): Duration | undefined {
  const m = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d|w))+$/.exec(text.trim());
  if (!m) return text.trim() === '0' ? new Duration(0n, 0) : undefined;
  let nanos = 0n;
  for (const part of text.trim().matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d|w)/g)) {
    const [whole, frac = ''] = part[1]!.split('.');
    const unit = UNITS[part[2]!]!;
    nanos += BigInt(whole || '0') * unit + (frac ? (BigInt(frac.slice(0, 18).padEnd(18, '0')) * unit) / 10n ** 18n : 0n);
  }
  if (m[1] === '-') nanos = -nanos;
  return new Duration(nanos / 1_000_000_000n, Number(nanos % 1_000_000_000n));
}

/** The expression type of `schema` (undefined where Kubernetes declares nothing), with its object types. */
export function schemaType(schema: Schema, options: { name?: string; resourceRoot?: boolean } = {}): { root: SchemaType | undefined; objectTypes: CelObjectType[] } {
  const b = new TypeBuilder();
  const root = b.build(schema, options.name ?? 'object', options.resourceRoot ?? false);
  return { root, objectTypes: b.objectTypes };
}

/** A variable whose type is a schema's. */
export interface SchemaVariable {
  name: string;
  schema: Schema;
  /** The schema is a resource's root (or an embedded resource): metadata.name is declared. */
  resourceRoot?: boolean;
  /** The variable is optional<T> (absent values are optional.none()). */
  optional?: boolean;
  /** Another variable of the same schema: the two share one type. */
  sameTypeAs?: string;
}

/**
 * An environment whose variables are typed by schemas: each object schema becomes an object
 * type, and `activation` turns JSON values into the variables' values.
 */
export class SchemaEnvironment {
  private readonly vars: SchemaVariable[];
  readonly env: CelEnvironment;
  private readonly types = new Map<string, SchemaType>();

  constructor(
    vars: SchemaVariable[],
    extensions: CelExtension[] = [],
    options: { escapeNames?: boolean } = {},
  ) {
    this.vars = vars;
    const b = new TypeBuilder(options.escapeNames === false ? (n) => n : escapeName);
    const variables: CelVariable[] = [];
    for (const v of vars) {
      let t = v.sameTypeAs !== undefined ? this.types.get(v.sameTypeAs) : undefined;
      if (t === undefined) {
        t = b.build(v.schema, `${v.name}Type`, v.resourceRoot ?? false) ?? { type: 'dyn', convert: identity };
        t.bounds = schemaBounds(v.schema, v.resourceRoot ?? false, options.escapeNames === false ? (n) => n : escapeName);
      }
      this.types.set(v.name, t);
      variables.push({ name: v.name, type: v.optional ? `optional<${t.type}>` : t.type });
    }
    const objects: CelExtension = {
      name: 'schema object types',
      register: (r) => {
        for (const o of b.objectTypes) {
          r.env.registerType(o.name, { ctor: b.classes.get(o.name)!, fields: o.fields });
          r.op(`${o.name} == ${o.name}`, (x: unknown, y: unknown) => celEquals(x, y));
          // cel-go's checker takes an object compared with null (the old checker's nullness); an
          // object of the schema has no such overload when evaluated.
          r.op(`${o.name} == null`, () => {
            throw celError('no such overload');
          });
        }
      },
    };
    this.env = new CelEnvironment({ variables, extensions: [objects, ...extensions] });
  }

  /** The expression type of a variable, with its bounds (what the cost estimator reads). */
  variableType(name: string): SchemaType | undefined {
    return this.types.get(name);
  }

  /** The variables' values from JSON values; an optional variable left out is optional.none(). */
  activation(json: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const v of this.vars) {
      const x = json[v.name];
      const converted = x === undefined ? undefined : this.types.get(v.name)!.convert(x);
      if (v.optional) out[v.name] = converted === undefined || converted === null ? Optional.none() : Optional.of(converted);
      else if (converted !== undefined) out[v.name] = converted;
    }
    return out;
  }
}

export interface RuleEnvironmentOptions {
  /** The schema is a resource's root (or an embedded resource): metadata.name is declared. */
  resourceRoot?: boolean;
  /** oldSelf is optional<T> (x-kubernetes-validations' optionalOldSelf). */
  optionalOldSelf?: boolean;
  extensions?: CelExtension[];
}

/** The environment of validation rules at one schema node: `self` and `oldSelf` of its type. */
export class RuleEnvironment extends SchemaEnvironment {
  constructor(schema: Schema, options: RuleEnvironmentOptions = {}) {
    super(
      [
        { name: 'self', schema, resourceRoot: options.resourceRoot },
        { name: 'oldSelf', schema, resourceRoot: options.resourceRoot, optional: options.optionalOldSelf, sameTypeAs: 'self' },
      ],
      options.extensions,
    );
  }
}

/**
 * An expression value back as JSON: integers as numbers (as strings beyond 2^53), timestamps in
 * RFC 3339, durations in Go's form, bytes in base64, object fields under their property names.
 */
export function toJSON(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof UnsignedInt) return toJSON(v.valueOf());
  if (v instanceof Date) return timestampString(v);
  if (v instanceof Duration) return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Optional) return v.hasValue() ? toJSON(v.value()) : null;
  if (Array.isArray(v) || v instanceof Set) return [...v].map(toJSON);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJSON(x)]));
  if (typeof v === 'object') {
    const plain = v.constructor === Object || v.constructor === undefined;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [plain ? k : (unescapeName(k) ?? k), toJSON(x)]));
  }
  return String(v);
}
