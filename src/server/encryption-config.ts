// `--encryption-provider-config`: an EncryptionConfiguration (`apiserver.config.k8s.io/v1`, or the
// profile's own group) saying which resources are encrypted at rest and with which providers, read
// at start. Resources are named as kube-apiserver names them (`secrets`, `leases.coordination.orch.io`,
// `*.` for every core resource, `*.<group>` for a group, `*.*` for everything); the first entry
// naming a resource decides. Errors are one line naming the field.

import { readFileSync } from 'node:fs';
import { yaml } from '../machinery/yaml.ts';
import type { Provider, ProviderKind } from '../storage/encryption.ts';
import { storagePrefix, type KindDefinition } from '../registry/definition.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KEY_SIZES: Record<Exclude<ProviderKind, 'identity'>, number[]> = { aescbc: [16, 24, 32], aesgcm: [16, 24, 32], secretbox: [32] };

export interface EncryptionRule {
  resources: string[];
  providers: Provider[];
}

export function parseEncryptionConfig(text: string, groups: readonly string[]): EncryptionRule[] {
  const doc = yaml().parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) throw new Error(`decoding: ${doc.errors[0]!.message}`);
  const c: unknown = doc.toJS();
  if (!isObject(c) || c.kind !== 'EncryptionConfiguration' || !groups.map((g) => `${g}/v1`).includes(String(c.apiVersion)))
    throw new Error(`must be kind EncryptionConfiguration of apiVersion ${groups.map((g) => `${g}/v1`).join(' or ')}`);
  if (!Array.isArray(c.resources) || c.resources.length === 0) throw new Error('resources: Required value: at least one resource entry is required');
  return c.resources.map((r: unknown, i: number): EncryptionRule => {
    const at = `resources[${i}]`;
    if (!isObject(r)) throw new Error(`${at}: must be an object`);
    if (!Array.isArray(r.resources) || r.resources.length === 0 || r.resources.some((x) => typeof x !== 'string' || !x)) throw new Error(`${at}.resources: Required value: at least one resource is required`);
    if (!Array.isArray(r.providers) || r.providers.length === 0) throw new Error(`${at}.providers: Required value: at least one provider is required`);
    const providers = r.providers.map((p: unknown, j: number): Provider => {
      const pat = `${at}.providers[${j}]`;
      if (!isObject(p)) throw new Error(`${pat}: must be an object`);
      const kinds = Object.keys(p);
      if (kinds.length !== 1) throw new Error(`${pat}: Invalid value: exactly one provider type must be given, not ${kinds.length}`);
      const kind = kinds[0]!;
      if (kind === 'kms') throw new Error(`${pat}.kms: Unsupported value: KMS providers are not supported by this server`);
      if (kind === 'identity') return { kind: 'identity', keys: [] };
      if (!(kind in KEY_SIZES)) throw new Error(`${pat}: Unsupported value: "${kind}": supported values: "aescbc", "aesgcm", "secretbox", "identity"`);
      const conf = p[kind];
      if (!isObject(conf) || !Array.isArray(conf.keys) || conf.keys.length === 0) throw new Error(`${pat}.${kind}.keys: Required value: at least one key is required`);
      const names = new Set<string>();
      const keys = conf.keys.map((k: unknown, n: number) => {
        const kat = `${pat}.${kind}.keys[${n}]`;
        if (!isObject(k) || typeof k.name !== 'string' || !k.name) throw new Error(`${kat}.name: Required value`);
        if (k.name.includes(':')) throw new Error(`${kat}.name: Invalid value: "${k.name}": may not contain a ':'`);
        if (names.has(k.name)) throw new Error(`${kat}.name: Duplicate value: "${k.name}"`);
        names.add(k.name);
        if (typeof k.secret !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(k.secret)) throw new Error(`${kat}.secret: Invalid value: secrets must be base64 encoded`);
        const secret = Buffer.from(k.secret, 'base64');
        const sizes = KEY_SIZES[kind as keyof typeof KEY_SIZES];
        if (!sizes.includes(secret.length)) throw new Error(`${kat}.secret: Invalid value: secret is not of the expected length, got ${secret.length}, expected one of ${JSON.stringify(sizes)}`);
        return { name: k.name, secret };
      });
      return { kind: kind as ProviderKind, keys };
    });
    return { resources: r.resources as string[], providers };
  });
}

/** How a served kind is named in the configuration: `secrets`, `leases.coordination.orch.io`. */
const configName = (d: Pick<KindDefinition, 'group' | 'resource'>) => (d.group ? `${d.resource}.${d.group}` : d.resource);

function matches(pattern: string, d: Pick<KindDefinition, 'group' | 'resource'>): boolean {
  if (pattern === '*.*') return true;
  if (pattern === '*.') return d.group === '';
  if (pattern.startsWith('*.')) return d.group === pattern.slice(2);
  return pattern === configName(d);
}

/** The providers of each storage prefix the rules name (kinds stored as another use that kind's). */
export function encryptionByPrefix(rules: readonly EncryptionRule[], defs: readonly KindDefinition[]): Map<string, Provider[]> {
  const byPrefix = new Map<string, Provider[]>();
  for (const d of defs) {
    const stored = d.storedAs ?? d;
    const prefix = storagePrefix(d);
    if (byPrefix.has(prefix)) continue;
    const rule = rules.find((r) => r.resources.some((p) => matches(p, stored)));
    if (rule) byPrefix.set(prefix, rule.providers);
  }
  return byPrefix;
}

/** The file's rules, or a start-up error of one line. */
export function readEncryptionConfig(path: string, groups: readonly string[]): EncryptionRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--encryption-provider-config: ${(e as Error).message}`);
  }
  try {
    return parseEncryptionConfig(text, groups);
  } catch (e) {
    throw new Error(`--encryption-provider-config ${path}: ${(e as Error).message}`);
  }
}
