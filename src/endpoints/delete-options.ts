// The options of a delete or deletecollection: the DeleteOptions body (JSON, YAML or CBOR, as its
// Content-Type says) and the query parameters, checked whole before anything is deleted. A body
// that is not a DeleteOptions, or a field of the wrong type, is refused: read as "no option" it
// would turn a dry run, a precondition or an orphaning into a real, unconditional deletion.

import type { RequestContext } from '../request/context.ts';
import { isPlainObject } from '../machinery/meta.ts';
import { errors } from '../machinery/status.ts';
import { fieldError, type FieldError } from '../machinery/field-errors.ts';
import { parseBool, parseInteger } from '../machinery/list-options.ts';
import { negotiateBody } from '../negotiation/negotiate.ts';
import type { DeleteOptions } from '../registry/store.ts';
import type { Naming } from '../naming.ts';
import { decodeCborBody, parseJson, parseYaml } from './decode.ts';
import { readBodyBytes } from './respond.ts';

const POLICIES = ['Foreground', 'Background', 'Orphan'] as const;

const absent = (v: unknown): v is undefined | null => v === undefined || v === null;

/** The body as a value, in the encoding its Content-Type names (an empty body is no options). */
async function bodyValue(ctx: RequestContext): Promise<unknown> {
  const bytes = await readBodyBytes(ctx);
  if (bytes.length === 0 || !/\S/.test(bytes.toString('latin1'))) return {};
  const type = negotiateBody(ctx.req.headers['content-type'], ['json', 'yaml', 'cbor'], undefined, ctx.cbor);
  if (type === 'cbor') return decodeCborBody(bytes, 'error decoding DeleteOptions');
  const text = bytes.toString('utf8');
  if (type === 'yaml') return parseYaml(text, 'Ignore', 'error decoding DeleteOptions').value;
  return parseJson(text, 'error decoding DeleteOptions');
}

/**
 * The apiVersions a DeleteOptions body may name: the meta group's (either spelling), the core
 * group's `v1`, and the group version of the request (clients once sent DeleteOptions in the
 * resource's own group, and Kubernetes still registers it in every group version).
 */
function acceptedVersions(ctx: RequestContext, naming: Naming): string[] {
  const own = ctx.info.apiGroup ? `${ctx.info.apiGroup}/${ctx.info.apiVersion}` : ctx.info.apiVersion;
  return ['v1', ...naming.wire.metaGroups.map((g) => `${g}/v1`), ...(own ? [own] : [])];
}

