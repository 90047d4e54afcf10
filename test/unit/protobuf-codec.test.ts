import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';

import {
  decodeObject,
  decodeWatchEvent,
  DecodeError,
  encodeItem,
  encodeList,
  encodeListFromItems,
  encodeObject,
  encodeObjectFromItem,
  encodeStatus,
  encodeWatchEvent,
  encodeWatchEventFromItem,
  PROTOBUF_MAGIC,
  supportsProtobuf,
} from '../../src/wire/protobuf/index.ts';
import { WireWriter } from '../../src/wire/protobuf/writer.ts';
import { builtinKinds } from '../../src/registry/kinds/index.ts';
import { namingProfile, type Naming, type NamingProfileName } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import type { Schema } from '../../src/machinery/schema.ts';
import type { KObject } from '../../src/machinery/meta.ts';

type Json = Record<string, unknown>;

const orch = namingProfile('orch');
const kube = namingProfile('kubernetes');
const gv = (n: Naming, group: string, version: string): string => `${n.group(group)}/${version}`;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// ---- rich example objects: every field our schemas have ----

const TIME = '2026-01-02T03:04:05Z';
const TIME2 = '2026-03-04T05:06:07Z';
const MICRO = '2026-01-02T03:04:05.123456Z';
const MICRO2 = '2026-01-02T03:04:06.000001Z';

function objectMeta(name: string, namespace?: string): Json {
  return {
    name,
    generateName: `${name}-`,
    ...(namespace ? { namespace } : {}),
    selfLink: `/self/${name}`,
    uid: '6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b',
    resourceVersion: '12345',
    generation: 7,
    creationTimestamp: TIME,
    deletionTimestamp: TIME2,
    deletionGracePeriodSeconds: 30,
    labels: { app: 'demo', 'tier.example.com/zone': 'b', empty: '' },
    annotations: { note: 'κόσμε 世界', 'example.com/json': '{"a":[1,2]}' },
    ownerReferences: [
      { apiVersion: 'v1', kind: 'Node', name: 'owner-a', uid: '11111111-2222-4333-8444-555555555555', controller: true, blockOwnerDeletion: false },
      { apiVersion: 'example.com/v1', kind: 'Thing', name: 'owner-b', uid: '99999999-2222-4333-8444-555555555555', blockOwnerDeletion: true },
    ],
    finalizers: ['example.com/cleanup', 'kubernetes'],
    managedFields: [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: TIME,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} }, 'f:ownerReferences': { 'k:{"uid":"11111111-2222-4333-8444-555555555555"}': {} } } },
        subresource: 'status',
      },
      { manager: 'controller', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
    ],
  };
}

