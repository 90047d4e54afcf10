// Kubernetes `Status` errors: typed constructors with the fixed reasons, codes and message formats
// of kube-apiserver, so clients that branch on `reason` or parse messages behave the same.

import type { FieldError } from './field-errors.ts';

type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServerTimeout'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'InsufficientStorage'
  | 'StoreReadError';

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Identifies a resource in messages: `leases.coordination.orch.io`, `namespaces` for core. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

const qualified = (r: QualifiedResource): string => (r.group ? `${r.resource}.${r.group}` : r.resource);

export class StatusError extends Error {
  readonly status: StatusBody;
  /** Extra response headers (Retry-After). */
  readonly headers: Record<string, string>;
  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'StatusError';
    this.status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
    this.headers = headers;
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

const detailsFor = (r: QualifiedResource, name: string): StatusDetails => ({ name, group: r.group || undefined, kind: r.resource });

/** The field error text without its leading `<field>: `, as Status causes carry it. */
const causeBody = (e: FieldError): string => (e.field && e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message);

/**
 * The most field errors an answer reports, in its causes and in its message. kube-apiserver reports
 * every error; an object with hundreds of thousands of invalid items (a body under the size limit
 * can hold that many) would then be answered with tens of megabytes, built on the event loop. The
 * first ones show what is wrong; the message says how many more there were.
 */
export const MAX_REPORTED_ERRORS = 100;

function causesOf(errs: readonly FieldError[]): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const e of errs) {
    if (causes.length === MAX_REPORTED_ERRORS) break;
    causes.push({ reason: e.type, message: causeBody(e), field: e.field });
  }
  return causes;
}

/**
 * Go's utilerrors.NewAggregate text: one message as it is, several in brackets, repeats once. Past
 * MAX_REPORTED_ERRORS distinct messages, the rest are counted rather than listed.
 */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  const more = unique.length - MAX_REPORTED_ERRORS;
  const listed = more > 0 ? unique.slice(0, MAX_REPORTED_ERRORS).concat(`and ${more} more ${more === 1 ? 'error' : 'errors'}`) : unique;
  return listed.length === 1 ? listed[0]! : `[${listed.join(', ')}]`;
}

function undecodableOptions(metaGroup: string, kind: string, errs: readonly FieldError[]): StatusError {
  return new StatusError(400, 'BadRequest', `${kind}.${metaGroup} "" is invalid: ${aggregate(errs.map((e) => e.message))}`, { group: metaGroup, kind, causes: causesOf(errs) });
}

