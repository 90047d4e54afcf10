// Hostile PATCH requests for `npm run bench:hostile`: every patch type (JSON patch, merge patch,
// strategic merge patch, server-side apply in YAML and in JSON) with the shapes that make merge and
// ownership work grow faster than the body: many keys, many unknown or duplicate fields, deep
// nesting, long strings, long keyed lists and sets, many managedFields entries, one manager owning
// very many fields, and (JSON patch) many operations. Each case builds one request whose body is
// about `bytes` long, creating the object it patches first.

import type { HostileCase } from './hostile.ts';

type Ctx = { url: string; namespace: string };
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const API_VERSION = 'coordination.orch.io/v1';
const leases = (ns: string): string => `/apis/${API_VERSION}/namespaces/${ns}/leases`;

let serial = 0;
const uniqueName = (shape: string): string => `hp-${shape}-${process.pid}-${++serial}`;

const CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  'apply-yaml': 'application/apply-patch+yaml',
  'apply-json': 'application/apply-patch+yaml',
} as const;
type PatchFormat = keyof typeof CONTENT_TYPES;
const FORMATS = Object.keys(CONTENT_TYPES) as PatchFormat[];
const isApply = (f: PatchFormat): boolean => f === 'apply-yaml' || f === 'apply-json';

async function ensureNamespace(ctx: Ctx): Promise<void> {
  const res = await fetch(`${ctx.url}/api/v1/namespaces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ctx.namespace } }),
  });
  await res.arrayBuffer();
  if (res.status !== 201 && res.status !== 409) throw new Error(`creating namespace ${ctx.namespace}: ${res.status}`);
}

/** Creates the Lease to patch (its body may carry managedFields, honoured on create). */
async function createLease(ctx: Ctx, name: string, extra: { metadata?: Obj; spec?: Obj } = {}): Promise<void> {
  await ensureNamespace(ctx);
  const body = { apiVersion: API_VERSION, kind: 'Lease', metadata: { name, ...(extra.metadata ?? {}) }, spec: { holderIdentity: 'h', ...(extra.spec ?? {}) } };
  const res = await fetch(`${ctx.url}${leases(ctx.namespace)}?fieldManager=creator`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`creating lease ${name}: ${res.status} ${text.slice(0, 300)}`);
}

/** YAML of a JSON value in block style (keys and strings quoted as JSON, which YAML reads the same). */
function toYaml(v: Json, indent = ''): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return v.map((x) => `\n${indent}- ${toYaml(x, `${indent}  `).replace(/^\n\s*/, '')}`).join('');
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return '{}';
  return keys.map((k) => `\n${indent}${JSON.stringify(k)}: ${toYaml(v[k]!, `${indent}  `)}`).join('');
}

function request(format: PatchFormat, ctx: Ctx, name: string, body: Json | string, target: Target = 'lease'): { method: string; path: string; headers: Record<string, string>; body: Buffer } {
  const q = isApply(format) ? '?fieldManager=hostile&force=true' : '';
  const text = typeof body === 'string' ? body : format === 'apply-yaml' ? `${toYaml(body).replace(/^\n/, '')}\n` : JSON.stringify(body);
  const path = target === 'lease' ? `${leases(ctx.namespace)}/${name}` : `/api/v1/nodes/${name}/status`;
  return { method: 'PATCH', path: `${path}${q}`, headers: { 'content-type': CONTENT_TYPES[format] }, body: Buffer.from(text) };
}

/** What a case patches: a Lease, or a Node's status (for a keyed list: status.conditions, by type). */
type Target = 'lease' | 'node-status';

async function createNode(ctx: Ctx, name: string, status: Obj): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'Node', metadata: { name }, status };
  const res = await fetch(`${ctx.url}/api/v1/nodes?fieldManager=creator`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`creating node ${name}: ${res.status} ${text.slice(0, 300)}`);
}

/** A Node status patch setting `conditions`, in each patch type's shape. */
function nodeConditionsPatch(format: PatchFormat, name: string, conditions: Json[]): Json {
  if (format === 'json') return [{ op: 'add', path: '/status/conditions', value: conditions }];
  if (isApply(format)) return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { conditions } };
  return { status: { conditions } };
}

function conditions(n: number, offset = 0): Json[] {
  const out: Json[] = [];
  for (let i = offset; i < offset + n; i++) out.push({ type: `Condition${pad(i)}`, status: 'True', reason: 'Reason', message: `message ${i}` });
  return out;
}

/** The body for a patch that sets `fields` (a partial Lease): the shape each patch type takes. */
function patchSetting(format: PatchFormat, name: string, fields: { metadata?: Obj; spec?: Obj }): Json {
  if (format === 'json') {
    // One operation per metadata field, one for the whole spec.
    const ops: Json[] = [];
    for (const [k, x] of Object.entries(fields.metadata ?? {})) ops.push({ op: 'add', path: `/metadata/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: x });
    if (fields.spec) ops.push({ op: 'add', path: '/spec', value: fields.spec });
    return ops;
  }
  if (isApply(format)) return { apiVersion: API_VERSION, kind: 'Lease', metadata: { name, ...(fields.metadata ?? {}) }, ...(fields.spec ? { spec: fields.spec } : {}) };
  return fields as Json;
}