function examples(n: Naming): KObject[] {
  const condition = (type: string): Json => ({ type, status: 'True', lastTransitionTime: TIME, reason: 'AllGood', message: `${type} is fine` });
  const configMapSource = (name: string): Json => ({ configMap: { namespace: 'kube-config', name, uid: 'cfg-uid', resourceVersion: '9', kubeletConfigKey: 'kubelet' } });
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: objectMeta('team-a'),
      spec: { finalizers: ['kubernetes', 'example.com/extra'] },
      status: { phase: 'Terminating', conditions: [condition('NamespaceContentRemaining'), { type: 'NamespaceFinalizersRemaining', status: 'False' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: objectMeta('node-1'),
      spec: {
        podCIDR: '10.244.1.0/24',
        podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'],
        providerID: 'cloud://zone-a/node-1',
        unschedulable: true,
        taints: [
          { key: 'dedicated', value: 'gpu', effect: 'NoSchedule', timeAdded: TIME },
          { key: 'node.example.com/unreachable', effect: 'NoExecute' },
        ],
        configSource: configMapSource('node-1-config'),
        externalID: 'ext-1',
      },
      status: {
        capacity: { cpu: '8', memory: '32Gi', pods: '110', 'hugepages-2Mi': '0', 'example.com/gpu': '2' },
        allocatable: { cpu: '7800m', memory: '31Gi', pods: '110' },
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True', lastHeartbeatTime: TIME2, lastTransitionTime: TIME, reason: 'KubeletReady', message: 'kubelet is posting ready status' },
          { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: TIME2, lastTransitionTime: TIME, reason: 'KubeletHasSufficientMemory', message: 'ok' },
        ],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.11' },
          { type: 'Hostname', address: 'node-1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: 'm-1',
          systemUUID: 's-1',
          bootID: 'b-1',
          kernelVersion: '6.1.0-13-amd64',
          osImage: 'Debian GNU/Linux 12 (bookworm)',
          containerRuntimeVersion: 'containerd://1.7.2',
          kubeletVersion: 'v1.33.0',
          kubeProxyVersion: 'v1.33.0',
          operatingSystem: 'linux',
          architecture: 'amd64',
          swap: { capacity: 4294967296 },
        },
        images: [
          { names: ['registry.example/pause@sha256:abc', 'registry.example/pause:3.9'], sizeBytes: 315399 },
          { names: ['registry.example/big:1'], sizeBytes: 9007199254740991 },
        ],
        volumesInUse: ['kubernetes.io/csi/driver^vol-1'],
        volumesAttached: [{ name: 'kubernetes.io/csi/driver^vol-1', devicePath: '/dev/xvdba' }],
        config: { assigned: configMapSource('a'), active: configMapSource('b'), lastKnownGood: configMapSource('c'), error: 'none yet' },
        declaredFeatures: ['FeatureA', 'FeatureB'],
        runtimeHandlers: [
          { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
          { name: 'runc', features: { recursiveReadOnlyMounts: false, userNamespaces: true } },
          { name: 'crun' },
        ],
        features: { supplementalGroupsPolicy: true },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ComponentStatus',
      metadata: objectMeta('etcd-0'),
      conditions: [
        { type: 'Healthy', status: 'True', message: 'ok' },
        { type: 'Degraded', status: 'False', message: 'probe failed', error: 'timeout' },
      ],
    },
    {
      apiVersion: gv(n, 'coordination', 'v1'),
      kind: 'Lease',
      metadata: objectMeta('node-1', 'kube-node-lease'),
      spec: {
        holderIdentity: 'node-1',
        leaseDurationSeconds: 40,
        acquireTime: MICRO,
        renewTime: MICRO2,
        leaseTransitions: 4,
        strategy: 'OldestEmulationVersion',
        preferredHolder: 'node-2',
      },
    },
    {
      apiVersion: gv(n, 'rbac.authorization', 'v1'),
      kind: 'Role',
      metadata: objectMeta('reader', 'team'),
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    },
    {
      apiVersion: gv(n, 'rbac.authorization', 'v1'),
      kind: 'ClusterRole',
      metadata: objectMeta('monitoring', undefined),
      rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }, { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'ops' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }] },
    },
    {
      apiVersion: gv(n, 'rbac.authorization', 'v1'),
      kind: 'RoleBinding',
      metadata: objectMeta('readers', 'team'),
      subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team' }, { kind: 'User', apiGroup: n.group('rbac.authorization'), name: 'jane' }],
      roleRef: { apiGroup: n.group('rbac.authorization'), kind: 'Role', name: 'reader' },
    },
    {
      apiVersion: gv(n, 'rbac.authorization', 'v1'),
      kind: 'ClusterRoleBinding',
      metadata: objectMeta('monitors', undefined),
      subjects: [{ kind: 'Group', apiGroup: n.group('rbac.authorization'), name: 'system:monitoring' }, { kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
      roleRef: { apiGroup: n.group('rbac.authorization'), kind: 'ClusterRole', name: 'monitoring' },
    },
    {
      apiVersion: gv(n, 'coordination', 'v1beta1'),
      kind: 'LeaseCandidate',
      metadata: objectMeta('apiserver-a', 'kube-system'),
      spec: { leaseName: 'kube-scheduler', pingTime: MICRO, renewTime: MICRO2, binaryVersion: '1.33.0', emulationVersion: '1.32.0', strategy: 'OldestEmulationVersion' },
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: objectMeta('pod-b.17f1', 'default'),
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'pod-b', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '78', fieldPath: 'spec.containers{app}' },
      reason: 'Pulled',
      message: 'Container image pulled',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: TIME,
      lastTimestamp: TIME2,
      count: 4,
      type: 'Normal',
      eventTime: MICRO,
      series: { count: 2, lastObservedTime: MICRO2 },
      action: 'Pulling',
      related: { kind: 'Node', namespace: 'other', name: 'node-1', uid: 'node-uid', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'status' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: objectMeta('settings', 'default'),
      immutable: true,
      data: { 'mode.txt': 'fast', level: '3' },
      binaryData: { 'blob.bin': Buffer.from([0, 1, 254, 255]).toString('base64') },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: objectMeta('creds', 'default'),
      immutable: false,
      data: { password: Buffer.from([0, 115, 51, 255]).toString('base64'), user: Buffer.from('admin').toString('base64') },
      stringData: { extra: 'text' },
      type: `${n.labelDomain}/basic-auth`,
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: objectMeta('robot', 'default'),
      secrets: [{ kind: 'Secret', namespace: 'default', name: 'robot-token', uid: 'secret-uid', apiVersion: 'v1', resourceVersion: '12', fieldPath: 'data' }],
      imagePullSecrets: [{ name: 'registry' }],
      automountServiceAccountToken: false,
    },
    {
      apiVersion: gv(n, 'events', 'v1'),
      kind: 'Event',
      metadata: objectMeta('pod-a.17f0', 'default'),
      eventTime: MICRO,
      series: { count: 3, lastObservedTime: MICRO2 },
      reportingController: 'example.com/controller',
      reportingInstance: 'controller-7d9f',
      action: 'Scheduling',
      reason: 'FailedScheduling',
      regarding: { kind: 'Pod', namespace: 'default', name: 'pod-a', uid: 'pod-uid', apiVersion: 'v1', resourceVersion: '77', fieldPath: 'spec.containers{app}' },
      related: { kind: 'Node', namespace: 'other', name: 'node-1', uid: 'node-uid', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'status' },
      note: '0/3 nodes are available',
      type: 'Warning',
      deprecatedSource: { component: 'scheduler', host: 'host-1' },
      deprecatedFirstTimestamp: TIME,
      deprecatedLastTimestamp: TIME2,
      deprecatedCount: 5,
    },
    {
      apiVersion: gv(n, 'networking', 'v1'),
      kind: 'IPAddress',
      metadata: objectMeta('2001:db8::1'),
      spec: { parentRef: { group: 'example.com', resource: 'services', namespace: 'default', name: 'web' } },
    },
    {
      apiVersion: gv(n, 'networking', 'v1'),
      kind: 'ServiceCIDR',
      metadata: objectMeta('kubernetes'),
      spec: { cidrs: ['10.96.0.0/12', 'fd00:10:96::/112'] },
      status: { conditions: [{ type: 'Ready', status: 'True', observedGeneration: 7, lastTransitionTime: TIME, reason: 'Ready', message: 'ready' }] },
    },
    {
      apiVersion: gv(n, 'node', 'v1'),
      kind: 'RuntimeClass',
      metadata: objectMeta('gvisor'),
      handler: 'runsc',
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: {
        nodeSelector: { 'runtime.example.com/gvisor': 'true', zone: 'a' },
        tolerations: [
          { key: 'sandbox', operator: 'Equal', value: 'gvisor', effect: 'NoExecute', tolerationSeconds: 3600 },
          { operator: 'Exists' },
        ],
      },
    },
    {
      apiVersion: gv(n, 'apiregistration', 'v1'),
      kind: 'APIService',
      metadata: objectMeta('v1beta1.metrics.example.com'),
      spec: {
        service: { namespace: 'kube-system', name: 'metrics', port: 443 },
        group: 'metrics.example.com',
        version: 'v1beta1',
        insecureSkipTLSVerify: true,
        caBundle: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64'),
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
      status: { conditions: [{ type: 'Available', status: 'False', lastTransitionTime: TIME, reason: 'FailedDiscoveryCheck', message: 'no response' }] },
    },
    {
      apiVersion: gv(n, 'authentication', 'v1'),
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: TIME },
      status: { userInfo: { username: 'jane', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { 'example.com/scopes': ['a', 'b'], reason: ['audit'] } } },
    },
    {
      apiVersion: gv(n, 'authentication', 'v1'),
      kind: 'TokenReview',
      metadata: {},
      spec: { token: 'abc.def', audiences: ['api', 'vault'] },
      status: { authenticated: true, user: { username: 'bob', uid: 'u-2', groups: ['system:authenticated'], extra: { scopes: ['x'] } }, audiences: ['api'], error: 'none' },
    },
    ...(['SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectAccessReview'] as const).map((kind) => ({
      apiVersion: gv(n, 'authorization', 'v1'),
      kind,
      metadata: kind === 'LocalSubjectAccessReview' ? { namespace: 'team' } : {},
      spec: {
        // Both kinds of attributes at once (validation would refuse that; the codec carries it).
        resourceAttributes: {
          namespace: 'team',
          verb: 'list',
          group: 'apps',
          version: 'v1',
          resource: 'deployments',
          subresource: 'scale',
          name: 'web',
          fieldSelector: { rawSelector: 'metadata.name=web', requirements: [{ key: 'metadata.name', operator: 'In', values: ['web', 'api'] }] },
          labelSelector: { rawSelector: 'app=web', requirements: [{ key: 'tier', operator: 'In', values: ['front'] }] },
        },
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
        ...(kind !== 'SelfSubjectAccessReview' && { user: 'jane', groups: ['dev', 'ops'], extra: { 'example.com/scopes': ['a', 'b'] }, uid: 'u-3' }),
      },
      status: { allowed: false, denied: true, reason: 'no', evaluationError: 'webhook down' },
    })),
    {
      apiVersion: gv(n, 'authorization', 'v1'),
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: { namespace: 'team' },
      status: {
        resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] }],
        incomplete: true,
        evaluationError: 'webhook authorizer does not support user rule resolution',
      },
    },
    {
      apiVersion: gv(n, 'apiextensions', 'v1'),
      kind: 'CustomResourceDefinition',
      metadata: objectMeta('gadgets.example.com'),
      spec: {
        group: 'example.com',
        names: { plural: 'gadgets', singular: 'gadget', shortNames: ['gd', 'gdt'], kind: 'Gadget', listKind: 'GadgetList', categories: ['all', 'toys'] },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            deprecated: true,
            deprecationWarning: 'v1 is old',
            schema: { openAPIV3Schema: RICH_SCHEMA },
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
            additionalPrinterColumns: [
              { name: 'Size', type: 'integer', format: 'int32', description: 'How big', priority: 1, jsonPath: '.spec.size' },
              { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            ],
            selectableFields: [{ jsonPath: '.spec.color' }],
          },
          // A version that is served but not stored, without a schema of its own: its zero values stay.
          { name: 'v1beta1', served: false, storage: false },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { url: 'https://convert.example.com/x', service: { namespace: 'ns', name: 'conv', path: '/convert', port: 8443 }, caBundle: Buffer.from('not really a CA').toString('base64') },
            conversionReviewVersions: ['v1', 'v1beta1'],
          },
        },
        preserveUnknownFields: true,
      },
      status: {
        conditions: [
          { type: 'Established', status: 'True', lastTransitionTime: TIME, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
          { type: 'NamesAccepted', status: 'False' },
        ],
        acceptedNames: { plural: 'gadgets', singular: 'gadget', shortNames: ['gd'], kind: 'Gadget', listKind: 'GadgetList', categories: ['all'] },
        storedVersions: ['v1beta1', 'v1'],
      },
    },
  ] as KObject[];
}

/** A schema with every JSONSchemaProps field, each of the wrappers' forms, and JSON values of every type. */
const RICH_SCHEMA: Json = {
  id: 'urn:gadget',
  $schema: 'http://json-schema.org/draft-04/schema#',
  $ref: '#/definitions/base',
  description: 'A gadget ✓',
  type: 'object',
  format: 'gadget',
  title: 'Gadget',
  default: { size: 1, tags: ['a'], nested: { ok: true, none: null } },
  maximum: 10.5,
  exclusiveMaximum: true,
  minimum: 0,
  exclusiveMinimum: true,
  maxLength: 0,
  minLength: 3,
  pattern: '^[a-z]+$',
  maxItems: 9007199254740991,
  minItems: 1,
  uniqueItems: true,
  multipleOf: 0.25,
  enum: ['a', 1, 2.5, true, null, { k: 'v' }, [1, 'x']],
  maxProperties: 4,
  minProperties: 0,
  required: ['spec', 'status'],
  items: { type: 'string', 'x-kubernetes-int-or-string': true },
  allOf: [{ type: 'object' }, { required: ['a'] }],
  oneOf: [{ required: ['b'] }],
  anyOf: [{ required: ['c'] }, { not: { required: ['d'] } }],
  not: { type: 'string' },
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', default: 0 },
        tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false },
        rest: { type: 'array', items: { type: 'string' }, additionalItems: { type: 'string' } },
        free: { type: 'object', additionalProperties: true },
        labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'granular' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } },
        },
      },
      'x-kubernetes-validations': [
        { rule: 'self.size >= 0', message: 'no negative size', messageExpression: "'size ' + string(self.size)", reason: 'FieldValueInvalid', fieldPath: '.size', optionalOldSelf: true },
        { rule: 'true' },
      ],
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false, nullable: true },
    embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
  },
  additionalProperties: false,
  patternProperties: { '^x-': { type: 'string' } },
  dependencies: { a: ['b', 'c'], d: { required: ['e'] } },
  additionalItems: true,
  definitions: { base: { type: 'object', example: 'text' } },
  externalDocs: { description: 'more', url: 'https://example.com/docs' },
  example: [1, { two: 2 }],
  nullable: true,
  'x-kubernetes-preserve-unknown-fields': true,
  'x-kubernetes-embedded-resource': true,
  'x-kubernetes-int-or-string': true,
  'x-kubernetes-list-map-keys': ['name'],
  'x-kubernetes-list-type': 'atomic',
  'x-kubernetes-map-type': 'atomic',
  'x-kubernetes-validations': [{ rule: 'has(self.spec)' }],
};

