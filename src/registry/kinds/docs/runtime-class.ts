// What the fields of RuntimeClass mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

export const runtimeClassDocs: ObjectDocs = {
  about:
    'A container runtime configuration that Pods select by name (spec.runtimeClassName): the handler that runs their containers, the resources it costs per Pod and the nodes that support it.',
  fields: {
    handler:
      'The name of the runtime configuration the node runs the containers with, assumed to mean the same on every node. Required; a lower-case DNS label; cannot be changed.',
    overhead: {
      about: 'Resources a Pod using this class costs beyond its containers; added to the Pod at admission.',
      typeAbout: 'The resources a Pod costs beyond its containers.',
      fields: {
        podFixed: 'The fixed overhead per Pod, by resource name (such as cpu or memory), as quantities.',
      },
    },
    scheduling: {
      about: 'The nodes that support this class; unset means every node does. Merged into the Pods that use the class at admission.',
      typeAbout: 'The constraints that keep Pods on the nodes supporting a RuntimeClass.',
      fields: {
        nodeSelector: 'Labels a node must have to run Pods of this class; merged with the Pod\'s own node selector, and a conflicting key makes admission reject the Pod.',
        tolerations: {
          about: 'Tolerations added to the Pods of this class at admission (without duplicates), so they may run on the tainted nodes that support it.',
          typeAbout: 'Lets a Pod run on nodes with a matching taint.',
          fields: {
            key: 'The taint key this toleration matches; empty matches every key, and then operator must be Exists.',
            operator: 'How value is compared: Equal (the default) or Exists (any value); Lt and Gt compare numbers and need the TaintTolerationComparisonOperators feature gate.',
            value: 'The taint value to match; empty when operator is Exists.',
            effect: 'The taint effect matched: NoSchedule, PreferNoSchedule or NoExecute; empty matches all three.',
            tolerationSeconds:
              'For effect NoExecute only: how long the Pod may stay on a node after the taint appears. Unset tolerates forever; zero or less evicts at once.',
          },
        },
      },
    },
  },
};
