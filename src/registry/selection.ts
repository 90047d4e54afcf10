// Label and field selectors applied to objects of a kind: the fields a field selector can test
// come from the definition (name, namespace, and the kind's selectable fields).

import type { KObject } from '../machinery/meta.ts';
import type { ListOptions } from '../machinery/list-options.ts';
import type { KindDefinition } from './definition.ts';

/** The values `fieldSelector` can test on an object of `def`. */
function fieldsOf(def: KindDefinition, obj: KObject): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
  if (def.namespaced) fields['metadata.namespace'] = obj.metadata.namespace ?? '';
  for (const [f, get] of Object.entries(def.selectableFields ?? {})) fields[f] = get(obj) ?? '';
  return fields;
}

/** Whether an object is selected; undefined when the selectors select everything. */
export function selectorMatcher(def: KindDefinition, opts: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>): ((obj: KObject) => boolean) | undefined {
  if (opts.labelSelector.empty && opts.fieldSelector.empty) return undefined;
  return (obj) => opts.labelSelector.matches(obj.metadata.labels) && opts.fieldSelector.matches(fieldsOf(def, obj));
}
