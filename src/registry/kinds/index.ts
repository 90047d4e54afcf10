// The built-in kinds this server serves, in discovery order.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import type { KindDefinition } from '../definition.ts';
import { apiServiceDefinition } from './api-service.ts';
import { selfSubjectReviewDefinition, tokenReviewDefinition, type TokenReviewer } from './authentication.ts';
import { authorizationKinds, type AccessReviewer } from './authorization.ts';
import { componentStatusDefinition, type ComponentProbe } from './component-status.ts';
import { configMapDefinition } from './config-map.ts';
import { coreEventDefinition } from './core-event.ts';
import { customResourceDefinitionDefinition } from './custom-resource-definition.ts';
import { eventDefinition } from './event.ts';
import { ipAddressDefinition } from './ip-address.ts';
import { leaseCandidateDefinition } from './lease-candidate.ts';
import { leaseDefinition } from './lease.ts';
import { namespaceDefinition } from './namespace.ts';
import { nodeDefinition } from './node.ts';
import { rbacKinds, type RbacWriteGuard } from './rbac.ts';
import { runtimeClassDefinition } from './runtime-class.ts';
import { secretDefinition } from './secret.ts';
import { serviceAccountDefinition } from './service-account.ts';
import { serviceCidrDefinition } from './service-cidr.ts';
import { serviceAccountTokenCreate, type TokenIssuer } from './token-request.ts';

/** What definitions may ask of the running server. */
interface KindEnvironment {
  /** Live health of the components ComponentStatus reports. */
  componentHealth(): Promise<ComponentProbe[]>;
  /** What signs service-account tokens (`serviceaccounts/<name>/token`); absent: no such subresource. */
  tokens?: TokenIssuer;
  /** The server's token authenticators, for TokenReview; absent: no token authenticates. */
  reviewToken?: TokenReviewer;
  /** The server's audiences (`--api-audiences`): a TokenReview without audiences is for these. */
  apiAudiences?: readonly string[];
  /** Checks writes of roles and bindings by users (escalation); absent: none is refused. */
  rbacGuard?: RbacWriteGuard;
  /** The server's authorizer and rule resolvers, for the access reviews; absent: nothing is allowed. */
  accessReviews?: AccessReviewer;
}

/**
 * A review kind also at the other profiles' spelling of its group, unlisted (kubectl hard-codes
 * `authentication.k8s.io` for `auth whoami`): each answers in the spelling it was asked in.
 */
function inEverySpelling(def: KindDefinition, naming: Naming): KindDefinition[] {
  const name = def.group.slice(0, def.group.length - naming.groupSuffix.length - 1);
  return [def, ...naming.wire.groupDomains.filter((d) => d !== naming.groupSuffix).map((d) => ({ ...def, group: `${name}.${d}`, unlisted: true }))];
}

/** Definitions get the naming profile and the feature gates (fields behind a disabled gate are dropped). */
export function builtinKinds(naming: Naming, gates: FeatureGates, env: KindEnvironment): KindDefinition[] {
  return [
    namespaceDefinition(naming),
    componentStatusDefinition(() => env.componentHealth()),
    nodeDefinition(naming),
    coreEventDefinition(naming, gates),
    configMapDefinition(),
    secretDefinition(naming),
    serviceAccountDefinition(env.tokens && serviceAccountTokenCreate(naming, env.tokens)),
    leaseDefinition(naming, gates),
    leaseCandidateDefinition(naming, gates),
    eventDefinition(naming, gates),
    ipAddressDefinition(naming, gates),
    serviceCidrDefinition(naming, gates),
    runtimeClassDefinition(naming, gates),
    apiServiceDefinition(naming),
    customResourceDefinitionDefinition(naming),
    ...rbacKinds(naming, { guard: env.rbacGuard }),
    ...inEverySpelling(selfSubjectReviewDefinition(naming), naming),
    tokenReviewDefinition(naming, env.reviewToken, env.apiAudiences ?? []),
    ...authorizationKinds(naming, env.accessReviews).flatMap((d) => inEverySpelling(d, naming)),
  ];
}

/**
 * Group versions of the built-in groups that Kubernetes still registers but serves nothing at any
 * more (the contract's removed versions, and alpha versions whose kinds moved on): `--runtime-config`
 * accepts their keys, and their paths answer 404.
 */
export function registeredVersions(naming: Naming): string[] {
  return [
    `${naming.group('events')}/v1beta1`,
    `${naming.group('node')}/v1beta1`,
    `${naming.group('node')}/v1alpha1`,
    `${naming.group('apiregistration')}/v1beta1`,
    `${naming.group('authentication')}/v1beta1`,
    `${naming.group('authorization')}/v1beta1`,
    `${naming.group('rbac.authorization')}/v1beta1`,
    `${naming.group('rbac.authorization')}/v1alpha1`,
    `${naming.group('networking')}/v1beta1`,
    `${naming.group('coordination')}/v1alpha1`,
  ];
}
