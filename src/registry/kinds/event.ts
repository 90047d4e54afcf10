// Event (n.group('events')/v1, namespaced): best-effort reports of happenings in the cluster, with
// the fields, rules, field selectors and columns of Kubernetes' events.k8s.io/v1 Event. Its fields
// sit at the top level of the object; there is no spec.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import { fieldError, type FieldError } from '../../machinery/field-errors.ts';
import { isPlainObject, qualifiedName, type KObject } from '../../machinery/meta.ts';
import { ALL_VERBS, type KindDefinition } from '../definition.ts';
import { nameColumn, since, type PrinterColumn } from '../printers.ts';
import type { Schema } from '../../machinery/schema.ts';
import { describe, int32, microTime, obj, objectSchema, str, time } from '../schemas.ts';
import { eventDocs } from './docs/event.ts';

/** Limits of the events API, in UTF-8 bytes as Kubernetes counts them (docs/rulings.md#r14). */
const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

const EVENT_TYPES = ['Normal', 'Warning'] as const;

interface ObjectReference {
  kind?: string | null;
  namespace?: string | null;
  name?: string | null;
  uid?: string | null;
  apiVersion?: string | null;
  resourceVersion?: string | null;
  fieldPath?: string | null;
}

interface EventSeries {
  count?: number | null;
  lastObservedTime?: string | null;
}

interface EventSource {
  component?: string | null;
  host?: string | null;
}

/** An Event as decoded: the schema has checked the types; absent and null both mean unset. */
export interface EventObject extends KObject {
  eventTime?: string | null;
  series?: EventSeries | null;
  reportingController?: string | null;
  reportingInstance?: string | null;
  action?: string | null;
  reason?: string | null;
  regarding?: ObjectReference | null;
  related?: ObjectReference | null;
  note?: string | null;
  type?: string | null;
  deprecatedSource?: EventSource | null;
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
  deprecatedCount?: number | null;
}

const asEvent = (o: KObject): EventObject => o as EventObject;

// ObjectReference is a struct Kubernetes treats as atomic: merges replace it whole.
const objectReference = (): Schema =>
  obj(
    {
      kind: str(),
      namespace: str(),
      name: str(),
      uid: str(),
      apiVersion: str(),
      resourceVersion: str(),
      fieldPath: str(),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  );

// Required fields and length limits are not schema constraints: Kubernetes checks them in the
// strategy, so every problem of a request is reported together, with Kubernetes' wording.
const eventSchema = objectSchema(
  {
    eventTime: microTime(),
    series: obj({ count: int32(), lastObservedTime: microTime() }),
    reportingController: str(),
    reportingInstance: str(),
    action: str(),
    reason: str(),
    regarding: objectReference(),
    related: objectReference(),
    note: str(),
    type: str(),
    deprecatedSource: obj({ component: str(), host: str() }),
    deprecatedFirstTimestamp: time(),
    deprecatedLastTimestamp: time(),
    deprecatedCount: int32(),
  },
);

export function eventDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  void gates;
  return {
    group: n.group('events'),
    version: 'v1',
    kind: 'Event',
    resource: 'events',
    singular: 'event',
    shortNames: ['ev'],
    namespaced: true,
    verbs: ALL_VERBS,
    nameRule: 'dns-subdomain',
    // Kubernetes' event strategy keeps no generation, and a PUT of a missing event creates it.
    tracksGeneration: false,
    allowCreateOnUpdate: true,
    // Kubernetes' event strategy has no garbage collection: a propagation policy is ignored.
    garbageCollection: false,
    // Kubernetes stores events of both groups as core v1 Events.
    storageVersion: { group: '', version: 'v1', kind: 'Event' },
    selectableFields: eventSelectableFields,
    schema: describe(eventSchema, eventDocs({ reportingInstance: REPORTING_INSTANCE_LENGTH_LIMIT, action: ACTION_LENGTH_LIMIT, reason: REASON_LENGTH_LIMIT, note: NOTE_LENGTH_LIMIT })),
    printerColumns: eventColumns,
    strategy: {
      prepareForCreate: (o) => normalizeEvent(asEvent(o)),
      prepareForUpdate: (o) => normalizeEvent(asEvent(o)),
      validate: (o) => validateEventCreate(asEvent(o), n.systemNamespace),
      validateUpdate: (o, old) => validateEventUpdate(asEvent(o), asEvent(old), n.systemNamespace),
    },
  };
}

