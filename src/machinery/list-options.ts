// Query parameters of list, watch and deletecollection, parsed and checked against the
// resourceVersion rules of list and watch. Invalid combinations are 400 (docs/rulings.md#r1).
// A deletecollection is checked exactly as a list (the same function, the same answers), all of it
// before anything is read or deleted.

import { decodeContinue } from './continue-token.ts';
import { fieldError, type FieldError } from './field-errors.ts';
import { errors } from './status.ts';
import { parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldSelector, type LabelSelector } from './selectors.ts';

type ResourceVersionMatch = 'Exact' | 'NotOlderThan';

export interface ListOptions {
  watch: boolean;
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  limit?: number;
  continue?: string;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  timeoutSeconds?: number;
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
}

/** Options that select every object: what controllers list and watch with. */
export function matchEverything(watch = false): ListOptions {
  return { watch, labelSelector: parseLabelSelector(''), fieldSelector: parseFieldSelector(''), allowWatchBookmarks: false };
}

export function parseBool(name: string, v: string | null): boolean | undefined {
  if (v === null) return undefined;
  // Go's strconv.ParseBool, and an empty value (`?watch`) as true like kube-apiserver.
  if (['', '1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  throw errors.badRequest(`invalid boolean value for ${name}: ${JSON.stringify(v)}`);
}

export function parseInteger(name: string, v: string | null, min = -Infinity): number | undefined {
  if (v === null || v === '') return undefined;
  if (!/^[-+]?\d{1,18}$/.test(v)) throw errors.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be an integer`);
  const n = Number(v);
  if (n < min) throw errors.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be greater than or equal to ${min}`);
  return n;
}

/**
 * A resourceVersion given by a client, as a revision number; 0 for "0"; 400 when not one. Revisions
 * are exact integers only up to 2^53 - 1, which no store reaches: a larger value would be rounded
 * to another revision, so it is refused rather than read as one it does not name.
 */
export function parseResourceVersion(v: string, field = 'resourceVersion'): number {
  const where = field === 'resourceVersion' ? '' : ` (${field})`;
  if (!/^\d{1,30}$/.test(v)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(v.slice(0, 100))}${where}`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(v)}${where}: larger than ${Number.MAX_SAFE_INTEGER}, the largest this server can hold`);
  return n;
}

function selectors(q: URLSearchParams): { labelSelector: LabelSelector; fieldSelector: FieldSelector } {
  try {
    return { labelSelector: parseLabelSelector(q.get('labelSelector') ?? ''), fieldSelector: parseFieldSelector(q.get('fieldSelector') ?? '') };
  } catch (e) {
    if (e instanceof SelectorParseError) throw errors.badRequest(e.message);
    throw e;
  }
}

export function parseListOptions(q: URLSearchParams, metaGroup: string, verb: 'list' | 'watch' | 'deletecollection', gates: { watchList: boolean } = { watchList: true }): ListOptions {
  parseBool('watch', q.get('watch'));
  const watch = verb === 'watch';
  const rvMatch = q.get('resourceVersionMatch') ?? '';
  const opts: ListOptions = {
    watch,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: rvMatch ? (rvMatch as ResourceVersionMatch) : undefined,
    limit: parseInteger('limit', q.get('limit')),
    continue: q.get('continue') || undefined,
    ...selectors(q),
    timeoutSeconds: parseInteger('timeoutSeconds', q.get('timeoutSeconds')),
    allowWatchBookmarks: parseBool('allowWatchBookmarks', q.get('allowWatchBookmarks')) ?? false,
    sendInitialEvents: parseBool('sendInitialEvents', q.get('sendInitialEvents')),
  };
  if (opts.limit !== undefined && opts.limit <= 0) opts.limit = undefined;
  if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds < 0) throw errors.badRequest(`invalid value for timeoutSeconds: ${opts.timeoutSeconds}: must be greater than or equal to 0`);
  const shard = q.get('shardSelector');
  if (shard) throw errors.badRequest('shardSelector: sharded lists are not served by this server');
  const errs = watch ? watchErrors(opts, gates.watchList) : listErrors(opts);
  if (errs.length) throw errors.invalidListOptions(metaGroup, errs);
  if (opts.resourceVersion) parseResourceVersion(opts.resourceVersion);
  // The token is read again where the list starts; checked here, a deletecollection refuses a bad
  // one before it deletes anything, with the answer a list gives.
  if (opts.continue) decodeContinue(metaGroup, opts.continue);
  return opts;
}

function listErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (match) {
    if (!o.resourceVersion) errs.push(fieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continue) errs.push(fieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(fieldError.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan']));
    if (match === 'Exact' && o.resourceVersion === '0') errs.push(fieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (o.continue && o.resourceVersion && o.resourceVersion !== '0')
    errs.push(fieldError.forbidden('resourceVersion', 'specifying resource version is not allowed when using continue'));
  if (o.sendInitialEvents !== undefined) errs.push(fieldError.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

function watchErrors(o: ListOptions, watchList: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && !watchList)
    errs.push(fieldError.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan')
    errs.push(fieldError.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  if (match) {
    if (o.sendInitialEvents === undefined) errs.push(fieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push(fieldError.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (o.sendInitialEvents && !o.allowWatchBookmarks) errs.push(fieldError.forbidden('allowWatchBookmarks', 'allowWatchBookmarks must be set to true when sendInitialEvents is true'));
  }
  if (o.continue) errs.push(fieldError.forbidden('continue', 'continue is forbidden for watch'));
  return errs;
}

