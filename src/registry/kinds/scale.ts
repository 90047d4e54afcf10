// Scale (`autoscaling/v1`): what a `<resource>/<name>/scale` subresource reads and writes
// (`kubectl scale`, autoscalers). A kind with the subresource says where its replica counts and
// selector are (a CRD's `subresources.scale` paths); a Scale is made from the stored object, and a
// written Scale sets the desired replicas there, as kube-apiserver's custom resource scale storage
// does. The group is `autoscaling` in every profile (a legacy group without a product domain).

import type { KObject } from '../../machinery/meta.ts';
import { errors } from '../../machinery/status.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import type { KindDefinition, SubresourceDefinition } from '../definition.ts';
import { int32, obj, objectSchema, str } from '../schemas.ts';
import { nameColumn } from '../printers.ts';
import { managedFieldsFromScale, managedFieldsToScale, type ReplicasPaths } from '../../ssa/scale.ts';

export const SCALE_GROUP = 'autoscaling';

export const scaleDefinition: KindDefinition = {
  group: SCALE_GROUP,
  version: 'v1',
  kind: 'Scale',
  resource: 'scales',
  singular: 'scale',
  namespaced: true,
  verbs: [],
  nameRule: 'dns-subdomain',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  unlisted: true,
  schema: objectSchema(
    {
      spec: obj({ replicas: int32({ description: 'The desired number of instances for the scaled object.' }) }),
      status: obj(
        {
          replicas: int32({ description: 'The actual number of observed instances of the scaled object.' }),
          selector: str({ description: 'The label query over pods that should match the replicas count, in its string form.' }),
        },
        { required: ['replicas'] },
      ),
    },
    'Scale represents a scaling request for a resource.',
  ),
  // kube-apiserver's columns of a Scale (`kubectl get … --subresource=scale`).
  printerColumns: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Number of desired replicas', value: (o) => (o as { spec?: { replicas?: number } }).spec?.replicas ?? 0 },
    { name: 'Available', type: 'integer', description: 'Number of actually running replicas', value: (o) => (o as { status?: { replicas?: number } }).status?.replicas ?? 0 },
  ],
  strategy: {},
};

/** Where a kind keeps what its Scale shows: simple dotted paths (`.spec.replicas`). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** Marks a Scale read for an update from an object without desired replicas (kube's smallest int32). */
const UNSET_REPLICAS = -2147483648;

const segments = (path: string): string[] => path.replace(/^\./, '').split('.');

const typeName = (v: unknown): string =>
  typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : typeof v === 'number' ? 'float64' : Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';

/** unstructured.NestedFieldNoCopy with a type check: the value, undefined when absent, or the accessor error. */
function nested(o: KObject, path: string, want: 'int' | 'string'): { value?: number | string; error?: string } {
  let at: unknown = o;
  const parts = segments(path);
  for (let i = 0; i < parts.length; i++) {
    if (at === null || at === undefined) return {};
    if (typeof at !== 'object' || Array.isArray(at)) return { error: `${parts.slice(0, i).join('.')} accessor error: ${JSON.stringify(at)} is of the type ${typeName(at)}, expected map[string]interface{}` };
    at = (at as Record<string, unknown>)[parts[i]!];
  }
  if (at === undefined || at === null) return {};
  const ok = want === 'int' ? typeof at === 'number' && Number.isInteger(at) : typeof at === 'string';
  if (!ok) return { error: `${parts.join('.')} accessor error: ${typeof at === 'string' ? at : JSON.stringify(at)} is of the type ${typeName(at)}, expected ${want === 'int' ? 'int64' : 'string'}` };
  return { value: at as number | string };
}

/**
 * The Scale of an object: desired and observed replicas (0 when absent) and the selector. For a
 * read, missing desired replicas is an error; for an update they are marked unset, so a write
 * that does not set them is refused.
 */