// ---- field selectors ----

const text = (v: string | null | undefined): string => v ?? '';
// The schema has checked that these are objects when present.
const regardingOf = (e: EventObject): ObjectReference => e.regarding ?? {};
const sourceOf = (e: EventObject): EventSource => e.deprecatedSource ?? {};

/**
 * The fields Kubernetes lets a field selector test on events.k8s.io/v1 (its events/v1 field label
 * conversion): `regarding.*` (core's `involvedObject.*`), `reason`, `reportingController`, `type`
 * and `source`, which is the deprecated source component, else the reporting controller.
 */
const eventSelectableFields: Record<string, (o: KObject) => string> = {
  'regarding.kind': (o) => text(regardingOf(asEvent(o)).kind),
  'regarding.namespace': (o) => text(regardingOf(asEvent(o)).namespace),
  'regarding.name': (o) => text(regardingOf(asEvent(o)).name),
  'regarding.uid': (o) => text(regardingOf(asEvent(o)).uid),
  'regarding.apiVersion': (o) => text(regardingOf(asEvent(o)).apiVersion),
  'regarding.resourceVersion': (o) => text(regardingOf(asEvent(o)).resourceVersion),
  'regarding.fieldPath': (o) => text(regardingOf(asEvent(o)).fieldPath),
  reason: (o) => text(asEvent(o).reason),
  reportingController: (o) => text(asEvent(o).reportingController),
  source: (o) => {
    const e = asEvent(o);
    return text(sourceOf(e).component) || text(e.reportingController);
  },
  type: (o) => text(asEvent(o).type),
};

// ---- times ----

/** An instant as Go's time.Time holds it: seconds since the Unix epoch and nanoseconds. */
interface Instant {
  seconds: number;
  nanos: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The instant of an RFC 3339 text (any fraction, any offset); undefined when unset or unreadable. */
function instantOf(v: unknown): Instant | undefined {
  if (typeof v !== 'string') return undefined;
  const m = RFC3339.exec(v);
  if (m === null) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const offset = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60);
  const nanos = m[7] === undefined ? 0 : Number(m[7].slice(0, 9).padEnd(9, '0'));
  return { seconds: d.getTime() / 1000 - offset, nanos };
}

const sameInstant = (a: Instant | undefined, b: Instant | undefined): boolean =>
  a === undefined || b === undefined ? a === b : a.seconds === b.seconds && a.nanos === b.nanos;

const truncatedToMicros = (i: Instant | undefined): Instant | undefined => (i === undefined ? undefined : { seconds: i.seconds, nanos: i.nanos - (i.nanos % 1000) });

/** `YYYY-MM-DDTHH:MM:SS` in UTC, or undefined outside the years a 4-digit form can write. */
function utcSeconds(i: Instant): string | undefined {
  const d = new Date(i.seconds * 1000);
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) return undefined;
  return d.toISOString().slice(0, 19);
}

/** metav1.MicroTime's wire form: UTC with exactly six fraction digits. */
function microTimeText(v: string): string {
  const i = instantOf(v);
  const base = i && utcSeconds(i);
  return i && base ? `${base}.${String(Math.floor(i.nanos / 1000)).padStart(6, '0')}Z` : v;
}

/** metav1.Time's wire form: UTC, whole seconds. */
function timeText(v: string): string {
  const i = instantOf(v);
  const base = i && utcSeconds(i);
  return base ? `${base}Z` : v;
}

/** Go's time.Time String() of an instant in UTC, as Kubernetes shows times inside field errors. */
function goTimeString(i: Instant | undefined): string {
  if (i === undefined) return '0001-01-01 00:00:00 +0000 UTC';
  const base = utcSeconds(i)?.replace('T', ' ') ?? String(i.seconds);
  const fraction = i.nanos ? `.${String(i.nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${base}${fraction} +0000 UTC`;
}

// ---- normalization ----

