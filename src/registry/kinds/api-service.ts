// APIService (apiregistration/v1, cluster-scoped): one served group version, either local (no
// `spec.service`) or backed by a service. Its name is `<version>.<group>`; its priorities order
// discovery; its `Available` condition is kept by the API service availability controller.

import type { Naming } from '../../naming.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Subdomain, type KObject } from '../../machinery/meta.ts';
import { validateConditions } from '../../machinery/validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { arr, bool, condition, describe, int32, obj, objectSchema, str } from '../schemas.ts';
import { apiServiceDocs } from './docs/api-service.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { keepStatus, statusOnlySubresource } from './status-subresource.ts';

interface ApiServiceSpec {
  group?: string;
  version?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  service?: { namespace?: string; name?: string; port?: number };
  caBundle?: string;
  insecureSkipTLSVerify?: boolean;
}

export interface ApiServiceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export type ApiServiceObject = KObject & { spec?: ApiServiceSpec; status?: { conditions?: ApiServiceCondition[] } };

/** A DNS-1035 label: what an API version must be. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function apiServiceDefinition(n: Naming): KindDefinition {
  return {
    group: n.group('apiregistration'),
    version: 'v1',
    kind: 'APIService',
    resource: 'apiservices',
    singular: 'apiservice',
    namespaced: false,
    verbs: ALL_VERBS,
    // The name is checked against spec by the strategy (`<version>.<group>`).
    nameRule: 'path-segment',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    schema: describe(objectSchema({
      spec: obj({
        service: obj({ namespace: str(), name: str(), port: int32({ default: 443 }) }),
        group: str(),
        version: str(),
        insecureSkipTLSVerify: bool(),
        caBundle: str({ format: 'byte', 'x-kubernetes-list-type': 'atomic' }),
        groupPriorityMinimum: int32(),
        versionPriority: int32(),
      }, { required: ['groupPriorityMinimum', 'versionPriority'] }),
      status: obj({
        conditions: arr(condition(), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
      }),
    }), apiServiceDocs),
    subresources: [statusOnlySubresource],
    printerColumns: [
      nameColumn,
      {
        name: 'Service',
        type: 'string',
        description: 'The reference to the service that hosts this API endpoint.',
        value: (o) => {
          const svc = (o as ApiServiceObject).spec?.service;
          return svc ? `${svc.namespace ?? ''}/${svc.name ?? ''}` : 'Local';
        },
      },
      {
        name: 'Available',
        type: 'string',
        description: 'Whether this service is available.',
        value: (o) => {
          const c = (o as ApiServiceObject).status?.conditions?.find((x) => x.type === 'Available');
          if (!c) return 'Unknown';
          return c.status === 'True' ? 'True' : `${c.status} (${c.reason ?? ''})`;
        },
      },
      ageColumn,
    ],
    strategy: {
      prepareForCreate: (o) => void delete o.status,
      prepareForUpdate: keepStatus,
      validate: validateApiService,
      validateUpdate: (o) => validateApiService(o),
    },
  };
}

/** ValidateAPIService: the name, group, version, priorities, and the service or local form. */
function validateApiService(o: KObject): FieldError[] {
  const a = o as ApiServiceObject;
  const spec = a.spec ?? {};
  const errs: FieldError[] = [];
  const group = spec.group ?? '';
  const version = spec.version ?? '';
  const required = `${version}.${group}`;
  if (a.metadata.name !== required) errs.push(fieldError.invalid('metadata.name', a.metadata.name ?? '', `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  if (!group && version !== 'v1') errs.push(fieldError.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) for (const m of dns1123Subdomain(group)) errs.push(fieldError.invalid('spec.group', group, m));
  if (version.length > 63) errs.push(fieldError.invalid('spec.version', version, 'must be no more than 63 characters'));
  if (!DNS1035_LABEL.test(version))
    errs.push(fieldError.invalid('spec.version', version, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
  const gpm = spec.groupPriorityMinimum ?? 0;
  if (gpm <= 0 || gpm > 20000) errs.push(fieldError.invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = spec.versionPriority ?? 0;
  if (vp <= 0 || vp > 1000) errs.push(fieldError.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const caBundle = spec.caBundle ?? '';
  if (!spec.service) {
    if (caBundle) errs.push(fieldError.invalid('spec.caBundle', `${Buffer.from(caBundle, 'base64').length} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify) errs.push(fieldError.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
  } else {
    const svc = spec.service;
    if (!svc.namespace) errs.push(fieldError.required('spec.service.namespace'));
    if (!svc.name) errs.push(fieldError.required('spec.service.name'));
    const port = svc.port ?? 443;
    if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(fieldError.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
    if (spec.insecureSkipTLSVerify && caBundle) errs.push(fieldError.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  }
  for (const x of validateConditions(a.status?.conditions, child('status', 'conditions'), { camelCaseReason: true })) errs.push(x);
  return errs;
}
