// Schema building blocks shared by kind definitions: ObjectMeta, conditions, primitives.

import { GO_TYPE, type Schema } from '../machinery/schema.ts';

export const str = (extra: Partial<Schema> = {}): Schema => ({ type: 'string', ...extra });
export const int32 = (extra: Partial<Schema> = {}): Schema => ({ type: 'integer', format: 'int32', ...extra });
export const int64 = (extra: Partial<Schema> = {}): Schema => ({ type: 'integer', format: 'int64', ...extra });
export const bool = (): Schema => ({ type: 'boolean' });
export const time = (): Schema => ({ type: 'string', format: 'date-time', [GO_TYPE]: 'Time' });
export const microTime = (): Schema => ({ type: 'string', format: 'date-time', [GO_TYPE]: 'MicroTime' });
export const stringMap = (): Schema => ({ type: 'object', additionalProperties: { type: 'string' } });
export const quantity = (): Schema => ({ [GO_TYPE]: 'Quantity', 'x-kubernetes-int-or-string': true, pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' });
export const obj = (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({ type: 'object', properties, ...extra });
export const arr = (items: Schema, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, ...extra });

const managedFieldsEntry = obj(
  {
    manager: str({ description: 'The name of the actor that wrote these fields: the fieldManager of the request, or a name derived from its user agent.' }),
    operation: str({ description: 'How the fields were written: Apply for server-side apply, Update for every other write (create, update, patch).' }),
    apiVersion: str({ description: 'The group and version the fields were written in; field paths are meaningful only in that version.' }),
    time: { ...time(), description: 'When this entry last changed: the manager took a field or changed the value of one it owns.' },
    fieldsType: str({ description: 'The format of the field set; the only format is FieldsV1.' }),
    fieldsV1: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      description: 'The fields this manager owns, as a trie of field paths: keys name fields (f:), map-list entries (k:), set values (v:) or positions (i:).',
    },
    subresource: str({ description: 'The subresource the write went through (such as status), empty for writes to the object itself.' }),
  },
  { description: 'One writer of an object: which fields it owns, in which version, and whether it applied them or updated them.' },
);

const ownerReference = obj(
  {
    apiVersion: str({ description: 'The group and version of the owner.' }),
    kind: str({ description: 'The kind of the owner, such as Namespace.' }),
    name: str({ description: 'The name of the owner.' }),
    uid: str({ description: 'The uid of the owner; a reference whose uid no longer exists is treated as a deleted owner.' }),
    controller: { ...bool(), description: 'Marks the owner that manages this object; at most one reference may be true.' },
    blockOwnerDeletion: {
      ...bool(),
      description: 'When true and the owner is deleted in the foreground, the owner stays until this object is gone. Setting it needs permission to delete the owner.',
    },
  },
  {
    required: ['apiVersion', 'kind', 'name', 'uid'],
    'x-kubernetes-map-type': 'atomic',
    description: 'Names an object this one depends on; the garbage collector removes the dependent once all its owners are gone. The owner is cluster-scoped or in the same namespace.',
  },
);

export const objectMeta: Schema = obj({
  name: str({
    description: 'Unique name of the object within its kind (and namespace, for namespaced kinds). Required on create unless generateName is set; cannot be changed afterwards.',
  }),
  generateName: str({
    description: 'A prefix from which the server makes a unique name when name is empty, by appending 5 random characters. The prefix is shortened when needed to keep the name valid.',
  }),
  namespace: str({
    description: 'The namespace the object lives in, for namespaced kinds; it defaults to the namespace of the request path and must match it. Empty for cluster-scoped kinds.',
  }),
  selfLink: str({ description: 'Deprecated and never set by this server.' }),
  uid: str({ description: 'Unique identity assigned by the server on create; an object re-created under the same name gets a new uid. Read-only.' }),
  resourceVersion: str({
    description: 'Opaque version of the object, changed by every write. Compare it only for equality; send it back on update to detect conflicting writes (409). Read-only.',
  }),
  generation: int64({
    description: 'Sequence number of changes to the desired state, for kinds that track it: 1 on create, increased by the server whenever anything outside metadata and status changes. Read-only.',
  }),
  creationTimestamp: {
    ...time(),
    description: 'When the server created the object, in RFC 3339 form, UTC, to the second. Set by the server; read-only.',
  },
  deletionTimestamp: {
    ...time(),
    description: 'Set by the server when deletion was requested while finalizers remain: the object stays, terminating, until its finalizers are all removed. Read-only.',
  },
  deletionGracePeriodSeconds: int64({ description: 'Seconds the object was given to terminate gracefully once deletion was requested; set with deletionTimestamp. Read-only.' }),
  labels: {
    ...stringMap(),
    description: 'Key/value pairs that organize and select objects (label selectors). Keys are an optional DNS subdomain prefix and a name; values are at most 63 characters.',
  },
  annotations: {
    ...stringMap(),
    description: 'Key/value pairs of non-identifying data for tools and controllers; not used by selectors. All annotations together are at most 256 KiB.',
  },
  ownerReferences: arr(ownerReference, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['uid'],
    'x-kubernetes-patch-strategy': 'merge',
    'x-kubernetes-patch-merge-key': 'uid',
    description: 'The objects this object depends on, one entry per owner uid. When every owner is gone the garbage collector deletes this object.',
  }),
  finalizers: arr(str(), {
    'x-kubernetes-list-type': 'set',
    'x-kubernetes-patch-strategy': 'merge',
    description: 'Names of pending clean-up steps. A deleted object stays (with deletionTimestamp set) until this list is empty; entries are removed in any order by the controllers that own them.',
  }),
  managedFields: arr(managedFieldsEntry, {
    'x-kubernetes-list-type': 'atomic',
    description: 'Which manager owns which fields, kept by the server for server-side apply and conflict detection. Clients normally leave it alone.',
  }),
});