export const errors = {
  badRequest: (message: string, causes?: StatusCause[]) => new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined),
  notFound: (r: QualifiedResource, name: string) => new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, detailsFor(r, name)),
  /** A path that names no resource the server serves. */
  noRoute: () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {}),
  /** `beingDeleted`: the name is held by an object with a deletionTimestamp (kube-apiserver says so). */
  alreadyExists: (r: QualifiedResource, name: string, beingDeleted = false) =>
    new StatusError(409, 'AlreadyExists', `${beingDeleted ? 'object is being deleted: ' : ''}${qualified(r)} "${name}" already exists`, detailsFor(r, name)),
  conflict: (r: QualifiedResource, name: string, why: string) =>
    new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, detailsFor(r, name)),
  staleUpdate: (r: QualifiedResource, name: string) =>
    errors.conflict(r, name, 'the object has been modified; please apply your changes to the latest version and try again'),
  invalid: (group: string, kind: string, name: string, errs: readonly FieldError[]) =>
    new StatusError(422, 'Invalid', `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${aggregate(errs.map((e) => e.message))}`, {
      // Go leaves an empty name out (the reviews are invalid without one).
      name: name || undefined,
      group: group || undefined,
      kind,
      causes: causesOf(errs),
    }),
  /** Invalid list options: 400 (docs/rulings.md#r1), worded like kube-apiserver's Invalid. */
  invalidListOptions: (metaGroup: string, errs: readonly FieldError[]) => undecodableOptions(metaGroup, 'ListOptions', errs),
  /** Options whose values do not even decode (a string where a number goes): 400, as a decoding failure is in kube-apiserver. */
  undecodableOptions: (metaGroup: string, kind: string, errs: readonly FieldError[]) => undecodableOptions(metaGroup, kind, errs),
  /** Invalid write or delete options (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions): 422, as kube-apiserver's. */
  invalidOptions: (metaGroup: string, kind: string, errs: readonly FieldError[]) =>
    new StatusError(422, 'Invalid', `${kind}.${metaGroup} "" is invalid: ${aggregate(errs.map((e) => e.message))}`, { group: metaGroup, kind, causes: causesOf(errs) }),
  forbidden: (r: QualifiedResource, name: string, why: string) =>
    new StatusError(403, 'Forbidden', `${qualified(r)} "${name}" is forbidden: ${why}`, detailsFor(r, name)),
  methodNotAllowed: () => new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),
  notAcceptable: (accepted: readonly string[]) =>
    new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),
  notAcceptableMessage: (message: string) => new StatusError(406, 'NotAcceptable', message),
  unsupportedMediaType: (accepted: readonly string[]) =>
    new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`),
  unsupportedContentEncoding: (encoding: string) =>
    new StatusError(415, 'UnsupportedMediaType', `unsupported Content-Encoding ${JSON.stringify(encoding.slice(0, 100))}: request bodies are accepted only without a content encoding (identity)`),
  /** A watch (or a read) from a revision whose history is gone. */
  tooOld: (requested: number, oldest: number) => new StatusError(410, 'Expired', `too old resource version: ${requested} (${oldest})`),
  /** A list at a revision whose history is gone (kube-apiserver's words for it). */
  listTooOld: () => new StatusError(410, 'Expired', 'The resourceVersion for the provided list is too old.'),
  continueExpired: () =>
    new StatusError(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    ),
  tooLargeResourceVersion: (requested: number, current: number) =>
    new StatusError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }, { 'Retry-After': '1' }),
  entityTooLarge: (limit: number) => new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  tooManyRequests: () => new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 }, { 'Retry-After': '1' }),
  internal: (why: string) => new StatusError(500, 'InternalError', `Internal error occurred: ${why}`, { causes: [{ message: why }] }),
  timeout: (why: string) => new StatusError(504, 'Timeout', why, {}),
  serverTimeout: (r: QualifiedResource, operation: string) =>
    new StatusError(500, 'ServerTimeout', `The ${operation} operation against ${qualified(r)} could not be completed at this time, please try again.`, { kind: r.resource, group: r.group || undefined, retryAfterSeconds: 2 }),
  unavailable: (why: string) => new StatusError(503, 'ServiceUnavailable', why),
  /**
   * The store is full. kube-apiserver passes etcd's "database space exceeded" on as a 500; 507 says
   * what happened instead, and unlike 503 it does not tell clients that the same request will
   * succeed if retried (it will not until space is freed) nor that the server is down (reads and
   * watches go on being served). docs/rulings.md#r20
   */
  insufficientStorage: (why: string) => new StatusError(507, 'InsufficientStorage', why),
  /**
   * Objects of a list could not be read from storage (kube-apiserver's aggregated corrupt-object
   * error): a cause per object, its storage key in `field`, and one `TooMany` past the limit.
   */
  storeReadList: (r: QualifiedResource, corrupt: readonly { key: string; message: string }[], more: boolean) =>
    new StatusError(500, 'StoreReadError', `failed to read one or more ${qualified(r)} from the storage`, {
      group: r.group || undefined,
      kind: r.resource,
      name: 'list',
      causes: [
        ...corrupt.map((c) => ({ reason: 'UnexpectedServerResponse', field: c.key, message: c.message })),
        ...(more ? [{ reason: 'TooMany', message: 'too many errors, the list is truncated' }] : []),
      ],
    }),
  /** A watch saw the deletion of an object whose stored value it cannot read. */
  storeReadDeleted: (why: string) => new StatusError(500, 'StoreReadError', `saw a DELETED event, but object data is corrupt - ${why}`),
};

export function successStatus(details?: StatusDetails): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}), code: 200 };
}
