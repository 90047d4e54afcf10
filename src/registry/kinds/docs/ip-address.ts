// What the fields of IPAddress mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const ipAddressDocs: ObjectDocs = {
  about:
    'One allocated IP address of one family. The name is the address in canonical text (IPv4 dotted decimal without leading zeros, IPv6 in RFC 5952 form), so no address can be allocated twice.',
  fields: {
    spec: {
      about: 'What the address is allocated to.',
      typeAbout: 'What an IP address is allocated to.',
      fields: {
        parentRef: {
          about: 'The object the address belongs to, such as the Service holding it as cluster IP. Required; cannot be changed once set.',
          typeAbout: 'A reference to an object by group, resource, namespace and name.',
          fields: {
            group: 'The API group of the parent, empty for the core group.',
            resource: 'The resource (plural, lower case) of the parent, such as services. Required.',
            namespace: 'The namespace of the parent, empty for a cluster-scoped parent.',
            name: 'The name of the parent. Required.',
          },
        },
      },
    },
  },
};
