// The verb handlers: get, list, watch, create, update, patch, delete, deletecollection. Each
// negotiates, decodes, calls the generic store and encodes; none knows a kind.

import { writeHead, type RequestContext } from '../request/context.ts';
import type { RequestInfo } from '../request/request-info.ts';
import type { UserInfo } from '../request/user.ts';
import { errors, type StatusBody } from '../machinery/status.ts';
import { fieldError, type FieldError } from '../machinery/field-errors.ts';
import { validateFieldManager } from '../machinery/meta.ts';
import type { Naming } from '../naming.ts';
import type { FeatureGates } from '../machinery/feature-gates.ts';
import type { ReadableStore, RegistryStore, WatchSink } from '../registry/store.ts';
import { readDeleteOptions } from './delete-options.ts';
import type { NamedCreateDefinition, SubresourceDefinition, Verb } from '../registry/definition.ts';
import { negotiateBody, negotiateResponse, type Conversion } from '../negotiation/negotiate.ts';
import { encoderFor, JSON_ENCODER, type Encoder } from './encoder.ts';
import { convertList, convertObject, includeObjectOption, type TableRequest } from './transform.ts';
import { bodyWeight, viewInput, writeInput, type PortableForm } from './write-inputs.ts';
import { managerFromUserAgent } from '../registry/field-manager.ts';
import { bodyApiVersion, decodeBody, type FieldValidation, parseFieldValidation } from './decode.ts';
import type { ReviewStore } from '../registry/review-store.ts';
import { requestedMeta, type Answered } from '../registry/preparation.ts';
import { parseBool, parseListOptions } from '../machinery/list-options.ts';
import { failedAfterNegotiating, readBodyBytes, writeBody, writeConverted, writeObject, writeStatus, writeStoredJson } from './respond.ts';
import { supportsProtobuf } from '../wire/protobuf/index.ts';
import { apiVersionOf } from '../registry/definition.ts';

/** What a request addresses; a read-only store (a computed kind's) takes get and list only. */
export interface ResourceTarget<S extends ReadableStore = RegistryStore> {
  store: S;
  namespace: string | undefined;
  name: string;
  subresource?: SubresourceDefinition;
}

/** Bytes a watch may have written but not yet sent to its client (about the largest event, twice). */
const MAX_WATCH_UNSENT_BYTES = 16 * 1024 * 1024;

/** Open watches, so shutdown can end them cleanly. */
export interface WatchRegistry {
  add(end: () => void): () => void;
  /** Default watch timeout when the client gives none (kube-apiserver: 30–60 min). */
  defaultTimeoutMs(): number;
  /** How long an ended watch may take to flush what it wrote before its connection is cut. */
  endFlushMs: number;
  /** How often an idle watch that allows bookmarks gets one (kube-apiserver: about a minute). */
  bookmarkIntervalMs: number;
}

export interface HandlerEnv {
  naming: Naming;
  featureGates: FeatureGates;
  watches: WatchRegistry;
  /** Counts the events one watch sends (a counter per kind); absent: not counted. */
  watchEvents?: (group: string, version: string, kind: string) => () => void;
  /** A request to a deprecated kind version was served (apiserver_requested_deprecated_apis). */
  deprecatedRequest?: (group: string, version: string, resource: string, subresource: string, removedRelease: string) => void;
  /** The server's authorizer, for checks besides the request's own (an unsafe deletion's). */
  authorize?: (user: UserInfo, info: RequestInfo) => Promise<{ allowed: boolean; reason: string }>;
}

const UNSAFE_DELETE_VERB = 'unsafe-delete-ignore-read-errors';

/**
 * ignoreStoreReadErrorWithClusterBreakingPotential needs, besides `delete`, the verb
 * `unsafe-delete-ignore-read-errors` on the resource (kube-apiserver's check, and its words).
 * The audit event says the option was asked for.
 */
async function authorizeUnsafeDelete(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  ctx.auditAnnotations[`${env.naming.group('apiserver')}/unsafe-delete-ignore-read-error`] = '';
  const forbidden = (why: string) => errors.forbidden(t.store.qualified, t.name, why);
  if (t.subresource) throw forbidden('ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request');
  if (!env.authorize || !ctx.effectiveUser) throw errors.internal('no authorizer provided, unable to authorize unsafe delete');
  const { allowed, reason } = await env.authorize(ctx.effectiveUser, { ...ctx.info, verb: UNSAFE_DELETE_VERB });
  if (!allowed) throw forbidden(`not permitted to do ${JSON.stringify(UNSAFE_DELETE_VERB)}, reason: ${reason}`);
}