/** What the envelope fields of every object and list mean. */
export const ENVELOPE_DESCRIPTIONS = {
  apiVersion: 'The group and version of the schema this object is written in, such as v1. The server answers in the version of the request path.',
  kind: 'The kind of this object, in CamelCase; the server fills it in from the request path when absent. Cannot be changed.',
  metadata: 'Standard object metadata: name, namespace, labels, annotations and the fields the server maintains.',
  listMetadata: 'Standard list metadata: the resource version the list was read at and the continue token of a paged list.',
};

/** A top-level object schema: the envelope, metadata and the kind's own fields. */
export const objectSchema = (properties: Record<string, Schema>, description?: string): Schema =>
  obj(
    {
      apiVersion: str({ description: ENVELOPE_DESCRIPTIONS.apiVersion }),
      kind: str({ description: ENVELOPE_DESCRIPTIONS.kind }),
      metadata: { ...objectMeta, description: ENVELOPE_DESCRIPTIONS.metadata },
      ...properties,
    },
    description ? { description } : {},
  );

/** A condition; a kind's docs may say more about its types and reasons. */
export const condition = (extra: Record<string, Schema> = {}): Schema =>
  obj(
    {
      type: str({ description: 'The aspect of the object this condition reports on; one entry per type.' }),
      status: str({ description: 'Whether the condition holds: True, False or Unknown.' }),
      lastTransitionTime: { ...time(), description: 'When status last changed from one value to another.' },
      reason: str({ description: 'A single CamelCase word giving the cause of the last transition, for machines.' }),
      message: str({ description: 'A human-readable explanation of the last transition.' }),
      ...extra,
    },
    { required: ['type', 'status'] },
  );

/**
 * The descriptions of a schema, kept beside its structure rather than inside it (as Kubernetes
 * keeps its API documentation apart from its types): a field's text, or for a field holding an
 * object, or a list or map of objects, its text, the text of its type and its fields' docs.
 */
export type Docs = string | ObjectDocs;

export interface ObjectDocs {
  about: string;
  /**
   * What the value is as a type (`NodeSpec`, or for a list or map the type of one item or value),
   * published as that type's description; `kubectl explain` prints it after the field's text.
   */
  typeAbout?: string;
  fields: Record<string, Docs>;
}

/**
 * `schema` with the descriptions of `docs` (shared parts such as ObjectMeta are copied, never
 * changed). A documented field the schema lacks is a mistake in the docs: it throws.
 */
export function describe(schema: Schema, docs: Docs, path = '<root>'): Schema {
  if (typeof docs === 'string') return { ...schema, description: docs };
  const out: Schema = { ...schema, description: docs.about };
  const element = schema.items ? 'items' : schema.additionalProperties ? 'additionalProperties' : undefined;
  const body: Schema = element ? { ...schema[element]! } : out;
  if (docs.typeAbout !== undefined) {
    if (element) body.description = docs.typeAbout;
    else out.typeDescription = docs.typeAbout;
  }
  const properties = { ...body.properties };
  for (const [name, fieldDocs] of Object.entries(docs.fields)) {
    const field = properties[name];
    if (!field) throw new Error(`docs: ${path} has no field ${name}`);
    properties[name] = describe(field, fieldDocs, `${path}.${name}`);
  }
  if (Object.keys(docs.fields).length) body.properties = properties;
  if (element) out[element] = body;
  return out;
}
