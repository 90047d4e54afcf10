// The kind definition of a custom resource, built at run time from its CustomResourceDefinition:
// one more KindDefinition, served by the same generic store, routes, discovery and OpenAPI as
// every built-in kind. Each served version has its own printer columns, subresources (`status`,
// `scale`) and selectable fields, evaluated on that version's form; later slices add to what is
// built here (conversion), not to the generic paths.

import type { KObject } from '../machinery/meta.ts';
import { StatusError } from '../machinery/status.ts';
import type { Schema } from '../machinery/schema.ts';
import { JsonPathError, parseFieldPath, printJsonPathValue, type JsonPath } from '../machinery/jsonpath.ts';
import { applyDefaults, pruneUnknownFields } from '../machinery/schema-validate.ts';
import { ALL_VERBS, type KindDefinition, type ServedVersion, type Strategy, type SubresourceDefinition, type VersionConversion } from './definition.ts';
import { ageColumn, humanDuration, nameColumn, type PrinterColumn } from './printers.ts';
import { objectMeta } from './schemas.ts';
import { customResourceSchema } from './custom-resource-schema.ts';
import { keepStatus, statusSubresource } from './kinds/status-subresource.ts';
import { scaleSubresource, validateScaleCounts, type ScalePaths } from './kinds/scale.ts';
import type { CrdColumn, CrdObject, CrdVersion } from './kinds/custom-resource-definition.ts';
import { webhookConversion, type ConversionWebhookMetrics } from './webhook-conversion.ts';

/**
 * The definition a CRD describes (accepted names, served versions), or undefined when it serves no
 * version. `terminating`: whether the CRD is being deleted now (creates are then refused);
 * `metrics`: where its webhook's conversions are measured.
 */
export function customResourceDefinition(crd: CrdObject, terminating: () => boolean = () => false, metrics?: ConversionWebhookMetrics): KindDefinition | undefined {
  const spec = crd.spec!;
  const names = crd.status?.acceptedNames ?? spec.names!;
  const versions = (spec.versions ?? []).filter((v) => v.served);
  // The definition's own version is the storage version, served or not: objects are kept in its form.
  const base = spec.versions?.find((v) => v.storage);
  if (!base || versions.length === 0) return undefined;
  const others = versions.filter((v) => v !== base);
  // Every version's spec replicas path, for the managed fields of Scales.
  const replicasPaths = new Map((spec.versions ?? []).map((v) => [`${spec.group}/${v.name}`, scalePaths(v)?.specReplicasPath ?? null]));
  const own = servedParts(base, spec.group!, replicasPaths);
  const baseSchema = versionSchema(base);
  // Objects may be stored at any version the CRD had as its storage version: each read converts
  // them (None: apiVersion rewritten; Webhook: through the CRD's webhook, in batches).
  const webhook = spec.conversion?.strategy === 'Webhook';
  const def: KindDefinition = {
    group: spec.group!,
    version: base.name!,
    kind: names.kind!,
    resource: names.plural!,
    singular: names.singular ?? names.kind!.toLowerCase(),
    ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories?.length ? { categories: names.categories } : {}),
    namespaced: spec.scope === 'Namespaced',
    verbs: ALL_VERBS,
    schema: withSelectableFields(baseSchema, base),
    // Objects stored before a default existed are read with it, as Kubernetes decodes them.
    ...(hasDefault(baseSchema) ? { defaultOnRead: true } : {}),
    nameRule: 'dns-subdomain',
    // Custom resources always keep metadata.generation.
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    strategicMergePatch: false,
    printerColumns: own.printerColumns,
    ...(own.selectableFields ? { selectableFields: own.selectableFields } : {}),
    enabledByDefault: base.served === true,
    // While the CRD is deleted, its custom resources are being deleted: none may be created.
    async guardWrite({ old }) {
      if (old === undefined && terminating())
        throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating', { group: spec.group!, kind: names.plural! });
    },
    ...(own.subresources.length ? { subresources: own.subresources } : {}),
    strategy: own.strategy,
    // Other served versions: the None conversion (the same fields, apiVersion rewritten) or the
    // webhook's, each with its own columns, subresources and selectable fields.
    conversion: webhook ? pruned(webhookConversion(crd, metrics)) : {},
    ...deprecation(base),
    ...(others.length ? { versions: others.map((v): ServedVersion => servedVersion(v)) } : {}),
    // Managers recorded at a version the CRD no longer lists are dropped; with a webhook, those at
    // versions it lists but does not serve are compared through it.
    recordedVersions: (spec.versions ?? []).map((v) => ({ apiVersion: `${spec.group}/${v.name}`, ...(webhook && !v.served ? { schema: v === base ? baseSchema : versionSchema(v) } : {}) })),
  };
  return def;

  /**
   * Another served version: its own schema's defaults applied on read (after a webhook's
   * conversion, its codec applies them), its own columns, subresources and selectable fields.
   */
  function servedVersion(v: CrdVersion): ServedVersion {
    const schema = versionSchema(v);
    const read = hasDefault(schema) && !webhook ? { fromStorage: (o: KObject) => withDefaults(o, schema) } : {};
    return { version: v.name!, schema: withSelectableFields(schema, v), enabledByDefault: true, ...read, ...deprecation(v), ...servedParts(v, spec.group!, replicasPaths) };
  }

  /**
   * The webhook's conversion, its answers pruned by the desired version's schema (fields it does
   * not know are dropped), as kube-apiserver decodes a converted custom resource and stores one.
   */
  function pruned(conversion: VersionConversion): VersionConversion {
    const schemas = new Map((spec.versions ?? []).map((v) => [`${spec.group}/${v.name}`, versionSchema(v)]));
    return {
      async convert(objects, desiredApiVersion) {
        const converted = await conversion.convert!(objects, desiredApiVersion);
        const schema = schemas.get(desiredApiVersion);
        if (schema) for (const o of converted) pruneUnknownFields(o, schema);
        return converted;
      },
    };
  }

  /** A deprecated version's warning: its own, or kube-apiserver's default one. */
  function deprecation(v: CrdVersion): { deprecationMessage?: string } {
    return v.deprecated ? { deprecationMessage: v.deprecationWarning ?? `${spec.group}/${v.name} ${names.kind} is deprecated` } : {};
  }
}