/**
 * Times as Kubernetes stores and returns them (MicroTime with six fraction digits in UTC, Time in
 * whole UTC seconds), and no explicit nulls: an unset field is absent.
 */
export function normalizeEvent(e: EventObject): void {
  const top = e as Record<string, unknown>;
  for (const k of Object.keys(top)) if (top[k] === null) delete top[k];
  for (const k of ['series', 'regarding', 'related', 'deprecatedSource'] as const) {
    const v = e[k];
    if (isPlainObject(v)) for (const f of Object.keys(v)) if (v[f] === null) delete v[f];
  }
  if (typeof e.eventTime === 'string') e.eventTime = microTimeText(e.eventTime);
  if (e.series && typeof e.series.lastObservedTime === 'string') e.series.lastObservedTime = microTimeText(e.series.lastObservedTime);
  if (typeof e.deprecatedFirstTimestamp === 'string') e.deprecatedFirstTimestamp = timeText(e.deprecatedFirstTimestamp);
  if (typeof e.deprecatedLastTimestamp === 'string') e.deprecatedLastTimestamp = timeText(e.deprecatedLastTimestamp);
}

// ---- validation ----

/**
 * Kubernetes validates the internal (core) form of an event, so a few causes name the core field
 * rather than the events/v1 one; clients see exactly these paths from kube-apiserver.
 */
const CORE_PATH = {
  regarding: 'involvedObject',
  regardingNamespace: 'involvedObject.namespace',
  note: 'message',
  deprecatedSource: 'source',
  deprecatedFirstTimestamp: 'firstTimestamp',
  deprecatedLastTimestamp: 'lastTimestamp',
  deprecatedCount: 'count',
} as const;

/** Go's len(): strings are measured in bytes. */
const byteLength = (v: string | null | undefined): number => Buffer.byteLength(v ?? '');

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * The rules every event passes (legacyValidateEvent). An event with an eventTime is a new-style
 * event: its reporting fields, action and reason are required and bounded, and it may name no
 * regarding namespace only in the default or the system namespace. An event without one is
 * checked only for namespace agreement with `regarding`. `reportingPath` names the reporting
 * controller as the request's version does (core v1 calls it reportingComponent).
 */
export function validateEventCommon(e: EventObject, systemNamespace: string, reportingPath = 'reportingController'): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = e.metadata.namespace ?? '';
  const regardingNamespace = text(regardingOf(e).namespace);
  const mismatch = (): FieldError => fieldError.invalid(CORE_PATH.regardingNamespace, regardingNamespace, 'does not match event.namespace');
  if (!isSet(e.eventTime)) {
    if (regardingNamespace === '') {
      if (namespace !== '' && namespace !== 'default') errs.push(mismatch());
    } else if (namespace !== regardingNamespace) {
      errs.push(mismatch());
    }
    return errs;
  }
  if (regardingNamespace === '' && namespace !== 'default' && namespace !== systemNamespace) errs.push(mismatch());
  const controller = text(e.reportingController);
  if (controller === '') errs.push(fieldError.required(reportingPath));
  for (const m of qualifiedName(controller)) errs.push(fieldError.invalid(reportingPath, controller, m));
  const bounded = (path: string, v: string | null | undefined, limit: number): void => {
    if (byteLength(v) === 0) errs.push(fieldError.required(path));
    if (byteLength(v) > limit) errs.push(fieldError.invalid(path, '', `can have at most ${limit} characters`));
  };
  bounded('reportingInstance', e.reportingInstance, REPORTING_INSTANCE_LENGTH_LIMIT);
  bounded('action', e.action, ACTION_LENGTH_LIMIT);
  bounded('reason', e.reason, REASON_LENGTH_LIMIT);
  if (byteLength(e.note) > NOTE_LENGTH_LIMIT) errs.push(fieldError.invalid(CORE_PATH.note, '', `can have at most ${NOTE_LENGTH_LIMIT} characters`));
  return errs;
}

