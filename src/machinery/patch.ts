// JSON Patch (RFC 6902, atomic, with `test`) and JSON Merge Patch (RFC 7386) on plain JSON values.

import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { errors, StatusError } from './status.ts';
import { isPlainObject } from './meta.ts';

const { applyPatch, JsonPatchError } = fastJsonPatch;

const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** Apply a JSON Patch document; a failed `test` is 422, any other failure 400. Nothing is mutated. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw errors.badRequest('the server rejected our request due to an error in our request: json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (patch.length > MAX_JSON_PATCH_OPERATIONS)
    throw errors.entityTooLarge(MAX_JSON_PATCH_OPERATIONS);
  for (const op of patch) {
    if (!isPlainObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string')
      throw errors.badRequest('the server rejected our request due to an error in our request: invalid JSON Patch operation');
  }
  try {
    // validate=true checks every operation first; mutate=false keeps `doc` intact on failure.
    return applyPatch(doc, patch as Operation[], true, false).newDocument;
  } catch (e) {
    if (e instanceof JsonPatchError) {
      if (e.name === 'TEST_OPERATION_FAILED')
        throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: testing value ${e.operation?.path ?? ''} failed`);
      throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${e.message.split('\n')[0]}`);
    }
    throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${(e as Error).message}`);
  }
}

/** RFC 7386: objects merge recursively, null deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '__proto__') continue;
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
