// Secret (core/v1, namespaced): sensitive values by key (`data`, base64 in JSON), the write-only
// `stringData` merged into them on every write, a `type` (default Opaque, fixed once written)
// whose rules say which keys must be there, and `immutable`. No error names a value: a field
// error shows the key, and a value it must mention is redacted, as Kubernetes redacts it.

import type { Naming } from '../../naming.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import type { KObject } from '../../machinery/meta.ts';
import { isDateTime } from '../../machinery/schema-validate.ts';
import { configMapKey, validateImmutable } from '../../machinery/validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { bool, describe, objectSchema, str } from '../schemas.ts';
import { base64Length, keyPath, mapOf, MAX_CONFIG_SIZE, validateFrozen } from './config-map.ts';
import { BOOTSTRAP_GROUP, BOOTSTRAP_TOKEN_NAME_PREFIX, TOKEN_ID, TOKEN_SECRET } from './bootstrap-token.ts';
import { secretDocs } from './docs/config.ts';

/** What a field error shows in place of a secret value (Kubernetes' wording). */
export const REDACTED = '<secret contents redacted>';

type SecretObject = KObject & { immutable?: boolean | null; data?: Record<string, string> | null; stringData?: Record<string, string> | null; type?: string | null };

/** The secret types of a naming profile and the keys and annotation they use. */
export function secretTypes(n: Naming) {
  const d = n.labelDomain;
  return {
    opaque: 'Opaque',
    serviceAccountToken: `${d}/service-account-token`,
    dockercfg: `${d}/dockercfg`,
    dockerConfigJson: `${d}/dockerconfigjson`,
    basicAuth: `${d}/basic-auth`,
    sshAuth: `${d}/ssh-auth`,
    tls: `${d}/tls`,
    bootstrapToken: `bootstrap.${d}/token`,
    /** The annotation naming the ServiceAccount a token secret belongs to. */
    serviceAccountNameAnnotation: `${d}/service-account.name`,
    serviceAccountUidAnnotation: `${d}/service-account.uid`,
  } as const;
}

const BOOTSTRAP_USAGES = ['authentication', 'signing'];
const USAGE_PREFIX = 'usage-bootstrap-';

const decoded = (data: Record<string, string>, key: string): Buffer | undefined => (Object.hasOwn(data, key) ? Buffer.from(data[key] ?? '', 'base64') : undefined);

/**
 * Go's json.Unmarshal into a map: an object (or null) parses; anything else fails. The message
 * never quotes the input, which is secret.
 */
function jsonObjectProblem(bytes: Buffer): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8').trim() === '' ? 'unexpected end of JSON input' : 'invalid JSON: the value does not parse';
  }
  if (v === null || (typeof v === 'object' && !Array.isArray(v))) return undefined;
  const type = Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
  return `json: cannot unmarshal ${type} into Go value of type map[string]interface {}`;
}

/** The rules of a bootstrap token secret: its namespace, name and keys (token id and secret formats, expiry, usages, extra groups). */
function validateBootstrapToken(s: SecretObject, data: Record<string, string>, n: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const ns = s.metadata.namespace;
  if (ns && ns !== n.systemNamespace) errs.push(fieldError.invalid('metadata.namespace', ns, `a secret of type ${secretTypes(n).bootstrapToken} must be in the ${n.systemNamespace} namespace`));
  const id = decoded(data, 'token-id')?.toString('utf8');
  if (id === undefined) errs.push(fieldError.required(keyPath('data', 'token-id'), ''));
  else if (!TOKEN_ID.test(id)) errs.push(fieldError.invalid(keyPath('data', 'token-id'), REDACTED, 'must be 6 characters, each of [a-z0-9]'));
  else if (s.metadata.name && s.metadata.name !== `${BOOTSTRAP_TOKEN_NAME_PREFIX}${id}`)
    errs.push(fieldError.invalid('metadata.name', s.metadata.name, `must be ${BOOTSTRAP_TOKEN_NAME_PREFIX}<token-id>, with the token-id of data`));
  const secret = decoded(data, 'token-secret')?.toString('utf8');
  if (secret === undefined) errs.push(fieldError.required(keyPath('data', 'token-secret'), ''));
  else if (!TOKEN_SECRET.test(secret)) errs.push(fieldError.invalid(keyPath('data', 'token-secret'), REDACTED, 'must be 16 characters, each of [a-z0-9]'));
  const expiration = decoded(data, 'expiration')?.toString('utf8');
  if (expiration !== undefined && !isDateTime(expiration)) errs.push(fieldError.invalid(keyPath('data', 'expiration'), REDACTED, 'must be a time in RFC 3339 form'));
  for (const key of Object.keys(data))
    if (key.startsWith(USAGE_PREFIX) && !BOOTSTRAP_USAGES.includes(key.slice(USAGE_PREFIX.length)))
      errs.push(fieldError.invalid(keyPath('data', key), key, `unknown usage: supported usages are ${BOOTSTRAP_USAGES.map((u) => USAGE_PREFIX + u).join(', ')}`));
  const groups = decoded(data, 'auth-extra-groups')?.toString('utf8');
  if (groups !== undefined && groups.split(',').some((g) => !BOOTSTRAP_GROUP.test(g)))
    errs.push(fieldError.invalid(keyPath('data', 'auth-extra-groups'), REDACTED, `each comma-separated group must match ${BOOTSTRAP_GROUP.source}`));
  return errs;
}

