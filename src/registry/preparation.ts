// Preparing a write: everything the store computes between a request and the bytes it stores —
// the request's object or mutation applied to the stored one, system fields, defaults, field
// ownership, validation, the no-change check and the encoding. It is a pure function of the
// stored bytes, the request and the kind's definition, so it runs on whichever thread is cheaper:
// inline for the common small write, in a worker for a large one (the server's pool), where it
// cannot hold the event loop. The store keeps only what needs shared state: admission and the
// compare-and-swap write. docs/architecture.md ("Hostile input") has the design.

import { randomUUID } from 'node:crypto';
import type { KeyValue } from '../storage/interface.ts';
import { generateName, isPlainObject, nowTimestamp, unchangedByUpdate, type KObject } from '../machinery/meta.ts';
import { cloneJson } from '../machinery/patch.ts';
import { errors, type QualifiedResource } from '../machinery/status.ts';
import { apiVersionOf, storagePrefix, type KindDefinition, type SubresourceDefinition } from './definition.ts';
import { validateObjectMetaCreate, validateObjectMetaUpdate, validateName } from './meta-validation.ts';
import { FieldManager } from './field-manager.ts';
import { StoredJson } from './stored-json.ts';
import { ConvertedJson, VersionedJson, type ObjectCodec } from './converted-json.ts';
import type { DeclarativeValidation } from './declarative-validation.ts';
import { ruleValidator, type RuleValidator } from './validation-rules.ts';
import { loadCel } from '../cel/load.ts';
import { isUnstructured } from '../machinery/schema.ts';
import { validateAgainstSchema } from '../machinery/schema-validate.ts';
import type { FieldError } from '../machinery/field-errors.ts';

/** Where a write's warnings go (the response's Warning headers). */
export type Warn = (message: string) => void;

/**
 * The stored object as a write's mutation takes it: a copy of its own to change, made when asked
 * (a mutation that replaces the object whole asks for none).
 */
export interface Current {
  /** A copy of the stored object, the caller's to change as it likes. */
  copy(): KObject;
  /**
   * A copy whose managedFields entries share their `fieldsV1` with the object the write compares
   * against, for a mutation that replaces `metadata.managedFields` (or an entry) only whole and
   * never writes into one. An object's field ownership can be the larger part of it (a set of a
   * long list's items), and is then neither copied nor decoded twice.
   */
  copyKeepingFieldSets(): KObject;
}

/** The Current of an object that is already the mutation's own: both copies are that object. */
export const ownCurrent = (obj: KObject): Current => ({ copy: () => obj, copyKeepingFieldSets: () => obj });

/**
 * What a write request asks for: the object to create, or what to make of the stored object
 * (undefined when there is none). It is called again when a compare-and-swap loses a race.
 */
export type Mutate = (current: Current | undefined, warn: Warn) => KObject | Promise<KObject>;

/**
 * A request's input as plain data (its body and options), from which a worker builds the same
 * `Mutate` the handler built: the endpoints layer defines its forms and how they are built.
 */
export interface PortableInput {
  readonly form: string;
  /** The bytes the input carries (its body): with the stored object's, what decides the thread. */
  readonly bytes: number;
}

/** A write's input: how to apply it here, and optionally the same input as data for a worker. */
export interface WriteInput {
  mutate: Mutate;
  portable?: PortableInput;
}

export function isWriteInput(v: unknown): v is WriteInput {
  return typeof v === 'object' && v !== null && typeof (v as { mutate?: unknown }).mutate === 'function';
}

/** What a write carries into its preparation, besides its input. */
export interface PrepareOptions {
  /** The field manager (managedFields); an apply computed them itself and says `applied`. */
  manager?: string;
  applied?: boolean;
  subresource?: string;
  /** An update of a missing object creates it (PUT of a kind that allows it, apply). */
  allowCreate?: boolean;
  /** The uid of the object the input gives is a precondition (a PUT's body). */
  uidFromInput?: boolean;
}

