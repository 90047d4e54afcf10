// Admission: checks and mutations between decoding and storage. Built-in plugins now; webhooks and
// validating admission policies plug in through the same interface later.

import type { KObject } from '../machinery/meta.ts';
import { errors } from '../machinery/status.ts';
import type { Naming } from '../naming.ts';

/** What admission plugins see of the store they guard. */
interface AdmittedStore {
  readonly def: { kind: string; resource: string; group: string; namespaced: boolean };
  readonly qualified: { group: string; resource: string };
}

export interface Admission {
  admitCreate(store: AdmittedStore, obj: KObject): Promise<void>;
  admitUpdate(store: AdmittedStore, obj: KObject, old: KObject): Promise<void>;
  admitDelete(store: AdmittedStore, obj: KObject): Promise<void>;
}

/**
 * NamespaceLifecycle: no new content in a missing or terminating namespace, and the system
 * namespaces cannot be deleted.
 */
export function namespaceLifecycle(naming: Naming, getNamespace: (name: string) => Promise<KObject | undefined>): Admission {
  const undeletable = new Set(['default', naming.systemNamespace, naming.publicNamespace, naming.nodeLeaseNamespace]);
  const isNamespace = (s: AdmittedStore) => s.def.group === '' && s.def.resource === 'namespaces';
  return {
    async admitCreate(store, obj) {
      if (!store.def.namespaced) return;
      const name = obj.metadata.namespace!;
      const ns = await getNamespace(name);
      if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, name);
      if (ns.metadata.deletionTimestamp)
        throw errors.forbidden(store.qualified, obj.metadata.name ?? '', `unable to create new content in namespace ${name} because it is being terminated`);
    },
    async admitUpdate() {},
    async admitDelete(store, obj) {
      if (isNamespace(store) && undeletable.has(obj.metadata.name ?? '')) throw errors.forbidden(store.qualified, obj.metadata.name ?? '', 'this namespace may not be deleted');
    },
  };
}
