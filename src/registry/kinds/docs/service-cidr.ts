// What the fields of ServiceCIDR mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

/** Also the description of the CIDRs column of `kubectl get servicecidrs`. */
export const CIDRS_DESCRIPTION =
  'The ranges, in CIDR notation such as 10.96.0.0/16 or fd00:10:96::/112, that Service cluster IPs are allocated from: at most two, one per IP family. Cannot be changed, except that a single range may gain one of the other family.';

export const serviceCidrDocs: ObjectDocs = {
  about: 'A range of IP addresses that the cluster IPs of Services are allocated from. Several ServiceCIDRs may exist; an address is allocated from any of them.',
  fields: {
    spec: {
      about: 'The ranges this object provides.',
      typeAbout: 'The address ranges a ServiceCIDR provides.',
      fields: { cidrs: CIDRS_DESCRIPTION },
    },
    status: {
      about: 'The observed state of the ranges, written through the status subresource.',
      typeAbout: 'The observed state of a ServiceCIDR: its conditions.',
      fields: {
        conditions: {
          about: 'The conditions of this ServiceCIDR, such as Ready; one entry per type. Every field of a condition is required here.',
          typeAbout: 'One observed aspect of a ServiceCIDR.',
          fields: {
            type: 'What this condition reports, in CamelCase or as <domain>/CamelCase.',
            reason: 'The cause of the last transition as a non-empty CamelCase word, for machines.',
            message: 'A human-readable explanation of the last transition; required, but may be empty.',
            observedGeneration: 'The metadata.generation the condition was computed from; when it is lower than the current generation the condition is stale.',
          },
        },
      },
    },
  },
};
