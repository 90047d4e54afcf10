// The compiled form of the .proto files beside this file: protobufjs parses them once, and every
// message becomes a plan (its fields with their tags, JSON names and Kubernetes conventions) that
// the encoder and decoder walk without looking anything up per call.

import { readFileSync } from 'node:fs';
import type * as protobuf from 'protobufjs';
import { protobufjs } from './library.ts';
import { codeFile } from '../../machinery/package-files.ts';
import { namingProfile, type NamingProfileName } from '../../naming.ts';

/** How one value is written: a scalar, a message, or a type with its own JSON form. */
type ValueKind =
  | 'string'
  | 'int32'
  | 'int64'
  | 'bool'
  | 'bytes'
  /** A Go float64, on the wire as fixed 64 bits. */
  | 'double'
  | 'message'
  /** meta/v1 Time: RFC 3339 in whole seconds. */
  | 'time'
  /** meta/v1 MicroTime: RFC 3339 with six fraction digits. */
  | 'microtime'
  /** api/resource Quantity: its string. */
  | 'quantity'
  /** meta/v1 FieldsV1: the field set object, as JSON text on the wire. */
  | 'fieldsv1'
  /** util/intstr IntOrString: a JSON number or string. */
  | 'intorstring'
  /** runtime RawExtension: bytes. */
  | 'rawext'
  /** authentication/v1 ExtraValue { repeated string items = 1 }: a JSON list of strings (map values only). */
  | 'stringlist'
  /** apiextensions/v1 JSON { raw = 1 }: any JSON value, on the wire as its JSON text (null: no raw). */
  | 'json'
  /** apiextensions/v1 JSONSchemaPropsOrArray { schema = 1, jSONSchemas = 2 }: a schema object or a list of them. */
  | 'schemaorarray'
  /** apiextensions/v1 JSONSchemaPropsOrBool { allows = 1, schema = 2 }: a schema object (allows) or a boolean. */
  | 'schemaorbool'
  /** apiextensions/v1 JSONSchemaPropsOrStringArray { schema = 1, property = 2 }: a schema object or a list of strings. */
  | 'schemaorstringarray';

export interface FieldPlan {
  /** The JSON name (the .proto field name, or its `(json)` option). */
  readonly name: string;
  /** Position among the message's fields in declaration (JSON) order. */
  readonly index: number;
  readonly id: number;
  /** The kind of one element (of the value, for maps). */
  readonly kind: ValueKind;
  /** Field number and wire type of one element, as written before it. */
  readonly tag: number;
  readonly repeated: boolean;
  /** A `map<string, …>`: repeated entries { key = 1, value = 2 }. */
  readonly map: boolean;
  /** A Go pointer: on the wire only when set, and then decoded even when zero. */
  readonly pointer: boolean;
  /** The JSON name has no `omitempty`: decoding keeps a zero value. */
  readonly jsonZero: boolean;
  /** The element's (or map value's) message, for kind `message` and the schema wrappers (the wrapper's). */
  message: MessagePlan | undefined;
  /**
   * Bytes the encoder reserves for this field's length: the size the last value needed (values
   * of one field tend to be alike, so its content rarely has to move).
   */
  reserve: number;
}

export interface MessagePlan {
  /** Full name, e.g. `wire.apis.Lease`. */
  readonly name: string;
  /** Fields in field-number order: the order they are written in. */
  readonly fields: readonly FieldPlan[];
  /** Fields in declaration order: the order of the JSON object. */
  readonly declared: readonly FieldPlan[];
  /** Field by number. */
  readonly byId: readonly (FieldPlan | undefined)[];
  /** Bytes reserved for this message's length when it is a body's whole content (as `reserve`). */
  reserve: number;
}

const PROTO_FILES = ['apimachinery.proto', 'core.proto', 'apis.proto', 'apiextensions.proto'];

/** The parsed schemas, on first use: a server that never meets protobuf or CBOR never parses them. */
let parsed: protobuf.Root | undefined;
function schemas(): protobuf.Root {
  if (parsed) return parsed;
  const pb = protobufjs();
  const root = new pb.Root();
  for (const file of PROTO_FILES) pb.parse(readFileSync(codeFile(`wire/protobuf/${file}`), 'utf8'), root, { keepCase: true });
  root.resolveAll();
  collectServed(root);
  return (parsed = root);
}

const SPECIAL: Record<string, ValueKind> = {
  '.wire.apimachinery.Time': 'time',
  '.wire.apimachinery.MicroTime': 'microtime',
  '.wire.apimachinery.Quantity': 'quantity',
  '.wire.apimachinery.FieldsV1': 'fieldsv1',
  '.wire.apimachinery.IntOrString': 'intorstring',
  '.wire.apimachinery.RawExtension': 'rawext',
  '.wire.apimachinery.StringList': 'stringlist',
  '.wire.apiextensions.JSON': 'json',
  '.wire.apiextensions.JSONSchemaPropsOrArray': 'schemaorarray',
  '.wire.apiextensions.JSONSchemaPropsOrBool': 'schemaorbool',
  '.wire.apiextensions.JSONSchemaPropsOrStringArray': 'schemaorstringarray',
};

/** Kinds whose plan keeps the message they are written as (FieldPlan.message). */
const WITH_MESSAGE: ReadonlySet<ValueKind> = new Set(['message', 'schemaorarray', 'schemaorbool', 'schemaorstringarray']);

const SCALARS: Record<string, ValueKind> = { string: 'string', int32: 'int32', int64: 'int64', bool: 'bool', bytes: 'bytes', double: 'double' };

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

const plans = new Map<protobuf.Type, MessagePlan>();

