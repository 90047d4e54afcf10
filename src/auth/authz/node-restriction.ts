// NodeRestriction: the admission step that keeps a node agent to its own objects, as kube-apiserver's
// plugin of that name does for the kinds served here. It applies to users the Node authorizer
// knows as nodes (`system:node:<name>` in `system:nodes`) and lets every other write through.
//
// - Node: a node creates, updates and deletes only the Node of its own name. It may not create
//   itself with a configSource nor set a new one, may not change its taints, and may not set,
//   change or remove labels of the Kubernetes domains (the profile's label domain, and
//   kubernetes.io / k8s.io) other than the ones a kubelet sets itself (hostname, os, arch,
//   zone, region, instance type and the kubelet. / node. label domains); labels under
//   `node-restriction.<label domain>/` are never its to touch.
// - Lease: only in the node lease namespace, and only the Lease named as the node.
// - Event: only about itself (involvedObject / regarding names its Node). kube's plugin leaves
//   Events alone; the spec limits a node's events to itself and the Pods bound to it, and with no
//   Pods served that is its own Node.
//
// kube-apiserver runs the plugin only when `--enable-admission-plugins` names it; this server runs
// it whenever the Node authorization mode is on, since the mode alone lets a node write every Node.

import { isDeepStrictEqual } from 'node:util';
import type { KObject } from '../../machinery/meta.ts';
import { errors } from '../../machinery/status.ts';
import type { Naming } from '../../naming.ts';
import type { Admission } from '../../registry/admission.ts';
import type { UserInfo } from '../../request/user.ts';
import { nodeIdentity } from './node.ts';

type Qualified = { group: string; resource: string };

/** The label key's domain: what comes before the `/` (empty without one). */
const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

/** Keys whose values differ between the two label maps (added, changed or removed). */
function modifiedLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].filter((k) => a?.[k] !== b?.[k]);
}

/** Absent, null and empty lists are the same (Go's semantic equality). */
const sameList = (a: unknown, b: unknown): boolean => {
  const norm = (v: unknown) => (Array.isArray(v) && v.length ? v : undefined);
  return isDeepStrictEqual(norm(a), norm(b));
};

interface NodeSpec {
  configSource?: unknown;
  taints?: unknown;
}
const specOf = (o: KObject): NodeSpec => (o.spec && typeof o.spec === 'object' ? (o.spec as NodeSpec) : {});

/** The labels a node may not set, change or remove on itself (kube's getForbiddenLabels). */
function forbiddenLabelCheck(naming: Naming): (keys: readonly string[]) => string[] {
  const domains = [...new Set([naming.labelDomain, naming.annotationDomain, 'kubernetes.io', 'k8s.io'])];
  const labelDomains = [...new Set([naming.labelDomain, 'kubernetes.io'])];
  const restricted = labelDomains.map((d) => `node-restriction.${d}`);
  // kubeletapis.IsKubeletLabel, in each spelling of the label domain.
  const kubeletLabels = new Set(
    labelDomains.flatMap((d) => [
      `${d}/hostname`,
      `topology.${d}/zone`,
      `topology.${d}/region`,
      `failure-domain.beta.${d}/zone`,
      `failure-domain.beta.${d}/region`,
      `beta.${d}/instance-type`,
      `node.${d}/instance-type`,
      `${d}/os`,
      `${d}/arch`,
      `beta.${d}/os`,
      `beta.${d}/arch`,
    ]),
  );
  const kubeletNamespaces = labelDomains.flatMap((d) => [`kubelet.${d}`, `node.${d}`]);
  const isKubeletLabel = (k: string) => kubeletLabels.has(k) || kubeletNamespaces.some((d) => inDomain(labelNamespace(k), d));
  return (keys) =>
    keys
      .filter((k) => {
        const ns = labelNamespace(k);
        if (restricted.some((d) => inDomain(ns, d))) return true;
        return domains.some((d) => inDomain(ns, d)) && !isKubeletLabel(k);
      })
      .sort();
}

