// Which kinds this server serves: the built-in definitions less the group versions and resources
// `--runtime-config` turns off, plus any definitions the embedder adds (tests).

import type { Naming } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { Storage } from '../storage/interface.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { builtinKinds } from '../registry/kinds/index.ts';
import type { RbacWriteGuard } from '../registry/kinds/rbac.ts';
import type { TokenIssuer } from '../registry/kinds/token-request.ts';
import type { TokenReviewer } from '../registry/kinds/authentication.ts';
import type { AccessReviewer } from '../registry/kinds/authorization.ts';

/** Parse `--runtime-config` into enabled/disabled group versions. */
function runtimeConfig(text: string | undefined, defs: readonly KindDefinition[]): (d: KindDefinition) => boolean {
  const known = new Set(defs.map(apiVersionOf));
  const settings = new Map<string, boolean>();
  for (const pair of (text ?? '').split(',').filter(Boolean)) {
    const [key, value = 'true'] = pair.split('=');
    const k = key!.trim().replace(/^api\//, '');
    if (value !== 'true' && value !== 'false') throw new Error(`invalid value in --runtime-config ${pair}: must be true or false`);
    if (k !== 'api/all' && k !== 'all' && !known.has(k) && !known.has(k.split('/').slice(0, 2).join('/')))
      throw new Error(`unknown api groups ${k} in --runtime-config`);
    settings.set(k, value === 'true');
  }
  return (d) => settings.get(`${apiVersionOf(d)}/${d.resource}`) ?? settings.get(apiVersionOf(d)) ?? settings.get('all') ?? d.enabledByDefault ?? true;
}

export interface ServedKindsOptions {
  naming: Naming;
  featureGates: FeatureGates;
  /** `--runtime-config` pairs. */
  runtimeConfig: string | undefined;
  /** The name ComponentStatus gives the storage (`etcd-0`). */
  storageComponent: string;
  /** The storage once it is open: the definitions are read before it is. */
  storage(): Storage | undefined;
  /** The server's token authenticators and audiences, for TokenReview. */
  reviewToken?: TokenReviewer;
  apiAudiences?: readonly string[];
  rbacGuard?: RbacWriteGuard;
  /** The server's authorizer and rule resolvers, for the access reviews. */
  accessReviews?: AccessReviewer;
  /** Served beside the built-in definitions, under the same rules. */
  extraKinds?: readonly KindDefinition[];
  /** What signs service-account tokens (TokenRequest). */
  tokens?: TokenIssuer;
}

/** The served definitions; throws on an invalid `--runtime-config`. */
export function servedKinds(o: ServedKindsOptions): KindDefinition[] {
  const builtin = builtinKinds(o.naming, o.featureGates, {
    async componentHealth() {
      const backend = o.storage();
      const h = backend ? await backend.health() : { healthy: false, message: 'storage is not open' };
      return [{ name: o.storageComponent, ...h }];
    },
    tokens: o.tokens,
    reviewToken: o.reviewToken,
    apiAudiences: o.apiAudiences,
    rbacGuard: o.rbacGuard,
    accessReviews: o.accessReviews,
  });
  const all = [...builtin, ...(o.extraKinds ?? [])];
  return all.filter(runtimeConfig(o.runtimeConfig, all));
}
