// Admission: checks and mutations between decoding and storage. Built-in plugins now; webhooks and
// validating admission policies plug in through the same interface later.

import type { KObject } from '../machinery/meta.ts';
import { errors } from '../machinery/status.ts';
import type { Naming } from '../naming.ts';
import type { UserInfo } from '../request/user.ts';

/** What admission plugins see of the store they guard. */
interface AdmittedStore {
  readonly def: { kind: string; resource: string; group: string; namespaced: boolean };
  readonly qualified: { group: string; resource: string };
}

/**
 * A write being admitted: where it goes, and its objects, decoded only when a plugin asks for
 * them (a large write prepared off the event loop arrives as bytes).
 */
export interface AdmittedWrite {
  name: string;
  namespace: string | undefined;
  object(): KObject;
  /** The user the request acts as (absent for the server's own writes). */
  user?: UserInfo;
}

export interface Admission {
  admitCreate(store: AdmittedStore, write: AdmittedWrite): Promise<void>;
  admitUpdate(store: AdmittedStore, write: AdmittedWrite & { oldObject(): KObject }): Promise<void>;
  admitDelete(store: AdmittedStore, obj: KObject, user?: UserInfo): Promise<void>;
}

/** Plugins run in order; the first refusal stops the write. */
export function admissionChain(plugins: readonly Admission[]): Admission {
  return {
    async admitCreate(store, write) {
      for (const p of plugins) await p.admitCreate(store, write);
    },
    async admitUpdate(store, write) {
      for (const p of plugins) await p.admitUpdate(store, write);
    },
    async admitDelete(store, obj, user) {
      for (const p of plugins) await p.admitDelete(store, obj, user);
    },
  };
}

/**
 * NamespaceLifecycle: no new content in a missing or terminating namespace, and the system
 * namespaces cannot be deleted.
 */
export function namespaceLifecycle(naming: Naming, getNamespace: (name: string) => Promise<KObject | undefined>): Admission {
  const undeletable = new Set(['default', naming.systemNamespace, naming.publicNamespace, naming.nodeLeaseNamespace]);
  const isNamespace = (s: AdmittedStore) => s.def.group === '' && s.def.resource === 'namespaces';
  return {
    async admitCreate(store, write) {
      if (!store.def.namespaced) return;
      const name = write.namespace!;
      const ns = await getNamespace(name);
      if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, name);
      if (ns.metadata.deletionTimestamp)
        throw errors.forbidden(store.qualified, write.name, `unable to create new content in namespace ${name} because it is being terminated`);
    },
    async admitUpdate() {},
    async admitDelete(store, obj) {
      if (isNamespace(store) && undeletable.has(obj.metadata.name ?? '')) throw errors.forbidden(store.qualified, obj.metadata.name ?? '', 'this namespace may not be deleted');
    },
  };
}