/** A series, when present, counts at least two occurrences and has its last observation time. */
function validateSeries(e: EventObject): FieldError[] {
  const series = e.series;
  if (!series) return [];
  const errs: FieldError[] = [];
  if ((series.count ?? 0) < 2) errs.push(fieldError.invalid('series.count', '', 'should be at least 2'));
  if (!isSet(series.lastObservedTime)) errs.push(fieldError.required('series.lastObservedTime'));
  return errs;
}

/** ValidateEventCreate for the events/v1 request version. */
function validateEventCreate(e: EventObject, systemNamespace: string): FieldError[] {
  const errs = validateEventCommon(e, systemNamespace);
  for (const x of validateSeries(e)) errs.push(x);
  if (!isSet(e.eventTime)) errs.push(fieldError.required('eventTime'));
  const type = text(e.type);
  if (!(EVENT_TYPES as readonly string[]).includes(type)) errs.push(fieldError.invalid('type', '', `has invalid value: ${type}`));
  // The fields kept for compatibility with the core Event cannot be set on a new event.
  const unset = (path: string): FieldError => fieldError.invalid(path, '', 'needs to be unset');
  if (isSet(e.deprecatedFirstTimestamp)) errs.push(unset(CORE_PATH.deprecatedFirstTimestamp));
  if (isSet(e.deprecatedLastTimestamp)) errs.push(unset(CORE_PATH.deprecatedLastTimestamp));
  if ((e.deprecatedCount ?? 0) !== 0) errs.push(unset(CORE_PATH.deprecatedCount));
  const source = sourceOf(e);
  if (text(source.component) !== '' || text(source.host) !== '') errs.push(unset(CORE_PATH.deprecatedSource));
  return errs;
}

// Values inside immutability errors are rendered as Go prints them (%q strings, %v numbers,
// String() of times, %#v of structs), so the messages read as kube-apiserver's.

function goStruct(type: string, fields: readonly [string, string | null | undefined][]): string {
  return `${type}{${fields.map(([name, v]) => `${name}:${JSON.stringify(v ?? '')}`).join(', ')}}`;
}

function goObjectReference(ref: ObjectReference | null | undefined): string {
  const r = ref ?? {};
  return goStruct('core.ObjectReference', [
    ['Kind', r.kind],
    ['Namespace', r.namespace],
    ['Name', r.name],
    ['UID', r.uid],
    ['APIVersion', r.apiVersion],
    ['ResourceVersion', r.resourceVersion],
    ['FieldPath', r.fieldPath],
  ]);
}

const REFERENCE_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'] as const;

const sameReference = (a: ObjectReference | null | undefined, b: ObjectReference | null | undefined): boolean =>
  REFERENCE_FIELDS.every((f) => text(a?.[f]) === text(b?.[f]));

const immutable = (path: string, shown: string): FieldError => ({
  type: 'FieldValueInvalid',
  field: path,
  message: `${path}: Invalid value: ${shown}: field is immutable`,
});

/** The series as Go compares it: absent, or its count and last observation. */
const seriesKey = ({ series }: EventObject): string => (series ? JSON.stringify([series.count ?? 0, instantOf(series.lastObservedTime) ?? null]) : 'nil');

/**
 * ValidateEventUpdate for the events/v1 request version: the common rules, a changed series is
 * checked again, and everything but the series (and metadata) is immutable. The `reason` check
 * appears twice in Kubernetes' list, so its cause does too.
 */
