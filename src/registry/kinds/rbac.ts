// Role, ClusterRole, RoleBinding and ClusterRoleBinding (rbac.authorization/v1): permissions and
// who holds them. Names are path segments; rules, subjects and role references are checked as
// Kubernetes' rbac validation checks them, and a binding's roleRef never changes. Writes by a user
// go through the escalation guard (the authorizer's side, given by the server): nobody grants
// what they do not hold themselves unless they may `escalate` or `bind`.

import type { Naming } from '../../naming.ts';
import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { dns1123Subdomain, isPlainObject, pathSegmentName, type KObject } from '../../machinery/meta.ts';
import type { UserInfo } from '../../request/user.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn, type PrinterColumn } from '../printers.ts';
import { arr, describe, obj, objectSchema, str, stringMap } from '../schemas.ts';
import { clusterRoleBindingDocs, clusterRoleDocs, roleBindingDocs, roleDocs } from './docs/rbac.ts';

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export type RoleObject = KObject & { rules?: PolicyRule[] | null; aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] | null } | null };
export type BindingObject = KObject & { subjects?: Subject[] | null; roleRef?: RoleRef };

/**
 * The authorizer's side of a write of a role or binding by a user (the server supplies it): throws
 * the 403 Status of a write that would grant permissions the user does not hold.
 */
export interface RbacWriteGuard {
  role(check: { user: UserInfo; kind: 'Role' | 'ClusterRole'; namespace?: string; name: string; object: RoleObject; old?: RoleObject }): Promise<void>;
  binding(check: { user: UserInfo; kind: 'RoleBinding' | 'ClusterRoleBinding'; namespace?: string; name: string; object: BindingObject; old?: BindingObject }): Promise<void>;
}

const atomicStrings = () => arr(str(), { 'x-kubernetes-list-type': 'atomic' });

const policyRuleSchema = () => obj({ verbs: atomicStrings(), apiGroups: atomicStrings(), resources: atomicStrings(), resourceNames: atomicStrings(), nonResourceURLs: atomicStrings() });

