// What the fields of Role, ClusterRole, RoleBinding and ClusterRoleBinding mean, as `kubectl explain`
// and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

const policyRule: ObjectDocs = {
  about: 'One permission: the verbs allowed on the listed resources of the listed API groups (optionally only the named objects), or on the listed non-resource URLs.',
  fields: {
    verbs: 'The verbs allowed, such as get, list, watch, create, update, patch, delete, deletecollection, bind, escalate, impersonate; "*" is every verb. Required.',
    apiGroups: 'The API groups of the resources; "" is the core group and "*" every group.',
    resources: 'The resources, by their plural names; a subresource is written "pods/log", "*" is every resource and "*/scale" a subresource of every resource.',
    resourceNames: 'Object names the rule is restricted to; empty means every object. A create or deletecollection is never restricted by name; a list or watch is, only when it selects metadata.name with a field selector.',
    nonResourceURLs: 'Paths that are not API resources (such as /healthz), with "*" as a final wildcard. Only in a ClusterRole, and not together with resources.',
  },
};

const rules = { about: 'The permissions the role grants.', typeAbout: policyRule.about, fields: policyRule.fields };

const subjects = {
  about: 'Who is granted the role: users, groups or service accounts.',
  typeAbout: 'A user, a group or a service account.',
  fields: {
    kind: 'User, Group or ServiceAccount.',
    apiGroup: 'The API group of the kind: the RBAC group for User and Group, "" for ServiceAccount (the defaults).',
    name: 'The name of the user, group or service account.',
    namespace: 'The namespace of a service account; in a RoleBinding it defaults to nothing, and a ServiceAccount subject of a ClusterRoleBinding needs it.',
  },
};

const roleRef = (kinds: string): ObjectDocs => ({
  about: `The role granted: ${kinds}. It cannot be changed: delete the binding and create it again.`,
  typeAbout: 'A reference to a role.',
  fields: {
    apiGroup: 'The group of the referenced role: the RBAC group.',
    kind: 'Role or ClusterRole.',
    name: 'The name of the role.',
  },
});

export const roleDocs: ObjectDocs = {
  about: 'Permissions on namespaced resources of its own namespace, granted by RoleBindings of that namespace.',
  fields: { rules },
};

export const clusterRoleDocs: ObjectDocs = {
  about: 'Permissions on cluster-scoped resources, non-resource URLs, or namespaced resources in every namespace, granted by ClusterRoleBindings (or in one namespace by RoleBindings).',
  fields: {
    rules: { ...rules, about: 'The permissions the role grants. With an aggregationRule, the server fills this in and overwrites what is written.' },
    aggregationRule: {
      about: 'Makes this role the union of the rules of the ClusterRoles its selectors match, kept current by a controller.',
      typeAbout: 'The ClusterRoles whose rules a ClusterRole aggregates.',
      fields: {
        clusterRoleSelectors: {
          about: 'Label selectors of ClusterRoles; the rules of every role matched by any of them are aggregated.',
          typeAbout: 'A label query: the terms of matchLabels and matchExpressions must all hold; an empty selector matches everything.',
          fields: {
            matchLabels: 'Labels that must be present with exactly these values.',
            matchExpressions: {
              about: 'Requirements on labels.',
              typeAbout: 'A requirement on one label: a key, an operator and values.',
              fields: {
                key: 'The label key.',
                operator: 'In, NotIn, Exists or DoesNotExist.',
                values: 'The values for In and NotIn (at least one); empty for Exists and DoesNotExist.',
              },
            },
          },
        },
      },
    },
  },
};

export const roleBindingDocs: ObjectDocs = {
  about: 'Grants a Role of its namespace, or a ClusterRole, to subjects within its namespace.',
  fields: { subjects, roleRef: roleRef('a Role of the same namespace or a ClusterRole') },
};

export const clusterRoleBindingDocs: ObjectDocs = {
  about: 'Grants a ClusterRole to subjects across the whole cluster.',
  fields: { subjects, roleRef: roleRef('a ClusterRole') },
};
