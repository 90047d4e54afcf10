// What a create, update, patch or apply request asks the store for, as a WriteInput: a `mutate`
// that decodes the request (once) and applies it to the stored object, and the same input as
// plain data (`PortableForm`) from which a worker builds the identical `mutate`. The handler and
// the worker both call `writeInput`, so a request means the same thing on either thread.

import { findDuplicateKeys } from '../machinery/json-duplicates.ts';
import { isPlainObject, type KObject } from '../machinery/meta.ts';
import { applyJsonPatch, applyMergePatch, checkPatchResult } from '../machinery/patch.ts';
import { applyStrategicMergePatch } from '../machinery/strategic-merge.ts';
import { errors, StatusError } from '../machinery/status.ts';
import type { KindDefinition, SubresourceDefinition } from '../registry/definition.ts';
import { FieldManager } from '../registry/field-manager.ts';
import { ownCurrent, type Mutate, type PortableInput, type Warn, type WriteInput } from '../registry/preparation.ts';
import { ApplyConflictError, ManagedFieldsError, SsaBadRequestError, SsaTypeError } from '../ssa/index.ts';
import { decodeApplyConfig, decodeApplyConfigValue } from './apply.ts';
import { MAX_STRICT_ERRORS, checkObject, decodeBody, decodeCborBody, parseJson, type BodyType, type FieldValidation } from './decode.ts';
import { MAX_REQUEST_BODY_BYTES } from './respond.ts';

export type PatchType = 'json-patch' | 'merge-patch' | 'strategic-merge-patch';

/** A request's input as data: what crosses to a worker. */
export type PortableForm =
  /** A create or update body: the object itself. */
  | { form: 'body'; bytes: number; body: Uint8Array; type: BodyType; validation: FieldValidation }
  /** A JSON, merge or strategic merge patch of the stored object. */
  | { form: 'patch'; bytes: number; body: Uint8Array; patchType: PatchType; validation: FieldValidation; /** The object the URL names. */ name: string }
  /** A server-side apply: the intent, merged by field ownership. */
  | {
      form: 'apply';
      bytes: number;
      body: Uint8Array;
      cbor: boolean;
      validation: FieldValidation;
      manager: string;
      force: boolean;
      /** The object the URL names. */
      name: string;
      namespace: string | undefined;
      subresource: string | undefined;
    };

/** YAML costs several times more per byte to decode than the other formats: it counts so much more. */
const YAML_WEIGHT = 4;

/** How many bytes' worth of work a body of `type` is, for the choice of thread. */
export const bodyWeight = (bytes: number, type: BodyType | 'yaml-apply'): number => (type === 'yaml' || type === 'yaml-apply' ? bytes * YAML_WEIGHT : bytes);

/** What a worker needs besides the form: the kind, and its field manager for an apply. */
export interface InputContext {
  def: KindDefinition;
  fields: FieldManager;
}