const labelSelectorSchema = () =>
  obj(
    {
      matchLabels: stringMap(),
      matchExpressions: arr(obj({ key: str(), operator: str(), values: atomicStrings() }), { 'x-kubernetes-list-type': 'atomic' }),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  );

const subjectSchema = () => obj({ kind: str(), apiGroup: str(), name: str(), namespace: str() }, { 'x-kubernetes-map-type': 'atomic' });
const roleRefSchema = () => obj({ apiGroup: str(), kind: str(), name: str() }, { 'x-kubernetes-map-type': 'atomic' });

const createdAtColumn: PrinterColumn = { ...ageColumn, name: 'Created At', type: 'date', value: (o) => o.metadata.creationTimestamp ?? '' };

/** The names of the subjects of one kind, comma separated (service accounts as namespace/name). */
function subjectsOf(o: KObject, kind: string): string {
  const subjects = (o as BindingObject).subjects;
  if (!Array.isArray(subjects)) return '';
  return subjects
    .filter((s) => isPlainObject(s) && s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name ?? ''}` : (s.name ?? '')))
    .join(', ');
}

function bindingColumns(what: string): PrinterColumn[] {
  return [
    nameColumn,
    {
      name: 'Role',
      type: 'string',
      description: 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.',
      value: (o) => {
        const ref = (o as BindingObject).roleRef;
        return `${ref?.kind ?? ''}/${ref?.name ?? ''}`;
      },
    },
    ageColumn,
    { name: 'Users', type: 'string', priority: 1, description: `Users in the ${what}`, value: (o) => subjectsOf(o, 'User') },
    { name: 'Groups', type: 'string', priority: 1, description: `Groups in the ${what}`, value: (o) => subjectsOf(o, 'Group') },
    { name: 'ServiceAccounts', type: 'string', priority: 1, description: `ServiceAccounts in the ${what}`, value: (o) => subjectsOf(o, 'ServiceAccount') },
  ];
}

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);

/** validatePolicyRule: verbs always; non-resource URLs only cluster-wide and alone; else groups and resources. */
function validateRules(o: KObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  listOf((o as RoleObject).rules).forEach((r, i) => {
    const rule = (isPlainObject(r) ? r : {}) as PolicyRule;
    const path = child('rules', i);
    if (!stringsOf(rule.verbs).length) errs.push(fieldError.required(child(path, 'verbs'), 'verbs must contain at least one value'));
    const urls = stringsOf(rule.nonResourceURLs);
    if (urls.length) {
      if (namespaced) errs.push(fieldError.invalid(child(path, 'nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (stringsOf(rule.apiGroups).length || stringsOf(rule.resources).length || stringsOf(rule.resourceNames).length)
        errs.push(fieldError.invalid(child(path, 'nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
      return;
    }
    if (!stringsOf(rule.apiGroups).length) errs.push(fieldError.required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'));
    if (!stringsOf(rule.resources).length) errs.push(fieldError.required(child(path, 'resources'), 'resource rules must supply at least one resource'));
    if (stringsOf(rule.resourceNames).length && stringsOf(rule.resources).length > 1) errs.push(fieldError.required(child(path, 'resourceNames'), 'resource names cannot apply to multiple resources'));
  });
  return errs;
}

/** ValidateRoleBinding / ValidateClusterRoleBinding: the role reference and every subject. */
function validateBinding(o: KObject, namespaced: boolean, group: string): FieldError[] {
  const b = o as BindingObject;
  const ref = (isPlainObject(b.roleRef) ? b.roleRef : {}) as RoleRef;
  const errs: FieldError[] = [];
  if ((ref.apiGroup ?? '') !== group) errs.push(fieldError.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [group]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) errs.push(fieldError.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldError.required('roleRef.name'));
  else for (const m of pathSegmentName(ref.name)) errs.push(fieldError.invalid('roleRef.name', ref.name, m));
  listOf(b.subjects).forEach((s, i) => {
    const subject = (isPlainObject(s) ? s : {}) as Subject;
    const path = child('subjects', i);
    const name = subject.name ?? '';
    const apiGroup = subject.apiGroup ?? '';
    if (!name) errs.push(fieldError.required(child(path, 'name')));
    switch (subject.kind) {
      case 'ServiceAccount':
        if (name) for (const m of dns1123Subdomain(name)) errs.push(fieldError.invalid(child(path, 'name'), name, m));
        if (apiGroup) errs.push(fieldError.notSupported(child(path, 'apiGroup'), apiGroup, ['']));
        if (!namespaced && !subject.namespace) errs.push(fieldError.required(child(path, 'namespace')));
        break;
      case 'User':
      case 'Group':
        if (!name) errs.push(fieldError.invalid(child(path, 'name'), name, `${subject.kind.toLowerCase()} name cannot be empty`));
        if (apiGroup !== group) errs.push(fieldError.notSupported(child(path, 'apiGroup'), apiGroup, [group]));
        break;
      default:
        errs.push(fieldError.notSupported(child(path, 'kind'), subject.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

/** Go's `%#v` of the internal RoleRef, as kube-apiserver prints it in the roleRef error. */
const goRoleRef = (ref: RoleRef | undefined): string => `rbac.RoleRef{APIGroup:${JSON.stringify(ref?.apiGroup ?? '')}, Kind:${JSON.stringify(ref?.kind ?? '')}, Name:${JSON.stringify(ref?.name ?? '')}}`;

function validateRoleRefUnchanged(o: KObject, old: KObject): FieldError[] {
  const ref = (o as BindingObject).roleRef;
  const prev = (old as BindingObject).roleRef;
  if ((ref?.apiGroup ?? '') === (prev?.apiGroup ?? '') && (ref?.kind ?? '') === (prev?.kind ?? '') && (ref?.name ?? '') === (prev?.name ?? '')) return [];
  return [{ type: 'FieldValueInvalid', field: 'roleRef', message: `roleRef: Invalid value: ${goRoleRef(ref)}: cannot change roleRef` }];
}

/** SetDefaults_Subject and the roleRef's group: User and Group subjects and the roleRef are of the RBAC group. */
function defaultBinding(o: KObject, group: string): void {
  const b = o as BindingObject;
  if (isPlainObject(b.roleRef) && !b.roleRef.apiGroup) b.roleRef.apiGroup = group;
  for (const s of listOf(b.subjects)) {
    if (!isPlainObject(s)) continue;
    const subject = s as Subject;
    if (!subject.apiGroup && (subject.kind === 'User' || subject.kind === 'Group')) subject.apiGroup = group;
  }
}

interface RbacKindOptions {
  /** Checks writes by users against what they hold; absent: nothing is checked. */
  guard?: RbacWriteGuard;
}

export function rbacKinds(n: Naming, opts: RbacKindOptions = {}): KindDefinition[] {
  const group = n.group('rbac.authorization');
  const guard = opts.guard;
  const base = { group, version: 'v1', verbs: ALL_VERBS, nameRule: 'path-segment' as const, tracksGeneration: false, allowCreateOnUpdate: true };
  const role: KindDefinition = {
    ...base,
    kind: 'Role',
    resource: 'roles',
    singular: 'role',
    namespaced: true,
    schema: describe(objectSchema({ rules: arr(policyRuleSchema(), { 'x-kubernetes-list-type': 'atomic' }) }), roleDocs),
    printerColumns: [nameColumn, createdAtColumn],
    strategy: { validate: (o) => validateRules(o, true), validateUpdate: (o) => validateRules(o, true) },
    ...(guard && { guardWrite: (w) => guard.role({ ...w, kind: 'Role', name: w.object.metadata.name ?? '', object: w.object as RoleObject, old: w.old as RoleObject | undefined }) }),
  };
  const clusterRole: KindDefinition = {
    ...base,
    kind: 'ClusterRole',
    resource: 'clusterroles',
    singular: 'clusterrole',
    namespaced: false,
    schema: describe(
      objectSchema({
        rules: arr(policyRuleSchema(), { 'x-kubernetes-list-type': 'atomic' }),
        aggregationRule: obj({ clusterRoleSelectors: arr(labelSelectorSchema(), { 'x-kubernetes-list-type': 'atomic' }) }),
      }),
      clusterRoleDocs,
    ),
    printerColumns: [nameColumn, createdAtColumn],
    strategy: { validate: (o) => validateRules(o, false), validateUpdate: (o) => validateRules(o, false) },
    ...(guard && { guardWrite: (w) => guard.role({ ...w, kind: 'ClusterRole', name: w.object.metadata.name ?? '', object: w.object as RoleObject, old: w.old as RoleObject | undefined }) }),
  };
  const bindingSchema = (docs: typeof roleBindingDocs) =>
    describe(objectSchema({ subjects: arr(subjectSchema(), { 'x-kubernetes-list-type': 'atomic' }), roleRef: roleRefSchema() }), docs);
  const roleBinding: KindDefinition = {
    ...base,
    kind: 'RoleBinding',
    resource: 'rolebindings',
    singular: 'rolebinding',
    namespaced: true,
    schema: bindingSchema(roleBindingDocs),
    printerColumns: bindingColumns('roleBinding'),
    strategy: {
      defaults: (o) => defaultBinding(o, group),
      validate: (o) => validateBinding(o, true, group),
      validateUpdate: (o, old) => [...validateBinding(o, true, group), ...validateRoleRefUnchanged(o, old)],
    },
    ...(guard && { guardWrite: (w) => guard.binding({ ...w, kind: 'RoleBinding', name: w.object.metadata.name ?? '', object: w.object as BindingObject, old: w.old as BindingObject | undefined }) }),
  };
  const clusterRoleBinding: KindDefinition = {
    ...base,
    kind: 'ClusterRoleBinding',
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    namespaced: false,
    schema: bindingSchema(clusterRoleBindingDocs),
    printerColumns: bindingColumns('clusterRoleBinding'),
    strategy: {
      defaults: (o) => defaultBinding(o, group),
      validate: (o) => validateBinding(o, false, group),
      validateUpdate: (o, old) => [...validateBinding(o, false, group), ...validateRoleRefUnchanged(o, old)],
    },
    ...(guard && { guardWrite: (w) => guard.binding({ ...w, kind: 'ClusterRoleBinding', name: w.object.metadata.name ?? '', object: w.object as BindingObject, old: w.old as BindingObject | undefined }) }),
  };
  return [clusterRoleBinding, clusterRole, roleBinding, role];
}
