// ServiceAccount (core/v1, namespaced): an identity for processes calling the API, with the secrets
// and image pull secrets its pods may use.

import { isPlainObject, type KObject } from '../../machinery/meta.ts';
import { ALL_VERBS, type KindDefinition, type NamedCreateDefinition } from '../definition.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { arr, bool, describe, obj, objectSchema, str } from '../schemas.ts';
import { serviceAccountDocs } from './docs/config.ts';

type ServiceAccountObject = KObject & { secrets?: unknown };

/**
 * As Kubernetes' strategy does on every write: a reference to a secret keeps its name only (the
 * secret is always of the account's namespace).
 */
function cleanSecretReferences(o: KObject): void {
  const sa = o as ServiceAccountObject;
  if (!Array.isArray(sa.secrets)) return;
  sa.secrets = sa.secrets.map((ref: unknown) => (isPlainObject(ref) && ref.name !== undefined && ref.name !== null ? { name: ref.name } : isPlainObject(ref) ? {} : ref));
}

export function serviceAccountDefinition(token?: NamedCreateDefinition): KindDefinition {
  return {
    ...(token && { namedCreates: [token] }),
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    resource: 'serviceaccounts',
    singular: 'serviceaccount',
    shortNames: ['sa'],
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    schema: describe(
      objectSchema({
        secrets: arr(
          obj({ kind: str(), namespace: str(), name: str(), uid: str(), apiVersion: str(), resourceVersion: str(), fieldPath: str() }, { 'x-kubernetes-map-type': 'atomic' }),
          { 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' },
        ),
        imagePullSecrets: arr(obj({ name: str() }, { 'x-kubernetes-map-type': 'atomic' }), { 'x-kubernetes-list-type': 'atomic' }),
        automountServiceAccountToken: bool(),
      }),
      serviceAccountDocs,
    ),
    printerColumns: [
      nameColumn,
      {
        name: 'Secrets',
        type: 'string',
        description: 'The number of secrets the pods of this account may use.',
        value: (o) => (Array.isArray((o as ServiceAccountObject).secrets) ? ((o as ServiceAccountObject).secrets as unknown[]).length : 0),
      },
      ageColumn,
    ],
    strategy: {
      prepareForCreate: cleanSecretReferences,
      prepareForUpdate: (o) => cleanSecretReferences(o),
    },
  };
}
