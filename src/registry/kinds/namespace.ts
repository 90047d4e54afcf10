// Namespace (core/v1, cluster-scoped). A new namespace is Active and carries the namespace
// finalizer in spec.finalizers; a delete marks it Terminating and it stays until the namespace
// controller has removed its content and that finalizer (through /finalize). Its name is also a
// label, <label domain>/metadata.name, kept equal to the name.

import type { KObject } from '../../machinery/meta.ts';
import { isPlainObject } from '../../machinery/meta.ts';
import type { Naming } from '../../naming.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { arr, condition, describe, obj, objectSchema, str } from '../schemas.ts';
import { namespaceDocs } from './docs/namespace.ts';
import { keepStatus, statusSubresource } from './status-subresource.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { validateConditions } from '../../machinery/validation.ts';

type NamespaceObject = KObject & { spec?: { finalizers?: string[] }; status?: { phase?: string; conditions?: unknown[] } };

const spec = (o: KObject) => ((o as NamespaceObject).spec ??= {});

export function namespaceDefinition(n: Naming): KindDefinition {
  const nameLabel = `${n.labelDomain}/metadata.name`;
  return {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    resource: 'namespaces',
    singular: 'namespace',
    shortNames: ['ns'],
    namespaced: false,
    verbs: ALL_VERBS.filter((v) => v !== 'deletecollection'),
    nameRule: 'dns-label',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    selectableFields: { 'status.phase': (o) => (o as NamespaceObject).status?.phase },
    schema: describe(objectSchema({
      spec: obj({ finalizers: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }),
      status: obj({
        phase: str({ enum: ['Active', 'Terminating'] }),
        conditions: arr(condition(), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
      }),
    }), namespaceDocs(n)),
    subresources: [
      statusSubresource,
      {
        name: 'finalize',
        verbs: ['update'],
        apply: (req, stored) => ({ ...stored, metadata: { ...stored.metadata, resourceVersion: req.metadata.resourceVersion }, spec: { ...spec(stored), finalizers: (req as NamespaceObject).spec?.finalizers ?? [] } }),
      },
    ],
    printerColumns: [
      nameColumn,
      { name: 'Status', type: 'string', description: 'The status of the namespace', value: (o) => (o as NamespaceObject).status?.phase ?? '' },
      ageColumn,
    ],
    strategy: {
      // Every namespace carries its name as a label (<label domain>/metadata.name), so selectors
      // can pick namespaces by name; a client cannot change or remove it.
      defaults(o) {
        if (o.metadata.name) o.metadata.labels = { ...o.metadata.labels, [nameLabel]: o.metadata.name };
      },
      prepareForCreate(o) {
        const ns = o as NamespaceObject;
        const finalizers = new Set(spec(ns).finalizers ?? []);
        finalizers.add(n.namespaceFinalizer);
        ns.spec = { ...ns.spec, finalizers: [...finalizers] };
        ns.status = { phase: 'Active' };
      },
      prepareForUpdate(o, old) {
        // spec.finalizers changes only through /finalize, status only through /status.
        const ns = o as NamespaceObject;
        const prev = old as NamespaceObject;
        ns.spec = { ...(isPlainObject(ns.spec) ? ns.spec : {}), finalizers: prev.spec?.finalizers ?? [] };
        if (!ns.spec.finalizers?.length) delete ns.spec.finalizers;
        keepStatus(o, old);
      },
      validate: (o) => validateConditions((o as NamespaceObject).status?.conditions, 'status.conditions'),
      validateUpdate: (o) => validateConditions((o as NamespaceObject).status?.conditions, 'status.conditions'),
      pendingFinalization: (o) => !!(o as NamespaceObject).spec?.finalizers?.length,
      deleteConflict: (o) =>
        (o as NamespaceObject).spec?.finalizers?.length
          ? 'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.'
          : undefined,
      prepareForDelete(o) {
        const ns = o as NamespaceObject;
        ns.status = { ...ns.status, phase: 'Terminating' };
      },
    },
  };
}