/** One write to prepare, as data: what a worker receives with the input. */
export interface PreparationJob {
  /** The kind, as kindKey names it. */
  kind: string;
  namespace: string | undefined;
  /** The object's name; absent for a create, whose name comes from its body. */
  name?: string;
  /** The stored object (an update), as its bytes and revision; absent for a create or when missing. */
  stored?: { value: Uint8Array; revision: number };
  opts: PrepareOptions;
}

/**
 * The identity a request's own object gives, as it was decoded (before a name is generated or
 * system fields are set): what kube-apiserver's audit completes the event's objectRef with.
 */
export interface RequestedMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** Where a preparation tells the identity of the request's object, once it is decoded (a create's or update's body). */
export type DescribeRequested = (meta: RequestedMeta) => void;

export function requestedMeta(obj: KObject): RequestedMeta {
  const m = obj.metadata ?? {};
  const out: RequestedMeta = {};
  if (typeof m.name === 'string' && m.name) out.name = m.name;
  if (typeof m.namespace === 'string' && m.namespace) out.namespace = m.namespace;
  if (typeof m.uid === 'string' && m.uid) out.uid = m.uid;
  if (typeof m.resourceVersion === 'string' && m.resourceVersion) out.resourceVersion = m.resourceVersion;
  return out;
}

/** A prepared write: what the store does with it on the event loop. */
export type PreparedWrite =
  /** Store this new object (a create, or an update that creates). */
  | {
      op: 'create';
      bytes: Uint8Array;
      object?: KObject;
      /** Where it is stored (what admission and the storage key need without decoding it). */
      meta: { name: string; namespace: string | undefined };
      /** Its name was generated (another try may pick a free one). */
      generated: boolean;
    }
  /** Replace the stored object with these bytes. */
  | { op: 'update'; bytes: Uint8Array; object?: KObject }
  /** The update removed the last finalizer of a deleting object: delete it. */
  | { op: 'delete'; bytes: Uint8Array; object?: KObject }
  /** The update changes nothing: no write, no event. */
  | { op: 'unchanged' };

/** Registers `then` to run once a request's answer has been sent, or the request ended without one. */
export type Answered = (then: () => void) => void;

/**
 * Prepares writes off the event loop when they are large: undefined means prepare it here (too
 * small to be worth a hand-off, or a kind the workers do not know).
 */
export interface PreparationOffload {
  prepare(call: PreparationCall): Promise<PreparedWrite> | undefined;
}

/** One write to prepare, as the store hands it to an offload. */
export interface PreparationCall {
  job: PreparationJob;
  input: WriteInput;
  /** When the request must be answered by (epoch ms). */
  deadline: number | undefined;
  /** Where its warnings go, whether it succeeds or not. */
  warn: Warn;
  /** Where the identity of the request's own object goes, when the caller asks for it. */
  describe?: DescribeRequested;
  /** Calls `then` once the request has been answered (absent: the write is no request's). */
  answered?: Answered;
  /** The same preparation on this thread (when no worker can run it). */
  inline(): Promise<PreparedWrite>;
}

/** How a worker names a kind: its API version and kind, which the definitions keep unique. */
export const kindKey = (d: Pick<KindDefinition, 'group' | 'version' | 'kind'>): string => `${apiVersionOf(d)}/${d.kind}`;

/**
 * One kind's write preparation: its codec, field manager, validation rules and declarative
 * validation. The store holds one; a worker builds its own from the same definition.
 */
export class WritePreparation {
  readonly def: KindDefinition;
  /** The server's declarative validation (gates, metrics); absent: hand-written checks only. */
  private readonly declarative?: DeclarativeValidation;
  readonly qualified: QualifiedResource;
  readonly json: ObjectCodec;
  readonly fields: FieldManager;
  /** The schema's validation rules, compiled once (a bad rule fails the server's start). */
  private readonly rules: RuleValidator | undefined;
  /** Status changes are no new generation: the kind has a `status` subresource. */
  private readonly statusApart: boolean;

