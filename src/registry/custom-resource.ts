// The kind definition of a custom resource, built at run time from its CustomResourceDefinition:
// one more KindDefinition, served by the same generic store, routes, discovery and OpenAPI as
// every built-in kind. Later slices add to what is built here (conversion, scale, printer column
// filters, selectable fields), not to the generic paths.

import type { KObject } from '../machinery/meta.ts';
import { StatusError } from '../machinery/status.ts';
import type { Schema } from '../machinery/schema.ts';
import { applyDefaults } from '../machinery/schema-validate.ts';
import { ALL_VERBS, type KindDefinition, type ServedVersion } from './definition.ts';
import { ageColumn, nameColumn, since, type PrinterColumn } from './printers.ts';
import { objectMeta } from './schemas.ts';
import { customResourceSchema } from './custom-resource-schema.ts';
import { keepStatus, statusSubresource } from './kinds/status-subresource.ts';
import type { CrdColumn, CrdObject, CrdVersion } from './kinds/custom-resource-definition.ts';

/**
 * The definition a CRD describes (accepted names, served versions), or undefined when it serves no
 * version. `terminating`: whether the CRD is being deleted now (creates are then refused).
 */
export function customResourceDefinition(crd: CrdObject, terminating: () => boolean = () => false): KindDefinition | undefined {
  const spec = crd.spec!;
  const names = crd.status?.acceptedNames ?? spec.names!;
  const versions = (spec.versions ?? []).filter((v) => v.served);
  // The definition's own version is the storage version, served or not: objects are kept in its form.
  const base = spec.versions?.find((v) => v.storage);
  if (!base || versions.length === 0) return undefined;
  const others = versions.filter((v) => v !== base);
  const status = base.subresources?.status !== undefined;
  const baseSchema = versionSchema(base);
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
    schema: baseSchema,
    // Objects stored before a default existed are read with it, as Kubernetes decodes them.
    ...(hasDefault(baseSchema) ? { defaultOnRead: true } : {}),
    nameRule: 'dns-subdomain',
    // Custom resources always keep metadata.generation.
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    strategicMergePatch: false,
    printerColumns: columns(base),
    enabledByDefault: base.served === true,
    // While the CRD is deleted, its custom resources are being deleted: none may be created.
    async guardWrite({ old }) {
      if (old === undefined && terminating())
        throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating', { group: spec.group!, kind: names.plural! });
    },
    ...(status ? { subresources: [statusSubresource] } : {}),
    strategy: status ? { prepareForCreate: (o) => void delete o.status, prepareForUpdate: keepStatus } : {},
    // Other served versions: the None conversion (the same fields, apiVersion rewritten).
    ...deprecation(base),
    ...(others.length ? { versions: others.map((v): ServedVersion => servedVersion(v)) } : {}),
  };
  return def;

  /** Another served version: the None conversion, its own schema's defaults applied on read. */
  function servedVersion(v: CrdVersion): ServedVersion {
    const schema = versionSchema(v);
    const read = hasDefault(schema) ? { fromStorage: (o: KObject) => withDefaults(o, schema) } : {};
    return { version: v.name!, schema, enabledByDefault: true, ...read, ...deprecation(v) };
  }

  /** A deprecated version's warning: its own, or kube-apiserver's default one. */
  function deprecation(v: CrdVersion): { deprecationMessage?: string } {
    return v.deprecated ? { deprecationMessage: v.deprecationWarning ?? `${spec.group}/${v.name} ${names.kind} is deprecated` } : {};
  }
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
  return [nameColumn, ...cols.map(column)];
}

function column(c: CrdColumn): PrinterColumn {
  const path = (c.jsonPath ?? '').split('.').filter(Boolean);
  const type = (['string', 'integer', 'number', 'boolean', 'date'] as const).find((t) => t === c.type) ?? 'string';
  return {
    name: c.name ?? '',
    type,
    ...(c.format ? { format: c.format } : {}),
    description: c.description ?? '',
    ...(c.priority ? { priority: c.priority } : {}),
    value: (o: KObject, now: number) => {
      let at: unknown = o;
      for (const p of path) at = typeof at === 'object' && at !== null && !Array.isArray(at) ? (at as Record<string, unknown>)[p] : undefined;
      if (at === undefined || at === null) return null;
      if (type === 'date') return since(at, now);
      return typeof at === 'object' ? JSON.stringify(at) : at;
    },
  };
}