const FIELD_VALIDATIONS = ['', 'Ignore', 'Strict', 'Warn'];
/** The options of a write, validated as its options kind (CreateOptions, UpdateOptions, PatchOptions). */
function writeOptions(
  ctx: RequestContext,
  env: HandlerEnv,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  apply = false,
): { dryRun: boolean; fieldValidation: FieldValidation; manager: string; force: boolean } {
  const q = ctx.url.searchParams;
  // kube-apiserver's ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions, in
  // their order: a value that does not decode is 400 (parseBool), a decoded one that is not valid
  // 422 Invalid naming the options kind.
  const errs: FieldError[] = [];
  const manager = q.get('fieldManager');
  // `force` is a patch option, for apply only; an apply needs a manager (kubectl defaults it,
  // controllers must set it).
  const force = kind === 'PatchOptions' ? parseBool('force', q.get('force')) : undefined;
  if (kind === 'PatchOptions' && !apply && force !== undefined) errs.push(fieldError.forbidden('force', 'may not be specified for non-apply patch'));
  if (apply && !manager) errs.push(fieldError.required('fieldManager', 'is required for apply patch'));
  if (manager !== null) errs.push(...validateFieldManager(manager, 'fieldManager'));
  const dry = q.getAll('dryRun');
  if (dry.some((d) => d !== 'All')) errs.push(fieldError.notSupported('dryRun', dry, ['All']));
  const validation = q.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATIONS.includes(validation)) errs.push(fieldError.notSupported('fieldValidation', validation, FIELD_VALIDATIONS));
  if (errs.length) throw errors.invalidOptions(env.naming.metaGroup, kind, errs);
  return {
    dryRun: dry.includes('All'),
    fieldValidation: parseFieldValidation(validation),
    manager: manager ?? managerFromUserAgent(ctx.req.headers['user-agent']),
    force: force ?? false,
  };
}

/** The request's end: its answer handed to the connection, or the connection gone first. */
const answeredBy =
  (ctx: RequestContext): Answered =>
  (then) => {
    if (ctx.res.closed) then();
    else ctx.res.once('close', then);
  };

function allowed(t: ResourceTarget<ReadableStore>, verb: Verb): void {
  const verbs = t.subresource ? t.subresource.verbs : t.store.def.verbs;
  if (!verbs.includes(verb)) throw errors.methodNotAllowed();
}

/** The accepted spellings of the protobuf media type when the kind has a protobuf form (custom resources will not). */
function protobufFor(env: HandlerEnv, t: ResourceTarget<ReadableStore>): readonly string[] | undefined {
  // A subresource served as another kind (a custom resource's Scale) reads and writes that kind.
  const def = t.subresource?.view?.def ?? t.store.def;
  return supportsProtobuf(apiVersionOf(def), def.kind) ? env.naming.wire.protobufMediaTypes : undefined;
}