function kindOf(field: protobuf.Field, where: string): ValueKind {
  const scalar = SCALARS[field.type];
  if (scalar) return scalar;
  const resolved = field.resolvedType;
  if (!(resolved instanceof protobufjs().Type)) throw new Error(`protobuf schema: ${where}: unsupported type ${field.type}`);
  return SPECIAL[resolved.fullName] ?? 'message';
}

function planOf(type: protobuf.Type): MessagePlan {
  const known = plans.get(type);
  if (known) return known;
  const declared: FieldPlan[] = [];
  const fields: FieldPlan[] = [];
  const byId: (FieldPlan | undefined)[] = [];
  const plan: MessagePlan = { name: type.fullName.slice(1), fields, declared, byId, reserve: 1 };
  plans.set(type, plan);
  for (const field of type.fieldsArray) {
    const where = `${plan.name}.${field.name}`;
    const options = field.options ?? {};
    const kind = kindOf(field, where);
    const map = field instanceof protobufjs().MapField;
    if (map && (field.keyType !== 'string' || !['string', 'quantity', 'bytes', 'stringlist', 'message', 'schemaorstringarray'].includes(kind)))
      throw new Error(`protobuf schema: ${where}: only maps of strings to strings, bytes, quantities, string lists or messages are supported`);
    if (!map && kind === 'stringlist') throw new Error(`protobuf schema: ${where}: a string list is supported as a map value only`);
    const repeated = field.repeated || map;
    if (options['(ptr)'] === true && repeated) throw new Error(`protobuf schema: ${where}: a repeated field cannot be a pointer`);
    // Map entries are messages; repeated scalars are written unpacked, one tag per element.
    const wireType = map ? LENGTH_DELIMITED : kind === 'int32' || kind === 'int64' || kind === 'bool' ? VARINT : kind === 'double' ? FIXED64 : LENGTH_DELIMITED;
    // A JSON name that is no .proto identifier (`x-kubernetes-list-type`, `$ref`) is the field's `(json)` option.
    const jsonName = options['(json)'];
    declared.push({
      name: typeof jsonName === 'string' ? jsonName : field.name,
      index: declared.length,
      id: field.id,
      kind,
      tag: ((field.id << 3) | wireType) >>> 0,
      repeated,
      map,
      pointer: options['(ptr)'] === true,
      jsonZero: options['(json_zero)'] === true,
      message: undefined,
      reserve: 1,
    });
  }
  // Message plans are filled in after this one is registered, so types may refer to each other.
  type.fieldsArray.forEach((field, i) => {
    const f = declared[i]!;
    if (WITH_MESSAGE.has(f.kind)) f.message = planOf(field.resolvedType as protobuf.Type);
  });
  fields.push(...[...declared].sort((a, b) => a.id - b.id));
  for (const f of fields) byId[f.id] = f;
  return plan;
}

/** The plan of a message by its full name (`wire.apimachinery.Status`). */
export function messagePlan(fullName: string): MessagePlan {
  return planOf(schemas().lookupType(fullName));
}

// ---- kinds ----

/** Every naming profile, so a group is recognized under whichever one the server runs. */
const PROFILES: Record<NamingProfileName, true> = { orch: true, kubernetes: true };

/** `<first group segment>/<version>/<kind>` → plan; the core group's segment is empty. */
const served = new Map<string, MessagePlan>();

function collectServed(ns: protobuf.NamespaceBase): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobufjs().Type) {
      const serves = nested.options?.['(serves)'];
      if (typeof serves === 'string') {
        const slash = serves.indexOf('/');
        const key = slash < 0 ? `/${serves}/${nested.name}` : `${serves}/${nested.name}`;
        served.set(key, planOf(nested));
      }
    }
    if (nested instanceof protobufjs().Namespace || nested instanceof protobufjs().Type) collectServed(nested);
  }
}

/**
 * Groups Kubernetes names without a domain, the same in every profile: a Scale is autoscaling/v1
 * (no custom resource group lacks a dot).
 */
const UNSUFFIXED_GROUPS: ReadonlySet<string> = new Set(['autoscaling']);

/**
 * The group's name before the naming profile's domain when the group is the core group ('') or
 * a group under one of the profiles' domains (`coordination.orch.io` and `coordination.k8s.io` →
 * `coordination`); undefined otherwise.
 */
function builtinSegment(group: string): string | undefined {
  if (group === '' || UNSUFFIXED_GROUPS.has(group)) return group;
  // The group's name before the profile's domain: `coordination`, `rbac.authorization`.
  for (const profile of Object.keys(PROFILES) as NamingProfileName[]) {
    const suffix = `.${namingProfile(profile).groupSuffix}`;
    if (group.length > suffix.length && group.endsWith(suffix)) {
      const segment = group.slice(0, -suffix.length);
      // `autoscaling.k8s.io` is no built-in group: its kinds are not those of `autoscaling`.
      return UNSUFFIXED_GROUPS.has(segment) ? undefined : segment;
    }
  }
  return undefined;
}

const kindCache = new Map<string, MessagePlan | null>();

/** The plan serving `apiVersion`/`kind`, or undefined when that kind has no protobuf form here. */
export function kindPlan(apiVersion: string, kind: string): MessagePlan | undefined {
  const cacheKey = `${apiVersion}\0${kind}`;
  const cached = kindCache.get(cacheKey);
  if (cached !== undefined) return cached ?? undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const segment = builtinSegment(group);
  const plan = segment === undefined ? undefined : (schemas(), served).get(`${segment}/${version}/${kind}`);
  // Callers may ask about any kind (custom resources too): keep the cache bounded.
  if (kindCache.size >= 4096) kindCache.clear();
  kindCache.set(cacheKey, plan ?? null);
  return plan;
}
