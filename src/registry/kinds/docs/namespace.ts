// What the fields of Namespace mean, as `kubectl explain` and OpenAPI show them.

import type { Naming } from '../../../naming.ts';
import type { ObjectDocs } from '../../schemas.ts';

export const namespaceDocs = (n: Naming): ObjectDocs => ({
  about: `A scope for the names of namespaced objects. Deleting a namespace deletes everything in it: it stays Terminating until its content is gone and spec.finalizers is empty. Every namespace carries the label ${n.labelDomain}/metadata.name with its own name.`,
  fields: {
    spec: {
      about: 'What must happen before the namespace can be removed.',
      typeAbout: 'The settings of a namespace: the finalizers its deletion waits for.',
      fields: {
        finalizers: `Opaque names of the clean-up steps still to run before a deleted namespace is removed; the server adds "${n.namespaceFinalizer}" on create. Changed only through the finalize subresource, and replaced as a whole.`,
      },
    },
    status: {
      about: 'The observed state of the namespace, written by the server (through the status subresource).',
      typeAbout: 'The observed state of a namespace: its phase and conditions.',
      fields: {
        phase: 'Active while the namespace is in use; Terminating once it has been deleted and its content is being removed. New objects cannot be created in a terminating namespace.',
        conditions: {
          about: 'The conditions of the namespace, such as the progress of its deletion; one entry per type.',
          typeAbout: 'One observed aspect of a namespace.',
          fields: {
            type: 'What this condition reports, such as NamespaceDeletionContentFailure or NamespaceFinalizersRemaining.',
          },
        },
      },
    },
  },
});