/** The encoder of a write's answer (JSON, YAML, protobuf or CBOR). */
function writeEncoder(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Encoder {
  return encoderFor(negotiateResponse(ctx.req.headers.accept, undefined, { cbor: ctx.cbor }, protobufFor(env, t)));
}

/** The encoder of a read's answer: JSON, YAML, protobuf, CBOR, or a Table / PartialObjectMetadata conversion. */
function readEncoder(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget<ReadableStore>): { enc: Encoder; convert?: Conversion; table?: TableRequest } {
  const { wire } = env.naming;
  // PartialObjectMetadata is protobuf for any kind, with or without a protobuf form of its own.
  const format = negotiateResponse(
    ctx.req.headers.accept,
    { metaGroups: wire.metaGroups, protobuf: wire.protobufMediaTypes },
    { stream: ctx.info.verb === 'watch', cbor: ctx.cbor },
    protobufFor(env, t),
  );
  const enc = encoderFor(format);
  const { convert } = format;
  if (!convert) return { enc };
  if (convert.kind !== 'Table') return { enc, convert };
  return { enc, convert, table: { def: t.store.def, apiVersion: convert.apiVersion, includeObject: includeObjectOption(ctx.url.searchParams) } };
}

export async function handleGet(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget<ReadableStore>): Promise<void> {
  allowed(t, 'get');
  const { enc, convert, table } = readEncoder(ctx, env, t);
  try {
    const rv = ctx.url.searchParams.get('resourceVersion') ?? undefined;
    // A subresource served as another kind answers its view of the object (a Scale).
    const view = t.subresource?.view;
    if (view) {
      const obj = view.read((await t.store.getEncoded(t.namespace, t.name, rv)).view(), 'get');
      // As a Table, with the view kind's columns.
      if (convert) return writeConverted(ctx, enc, 200, convertObject(convert, obj, table && { ...table, def: view.def }));
      return writeObject(ctx, enc, 200, obj);
    }
    if (convert) return writeConverted(ctx, enc, 200, convertObject(convert, (await t.store.getEncoded(t.namespace, t.name, rv)).view(), table));
    const body = await t.store.getBody(t.namespace, t.name, rv, enc);
    if (body) return writeBody(ctx, enc, 200, body);
    // No form in the negotiated encoding: the answer is JSON.
    writeBody(ctx, JSON_ENCODER, 200, (await t.store.getBody(t.namespace, t.name, rv, JSON_ENCODER))!);
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

export async function handleList(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget<ReadableStore>): Promise<void> {
  allowed(t, 'list');
  const { enc, convert, table } = readEncoder(ctx, env, t);
  try {
    const opts = parseListOptions(ctx.url.searchParams, env.naming.metaGroup, 'list');
    validateSelectorFields(t, opts.fieldSelector);
    if (convert) {
      if (convert.kind === 'PartialObjectMetadata') convertList(convert, [], {}, table); // 406 before any read
      const list = await t.store.list(t.namespace, opts);
      return writeConverted(ctx, enc, 200, convertList(convert, list.items, list.metadata, table));
    }
    const body = await t.store.listBody(t.namespace, opts, enc);
    if (body) return writeBody(ctx, enc, 200, body);
    // No form in the negotiated encoding: the answer is JSON.
    writeBody(ctx, JSON_ENCODER, 200, (await t.store.listBody(t.namespace, opts, JSON_ENCODER))!);
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

function validateSelectorFields(t: ResourceTarget<ReadableStore>, sel: { requirements: readonly { field: string }[] }): void {
  const known = new Set(['metadata.name', ...(t.store.def.namespaced ? ['metadata.namespace'] : []), ...Object.keys(t.store.def.selectableFields ?? {})]);
  for (const r of sel.requirements) {
    if (!known.has(r.field)) throw errors.badRequest(`field label not supported: ${r.field}`);
  }
}

export async function handleWatch(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'watch');
  const negotiated = readEncoder(ctx, env, t);
  try {
    await streamWatch(ctx, env, t, negotiated);
  } catch (e) {
    throw failedAfterNegotiating(e, negotiated.enc);
  }
}

async function streamWatch(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget, { enc, convert, table }: ReturnType<typeof readEncoder>): Promise<void> {
  if (convert?.kind === 'PartialObjectMetadataList') throw errors.notAcceptableMessage('you requested PartialObjectMetadataList, but a watch streams single objects');
  const opts = parseListOptions(ctx.url.searchParams, env.naming.metaGroup, 'watch', { watchList: env.featureGates.WatchList ?? true });
  validateSelectorFields(t, opts.fieldSelector);
  const { res, req } = ctx;
  let started = false;
  let ended = false;
  const start = () => {
    if (started) return;
    started = true;
    writeHead(ctx, 200, { 'Content-Type': enc.streamContentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
  };
  const write = (text: string | Buffer): boolean => {
    if (ended) return true;
    start();
    const ok = res.write(text);
    // The store stops writing when the socket backs up, so only a client that stopped reading
    // gets here: end its watch (it starts over, as with kube-apiserver) and free what it holds.
    if (!ok && res.writableLength > MAX_WATCH_UNSENT_BYTES)
      queueMicrotask(() => {
        finish();
        res.destroy();
      });
    return ok;
  };
  // The store may end the watch (e.g. 410) before the stream below is set up: remember that.
  let endRequested = false;
  let finish = () => {
    endRequested = true;
  };
  const def = t.store.def;
  const counted = env.watchEvents?.(def.group, def.version, def.kind);
  const sink: WatchSink = {
    send: (type, object) => {
      counted?.();
      if (!convert) return write(object.event(type, enc));
      // Only the first Table of a watch carries the column definitions, as in kube-apiserver.
      const body = convertObject(convert, object.view(), table);
      if (table) table.noHeaders = true;
      return write(enc.event(type, body as object));
    },
    error: (status: StatusBody) => {
      counted?.();
      return write(enc.event('ERROR', status));
    },
    end: () => finish(),
    onDrain: (resume) => res.once('drain', resume),
  };
  // The initial events (and any error before the stream starts) come from the store call.
  const watch = await t.store.watch(t.namespace, opts, sink);
  start();
  await new Promise<void>((resolve) => {
    // timeoutSeconds=0 means none given, as in kube-apiserver.
    const timeoutMs = opts.timeoutSeconds ? opts.timeoutSeconds * 1000 : env.watches.defaultTimeoutMs();
    const timer = setTimeout(() => finish(), timeoutMs);
    // As kube-apiserver: a bookmark about two seconds before the end lets the client resume from
    // there instead of relisting, and one about every minute keeps an idle watch's version recent.
    // (A timeout of a few seconds gets its bookmark at nine tenths of it.)
    const bookmarkTimer = opts.allowWatchBookmarks ? setTimeout(() => watch.bookmark(), timeoutMs > 4_000 ? timeoutMs - 2_000 : timeoutMs * 0.9) : undefined;
    const heartbeat = opts.allowWatchBookmarks ? setInterval(() => watch.bookmark(), env.watches.bookmarkIntervalMs) : undefined;
    const unregister = env.watches.add(() => finish());
    finish = () => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearTimeout(bookmarkTimer);
      clearInterval(heartbeat);
      unregister();
      watch.stop();
      res.end();
      // A client that stopped reading never takes the rest: do not keep its buffers (or a
      // shutdown) waiting for it.
      if (!res.writableFinished) {
        const cut = setTimeout(() => res.destroy(), env.watches.endFlushMs);
        cut.unref();
        res.once('finish', () => clearTimeout(cut));
      }
      resolve();
    };
    req.once('close', () => finish());
    res.once('close', () => finish());
    if (endRequested) finish();
  });
}

export async function handleCreate(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'create');
  const enc = writeEncoder(ctx, env, t);
  try {
    const { dryRun, fieldValidation, manager } = writeOptions(ctx, env, 'CreateOptions');
    const type = negotiateBody(ctx.req.headers['content-type'], ['json', 'yaml', 'protobuf', 'cbor'], protobufFor(env, t), ctx.cbor);
    const body = await readBodyBytes(ctx);
    const input = writeInput({ form: 'body', bytes: bodyWeight(body.length, type), body, type, validation: fieldValidation }, t.store);
    const created = await t.store.create(t.namespace, input, { dryRun, manager, warn: (m) => ctx.warnings.add(m), deadline: ctx.deadline, answered: answeredBy(ctx), user: ctx.effectiveUser, describe: (m) => (ctx.requestObject = m) });
    writeStoredJson(ctx, enc, 201, created.responseBody());
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

/**
 * The largest body of a request that stores nothing (a named create, a review): such bodies are a
 * few hundred bytes, and they are decoded on the event loop, so a large one would hold it (a
 * hostile 3 MiB YAML review) for no purpose. Larger is 413, as any body over its limit.
 */
const UNSTORED_BODY_BYTES = 64 * 1024;

/**
 * POST `<name>/<subresource>` of a named create (serviceaccounts/<name>/token): the request decoded
 * as its own kind, in the spelling its apiVersion names, the answer made from the stored object
 * and written in that spelling; nothing is stored.
 */
export async function handleNamedCreate(ctx: RequestContext, env: HandlerEnv, t: { store: ReadableStore; namespace: string | undefined; name: string; create: NamedCreateDefinition }): Promise<void> {
  const own = t.create.request[0]!;
  const protobuf = supportsProtobuf(apiVersionOf(own), own.kind) ? env.naming.wire.protobufMediaTypes : undefined;
  const enc = encoderFor(negotiateResponse(ctx.req.headers.accept, undefined, { cbor: ctx.cbor }, protobuf));
  try {
    const { dryRun, fieldValidation } = writeOptions(ctx, env, 'CreateOptions');
    const type = negotiateBody(ctx.req.headers['content-type'], ['json', 'yaml', 'protobuf', 'cbor'], protobuf, ctx.cbor);
    const body = await readBodyBytes(ctx, UNSTORED_BODY_BYTES);
    const spelled = bodyApiVersion(body, type);
    const def = t.create.request.find((d) => apiVersionOf(d) === spelled) ?? own;
    const decoded = decodeBody(body, type, def, fieldValidation);
    ctx.requestObject = requestedMeta(decoded.obj);
    for (const w of decoded.warnings) ctx.warnings.add(w);
    const parent = (await t.store.getEncoded(t.namespace, t.name)).view();
    const answer = await t.create.create(parent, decoded.obj, { dryRun });
    writeObject(ctx, enc, 201, { ...answer, apiVersion: apiVersionOf(def), kind: def.kind });
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

/**
 * A review kind's create: the body decoded and checked as any create's, answered by the kind for
 * the user the request acts as (after impersonation), stored nowhere. A dry run answers the same.
 */
export async function handleReview(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget<ReviewStore>): Promise<void> {
  allowed(t, 'create');
  const enc = encoderFor(negotiateResponse(ctx.req.headers.accept, undefined, { cbor: ctx.cbor }, protobufFor(env, t)));
  try {
    const { fieldValidation } = writeOptions(ctx, env, 'CreateOptions');
    const type = negotiateBody(ctx.req.headers['content-type'], ['json', 'yaml', 'protobuf', 'cbor'], protobufFor(env, t), ctx.cbor);
    const decoded = decodeBody(await readBodyBytes(ctx, UNSTORED_BODY_BYTES), type, t.store.def, fieldValidation);
    ctx.requestObject = requestedMeta(decoded.obj);
    for (const w of decoded.warnings) ctx.warnings.add(w);
    if (!ctx.effectiveUser) throw errors.badRequest('no user present on request');
    writeObject(ctx, enc, 201, await t.store.review(decoded.obj, ctx.effectiveUser, t.namespace));
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

export async function handleUpdate(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'update');
  const enc = writeEncoder(ctx, env, t);
  try {
    const { dryRun, fieldValidation, manager } = writeOptions(ctx, env, 'UpdateOptions');
    const type = negotiateBody(ctx.req.headers['content-type'], ['json', 'yaml', 'protobuf', 'cbor'], protobufFor(env, t), ctx.cbor);
    const body = await readBodyBytes(ctx);
    const form: PortableForm & { form: 'body' } = { form: 'body', bytes: bodyWeight(body.length, type), body, type, validation: fieldValidation };
    const input = t.subresource?.view ? viewInput(form, t.store, t.subresource, t.name, manager) : writeInput(form, t.store);
    const written = await t.store.guaranteedUpdate(t.namespace, t.name, input, {
      dryRun,
      manager,
      warn: (m) => ctx.warnings.add(m),
      deadline: ctx.deadline,
      answered: answeredBy(ctx),
      user: ctx.effectiveUser,
      describe: (m) => (ctx.requestObject = m),
      subresource: t.subresource,
      allowCreate: t.store.def.allowCreateOnUpdate,
      uidFromInput: true,
    });
    if (t.subresource?.view) return writeObject(ctx, enc, 200, t.subresource.view.read(written.object, 'get'));
    writeStoredJson(ctx, enc, written.created ? 201 : 200, written.responseBody());
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

export async function handlePatch(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'patch');
  const enc = writeEncoder(ctx, env, t);
  try {
    // Strategic merge needs the kind's merge markers: a kind without them (custom resources) refuses
    // it with 415, listing the patch types it takes, as kube-apiserver does.
    // A subresource served as another kind (a Scale) takes JSON and merge patches of that kind,
    // and apply when the view keeps field ownership.
    const patchTypes = t.subresource?.view
      ? t.subresource.view.managedFields
        ? (['json-patch', 'merge-patch', 'apply-patch', 'apply-patch-cbor'] as const)
        : (['json-patch', 'merge-patch'] as const)
      : t.store.def.strategicMergePatch === false
        ? (['json-patch', 'merge-patch', 'apply-patch', 'apply-patch-cbor'] as const)
        : (['json-patch', 'merge-patch', 'strategic-merge-patch', 'apply-patch', 'apply-patch-cbor'] as const);
    const type = negotiateBody(ctx.req.headers['content-type'], patchTypes, undefined, ctx.cbor);
    const apply = type === 'apply-patch' || type === 'apply-patch-cbor';
    const { dryRun, fieldValidation, manager, force } = writeOptions(ctx, env, 'PatchOptions', apply);
    const body = await readBodyBytes(ctx);
    const input = t.subresource?.view
      ? viewInput(
          apply
            ? { form: 'apply', bytes: body.length, body, cbor: type === 'apply-patch-cbor', validation: fieldValidation, manager, force, name: t.name, namespace: t.namespace, subresource: t.subresource.name }
            : { form: 'patch', bytes: body.length, body, patchType: type as 'json-patch' | 'merge-patch', validation: fieldValidation, name: t.name },
          t.store,
          t.subresource,
          t.name,
          manager,
        )
      : apply
        ? writeInput(
            {
              form: 'apply',
              bytes: bodyWeight(body.length, type === 'apply-patch' ? 'yaml-apply' : 'cbor'),
              body,
              cbor: type === 'apply-patch-cbor',
              validation: fieldValidation,
              manager,
              force,
              name: t.name,
              namespace: t.namespace,
              subresource: t.subresource?.name,
            },
            t.store,
          )
        : writeInput({ form: 'patch', bytes: body.length, body, patchType: type as 'json-patch' | 'merge-patch' | 'strategic-merge-patch', validation: fieldValidation, name: t.name }, t.store);
    const written = await t.store.guaranteedUpdate(t.namespace, t.name, input, {
      dryRun,
      manager,
      applied: apply,
      warn: (m) => ctx.warnings.add(m),
      deadline: ctx.deadline,
      answered: answeredBy(ctx),
      user: ctx.effectiveUser,
      subresource: t.subresource,
      allowCreate: apply && !t.subresource,
    });
    if (t.subresource?.view) return writeObject(ctx, enc, 200, t.subresource.view.read(written.object, 'get'));
    writeStoredJson(ctx, enc, written.created ? 201 : 200, written.responseBody());
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

export async function handleDelete(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'delete');
  const enc = writeEncoder(ctx, env, t);
  try {
    const opts = { ...(await readDeleteOptions(ctx, env.naming, env.featureGates.AllowUnsafeMalformedObjectDeletion)), user: ctx.effectiveUser };
    if (opts.unsafeIgnoreReadError) await authorizeUnsafeDelete(ctx, env, t);
    const outcome = await t.store.delete(t.namespace, t.name, opts);
    // Accepted, not done: the garbage collector removes the dependents first (docs/rulings.md#r5).
    const asynchronous = opts.propagationPolicy === 'Foreground' || opts.orphanDependents === false;
    if (outcome.kind === 'pending') writeObject(ctx, enc, asynchronous ? 202 : 200, outcome.object);
    else writeStatus(ctx, enc, outcome.status);
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

export async function handleDeleteCollection(ctx: RequestContext, env: HandlerEnv, t: ResourceTarget): Promise<void> {
  allowed(t, 'deletecollection');
  const enc = writeEncoder(ctx, env, t);
  try {
    const listOpts = parseListOptions(ctx.url.searchParams, env.naming.metaGroup, 'deletecollection');
    validateSelectorFields(t, listOpts.fieldSelector);
    const opts = { ...(await readDeleteOptions(ctx, env.naming, env.featureGates.AllowUnsafeMalformedObjectDeletion)), user: ctx.effectiveUser };
    if (opts.unsafeIgnoreReadError) await authorizeUnsafeDelete(ctx, env, t);
    await t.store.deleteCollection(t.namespace, listOpts, opts);
    writeStatus(ctx, enc, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 });
  } catch (e) {
    throw failedAfterNegotiating(e, enc);
  }
}