// ---- a second path: protobufjs reflection from field numbers written out here ----

const INDEPENDENT_PROTO = `
syntax = "proto2";
package t;
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message RawExtension { optional bytes raw = 1; }
message WatchEvent { optional string type = 1; optional RawExtension object = 2; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message MicroTime { optional int64 seconds = 1; optional int32 nanos = 2; }
message Quantity { optional string string = 1; }
message FieldsV1 { optional bytes Raw = 1; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string selfLink = 4;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9; optional int64 deletionGracePeriodSeconds = 10; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message OwnerReference { optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional bool controller = 6; optional bool blockOwnerDeletion = 7; }
message ManagedFieldsEntry { optional string manager = 1; optional string operation = 2; optional string apiVersion = 3; optional Time time = 4; optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7; optional string subresource = 8; }
message Condition { optional string type = 1; optional string status = 2; optional int64 observedGeneration = 3; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }
message Status { optional ListMeta metadata = 1; optional string status = 2; optional string message = 3; optional string reason = 4; optional StatusDetails details = 5; optional int32 code = 6; }
message StatusDetails { optional string name = 1; optional string group = 2; optional string kind = 3; repeated StatusCause causes = 4; optional int32 retryAfterSeconds = 5; optional string uid = 6; }
message StatusCause { optional string reason = 1; optional string message = 2; optional string field = 3; }

message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
message NamespaceList { optional ListMeta metadata = 1; repeated Namespace items = 2; }
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; repeated NamespaceCondition conditions = 2; }
message NamespaceCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }
message Node { optional ObjectMeta metadata = 1; optional NodeSpec spec = 2; optional NodeStatus status = 3; }
message NodeSpec { optional string podCIDR = 1; optional string externalID = 2; optional string providerID = 3; optional bool unschedulable = 4; repeated Taint taints = 5; optional NodeConfigSource configSource = 6; repeated string podCIDRs = 7; }
message Taint { optional string key = 1; optional string value = 2; optional string effect = 3; optional Time timeAdded = 4; }
message NodeConfigSource { optional ConfigMapNodeConfigSource configMap = 2; }
message ConfigMapNodeConfigSource { optional string namespace = 1; optional string name = 2; optional string uid = 3; optional string resourceVersion = 4; optional string kubeletConfigKey = 5; }
message NodeStatus {
  map<string, Quantity> capacity = 1; map<string, Quantity> allocatable = 2; optional string phase = 3; repeated NodeCondition conditions = 4;
  repeated NodeAddress addresses = 5; optional NodeDaemonEndpoints daemonEndpoints = 6; optional NodeSystemInfo nodeInfo = 7;
  repeated ContainerImage images = 8; repeated string volumesInUse = 9; repeated AttachedVolume volumesAttached = 10;
  optional NodeConfigStatus config = 11; repeated NodeRuntimeHandler runtimeHandlers = 12; optional NodeFeatures features = 13;
  repeated string declaredFeatures = 14;
}
message NodeCondition { optional string type = 1; optional string status = 2; optional Time lastHeartbeatTime = 3; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6; }
message NodeAddress { optional string type = 1; optional string address = 2; }
message NodeDaemonEndpoints { optional DaemonEndpoint kubeletEndpoint = 1; }
message DaemonEndpoint { optional int32 Port = 1; }
message NodeSystemInfo {
  optional string machineID = 1; optional string systemUUID = 2; optional string bootID = 3; optional string kernelVersion = 4;
  optional string osImage = 5; optional string containerRuntimeVersion = 6; optional string kubeletVersion = 7;
  optional string kubeProxyVersion = 8; optional string operatingSystem = 9; optional string architecture = 10; optional NodeSwapStatus swap = 11;
}
message NodeSwapStatus { optional int64 capacity = 1; }
message ContainerImage { repeated string names = 1; optional int64 sizeBytes = 2; }
message AttachedVolume { optional string name = 1; optional string devicePath = 2; }
message NodeConfigStatus { optional NodeConfigSource assigned = 1; optional NodeConfigSource active = 2; optional NodeConfigSource lastKnownGood = 3; optional string error = 4; }
message NodeRuntimeHandler { optional string name = 1; optional NodeRuntimeHandlerFeatures features = 2; }
message NodeRuntimeHandlerFeatures { optional bool recursiveReadOnlyMounts = 1; optional bool userNamespaces = 2; }
message NodeFeatures { optional bool supplementalGroupsPolicy = 1; }
message ComponentStatus { optional ObjectMeta metadata = 1; repeated ComponentCondition conditions = 2; }
message ComponentCondition { optional string type = 1; optional string status = 2; optional string message = 3; optional string error = 4; }
message ObjectReference { optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional string resourceVersion = 6; optional string fieldPath = 7; }
message EventSource { optional string component = 1; optional string host = 2; }
message Toleration { optional string key = 1; optional string operator = 2; optional string value = 3; optional string effect = 4; optional int64 tolerationSeconds = 5; }

message Lease { optional ObjectMeta metadata = 1; optional LeaseSpec spec = 2; }
message PolicyRule { repeated string verbs = 1; repeated string apiGroups = 2; repeated string resources = 3; repeated string resourceNames = 4; repeated string nonResourceURLs = 5; }
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message LabelSelector { map<string, string> matchLabels = 1; repeated LabelSelectorRequirement matchExpressions = 2; }
message AggregationRule { repeated LabelSelector clusterRoleSelectors = 1; }
message Role { optional ObjectMeta metadata = 1; repeated PolicyRule rules = 2; }
message ClusterRole { optional ObjectMeta metadata = 1; repeated PolicyRule rules = 2; optional AggregationRule aggregationRule = 3; }
message Subject { optional string kind = 1; optional string apiGroup = 2; optional string name = 3; optional string namespace = 4; }
message RoleRef { optional string apiGroup = 1; optional string kind = 2; optional string name = 3; }
message RoleBinding { optional ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }
message ClusterRoleBinding { optional ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }
message LeaseList { optional ListMeta metadata = 1; repeated Lease items = 2; }
message LeaseSpec { optional string holderIdentity = 1; optional int32 leaseDurationSeconds = 2; optional MicroTime acquireTime = 3; optional MicroTime renewTime = 4; optional int32 leaseTransitions = 5; optional string strategy = 6; optional string preferredHolder = 7; }
message LeaseCandidate { optional ObjectMeta metadata = 1; optional LeaseCandidateSpec spec = 2; }
message LeaseCandidateSpec { optional string leaseName = 1; optional MicroTime pingTime = 2; optional MicroTime renewTime = 3; optional string binaryVersion = 4; optional string emulationVersion = 5; optional string strategy = 6; }
message Event {
  optional ObjectMeta metadata = 1; optional MicroTime eventTime = 2; optional EventSeries series = 3; optional string reportingController = 4;
  optional string reportingInstance = 5; optional string action = 6; optional string reason = 7; optional ObjectReference regarding = 8;
  optional ObjectReference related = 9; optional string note = 10; optional string type = 11; optional EventSource deprecatedSource = 12;
  optional Time deprecatedFirstTimestamp = 13; optional Time deprecatedLastTimestamp = 14; optional int32 deprecatedCount = 15;
}
message EventSeries { optional int32 count = 1; optional MicroTime lastObservedTime = 2; }
message CoreEvent {
  optional ObjectMeta metadata = 1; optional ObjectReference involvedObject = 2; optional string reason = 3; optional string message = 4;
  optional EventSource source = 5; optional Time firstTimestamp = 6; optional Time lastTimestamp = 7; optional int32 count = 8; optional string type = 9;
  optional MicroTime eventTime = 10; optional EventSeries series = 11; optional string action = 12; optional ObjectReference related = 13;
  optional string reportingComponent = 14; optional string reportingInstance = 15;
}
message IPAddress { optional ObjectMeta metadata = 1; optional IPAddressSpec spec = 2; }
message IPAddressSpec { optional ParentReference parentRef = 1; }
message ParentReference { optional string group = 1; optional string resource = 2; optional string namespace = 3; optional string name = 4; }
message ServiceCIDR { optional ObjectMeta metadata = 1; optional ServiceCIDRSpec spec = 2; optional ServiceCIDRStatus status = 3; }
message ServiceCIDRSpec { repeated string cidrs = 1; }
message ServiceCIDRStatus { repeated Condition conditions = 1; }
message RuntimeClass { optional ObjectMeta metadata = 1; optional string handler = 2; optional Overhead overhead = 3; optional Scheduling scheduling = 4; }
message Overhead { map<string, Quantity> podFixed = 1; }
message Scheduling { map<string, string> nodeSelector = 1; repeated Toleration tolerations = 2; }
message APIService { optional ObjectMeta metadata = 1; optional APIServiceSpec spec = 2; optional APIServiceStatus status = 3; }
message APIServiceSpec { optional ServiceReference service = 1; optional string group = 2; optional string version = 3; optional bool insecureSkipTLSVerify = 4; optional bytes caBundle = 5; optional int32 groupPriorityMinimum = 7; optional int32 versionPriority = 8; }
message ServiceReference { optional string namespace = 1; optional string name = 2; optional int32 port = 3; }
message APIServiceStatus { repeated APIServiceCondition conditions = 1; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ServiceAccount { optional ObjectMeta metadata = 1; repeated ObjectReference secrets = 2; repeated LocalObjectReference imagePullSecrets = 3; optional bool automountServiceAccountToken = 4; }
message LocalObjectReference { optional string name = 1; }
message APIServiceCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 3; optional string reason = 4; optional string message = 5; }
message SelfSubjectReview { optional ObjectMeta metadata = 1; optional SelfSubjectReviewStatus status = 2; }
message SelfSubjectReviewStatus { optional UserInfo userInfo = 1; }
message TokenReview { optional ObjectMeta metadata = 1; optional TokenReviewSpec spec = 2; optional TokenReviewStatus status = 3; }
message TokenReviewSpec { optional string token = 1; repeated string audiences = 2; }
message TokenReviewStatus { optional bool authenticated = 1; optional UserInfo user = 2; optional string error = 3; repeated string audiences = 4; }
message UserInfo { optional string username = 1; optional string uid = 2; repeated string groups = 3; map<string, ExtraValue> extra = 4; }
message ExtraValue { repeated string items = 1; }
message SubjectAccessReview { optional ObjectMeta metadata = 1; optional SubjectAccessReviewSpec spec = 2; optional SubjectAccessReviewStatus status = 3; }
message LocalSubjectAccessReview { optional ObjectMeta metadata = 1; optional SubjectAccessReviewSpec spec = 2; optional SubjectAccessReviewStatus status = 3; }
message SelfSubjectAccessReview { optional ObjectMeta metadata = 1; optional SelfSubjectAccessReviewSpec spec = 2; optional SubjectAccessReviewStatus status = 3; }
message SelfSubjectRulesReview { optional ObjectMeta metadata = 1; optional SelfSubjectRulesReviewSpec spec = 2; optional SubjectRulesReviewStatus status = 3; }
message SubjectAccessReviewSpec { optional ResourceAttributes resourceAttributes = 1; optional NonResourceAttributes nonResourceAttributes = 2; optional string user = 3; repeated string groups = 4; map<string, ExtraValue> extra = 5; optional string uid = 6; }
message SelfSubjectAccessReviewSpec { optional ResourceAttributes resourceAttributes = 1; optional NonResourceAttributes nonResourceAttributes = 2; }
message SelfSubjectRulesReviewSpec { optional string namespace = 1; }
message ResourceAttributes { optional string namespace = 1; optional string verb = 2; optional string group = 3; optional string version = 4; optional string resource = 5; optional string subresource = 6; optional string name = 7; optional SelectorAttributes fieldSelector = 8; optional SelectorAttributes labelSelector = 9; }
message SelectorAttributes { optional string rawSelector = 1; repeated LabelSelectorRequirement requirements = 2; }
message NonResourceAttributes { optional string path = 1; optional string verb = 2; }
message SubjectAccessReviewStatus { optional bool allowed = 1; optional string reason = 2; optional string evaluationError = 3; optional bool denied = 4; }
message SubjectRulesReviewStatus { repeated ResourceRule resourceRules = 1; repeated NonResourceRule nonResourceRules = 2; optional bool incomplete = 3; optional string evaluationError = 4; }
message ResourceRule { repeated string verbs = 1; repeated string apiGroups = 2; repeated string resources = 3; repeated string resourceNames = 4; }
message NonResourceRule { repeated string verbs = 1; repeated string nonResourceURLs = 2; }

message Scale { optional ObjectMeta metadata = 1; optional ScaleSpec spec = 2; optional ScaleStatus status = 3; }
message ScaleSpec { optional int32 replicas = 1; }
message ScaleStatus { optional int32 replicas = 1; optional string selector = 2; }
message CustomResourceDefinition { optional ObjectMeta metadata = 1; optional CRDSpec spec = 2; optional CRDStatus status = 3; }
message CustomResourceDefinitionList { optional ListMeta metadata = 1; repeated CustomResourceDefinition items = 2; }
message CRDSpec { optional string group = 1; optional CRDNames names = 3; optional string scope = 4; repeated CRDVersion versions = 7; optional CRDConversion conversion = 9; optional bool preserveUnknownFields = 10; }
message CRDNames { optional string plural = 1; optional string singular = 2; repeated string shortNames = 3; optional string kind = 4; optional string listKind = 5; repeated string categories = 6; }
message CRDVersion {
  optional string name = 1; optional bool served = 2; optional bool storage = 3; optional CRDValidation schema = 4; optional CRDSubresources subresources = 5;
  repeated CRDColumn additionalPrinterColumns = 6; optional bool deprecated = 7; optional string deprecationWarning = 8; repeated CRDSelectableField selectableFields = 9;
}
message CRDValidation { optional JSONSchemaProps openAPIV3Schema = 1; }
message CRDSubresources { optional CRDSubresourceStatus status = 1; optional CRDSubresourceScale scale = 2; }
message CRDSubresourceStatus {}
message CRDSubresourceScale { optional string specReplicasPath = 1; optional string statusReplicasPath = 2; optional string labelSelectorPath = 3; }
message CRDColumn { optional string name = 1; optional string type = 2; optional string format = 3; optional string description = 4; optional int32 priority = 5; optional string jsonPath = 6; }
message CRDSelectableField { optional string jsonPath = 1; }
message CRDConversion { optional string strategy = 1; optional CRDWebhookConversion webhook = 2; }
message CRDWebhookConversion { optional CRDWebhookClientConfig clientConfig = 2; repeated string conversionReviewVersions = 3; }
message CRDWebhookClientConfig { optional CRDServiceReference service = 1; optional bytes caBundle = 2; optional string url = 3; }
message CRDServiceReference { optional string namespace = 1; optional string name = 2; optional string path = 3; optional int32 port = 4; }
message CRDStatus { repeated CRDCondition conditions = 1; optional CRDNames acceptedNames = 2; repeated string storedVersions = 3; optional int64 observedGeneration = 4; }
message CRDCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 3; optional string reason = 4; optional string message = 5; optional int64 observedGeneration = 6; }
message JSON { optional bytes raw = 1; }
message JSONSchemaProps {
  optional string id = 1; optional string schema = 2; optional string ref = 3; optional string description = 4; optional string type = 5; optional string format = 6;
  optional string title = 7; optional JSON default = 8; optional double maximum = 9; optional bool exclusiveMaximum = 10; optional double minimum = 11;
  optional bool exclusiveMinimum = 12; optional int64 maxLength = 13; optional int64 minLength = 14; optional string pattern = 15; optional int64 maxItems = 16;
  optional int64 minItems = 17; optional bool uniqueItems = 18; optional double multipleOf = 19; repeated JSON enum = 20; optional int64 maxProperties = 21;
  optional int64 minProperties = 22; repeated string required = 23; optional JSONSchemaPropsOrArray items = 24; repeated JSONSchemaProps allOf = 25;
  repeated JSONSchemaProps oneOf = 26; repeated JSONSchemaProps anyOf = 27; optional JSONSchemaProps not = 28; map<string, JSONSchemaProps> properties = 29;
  optional JSONSchemaPropsOrBool additionalProperties = 30; map<string, JSONSchemaProps> patternProperties = 31;
  map<string, JSONSchemaPropsOrStringArray> dependencies = 32; optional JSONSchemaPropsOrBool additionalItems = 33; map<string, JSONSchemaProps> definitions = 34;
  optional ExternalDocumentation externalDocs = 35; optional JSON example = 36; optional bool nullable = 37; optional bool xKubernetesPreserveUnknownFields = 38;
  optional bool xKubernetesEmbeddedResource = 39; optional bool xKubernetesIntOrString = 40; repeated string xKubernetesListMapKeys = 41;
  optional string xKubernetesListType = 42; optional string xKubernetesMapType = 43; repeated ValidationRule xKubernetesValidations = 44;
}
message JSONSchemaPropsOrArray { optional JSONSchemaProps schema = 1; repeated JSONSchemaProps jSONSchemas = 2; }
message JSONSchemaPropsOrBool { optional bool allows = 1; optional JSONSchemaProps schema = 2; }
message JSONSchemaPropsOrStringArray { optional JSONSchemaProps schema = 1; repeated string property = 2; }
message ExternalDocumentation { optional string description = 1; optional string url = 2; }
message ValidationRule { optional string rule = 1; optional string message = 2; optional string messageExpression = 3; optional string reason = 4; optional string fieldPath = 5; optional bool optionalOldSelf = 6; }
`;