  constructor(
    def: KindDefinition,
    declarative?: DeclarativeValidation,
  ) {
    this.def = def;
    this.declarative = declarative;
    const apiVersion = apiVersionOf(def);
    this.qualified = { group: def.group, resource: def.resource };
    // A kind with a conversion between its versions (a custom resource) reads objects stored at
    // any of them; a webhook's converts every version but the storage one.
    const conversion = def.conversion;
    this.json = conversion?.convert
      ? new VersionedJson(apiVersion, def.kind, def.storedAs ? apiVersionOf(def.storedAs) : apiVersion, {
          conversion,
          ...(def.storedAs || def.defaultOnRead ? { defaults: def.schema } : {}),
        })
      : def.storedAs
        ? new ConvertedJson(apiVersion, def.kind, def.storedAs)
        : conversion || def.defaultOnRead
          ? new VersionedJson(apiVersion, def.kind, apiVersion, def.defaultOnRead ? { defaults: def.schema } : {})
          : new StoredJson(apiVersion, def.kind);
    this.fields = new FieldManager(def);
    this.statusApart = def.subresources?.some((sub) => sub.name === 'status') ?? false;
    // A custom resource's rules had their estimated costs checked when its CRD was written; one
    // stored under other limits is served all the same (run-time limits still apply), as in Kubernetes.
    this.rules = ruleValidator(def.schema, isUnstructured(def.schema) ? { estimated: Infinity, estimatedTotal: Infinity } : {});
    // A kind whose validation compiles expressions loads the language at its first write: until
    // then the write path is one that awaits it, then the plain one (no check on later writes).
    if (def.validationUsesExpressions) {
      const plain = this.prepare;
      this.prepare = async (...args) => {
        await loadCel();
        this.prepare = plain;
        return plain.apply(this, args);
      };
    }
  }

  /**
   * An unstructured kind's (a custom resource's) schema errors, found here rather than while
   * decoding: on update only those of values the update changed, as Kubernetes' ratcheting of
   * custom resource validation (CRDValidationRatcheting) reports them.
   */
  private schemaErrors(obj: KObject, old?: KObject): FieldError[] {
    if (!isUnstructured(this.def.schema)) return [];
    return validateAgainstSchema(obj, this.def.schema, old === undefined ? {} : { old }).errors;
  }

  /**
   * `other` serves the objects this kind serves (the same storage, another group or version):
   * managers recorded through it keep their fields when compared in its version.
   */
  sharesStorageWith(other: WritePreparation): void {
    // A webhook converts between the versions: the field manager converts what it compares ahead
    // of its synchronous steps (FieldManager.addConvertedVersion).
    if (this.def.conversion?.convert || other.def.conversion?.convert) {
      if (this.def.conversion?.convert && this.def.group === other.def.group) this.fields.addConvertedVersion(apiVersionOf(other.def), other.def.schema);
      return;
    }
    const toStored = (o: KObject): KObject => this.def.storedAs?.toStorage(o) ?? o;
    const fromStored = (o: KObject): KObject => other.def.storedAs?.fromStorage(o) ?? o;
    const otherToStored = (o: KObject): KObject => other.def.storedAs?.toStorage(o) ?? o;
    const thisFromStored = (o: KObject): KObject => this.def.storedAs?.fromStorage(o) ?? o;
    this.fields.addVersion(apiVersionOf(other.def), { schema: other.def.schema, convert: (o) => fromStored(toStored(o)), back: (o) => thisFromStored(otherToStored(o)) });
  }

  /**
   * The bytes to store for a prepared object: through the codec's asynchronous encoding when it
   * has one (a conversion webhook's), else synchronously.
   */
  encodeStored(obj: KObject): Uint8Array | Promise<Uint8Array> {
    return this.json.encodeAsync ? this.json.encodeAsync(obj) : this.json.encode(obj);
  }

