// Event (core v1, namespaced): the older form of the events group's Event, served from the same
// storage as Kubernetes serves both from one store. The two differ only in field names
// (involvedObject ↔ regarding, message ↔ note, source ↔ deprecatedSource, firstTimestamp /
// lastTimestamp / count ↔ the deprecated* fields, reportingComponent ↔ reportingController), and
// in their rules: a core write gets only the legacy checks, which name core fields.

import type { Naming } from '../../naming.ts';
import type { FeatureGates } from '../../machinery/feature-gates.ts';
import type { KObject } from '../../machinery/meta.ts';
import type { FieldError } from '../../machinery/field-errors.ts';
import type { KindDefinition, StorageConversion } from '../definition.ts';
import { renamedSchema, renamingConversion, type FieldRenames } from '../conversion.ts';
import type { PrinterColumn } from '../printers.ts';
import { eventColumns, eventDefinition, normalizeEvent, validateEventCommon, type EventObject } from './event.ts';

/** `[core v1 name, events/v1 name]` (Kubernetes' events/v1 conversion). */
const RENAMES: FieldRenames = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

/** core/v1 Event's fields in its declaration order (the order of its JSON). */
const CORE_ORDER = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
] as const;

const DESCRIPTION = 'Event is a report of an event somewhere in the cluster.  Events have a limited retention time and triggers and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.  Events should be treated as informative, best-effort, supplemental data.';

interface CoreEvent extends KObject {
  involvedObject?: Record<string, unknown> | null;
  source?: { component?: string | null } | null;
  reason?: string | null;
  type?: string | null;
  reportingComponent?: string | null;
}

/**
 * Fields core v1 Event always writes, as Kubernetes does (Go structs, and strings without
 * omitempty), with their zero values; the events group omits them, so their zeros are not stored.
 */
const CORE_ZEROS: readonly (readonly [string, unknown])[] = [
  ['involvedObject', {}],
  ['source', {}],
  ['reportingComponent', ''],
  ['reportingInstance', ''],
];
const STORED_ZEROS = CORE_ZEROS.map(([field, zero]) => [RENAMES.find(([c]) => c === field)?.[1] ?? field, zero] as const);

const isZero = (v: unknown, zero: unknown): boolean =>
  v === zero || (typeof zero === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const involved = (o: KObject, f: string): string => text((o as CoreEvent).involvedObject?.[f]);

/** Kubernetes' core event field selectors (its event strategy's ToSelectableFields). */
const coreSelectableFields: Record<string, (o: KObject) => string> = {
  ...Object.fromEntries(['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [`involvedObject.${f}`, (o: KObject) => involved(o, f)])),
  reason: (o) => text((o as CoreEvent).reason),
  reportingComponent: (o) => text((o as CoreEvent).reportingComponent),
  source: (o) => text((o as CoreEvent).source?.component) || text((o as CoreEvent).reportingComponent),
  type: (o) => text((o as CoreEvent).type),
};

/** Replaces `target`'s fields with `source`'s (strategy hooks change the object they are given). */
function replaceFields(target: KObject, source: KObject): void {
  const t = target as unknown as Record<string, unknown>;
  for (const k of Object.keys(t)) delete t[k];
  Object.assign(t, source);
}

export function coreEventDefinition(n: Naming, gates: FeatureGates): KindDefinition {
  const stored = eventDefinition(n, gates);
  const served = { group: '', version: 'v1', kind: 'Event' };
  const schema = renamedSchema(stored.schema, RENAMES, CORE_ORDER, DESCRIPTION);
  const renaming = renamingConversion({ ...served, schema }, stored, RENAMES);
  const conversion: StorageConversion = {
    ...renaming,
    toStorage(o) {
      const e = renaming.toStorage(o) as Record<string, unknown>;
      for (const [field, zero] of STORED_ZEROS) if (isZero(e[field], zero)) delete e[field];
      return e as unknown as KObject;
    },
    fromStorage(o) {
      // Zeros first, so the renaming puts them in core's field order.
      const e = { ...o } as Record<string, unknown>;
      for (const [field, zero] of STORED_ZEROS) e[field] ??= structuredClone(zero);
      return renaming.fromStorage(e as unknown as KObject);
    },
  };
  const asStored = (o: KObject): EventObject => conversion.toStorage(o) as EventObject;
  const columns: readonly PrinterColumn[] = eventColumns.map((c) => ({ ...c, value: (o: KObject, now: number) => c.value(asStored(o), now) }));
  const normalize = (o: KObject): void => {
    const e = asStored(o);
    normalizeEvent(e);
    const back = conversion.fromStorage(e) as Record<string, unknown>;
    // Fields the request left out stay out (and out of its managed fields); reads add their zeros.
    for (const [field] of CORE_ZEROS) if ((o as unknown as Record<string, unknown>)[field] === undefined) delete back[field];
    replaceFields(o, back as unknown as KObject);
  };
  // Only the legacy rules apply to writes through core v1, whatever fields they set.
  const validate = (o: KObject): FieldError[] => validateEventCommon(asStored(o), n.systemNamespace, 'reportingComponent');
  return {
    ...served,
    resource: 'events',
    singular: 'event',
    shortNames: ['ev'],
    namespaced: true,
    verbs: stored.verbs,
    nameRule: stored.nameRule,
    tracksGeneration: false,
    allowCreateOnUpdate: true,
    garbageCollection: false,
    selectableFields: coreSelectableFields,
    schema,
    printerColumns: columns,
    storedAs: conversion,
    storageVersion: stored.storageVersion,
    strategy: {
      prepareForCreate: normalize,
      prepareForUpdate: normalize,
      validate,
      validateUpdate: (o) => validate(o),
    },
  };
}