const pad = (i: number, n = 6): string => String(i).padStart(n, '0');

/**
 * The largest-fitting count: `make(n)` builds a body with n items; n is estimated from a small
 * body, then corrected once from the real size, so every format lands near `bytes`.
 */
function fit<T extends { body: { length: number } }>(bytes: number, make: (n: number) => T): T {
  const probe = make(64);
  const per = Math.max(1, probe.body.length / 64);
  let n = Math.max(1, Math.floor(bytes / per));
  let out = make(n);
  n = Math.max(1, Math.floor((n * bytes) / out.body.length));
  out = make(n);
  while (out.body.length > bytes && n > 1) out = make((n = Math.floor(n * 0.98)));
  return out;
}

function labels(n: number, prefix = 'l'): Obj {
  const out: Obj = {};
  for (let i = 0; i < n; i++) out[`${prefix}${pad(i)}`] = `v${i}`;
  return out;
}

const finalizers = (n: number, offset = 0): Json[] => Array.from({ length: n }, (_, i) => `example.com/f-${pad(i + offset)}`);

/** A managedFields entry owning the given labels. */
function managedEntry(manager: string, labelKeys: string[], operation: 'Apply' | 'Update' = 'Apply'): Obj {
  const fl: Obj = {};
  for (const k of labelKeys) fl[`f:${k}`] = {};
  return { manager, operation, apiVersion: API_VERSION, time: '2024-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': fl } } };
}

/** A label key of about `len` characters: a DNS-subdomain prefix and a name (valid up to 317). */
function longLabelKey(i: number, len: number): string {
  const name = `l${pad(i)}`;
  let prefix = '';
  let segment = 0;
  while (prefix.length + name.length + 1 < len && prefix.length < 240) {
    const room = Math.min(60, 252 - prefix.length, len - name.length - 1 - prefix.length - 1);
    if (room < 1) break;
    prefix += `${prefix ? '.' : ''}${String.fromCharCode(97 + (segment++ % 26)).repeat(room)}`;
  }
  return prefix ? `${prefix}/${name}` : name;
}

function deepValue(depth: number): Json {
  let v: Json = 1;
  for (let i = 0; i < depth; i++) v = { d: v };
  return v;
}

/**
 * A shape: the stored object for a count of items (created first) and the patch for that count;
 * the count is chosen so that the patch body is about `bytes` long.
 */
interface ShapeDef {
  formats: readonly PatchFormat[];
  stored?(n: number, format: PatchFormat): { metadata?: Obj; spec?: Obj; status?: Obj };
  target?: Target;
  patch(n: number, format: PatchFormat, name: string): Json | string;
}