  decode(kv: KeyValue, revision = kv.modRevision): KObject {
    return this.json.encoded(kv, revision).copy();
  }

  /** The object stored as `value` at `revision`, as reads return it. */
  decodeStored(value: Uint8Array, revision: number): KObject {
    return this.decode({ key: '', value, createRevision: 0, modRevision: revision });
  }

  /** A new object from the bytes a preparation encoded for it (no resourceVersion yet). */
  decodeNew(bytes: Uint8Array): KObject {
    const obj = this.decodeStored(bytes, 0);
    delete obj.metadata.resourceVersion;
    return obj;
  }

  /**
   * A new object, ready to store: its namespace from the request, a generated name, system fields,
   * defaults, field ownership, validation. Throws the Status the create is refused with.
   * Asynchronous only when field ownership converts first (managers the request gives at a
   * version a webhook converts).
   */
  prepareCreate(namespace: string | undefined, obj: KObject, opts: PrepareOptions, warn: Warn): Created | Promise<Created> {
    const meta = obj.metadata;
    if (this.def.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace)
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = namespace ?? meta.namespace;
      if (!meta.namespace) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    } else delete meta.namespace;
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName!);
    this.def.strategy.defaults?.(obj);
    const recorded = opts.manager !== undefined && !opts.applied ? this.fields.update(undefined, obj, opts.manager) : obj;
    if (recorded instanceof Promise) return recorded.then(() => this.finishCreate(obj, generated, warn));
    return this.finishCreate(obj, generated, warn);
  }

  /** A create's system fields and validation, after its field ownership. */
  private finishCreate(obj: KObject, generated: boolean, warn: Warn): Created {
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    if (this.def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    this.def.strategy.prepareForCreate?.(obj);
    dropEmptyMetadata(obj);
    const handwritten = [...validateObjectMetaCreate(obj, this.def), ...this.schemaErrors(obj), ...(this.def.strategy.validate?.(obj) ?? [])];
    const checked = this.declarative ? this.declarative.validate(this.def, 'create', obj, handwritten) : handwritten;
    const errs = this.rules ? [...checked, ...this.rules.validate(obj, undefined, warn, checked)] : checked;
    if (errs.length) throw errors.invalid(this.def.group, this.def.kind, meta.name ?? '', errs);
    for (const w of this.def.strategy.warnings?.(obj) ?? []) warn(w);
    return { obj, generated };
  }

  /**
   * A write of `input` over the stored object `stored` (absent: there is none): the object to
   * create, the bytes to replace it with, a deletion, or nothing to do. The input is applied
   * first, so a malformed request is refused before a missing object is reported, as
   * kube-apiserver's update applies the request to an empty object first. `describe` is told the
   * identity of the object `mutate` returned before anything is done to it.
   */
  async prepare(job: PreparationJob, mutate: Mutate, subresources: ReadonlyMap<string, SubresourceDefinition>, warn: Warn, describe?: DescribeRequested): Promise<PreparedWrite> {
    const { opts, namespace } = job;
    const subresource = opts.subresource !== undefined ? subresources.get(opts.subresource) : undefined;
    if (opts.subresource !== undefined && !subresource) throw new Error(`${this.def.kind} has no subresource ${opts.subresource}`);
    if (job.name === undefined) {
      const input = await mutate(undefined, warn);
      describe?.(requestedMeta(input));
      const created = this.prepareCreate(namespace, input, opts, warn);
      const { obj, generated } = created instanceof Promise ? await created : created;
      return { op: 'create', bytes: await this.encodeStored(obj), object: obj, meta: placeOf(obj), generated };
    }
    const name = job.name;
    // Two copies of the stored object, one for the mutation to change (when it asks for one):
    // parsing the stored text again is cheaper than a structured clone (a map of many keys clones
    // slowly).
    const stored = job.stored && this.json.encoded({ key: '', value: job.stored.value, createRevision: 0, modRevision: job.stored.revision });
    const old = stored?.copy();
    const wanted = await mutate(stored && old && { copy: () => stored.copy(), copyKeepingFieldSets: () => copyKeepingFieldSets(old) }, warn);
    describe?.(requestedMeta(wanted));
    const uid = wanted.metadata.uid;
    if (old && opts.uidFromInput && typeof uid === 'string') checkPreconditions(this.qualified, old, { uid });
    if (!old) {
      if (!opts.allowCreate || subresource) throw errors.notFound(this.qualified, name);
      validateName(wanted, name, namespace, this.def);
      const created = this.prepareCreate(namespace, wanted, opts, warn);
      const { obj } = created instanceof Promise ? await created : created;
      return { op: 'create', bytes: await this.encodeStored(obj), object: obj, meta: placeOf(obj), generated: false };
    }
    const requestedRv = wanted.metadata.resourceVersion;
    if (requestedRv && requestedRv !== old.metadata.resourceVersion) throw errors.staleUpdate(this.qualified, name);
    validateName(wanted, name, namespace, this.def);
    const obj = subresource ? subresource.apply(wanted, old) : wanted;
    // An apply computed the managed fields on the request: a subresource's copy rule keeps them.
    if (subresource && opts.applied) {
      if (wanted.metadata.managedFields === undefined) delete obj.metadata.managedFields;
      else obj.metadata = { ...obj.metadata, managedFields: wanted.metadata.managedFields };
    }
    this.def.strategy.defaults?.(obj);
    // A view that keeps field ownership (a Scale) recorded the write on its object and mapped it back.
    if (opts.manager !== undefined && !opts.applied && !subresource?.view?.managedFields) {
      // Asynchronous only when it meets managers at a version a webhook converts.
      const recorded = this.fields.update(old, obj, opts.manager, opts.subresource);
      if (recorded instanceof Promise) await recorded;
    }
    this.prepareUpdate(obj, old, opts.subresource, warn);
    // The last finalizer of a deleting object is gone: the object goes with it.
    if (obj.metadata.deletionTimestamp && !obj.metadata.finalizers?.length && !this.def.strategy.pendingFinalization?.(obj))
      return { op: 'delete', bytes: await this.encodeStored(obj), object: obj };
    // Nothing changed (the uid or namespace a patch dropped was filled in again, keys came back
    // in another order, only a manager's timestamp moved): no write, no event, the same version.
    if (unchangedByUpdate(obj, old)) return { op: 'unchanged' };
    const bytes = await this.encodeStored(obj);
    if (Buffer.compare(bytes, job.stored!.value) === 0) return { op: 'unchanged' };
    return { op: 'update', bytes, object: obj };
  }

  /** System fields the client cannot change, strategy hooks and validation (BeforeUpdate). */
  private prepareUpdate(obj: KObject, old: KObject, subresource: string | undefined, warn: Warn): void {
    const viaSubresource = subresource !== undefined;
    const meta = obj.metadata;
    const oldMeta = old.metadata;
    meta.uid ||= oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    // An update never removes or moves a deletion under way; setting one (or another grace period)
    // is refused by validation as a change to an immutable field, as in kube-apiserver.
    if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined && (meta.deletionGracePeriodSeconds === undefined || meta.deletionGracePeriodSeconds === null))
      meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    if (this.def.tracksGeneration) meta.generation = oldMeta.generation ?? 1;
    else delete meta.generation;
    if (meta.namespace === undefined && this.def.namespaced) meta.namespace = oldMeta.namespace;
    // A subresource's own copy rule decides what changes; the main resource's hook would undo it.
    if (!viaSubresource) this.def.strategy.prepareForUpdate?.(obj, old);
    dropEmptyMetadata(obj);
    if (this.def.tracksGeneration && specChanged(obj, old, this.statusApart)) meta.generation = (oldMeta.generation ?? 1) + 1;
    const handwritten = [...validateObjectMetaUpdate(obj, old, this.def), ...this.schemaErrors(obj, old), ...(this.def.strategy.validateUpdate?.(obj, old, subresource) ?? [])];
    const checked = this.declarative ? this.declarative.validate(this.def, 'update', obj, handwritten, subresource) : handwritten;
    const errs = this.rules ? [...checked, ...this.rules.validate(obj, old, warn, checked)] : checked;
    if (errs.length) throw errors.invalid(this.def.group, this.def.kind, meta.name ?? '', errs);
    if (!viaSubresource) for (const w of this.def.strategy.warnings?.(obj, old) ?? []) warn(w);
  }
}

