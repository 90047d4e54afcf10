// ComponentStatus (core/v1, cluster-scoped, deprecated): the health of the cluster's components,
// computed on every read from live probes (here: the storage backend). Read-only: get and list.

import type { KObject } from '../../machinery/meta.ts';
import type { KindDefinition } from '../definition.ts';
import { arr, describe, obj, objectSchema, str } from '../schemas.ts';
import { componentStatusDocs } from './docs/component-status.ts';
import { nameColumn } from '../printers.ts';

export interface ComponentProbe {
  name: string;
  healthy: boolean;
  /** What the probe reported. */
  message: string;
}

interface Condition {
  type: string;
  status: string;
  message?: string;
  error?: string;
}

const healthy = (o: KObject) => ((o as KObject & { conditions?: Condition[] }).conditions ?? []).find((c) => c.type === 'Healthy');

export function componentStatusDefinition(probe: () => Promise<ComponentProbe[]>): KindDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'ComponentStatus',
    resource: 'componentstatuses',
    singular: 'componentstatus',
    shortNames: ['cs'],
    namespaced: false,
    verbs: ['get', 'list'],
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    deprecatedIn: '1.19',
    schema: describe(objectSchema({
      conditions: arr(obj({ type: str(), status: str({ enum: ['True', 'False', 'Unknown'] }), message: str(), error: str() }, { required: ['type', 'status'] }), {
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'type',
      }),
    }), componentStatusDocs),
    computed: async () =>
      (await probe()).map((p) => ({
        apiVersion: 'v1',
        kind: 'ComponentStatus',
        metadata: { name: p.name },
        conditions: [p.healthy ? { type: 'Healthy', status: 'True', message: p.message } : { type: 'Healthy', status: 'False', message: '', error: p.message }],
      })),
    // Kubernetes' columns: the Healthy condition as Status, with its message and error.
    printerColumns: [
      nameColumn,
      { name: 'Status', type: 'string', description: 'Status of the component conditions', value: (o) => (healthy(o)?.status === 'True' ? 'Healthy' : 'Unhealthy') },
      { name: 'Message', type: 'string', description: 'Message of the component conditions', value: (o) => healthy(o)?.message ?? '' },
      { name: 'Error', type: 'string', description: 'Error of the component conditions', value: (o) => healthy(o)?.error ?? '' },
    ],
    strategy: {},
  };
}
