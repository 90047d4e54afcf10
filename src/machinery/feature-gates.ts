// Feature gates: the known gates with their stage and default, and `--feature-gates` parsing.

interface GateSpec {
  default: boolean;
  stage: 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';
  /** The gate can no longer be changed: setting it to anything but its default fails. */
  locked?: boolean;
}

/**
 * Every gate the server knows, at its stage in the release the server follows (Kubernetes 1.36):
 * the gates of what it implements, including the GA ones now locked on (they can be named, only
 * as their default, with a warning) until their removal.
 */
const KNOWN_GATES: Record<string, GateSpec> = {
  APIResponseCompression: { default: true, stage: 'BETA' },
  AllowUnsafeMalformedObjectDeletion: { default: false, stage: 'ALPHA' },
  AnonymousAuthConfigurableEndpoints: { default: true, stage: 'GA', locked: true },
  // The API contract names it an alpha gate (Kubernetes made it GA in 1.34): the contract decides.
  AuthorizeWithSelectors: { default: false, stage: 'ALPHA' },
  BtreeWatchCache: { default: true, stage: 'GA', locked: true },
  CBORServingAndStorage: { default: false, stage: 'ALPHA' },
  ConsistentListFromCache: { default: true, stage: 'GA', locked: true },
  CoordinatedLeaderElection: { default: false, stage: 'BETA' },
  DeclarativeValidation: { default: true, stage: 'BETA' },
  DeclarativeValidationTakeover: { default: false, stage: 'BETA' },
  ListFromCacheSnapshot: { default: true, stage: 'BETA' },
  ResilientWatchCacheInitialization: { default: true, stage: 'GA', locked: true },
  RetryGenerateName: { default: true, stage: 'GA', locked: true },
  SeparateCacheWatchRPC: { default: false, stage: 'DEPRECATED' },
  StreamingCollectionEncodingToJSON: { default: true, stage: 'GA', locked: true },
  StreamingCollectionEncodingToProtobuf: { default: true, stage: 'GA', locked: true },
  StructuredAuthenticationConfiguration: { default: true, stage: 'GA', locked: true },
  StructuredAuthorizationConfiguration: { default: true, stage: 'GA', locked: true },
  TaintTolerationComparisonOperators: { default: false, stage: 'ALPHA' },
  WatchFromStorageWithoutResourceVersion: { default: false, stage: 'DEPRECATED', locked: true },
  WatchList: { default: true, stage: 'BETA' },
};

/** Each known gate with its stage (as `kubernetes_feature_enabled` labels it: GA is the empty stage) and its value in `gates`. */
export function featureGateStates(gates: FeatureGates): { name: string; stage: string; enabled: boolean }[] {
  return Object.entries(KNOWN_GATES).map(([name, spec]) => ({ name, stage: spec.stage === 'GA' ? '' : spec.stage, enabled: gates[name] ?? spec.default }));
}

export type FeatureGates = Readonly<Record<string, boolean>>;

/**
 * Parse `A=true,B=false` over the defaults; unknown gates, bad values and a locked gate set to
 * anything but its default are errors, as in kube-apiserver. Naming a GA or deprecated gate is
 * reported through `warn` in kube-apiserver's words.
 */
export function parseFeatureGates(text: string | Record<string, boolean> = '', warn?: (message: string) => void): FeatureGates {
  const gates: Record<string, boolean> = Object.fromEntries(Object.entries(KNOWN_GATES).map(([k, v]) => [k, v.default]));
  const entries = typeof text === 'string' ? text.split(',').filter(Boolean).map((p) => p.split('=')) : Object.entries(text).map(([k, v]) => [k, String(v)]);
  for (const [k, v] of entries) {
    const name = (k ?? '').trim();
    if (name === 'AllAlpha' || name === 'AllBeta') {
      if (v !== 'true' && v !== 'false') throw new Error(`invalid value of ${name}=${v ?? ''}, err: invalid boolean`);
      for (const [g, s] of Object.entries(KNOWN_GATES)) if (!s.locked && s.stage === (name === 'AllAlpha' ? 'ALPHA' : 'BETA')) gates[g] = v === 'true';
      continue;
    }
    const spec = KNOWN_GATES[name];
    if (!spec || !Object.hasOwn(KNOWN_GATES, name)) throw new Error(`unrecognized feature gate: ${name}`);
    if (v !== 'true' && v !== 'false') throw new Error(`invalid value of ${name}=${v ?? ''}, err: invalid boolean`);
    const value = v === 'true';
    if (spec.locked && value !== spec.default) throw new Error(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
    if (spec.stage === 'GA') warn?.(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    if (spec.stage === 'DEPRECATED') warn?.(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
    gates[name] = value;
  }
  return gates;
}
