// Conversions of read responses: Table (what `kubectl get` prints) and PartialObjectMetadata
// (what metadata-only clients and informers read), as kube-apiserver offers them for get, list
// and watch.

import { errors } from '../machinery/status.ts';
import { fieldError } from '../machinery/field-errors.ts';
import type { KObject } from '../machinery/meta.ts';
import type { KindDefinition } from '../registry/definition.ts';
import { nameColumn, type PrinterColumn } from '../registry/printers.ts';
import type { Conversion } from '../negotiation/negotiate.ts';

type IncludeObject = 'None' | 'Metadata' | 'Object';

const INCLUDE_OBJECT: readonly IncludeObject[] = ['Metadata', 'None', 'Object'];

/** `includeObject` of TableOptions (default Metadata); anything else is 400. */
export function includeObjectOption(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if ((INCLUDE_OBJECT as readonly string[]).includes(v)) return v as IncludeObject;
  throw errors.badRequest(`Unable to convert to Table as requested: ${fieldError.notSupported('includeObject', v, INCLUDE_OBJECT).message}`);
}

const createdAtColumn: PrinterColumn = {
  name: 'Created At',
  type: 'date',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  value: (o) => o.metadata.creationTimestamp,
};

/** The kind's columns, or the default Name / Created At table. */
function columnsOf(def: KindDefinition): readonly PrinterColumn[] {
  return def.printerColumns ?? [nameColumn, createdAtColumn];
}

function partialObjectMetadata(obj: KObject, apiVersion: string): KObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata };
}

interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface TableRequest {
  def: KindDefinition;
  apiVersion: string;
  includeObject: IncludeObject;
  /** Column definitions are left out (later events of a watch). */
  noHeaders?: boolean;
}

/** A Table of the objects, one row each. */
export function toTable(req: TableRequest, objects: readonly KObject[], meta: ListMeta): Record<string, unknown> {
  const columns = columnsOf(req.def);
  const now = Date.now();
  const rows = objects.map((o) => {
    const row: Record<string, unknown> = { cells: columns.map((c) => cell(c.value(o, now), c.nullCells)) };
    if (req.includeObject === 'Object') row.object = o;
    else if (req.includeObject === 'Metadata') row.object = partialObjectMetadata(o, req.apiVersion);
    return row;
  });
  const metadata: ListMeta = {};
  if (meta.resourceVersion) metadata.resourceVersion = meta.resourceVersion;
  if (meta.continue) metadata.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) metadata.remainingItemCount = meta.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: req.apiVersion,
    metadata,
    columnDefinitions: req.noHeaders
      ? null
      : columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
    rows,
  };
}

/**
 * Cells are JSON values; a column that has nothing to show gives an empty string, as Go's zero
 * value, or null where the column says so (a custom resource's: kubectl prints `<none>`).
 */
function cell(v: unknown, nullCells?: boolean): unknown {
  if (v === undefined || v === null) return nullCells ? null : '';
  return v;
}

/** The converted body of a single object (get, watch events). */
export function convertObject(convert: Conversion, obj: KObject, table: TableRequest | undefined): unknown {
  switch (convert.kind) {
    case 'PartialObjectMetadata':
      return partialObjectMetadata(obj, convert.apiVersion);
    case 'Table':
      return toTable(table!, [obj], { resourceVersion: obj.metadata.resourceVersion });
    case 'PartialObjectMetadataList':
      throw errors.notAcceptableMessage(`you requested PartialObjectMetadataList, but the requested object is not a list (*${obj.kind})`);
  }
}

/** The converted body of a list. */
export function convertList(convert: Conversion, items: readonly KObject[], meta: ListMeta, table: TableRequest | undefined): unknown {
  switch (convert.kind) {
    case 'PartialObjectMetadataList':
      return { kind: 'PartialObjectMetadataList', apiVersion: convert.apiVersion, metadata: meta, items: items.map((o) => partialObjectMetadata(o, convert.apiVersion)) };
    case 'Table':
      return toTable(table!, items, meta);
    case 'PartialObjectMetadata':
      throw errors.notAcceptableMessage(`you requested PartialObjectMetadata, but the requested object is a list (*${table?.def.kind ?? 'Object'}List)`);
  }
}