/** Whether an Event (core or events group) is about the Node `node`. */
function aboutNode(o: KObject, node: string): boolean {
  const e = o as KObject & { involvedObject?: { kind?: unknown; name?: unknown } | null; regarding?: { kind?: unknown; name?: unknown } | null };
  const ref = e.involvedObject ?? e.regarding;
  return !!ref && ref.kind === 'Node' && ref.name === node;
}

/** The NodeRestriction admission step for `naming`'s server. */
export function nodeRestriction(naming: Naming): Admission {
  const forbiddenLabels = forbiddenLabelCheck(naming);
  const coordination = naming.group('coordination');
  const events = new Set(['', naming.group('events')]);
  const leaseNamespace = naming.nodeLeaseNamespace;
  type Store = { def: { group: string; resource: string }; qualified: Qualified };
  type Op = 'create' | 'update' | 'delete';
  interface Check {
    store: Store;
    op: Op;
    name: string;
    namespace: string | undefined;
    user: UserInfo | undefined;
    object?: () => KObject;
    old?: () => KObject;
  }

  const admit = (c: Check): void => {
    if (!c.user) return;
    const node = nodeIdentity(c.user);
    if (node === undefined) return;
    const refuse = (why: string) => errors.forbidden(c.store.qualified, c.name, why);
    if (!node) throw refuse(`could not determine node from user ${JSON.stringify(c.user.name)}`);
    const { group, resource } = c.store.def;
    if (group === '' && resource === 'nodes') {
      if (c.name !== node) throw refuse(`node ${JSON.stringify(node)} is not allowed to modify node ${JSON.stringify(c.name)}`);
      if (c.op === 'create') {
        const obj = c.object!();
        if (specOf(obj).configSource != null) throw refuse(`node ${JSON.stringify(node)} is not allowed to create pods with a non-nil configSource`);
        const bad = forbiddenLabels(modifiedLabels(obj.metadata.labels, undefined));
        if (bad.length) throw refuse(`node ${JSON.stringify(node)} is not allowed to set the following labels: ${bad.join(', ')}`);
      } else if (c.op === 'update') {
        const obj = c.object!();
        const old = c.old!();
        const source = specOf(obj).configSource;
        if (source != null && !isDeepStrictEqual(source, specOf(old).configSource)) throw refuse(`node ${JSON.stringify(node)} is not allowed to update configSource to a new non-nil configSource`);
        if (!sameList(specOf(obj).taints, specOf(old).taints)) throw refuse(`node ${JSON.stringify(node)} is not allowed to modify taints`);
        const bad = forbiddenLabels(modifiedLabels(obj.metadata.labels, old.metadata.labels));
        if (bad.length) throw refuse(`is not allowed to modify labels: ${bad.join(', ')}`);
      }
      return;
    }
    if (group === coordination && resource === 'leases') {
      if (c.namespace !== leaseNamespace) throw refuse(`can only access leases in the ${JSON.stringify(leaseNamespace)} system namespace`);
      if (c.name !== node) throw refuse('can only access node lease with the same name as the requesting node');
      return;
    }
    if (events.has(group) && resource === 'events' && c.op !== 'delete') {
      if (!aboutNode(c.object!(), node)) throw refuse(`node ${JSON.stringify(node)} can only create events about itself`);
    }
  };

  return {
    async admitCreate(store, w) {
      admit({ store, op: 'create', name: w.name, namespace: w.namespace, user: w.user, object: w.object });
    },
    async admitUpdate(store, w) {
      admit({ store, op: 'update', name: w.name, namespace: w.namespace, user: w.user, object: w.object, old: w.oldObject });
    },
    async admitDelete(store, obj, user) {
      admit({ store, op: 'delete', name: obj.metadata.name ?? '', namespace: obj.metadata.namespace, user });
    },
  };
}