/** The type and version of the body, as kube-apiserver's decoder reads them (a missing one is DeleteOptions). */
function checkTypeMeta(body: Record<string, unknown>, accepted: readonly string[]): void {
  for (const f of ['apiVersion', 'kind'] as const) {
    const v = body[f];
    if (!absent(v) && typeof v !== 'string')
      throw errors.badRequest(`error decoding DeleteOptions: couldn't get version/kind; json parse error: json: cannot unmarshal ${typeof v === 'object' ? (Array.isArray(v) ? 'array' : 'object') : typeof v} into Go struct field .${f} of type string`);
  }
  const kind = (body.kind as string | undefined) || 'DeleteOptions';
  const apiVersion = (body.apiVersion as string | undefined) || accepted[1]!;
  if (kind !== 'DeleteOptions' || !accepted.includes(apiVersion))
    throw errors.badRequest(`error decoding DeleteOptions: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
}

/**
 * `unsafeDeletion`: gate AllowUnsafeMalformedObjectDeletion. Without it the
 * ignoreStoreReadErrorWithClusterBreakingPotential option is dropped, as kube-apiserver drops it.
 */
export async function readDeleteOptions(ctx: RequestContext, naming: Naming, unsafeDeletion = false): Promise<DeleteOptions> {
  const q = ctx.url.searchParams;
  const body = await bodyValue(ctx);
  if (!isPlainObject(body)) throw errors.badRequest('error decoding DeleteOptions: the body must be an object');
  checkTypeMeta(body, acceptedVersions(ctx, naming));
  const errs: FieldError[] = [];
  if (!absent(body.dryRun) && (!Array.isArray(body.dryRun) || body.dryRun.some((d) => typeof d !== 'string')))
    errs.push(fieldError.typeInvalid('dryRun', body.dryRun, 'dryRun in body must be of type array of strings'));
  for (const flag of ['orphanDependents', 'ignoreStoreReadErrorWithClusterBreakingPotential'] as const) {
    if (!absent(body[flag]) && typeof body[flag] !== 'boolean') errs.push(fieldError.typeInvalid(flag, body[flag], `${flag} in body must be of type boolean`));
  }
  const dry = [...(Array.isArray(body.dryRun) ? (body.dryRun as unknown[]) : []), ...q.getAll('dryRun')];
  if (dry.some((d) => d !== 'All')) errs.push(fieldError.notSupported('dryRun', dry, ['All']));
  const grace = parseInteger('gracePeriodSeconds', q.get('gracePeriodSeconds')) ?? body.gracePeriodSeconds;
  if (!absent(grace) && (typeof grace !== 'number' || !Number.isSafeInteger(grace)))
    errs.push(fieldError.typeInvalid('gracePeriodSeconds', grace, 'gracePeriodSeconds in body must be of type integer'));
  const policy = q.get('propagationPolicy') ?? body.propagationPolicy;
  if (!absent(policy) && typeof policy !== 'string') errs.push(fieldError.typeInvalid('propagationPolicy', policy, 'propagationPolicy in body must be of type string'));
  else if (!absent(policy) && !(POLICIES as readonly string[]).includes(policy)) errs.push(fieldError.notSupported('propagationPolicy', policy, [...POLICIES, 'nil']));
  const orphan = parseBool('orphanDependents', q.get('orphanDependents')) ?? body.orphanDependents;
  if (!absent(orphan) && !absent(policy)) errs.push(fieldError.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  const unsafe = parseBool('ignoreStoreReadErrorWithClusterBreakingPotential', q.get('ignoreStoreReadErrorWithClusterBreakingPotential')) ?? body.ignoreStoreReadErrorWithClusterBreakingPotential;
  let preconditions: DeleteOptions['preconditions'];
  if (!absent(body.preconditions)) {
    if (!isPlainObject(body.preconditions)) errs.push(fieldError.typeInvalid('preconditions', body.preconditions, 'preconditions in body must be of type object'));
    else {
      const { uid, resourceVersion } = body.preconditions;
      if (!absent(uid) && typeof uid !== 'string') errs.push(fieldError.typeInvalid('preconditions.uid', uid, 'preconditions.uid in body must be of type string'));
      if (!absent(resourceVersion) && typeof resourceVersion !== 'string')
        errs.push(fieldError.typeInvalid('preconditions.resourceVersion', resourceVersion, 'preconditions.resourceVersion in body must be of type string'));
      preconditions = { uid: (uid as string | undefined) ?? undefined, resourceVersion: (resourceVersion as string | undefined) ?? undefined };
    }
  }
  // A body field of the wrong type fails decoding in kube-apiserver (400) before any validation (422).
  const undecodable = errs.filter((e) => e.type === 'FieldValueTypeInvalid');
  if (undecodable.length) throw errors.undecodableOptions(naming.metaGroup, 'DeleteOptions', undecodable);
  if (errs.length) throw errors.invalidOptions(naming.metaGroup, 'DeleteOptions', errs);
  return {
    dryRun: dry.includes('All'),
    gracePeriodSeconds: (grace as number | undefined) ?? undefined,
    propagationPolicy: (policy as DeleteOptions['propagationPolicy']) ?? undefined,
    orphanDependents: typeof orphan === 'boolean' ? orphan : undefined,
    preconditions,
    ...(unsafeDeletion && unsafe === true && { unsafeIgnoreReadError: true }),
  };
}
