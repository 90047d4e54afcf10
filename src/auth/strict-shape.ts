// The strict decoding of a configuration file (AuthenticationConfiguration,
// AuthorizationConfiguration): its fields against a shape, with unknown fields and values of the
// wrong type reported as Go's strict JSON decoder words them.

import { child } from '../machinery/field-errors.ts';

export type Shape = 'string' | 'strings' | 'bool' | { object: Record<string, Shape> } | { list: Record<string, Shape> };

export const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Unknown fields (their paths) and values of the wrong type (their messages) of `value`. */
export function checkShape(value: Record<string, unknown>, shape: Record<string, Shape>, path: string, unknown: string[], typeErrors: string[]): void {
  for (const [k, v] of Object.entries(value)) {
    const p = child(path, k);
    const s = shape[k];
    if (s === undefined) {
      unknown.push(p);
      continue;
    }
    if (v === null) continue;
    const want = (t: string, goType: string) => {
      if (jsonType(v) !== t) typeErrors.push(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${p} of type ${goType}`);
      return jsonType(v) === t;
    };
    if (s === 'string') want('string', 'string');
    else if (s === 'bool') want('boolean', 'bool');
    else if (s === 'strings') {
      if (want('array', '[]string')) (v as unknown[]).forEach((x, i) => jsonType(x) !== 'string' && typeErrors.push(`json: cannot unmarshal ${jsonType(x)} into Go struct field ${child(p, i)} of type string`));
    } else if ('object' in s) {
      if (want('object', 'struct')) checkShape(v as Record<string, unknown>, s.object, p, unknown, typeErrors);
    } else if (want('array', '[]struct')) {
      (v as unknown[]).forEach((x, i) => {
        if (jsonType(x) === 'object') checkShape(x as Record<string, unknown>, s.list, child(p, i), unknown, typeErrors);
        else if (x !== null) typeErrors.push(`json: cannot unmarshal ${jsonType(x)} into Go struct field ${child(p, i)} of type struct`);
      });
    }
  }
}
