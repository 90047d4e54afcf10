// Node (core/v1, cluster-scoped): a machine of the cluster, with spec and /status.

import type { Naming } from '../../naming.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { Schema } from '../../machinery/schema.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn, type PrinterColumn } from '../printers.ts';
import { validateNode, validateNodeUpdate } from './node-validation.ts';
import { arr, bool, condition, describe, int32, int64, obj, objectSchema, quantity, str, time } from '../schemas.ts';
import { nodeDocs } from './docs/node.ts';
import { keepStatus, statusSubresource } from './status-subresource.ts';

const resourceList = () => obj({}, { additionalProperties: quantity() });
const configSource = () =>
  obj({ configMap: obj({ namespace: str(), name: str(), uid: str(), resourceVersion: str(), kubeletConfigKey: str() }, { required: ['namespace', 'name', 'kubeletConfigKey'] }) });

interface NodeView {
  spec?: { unschedulable?: boolean };
  status?: {
    conditions?: { type?: string; status?: string }[];
    addresses?: { type?: string; address?: string }[];
    nodeInfo?: { kubeletVersion?: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  };
}

const view = (o: KObject): NodeView => o as NodeView;
const firstAddress = (o: KObject, type: string): string => view(o).status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
const info = (o: KObject, field: 'osImage' | 'kernelVersion' | 'containerRuntimeVersion'): string => view(o).status?.nodeInfo?.[field] || '<unknown>';

/** Kubernetes' node columns: Ready/NotReady (plus SchedulingDisabled), roles from labels, and the wide ones. */
function nodeColumns(n: Naming): PrinterColumn[] {
  const rolePrefix = `node-role.${n.labelDomain}/`;
  const roleLabel = `${n.labelDomain}/role`;
  return [
    nameColumn,
    {
      name: 'Status',
      type: 'string',
      description: 'The status of the node',
      value: (o) => {
        const ready = view(o).status?.conditions?.find((c) => c.type === 'Ready');
        const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
        if (view(o).spec?.unschedulable) status.push('SchedulingDisabled');
        return status.join(',');
      },
    },
    {
      name: 'Roles',
      type: 'string',
      description: 'The roles of the node',
      value: (o) => {
        const roles = new Set<string>();
        for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
          if (k.startsWith(rolePrefix) && k.length > rolePrefix.length) roles.add(k.slice(rolePrefix.length));
          else if (k === roleLabel && v) roles.add(v);
        }
        return roles.size ? [...roles].sort().join(',') : '<none>';
      },
    },
    ageColumn,
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', value: (o) => view(o).status?.nodeInfo?.kubeletVersion ?? '' },
    { name: 'Internal-IP', type: 'string', priority: 1, description: 'List of addresses reachable to the node.', value: (o) => firstAddress(o, 'InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, description: 'List of addresses reachable to the node.', value: (o) => firstAddress(o, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, description: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', value: (o) => info(o, 'osImage') },
    { name: 'Kernel-Version', type: 'string', priority: 1, description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", value: (o) => info(o, 'kernelVersion') },
    { name: 'Container-Runtime', type: 'string', priority: 1, description: 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', value: (o) => info(o, 'containerRuntimeVersion') },
  ];
}

/**
 * `spec.podCIDR` mirrors `spec.podCIDRs[0]`, as Kubernetes' conversion keeps them: a lone podCIDR
 * becomes the list, and a list decides podCIDR.
 */
function normalizePodCidrs(o: KObject): void {
  const spec = o.spec as { podCIDR?: string; podCIDRs?: string[] } | undefined;
  if (!spec) return;
  if (spec.podCIDRs?.length) spec.podCIDR = spec.podCIDRs[0];
  else if (spec.podCIDR) spec.podCIDRs = [spec.podCIDR];
}

/** Kubernetes' SetDefaults_NodeStatus: allocatable is capacity unless given. */
function defaultAllocatable(o: KObject): void {
  const status = o.status as { capacity?: Record<string, unknown>; allocatable?: Record<string, unknown> } | undefined;
  if (status?.capacity && status.allocatable == null) status.allocatable = { ...status.capacity };
}

/**
 * NodeSystemInfo is a Go value struct of plain strings: a partial one decodes with every other
 * field empty, and every field is written back. Their schema default ('') is what decoding fills in.
 */
function zeroValuedStrings(s: Schema | undefined): void {
  for (const p of Object.values(s?.properties ?? {})) if (p.type === 'string') p.default ??= '';
}

export function nodeDefinition(n: Naming): KindDefinition {
  const def: KindDefinition = {
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
    schema: describe(objectSchema({
      spec: obj({
        podCIDR: str(),
        podCIDRs: arr(str(), { 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' }),
        providerID: str(),
        unschedulable: bool(),
        taints: arr(
          obj({ key: str(), value: str(), effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }), timeAdded: time() }, { required: ['key', 'effect'] }),
          { 'x-kubernetes-list-type': 'atomic' },
        ),
        configSource: configSource(),
        externalID: str(),
      }),
      status: obj({
        capacity: resourceList(),
        allocatable: resourceList(),
        phase: str({ enum: ['Pending', 'Running', 'Terminated'] }),
        conditions: arr(condition({ lastHeartbeatTime: time() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
        addresses: arr(obj({ type: str(), address: str() }, { required: ['type', 'address'] }), { 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
        daemonEndpoints: obj({ kubeletEndpoint: obj({ Port: int32() }, { required: ['Port'] }) }),
        nodeInfo: obj(
          {
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
          },
          { required: ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'] },
        ),
        images: arr(obj({ names: arr(str(), { 'x-kubernetes-list-type': 'atomic' }), sizeBytes: int64() }), { 'x-kubernetes-list-type': 'atomic' }),
        volumesInUse: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
        volumesAttached: arr(obj({ name: str(), devicePath: str() }, { required: ['name', 'devicePath'] }), { 'x-kubernetes-list-type': 'atomic' }),
        config: obj({ assigned: configSource(), active: configSource(), lastKnownGood: configSource(), error: str() }),
        declaredFeatures: arr(str(), { 'x-kubernetes-list-type': 'atomic' }),
        runtimeHandlers: arr(obj({ name: str(), features: obj({ recursiveReadOnlyMounts: bool(), userNamespaces: bool() }) }), { 'x-kubernetes-list-type': 'atomic' }),
        features: obj({ supplementalGroupsPolicy: bool() }),
      }),
    }), nodeDocs),
    subresources: [statusSubresource],
    printerColumns: nodeColumns(n),
    valueStructs: ['status.nodeInfo', 'status.daemonEndpoints', 'status.daemonEndpoints.kubeletEndpoint'],
    strategy: {
      // Nodes register with their status (the kubelet sets capacity and conditions on create), so
      // unlike most kinds a create keeps it; updates of the main resource do not change it.
      prepareForCreate: normalizePodCidrs,
      prepareForUpdate(o, old) {
        keepStatus(o, old);
        normalizePodCidrs(o);
      },
      defaults: defaultAllocatable,
      validate: (o) => validateNode(o, n),
      validateUpdate: (o, old) => validateNodeUpdate(o, old, n),
    },
  };
  zeroValuedStrings(def.schema.properties?.status?.properties?.nodeInfo);
  return def;
}