/**
 * What a version serves of its own: columns, selectable fields, subresources and the strategy they
 * need. `replicasPaths`: every version's spec replicas path (null without a scale subresource).
 */
function servedParts(
  v: CrdVersion,
  group: string,
  replicasPaths: ReadonlyMap<string, string | null>,
): Required<Pick<ServedVersion, 'printerColumns' | 'subresources' | 'strategy'>> & Pick<ServedVersion, 'selectableFields'> {
  const status = v.subresources?.status !== undefined && v.subresources.status !== null;
  const scale = scalePaths(v);
  const subresources: SubresourceDefinition[] = [
    ...(status ? [statusSubresource] : []),
    ...(scale ? [scaleSubresource(scale, { apiVersion: `${group}/${v.name}`, versions: replicasPaths })] : []),
  ];
  const strategy: Strategy = {
    ...(status ? { prepareForCreate: (o: KObject) => void delete o.status, prepareForUpdate: keepStatus } : {}),
    ...(scale ? { validate: (o: KObject) => validateScaleCounts(o, scale), validateUpdate: (o: KObject) => validateScaleCounts(o, scale) } : {}),
  };
  const selectable = selectableFields(v);
  return { printerColumns: columns(v), subresources, strategy, ...(selectable ? { selectableFields: selectable } : {}) };
}

function scalePaths(v: CrdVersion): ScalePaths | undefined {
  const s = v.subresources?.scale;
  if (!s?.specReplicasPath || !s.statusReplicasPath) return undefined;
  return { specReplicasPath: s.specReplicasPath, statusReplicasPath: s.statusReplicasPath, ...(s.labelSelectorPath ? { labelSelectorPath: s.labelSelectorPath } : {}) };
}

/**
 * The fields `selectableFields` lists, for field selectors (`spec.color`): each the value at its
 * path as a field selector compares it (a string, an integer or a boolean in its text form).
 */
