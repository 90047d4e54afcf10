// Node validation as Kubernetes' ValidateNode / ValidateNodeUpdate: taints, pod CIDRs, the
// provider ID, the (deprecated) config source, resources, conditions, and on update which fields
// may change at all.

import { child, fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { isPlainObject, labelValue, qualifiedName, type KObject } from '../../machinery/meta.ts';
import { validateConditions } from '../../machinery/validation.ts';
import { dns1123Label, dns1123Subdomain } from '../../machinery/meta.ts';
import { cidrFamily, validateCIDR } from '../../machinery/ip.ts';
import { validateResourceQuantity } from '../../machinery/resources.ts';
import type { Naming } from '../../naming.ts';

interface ConfigMapSource {
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  kubeletConfigKey?: string;
}
interface ConfigSource {
  configMap?: ConfigMapSource;
}
interface Taint {
  key?: string;
  value?: string;
  effect?: string;
}
interface NodeObject extends KObject {
  spec?: { podCIDR?: string; podCIDRs?: string[]; providerID?: string; taints?: Taint[]; configSource?: ConfigSource; externalID?: string; unschedulable?: boolean };
  status?: { capacity?: Record<string, string | number>; allocatable?: Record<string, string | number>; conditions?: unknown[]; config?: { active?: ConfigSource; assigned?: ConfigSource; lastKnownGood?: ConfigSource } };
}

/** A provider ID is `<ProviderName>://<ProviderSpecificNodeID>`. */
const PROVIDER_ID = /^[^:/\s]+:\/\/\S*$/;

/** A config map key: letters, digits, `-`, `_` and `.`, at most 253 characters, not `.` or `..`. */
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;

export function validateNode(o: KObject, n: Naming): FieldError[] {
  const node = o as NodeObject;
  const errs: FieldError[] = [];
  const spec = node.spec ?? {};
  for (const x of validatePodCidrs(spec.podCIDRs)) errs.push(x);
  for (const list of ['capacity', 'allocatable'] as const) {
    const resources = node.status?.[list];
    if (isPlainObject(resources)) for (const [name, v] of Object.entries(resources)) for (const x of validateResourceQuantity(name, v, `status.${list}.${name}`, n)) errs.push(x);
  }
  for (const x of validateTaints(spec.taints, 'spec.taints')) errs.push(x);
  if (spec.providerID && !PROVIDER_ID.test(spec.providerID))
    errs.push(fieldError.invalid('spec.providerID', spec.providerID, 'must be of the form <ProviderName>://<ProviderSpecificNodeID>'));
  if (spec.configSource) for (const x of validateConfigSource(spec.configSource, 'spec.configSource', 'spec')) errs.push(x);
  const config = node.status?.config;
  if (config) for (const k of ['active', 'assigned', 'lastKnownGood'] as const) if (config[k]) for (const x of validateConfigSource(config[k], `status.config.${k}`, 'status')) errs.push(x);
  for (const x of validateConditions(node.status?.conditions, 'status.conditions')) errs.push(x);
  return errs;
}

/** Valid CIDRs, no repeats, and more than one only as a dual-stack pair. */
function validatePodCidrs(cidrs: string[] | undefined): FieldError[] {
  if (!Array.isArray(cidrs) || cidrs.length === 0) return [];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => {
    for (const m of validateCIDR(c)) errs.push(fieldError.invalid(`spec.podCIDRs[${i}]`, c, m));
  });
  if (cidrs.length > 1) {
    const families = cidrs.map(cidrFamily);
    if (cidrs.length > 2 || families[0] === undefined || families[0] === families[1])
      errs.push(fieldError.invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
  }
  const seen = new Set<string>();
  cidrs.forEach((c, i) => {
    if (seen.has(c)) errs.push(fieldError.duplicate(`spec.podCIDRs[${i}]`, c));
    seen.add(c);
  });
  return errs;
}

export function validateNodeUpdate(o: KObject, oldObj: KObject, n: Naming): FieldError[] {
  const node = o as NodeObject;
  const old = oldObj as NodeObject;
  const errs = validateNode(node, n);
  const spec = node.spec ?? {};
  const oldSpec = old.spec ?? {};
  // Pod CIDRs are set once: from none to some, never changed afterwards.
  const oldCidrs = oldSpec.podCIDRs ?? [];
  if (oldCidrs.length > 0) {
    const cidrs = spec.podCIDRs ?? [];
    if (cidrs.length !== oldCidrs.length || cidrs.some((c, i) => c !== oldCidrs[i]))
      errs.push(fieldError.forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  if (oldSpec.providerID && oldSpec.providerID !== spec.providerID)
    errs.push(fieldError.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  // Everything else in spec that is not a taint, the schedulability, a pod CIDR, the provider ID
  // or the config source is fixed.
  const rest = (s: NodeObject['spec']) => {
    const { taints: _t, unschedulable: _u, podCIDR: _p, podCIDRs: _ps, providerID: _id, configSource: _c, ...others } = s ?? {};
    return JSON.stringify(others);
  };
  if (rest(spec) !== rest(oldSpec)) errs.push(fieldError.forbidden('', 'node updates may only change labels, taints, or capacity (or configSource, if the DynamicKubeletConfig feature gate is enabled)'));
  return errs;
}

function validateTaints(taints: Taint[] | undefined, path: string): FieldError[] {
  if (!Array.isArray(taints)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    if (typeof t !== 'object' || t === null || Array.isArray(t)) return;
    const at = child(path, i);
    if (!t.key) errs.push(fieldError.required(child(at, 'key')));
    else for (const m of qualifiedName(t.key)) errs.push(fieldError.invalid(child(at, 'key'), t.key, m));
    if (t.value) for (const m of labelValue(t.value)) errs.push(fieldError.invalid(child(at, 'value'), t.value, m));
    if (!t.effect) errs.push(fieldError.required(child(at, 'effect')));
    const id = `${t.key ?? ''}\0${t.effect ?? ''}`;
    if (seen.has(id)) errs.push(fieldError.duplicate(at, { key: t.key, effect: t.effect }));
    seen.add(id);
  });
  return errs;
}

/** A config source names exactly one reference; `uid` and `resourceVersion` are forbidden in spec and required in status. */
function validateConfigSource(src: ConfigSource, path: string, where: 'spec' | 'status'): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(src.configMap)) return [fieldError.invalid(path, src, 'exactly one reference subfield must be non-nil')];
  const cm = src.configMap as ConfigMapSource;
  const at = child(path, 'configMap');
  if (!cm.namespace) errs.push(fieldError.required(child(at, 'namespace'), 'namespace must be set'));
  else for (const m of dns1123Label(cm.namespace)) errs.push(fieldError.invalid(child(at, 'namespace'), cm.namespace, m));
  if (!cm.name) errs.push(fieldError.required(child(at, 'name'), 'name must be set'));
  else for (const m of dns1123Subdomain(cm.name)) errs.push(fieldError.invalid(child(at, 'name'), cm.name, m));
  if (!cm.kubeletConfigKey) errs.push(fieldError.required(child(at, 'kubeletConfigKey'), 'kubeletConfigKey must be set'));
  else if (cm.kubeletConfigKey.length > 253 || !CONFIG_MAP_KEY.test(cm.kubeletConfigKey) || cm.kubeletConfigKey === '.' || cm.kubeletConfigKey === '..')
    errs.push(fieldError.invalid(child(at, 'kubeletConfigKey'), cm.kubeletConfigKey, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
  if (where === 'spec') {
    if (cm.uid) errs.push(fieldError.forbidden(child(at, 'uid'), 'uid must not be set in spec'));
    if (cm.resourceVersion) errs.push(fieldError.forbidden(child(at, 'resourceVersion'), 'resourceVersion must not be set in spec'));
  } else {
    if (!cm.uid) errs.push(fieldError.required(child(at, 'uid'), 'uid must be set in status'));
    if (!cm.resourceVersion) errs.push(fieldError.required(child(at, 'resourceVersion'), 'resourceVersion must be set in status'));
  }
  return errs;
}
