// What the fields of APIService mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const apiServiceDocs: ObjectDocs = {
  about:
    'Registers the server of one API group version: this server itself (no spec.service) or a Service the requests are proxied to over HTTPS. The name must be <version>.<group>; the priorities order the group and version in discovery.',
  fields: {
    spec: {
      about: 'Which group version is served, by whom, and how it ranks in discovery.',
      typeAbout: 'What an APIService registers: group, version, the serving Service and the discovery priorities.',
      fields: {
        service: {
          about: 'The Service that serves the group version, reached over HTTPS. Absent: this server serves it itself.',
          typeAbout: 'A reference to a Service by namespace, name and port.',
          fields: {
            namespace: 'The namespace of the Service. Required when service is set.',
            name: 'The name of the Service. Required when service is set.',
            port: 'The port of the Service to connect to, 1 to 65535; defaults to 443.',
          },
        },
        group: 'The API group served; empty only for the core group, whose version must be v1. A DNS subdomain.',
        version: 'The API version served, such as v1 or v2beta1; a DNS-1035 label.',
        insecureSkipTLSVerify:
          "Skips verification of the serving certificate. Strongly discouraged; not allowed together with caBundle, nor for a group version this server serves itself.",
        caBundle: 'PEM-encoded certificate authorities (base64 in JSON) that verify the serving certificate; when unset the system roots are used. Not allowed without service.',
        groupPriorityMinimum:
          "The group's minimum priority in discovery: groups are listed by their highest value across versions, higher first, ties by name. Required; 1 to 20000.",
        versionPriority:
          'The rank of this version within its group, higher first; equal values are ordered by version string (GA before beta before alpha, then by number). Required; 1 to 1000.',
      },
    },
    status: {
      about: 'The observed state of the registration, written through the status subresource.',
      typeAbout: 'The observed state of an APIService: its conditions.',
      fields: {
        conditions: {
          about: 'The conditions of the registration, kept by the availability controller; one entry per type.',
          typeAbout: 'One observed aspect of an APIService.',
          fields: {
            type: 'What this condition reports; Available says whether requests for the group version can be served.',
            reason: 'The cause of the last transition, as a single CamelCase word.',
          },
        },
      },
    },
  },
};
