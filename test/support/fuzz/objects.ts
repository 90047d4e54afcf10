// Paths, valid objects and their encodings, for the generators.

import { Encoder } from 'cbor-x';
import { stringify as toYaml } from 'yaml';
import { encodeObject } from '../../../src/wire/protobuf/index.ts';
import type { KObject } from '../../../src/machinery/meta.ts';
import { EVENTS_API, LEASE_API, RC_API, SCRATCH, lease } from './harness.ts';
import { T } from './case.ts';

export { lease, LEASE_API, SCRATCH };

export const leasesIn = (ns: string) => `/apis/${LEASE_API}/namespaces/${ns}/leases`;
export const LEASES_A = leasesIn(T.NS_A);
export const LEASES_B = leasesIn(T.NS_B);
export const LEASES_SCRATCH = leasesIn(SCRATCH);
/** A throw-away lease in the scratch namespace (created by a setup step where it must exist). */
export const SCRATCH_ITEM = `${LEASES_SCRATCH}/${T.NAME}`;

/** A sentinel, with a body that would change it if the request carrying it were accepted. */
export interface SentinelTarget {
  path: string;
  collection: string;
  /** A full object for PUT: the sentinel with a label changed. */
  replacement: Record<string, unknown>;
}

const withLabel = (o: Record<string, unknown>) => ({ ...o, metadata: { ...(o.metadata as object), labels: { changed: 'yes' } } });

export const SENTINELS: SentinelTarget[] = [
  { path: `${LEASES_A}/s1`, collection: LEASES_A, replacement: withLabel(lease('s1')) },
  { path: `${LEASES_A}/s2`, collection: LEASES_A, replacement: withLabel(lease('s2')) },
  { path: `${LEASES_A}/s3`, collection: LEASES_A, replacement: withLabel(lease('s3')) },
  { path: `${LEASES_B}/s1`, collection: LEASES_B, replacement: withLabel(lease('s1')) },
  { path: `${LEASES_B}/s2`, collection: LEASES_B, replacement: withLabel(lease('s2')) },
  {
    path: `/api/v1/namespaces/${T.NS_A}/events/ev1`,
    collection: `/api/v1/namespaces/${T.NS_A}/events`,
    replacement: withLabel({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev1' }, involvedObject: { kind: 'Lease', namespace: T.NS_A, name: 's1' }, reason: 'Changed', message: 'x', type: 'Normal' }),
  },
  {
    path: `/apis/${EVENTS_API}/namespaces/${T.NS_A}/events/ev2`,
    collection: `/apis/${EVENTS_API}/namespaces/${T.NS_A}/events`,
    replacement: withLabel({ apiVersion: EVENTS_API, kind: 'Event', metadata: { name: 'ev2' }, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'example.com/fuzz', reportingInstance: 'fuzz-1', action: 'Test', reason: 'Changed', note: 'x', type: 'Normal' }),
  },
  { path: `/api/v1/namespaces/${T.NS_A}`, collection: '/api/v1/namespaces', replacement: withLabel({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: T.NS_A } }) },
  { path: `/api/v1/nodes/${T.NODE}`, collection: '/api/v1/nodes', replacement: withLabel({ apiVersion: 'v1', kind: 'Node', metadata: { name: T.NODE } }) },
  { path: `/apis/${RC_API}/runtimeclasses/${T.RC}`, collection: `/apis/${RC_API}/runtimeclasses`, replacement: withLabel({ apiVersion: RC_API, kind: 'RuntimeClass', metadata: { name: T.RC }, handler: 'runc' }) },
];
/** The sentinel leases only (the kind most generators write). */
export const SENTINEL_LEASES = SENTINELS.slice(0, 5);

// ---------------------------------------------------------------------------------------------
// Media types and encodings.

export const CT = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: 'application/vnd.orch.protobuf',
  k8sProtobuf: 'application/vnd.kubernetes.protobuf',
  cbor: 'application/cbor',
  merge: 'application/merge-patch+json',
  jsonPatch: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
  applyCbor: 'application/apply-patch+cbor',
} as const;

export type Format = 'json' | 'yaml' | 'protobuf' | 'k8sProtobuf' | 'cbor';
export const FORMATS: Format[] = ['json', 'yaml', 'protobuf', 'k8sProtobuf', 'cbor'];

const cbor = new Encoder({ mapsAsObjects: true, useRecords: false, tagUint8Array: false });

/** A CBOR item with the self-described tag, as Kubernetes writes it. */
export const toCbor = (v: unknown): Buffer => Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), cbor.encode(v)]);

/** An object in a format; protobuf only for what its schema can say (unknown fields are dropped there). */
export function encode(format: Format, v: unknown): Buffer | string {
  switch (format) {
    case 'json':
      return JSON.stringify(v);
    case 'yaml':
      return toYaml(v, { lineWidth: 0 });
    case 'protobuf':
    case 'k8sProtobuf':
      return encodeObject(v as KObject);
    case 'cbor':
      return toCbor(v);
  }
}