/** ValidateSecret: keys, total size, and the keys each type requires. */
function validateSecret(o: KObject, n: Naming): FieldError[] {
  const s = o as SecretObject;
  const t = secretTypes(n);
  const data = mapOf(s.data);
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const m of configMapKey(key)) errs.push(fieldError.invalid(keyPath('data', key), key, m));
    total += base64Length(value);
  }
  if (total > MAX_CONFIG_SIZE) errs.push(fieldError.tooLong('data', undefined, MAX_CONFIG_SIZE));
  const has = (key: string) => Object.hasOwn(data, key);
  const requireKey = (key: string) => {
    if (!has(key)) errs.push(fieldError.required(keyPath('data', key), ''));
  };
  const requireJsonObject = (key: string) => {
    if (!has(key)) return requireKey(key);
    const problem = jsonObjectProblem(decoded(data, key)!);
    if (problem) errs.push(fieldError.invalid(keyPath('data', key), REDACTED, problem));
  };
  switch (s.type) {
    case t.serviceAccountToken:
      // Only the account's name is required; a controller may add its uid and the token later.
      if (!s.metadata.annotations?.[t.serviceAccountNameAnnotation]) errs.push(fieldError.required(keyPath('metadata.annotations', t.serviceAccountNameAnnotation), ''));
      break;
    case t.dockercfg:
      requireJsonObject('.dockercfg');
      break;
    case t.dockerConfigJson:
      requireJsonObject('.dockerconfigjson');
      break;
    case t.basicAuth:
      // Either may be empty, but one of them must be there.
      if (!has('username') && !has('password')) {
        requireKey('username');
        requireKey('password');
      }
      break;
    case t.sshAuth:
      if (!data['ssh-privatekey']) errs.push(fieldError.required(keyPath('data', 'ssh-privatekey'), ''));
      break;
    case t.tls:
      requireKey('tls.crt');
      requireKey('tls.key');
      break;
    case t.bootstrapToken:
      errs.push(...validateBootstrapToken(s, data, n));
      break;
  }
  return errs;
}

export function secretDefinition(n: Naming): KindDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Secret',
    resource: 'secrets',
    singular: 'secret',
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    secretValues: true,
    selectableFields: { type: (o) => (o as SecretObject).type ?? '' },
    schema: describe(
      objectSchema({
        immutable: bool(),
        data: { type: 'object', additionalProperties: str({ format: 'byte' }) },
        stringData: { type: 'object', additionalProperties: str() },
        type: str(),
      }),
      secretDocs(n),
    ),
    printerColumns: [
      nameColumn,
      { name: 'Type', type: 'string', description: 'What the values are, for programs to handle them.', value: (o) => (o as SecretObject).type ?? '' },
      { name: 'Data', type: 'string', description: 'The number of values.', value: (o) => Object.keys(mapOf((o as SecretObject).data)).length },
      ageColumn,
    ],
    strategy: {
      // As Kubernetes' decoding does: stringData goes into data (its value wins), and an empty type is Opaque.
      defaults(o) {
        const s = o as SecretObject;
        const strings = mapOf(s.stringData);
        if (Object.keys(strings).length) {
          const data = { ...mapOf(s.data) };
          for (const [key, value] of Object.entries(strings)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
          s.data = data;
        }
        delete s.stringData;
        if (!s.type) s.type = 'Opaque';
      },
      validate: (o) => validateSecret(o, n),
      validateUpdate: (o, old) => [
        ...validateImmutable((o as SecretObject).type, (old as SecretObject).type, 'type'),
        ...validateFrozen(o, old, ['data']),
        ...validateSecret(o, n),
      ],
    },
  };
}