/**
 * A copy of `obj` whose managedFields entries' `fieldsV1` are `obj`'s own (see
 * Current.copyKeepingFieldSets); keys keep their order, so an unchanged object encodes the same.
 */
function copyKeepingFieldSets(obj: KObject): KObject {
  const entries: unknown = obj.metadata?.managedFields;
  if (!Array.isArray(entries)) return cloneJson(obj);
  const copy = cloneJson({ ...obj, metadata: { ...obj.metadata, managedFields: [] as unknown[] } });
  copy.metadata.managedFields = entries.map((e: unknown) => {
    if (!isPlainObject(e)) return cloneJson(e);
    const entry: Record<string, unknown> = {};
    for (const k of Object.keys(e)) entry[k] = k === 'fieldsV1' ? e[k] : cloneJson(e[k]);
    return entry;
  });
  return copy;
}

/** A prepared create: the object, and whether its name was generated. */
interface Created {
  obj: KObject;
  generated: boolean;
}

const placeOf = (obj: KObject): { name: string; namespace: string | undefined } => ({ name: obj.metadata.name!, namespace: obj.metadata.namespace });

/**
 * Links the preparations of kinds kept under one storage prefix (a kind served in two groups),
 * so each records and compares field ownership in the other's version too.
 */
export function linkSharedStorage(preps: readonly WritePreparation[]): void {
  const seen: WritePreparation[] = [];
  for (const p of preps) {
    for (const sibling of seen.filter((s) => storagePrefix(s.def) === storagePrefix(p.def))) {
      sibling.sharesStorageWith(p);
      p.sharesStorageWith(sibling);
    }
    seen.push(p);
  }
}