const independent = protobuf.parse(INDEPENDENT_PROTO, { keepCase: true }).root;
const T = (name: string): protobuf.Type => independent.lookupType(`t.${name}`);
/** The independent message of a kind: core v1 Event is CoreEvent here, apart from the events group's. */
const kindType = (apiVersion: unknown, kind: unknown): protobuf.Type => T(apiVersion === 'v1' && kind === 'Event' ? 'CoreEvent' : String(kind));

/** The JSON object as the independent types see it: times as { seconds, nanos }, quantities as { string }, … */
function protoShape(value: unknown, field: protobuf.Field | undefined, type: protobuf.Type | undefined): unknown {
  if (field instanceof protobuf.MapField) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json))
      out[k] =
        field.type === 'Quantity'
          ? { string: String(v) }
          : field.type === 'ExtraValue'
            ? { items: v }
            : field.resolvedType instanceof protobuf.Type
              ? (schemaWrapperShape(field.type, v) ?? protoShape(v, undefined, field.resolvedType))
              : v;
    return out;
  }
  const typeName = field?.type;
  const wrapped = typeName === undefined || (field?.repeated && Array.isArray(value)) ? undefined : schemaWrapperShape(typeName, value);
  if (wrapped !== undefined) return wrapped;
  // A list of JSON values (an enum) may hold lists itself.
  if (typeName === 'JSON' && Array.isArray(value)) return value.map((e) => schemaWrapperShape('JSON', e));
  if (typeName === 'Time' || typeName === 'MicroTime') {
    const text = value as string;
    const seconds = Math.floor(Date.parse(text) / 1000);
    const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
    return { seconds, nanos: typeName === 'MicroTime' ? Number(fraction.padEnd(6, '0').slice(0, 6)) * 1000 : 0 };
  }
  if (typeName === 'Quantity') return { string: String(value) };
  if (typeName === 'FieldsV1') return { Raw: Buffer.from(JSON.stringify(value)).toString('base64') };
  if (field?.type === 'bytes') return value;
  if (Array.isArray(value)) return value.map((e) => protoShape(e, field, type));
  const messageType = field ? (field.resolvedType as protobuf.Type | null) : type;
  if (messageType instanceof protobuf.Type && typeof value === 'object' && value !== null) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      const f = messageType.fields[k];
      assert.ok(f, `independent proto: ${messageType.name} has no field ${k}`);
      out[k] = protoShape(v, f, undefined);
    }
    return out;
  }
  return value;
}

