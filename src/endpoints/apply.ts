// The body of a server-side apply (`application/apply-patch+yaml`): a partially specified object
// (the intent) in YAML, JSON being valid YAML. Decoded as kube-apiserver decodes it: YAML 1.1 (as
// its YAML library reads it), the type and version of the endpoint, no managedFields, types
// checked, unknown and duplicate fields reported as fieldValidation says. Required fields and value
// rules are checked on the merged object, not on the intent.

import { errors } from '../machinery/status.ts';
import { isPlainObject, type KObject } from '../machinery/meta.ts';
import { pruneUnknownFields, validateAgainstSchema } from '../machinery/schema-validate.ts';
import { apiVersionOf, type KindDefinition } from '../registry/definition.ts';
import { normalizeDecoded, parseYaml, strictProblems, type FieldValidation } from './decode.ts';

interface ApplyConfig {
  config: KObject;
  warnings: string[];
}

export function decodeApplyConfig(text: string, def: KindDefinition, validation: FieldValidation): ApplyConfig {
  const { value, duplicate } = parseYaml(text, validation);
  if (!isPlainObject(value)) throw errors.badRequest('error decoding YAML: the apply body must be an object (a map at the top level)');
  const warnings: string[] = [];
  if (duplicate) {
    if (validation === 'Strict') throw errors.badRequest(`error strict decoding YAML: ${duplicate}`);
    warnings.push(duplicate);
  }
  const decoded = decodeApplyConfigValue(value, def, validation);
  return { config: decoded.config, warnings: [...warnings, ...decoded.warnings] };
}

/** An apply intent already decoded (YAML/JSON above, or CBOR): envelope, types and unknown fields. */
export function decodeApplyConfigValue(value: unknown, def: KindDefinition, validation: FieldValidation): ApplyConfig {
  if (!isPlainObject(value)) throw errors.badRequest('error decoding the apply body: it must be an object (a map at the top level)');
  const warnings: string[] = [];

  const expected = apiVersionOf(def);
  if (value.apiVersion !== expected)
    throw errors.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${typeof value.apiVersion === 'string' ? value.apiVersion : ''}, expected: ${expected}`);
  if (value.kind === undefined || value.kind === null || value.kind === '') throw errors.badRequest(`Object 'Kind' is missing in '${def.secretValues ? '<secret contents redacted>' : JSON.stringify(value)}'`);
  if (value.kind !== def.kind) throw errors.badRequest(`the kind in the data (${String(value.kind)}) does not match the expected kind (${def.kind})`);
  if (!isPlainObject(value.metadata)) value.metadata = {};
  if ((value.metadata as Record<string, unknown>).managedFields !== undefined) throw errors.badRequest('metadata.managedFields must be nil');

  // Types are checked on the intent (a wrong type is 400); unknown fields are reported and dropped.
  const { errors: problems, unknownFields } = validateAgainstSchema(value, def.schema);
  const typeError = problems.find((e) => e.type === 'FieldValueTypeInvalid');
  if (typeError) throw errors.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${typeError.message}`);
  // The intent in the form the merged object will have, so unchanged values compare equal.
  normalizeDecoded(value, def);
  if (unknownFields.length && validation !== 'Ignore') {
    const listed = strictProblems(unknownFields, []);
    if (validation === 'Strict') throw errors.badRequest(`strict decoding error: ${listed.join(', ')}`);
    // One by one: spreading a list of any length as arguments overflows the stack.
    for (const w of listed) warnings.push(w);
  }
  if (unknownFields.length) pruneUnknownFields(value, def.schema);
  return { config: value as KObject, warnings };
}
