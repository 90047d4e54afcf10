// Node (core/v1, cluster-scoped): a machine of the cluster, with spec and /status.

import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { arr, bool, condition, int32, int64, obj, objectSchema, quantity, str, time } from '../schemas.ts';
import { keepStatus, statusSubresource } from './status-subresource.ts';

const resourceList = () => obj({}, { additionalProperties: quantity() });

export function nodeDefinition(): KindDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Node',
    resource: 'nodes',
    singular: 'node',
    shortNames: ['no'],
    namespaced: false,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    selectableFields: { 'spec.unschedulable': (o) => String((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable ?? false) },
    schema: objectSchema({
      spec: obj({
        podCIDR: str(),
        podCIDRs: arr(str(), { 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' }),
        providerID: str(),
        unschedulable: bool(),
        taints: arr(obj({ key: str(), value: str(), effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }), timeAdded: time() }, { required: ['key', 'effect'] }), { 'x-kubernetes-list-type': 'atomic' }),
        configSource: obj({ configMap: obj({ namespace: str(), name: str(), uid: str(), resourceVersion: str(), kubeletConfigKey: str() }, { required: ['namespace', 'name', 'kubeletConfigKey'] }) }),
        externalID: str(),
      }),
      status: obj({
        capacity: resourceList(),
        allocatable: resourceList(),
        phase: str({ enum: ['Pending', 'Running', 'Terminated'] }),
        conditions: arr(condition({ lastHeartbeatTime: time() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
        addresses: arr(obj({ type: str(), address: str() }, { required: ['type', 'address'] }), { 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
        daemonEndpoints: obj({ kubeletEndpoint: obj({ Port: int32() }, { required: ['Port'] }) }),
        nodeInfo: obj({
          machineID: str(),
          systemUUID: str(),
          bootID: str(),
          kernelVersion: str(),
          osImage: str(),
          containerRuntimeVersion: str(),
          kubeletVersion: str(),
          kubeProxyVersion: str(),
          operatingSystem: str(),
          architecture: str(),
          swap: obj({ capacity: int64() }),
        }),
        images: arr(obj({ names: arr(str(), { 'x-kubernetes-list-type': 'atomic' }), sizeBytes: int64() }), { 'x-kubernetes-list-type': 'atomic' }),
        volumesInUse: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
        volumesAttached: arr(obj({ name: str(), devicePath: str() }, { required: ['name', 'devicePath'] }), { 'x-kubernetes-list-type': 'atomic' }),
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        runtimeHandlers: arr(obj({ name: str(), features: obj({ recursiveReadOnlyMounts: bool(), userNamespaces: bool() }) }), { 'x-kubernetes-list-type': 'atomic' }),
        features: obj({ supplementalGroupsPolicy: bool() }),
      }),
    }),
    subresources: [statusSubresource],
    strategy: {
      // Nodes register with their status (the kubelet sets capacity and conditions on create), so
      // unlike most kinds a create keeps it; updates of the main resource do not change it.
      prepareForUpdate: keepStatus,
    },
  };
}
