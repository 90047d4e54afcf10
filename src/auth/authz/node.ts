// The Node authorizer (`--authorization-mode=Node`): what a node agent may do, as kube-apiserver's
// node authorizer decides it, limited to the kinds this server serves. It answers only for users
// named `system:node:<name>` in the group `system:nodes`; for everyone else it has no opinion, so
// the next mode (RBAC) decides.
//
// Allowed to a node: read every Node; create Nodes and update or patch Nodes and `nodes/status`
// (the NodeRestriction admission step keeps it to its own, node-restriction.ts); get, create,
// update, patch and delete the Lease named as itself in the node lease namespace; create, update
// and patch Events; create TokenReviews, SubjectAccessReviews and LocalSubjectAccessReviews.
//
// Left out, because the kinds they hang on are not served: kube lets a node read the Secrets,
// ConfigMaps, PersistentVolumeClaims and volumes of the Pods bound to it, and create tokens
// (`serviceaccounts/token`) for those Pods' service accounts. With no Pods nothing is bound to a
// node, so each of these is refused with kube's reason ("no relationship found …"). Services,
// Endpoints, Pods and CertificateSigningRequests, which kube's node rules also grant, are not
// served at all.

import type { Naming } from '../../naming.ts';
import type { UserInfo } from '../../request/user.ts';
import type { PolicyRule } from '../../registry/kinds/rbac.ts';
import { ALLOW, NO_OPINION, type Attributes, type Authorizer, type Decision } from './authorizer.ts';
import { ruleAllows } from './rbac.ts';

/** The group every node agent's identity is in. */
export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';

/**
 * The node a user is (kube's NodeIdentity): undefined for a user that is not a node agent; an empty
 * name for one in `system:nodes` whose name gives no node (`system:node:`).
 */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

/** kube's node rules (bootstrappolicy NodeRules) for the kinds served here, in this server's group names. */
export function nodeRules(naming: Naming): PolicyRule[] {
  // The review endpoints are also answered at their Kubernetes paths (kubectl hard-codes them).
  const authorization = [...new Set([naming.group('authorization'), 'authorization.k8s.io'])];
  return [
    { verbs: ['create'], apiGroups: [naming.group('authentication')], resources: ['tokenreviews'] },
    { verbs: ['create'], apiGroups: authorization, resources: ['subjectaccessreviews', 'localsubjectaccessreviews'] },
    { verbs: ['create', 'get', 'list', 'watch'], apiGroups: [''], resources: ['nodes'] },
    { verbs: ['update', 'patch'], apiGroups: [''], resources: ['nodes/status'] },
    { verbs: ['update', 'patch'], apiGroups: [''], resources: ['nodes'] },
    { verbs: ['create', 'update', 'patch'], apiGroups: ['', naming.group('events')], resources: ['events'] },
  ];
}

/** The Node authorizer of `naming`'s server. */
export function nodeAuthorizer(naming: Naming): Authorizer {
  const rules = nodeRules(naming);
  const coordination = naming.group('coordination');
  const leaseNamespace = naming.nodeLeaseNamespace;
  const noOpinion = (reason: string) => ({ decision: 'no-opinion' as const, reason });
  const noRelationship = (node: string) => noOpinion(`no relationship found between node '${node}' and this object`);
  const decide = ({ user, info }: Attributes): Decision => {
    const node = nodeIdentity(user);
    if (node === undefined) return NO_OPINION;
    if (!node) return noOpinion(`unknown node for user ${JSON.stringify(user.name)}`);
    if (info.isResourceRequest) {
      const { apiGroup, resource } = info;
      if (apiGroup === '' && (resource === 'secrets' || resource === 'configmaps')) {
        // Readable only through the Pods bound to the node: none here.
        if (!['get', 'list', 'watch'].includes(info.verb)) return noOpinion('can only read resources of this type');
        if (info.subresource) return noOpinion('cannot read subresource');
        if (!info.namespace) return noOpinion('can only read namespaced object of this type');
        if (!info.name) return noOpinion('No Object name found');
        return noRelationship(node);
      }
      if (apiGroup === '' && resource === 'serviceaccounts') {
        // Tokens only for the service accounts of Pods bound to the node: none here.
        if (info.verb !== 'create' || !info.name) return noOpinion('can only create tokens for individual service accounts');
        if (info.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
        return noRelationship(node);
      }
      if (apiGroup === coordination && resource === 'leases') {
        if (!['get', 'create', 'update', 'patch', 'delete'].includes(info.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
        if (info.namespace !== leaseNamespace) return noOpinion(`can only access leases in the ${JSON.stringify(leaseNamespace)} system namespace`);
        // A create names no object yet: NodeRestriction checks the new Lease's name.
        if (info.verb !== 'create' && info.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
        return ALLOW;
      }
    }
    for (const r of rules) if (ruleAllows(info, r)) return ALLOW;
    return NO_OPINION;
  };
  return { authorize: async (attrs) => decide(attrs), known: decide };
}