function validateEventUpdate(e: EventObject, old: EventObject, systemNamespace: string): FieldError[] {
  const errs = validateEventCommon(e, systemNamespace);
  if (seriesKey(e) !== seriesKey(old)) for (const x of validateSeries(e)) errs.push(x);
  const sameText = (path: string, a: string | null | undefined, b: string | null | undefined): void => {
    if (text(a) !== text(b)) errs.push(immutable(path, JSON.stringify(text(a))));
  };
  const sameTime = (path: string, a: string | null | undefined, b: string | null | undefined): void => {
    if (!sameInstant(instantOf(a), instantOf(b))) errs.push(immutable(path, goTimeString(instantOf(a))));
  };
  if (!sameReference(e.regarding, old.regarding)) errs.push(immutable(CORE_PATH.regarding, goObjectReference(e.regarding)));
  sameText('reason', e.reason, old.reason);
  sameText(CORE_PATH.note, e.note, old.note);
  const [source, oldSource] = [sourceOf(e), sourceOf(old)];
  if (text(source.component) !== text(oldSource.component) || text(source.host) !== text(oldSource.host))
    errs.push(immutable(CORE_PATH.deprecatedSource, goStruct('core.EventSource', [['Component', source.component], ['Host', source.host]])));
  sameTime(CORE_PATH.deprecatedFirstTimestamp, e.deprecatedFirstTimestamp, old.deprecatedFirstTimestamp);
  sameTime(CORE_PATH.deprecatedLastTimestamp, e.deprecatedLastTimestamp, old.deprecatedLastTimestamp);
  if ((e.deprecatedCount ?? 0) !== (old.deprecatedCount ?? 0)) errs.push(immutable(CORE_PATH.deprecatedCount, String(e.deprecatedCount ?? 0)));
  sameText('reason', e.reason, old.reason);
  sameText('type', e.type, old.type);
  // Changes below a microsecond are tolerated: clients truncate eventTime when they serialize it.
  const eventTime = instantOf(e.eventTime);
  if (!sameInstant(truncatedToMicros(eventTime), truncatedToMicros(instantOf(old.eventTime)))) errs.push(immutable('eventTime', goTimeString(eventTime)));
  sameText('action', e.action, old.action);
  const relatedSet = isSet(e.related);
  if (relatedSet !== isSet(old.related) || (relatedSet && !sameReference(e.related, old.related)))
    errs.push(immutable('related', relatedSet ? goObjectReference(e.related) : 'null'));
  sameText('reportingController', e.reportingController, old.reportingController);
  sameText('reportingInstance', e.reportingInstance, old.reportingInstance);
  return errs;
}

// ---- table columns ----

/** The count a table shows: the series count, else the deprecated count, else 1 (a singleton). */
function countOf(e: EventObject): number {
  if (e.series) return e.series.count ?? 0;
  return e.deprecatedCount || 1;
}

function firstSeen(e: EventObject, now: number): string {
  return isSet(e.deprecatedFirstTimestamp) ? since(e.deprecatedFirstTimestamp, now) : since(e.eventTime, now);
}

function lastSeen(e: EventObject, now: number): string {
  if (e.series) return since(e.series.lastObservedTime, now);
  return isSet(e.deprecatedLastTimestamp) ? since(e.deprecatedLastTimestamp, now) : firstSeen(e, now);
}

/** `kind/name` of the regarding object, the kind in lower case. */
function target(e: EventObject): string {
  const r = regardingOf(e);
  const kind = text(r.kind).toLowerCase();
  return text(r.name) ? `${kind}/${text(r.name)}` : kind;
}

/** The deprecated source, each part falling back to the reporting controller and instance. */
function sourceCell(e: EventObject): string {
  const s = sourceOf(e);
  const component = text(s.component) || text(e.reportingController);
  const instance = text(s.host) || text(e.reportingInstance);
  return instance ? `${component}, ${instance}` : component;
}

/** Kubernetes prints events.k8s.io events with the core Event columns. */
export const eventColumns: readonly PrinterColumn[] = [
  { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', value: (o, now) => lastSeen(asEvent(o), now) },
  { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future', value: (o) => text(asEvent(o).type) },
  {
    name: 'Reason',
    type: 'string',
    description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    value: (o) => text(asEvent(o).reason),
  },
  { name: 'Object', type: 'string', description: 'The object that this event is about.', value: (o) => target(asEvent(o)) },
  {
    name: 'Subobject',
    type: 'string',
    priority: 1,
    description:
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
    value: (o) => text(regardingOf(asEvent(o)).fieldPath),
  },
  { name: 'Source', type: 'string', priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.', value: (o) => sourceCell(asEvent(o)) },
  { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', value: (o) => text(asEvent(o).note).trim() },
  { name: 'First Seen', type: 'string', priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', value: (o, now) => firstSeen(asEvent(o), now) },
  { name: 'Count', type: 'string', priority: 1, description: 'The number of times this event has occurred.', value: (o) => countOf(asEvent(o)) },
  { ...nameColumn, priority: 1 },
];
