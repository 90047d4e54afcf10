// Which kinds this server serves: the built-in definitions less the group versions and resources
// `--runtime-config` turns off, plus any definitions the embedder adds (tests).

import type { Naming } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { Storage } from '../storage/interface.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { builtinKinds, registeredVersions } from '../registry/kinds/index.ts';
import { enabledByDefault, expandVersions } from '../registry/versions.ts';
import type { RbacWriteGuard } from '../registry/kinds/rbac.ts';
import type { TokenIssuer } from '../registry/kinds/token-request.ts';
import type { TokenReviewer } from '../registry/kinds/authentication.ts';
import type { AccessReviewer } from '../registry/kinds/authorization.ts';

/** kube-apiserver's keys for every version of a level, in the order they apply (later ones win). */
const LEVEL_KEYS: readonly (readonly [string, (version: string) => boolean])[] = [
  ['api/all', () => true],
  ['api/ga', (v) => /^v\d+$/.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
];

/** Go's strconv.ParseBool, with an empty value meaning true (`--runtime-config=batch/v2alpha1`). */
function flagBool(key: string, value: string): boolean {
  if (value === '' || ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

/**
 * Parse `--runtime-config` as kube-apiserver does: `api/all`, then `api/ga`, `api/beta` and
 * `api/alpha` set every version of their level; a `<group>/<version>` key (`api/v1` for the core
 * group) overrides them, and a `<group>/<version>/<resource>` key overrides its version's. A key
 * naming a group or version the server does not know, or a value that is not a boolean, is an
 * error. `registered`: group versions Kubernetes still knows but no longer serves anything at
 * (rbac v1beta1): their keys are accepted and turn nothing on.
 */
function runtimeConfig(text: string | undefined, defs: readonly KindDefinition[], registered: readonly string[]): (d: KindDefinition) => boolean {
  const pairs = new Map<string, string>();
  for (const pair of (text ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    pairs.set((at < 0 ? pair : pair.slice(0, at)).trim(), at < 0 ? '' : pair.slice(at + 1).trim());
  }
  if (pairs.size === 1 && pairs.get('api/all') === 'false') throw new Error('invalid key with only api/all=false');
  const levels: (readonly [(version: string) => boolean, boolean])[] = [];
  for (const [key, matches] of LEVEL_KEYS) {
    const value = pairs.get(key);
    if (value === undefined) continue;
    if (value !== '' && value !== 'true' && value !== 'false') throw new Error(`invalid value ${key}=${value}`);
    levels.push([matches, value !== 'false']);
  }
  const groups = new Set([...defs.map((d) => d.group), ...registered.map((gv) => (gv.includes('/') ? gv.slice(0, gv.lastIndexOf('/')) : ''))]);
  const versions = new Set([...defs.map(apiVersionOf), ...registered]);
  const resources = new Set(defs.map((d) => `${apiVersionOf(d)}/${d.resource}`));
  const versionSettings = new Map<string, boolean>();
  const resourceSettings = new Map<string, boolean>();
  const unknownGroups: string[] = [];
  for (const [key, value] of pairs) {
    if (LEVEL_KEYS.some(([k]) => k === key)) continue;
    const tokens = key.split('/');
    if (tokens.length !== 2 && tokens.length !== 3) throw new Error(`runtime-config invalid key ${key}`);
    const [first, version, resource] = tokens as [string, string, string | undefined];
    // `api/<version>` names the core group, whose apiVersion is the bare version.
    const group = first === 'api' ? '' : first;
    if (!version || /[^a-z0-9]/.test(version) || (group && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(group))) throw new Error(`runtime-config invalid key ${key}`);
    if (!groups.has(group)) {
      unknownGroups.push(first);
      continue;
    }
    const gv = group ? `${group}/${version}` : version;
    if (!versions.has(gv)) throw new Error(`group version ${gv} that has not been registered`);
    const enabled = flagBool(key, value);
    if (resource === undefined) versionSettings.set(gv, enabled);
    else {
      if (resource.toLowerCase() !== resource) throw new Error(`invalid key ${key}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`);
      if (!resources.has(`${gv}/${resource}`) && !registered.includes(gv)) throw new Error(`runtime-config invalid key ${key}: ${gv} has no resource ${resource}`);
      resourceSettings.set(`${gv}/${resource}`, enabled);
    }
  }
  if (unknownGroups.length) throw new Error(`unknown api groups ${unknownGroups.join(',')}`);
  return (d) => {
    const gv = apiVersionOf(d);
    const explicit = resourceSettings.get(`${gv}/${d.resource}`) ?? versionSettings.get(gv);
    if (explicit !== undefined) return explicit;
    let enabled = enabledByDefault(d);
    for (const [matches, value] of levels) if (matches(d.version)) enabled = value;
    return enabled;
  };
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
  const all = expandVersions([...builtin, ...(o.extraKinds ?? [])]);
  return all.filter(runtimeConfig(o.runtimeConfig, all, registeredVersions(o.naming)));
}