/** JSONSchemaProps' JSON names that are no .proto identifiers. */
const SCHEMA_FIELD: Record<string, string> = {
  $schema: 'schema',
  $ref: 'ref',
  'x-kubernetes-preserve-unknown-fields': 'xKubernetesPreserveUnknownFields',
  'x-kubernetes-embedded-resource': 'xKubernetesEmbeddedResource',
  'x-kubernetes-int-or-string': 'xKubernetesIntOrString',
  'x-kubernetes-list-map-keys': 'xKubernetesListMapKeys',
  'x-kubernetes-list-type': 'xKubernetesListType',
  'x-kubernetes-map-type': 'xKubernetesMapType',
  'x-kubernetes-validations': 'xKubernetesValidations',
};

/** A JSONSchemaProps object as the independent types see it. */
function schemaShape(value: unknown): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    const name = SCHEMA_FIELD[k] ?? k;
    const f = T('JSONSchemaProps').fields[name];
    assert.ok(f, `independent proto: JSONSchemaProps has no field ${name}`);
    out[name] = protoShape(v, f, undefined);
  }
  return out;
}

/** The apiextensions JSON value and schema wrappers as messages; undefined for other types. */
function schemaWrapperShape(typeName: string, value: unknown): unknown {
  switch (typeName) {
    case 'JSON':
      return value === null ? {} : { raw: Buffer.from(JSON.stringify(value)).toString('base64') };
    case 'JSONSchemaProps':
      return schemaShape(value);
    case 'JSONSchemaPropsOrArray':
      return Array.isArray(value) ? { jSONSchemas: value.map(schemaShape) } : { schema: schemaShape(value) };
    case 'JSONSchemaPropsOrBool':
      return typeof value === 'boolean' ? { allows: value } : { allows: true, schema: schemaShape(value) };
    case 'JSONSchemaPropsOrStringArray':
      return Array.isArray(value) ? { property: value } : { schema: schemaShape(value) };
    default:
      return undefined;
  }
}

/** Drops zero values, empty strings, lists and objects everywhere, so presence rules do not matter. */
function stripZero(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripZero);
  if (typeof value === 'object' && value !== null) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      const s = stripZero(v);
      if (s === '' || s === 0 || s === false || s === undefined || (typeof s === 'object' && s !== null && !Array.isArray(s) && Object.keys(s).length === 0)) continue;
      if (Array.isArray(s) && s.length === 0) continue;
      out[k] = s;
    }
    return out;
  }
  return value;
}

/** Decodes a body with the independent types: envelope, then the kind's message. */
function independentDecode(body: Uint8Array): { typeMeta: Json; object: Json; envelope: Json } {
  const env = T('Unknown').toObject(T('Unknown').decode(body.subarray(4)), { longs: Number, bytes: Buffer as never, defaults: false }) as Json;
  const typeMeta = env.typeMeta as Json;
  const type = kindType(typeMeta.apiVersion, typeMeta.kind);
  const object = type.toObject(type.decode(env.raw as Uint8Array), { longs: Number, bytes: String, defaults: false }) as Json;
  return { typeMeta, object, envelope: env };
}