function scaleOf(o: KObject, p: ScalePaths, purpose: 'get' | 'update'): KObject {
  const spec = nested(o, p.specReplicasPath, 'int');
  const status = nested(o, p.statusReplicasPath, 'int');
  const selector = p.labelSelectorPath ? nested(o, p.labelSelectorPath, 'string') : {};
  const broken = spec.error ?? status.error ?? selector.error;
  if (broken) throw errors.internal(broken);
  if (spec.value === undefined && purpose === 'get') throw errors.internal(`the spec replicas field ${JSON.stringify(p.specReplicasPath)} does not exist`);
  const m = o.metadata;
  const replicas = spec.value === undefined ? UNSET_REPLICAS : (spec.value as number) | 0;
  return {
    apiVersion: `${SCALE_GROUP}/v1`,
    kind: 'Scale',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    // Go omits a zero desired count (omitempty); the observed one is always there.
    spec: replicas === 0 ? {} : { replicas },
    status: { replicas: ((status.value as number | undefined) ?? 0) | 0, ...(selector.value ? { selector: selector.value } : {}) },
  } as KObject;
}

/** Sets a dotted path, creating the objects on the way (unstructured.SetNestedField). */
function setNested(o: Record<string, unknown>, path: string, value: unknown): void {
  const parts = segments(path);
  let at = o;
  for (const p of parts.slice(0, -1)) {
    const next = at[p];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      if (next !== undefined && next !== null) throw errors.badRequest(`value cannot be set because ${JSON.stringify(next)} is not a map[string]interface{}`);
      at[p] = {};
    }
    at = at[p] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/**
 * Where the kind's desired replicas are, for the managed fields of its Scale: `apiVersion` is the
 * version this subresource serves, `versions` every version of the kind (`group/version`) with its
 * spec replicas path, or null when that version has no scale subresource.
 */
export interface ScaleOwnership {
  apiVersion: string;
  versions: ReadonlyMap<string, string | null>;
}

/**
 * The `scale` subresource of a kind whose counts are at `paths`. With `ownership`, writes (apply
 * included) keep the Scale's managed fields on the object's replicas path, as kube-apiserver's
 * scale handler maps them.
 */
export function scaleSubresource(paths: ScalePaths, ownership?: ScaleOwnership): SubresourceDefinition {
  const replicasPaths: ReplicasPaths | undefined =
    ownership && new Map([...ownership.versions].map(([gv, path]) => [gv, path === null ? null : segments(path)]));
  return {
    name: 'scale',
    verbs: ['get', 'patch', 'update'],
    view: {
      def: scaleDefinition,
      read: (stored, purpose) => scaleOf(stored, paths, purpose),
      ...(ownership && replicasPaths
        ? {
            managedFields: {
              toView: (stored: KObject) => managedFieldsToScale(stored.metadata.managedFields, replicasPaths),
              fromView: (stored: KObject, entries: unknown) => managedFieldsFromScale(stored.metadata.managedFields, entries, ownership.apiVersion, replicasPaths),
            },
          }
        : {}),
    },
    apply(request, stored) {
      const replicas = (request as { spec?: { replicas?: number } }).spec?.replicas ?? 0;
      if (replicas === UNSET_REPLICAS) throw errors.badRequest(`the spec replicas field ${JSON.stringify(paths.specReplicasPath)} cannot be empty`);
      const next = structuredClone(stored);
      setNested(next as unknown as Record<string, unknown>, paths.specReplicasPath, replicas);
      // The object's managed fields as the write through the Scale left them.
      if (ownership) {
        const entries = request.metadata.managedFields;
        if (entries?.length) next.metadata.managedFields = entries;
        else delete next.metadata.managedFields;
      }
      return next;
    },
  };
}

/**
 * kube-apiserver's checks of the counts on every write of an object with a scale subresource
 * (ValidateScaleSpec, ValidateScaleStatus): integers, not negative, within int32; a selector
 * that is a string. Field paths are the CRD's own (`.spec.replicas`).
 */
export function validateScaleCounts(o: KObject, p: ScalePaths): FieldError[] {
  const errs: FieldError[] = [];
  const count = (path: string) => {
    const got = nested(o, path, 'int');
    if (got.error) errs.push(fieldError.invalid(path, 0, got.error));
    else if (typeof got.value === 'number' && got.value < 0) errs.push(fieldError.invalid(path, got.value, 'should be a non-negative integer'));
    else if (typeof got.value === 'number' && got.value > 2147483647) errs.push(fieldError.invalid(path, got.value, 'should be less than or equal to 2147483647'));
  };
  count(p.specReplicasPath);
  count(p.statusReplicasPath);
  if (p.labelSelectorPath) {
    const got = nested(o, p.labelSelectorPath, 'string');
    if (got.error) errs.push(fieldError.invalid(p.labelSelectorPath, '', got.error));
  }
  return errs;
}
