// Table columns: what `kubectl get` prints for a kind. A kind lists its columns in its definition
// (Kubernetes' own columns where it has them); the Table endpoint renders them.

import type { KObject } from '../machinery/meta.ts';

export interface PrinterColumn {
  name: string;
  /** OpenAPI type of the cells: string, integer, number, boolean, date. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0: always shown; 1 and more: only with `-o wide`. */
  priority?: number;
  /** The cell of one object. */
  value(obj: KObject, now: number): unknown;
  /** A missing value (null) is a null cell, as in a custom resource's columns; otherwise an empty string. */
  nullCells?: boolean;
}

/** Go's duration.HumanDuration, as Kubernetes prints ages ("45s", "3m12s", "5h", "12d"). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** translateTimestampSince: the age of a timestamp, `<unknown>` when unset. */
export function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || !timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** The Age column every kind ends with. */
export const ageColumn: PrinterColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  value: (o, now) => since(o.metadata.creationTimestamp, now),
};

/** The Name column every kind starts with. */
export const nameColumn: PrinterColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  value: (o) => o.metadata.name,
};