function withoutType(o: Json): Json {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

// ---- schema coverage ----

/** Every property path of a schema (`spec.taints[].key`, `status.capacity{}`), down to leaves. */
function schemaPaths(schema: Schema, at = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields']) return [at];
  const out: string[] = [];
  if (schema.properties) for (const [k, s] of Object.entries(schema.properties)) out.push(...schemaPaths(s, at ? `${at}.${k}` : k));
  else if (schema.items) out.push(...schemaPaths(schema.items, `${at}[]`));
  else if (schema.additionalProperties) out.push(...schemaPaths(schema.additionalProperties, `${at}{}`));
  else out.push(at);
  return out;
}

/** Whether a value has something at a schema path (any element of a list, any value of a map). */
function hasPath(value: unknown, path: string[]): boolean {
  if (path.length === 0) return value !== undefined;
  const [head, ...rest] = path;
  if (head === '[]') return Array.isArray(value) && value.some((e) => hasPath(e, rest));
  if (head === '{}') return typeof value === 'object' && value !== null && Object.values(value).some((e) => hasPath(e, rest));
  return typeof value === 'object' && value !== null && hasPath((value as Json)[head!], rest);
}

const splitPath = (p: string): string[] => p.split(/\.|(?=\[\])|(?=\{\})/).filter(Boolean);

const profiles: NamingProfileName[] = ['orch', 'kubernetes'];
const allGatesOn = parseFeatureGates('AllAlpha=true,AllBeta=true');

// ---- tests ----

describe('protobuf codec: every served kind', () => {
  for (const naming of [orch, kube]) {
    for (const obj of examples(naming)) {
      const label = `${naming.profile}: ${obj.apiVersion} ${obj.kind}`;

      it(`${label}: round-trips to the identical JSON`, () => {
        const body = encodeObject(obj);
        assert.deepEqual(hex(body.subarray(0, 4)), hex(PROTOBUF_MAGIC));
        const back = decodeObject(body, { apiVersion: obj.apiVersion!, kind: obj.kind! });
        assert.deepStrictEqual(back, obj);
        // And again: decoding yields exactly what encodes to the same bytes.
        assert.equal(hex(encodeObject(back)), hex(body));
      });

      it(`${label}: decodes with independently written field numbers`, () => {
        const { typeMeta, object, envelope } = independentDecode(encodeObject(obj));
        assert.deepStrictEqual(typeMeta, { apiVersion: obj.apiVersion, kind: obj.kind });
        assert.equal(envelope.contentEncoding, '');
        assert.equal(envelope.contentType, '');
        const expected = protoShape(withoutType(obj), undefined, kindType(obj.apiVersion, obj.kind));
        assert.deepStrictEqual(stripZero(object), stripZero(expected));
      });
    }
  }

  for (const profile of profiles) {
    const naming = namingProfile(profile);
    // A kind's other spelling (unlisted) has the same messages.
    const defs = builtinKinds(naming, allGatesOn, { componentHealth: async () => [] }).filter((d) => !d.unlisted);
    const byKind = new Map(examples(naming).map((o) => [`${o.apiVersion} ${o.kind}`, o]));

    it(`${profile}: the examples cover every field of every kind's schema`, () => {
      assert.equal(defs.length, byKind.size, 'one example per served kind');
      const all = [...byKind.values()];
      for (const def of defs) {
        const example = byKind.get(`${def.group ? `${def.group}/${def.version}` : def.version} ${def.kind}`);
        assert.ok(example, `an example for ${def.kind}`);
        assert.equal(example.apiVersion, def.group ? `${def.group}/${def.version}` : def.version);
        // Object metadata is shared: namespace, say, is covered by the namespaced kinds.
        const missing = schemaPaths(def.schema).filter((p) => !(p.startsWith('metadata.') ? all : [example]).some((o) => hasPath(o, splitPath(p))));
        assert.deepStrictEqual(missing, [], `${def.kind}: schema fields the example lacks`);
      }
    });

    it(`${profile}: every kind and its list (when it lists) support protobuf`, () => {
      for (const def of defs) {
        const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
        assert.ok(supportsProtobuf(apiVersion, def.kind), `${apiVersion} ${def.kind}`);
        if (def.verbs.includes('list')) assert.ok(supportsProtobuf(apiVersion, `${def.kind}List`), `${apiVersion} ${def.kind}List`);
      }
    });
  }
});

describe('protobuf codec: supportsProtobuf', () => {
  it('accepts Status and the built-in groups under either naming profile only', () => {
    assert.ok(supportsProtobuf('v1', 'Status'));
    assert.ok(supportsProtobuf(gv(orch, 'coordination', 'v1'), 'Lease'));
    assert.ok(supportsProtobuf(gv(kube, 'coordination', 'v1'), 'Lease'));
    // Another group that merely starts with a built-in segment (a custom resource) has none.
    assert.ok(!supportsProtobuf('coordination.example.com/v1', 'Lease'));
    assert.ok(!supportsProtobuf('coordination/v1', 'Lease'));
    // Wrong version or kind.
    assert.ok(!supportsProtobuf(gv(orch, 'coordination', 'v1beta1'), 'Lease'));
    assert.ok(!supportsProtobuf(gv(orch, 'coordination', 'v1'), 'Namespace'));
    assert.ok(!supportsProtobuf('v1', 'Pod'));
    // Table is JSON only; PartialObjectMetadata(List) has a protobuf form in meta/v1 only.
    assert.ok(!supportsProtobuf(`${orch.metaGroup}/v1`, 'Table'));
    assert.ok(supportsProtobuf(`${orch.metaGroup}/v1`, 'PartialObjectMetadata'));
    assert.ok(supportsProtobuf(`${kube.metaGroup}/v1`, 'PartialObjectMetadataList'));
    assert.ok(!supportsProtobuf(`${orch.metaGroup}/v1beta1`, 'PartialObjectMetadataList'));
    // The Scale of a scale subresource is autoscaling/v1 in every profile; a group named so under a domain is another.
    assert.ok(supportsProtobuf('autoscaling/v1', 'Scale'));
    assert.ok(!supportsProtobuf('autoscaling.k8s.io/v1', 'Scale'));
    assert.ok(!supportsProtobuf('autoscaling/v2', 'Scale'));
  });

  it('a recursive message nested past 1000 levels is refused, as JSON nested so deep is', () => {
    const nested = (levels: number): Json => {
      let schema: Json = { type: 'string' };
      for (let i = 0; i < levels; i++) schema = { not: schema };
      return { apiVersion: gv(kube, 'apiextensions', 'v1'), kind: 'CustomResourceDefinition', metadata: { name: 'deep' }, spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: schema } }] } };
    };
    // The CRD, its spec, a version and its validation are four levels before the schema.
    assert.doesNotThrow(() => decodeObject(encodeObject(nested(990) as KObject)));
    assert.throws(() => decodeObject(encodeObject(nested(1000) as KObject)), (e: Error) => e instanceof DecodeError && /nested deeper than 1000/.test(e.message));
  });

  it('autoscaling/v1 Scale round-trips and decodes with independently written field numbers', () => {
    for (const obj of [
      { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: objectMeta('web', 'team'), spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=web' } },
      // No desired replicas (omitted as zero); observed replicas are kept at zero.
      { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'idle', namespace: 'team', creationTimestamp: TIME }, spec: {}, status: { replicas: 0 } },
    ] as KObject[]) {
      const body = encodeObject(obj);
      assert.deepStrictEqual(decodeObject(body, { apiVersion: 'autoscaling/v1', kind: 'Scale' }), obj);
      const { typeMeta, object } = independentDecode(body);
      assert.deepStrictEqual(typeMeta, { apiVersion: 'autoscaling/v1', kind: 'Scale' });
      assert.deepStrictEqual(stripZero(object), stripZero(protoShape(withoutType(obj), undefined, T('Scale'))));
    }
  });
});