function shapeCase(shape: string, def: ShapeDef, format: PatchFormat): HostileCase['build'] {
  return async (bytes, ctx) => {
    const name = uniqueName(shape);
    // The body is about `bytes` long, and so is the stored object at most (it is created with
    // one request, under the same limit).
    let count = 1;
    let stored: { metadata?: Obj; spec?: Obj; status?: Obj } = {};
    fit(bytes - 1024, (n) => {
      count = n;
      stored = def.stored?.(n, format) ?? {};
      const req = request(format, ctx, name, def.patch(n, format, name), def.target);
      return { body: { length: Math.max(req.body.length, JSON.stringify(stored).length + 256) } };
    });
    const req = request(format, ctx, name, def.patch(count, format, name), def.target);
    stored = def.stored?.(count, format) ?? {};
    if (def.target === 'node-status') await createNode(ctx, name, stored.status ?? {});
    else await createLease(ctx, name, stored);
    return req;
  };
}

function changedLabels(n: number): Obj {
  const out: Obj = {};
  for (let i = 0; i < n; i++) out[`l${pad(i)}`] = `w${i}`;
  return out;
}

const shapes: Record<string, ShapeDef> = {
  // Many keys in a granular map (labels): merge walks, field sets and ownership of every key.
  'many-keys': {
    formats: FORMATS,
    stored: () => ({ metadata: { labels: { base: 'x' } } }),
    patch: (n, format, name) => patchSetting(format, name, { metadata: { labels: labels(n) } }),
  },
  // Unknown fields: reported (fieldValidation=Warn, the default) and dropped.
  'unknown-fields': {
    formats: FORMATS,
    patch: (n, format, name) => {
      const spec: Obj = { holderIdentity: 'h2' };
      for (let i = 0; i < n; i++) spec[`u${pad(i)}`] = i;
      return patchSetting(format, name, { spec });
    },
  },
  // The same key repeated: each repetition is reported.
  'duplicate-fields': {
    formats: ['merge', 'strategic', 'apply-yaml', 'apply-json'],
    patch: (n, format, name) => {
      if (format === 'apply-yaml') {
        const lines = Array.from({ length: n }, () => '  holderIdentity: "x"').join('\n');
        return `apiVersion: ${API_VERSION}\nkind: Lease\nmetadata:\n  name: ${name}\nspec:\n${lines}\n`;
      }
      const repeated = Array.from({ length: n }, () => '"holderIdentity":"x"').join(',');
      const head = isApply(format) ? `"apiVersion":"${API_VERSION}","kind":"Lease","metadata":{"name":"${name}"},` : '';
      return `{${head}"spec":{${repeated}}}`;
    },
  },
  // Nesting down to near the depth limit, in many branches (unknown fields, so they are dropped).
  deep: {
    formats: FORMATS,
    patch: (n, format, name) => {
      const spec: Obj = { holderIdentity: 'h2' };
      const branches = Math.max(1, Math.floor(n / 900));
      for (let i = 0; i < branches; i++) spec[`x${i}`] = deepValue(Math.min(n, 900));
      return patchSetting(format, name, { spec });
    },
  },
  // One long string.
  'long-string': {
    formats: FORMATS,
    patch: (n, format, name) => patchSetting(format, name, { spec: { holderIdentity: 'x'.repeat(n) } }),
  },
  // A long keyed list (a Node's status.conditions, keyed by type) merged into a stored one half its
  // length, every stored item shared: half of the patch's items are new, half merge into stored
  // ones, and the result is no larger than the patch (a result past the request-body limit is
  // refused). (ownerReferences would be the keyed list of every kind, but owners that do not exist
  // hand the object to the garbage collector.)
  'list-map': {
    formats: FORMATS,
    target: 'node-status',
    stored: (n) => ({ status: { conditions: conditions(n >> 1, n >> 1) } }),
    patch: (n, format, name) => nodeConditionsPatch(format, name, conditions(n)),
  },
  // A long set (finalizers) merged into a stored one of the same length, half shared.
  'list-set': {
    formats: FORMATS,
    stored: (n) => ({ metadata: { finalizers: finalizers(n) } }),
    patch: (n, format, name) => patchSetting(format, name, { metadata: { finalizers: finalizers(n, n >> 1) } }),
  },
  // Many managers, each owning a label. Apply: the stored object has them and the apply changes
  // every label (forced). Other patches bring the managers themselves (a request's managedFields
  // are honoured) and change one label.
  'many-managers': {
    formats: FORMATS,
    stored: (n, format): { metadata: Obj } => {
      if (!isApply(format)) return { metadata: { labels: labels(n) } };
      const keys = Object.keys(labels(n));
      return { metadata: { labels: labels(n), managedFields: keys.map((k, i) => managedEntry(`m${pad(i)}`, [k])) } };
    },
    patch: (n, format, name) => {
      if (isApply(format)) return patchSetting(format, name, { metadata: { labels: changedLabels(n) } });
      const keys = Object.keys(labels(n));
      return patchSetting(format, name, { metadata: { managedFields: keys.map((k, i) => managedEntry(`m${pad(i)}`, [k])), labels: { extra: 'x' } } });
    },
  },
  // Many Update managers brought by the patch: all but ten are merged into `ancient-changes`.
  'many-update-managers': {
    formats: ['json', 'merge', 'strategic'],
    stored: (n) => ({ metadata: { labels: labels(n) } }),
    patch: (n, format, name) => {
      const entries = Object.keys(labels(n)).map((k, i) => ({ ...managedEntry(`m${pad(i)}`, [k], 'Update'), time: `2024-01-01T00:${pad(Math.floor(i / 60) % 60, 2)}:${pad(i % 60, 2)}Z` }));
      return patchSetting(format, name, { metadata: { managedFields: entries, labels: { extra: 'x' } } });
    },
  },
  // A keyed list emptied by `$patch: delete` items (strategic merge only), some naming no item.
  'list-map-deletions': {
    formats: ['strategic'],
    target: 'node-status',
    stored: (n) => ({ status: { conditions: conditions(n >> 1) } }),
    patch: (n) => ({ status: { conditions: Array.from({ length: n }, (_, i) => ({ type: `Condition${pad(i)}`, $patch: 'delete' })) } }),
  },
  // A set emptied by `$deleteFromPrimitiveList` (strategic merge only).
  'list-set-deletions': {
    formats: ['strategic'],
    stored: (n) => ({ metadata: { finalizers: finalizers(n) } }),
    patch: (n) => ({ metadata: { '$deleteFromPrimitiveList/finalizers': finalizers(n) } }),
  },
  // One manager owning very many fields; another manager's write changes them all.
  'one-manager-many-fields': {
    formats: FORMATS,
    stored: (n) => ({ metadata: { labels: labels(n), managedFields: [managedEntry('owner', Object.keys(labels(n)), 'Update')] } }),
    patch: (n, format, name) => patchSetting(format, name, { metadata: { labels: changedLabels(n) } }),
  },
  // As many JSON patch operations as allowed (10,000: one creating the labels, then one per label).
  'many-ops': {
    formats: ['json'],
    patch: (n) => {
      const count = Math.min(9_999, n);
      const keyLen = Math.min(317, Math.max(8, Math.floor(n / count) * 8));
      const ops: Json[] = [{ op: 'add', path: '/metadata/labels', value: {} }];
      for (let i = 0; i < count; i++) ops.push({ op: 'add', path: `/metadata/labels/${longLabelKey(i, keyLen).replace(/\//g, '~1')}`, value: 'v' });
      return ops;
    },
  },
};

const FORMAT_NAMES: Record<PatchFormat, string> = { json: 'json-patch', merge: 'merge-patch', strategic: 'strategic-merge-patch', 'apply-yaml': 'apply-yaml', 'apply-json': 'apply-json' };

export const patchCases: HostileCase[] = Object.entries(shapes).flatMap(([shape, def]) =>
  def.formats.map((format) => ({ name: `patch ${FORMAT_NAMES[format]} ${shape}`, format: FORMAT_NAMES[format], shape, build: shapeCase(shape, def, format) })),
);
