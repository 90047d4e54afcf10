// ConfigMap (core/v1, namespaced): named text values (`data`) and binary values (`binaryData`,
// base64 in JSON), at most 1 MiB together; `immutable: true` freezes both and itself.

import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { isPlainObject, type KObject } from '../../machinery/meta.ts';
import { configMapKey } from '../../machinery/validation.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { ageColumn, nameColumn } from '../printers.ts';
import { bool, describe, objectSchema, str } from '../schemas.ts';
import { configMapDocs } from './docs/config.ts';

/** Kubernetes' MaxSecretSize, the limit of a ConfigMap's and a Secret's values together. */
export const MAX_CONFIG_SIZE = 1024 * 1024;

type ConfigMapObject = KObject & { immutable?: boolean | null; data?: Record<string, string> | null; binaryData?: Record<string, string> | null };

/** A map field of the object, or {} when it is absent (or not a map: the schema reports that). */
export const mapOf = (v: unknown): Record<string, string> => (isPlainObject(v) ? (v as Record<string, string>) : {});

/** The path of a map entry as Kubernetes prints it: `data[key]`. */
export const keyPath = (field: string, key: string): string => `${field}[${key}]`;

/** The decoded length of standard base64 text, without decoding it. */
export function base64Length(text: string): number {
  if (typeof text !== 'string') return 0;
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** Every key of one of the maps: its config-key rule, and that it is not also in the other map. */
function validateKeys(field: string, values: Record<string, string>, other: Record<string, string>, otherField: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of Object.keys(values)) {
    for (const m of configMapKey(key)) errs.push(fieldError.invalid(keyPath(field, key), key, m));
    if (Object.hasOwn(other, key)) errs.push(fieldError.invalid(keyPath(field, key), key, `duplicate of key present in ${otherField}`));
  }
  return errs;
}

/** ValidateConfigMap: keys, no key in both maps, and the values' total size. */
function validateConfigMap(o: KObject): FieldError[] {
  const cm = o as ConfigMapObject;
  const data = mapOf(cm.data);
  const binary = mapOf(cm.binaryData);
  const errs = [...validateKeys('data', data, binary, 'binaryData'), ...validateKeys('binaryData', binary, data, 'data')];
  let total = 0;
  for (const v of Object.values(data)) if (typeof v === 'string') total += Buffer.byteLength(v, 'utf8');
  for (const v of Object.values(binary)) total += base64Length(v);
  // Kubernetes reports the size against the whole object (an empty path, printed `[]`).
  if (total > MAX_CONFIG_SIZE) errs.push(fieldError.tooLong('[]', undefined, MAX_CONFIG_SIZE));
  return errs;
}

/** Whether two values of a map field hold the same entries (absent and empty are alike, as Go's nil and empty maps). */
export function sameMap(a: unknown, b: unknown): boolean {
  const x = mapOf(a);
  const y = mapOf(b);
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && x[k] === y[k]);
}

const IMMUTABLE = 'field is immutable when `immutable` is set';

/** What an immutable ConfigMap or Secret may not change: `immutable` itself and the listed value maps. */
export function validateFrozen(o: KObject, old: KObject, maps: readonly string[]): FieldError[] {
  const before = old as KObject & { immutable?: boolean | null };
  if (before.immutable !== true) return [];
  const now = o as unknown as Record<string, unknown>;
  const prev = old as unknown as Record<string, unknown>;
  const errs: FieldError[] = [];
  if (now.immutable !== true) errs.push(fieldError.forbidden('immutable', IMMUTABLE));
  for (const m of maps) if (!sameMap(now[m], prev[m])) errs.push(fieldError.forbidden(m, IMMUTABLE));
  return errs;
}

export function configMapDefinition(): KindDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    singular: 'configmap',
    shortNames: ['cm'],
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    schema: describe(
      objectSchema({
        immutable: bool(),
        data: { type: 'object', additionalProperties: str() },
        binaryData: { type: 'object', additionalProperties: str({ format: 'byte' }) },
      }),
      configMapDocs,
    ),
    printerColumns: [
      nameColumn,
      {
        name: 'Data',
        type: 'string',
        description: 'The number of values: keys of data and binaryData together.',
        value: (o) => Object.keys(mapOf((o as ConfigMapObject).data)).length + Object.keys(mapOf((o as ConfigMapObject).binaryData)).length,
      },
      ageColumn,
    ],
    strategy: {
      validate: validateConfigMap,
      validateUpdate: (o, old) => [...validateFrozen(o, old, ['data', 'binaryData']), ...validateConfigMap(o)],
    },
  };
}