/** The subresources of a kind, by name. */
export function subresourcesOf(def: KindDefinition): ReadonlyMap<string, SubresourceDefinition> {
  return new Map((def.subresources ?? []).map((s) => [s.name, s]));
}

export function checkPreconditions(r: QualifiedResource, obj: KObject, pre: { uid?: string; resourceVersion?: string } | undefined): void {
  if (!pre) return;
  if (pre.uid && pre.uid !== obj.metadata.uid)
    throw errors.conflict(r, obj.metadata.name ?? '', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`);
  if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion)
    throw errors.conflict(
      r,
      obj.metadata.name ?? '',
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`,
    );
}

/** Empty maps and lists in metadata are not kept (Go's omitempty, which clients expect). */
function dropEmptyMetadata(obj: KObject): void {
  const meta = obj.metadata;
  for (const f of ['labels', 'annotations'] as const) if (meta[f] && Object.keys(meta[f]).length === 0) delete meta[f];
  for (const f of ['finalizers', 'ownerReferences', 'managedFields'] as const) if (Array.isArray(meta[f]) && meta[f].length === 0) delete meta[f];
}

/** Whether anything outside metadata (and status, when `statusApart`) changed: a new generation. */
function specChanged(obj: KObject, old: KObject, statusApart: boolean): boolean {
  const strip = statusApart ? ({ metadata: _m, status: _s, ...rest }: KObject) => JSON.stringify(rest) : ({ metadata: _m, ...rest }: KObject) => JSON.stringify(rest);
  return strip(obj) !== strip(old);
}
