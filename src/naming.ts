// Every identifier that carries the product name, in one place. The default profile is `orch`
// (`*.orch.io`, `orch-system`); the `kubernetes` profile lets clients that hard-code `*.k8s.io`
// names work unmodified. Nothing else in the code base spells a product-named identifier.

export type NamingProfileName = 'orch' | 'kubernetes';

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
  readonly protobufMediaType: string;
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

function profile(profile: NamingProfileName, product: string, domain: string, labelDomain: string, namespaceFinalizer: string): Naming {
  return {
    profile,
    product,
    labelDomain,
    groupSuffix: domain,
    annotationDomain: domain,
    metaGroup: `meta.${domain}`,
    discoveryGroup: `apidiscovery.${domain}`,
    protobufMediaType: `application/vnd.${profile}.protobuf`,
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
  orch: profile('orch', 'orch', 'orch.io', 'orch.io', 'orch'),
  kubernetes: profile('kubernetes', 'kube', 'k8s.io', 'kubernetes.io', 'kubernetes'),
};

export function namingProfile(name: NamingProfileName = 'orch'): Naming {
  const p = profiles[name];
  if (!p) throw new Error(`unknown naming profile ${JSON.stringify(name)}: expected orch or kubernetes`);
  return p;
}
