// The `/status` subresource shared by kinds that have one: writes change only status (and, as in
// Kubernetes, labels and annotations may not be changed through it either), while writes to the
// main resource keep the stored status.

import type { KObject } from '../../machinery/meta.ts';
import type { SubresourceDefinition } from '../definition.ts';

export const statusSubresource: SubresourceDefinition = {
  name: 'status',
  verbs: ['get', 'patch', 'update'],
  apply: (req, stored) => ({ ...stored, metadata: { ...stored.metadata, resourceVersion: req.metadata.resourceVersion }, status: req.status }),
};

/** prepareForUpdate of a kind with /status: the main resource cannot change status. */
export function keepStatus(obj: KObject, old: KObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = old.status;
}