describe('protobuf codec: byte-exact encodings', () => {
  // Published in Kubernetes' protobuf serializer tests (a List with list metadata only, and with
  // one object named pod in namespace default). Our list and object metadata must be these bytes.
  const PUBLISHED_EMPTY_LIST = Buffer.from('azhzAAoKCgJ2MRIETGlzdBIMCgoKABIEMjM0NRoAGgAiAA==', 'base64');
  const PUBLISHED_ONE_ITEM = Buffer.from(
    'azhzAAoKCgJ2MRIETGlzdBJUCg8KABIEMjM0NRoDYWJjIAESQQoaCgNwb2QSABoHZGVmYXVsdCIAKgAyADgAQgASFxoAQgBKAFIAWABgAGgAggEAigEAmgEAGgoKABoAIgAqADIAGgAiAA==',
    'base64',
  );

  it('a list with metadata only: the published bytes, with our typeMeta', () => {
    const body = encodeList({ apiVersion: 'v1', kind: 'NamespaceList', metadata: { resourceVersion: '2345' }, items: [] });
    // magic | typeMeta { "v1", "NamespaceList" } | raw { ListMeta { "", "2345", "" } } | "" | ""
    assert.equal(hex(body), '6b387300' + '0a13 0a027631 120d4e616d6573706163654c697374'.replace(/ /g, '') + '120c 0a0a 0a00 120432333435 1a00'.replace(/ /g, '') + '1a002200');
    // The published body differs in its typeMeta only.
    assert.equal(hex(body.subarray(4 + 2 + 0x13)), hex(PUBLISHED_EMPTY_LIST.subarray(4 + 2 + 0x0a)));
  });

  it('list metadata with continue and a count, and object metadata, as published', () => {
    const body = encodeList({
      apiVersion: 'v1',
      kind: 'NamespaceList',
      metadata: { resourceVersion: '2345', continue: 'abc', remainingItemCount: 1 },
      items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pod', namespace: 'default' } }],
    });
    const listMeta = fromHex('0a0f 0a00 120432333435 1a03616263 2001');
    // name, generateName "", namespace, selfLink "", uid "", resourceVersion "", generation 0, creationTimestamp (zero: empty)
    const objectMeta = fromHex('0a1a 0a03706f64 1200 1a0764656661756c74 2200 2a00 3200 3800 4200');
    assert.ok(PUBLISHED_ONE_ITEM.includes(listMeta) && PUBLISHED_ONE_ITEM.includes(objectMeta));
    // Namespace { metadata, spec {} (value struct), status { phase "" } }
    const item = Buffer.concat([fromHex('1222'), objectMeta, fromHex('1200 1a02 0a00')]);
    assert.equal(hex(body), hex(Buffer.concat([fromHex('6b387300 0a13 0a027631 120d'), Buffer.from('NamespaceList'), fromHex('1235'), listMeta, item, fromHex('1a00 2200')])));
  });

  it('a tiny Namespace', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
    const expected =
      '6b387300' +
      '0a0f 0a027631 12094e616d657370616365' + // typeMeta { apiVersion "v1", kind "Namespace" }
      '122d' + // raw, 45 bytes:
      '0a13 0a036e7331 1200 1a00 2200 2a00 3200 3800 4200' + //   metadata { name "ns1", zero value fields }
      '120c 0a0a6b756265726e65746573' + //   spec { finalizers ["kubernetes"] }
      '1a08 0a06416374697665' + //   status { phase "Active" }
      '1a00 2200'; // contentEncoding "", contentType ""
    assert.equal(hex(encodeObject(ns)), expected.replace(/ /g, ''));
  });

  it('a Lease: pointers only when set, MicroTime with microseconds, Time with nanos 0', () => {
    const apiVersion = gv(orch, 'coordination', 'v1');
    const lease = { apiVersion, kind: 'Lease', metadata: { name: 'l', namespace: 'n', creationTimestamp: '2026-01-02T03:04:05Z' }, spec: { holderIdentity: 'a', renewTime: '2026-01-02T03:04:05.123456Z', leaseTransitions: 0 } };
    // 2026-01-02T03:04:05Z is 1767323045 s = varint a5 eb dc ca 06; 123456 µs = 123456000 ns = varint 80 94 ef 3a.
    const raw =
      '0a1a 0a016c 1200 1a016e 2200 2a00 3200 3800 4208 08a5ebdcca06 1000' + // metadata, creationTimestamp { seconds, nanos 0 }
      '1212 0a0161 220b 08a5ebdcca06 108094ef3a 2800'; // spec { holderIdentity "a", renewTime, leaseTransitions 0 }
    const typeMeta = Buffer.concat([fromHex('0a'), Buffer.from([apiVersion.length]), Buffer.from(apiVersion), fromHex('1205'), Buffer.from('Lease')]);
    const expected = Buffer.concat([PROTOBUF_MAGIC, fromHex('0a'), Buffer.from([typeMeta.length]), typeMeta, fromHex('1230'), fromHex(raw), fromHex('1a002200')]);
    assert.equal(hex(encodeObject(lease)), hex(expected));
  });

  it('a Status', () => {
    const body = encodeStatus({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'm', reason: 'NotFound', code: 404 });
    const expected =
      '6b387300 0a0c 0a027631 1206537461747573' +
      '1221 0a06 0a00 1200 1a00' + // metadata: ListMeta value struct
      '12074661696c757265 1a016d 22084e6f74466f756e64' + // status, message, reason
      '309403' + // code 404 (details: a pointer, absent)
      '1a00 2200';
    assert.equal(hex(body), expected.replace(/ /g, ''));
  });

  it('a watch event: WatchEvent { type, RawExtension { raw: the whole body } }, no magic in front', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } } as KObject;
    const body = encodeObject(ns);
    const payload = encodeWatchEvent('ADDED', ns);
    assert.equal(hex(payload), hex(Buffer.concat([fromHex('0a05'), Buffer.from('ADDED'), fromHex('12'), Buffer.from([body.length + 2]), fromHex('0a'), Buffer.from([body.length]), body])));
  });

  it('field sets: exactly the JSON text JSON.stringify gives, escapes included', () => {
    const fieldsV1 = { 'f:metadata': { 'f:labels': { 'f:a\\b': {}, 'f:ünï': {}, 'f:tab\t': {}, '.': {} } }, 'k:{"name":"x","port":80}': { '.': {} }, '1': {} };
    const meta = { name: 'x', managedFields: [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1 }] };
    const body = encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: meta });
    const { object } = independentDecode(body);
    const raw = ((object.metadata as Json).managedFields as Json[])[0]!.fieldsV1 as Json;
    assert.equal(Buffer.from(raw.Raw as string, 'base64').toString('utf8'), JSON.stringify(fieldsV1));
    assert.deepStrictEqual(decodeObject(body).metadata, meta);
  });

  it('integers: negative int32 sign-extended to ten bytes, int64 up to 2^53, as protobufjs writes them', () => {
    for (const v of [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER, -1, -(2 ** 31), -(2 ** 40), -62135596800]) {
      const ours = new WireWriter();
      ours.int64(v);
      assert.equal(hex(ours.finish()), hex(protobuf.Writer.create().int64(v).finish()), `int64 ${v}`);
      if (v >= -(2 ** 31) && v < 2 ** 31) {
        const ours32 = new WireWriter();
        ours32.int32(v);
        assert.equal(hex(ours32.finish()), hex(protobuf.Writer.create().int32(v).finish()), `int32 ${v}`);
      }
    }
    const lease = { apiVersion: gv(orch, 'coordination', 'v1'), kind: 'Lease', metadata: { name: 'l' }, spec: { leaseDurationSeconds: -1 } } as KObject;
    const body = encodeObject(lease);
    assert.ok(body.includes(fromHex('120b 10ffffffffffffffffff01')), 'spec { leaseDurationSeconds -1 }');
    assert.deepStrictEqual(decodeObject(body), lease);
  });

  it('map entries in Go string order (UTF-8 bytes), keys and values always written', () => {
    const labels = { zeta: '1', alpha: '', Beta: '3', '日本': '4', '\uffff': '5', '😀': '6' };
    const body = encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels } });
    const { object } = independentDecode(body);
    assert.deepStrictEqual(Object.keys((object.metadata as Json).labels as Json), ['Beta', 'alpha', 'zeta', '日本', '\uffff', '😀']);
    // The empty value is still an entry: { key "alpha", value "" }.
    assert.ok(body.includes(fromHex('5a09 0a05616c706861 1200')));
    // A `__proto__` key stays an ordinary key, as in JSON.parse.
    const odd = JSON.parse('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x","labels":{"__proto__":"p","a":"b"}}}') as KObject;
    const back = decodeObject(encodeObject(odd));
    assert.deepStrictEqual(Object.keys(back.metadata.labels!), ['__proto__', 'a']);
    assert.deepStrictEqual(back.metadata, odd.metadata);
  });
});

describe('protobuf codec: lists, Status and watch events', () => {
  /** The review kinds have no lists (they are answered, never stored or listed). */
  const listed = (o: KObject) => !o.kind!.endsWith('Review');

  it('a list of every kind round-trips through decodeObject', () => {
    for (const obj of examples(orch).filter(listed)) {
      const list = { apiVersion: obj.apiVersion!, kind: `${obj.kind}List`, metadata: { resourceVersion: '99', continue: 'token', remainingItemCount: 2 }, items: [obj, obj] };
      const back = decodeObject(encodeList(list));
      assert.deepStrictEqual(back, { apiVersion: list.apiVersion, kind: list.kind, metadata: list.metadata, items: [obj, obj] });
    }
  });

  it('pre-encoded items frame into the same bytes as a fresh encode', () => {
    for (const obj of examples(orch)) {
      const item = encodeItem(obj);
      assert.equal(hex(encodeObjectFromItem(obj.apiVersion!, obj.kind!, item)), hex(encodeObject(obj)));
      assert.equal(hex(encodeWatchEventFromItem('MODIFIED', obj.apiVersion!, obj.kind!, item)), hex(encodeWatchEvent('MODIFIED', obj)));
      if (!listed(obj)) continue;
      const list = { apiVersion: obj.apiVersion!, kind: `${obj.kind}List`, metadata: { resourceVersion: '7' }, items: [obj, obj, obj] };
      assert.equal(hex(encodeListFromItems(list, [item, item, item])), hex(encodeList(list)));
    }
  });

  it('a Status with details and causes round-trips', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Lease.coordination "x" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      reason: 'Invalid',
      details: { name: 'x', group: 'coordination', kind: 'Lease', uid: 'u-1', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0', field: 'spec.leaseDurationSeconds' }, { message: 'only a message' }], retryAfterSeconds: 3 },
      code: 422,
    };
    const body = encodeStatus(status);
    assert.deepStrictEqual(decodeObject(body, { apiVersion: 'v1', kind: 'Status' }), status);
    const { object } = independentDecode(body);
    assert.deepStrictEqual(stripZero(object), stripZero(protoShape(withoutType(status), undefined, T('Status'))));
  });

  it('watch events of objects, bookmarks and errors', () => {
    const lease = examples(orch).find((o) => o.kind === 'Lease')!;
    assert.deepStrictEqual(decodeWatchEvent(encodeWatchEvent('ADDED', lease)), { type: 'ADDED', object: lease });
    // A bookmark carries only the resourceVersion; value structs decode as Go writes them.
    const bookmark = { apiVersion: lease.apiVersion, kind: 'Lease', metadata: { resourceVersion: '42' } };
    assert.deepStrictEqual(decodeWatchEvent(encodeWatchEvent('BOOKMARK', bookmark)), { type: 'BOOKMARK', object: { ...bookmark, spec: {} } });
    const expired = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 };
    assert.deepStrictEqual(decodeWatchEvent(encodeWatchEvent('ERROR', expired)), { type: 'ERROR', object: expired });
    // The independent types read the frame too.
    const event = T('WatchEvent').decode(encodeWatchEvent('DELETED', lease)) as unknown as { type: string; object: { raw: Uint8Array } };
    assert.equal(event.type, 'DELETED');
    assert.equal(hex(event.object.raw), hex(encodeObject(lease)));
  });
});