function selectableFields(v: CrdVersion): Record<string, (o: KObject) => string | undefined> | undefined {
  const fields = (v.selectableFields ?? []).map((f) => f.jsonPath ?? '').filter((p) => p.startsWith('.'));
  if (fields.length === 0) return undefined;
  return Object.fromEntries(
    fields.map((p) => {
      const path = compile(p);
      return [
        p.slice(1),
        (o: KObject) => {
          const found = path ? results(path, o) : [];
          if (found.length !== 1) return undefined;
          const value = found[0];
          if (typeof value === 'string') return value;
          if (typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value))) return String(value);
          return undefined;
        },
      ];
    }),
  );
}

/** kube-apiserver publishes a version's selectable fields on its schema (`x-kubernetes-selectable-fields`). */
function withSelectableFields(schema: Schema, v: CrdVersion): Schema {
  const fields = (v.selectableFields ?? []).map((f) => f.jsonPath ?? '').filter((p) => p.startsWith('.'));
  if (fields.length === 0) return schema;
  return Object.assign({}, schema, { 'x-kubernetes-selectable-fields': fields.map((p) => ({ fieldPath: p.slice(1) })) });
}

/** The object with the schema's defaults filled in (a copy, when any is missing). */
function withDefaults(o: KObject, schema: Schema): KObject {
  const copy = structuredClone(o);
  return applyDefaults(copy, schema) ? copy : o;
}

/** Whether any node of the schema has a default. */
function hasDefault(s: Schema): boolean {
  const stack: Schema[] = [s];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.default !== undefined) return true;
    stack.push(...Object.values(n.properties ?? {}));
    if (n.items) stack.push(n.items);
    if (n.additionalProperties) stack.push(n.additionalProperties);
  }
  return false;
}

function versionSchema(v: CrdVersion): Schema {
  return customResourceSchema(v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, objectMeta);
}

/** The Table columns: Name, then the CRD's columns, or Age alone when it lists none (kube-apiserver's default). */
function columns(v: CrdVersion): PrinterColumn[] {
  const cols = v.additionalPrinterColumns ?? [];
  if (cols.length === 0) return [nameColumn, { ...ageColumn, type: 'date' }];
  // As kube-apiserver's table convertor: a column whose path does not parse ends the list there.
  const out: PrinterColumn[] = [nameColumn];
  for (const c of cols) {
    const path = compile(c.jsonPath ?? '');
    if (!path) break;
    out.push(column(c, path));
  }
  return out;
}

const compile = (jsonPath: string): JsonPath | undefined => {
  try {
    return parseFieldPath(jsonPath);
  } catch (e) {
    if (e instanceof JsonPathError) return undefined;
    throw e;
  }
};

/** The values a path finds in an object; none when its evaluation fails (kube's missing cell). */
function results(path: JsonPath, o: KObject): unknown[] {
  try {
    return path.find(o)[0] ?? [];
  } catch (e) {
    if (e instanceof JsonPathError) return [];
    throw e;
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A CRD's column, as kube-apiserver's table convertor fills it: the first value the path finds
 * (none: a null cell, which kubectl prints as `<none>`), as text for a string column, converted to
 * the column's type otherwise (null when it is not of that type), a date as its age.
 */
function column(c: CrdColumn, path: JsonPath): PrinterColumn {
  const type = (['string', 'integer', 'number', 'boolean', 'date'] as const).find((t) => t === c.type) ?? 'string';
  return {
    name: c.name ?? '',
    type,
    ...(c.format ? { format: c.format } : {}),
    description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
    ...(c.priority ? { priority: c.priority } : {}),
    nullCells: true,
    value: (o: KObject, now: number) => {
      const found = results(path, o);
      if (found.length === 0) return null;
      const v = found[0];
      switch (type) {
        case 'string':
          return printJsonPathValue(v);
        case 'integer':
          return typeof v === 'number' ? Math.trunc(v) : null;
        case 'number':
          return typeof v === 'number' ? v : null;
        case 'boolean':
          return typeof v === 'boolean' ? v : null;
        case 'date': {
          if (typeof v !== 'string') return null;
          if (v === '' || v === 'null') return '<unknown>';
          return RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? humanDuration(now - Date.parse(v)) : '<invalid>';
        }
      }
    },
  };
}
