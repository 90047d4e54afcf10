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

export const managedFieldsEntry = obj({
  manager: str(),
  operation: str(),
  apiVersion: str(),
  time: time(),
  fieldsType: str(),
  fieldsV1: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  subresource: str(),
});

export const ownerReference = obj(
  {
    apiVersion: str(),
    kind: str(),
    name: str(),
    uid: str(),
    controller: bool(),
    blockOwnerDeletion: bool(),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], 'x-kubernetes-map-type': 'atomic' },
);

export const objectMeta: Schema = obj({
  name: str(),
  generateName: str(),
  namespace: str(),
  selfLink: str(),
  uid: str(),
  resourceVersion: str(),
  generation: int64(),
  creationTimestamp: time(),
  deletionTimestamp: time(),
  deletionGracePeriodSeconds: int64(),
  labels: stringMap(),
  annotations: stringMap(),
  ownerReferences: arr(ownerReference, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['uid'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'uid' }),
  finalizers: arr(str(), { 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' }),
  managedFields: arr(managedFieldsEntry, { 'x-kubernetes-list-type': 'atomic' }),
});

/** A top-level object schema: the envelope, metadata and the kind's own fields. */
export const objectSchema = (properties: Record<string, Schema>, description?: string): Schema =>
  obj({ apiVersion: str(), kind: str(), metadata: objectMeta, ...properties }, description ? { description } : {});

export const condition = (extra: Record<string, Schema> = {}): Schema =>
  obj({ type: str(), status: str(), lastTransitionTime: time(), reason: str(), message: str(), ...extra }, { required: ['type', 'status'] });