/** The request's WriteInput: how to apply it here, and the form to ship to a worker. */
export function writeInput(form: PortableForm, ctx: InputContext): WriteInput {
  const portable: PortableInput & PortableForm = form;
  switch (form.form) {
    case 'body':
      return { mutate: bodyMutation(form, ctx.def), portable };
    case 'patch':
      return { mutate: patchMutation(form, ctx.def), portable };
    case 'apply':
      return { mutate: applyMutation(form, ctx), portable };
  }
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/**
 * A body's object, decoded on each call: the first hands it over as it is, and a later call (a
 * lost race) starts again from the request's own object.
 */
function bodyMutation(form: PortableForm & { form: 'body' }, def: KindDefinition): Mutate {
  return (_current, warn) => {
    const decoded = decodeBody(asBuffer(form.body), form.type, def, form.validation);
    for (const w of decoded.warnings) warn(w);
    return decoded.obj;
  };
}

/** A patch, parsed once (a malformed patch is refused before a missing object is reported). */
function patchMutation(form: PortableForm & { form: 'patch' }, def: KindDefinition): Mutate {
  let parsed: { text: string; patch: unknown; duplicates: string[] } | undefined;
  let used = false;
  const parse = () => {
    if (parsed) return parsed;
    const text = asBuffer(form.body).toString('utf8');
    const patch = parseJson(text, 'error decoding patch');
    // A strategic patch is decoded against the stored object, so its shape is checked there.
    if (form.patchType === 'merge-patch' && !isPlainObject(patch)) throw errors.badRequest('error decoding patch: the patch must be a JSON object');
    const duplicates = form.validation === 'Ignore' || form.patchType === 'json-patch' ? [] : findDuplicateKeys(text, MAX_STRICT_ERRORS);
    return (parsed = { text, patch, duplicates });
  };
  return (stored, warn) => {
    const { text, patch: first, duplicates } = parse();
    if (!stored) throw errors.notFound({ group: def.group, resource: def.resource }, form.name);
    // The stored object is this call's own copy, and the patch is given away to the merge, which
    // then copies neither: a later call (a lost race) parses the patch again.
    const patch = used ? parseJson(text, 'error decoding patch') : first;
    used = true;
    const current = keepsFieldSets(form.patchType, patch) ? stored.copyKeepingFieldSets() : stored.copy();
    const patched =
      form.patchType === 'json-patch'
        ? applyJsonPatch(current, patch, { maxCopyBytes: MAX_REQUEST_BODY_BYTES, consume: true })
        : form.patchType === 'merge-patch'
          ? applyMergePatch(current, patch, true)
          : applyStrategicMergePatch(current, patch, def.schema, true);
    // What a patch built is bounded (the request-body limit) before it is decoded further.
    checkPatchResult(patched, MAX_REQUEST_BODY_BYTES);
    const decoded = checkObject(patched, def, form.validation, duplicates);
    for (const w of decoded.warnings) warn(w);
    return decoded.obj;
  };
}

/**
 * Whether a patch can only replace managedFields (or an entry of it) whole, never write into an
 * entry's `fieldsV1`: then it may be applied to a copy sharing those with the stored object
 * (Current.copyKeepingFieldSets). A merge patch replaces lists whole. A strategic patch merges
 * nothing into managedFields unless its metadata names them (a directive included). A JSON patch
 * writes into them only through a path at or below `/metadata/managedFields`, or through a value
 * it moved or copied from there or from a parent.
 */
function keepsFieldSets(patchType: PatchType, patch: unknown): boolean {
  if (patchType === 'merge-patch') return true;
  if (patchType === 'strategic-merge-patch') {
    const meta = isPlainObject(patch) ? patch.metadata : undefined;
    return !isPlainObject(meta) || !Object.keys(meta).some((k) => k.includes('managedFields'));
  }
  if (!Array.isArray(patch)) return true;
  const reaches = (pointer: unknown): boolean => typeof pointer !== 'string' || pointer === '/metadata/managedFields' || pointer.startsWith('/metadata/managedFields/');
  const holds = (pointer: unknown): boolean => reaches(pointer) || pointer === '' || pointer === '/metadata';
  return patch.every((op: unknown) => isPlainObject(op) && !reaches(op.path) && (op.from === undefined || !holds(op.from)));
}

/**
 * Server-side apply: the intent (decoded once) merged into the live object, or creating it, owned
 * by its manager; a conflict with another manager's field is 409 unless forced.
 */
function applyMutation(form: PortableForm & { form: 'apply' }, { def, fields }: InputContext): Mutate {
  let decoded: { config: KObject; warnings: string[] } | undefined;
  const decode = () => {
    if (decoded) return decoded;
    const body = asBuffer(form.body);
    decoded = form.cbor ? decodeApplyConfigValue(decodeCborBody(body, 'error decoding CBOR'), def, form.validation) : decodeApplyConfig(body.toString('utf8'), def, form.validation);
    const meta = decoded.config.metadata;
    if (meta.name !== undefined && meta.name !== form.name) throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${form.name})`);
    if (def.namespaced && meta.namespace !== undefined && meta.namespace !== form.namespace)
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    return decoded;
  };
  return (current, warn: Warn) => {
    const { config, warnings } = decode();
    for (const w of warnings) warn(w);
    const intent = structuredClone(config);
    intent.metadata.name ??= form.name;
    if (def.namespaced) intent.metadata.namespace ??= form.namespace;
    const finish = (merged: KObject): KObject => {
      if (!current) {
        merged.metadata.name = form.name;
        if (def.namespaced) merged.metadata.namespace = form.namespace;
      }
      checkPatchResult(merged, MAX_REQUEST_BODY_BYTES);
      // The merged object is checked whole: required fields and value rules (unknown and duplicate
      // fields were the intent's to report).
      return checkObject(merged, def, 'Ignore', []).obj;
    };
    // The field manager converts first when it meets managers a webhook's conversion reaches.
    let merged: KObject | Promise<KObject>;
    try {
      merged = fields.apply(current?.copy(), intent, form.manager, form.force, form.subresource);
    } catch (e) {
      throw applyError(e);
    }
    if (!(merged instanceof Promise)) return finish(merged);
    return merged.then(finish, (e: unknown) => {
      throw applyError(e);
    });
  };
}

/** Apply's errors as Status: conflicts are 409 with one cause per field, bad input 400. */
function applyError(e: unknown): unknown {
  if (e instanceof ApplyConflictError) return new StatusError(409, 'Conflict', e.message, { causes: e.causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })) });
  if (e instanceof SsaBadRequestError || e instanceof SsaTypeError || e instanceof ManagedFieldsError) return errors.badRequest(e.message);
  return e;
}

/** Managed fields mapped to or from a view; stored ones that do not decode are a server error, as in kube-apiserver. */
function mapped(run: () => unknown[]): unknown[] {
  try {
    return run();
  } catch (e) {
    if (e instanceof ManagedFieldsError) throw errors.internal(e.message);
    throw e;
  }
}

/** The field manager of each view kind (a Scale), made on first use. */
const viewFieldManagers = new WeakMap<KindDefinition, FieldManager>();

function viewFieldManager(def: KindDefinition): FieldManager {
  let fields = viewFieldManagers.get(def);
  if (!fields) viewFieldManagers.set(def, (fields = new FieldManager(def)));
  return fields;
}

/**
 * The input of a write through a subresource served as another kind (SubresourceDefinition.view,
 * a Scale): the body decoded as that kind, the patch applied to the stored object's view, or the
 * apply merged into it; what the subresource makes of it must still be a valid object of the kind
 * (its schema), as kube-apiserver validates the object a Scale update writes. When the view keeps
 * field ownership, the view's object carries the managed fields the view maps from the stored
 * object, the write records `manager` there (an apply did so itself), and the result maps back to
 * the stored object's. Prepared here, never in a worker.
 */
export function viewInput(form: PortableForm, ctx: InputContext, sub: SubresourceDefinition, name: string, manager: string): WriteInput {
  const view = sub.view!;
  const owned = view.managedFields;
  const fields = viewFieldManager(view.def);
  const inner = writeInput(form, { def: view.def, fields }).mutate;
  return {
    mutate: async (stored, warn) => {
      if (!stored) throw errors.notFound({ group: ctx.def.group, resource: ctx.def.resource }, name);
      const current = stored.copy();
      const base = view.read(current, 'update');
      if (owned) {
        const entries = mapped(() => owned.toView(current));
        if (entries.length) base.metadata.managedFields = entries;
      }
      let wanted = await inner(ownCurrent(structuredClone(base)), warn);
      if (owned) {
        if (form.form !== 'apply') wanted = await fields.update(base, wanted, manager, sub.name);
        const viewEntries = wanted.metadata.managedFields;
        wanted = { ...wanted, metadata: { ...wanted.metadata, managedFields: mapped(() => owned.fromView(current, viewEntries)) } };
      }
      checkObject(sub.apply(wanted, current), ctx.def, 'Ignore', []);
      return wanted;
    },
  };
}
