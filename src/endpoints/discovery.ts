// Discovery documents derived from the kind definitions: the legacy /api, /apis, /api/v1 and
// /apis/<g>/<v> forms, and aggregated discovery v2 when the client asks for it.

import type { Naming } from '../naming.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { parseAccept } from '../negotiation/negotiate.ts';
import { storageVersionHash } from '../registry/versions.ts';
import { builtinPriority, sortByPriority, type ApiPriority } from '../registry/api-priorities.ts';

export interface GroupVersion {
  group: string;
  version: string;
  kinds: KindDefinition[];
}

/**
 * Group versions in discovery order: by their APIService priorities, as the aggregator sorts them.
 * `registered` gives the priorities of the APIService objects as they are now; without one a
 * group version takes Kubernetes' built-in priority.
 */
export function groupVersions(defs: readonly KindDefinition[], naming: Naming, registered?: (group: string, version: string) => ApiPriority | undefined): GroupVersion[] {
  const map = new Map<string, GroupVersion & { priority: ApiPriority }>();
  for (const d of defs) {
    if (d.unlisted) continue;
    const key = apiVersionOf(d);
    if (!map.has(key))
      map.set(key, { group: d.group, version: d.version, kinds: [], priority: registered?.(d.group, d.version) ?? builtinPriority(naming, d.group, d.version) ?? DEFAULT_PRIORITY });
    map.get(key)!.kinds.push(d);
  }
  return sortByPriority([...map.values()]).map(({ priority: _p, ...gv }) => gv);
}

/** Group versions without a built-in priority (custom resources later) sort as Kubernetes sorts CRD groups. */
const DEFAULT_PRIORITY: ApiPriority = { groupPriorityMinimum: 1000, versionPriority: 100 };

export function apiVersions(host: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }] };
}

function apiGroup(gvs: GroupVersion[]) {
  const versions = gvs.map((gv) => ({ groupVersion: `${gv.group}/${gv.version}`, version: gv.version }));
  return { name: gvs[0]!.group, versions, preferredVersion: versions[0] };
}

export function apiGroupList(all: GroupVersion[]): unknown {
  const byGroup = new Map<string, GroupVersion[]>();
  for (const gv of all) if (gv.group) byGroup.set(gv.group, [...(byGroup.get(gv.group) ?? []), gv]);
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...byGroup.values()].map(apiGroup) };
}

export function apiGroupDocument(all: GroupVersion[], group: string): unknown | undefined {
  const gvs = all.filter((gv) => gv.group === group);
  if (!gvs.length || !group) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(gvs) };
}

export function apiResourceList(gv: GroupVersion): unknown {
  const resources: unknown[] = [];
  for (const d of gv.kinds) {
    resources.push({
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: [...d.verbs].sort(),
      ...(d.shortNames?.length ? { shortNames: d.shortNames } : {}),
      ...(d.categories?.length ? { categories: d.categories } : {}),
      // Only resources kept in storage have one (not computed or review kinds), as in kube-apiserver.
      ...(d.computed || d.review ? {} : { storageVersionHash: storageVersionHash(d) }),
    });
    for (const s of d.subresources ?? [])
      resources.push({
        name: `${d.resource}/${s.name}`,
        singularName: '',
        namespaced: d.namespaced,
        // A subresource served as another kind names its group and version (a Scale's autoscaling/v1).
        ...(s.view ? { group: s.view.def.group, version: s.view.def.version, kind: s.view.def.kind } : { kind: d.kind }),
        verbs: [...s.verbs].sort(),
      });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(gv), resources };
}

/** The aggregated discovery media type the client asked for, if it asked for one we serve. */
export function aggregatedDiscoveryRequested(naming: Naming, accept: string | undefined): string | undefined {
  for (const m of parseAccept(accept)) {
    if (m.type !== 'application' || m.subtype !== 'json') continue;
    if (m.params.as === 'APIGroupDiscoveryList' && m.params.g === naming.discoveryGroup && (m.params.v === 'v2' || m.params.v === 'v2beta1'))
      return `application/json;g=${naming.discoveryGroup};v=${m.params.v};as=APIGroupDiscoveryList`;
    if (!m.params.as) return undefined;
  }
  return undefined;
}

export function aggregatedDiscovery(naming: Naming, all: GroupVersion[], legacy: boolean, version: string): unknown {
  const byGroup = new Map<string, GroupVersion[]>();
  for (const gv of all) if ((gv.group === '') === legacy) byGroup.set(gv.group, [...(byGroup.get(gv.group) ?? []), gv]);
  const items = [...byGroup.entries()].map(([group, gvs]) => ({
    metadata: group ? { name: group, creationTimestamp: null } : { creationTimestamp: null },
    versions: gvs.map((gv) => ({
      version: gv.version,
      resources: gv.kinds.map((d) => ({
        resource: d.resource,
        responseKind: { group: d.group, version: d.version, kind: d.kind },
        scope: d.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: d.singular,
        verbs: [...d.verbs].sort(),
        ...(d.shortNames?.length ? { shortNames: d.shortNames } : {}),
        ...(d.categories?.length ? { categories: d.categories } : {}),
        ...(d.subresources?.length
          ? { subresources: d.subresources.map((s) => ({ subresource: s.name, responseKind: s.view ? { group: s.view.def.group, version: s.view.def.version, kind: s.view.def.kind } : { group: d.group, version: d.version, kind: d.kind }, verbs: [...s.verbs].sort() })) }
          : {}),
      })),
      freshness: 'Current',
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `${naming.discoveryGroup}/${version}`, metadata: {}, items };
}
