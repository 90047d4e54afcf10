// What the fields of Event (events group) mean, as `kubectl explain` and OpenAPI show them.

import type { ObjectDocs } from '../../schemas.ts';

/** An ObjectReference: which object something is about. */
export const objectReferenceDocs = (about: string): ObjectDocs => ({
  about,
  typeAbout: 'A reference to one object by kind, namespace, name and uid, or to a part of it.',
  fields: {
    kind: 'The kind of the object, such as Node.',
    namespace: 'The namespace of the object, empty for a cluster-scoped object.',
    name: 'The name of the object.',
    uid: 'The uid of the object.',
    apiVersion: 'The group and version of the object.',
    resourceVersion: 'The resource version of the object the report was made against, if it matters.',
    fieldPath: 'A part of the object the report is about, such as spec.containers{name}; empty for the whole object.',
  },
});

/** Where an older-style event came from. */
const eventSourceDocs = (about: string): ObjectDocs => ({
  about,
  typeAbout: 'The component and host an older-style event came from.',
  fields: {
    component: 'The component that reported the event.',
    host: 'The host the reporting component ran on.',
  },
});

/** The length limits the server applies, in characters (the note in bytes). */
interface EventLimits {
  reportingInstance: number;
  action: number;
  reason: number;
  note: number;
}

export const eventDocs = (limits: EventLimits): ObjectDocs => ({
  about:
    'A report, for information only, that something happened to an object, such as a node becoming ready. Events are kept for a limited time and on a best-effort basis; a reason does not always mean the same underlying cause.',
  fields: {
    eventTime: 'When the event was first observed, with microsecond precision. Required on new events.',
    series: {
      about: 'Present when the same event happened repeatedly: how often, and when last. Only the series may change once an event is written.',
      typeAbout: 'A count and last time of a repeated event.',
      fields: {
        count: 'How many times the event has happened up to lastObservedTime; at least 2.',
        lastObservedTime: 'When the event was last observed, with microsecond precision. Required in a series.',
      },
    },
    reportingController: 'The name of the controller that reported the event, a qualified name such as example.com/my-controller. Required on new events.',
    reportingInstance: `Which instance of the controller reported it, such as its pod or host name. Required on new events; at most ${limits.reportingInstance} characters.`,
    action: `What was done, or failed, about the object, for machines (such as Scheduling). Required on new events; at most ${limits.action} characters.`,
    reason: `Why the action was taken, in a few words (such as NodeReady). Required on new events; at most ${limits.reason} characters.`,
    regarding: objectReferenceDocs('The object the event is about, usually the one the reporting controller acts on. Cannot be changed.'),
    related: objectReferenceDocs('A second object involved, if any; for example the node a pod was placed on. Cannot be changed.'),
    note: `A human-readable description of what happened; at most ${limits.note} bytes.`,
    type: 'Normal or Warning (more types may come); required on new events.',
    deprecatedSource: eventSourceDocs('Kept for older-style events: the reporting component and host. Must be unset on new events.'),
    deprecatedFirstTimestamp: 'Kept for older-style events: when the event was first seen. Must be unset on new events.',
    deprecatedLastTimestamp: 'Kept for older-style events: when the event was last seen. Must be unset on new events.',
    deprecatedCount: 'Kept for older-style events: how many times it happened. Must be unset on new events.',
  },
});
