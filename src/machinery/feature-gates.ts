// Feature gates: the known gates with their stage and default, and `--feature-gates` parsing.

interface GateSpec {
  default: boolean;
  stage: 'ALPHA' | 'BETA' | 'GA';
}

const KNOWN_GATES: Record<string, GateSpec> = {
  APIResponseCompression: { default: true, stage: 'BETA' },
  CBORServingAndStorage: { default: false, stage: 'ALPHA' },
  WatchList: { default: true, stage: 'BETA' },
  ConsistentListFromCache: { default: true, stage: 'BETA' },
  ListFromCacheSnapshot: { default: true, stage: 'BETA' },
  DeclarativeValidation: { default: true, stage: 'BETA' },
  DeclarativeValidationTakeover: { default: false, stage: 'BETA' },
  AllowUnsafeMalformedObjectDeletion: { default: false, stage: 'ALPHA' },
  CoordinatedLeaderElection: { default: false, stage: 'BETA' },
  TaintTolerationComparisonOperators: { default: false, stage: 'ALPHA' },
  AuthorizeWithSelectors: { default: false, stage: 'ALPHA' },
};

export type FeatureGates = Readonly<Record<string, boolean>>;

/** Parse `A=true,B=false` over the defaults; unknown gates and bad values are errors. */
export function parseFeatureGates(text: string | Record<string, boolean> = ''): FeatureGates {
  const gates: Record<string, boolean> = Object.fromEntries(Object.entries(KNOWN_GATES).map(([k, v]) => [k, v.default]));
  const entries = typeof text === 'string' ? text.split(',').filter(Boolean).map((p) => p.split('=')) : Object.entries(text).map(([k, v]) => [k, String(v)]);
  for (const [k, v] of entries) {
    const name = (k ?? '').trim();
    if (name === 'AllAlpha' || name === 'AllBeta') {
      for (const [g, s] of Object.entries(KNOWN_GATES)) if (s.stage === (name === 'AllAlpha' ? 'ALPHA' : 'BETA')) gates[g] = v === 'true';
      continue;
    }
    if (!(name in KNOWN_GATES)) throw new Error(`unrecognized feature gate: ${name}`);
    if (v !== 'true' && v !== 'false') throw new Error(`invalid value of ${name}=${v ?? ''}, err: invalid boolean`);
    gates[name] = v === 'true';
  }
  return gates;
}
