// What the fields of Node mean, as `kubectl explain` and OpenAPI show them.

import type { Docs, ObjectDocs } from '../../schemas.ts';

/**
 * A reference to kubelet configuration (the removed dynamic kubelet configuration feature). The
 * same type in spec and status: its texts must not differ, or it would be published twice.
 */
const configSource = (about: string): ObjectDocs => ({
  about,
  typeAbout: 'Where kubelet configuration comes from (deprecated).',
  fields: {
    configMap: {
      about: 'The ConfigMap holding the configuration.',
      typeAbout: 'A reference to the key of a ConfigMap that held kubelet configuration.',
      fields: {
        namespace: 'The namespace of the ConfigMap. Required.',
        name: 'The name of the ConfigMap. Required.',
        uid: 'The uid of the ConfigMap: must not be set in spec, required in status.',
        resourceVersion: 'The resourceVersion of the ConfigMap: must not be set in spec, required in status.',
        kubeletConfigKey: 'The key of the ConfigMap that holds the configuration. Required.',
      },
    },
  },
});

const resources = (what: string): Docs => `${what}, by resource name (such as cpu, memory, pods or ephemeral-storage), as quantities.`;

export const nodeDocs: ObjectDocs = {
  about: 'A machine of the cluster that runs Pods, registered and kept up to date by its kubelet. The name identifies the node throughout the cluster.',
  fields: {
    spec: {
      about: 'How the node is configured: its Pod address ranges, cloud identity, taints and whether it takes new Pods.',
      typeAbout: 'The configuration of a node.',
      fields: {
        podCIDR: 'The IP range assigned to Pods on this node; always the first entry of podCIDRs. Once set it cannot be changed.',
        podCIDRs:
          'The IP ranges assigned to Pods on this node, at most one per IP family, without duplicates; the first entry is podCIDR. Once set they cannot be changed.',
        providerID: 'The identity of the node at its cloud provider, as <ProviderName>://<ProviderSpecificNodeID>. Once set it cannot be changed.',
        unschedulable: 'When true no new Pods are scheduled onto the node (kubectl cordon); Pods already there keep running. Defaults to false.',
        taints: {
          about: 'Marks that keep Pods which do not tolerate them off the node (or evict them). Replaced as a whole; a key and effect pair appears at most once.',
          typeAbout: 'A mark on a node that affects every Pod that does not tolerate it.',
          fields: {
            key: 'The taint key, a qualified name such as example.com/gpu. Required.',
            value: 'An optional value for the key, a label value.',
            effect:
              'What happens to Pods that do not tolerate the taint: NoSchedule (no new Pods; running ones stay), PreferNoSchedule (the scheduler avoids the node) or NoExecute (running Pods are evicted too). Required.',
            timeAdded: 'When the taint was added; recorded for NoExecute taints.',
          },
        },
        configSource: configSource('Deprecated and unused: where the kubelet was told to read its configuration, for the removed dynamic kubelet configuration feature.'),
        externalID: 'Deprecated and unused: an external identity of the node, not set by current kubelets.',
      },
    },
    status: {
      about: 'What the kubelet last reported about the node: resources, conditions, addresses and system facts. Written through the status subresource.',
      typeAbout: 'The state of a node as its kubelet reports it.',
      fields: {
        capacity: resources('The total resources of the node'),
        allocatable: resources('The resources available to Pods (capacity minus what the system reserves); defaults to capacity'),
        phase: 'Deprecated and never set: Pending, Running or Terminated.',
        conditions: {
          about: 'The observed health of the node, one entry per type, such as Ready, MemoryPressure, DiskPressure, PIDPressure and NetworkUnavailable.',
          typeAbout: 'One observed aspect of a node, as its kubelet reports it.',
          fields: {
            type: 'What this condition reports, such as Ready or MemoryPressure.',
            lastHeartbeatTime: 'When the kubelet last confirmed this condition.',
          },
        },
        addresses: {
          about: 'The addresses the node is reachable at; they may change over its life. Best replaced as a whole: type alone does not identify an entry.',
          typeAbout: 'One address of a node.',
          fields: {
            type: 'The kind of address: Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS. Required.',
            address: 'The address itself. Required.',
          },
        },
        daemonEndpoints: {
          about: 'The ports that daemons of the node listen on.',
          typeAbout: 'The endpoints of the daemons on a node.',
          fields: {
            kubeletEndpoint: {
              about: 'Where the kubelet listens.',
              typeAbout: 'A port a daemon listens on.',
              fields: { Port: "The port of the kubelet's API. Required." },
            },
          },
        },
        nodeInfo: {
          about: 'Facts about the machine and its software, as the kubelet found them. Every field is required.',
          typeAbout: 'Identity and software versions of a node\'s machine.',
          fields: {
            machineID: 'The machine ID of the host (from /etc/machine-id).',
            systemUUID: 'The hardware UUID of the host, as its firmware reports it.',
            bootID: 'Changes every time the host boots.',
            kernelVersion: 'The kernel release (uname -r).',
            osImage: 'The operating system distribution and version (from /etc/os-release).',
            containerRuntimeVersion: 'The container runtime and its version, as <runtime>://<version>.',
            kubeletVersion: 'The version of the kubelet.',
            kubeProxyVersion: 'Deprecated: the version of kube-proxy, not reliably reported.',
            operatingSystem: 'The operating system, such as linux or windows.',
            architecture: 'The processor architecture, such as amd64 or arm64.',
            swap: {
              about: 'The swap memory of the node.',
              typeAbout: 'The swap memory of a node.',
              fields: { capacity: 'The total swap memory in bytes.' },
            },
          },
        },
        images: {
          about: 'Container images present on the node.',
          typeAbout: 'One container image on a node.',
          fields: {
            names: 'The names the image is known by, such as its tags and digest.',
            sizeBytes: 'The size of the image in bytes.',
          },
        },
        volumesInUse: 'Names of the volumes attached to the node and in use by its Pods.',
        volumesAttached: {
          about: 'The volumes attached to the node.',
          typeAbout: 'One volume attached to a node.',
          fields: {
            name: 'The unique name of the volume. Required.',
            devicePath: 'Where the volume is available on the node. Required.',
          },
        },
        config: {
          about: 'Deprecated and unused: the state of the removed dynamic kubelet configuration feature.',
          typeAbout: 'The dynamic kubelet configuration state of a node (deprecated).',
          fields: {
            assigned: configSource('The configuration the node was asked to use.'),
            active: configSource('The configuration the node was running.'),
            lastKnownGood: configSource('The configuration the node falls back to when the assigned one fails.'),
            error: 'What went wrong with the configuration, if anything.',
          },
        },
        declaredFeatures: 'Names of the feature-gated features the node declares it supports.',
        runtimeHandlers: {
          about: 'The runtime handlers available on the node, with what each supports.',
          typeAbout: 'One container runtime handler of a node.',
          fields: {
            name: 'The handler name, as a RuntimeClass handler names it; empty for the default handler.',
            features: {
              about: 'What the handler supports.',
              typeAbout: 'What a runtime handler supports.',
              fields: {
                recursiveReadOnlyMounts: 'Whether the handler supports recursively read-only mounts.',
                userNamespaces: 'Whether the handler supports user namespaces for Pods.',
              },
            },
          },
        },
        features: {
          about: 'Features the node supports.',
          typeAbout: 'Features a node supports.',
          fields: { supplementalGroupsPolicy: 'Whether the node honours the supplementalGroupsPolicy of Pods.' },
        },
      },
    },
  },
};
