// The `/status` subresource shared by kinds that have one, and the rule for the main resource:
// writes to the main resource keep the stored status; writes to /status keep the stored spec
// (and every other top-level field) and take the new status.
//
// What else a status write may change differs per kind, as in Kubernetes: most kinds take the
// request's labels, annotations, finalizers and owner references with the status (their status
// strategy only resets spec), while kinds whose status strategy resets the metadata for status
// (APIService, ServiceCIDR) keep all of the stored metadata.

import type { KObject } from '../../machinery/meta.ts';
import type { SubresourceDefinition } from '../definition.ts';

const MUTABLE_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

function statusWith(metadataFromRequest: boolean): SubresourceDefinition {
  return {
    name: 'status',
    verbs: ['get', 'patch', 'update'],
    apply(req, stored) {
      const metadata = { ...stored.metadata, resourceVersion: req.metadata.resourceVersion };
      if (metadataFromRequest) {
        for (const k of MUTABLE_METADATA) {
          if (req.metadata[k] === undefined) delete metadata[k];
          else (metadata as Record<string, unknown>)[k] = req.metadata[k];
        }
      }
      return { ...stored, metadata, status: req.status };
    },
  };
}

/** /status that may also change labels, annotations, finalizers and owner references. */
export const statusSubresource: SubresourceDefinition = statusWith(true);

/** /status that changes nothing but status. */
export const statusOnlySubresource: SubresourceDefinition = statusWith(false);

/** prepareForUpdate of a kind with /status: the main resource cannot change status. */
export function keepStatus(obj: KObject, old: KObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = old.status;
}
