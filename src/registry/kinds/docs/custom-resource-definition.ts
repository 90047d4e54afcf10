// What the fields of CustomResourceDefinition mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

const names = (about: string): ObjectDocs => ({
  about,
  typeAbout: 'The names a custom resource is known by: in paths, in objects and on the command line.',
  fields: {
    plural: 'The resource name in paths (/apis/<group>/<version>/<plural>), lower case. The CRD itself must be named <plural>.<group>.',
    singular: 'The singular name, lower case; defaults to the kind in lower case. kubectl accepts it in place of the plural.',
    shortNames: 'Shorter names kubectl accepts in place of the plural (`kubectl get <shortname>`), lower case.',
    kind: 'The kind of the objects, in CamelCase, as their `kind` field says.',
    listKind: 'The kind of a list of the objects; defaults to the kind followed by List.',
    categories: 'Groups of resources this one belongs to, such as all: `kubectl get <category>` lists every resource of a category.',
  },
});

export const customResourceDefinitionDocs: ObjectDocs = {
  about: 'Defines a new kind of object served by this server: its group, names, scope and versions, each version with the schema objects are validated and pruned against. Once its names are accepted and it is established, the kind is served like any built-in one; deleting it deletes every object of the kind.',
  fields: {
    spec: {
      about: 'The kind this definition asks to be served.',
      typeAbout: 'What a custom resource definition asks for.',
      fields: {
        group: 'The API group of the kind, a DNS subdomain with at least one dot (example.com). Cannot be changed.',
        names: names('The names the kind should have. A name another definition of the group already holds is not accepted (see status.acceptedNames).'),
        scope: 'Namespaced (objects live in a namespace) or Cluster (objects are cluster-wide). Cannot be changed once established.',
        versions: {
          about: 'The versions the kind is defined at. Exactly one is the storage version, the form objects are kept in.',
          typeAbout: 'One version of a custom resource.',
          fields: {
            name: 'The version name, as it appears in paths and apiVersion (v1, v1beta1); a DNS-1035 label.',
            served: 'Whether the version is served over the API.',
            storage: 'Whether objects are kept in this version; exactly one version has it.',
            deprecated: 'Whether requests to this version get a deprecation warning.',
            deprecationWarning: 'The warning deprecated requests get instead of the default one; at most 256 characters.',
            schema: {
              about: 'How objects of this version are validated and pruned.',
              typeAbout: 'A schema of a custom resource version.',
              fields: { openAPIV3Schema: 'The OpenAPI v3 schema of the whole object: a structural schema, whose x-kubernetes-* extensions say how lists and maps merge and where unknown fields are kept.' },
            },
            subresources: {
              about: 'The subresources objects of this version have.',
              typeAbout: 'The subresources of a custom resource version.',
              fields: {
                status: 'When present, status is written only through the /status subresource, and writes to the object keep the stored status.',
                scale: {
                  about: 'When present, the /scale subresource reads and writes the replica count at these paths.',
                  typeAbout: 'Where a custom resource keeps its replica counts.',
                  fields: {
                    specReplicasPath: 'The JSON path of the desired replica count, under .spec.',
                    statusReplicasPath: 'The JSON path of the observed replica count, under .status.',
                    labelSelectorPath: 'The JSON path of the label selector of the replicas, under .spec or .status.',
                  },
                },
              },
            },
            additionalPrinterColumns: {
              about: 'The columns `kubectl get` prints besides the name; without any, an Age column.',
              typeAbout: 'One column of the table of a custom resource.',
              fields: {
                name: 'The column heading.',
                type: 'The OpenAPI type of the cells: integer, number, string, boolean or date.',
                format: 'The OpenAPI format of the cells, such as int32 or name.',
                description: 'What the column shows.',
                priority: 'Zero for a column always shown; higher for one shown only in wide output.',
                jsonPath: 'The JSON path, from the object, of the value each cell shows.',
              },
            },
            selectableFields: {
              about: 'Fields of the objects a field selector may name.',
              typeAbout: 'A field a field selector may name.',
              fields: { jsonPath: 'The JSON path of the field, from the object.' },
            },
          },
        },
        conversion: {
          about: 'How objects are converted between versions; the None strategy by default.',
          typeAbout: 'How a custom resource converts between its versions.',
          fields: {
            strategy: 'None (only apiVersion changes) or Webhook (a webhook converts).',
            webhook: {
              about: 'The webhook of the Webhook strategy.',
              typeAbout: 'A conversion webhook.',
              fields: {
                clientConfig: {
                  about: 'How the webhook is reached.',
                  typeAbout: 'Where a webhook is and how its certificate is checked.',
                  fields: {
                    url: 'The HTTPS URL of the webhook.',
                    service: {
                      about: 'The service the webhook runs behind, instead of a URL.',
                      typeAbout: 'A reference to a service.',
                      fields: { namespace: "The service's namespace.", name: "The service's name.", path: 'The URL path requests are sent to.', port: 'The port; 443 by default.' },
                    },
                    caBundle: "The PEM certificates the webhook's serving certificate must chain to.",
                  },
                },
                conversionReviewVersions: 'The ConversionReview versions the webhook understands, preferred first.',
              },
            },
          },
        },
        preserveUnknownFields: 'Must be false: unknown fields are pruned; use x-kubernetes-preserve-unknown-fields in the schema to keep them where needed.',
      },
    },
    status: {
      about: 'What the server made of the definition.',
      typeAbout: 'The observed state of a custom resource definition.',
      fields: {
        conditions: {
          about: 'NamesAccepted (the names are free), Established (the kind is served) and Terminating (the definition is being deleted).',
          typeAbout: 'A condition of a custom resource definition.',
          fields: {},
        },
        acceptedNames: names('The names the kind is served with: the requested ones, less those another definition holds.'),
        storedVersions: 'Every version objects have been stored in; a version leaves this list only once no object is stored in it.',
      },
    },
  },
};
