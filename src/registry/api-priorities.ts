// Where each served group version sorts in discovery: groups by their highest
// groupPriorityMinimum (then by name), versions inside a group by versionPriority (then
// Kubernetes-aware version order). The built-in values are Kubernetes' own, so clients that
// resolve short names and kinds by discovery order pick the same group as on Kubernetes.

import type { Naming } from '../naming.ts';
import type { KObject } from '../machinery/meta.ts';

export interface ApiPriority {
  groupPriorityMinimum: number;
  versionPriority: number;
}

/** Kubernetes' priorities of the built-in group versions this server can serve. */
export function builtinPriority(naming: Naming, group: string, version: string): ApiPriority | undefined {
  const table: Record<string, ApiPriority> = {
    'v1': { groupPriorityMinimum: 18000, versionPriority: 1 },
    [`${naming.group('apiregistration')}/v1`]: { groupPriorityMinimum: 18000, versionPriority: 15 },
    [`${naming.group('events')}/v1`]: { groupPriorityMinimum: 17750, versionPriority: 15 },
    [`${naming.group('authentication')}/v1`]: { groupPriorityMinimum: 17700, versionPriority: 15 },
    [`${naming.group('authorization')}/v1`]: { groupPriorityMinimum: 17600, versionPriority: 15 },
    [`${naming.group('networking')}/v1`]: { groupPriorityMinimum: 17200, versionPriority: 15 },
    [`${naming.group('rbac.authorization')}/v1`]: { groupPriorityMinimum: 17000, versionPriority: 15 },
    [`${naming.group('apiextensions')}/v1`]: { groupPriorityMinimum: 16700, versionPriority: 15 },
    [`${naming.group('coordination')}/v1`]: { groupPriorityMinimum: 16500, versionPriority: 15 },
    [`${naming.group('coordination')}/v1beta1`]: { groupPriorityMinimum: 16500, versionPriority: 13 },
    [`${naming.group('coordination')}/v1alpha2`]: { groupPriorityMinimum: 16500, versionPriority: 12 },
    [`${naming.group('node')}/v1`]: { groupPriorityMinimum: 16300, versionPriority: 15 },
  };
  return table[group ? `${group}/${version}` : version];
}

/** The priorities an APIService object declares; undefined when it has none (or is absent). */
export function apiServicePriority(apiService: KObject | undefined): ApiPriority | undefined {
  const spec = apiService?.spec as { groupPriorityMinimum?: unknown; versionPriority?: unknown } | undefined;
  if (typeof spec?.groupPriorityMinimum !== 'number' || typeof spec.versionPriority !== 'number') return undefined;
  return { groupPriorityMinimum: spec.groupPriorityMinimum, versionPriority: spec.versionPriority };
}

/** The APIService that registers a group version: `v1.` for the core group, `<version>.<group>` otherwise. */
export const apiServiceName = (group: string, version: string): string => `${version}.${group}`;

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes-aware version order (CompareKubeAwareVersionStrings), as a sort comparator: GA
 * before beta before alpha, higher major first, then higher minor; versions of that form before
 * any other string, which sort lexically.
 */
function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma && !mb) return a < b ? -1 : a > b ? 1 : 0;
  if (!ma) return 1;
  if (!mb) return -1;
  const stage = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (stage(ma) !== stage(mb)) return stage(mb) - stage(ma);
  if (Number(ma[1]) !== Number(mb[1])) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

interface Prioritized {
  group: string;
  version: string;
  priority: ApiPriority;
}

/** Sort group versions into discovery order (see the file comment). */
export function sortByPriority<T extends Prioritized>(items: readonly T[]): T[] {
  const groupPriority = new Map<string, number>();
  for (const i of items) groupPriority.set(i.group, Math.max(groupPriority.get(i.group) ?? -Infinity, i.priority.groupPriorityMinimum));
  return [...items].sort((a, b) => {
    if (a.group !== b.group) {
      const d = groupPriority.get(b.group)! - groupPriority.get(a.group)!;
      if (d !== 0) return d;
      return a.group < b.group ? -1 : 1;
    }
    const v = b.priority.versionPriority - a.priority.versionPriority;
    return v !== 0 ? v : compareKubeVersions(a.version, b.version);
  });
}
