// Every identifier that carries the product name, in one place. The default profile is `orch`
// (`*.orch.io`, `orch-system`); the `kubernetes` profile lets clients that hard-code `*.k8s.io`
// names work unmodified. Nothing else in the code base spells a product-named identifier.

export type NamingProfileName = 'orch' | 'kubernetes';

interface WireNames {
  /** `application/vnd.orch.protobuf`, `application/vnd.kubernetes.protobuf`. */
  readonly protobufMediaTypes: readonly string[];
  /** The group of `as=Table` / `as=PartialObjectMetadata(List)` media-type parameters: `meta.orch.io`, `meta.k8s.io`. */
  readonly metaGroups: readonly string[];
  /**
   * The group domains (`orch.io`, `k8s.io`): kubectl hard-codes the review endpoints of
   * `authentication.k8s.io` and `authorization.k8s.io`, so they are served in every spelling.
   */
  readonly groupDomains: readonly string[];
}

export interface Naming {
  readonly profile: NamingProfileName;
  /** The product segment: `orch` or `kube`. */
  readonly product: string;
  /** Group suffix of the built-in named groups: `orch.io` / `k8s.io`. */
  readonly groupSuffix: string;
  /** Domain of well-known annotations and labels: `orch.io` / `k8s.io`. */
  readonly annotationDomain: string;
  /** The group of Table, PartialObjectMetadata, ListOptions …: `meta.orch.io`. */
  readonly metaGroup: string;
  /** The aggregated discovery group: `apidiscovery.orch.io`. */
  readonly discoveryGroup: string;
  /** The profile's own protobuf media type: the first of `wire.protobufMediaTypes`. */
  readonly protobufMediaType: string;
  /**
   * Wire-level names Kubernetes clients hard-code (kubectl has no setting for them), in every
   * profile's spelling, this profile's first: requests may use any of them and are answered in the
   * one they used (docs/wire-names.md). Messages name the first.
   */
  readonly wire: WireNames;
  readonly systemNamespace: string;
  readonly publicNamespace: string;
  readonly nodeLeaseNamespace: string;
  /** The finalizer a namespace carries in `spec.finalizers`: the product's name (`orch`, `kubernetes`). */
  readonly namespaceFinalizer: string;
  /** A built-in group name: `group('coordination')` → `coordination.orch.io`. */
  group(name: string): string;
  /**
   * Domain of the well-known labels Kubernetes spells with `kubernetes.io` (`node-role.kubernetes.io/…`,
   * `kubernetes.io/hostname`): `orch.io` / `kubernetes.io`.
   */
  readonly labelDomain: string;
  /** A well-known annotation or label key: `annotation('initial-events-end')` → `orch.io/initial-events-end`. */
  annotation(name: string): string;
  /** The name the server reports in /version and its User-Agent. */
  readonly serverName: string;
}

/** Each profile's group domain: the source of every spelling of the wire-level names. */
const DOMAINS: Record<NamingProfileName, string> = { orch: 'orch.io', kubernetes: 'k8s.io' };

const protobufMediaTypeOf = (profile: NamingProfileName) => `application/vnd.${profile}.protobuf`;

/** The wire-level names of every profile, `own`'s spelling first. */
function wireNames(own: NamingProfileName): WireNames {
  const order = [own, ...(Object.keys(DOMAINS) as NamingProfileName[]).filter((p) => p !== own)];
  return { protobufMediaTypes: order.map(protobufMediaTypeOf), metaGroups: order.map((p) => `meta.${DOMAINS[p]}`), groupDomains: order.map((p) => DOMAINS[p]) };
}

function profile(profile: NamingProfileName, product: string, labelDomain: string, namespaceFinalizer: string): Naming {
  const domain = DOMAINS[profile];
  return {
    profile,
    product,
    labelDomain,
    groupSuffix: domain,
    annotationDomain: domain,
    metaGroup: `meta.${domain}`,
    discoveryGroup: `apidiscovery.${domain}`,
    protobufMediaType: protobufMediaTypeOf(profile),
    wire: wireNames(profile),
    systemNamespace: `${product}-system`,
    publicNamespace: `${product}-public`,
    nodeLeaseNamespace: `${product}-node-lease`,
    namespaceFinalizer,
    group: (name) => `${name}.${domain}`,
    annotation: (name) => `${domain}/${name}`,
    serverName: 'orch-apiserver',
  };
}

const profiles: Record<NamingProfileName, Naming> = {
  orch: profile('orch', 'orch', 'orch.io', 'orch'),
  kubernetes: profile('kubernetes', 'kube', 'kubernetes.io', 'kubernetes'),
};

export function namingProfile(name: NamingProfileName = 'orch'): Naming {
  const p = profiles[name];
  if (!p) throw new Error(`unknown naming profile ${JSON.stringify(name)}: expected orch or kubernetes`);
  return p;
}