describe('protobuf codec: decoding rules', () => {
  const leaseVersion = gv(orch, 'coordination', 'v1');

  it('value structs are always present; pointers keep their zero values', () => {
    const sparse = { apiVersion: leaseVersion, kind: 'Lease', metadata: { name: 'a' } } as KObject;
    assert.deepStrictEqual(decodeObject(encodeObject(sparse)), { ...sparse, spec: {} });
    const zeros = { apiVersion: leaseVersion, kind: 'Lease', metadata: { name: 'a' }, spec: { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 } } as KObject;
    assert.deepStrictEqual(decodeObject(encodeObject(zeros)), zeros);
  });

  it('zero value fields: dropped under omitempty, kept where the JSON name has none', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', generation: 0, namespace: '' }, status: { phase: '', conditions: [{ type: 'T', status: 'True', reason: '', message: '' }] } } as KObject;
    // NamespaceCondition's reason and message have omitempty.
    assert.deepStrictEqual(decodeObject(encodeObject(ns)), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, spec: {}, status: { conditions: [{ type: 'T', status: 'True' }] } });
    // metav1.Condition's reason and message have none: they stay, even empty.
    const cidr = { apiVersion: gv(orch, 'networking', 'v1'), kind: 'ServiceCIDR', metadata: { name: 'c' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: TIME, reason: '', message: '' }] } } as KObject;
    assert.deepStrictEqual(decodeObject(encodeObject(cidr)), cidr);
  });

  it('a node without status decodes with the zero status Go writes', () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } } as KObject;
    const nodeInfo = Object.fromEntries(
      ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'].map((k) => [k, '']),
    );
    assert.deepStrictEqual(decodeObject(encodeObject(node)), { ...node, spec: {}, status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo } });
  });

  it('zero times are dropped (Go writes them as null); an event keeps its value structs', () => {
    const event = { apiVersion: gv(orch, 'events', 'v1'), kind: 'Event', metadata: { name: 'e', namespace: 'default' }, reason: 'R' } as KObject;
    assert.deepStrictEqual(decodeObject(encodeObject(event)), { ...event, regarding: {}, deprecatedSource: {} });
    const zeroTime = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', creationTimestamp: '0001-01-01T00:00:00Z' } } as KObject;
    const body = encodeObject(zeroTime);
    assert.ok(body.includes(fromHex('4200')), 'Go zero time: an empty message');
    assert.deepStrictEqual(decodeObject(body).metadata, { name: 'a' });
  });

  it('times: offsets to UTC, Time to whole seconds, MicroTime to microseconds', () => {
    const lease = {
      apiVersion: leaseVersion,
      kind: 'Lease',
      metadata: { name: 'a', creationTimestamp: '2026-01-02T05:04:05.9+02:00' },
      spec: { renewTime: '2026-01-02T03:04:05.123456789Z', acquireTime: '1969-12-31T23:59:59.5Z' },
    } as KObject;
    const back = decodeObject(encodeObject(lease));
    assert.equal(back.metadata.creationTimestamp, '2026-01-02T03:04:05Z');
    assert.deepStrictEqual(back.spec, { acquireTime: '1969-12-31T23:59:59.500000Z', renewTime: '2026-01-02T03:04:05.123456Z' });
    assert.throws(() => encodeObject({ ...lease, metadata: { name: 'a', creationTimestamp: 'yesterday' } }), /wire\.apimachinery\.ObjectMeta\.creationTimestamp: not an RFC 3339 time/);
  });

  it('quantities decode as strings, bytes as base64', () => {
    const rc = { apiVersion: gv(orch, 'node', 'v1'), kind: 'RuntimeClass', metadata: { name: 'r' }, handler: 'h', overhead: { podFixed: { cpu: 2, memory: '1Gi' } } } as KObject;
    assert.deepStrictEqual(decodeObject(encodeObject(rc)).overhead, { podFixed: { cpu: '2', memory: '1Gi' } });
    const api = { apiVersion: gv(orch, 'apiregistration', 'v1'), kind: 'APIService', metadata: { name: 'v1.x' }, spec: { caBundle: 'AAEC/w==', groupPriorityMinimum: 0, versionPriority: 0 } } as KObject;
    const back = decodeObject(encodeObject(api));
    assert.deepStrictEqual(back.spec, { caBundle: 'AAEC/w==', groupPriorityMinimum: 0, versionPriority: 0 });
    assert.deepStrictEqual(back.status, {});
  });

  it('unknown fields are skipped, packed varints accepted, the last of a repeated scalar wins', () => {
    const body = encodeObject({ apiVersion: leaseVersion, kind: 'Lease', metadata: { name: 'a' }, spec: { holderIdentity: 'x' } } as KObject);
    const env = T('Unknown').decode(body.subarray(4)) as unknown as { raw: Uint8Array; typeMeta: Json };
    // Append to the Lease: an unknown field 99 (varint) and another spec { holderIdentity "y" }.
    const raw = Buffer.concat([env.raw, fromHex('98 06 05'), fromHex('12 03 0a0179')]);
    const rebuilt = T('Unknown').encode({ typeMeta: env.typeMeta, raw }).finish();
    const back = decodeObject(Buffer.concat([PROTOBUF_MAGIC, rebuilt]));
    assert.equal((back.spec as Json).holderIdentity, 'y');
  });
});

describe('protobuf codec: errors', () => {
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } } as KObject;

  it('rejects a wrong or missing magic prefix', () => {
    const body = encodeObject(ns);
    assert.throws(() => decodeObject(Buffer.concat([fromHex('6b387301'), body.subarray(4)])), (e: unknown) => e instanceof DecodeError && /magic prefix/.test(e.message));
    assert.throws(() => decodeObject(body.subarray(4)), DecodeError);
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Namespace"}')), /magic prefix/);
    assert.throws(() => decodeObject(new Uint8Array(0)), /magic prefix/);
  });

  it('rejects another kind or apiVersion than expected', () => {
    const body = encodeObject(ns);
    assert.throws(() => decodeObject(body, { apiVersion: 'v1', kind: 'Node' }), /expected v1 Node, the body holds v1 Namespace/);
    const lease = gv(orch, 'coordination', 'v1');
    assert.throws(() => decodeObject(body, { apiVersion: lease, kind: 'Namespace' }), (e: unknown) => e instanceof DecodeError && e.message.includes(`expected ${lease} Namespace, the body holds v1 Namespace`));
    assert.deepStrictEqual(decodeObject(body, { apiVersion: 'v1', kind: 'Namespace' }).metadata, { name: 'a' });
  });

  it('takes an empty envelope type from the expected one', () => {
    const raw = T('Unknown').decode(encodeObject(ns).subarray(4)) as unknown as { raw: Uint8Array };
    const anonymous = Buffer.concat([PROTOBUF_MAGIC, T('Unknown').encode({ typeMeta: {}, raw: raw.raw }).finish()]);
    assert.deepStrictEqual(decodeObject(anonymous, { apiVersion: 'v1', kind: 'Namespace' }), { ...ns, spec: {}, status: {} });
    assert.throws(() => decodeObject(anonymous), /names no kind/);
  });

  it('rejects encoded payloads, unknown kinds and truncated data', () => {
    const raw = T('Unknown').decode(encodeObject(ns).subarray(4)) as unknown as { raw: Uint8Array };
    const gzip = Buffer.concat([PROTOBUF_MAGIC, T('Unknown').encode({ typeMeta: { apiVersion: 'v1', kind: 'Namespace' }, raw: raw.raw, contentEncoding: 'gzip' }).finish()]);
    assert.throws(() => decodeObject(gzip), /content encoding "gzip"/);
    const pod = Buffer.concat([PROTOBUF_MAGIC, T('Unknown').encode({ typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw: raw.raw }).finish()]);
    assert.throws(() => decodeObject(pod), /no protobuf form for v1 Pod/);
    const full = encodeObject(examples(orch)[1]!);
    for (const cut of [5, 20, full.length - 30, full.length - 5]) assert.throws(() => decodeObject(full.subarray(0, cut)), DecodeError, `cut at ${cut}`);
  });

  it('refuses to encode kinds without a protobuf form and values of the wrong type', () => {
    assert.throws(() => encodeObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: {} }), /no protobuf form for example\.com\/v1 Widget/);
    assert.throws(() => encodeObject({ metadata: {} } as KObject), /needs apiVersion and kind/);
    assert.throws(() => encodeObject({ ...ns, spec: { finalizers: 'kubernetes' } }), /wire\.core\.NamespaceSpec\.finalizers: expected a list/);
    assert.throws(() => encodeObject({ ...ns, metadata: { name: 'a', generation: 1.5 } }), /ObjectMeta\.generation: expected an integer/);
    assert.throws(() => encodeObject({ ...ns, metadata: { name: 'a', labels: { a: 1 } as unknown as Record<string, string> } }), /ObjectMeta\.labels: "a": expected a string/);
  });
});
