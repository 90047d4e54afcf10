// IPAddress (n.group('networking')/v1, cluster-scoped): one IP of one family, allocated to a
// parent object (a Service's cluster IP). The name is the address itself, in canonical text, so
// two objects can never hold the same IP; the parent reference is fixed once set.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { validateIP } from '../../machinery/ip.ts';
import { dns1123Subdomain, isPlainObject, pathSegmentName, type KObject } from '../../machinery/meta.ts';
import { validateImmutable } from '../../machinery/validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { describe, obj, objectSchema, str } from '../schemas.ts';
import { ipAddressDocs } from './docs/ip-address.ts';

interface ParentReference {
  group?: string;
  resource?: string;
  namespace?: string;
  name?: string;
}

const parentRefOf = (o: KObject): ParentReference | undefined => {
  const spec = o.spec;
  if (!isPlainObject(spec) || !isPlainObject(spec.parentRef)) return undefined;
  return spec.parentRef as ParentReference;
};

/** `<resource>[.<group>][/<namespace>]/<name>`, lower case, as Kubernetes prints a parent. */
function parentRefText(o: KObject): string {
  const ref = parentRefOf(o);
  if (!ref) return '<none>';
  const groupResource = ref.group ? `${ref.resource ?? ''}.${ref.group}` : (ref.resource ?? '');
  return `${groupResource.toLowerCase()}${ref.namespace ? `/${ref.namespace}` : ''}/${ref.name ?? ''}`;
}

export function ipAddressDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'IPAddress',
    resource: 'ipaddresses',
    singular: 'ipaddress',
    namespaced: false,
    verbs: ALL_VERBS,
    // IPv6 names hold colons: the name is checked as a path segment here and as an IP below.
    nameRule: 'path-segment',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    schema: describe(
      objectSchema({
        spec: obj({ parentRef: obj({ group: str(), resource: str(), namespace: str(), name: str() }, { required: ['resource', 'name'] }) }, { required: ['parentRef'] }),
      }),
      ipAddressDocs,
    ),
    printerColumns: [
      nameColumn,
      { name: 'ParentRef', type: 'string', description: 'ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.', value: parentRefText },
      ageColumn,
    ],
    strategy: {
      validate: validateIPAddress,
      validateUpdate(o, old) {
        return [...validateIPAddress(o), ...validateImmutable(comparableRef(parentRefOf(o)), comparableRef(parentRefOf(old)), 'spec.parentRef')];
      },
    },
  };
}

/** The name is one IP in canonical text; the parent reference names a resource and an object. */
function validateIPAddress(o: KObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata.name;
  if (name) for (const m of validateIP(name)) errs.push(fieldError.invalid('metadata.name', name, m));
  for (const x of validateParentRef(parentRefOf(o), 'spec.parentRef')) errs.push(x);
  return errs;
}

function validateParentRef(ref: ParentReference | undefined, path: string): FieldError[] {
  if (!ref) return [fieldError.required(path)];
  const errs: FieldError[] = [];
  // The core group (Services) is the empty group, so group cannot be required.
  if (ref.group) for (const m of dns1123Subdomain(ref.group)) errs.push(fieldError.invalid(child(path, 'group'), ref.group, m));
  for (const f of ['resource', 'name'] as const) {
    const v = ref[f];
    if (!v) errs.push(fieldError.required(child(path, f)));
    else for (const m of pathSegmentName(v)) errs.push(fieldError.invalid(child(path, f), v, m));
  }
  if (ref.namespace) for (const m of pathSegmentName(ref.namespace)) errs.push(fieldError.invalid(child(path, 'namespace'), ref.namespace, m));
  return errs;
}

/** A parent reference with unset fields as empty, in one key order, so equal references compare equal. */
function comparableRef(ref: ParentReference | undefined): ParentReference | undefined {
  if (!ref) return undefined;
  return { group: ref.group ?? '', resource: ref.resource ?? '', namespace: ref.namespace ?? '', name: ref.name ?? '' };
}
