// Validation of the metadata every object shares (ValidateObjectMeta and its update form).

import { child, fieldError, type FieldError } from '../machinery/field-errors.ts';
import { dns1123Label, dns1123Subdomain, pathSegmentName, validateAnnotations, validateFinalizers, validateLabels, validateOwnerReferences, type KObject } from '../machinery/meta.ts';
import { errors } from '../machinery/status.ts';
import type { KindDefinition, NameRule } from './definition.ts';

const nameCheck: Record<NameRule, (v: string) => string[]> = {
  'dns-subdomain': dns1123Subdomain,
  'dns-label': dns1123Label,
  'path-segment': pathSegmentName,
};

export function validateObjectMetaCreate(obj: KObject, def: KindDefinition): FieldError[] {
  const meta = obj.metadata;
  const errs: FieldError[] = [];
  if (!meta.name) {
    errs.push(fieldError.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const m of nameCheck[def.nameRule](meta.name)) errs.push(fieldError.invalid('metadata.name', meta.name, m));
  }
  if (typeof meta.generateName === 'string' && meta.generateName !== '')
    for (const m of namePrefixCheck(def.nameRule, meta.generateName)) errs.push(fieldError.invalid('metadata.generateName', meta.generateName, m));
  if (def.namespaced) {
    if (!meta.namespace) errs.push(fieldError.required('metadata.namespace'));
    else for (const m of dns1123Label(meta.namespace)) errs.push(fieldError.invalid('metadata.namespace', meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(fieldError.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  for (const x of validateLabels(meta.labels, 'metadata.labels')) errs.push(x);
  for (const x of validateAnnotations(meta.annotations, 'metadata.annotations')) errs.push(x);
  for (const x of validateFinalizers(meta.finalizers, 'metadata.finalizers')) errs.push(x);
  for (const x of validateOwnerReferences(meta.ownerReferences, 'metadata.ownerReferences')) errs.push(x);
  return errs;
}

/**
 * generateName is checked as a prefix of the kind's names (NameIsDNSSubdomain and the others with
 * prefix=true): a trailing '-' is allowed by masking it as Kubernetes does (its last two characters
 * become one 'a'), and a path-segment prefix has no length limit (any suffix may follow it).
 */
function namePrefixCheck(rule: NameRule, prefix: string): string[] {
  if (rule === 'path-segment') return ['/', '%'].filter((bad) => prefix.includes(bad)).map((bad) => `may not contain '${bad}'`);
  const masked = prefix.length > 1 && prefix.endsWith('-') ? `${prefix.slice(0, -2)}a` : prefix;
  return nameCheck[rule](masked);
}

export function validateObjectMetaUpdate(obj: KObject, old: KObject, def: KindDefinition): FieldError[] {
  const errs = validateObjectMetaCreate(obj, def);
  const immutable = (field: 'name' | 'namespace' | 'uid' | 'creationTimestamp' | 'deletionTimestamp' | 'deletionGracePeriodSeconds') => {
    if ((obj.metadata[field] ?? '') !== (old.metadata[field] ?? '')) errs.push(fieldError.invalid(child('metadata', field), obj.metadata[field] ?? '', 'field is immutable'));
  };
  immutable('name');
  immutable('namespace');
  immutable('uid');
  immutable('creationTimestamp');
  immutable('deletionTimestamp');
  immutable('deletionGracePeriodSeconds');
  // A deletion waits for its finalizers: none may join once it has begun (ValidateNoNewFinalizers).
  if (old.metadata.deletionTimestamp && Array.isArray(obj.metadata.finalizers)) {
    const had = new Set(old.metadata.finalizers ?? []);
    const added = [...new Set(obj.metadata.finalizers.filter((f) => !had.has(f)))].sort();
    if (added.length)
      errs.push(fieldError.forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`));
  }
  return errs;
}

/** The body of a PUT must name the object of its URL (checkName in kube-apiserver). */
export function validateName(obj: KObject, name: string, namespace: string | undefined, def: KindDefinition): void {
  if (obj.metadata.name !== name) throw errors.badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
  if (def.namespaced && obj.metadata.namespace && obj.metadata.namespace !== namespace)
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
}
