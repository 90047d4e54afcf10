// Generators of hostile requests, one per category. Each knows by construction whether what it
// built is valid: requests that would change something are invalid when they name a sentinel, and
// valid ones name throw-away objects in the scratch namespace (or are dry runs, or change nothing).

import fc from 'fast-check';
import { mk, T, type Expect, type FuzzCase } from './case.ts';
import { CT, encode, FORMATS, lease, LEASES_A, LEASES_SCRATCH, SCRATCH_ITEM, SENTINEL_LEASES, SENTINELS, toCbor, type Format, type SentinelTarget } from './objects.ts';

/** Sizes of the oversized shapes: small in `npm test`, up to the 3 MiB body limit in `npm run fuzz`. */
export interface Scale {
  /** Byte sizes for bodies of the hostile shapes. */
  sizes: number[];
}

const q = encodeURIComponent;
const json = (v: unknown) => JSON.stringify(v);
const scratchLease = (extra: Record<string, unknown> = {}) => ({ path: LEASES_SCRATCH, body: lease(T.NAME, { labels: { app: 'scratch' }, annotations: { a: 'b' }, finalizers: [], ...extra }) });
const anySentinel = fc.constantFrom(...SENTINELS);
const sentinelLease = fc.constantFrom(...SENTINEL_LEASES);
const labelKey = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const labelValue = fc.stringMatching(/^[a-z0-9]{0,10}$/);

// ---------------------------------------------------------------------------------------------
// Paths: a sentinel's path, corrupted.

const dotSegments = ['.', '..', '%2e', '%2E', '%2e%2e', '.%2e', '%2E%2E', ''];
const badChars = ['%00', '%01', '%0D%0A', '%1F', '%7F', '%C0%80', '%FF', '%E2%82', '%', '%G1', '%zz'];

function corruptPath(path: string, how: { kind: number; at: number; pick: number }): { path: string; what: string } {
  const segs = path.split('/').slice(1);
  const at = how.at % (segs.length + 1);
  switch (how.kind % 6) {
    case 0: {
      const d = dotSegments[how.pick % dotSegments.length]!;
      const s = [...segs];
      s.splice(at, 0, d);
      return { path: `/${s.join('/')}`, what: `segment ${JSON.stringify(d)} inserted at ${at}` };
    }
    case 1: {
      const i = Math.max(1, at % segs.length);
      const enc = how.pick % 2 ? '%2F' : '%2f';
      return { path: `/${segs.slice(0, i).join('/')}${enc}${segs.slice(i).join('/')}`, what: `an encoded slash before segment ${i}` };
    }
    case 2: {
      const c = badChars[how.pick % badChars.length]!;
      const i = at % segs.length;
      const s = [...segs];
      s[i] = how.pick % 3 === 0 ? `${c}${s[i]}` : `${s[i]}${c}`;
      return { path: `/${s.join('/')}`, what: `${c} in segment ${i}` };
    }
    case 3: {
      const n = [254, 300, 1000, 4096][how.pick % 4]!;
      return { path: `/${[...segs.slice(0, -1), 'a'.repeat(n)].join('/')}`, what: `a ${n}-character name` };
    }
    case 4: {
      const sub = ['scale', 'log', 'bogus', 'status/extra', 'finalize/x', 'proxy'][how.pick % 6]!;
      return { path: `${path}/${sub}`, what: `subresource ${sub}` };
    }
    default: {
      // The group, version or resource mangled.
      const s = [...segs];
      const i = s[0] === 'api' ? 1 : 2;
      const swaps = [
        [i, s[i] === 'v1' ? 'v0' : 'v1beta9'],
        [1, s[0] === 'api' ? 'v2' : 'nope.orch.io'],
        [s.length - 2, `${s[s.length - 2]}z`],
        [s.length - 2, s[s.length - 2]!.toUpperCase()],
      ] as const;
      const [j, v] = swaps[how.pick % swaps.length]!;
      s[j] = v;
      return { path: `/${s.join('/')}`, what: `segment ${j} changed to ${v}` };
    }
  }
}

function bodyFor(method: string, t: SentinelTarget): { body?: string; headers?: Record<string, string> } {
  if (method === 'PUT' || method === 'POST') return { body: json(t.replacement), headers: { 'Content-Type': CT.json } };
  if (method === 'PATCH') return { body: json({ metadata: { labels: { changed: 'yes' } } }), headers: { 'Content-Type': CT.merge } };
  return {};
}

const pathCases: fc.Arbitrary<FuzzCase> = fc
  .record({ t: anySentinel, method: fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH', 'POST'), kind: fc.nat(), at: fc.nat(), pick: fc.nat() })
  .map(({ t, method, kind, at, pick }) => {
    const { path, what } = corruptPath(t.path, { kind, at, pick });
    return mk({ category: 'path', what, method, target: path, ...bodyFor(method, t), expect: 'error' });
  });

// ---------------------------------------------------------------------------------------------
// Methods.

const methodCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.record({ t: anySentinel, m: fc.constantFrom('PROPFIND', 'MKCOL', 'LOCK', 'UNLOCK', 'PURGE', 'COPY', 'MOVE', 'SEARCH', 'REPORT', 'TRACE', 'FOO', 'get', 'delete', 'Patch'), coll: fc.boolean() }).map(({ t, m, coll }) =>
    mk({ category: 'method', what: `method ${m}`, method: m, target: coll ? t.collection : t.path, ...bodyFor('PUT', t), expect: 'error' }),
  ),
  fc.record({ t: anySentinel, i: fc.nat(5) }).map(({ t, i }) => {
    const all = [
      ['POST', t.path, 'POST to an item'],
      ['PUT', t.collection, 'PUT on a collection'],
      ['PATCH', t.collection, 'PATCH on a collection'],
      ['DELETE', `/apis/${'coordination.orch.io/v1'}/leases`, 'DELETE across namespaces'],
      ['POST', '/version', 'POST to /version'],
      ['PUT', '/openapi/v2', 'PUT on /openapi/v2'],
    ] as const;
    const [method, target, what] = all[i]!;
    return mk({ category: 'method', what, method, target, ...bodyFor(method === 'PATCH' ? 'PATCH' : 'PUT', t), expect: 'error' });
  }),
);

// ---------------------------------------------------------------------------------------------
// Headers: Content-Type, Content-Encoding, Accept, charset.

const badContentTypes = [
  'application/json/extra', 'application/json/', 'text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json-seq', 'application/jsonx',
  'json', '*/*', 'application/*', ';', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/yaml; charset=ebcdic', 'application/vnd.example.protobuf', 'application/json; charset="utf-8',
  '/json', 'application /json', 'application/json;charset', 'application/merge-patch+json/x',
];
const badEncodings = ['gzip', 'br', 'deflate', 'compress', 'zstd', 'gzip, gzip', 'identity, br', 'x-bogus'];
const badAccepts = ['application/json;q=0', '*/*;q=0, application/json;q=0', 'application/xml', 'text/html', 'image/png', 'application/json;as=Bogus;g=meta.orch.io;v=v1', 'application/json;as=Table;g=nope;v=v1', 'application/json;as=Table;g=meta.orch.io;v=v9'];
const goodContentTypes = ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON', 'application/json ; charset=utf-8'];
const goodAccepts = ['application/json, */*;q=0.8', 'application/yaml', 'application/vnd.kubernetes.protobuf, application/json', '*/*', 'application/cbor', 'application/vnd.orch.protobuf', 'application/json;as=Table;g=meta.k8s.io;v=v1, application/json'];

const headerCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  // A write to a sentinel, refused for its Content-Type (the longest list: drawn more often).
  {
    weight: 3,
    arbitrary: fc.record({ t: sentinelLease, ct: fc.constantFrom(...badContentTypes), verb: fc.constantFrom('PUT', 'PATCH', 'POST') }).map(({ t, ct, verb }) =>
      mk({
        category: 'header',
        what: `Content-Type ${JSON.stringify(ct)} on ${verb}`,
        method: verb,
        target: verb === 'POST' ? t.collection : t.path,
        headers: { 'Content-Type': ct },
        body: verb === 'PATCH' ? json({ metadata: { labels: { changed: 'yes' } } }) : json(verb === 'POST' ? lease(T.NAME) : t.replacement),
        expect: 'error',
      }),
    ),
  },
  fc.record({ t: sentinelLease, enc: fc.constantFrom(...badEncodings) }).map(({ t, enc }) =>
    mk({ category: 'header', what: `Content-Encoding ${enc}`, method: 'PUT', target: t.path, headers: { 'Content-Type': CT.json, 'Content-Encoding': enc }, body: json(t.replacement), expect: 'error' }),
  ),
  fc.record({ t: anySentinel, accept: fc.constantFrom(...badAccepts), verb: fc.constantFrom('GET', 'DELETE', 'PUT') }).map(({ t, accept, verb }) =>
    mk({ category: 'header', what: `Accept ${accept} on ${verb}`, method: verb, target: t.path, headers: { Accept: accept, ...(verb === 'PUT' ? { 'Content-Type': CT.json } : {}) }, body: verb === 'PUT' ? json(t.replacement) : undefined, expect: 'error' }),
  ),
  // Valid spellings: served.
  fc.record({ ct: fc.constantFrom(...goodContentTypes), accept: fc.constantFrom(...goodAccepts) }).map(({ ct, accept }) =>
    mk({ category: 'header', what: `valid Content-Type ${ct}, Accept ${accept}`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': ct, Accept: accept }, body: json(lease(T.NAME)), expect: 'ok' }),
  ),
  fc.record({ t: anySentinel, accept: fc.constantFrom(...goodAccepts) }).map(({ t, accept }) => mk({ category: 'header', what: `GET with Accept ${accept}`, method: 'GET', target: t.path, headers: { Accept: accept }, expect: 'ok' })),
);

// ---------------------------------------------------------------------------------------------
// Bodies in every format.

const wrongTypes: [string[], unknown[]][] = [
  [['metadata'], ['x', 7, false, ['x']]],
  [['metadata', 'name'], [1, true, ['x'], { x: 1 }]],
  [['metadata', 'labels'], ['x', 7, ['x']]],
  [['metadata', 'labels', 'app'], [1, true, ['x'], { x: 1 }]],
  [['metadata', 'annotations'], ['x', 7, ['x']]],
  [['metadata', 'finalizers'], ['x', 7, { a: 'b' }]],
  [['metadata', 'ownerReferences'], ['x', 7, { a: 'b' }]],
  [['metadata', 'generateName'], [1, true, ['x']]],
  [['spec'], ['x', 7, false, ['x']]],
  [['spec', 'holderIdentity'], [1, true, ['x'], { x: 1 }]],
  [['spec', 'leaseDurationSeconds'], ['10', true, [10], { n: 10 }, 1.5, 2 ** 31]],
  [['spec', 'acquireTime'], [7, true, 'not a time', ['x']]],
];

function setAt(o: Record<string, unknown>, path: string[], v: unknown): Record<string, unknown> {
  const copy = structuredClone(o);
  let at = copy;
  for (const k of path.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[path[path.length - 1]!] = v;
  return copy;
}

/** Where a body goes: a create in the scratch namespace (valid when the body is), or a write to a sentinel. */
const bodyTarget = fc.oneof(
  fc.constant({ method: 'POST', target: LEASES_SCRATCH, name: T.NAME as string, sentinel: false }),
  sentinelLease.map((t) => ({ method: 'PUT', target: t.path, name: t.path.split('/').pop()!, sentinel: true })),
  fc.constant({ method: 'POST', target: LEASES_A, name: T.NAME as string, sentinel: true }),
);

const formatArb = fc.constantFrom<Format>(...FORMATS);
const ctOf = (f: Format) => CT[f];

const bodyCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  // Valid, in every format: created.
  fc.record({ f: formatArb, labels: fc.dictionary(labelKey, labelValue, { maxKeys: 5 }), holder: labelValue }).map(({ f, labels, holder }) =>
    mk({ category: 'body', what: `a valid lease as ${f}`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': ctOf(f) }, body: encode(f, lease(T.NAME, { labels }, { holderIdentity: holder || 'h' })), expect: 'ok' }),
  ),
  // A wrong type somewhere (formats that carry types: JSON, YAML, CBOR).
  fc.record({ f: fc.constantFrom<Format>('json', 'yaml', 'cbor'), i: fc.nat(), j: fc.nat(), at: bodyTarget }).map(({ f, i, j, at }) => {
    const [path, vals] = wrongTypes[i % wrongTypes.length]!;
    const v = vals[j % vals.length];
    const body = setAt(lease(at.name), path, v);
    return mk({ category: 'body', what: `${path.join('.')} = ${JSON.stringify(v)} as ${f}`, method: at.method, target: at.target, headers: { 'Content-Type': ctOf(f) }, body: encode(f, body), expect: 'error' });
  }),
  // Unknown fields: refused with Strict (wherever the body goes), dropped with a warning otherwise (a create in the scratch namespace).
  fc.record({ f: fc.constantFrom<Format>('json', 'yaml', 'cbor'), keys: fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 40 }), where: fc.constantFrom('top', 'spec', 'metadata'), v: fc.constantFrom('Strict', 'Warn', 'Ignore', undefined), at: bodyTarget }).map(({ f, keys, where, v, at }) => {
    const strict = v === 'Strict';
    const to = strict ? at : { method: 'POST', target: LEASES_SCRATCH, name: T.NAME as string };
    const base = lease(to.name);
    const unknown = Object.fromEntries(keys.map((k) => [`zz${k}`, k]));
    const body = where === 'top' ? { ...base, ...unknown } : { ...base, [where]: { ...(base[where] as object), ...unknown } };
    return mk({
      category: 'body',
      what: `${keys.length} unknown fields under ${where} as ${f}, fieldValidation ${v}`,
      method: to.method,
      target: `${to.target}${v ? `?fieldValidation=${v}` : ''}`,
      headers: { 'Content-Type': ctOf(f) },
      body: encode(f, body),
      expect: strict ? 'error' : 'ok',
    });
  }),
  // Duplicate fields, Strict: refused (text formats).
  fc.record({ f: fc.constantFrom<Format>('json', 'yaml'), dup: fc.constantFrom('name', 'holderIdentity', 'label', 'kind'), at: bodyTarget }).map(({ f, dup, at }) => {
    const meta = dup === 'name' ? `"name":"${at.name}","name":"${at.name}"` : dup === 'label' ? `"name":"${at.name}","labels":{"a":"1","a":"2"}` : `"name":"${at.name}"`;
    const spec = dup === 'holderIdentity' ? '"holderIdentity":"a","holderIdentity":"b"' : '"holderIdentity":"a"';
    const kind = dup === 'kind' ? '"kind":"Lease","kind":"Lease"' : '"kind":"Lease"';
    const text = `{"apiVersion":"coordination.orch.io/v1",${kind},"metadata":{${meta}},"spec":{${spec}}}`;
    return mk({ category: 'body', what: `duplicate ${dup}, Strict, as ${f}`, method: at.method, target: `${at.target}?fieldValidation=Strict`, headers: { 'Content-Type': ctOf(f) }, body: text, expect: 'error' });
  }),
  // Cut short: JSON and CBOR never parse; YAML, protobuf may still be a valid object (only in the scratch namespace).
  fc.record({ f: formatArb, cut: fc.double({ min: 0, max: 0.98, noNaN: true }) }).map(({ f, cut }) => {
    const full = encode(f, lease(T.NAME, { labels: { app: 'cut' } }));
    const n = Math.floor(full.length * cut);
    const body = typeof full === 'string' ? full.slice(0, n) : full.subarray(0, n);
    const expect: Expect = f === 'json' || f === 'cbor' ? 'error' : 'either';
    return mk({ category: 'body', what: `${f} cut at ${n} of ${full.length}`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': ctOf(f) }, body, expect });
  }),
  // Random bytes changed in a binary or text encoding: anything may come of it, in the scratch namespace.
  fc.record({ f: formatArb, flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }) }).map(({ f, flips }) => {
    const full = encode(f, lease(T.NAME, { labels: { app: 'flip' } }));
    const b = Buffer.from(full);
    for (const [i, v] of flips) b[i % b.length] = v;
    return mk({ category: 'body', what: `${f} with bytes changed ${JSON.stringify(flips)}`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': ctOf(f) }, body: b, expect: 'either' });
  }),
  // Not an object of this kind.
  fc.record({ f: fc.constantFrom<Format>('json', 'yaml', 'cbor'), v: fc.constantFrom<unknown>([], [{}], 42, 'lease', null, true, { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' } }, { kind: 'Lease', apiVersion: 'v1', metadata: { name: 'p' } }, { kind: 'Lease', apiVersion: 'coordination.orch.io/v2', metadata: { name: 'p' } }, { kind: 7, apiVersion: 'coordination.orch.io/v1' }), at: bodyTarget }).map(({ f, v, at }) =>
    mk({ category: 'body', what: `${JSON.stringify(v)} as ${f}`, method: at.method, target: at.target, headers: { 'Content-Type': ctOf(f) }, body: encode(f, v), expect: 'error' }),
  ),
  // Protobuf with the magic and garbage, or of another kind.
  fc.record({ f: fc.constantFrom<Format>('protobuf', 'k8sProtobuf'), bytes: fc.uint8Array({ maxLength: 64 }), magic: fc.boolean(), t: sentinelLease }).map(({ f, bytes, magic, t }) =>
    mk({ category: 'body', what: `${f} garbage${magic ? ' after the magic' : ''}`, method: 'PUT', target: t.path, headers: { 'Content-Type': ctOf(f) }, body: Buffer.concat([magic ? Buffer.from('k8s\0') : Buffer.alloc(0), Buffer.from(bytes)]), expect: 'error' }),
  ),
  // Invalid UTF-8 in a string, huge numbers, a name too long, in text formats.
  fc.record({ bad: fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf]), at: bodyTarget }).map(({ bad, at }) =>
    mk({
      category: 'body',
      what: `invalid UTF-8 ${Buffer.from(bad).toString('hex')} in a label value`,
      method: at.method,
      target: at.target,
      headers: { 'Content-Type': CT.json },
      body: Buffer.concat([Buffer.from(`{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"${at.name}","labels":{"a":"`), Buffer.from(bad), Buffer.from('"}}}')]),
      expect: 'error',
    }),
  ),
  fc.record({ n: fc.constantFrom('1e400', '18446744073709551616', '-9223372036854775809', '9'.repeat(400), '1.5'), at: bodyTarget }).map(({ n, at }) =>
    mk({ category: 'body', what: `leaseDurationSeconds ${n.slice(0, 30)}`, method: at.method, target: at.target, headers: { 'Content-Type': CT.json }, body: `{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"${at.name}"},"spec":{"leaseDurationSeconds":${n}}}`, expect: 'error' }),
  ),
  // metadata rules: generateName as a name prefix, one controller owner reference.
  fc.record({ n: fc.constantFrom(254, 300, 5000, 100_000), f: fc.constantFrom<Format>('json', 'yaml') }).map(({ n, f }) =>
    mk({ category: 'body', what: `a ${n}-character generateName as ${f}`, method: 'POST', target: LEASES_A, headers: { 'Content-Type': ctOf(f) }, body: encode(f, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { generateName: 'g'.repeat(n) } }), expect: 'error' }),
  ),
  fc.integer({ min: 2, max: 5 }).map((n) =>
    mk({
      category: 'body',
      what: `${n} owner references with controller: true`,
      method: 'POST',
      target: LEASES_A,
      headers: { 'Content-Type': CT.json },
      body: json(lease(T.NAME, { ownerReferences: Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'Node', name: `n${i}`, uid: `00000000-0000-0000-0000-00000000000${i}`, controller: true })) })),
      expect: 'error',
    }),
  ),
);

// ---------------------------------------------------------------------------------------------
// Patches of every type.

const jsonPatchErrors: [string, unknown][] = [
  ['no op', [{ path: '/spec/holderIdentity', value: 'x' }]],
  ['op a number', [{ op: 1, path: '/spec/holderIdentity', value: 'x' }]],
  ['unknown op', [{ op: 'bogus', path: '/spec/holderIdentity', value: 'x' }]],
  ['no path', [{ op: 'replace', value: 'x' }]],
  ['path without a leading slash', [{ op: 'replace', path: 'spec/holderIdentity', value: 'x' }]],
  ['add without value', [{ op: 'add', path: '/metadata/labels/x' }]],
  ['move without from', [{ op: 'move', path: '/metadata/labels/x' }]],
  ['copy without from', [{ op: 'copy', path: '/metadata/labels/x' }]],
  ['copy from nowhere', [{ op: 'copy', from: '/nope/deeper', path: '/metadata/labels/x' }]],
  ['move into itself', [{ op: 'move', from: '/metadata', path: '/metadata/labels' }]],
  ['remove the root', [{ op: 'remove', path: '' }]],
  ['index past the end (add)', [{ op: 'add', path: '/metadata/finalizers/9', value: 'example.com/x' }]],
  ['index past the end (move)', [{ op: 'move', from: '/metadata/labels/app', path: '/metadata/finalizers/9' }]],
  ['a negative index', [{ op: 'add', path: '/metadata/finalizers/-1', value: 'example.com/x' }]],
  ['a leading-zero index', [{ op: 'replace', path: '/metadata/finalizers/00', value: 'example.com/x' }]],
  ['test failing after a change', [{ op: 'replace', path: '/spec/holderIdentity', value: 'x' }, { op: 'test', path: '/spec/holderIdentity', value: 'y' }]],
  ['renaming', [{ op: 'replace', path: '/metadata/name', value: 'other' }]],
  ['moving namespaces', [{ op: 'replace', path: '/metadata/namespace', value: 'elsewhere' }]],
  ['a wrong type', [{ op: 'replace', path: '/spec/leaseDurationSeconds', value: 'ten' }]],
  ['a null op', [null]],
  ['an object, not a list', { op: 'replace', path: '/spec/holderIdentity', value: 'x' }],
  ['a change then a bad op', [{ op: 'add', path: '/metadata/labels/changed', value: 'yes' }, { op: 'remove', path: '/nope' }]],
];
const mergeErrors: [string, unknown][] = [
  ['a list', [{ spec: {} }]],
  ['a string', 'x'],
  ['labels a list', { metadata: { labels: ['a'] } }],
  ['a label value a number', { metadata: { labels: { a: 1 } } }],
  ['finalizers a string', { metadata: { finalizers: 'example.com/x' } }],
  ['spec a list', { spec: ['x'] }],
  ['a rename', { metadata: { name: 'other' } }],
  ['a kind change', { kind: 'Namespace' }],
  ['an apiVersion change', { apiVersion: 'v1' }],
  ['a stale resourceVersion', { metadata: { resourceVersion: '1', labels: { changed: 'yes' } } }],
  ['an invalid label', { metadata: { labels: { 'bad key': 'v' } } }],
  ['a 300-character generateName', { metadata: { generateName: 'g'.repeat(300) } }],
  ['two controller owner references', { metadata: { ownerReferences: [1, 2].map((i) => ({ apiVersion: 'v1', kind: 'Node', name: `n${i}`, uid: `u${i}`, controller: true })) } }],
];
const strategicErrors: [string, unknown][] = [
  ['$patch a number on spec', { spec: { $patch: 1 } }],
  ['$patch bogus on spec', { spec: { $patch: 'bogus' } }],
  ['$patch a map on labels', { metadata: { labels: { $patch: { x: 1 } } } }],
  ['$patch replace map for the finalizers list', { metadata: { finalizers: { $patch: 'replace' } } }],
  ['$patch delete map for the finalizers list', { metadata: { finalizers: { $patch: 'delete' } } }],
  ['$patch bogus on finalizers', { metadata: { finalizers: { $patch: 'x' } } }],
  ['$retainKeys a string', { spec: { $retainKeys: 'holderIdentity' } }],
  ['$retainKeys a map', { spec: { $retainKeys: { a: 1 } } }],
  ['$retainKeys of maps', { spec: { $retainKeys: [{}] } }],
  ['$retainKeys of numbers', { spec: { $retainKeys: [1, 2] } }],
  ['$retainKeys not listing a patched key', { spec: { $retainKeys: ['leaseTransitions'], holderIdentity: 'x' } }],
  ['$deleteFromPrimitiveList a string', { metadata: { '$deleteFromPrimitiveList/finalizers': 'example.com/keep' } }],
  ['$deleteFromPrimitiveList a map', { metadata: { '$deleteFromPrimitiveList/finalizers': { a: 'example.com/keep' } } }],
  ['$setElementOrder a string', { metadata: { '$setElementOrder/finalizers': 'x' } }],
  ['$setElementOrder a map', { metadata: { '$setElementOrder/ownerReferences': { uid: 'x' } } }],
  ['a list of lists', { metadata: { finalizers: [['x']] } }],
  ['a patch that is a list', [{ spec: {} }]],
  ['a wrong type', { spec: { leaseDurationSeconds: 'ten' } }],
  ['a rename', { metadata: { name: 'other' } }],
];
/** Answered as kube-apiserver does — refused as immutable, or ignored — but never a write. */
const neverWrites: [string, string, unknown][] = [
  ['set deletionTimestamp', CT.merge, { metadata: { deletionTimestamp: '2030-01-01T00:00:00Z' } }],
  ['set deletionGracePeriodSeconds', CT.merge, { metadata: { deletionGracePeriodSeconds: 30 } }],
  ['set deletionTimestamp (strategic)', CT.strategic, { metadata: { deletionTimestamp: '2030-01-01T00:00:00Z' } }],
  ['remove uid', CT.jsonPatch, [{ op: 'remove', path: '/metadata/uid' }]],
  ['add deletionTimestamp', CT.jsonPatch, [{ op: 'add', path: '/metadata/deletionTimestamp', value: '2030-01-01T00:00:00Z' }]],
  ['namespace null', CT.merge, { metadata: { namespace: null } }],
];
/** Valid and changing nothing: no write, the same bytes. */
const noOps: [string, string, unknown][] = [
  ['an empty merge patch', CT.merge, {}],
  ['an empty strategic patch', CT.strategic, {}],
  ['an empty JSON patch', CT.jsonPatch, []],
  ['a JSON patch test', CT.jsonPatch, [{ op: 'test', path: '/apiVersion', value: 'coordination.orch.io/v1' }]],
  ['labels set to their own value', CT.merge, { metadata: { labels: { app: 'fuzz' } } }],
  ['a strategic patch of the same finalizers', CT.strategic, { metadata: { finalizers: ['example.com/keep'] } }],
];

const patchCases = (scale: Scale): fc.Arbitrary<FuzzCase> =>
  fc.oneof(
    // Valid changes, to a throw-away lease.
    fc.record({ k: labelKey.map((k) => `p${k}`), v: labelValue, type: fc.constantFrom('merge', 'strategic', 'json', 'apply', 'applyCbor'), dry: fc.boolean() }).map(({ k, v, type, dry }) => {
      const patch =
        type === 'json' ? json([{ op: 'add', path: `/metadata/labels/${k}`, value: v }, { op: 'test', path: `/metadata/labels/${k}`, value: v }])
        : type === 'apply' ? json(lease(T.NAME, { labels: { [k]: v } }))
        : type === 'applyCbor' ? toCbor(lease(T.NAME, { labels: { [k]: v } }))
        : json({ metadata: { labels: { [k]: v } }, spec: { holderIdentity: v || 'h' } });
      const ct = { merge: CT.merge, strategic: CT.strategic, json: CT.jsonPatch, apply: CT.apply, applyCbor: CT.applyCbor }[type];
      const query = [type.startsWith('apply') ? 'fieldManager=fuzz' : '', dry ? 'dryRun=All' : ''].filter(Boolean).join('&');
      return mk({ category: 'patch', what: `a valid ${type} patch${dry ? ', dry run' : ''}`, method: 'PATCH', target: `${SCRATCH_ITEM}${query ? `?${query}` : ''}`, headers: { 'Content-Type': ct }, body: patch, expect: 'ok', setup: [scratchLease()] });
    }),
    // A valid change to a sentinel, as a dry run: answered, nothing stored.
    fc.record({ t: sentinelLease, type: fc.constantFrom(CT.merge, CT.strategic) }).map(({ t, type }) =>
      mk({ category: 'patch', what: `a dry-run ${type}`, method: 'PATCH', target: `${t.path}?dryRun=All`, headers: { 'Content-Type': type }, body: json({ metadata: { labels: { changed: 'yes' } } }), expect: 'ok' }),
    ),
    fc.record({ t: sentinelLease, i: fc.nat() }).map(({ t, i }) => {
      const [what, ops] = jsonPatchErrors[i % jsonPatchErrors.length]!;
      return mk({ category: 'patch', what: `JSON patch: ${what}`, method: 'PATCH', target: t.path, headers: { 'Content-Type': CT.jsonPatch }, body: json(ops), expect: 'error' });
    }),
    fc.record({ t: sentinelLease, i: fc.nat() }).map(({ t, i }) => {
      const [what, p] = mergeErrors[i % mergeErrors.length]!;
      return mk({ category: 'patch', what: `merge patch: ${what}`, method: 'PATCH', target: t.path, headers: { 'Content-Type': CT.merge }, body: json(p), expect: 'error' });
    }),
    fc.record({ t: sentinelLease, i: fc.nat() }).map(({ t, i }) => {
      const [what, p] = strategicErrors[i % strategicErrors.length]!;
      return mk({ category: 'patch', what: `strategic patch: ${what}`, method: 'PATCH', target: t.path, headers: { 'Content-Type': CT.strategic }, body: json(p), expect: 'error' });
    }),
    fc.record({ t: sentinelLease, i: fc.nat() }).map(({ t, i }) => {
      const [what, ct, p] = neverWrites[i % neverWrites.length]!;
      return mk({ category: 'patch', what: `never a write: ${what}`, method: 'PATCH', target: t.path, headers: { 'Content-Type': ct }, body: json(p), expect: 'either' });
    }),
    fc.record({ t: sentinelLease, i: fc.nat() }).map(({ t, i }) => {
      const [what, ct, p] = noOps[i % noOps.length]!;
      // s1 carries no finalizer: a strategic patch listing one would add it.
      const target = what.includes('finalizers') ? t.path.replace(/s1$/, 's2') : t.path;
      return mk({ category: 'patch', what: `no-op: ${what}`, method: 'PATCH', target, headers: { 'Content-Type': ct }, body: json(p), expect: 'ok' });
    }),
    fc.record({ t: sentinelLease, i: fc.nat(9) }).map(({ t, i }) => {
      const name = t.path.split('/').pop()!;
      const all: [string, string, string][] = [
        ['no fieldManager', '', json(lease(name))],
        ['garbage YAML', '?fieldManager=fuzz', 'metadata: {name: ['],
        ['a list', '?fieldManager=fuzz', '- a\n'],
        ['no apiVersion', '?fieldManager=fuzz', `kind: Lease\nmetadata:\n  name: ${name}\n`],
        ['another kind', '?fieldManager=fuzz', `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`],
        ['another name', '?fieldManager=fuzz', 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: other\n'],
        ['a wrong type', '?fieldManager=fuzz', `apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: ${name}\nspec:\n  leaseDurationSeconds: ten\n`],
        ['force=maybe', '?fieldManager=fuzz&force=maybe', json(lease(name))],
        ['managedFields set', '?fieldManager=fuzz', json({ ...lease(name), metadata: { name, managedFields: [{ manager: 'x', operation: 'Bogus' }] } })],
        ['unknown fields, Strict', '?fieldManager=fuzz&fieldValidation=Strict', json({ ...lease(name), bogus: 1 })],
      ];
      const [what, query, body] = all[i]!;
      return mk({ category: 'patch', what: `apply patch: ${what}`, method: 'PATCH', target: `${t.path}${query}`, headers: { 'Content-Type': CT.apply }, body, expect: 'error' });
    }),
    // Memory: add/copy doubling a value, dry run (bounded as Kubernetes bounds it: refused).
    fc.record({ size: fc.integer({ min: 2048, max: 4096 }), times: fc.integer({ min: 11, max: 14 }), scratch: fc.boolean() }).map(({ size, times, scratch }) => {
      const ops: unknown[] = [{ op: 'add', path: '/metadata/d', value: ['v'.repeat(size)] }];
      for (let i = 0; i < times; i++) ops.push({ op: 'copy', from: '/metadata/d', path: '/metadata/d/-' });
      return mk({
        category: 'patch',
        what: `add/copy doubling a ${size}-byte value ${times} times, dry run`,
        method: 'PATCH',
        target: `${scratch ? SCRATCH_ITEM : SENTINEL_LEASES[0]!.path}?dryRun=All`,
        headers: { 'Content-Type': CT.jsonPatch },
        body: json(ops),
        expect: 'error',
        setup: scratch ? [scratchLease()] : undefined,
        timeoutMs: 20_000,
      });
    }),
    // More than 10 000 operations: 413.
    fc.record({ extra: fc.integer({ min: 1, max: 500 }), t: sentinelLease }).map(({ extra, t }) =>
      mk({
        category: 'patch',
        what: `${10_000 + extra} JSON patch operations`,
        method: 'PATCH',
        target: t.path,
        headers: { 'Content-Type': CT.jsonPatch },
        body: json([{ op: 'add', path: '/metadata/labels/changed', value: 'yes' }, ...Array.from({ length: 9_999 + extra }, () => ({ op: 'test', path: '/kind', value: 'Lease' }))]),
        expect: 'error',
      }),
    ),
    // A patch whose result is over the object size limit: refused before it is decoded further.
    fc.record({ type: fc.constantFrom(CT.merge, CT.strategic, CT.jsonPatch), size: fc.constantFrom(...scale.sizes) }).map(({ type, size }) => {
      const big = 'x'.repeat(size);
      const body = type === CT.jsonPatch ? json([{ op: 'add', path: '/metadata/annotations/big', value: big }]) : json({ metadata: { annotations: { big } } });
      // Annotations are limited to 256 KiB in all.
      return mk({ category: 'patch', what: `an annotation of ${size} bytes by ${type}`, method: 'PATCH', target: SCRATCH_ITEM, headers: { 'Content-Type': type }, body, expect: size > 256 * 1024 ? 'error' : 'ok', setup: [scratchLease()], timeoutMs: 20_000 });
    }),
  );

// ---------------------------------------------------------------------------------------------
// Query options.

const badListQueries = [
  'limit=abc', 'limit=1.5', 'limit=1e3', `limit=${'9'.repeat(25)}`, 'limit=0x10', 'timeoutSeconds=abc', 'timeoutSeconds=1.5',
  'resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=1.5', 'resourceVersion=0x10', 'resourceVersion=%2B5', `resourceVersion=${'9'.repeat(40)}`,
  'resourceVersionMatch=Exact', 'resourceVersionMatch=NotOlderThan', 'resourceVersion=1&resourceVersionMatch=exact', 'resourceVersion=1&resourceVersionMatch=Bogus', 'resourceVersion=0&resourceVersionMatch=Exact',
  'continue=x', 'continue=garbage', 'continue=%21%21', 'continue=eyJ2IjoxfQ', 'resourceVersion=5&continue=eyJ2IjoibWV0YS5vcmNoLmlvL3YxIiwicnYiOjEsInN0YXJ0IjoieCJ9',
  'sendInitialEvents=maybe', 'allowWatchBookmarks=2', 'watch=maybe', 'shardSelector=x', 'labelSelector=a%20in%20(', 'labelSelector=a%20notin%20(b%2C', 'labelSelector=a%3D%3Db%3D%3Dc', 'fieldSelector=spec.x%3Dy', 'fieldSelector=metadata.name%3D%3Da%3D%3Db',
];
const badWriteQueries = ['fieldValidation=Bogus', 'fieldValidation=strict', 'dryRun=Bogus', 'dryRun=all', 'dryRun=All&dryRun=x', `fieldManager=${'m'.repeat(129)}`, 'fieldManager=a%0Ab', 'force=true', 'force=maybe'];
const goodListQueries = ['labelSelector=a%20notin%20()', 'labelSelector=tier%20in%20()', 'limit=1', 'limit=500', 'resourceVersion=0', 'resourceVersion=0&resourceVersionMatch=NotOlderThan', 'labelSelector=app%3Dfuzz', 'labelSelector=app%20in%20(fuzz%2Cx)%2C!nope', 'fieldSelector=metadata.name%3Ds1', 'timeoutSeconds=5', 'limit=1&labelSelector=app', 'watch=false'];

const queryCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.record({ qs: fc.constantFrom(...badListQueries), across: fc.boolean() }).map(({ qs, across }) => mk({ category: 'query', what: `list ${qs}`, method: 'GET', target: `${across ? '/apis/coordination.orch.io/v1/leases' : LEASES_A}?${qs}`, expect: 'error' })),
  fc.record({ qs: fc.constantFrom('resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=9007199254740993x'), t: anySentinel }).map(({ qs, t }) => mk({ category: 'query', what: `get ${qs}`, method: 'GET', target: `${t.path}?${qs}`, expect: 'error' })),
  // `force` is a patch option: create and update ignore it, as kube-apiserver does.
  fc.record({ qs: fc.constantFrom(...badWriteQueries), t: sentinelLease, anyVerb: fc.constantFrom('PUT', 'PATCH', 'POST') }).map(({ qs, t, anyVerb }) => {
    const verb = qs.startsWith('force=') ? 'PATCH' : anyVerb;
    return mk({
      category: 'query',
      what: `${verb} ${qs}`,
      method: verb,
      target: `${verb === 'POST' ? t.collection : t.path}?${qs}`,
      headers: { 'Content-Type': verb === 'PATCH' ? CT.merge : CT.json },
      body: verb === 'PATCH' ? json({ metadata: { labels: { changed: 'yes' } } }) : json(verb === 'POST' ? lease(T.NAME) : t.replacement),
      expect: 'error',
    });
  }),
  fc.record({ qs: fc.constantFrom(...goodListQueries), across: fc.boolean() }).map(({ qs, across }) => mk({ category: 'query', what: `list ${qs}`, method: 'GET', target: `${across ? '/apis/coordination.orch.io/v1/leases' : LEASES_A}?${qs}`, expect: 'ok' })),
  fc.record({ qs: fc.constantFrom('fieldValidation=Strict', 'fieldValidation=Warn', 'dryRun=All', 'fieldManager=fuzz-x', 'fieldValidation=Ignore&dryRun=All') }).map(({ qs }) =>
    mk({ category: 'query', what: `create ${qs}`, method: 'POST', target: `${LEASES_SCRATCH}?${qs}`, headers: { 'Content-Type': CT.json }, body: json(lease(T.NAME)), expect: 'ok' }),
  ),
);

// ---------------------------------------------------------------------------------------------
// Selectors, generated: valid ones select; one invalid clause makes the whole selector invalid.

const validClause = fc.oneof(
  fc.tuple(labelKey, labelValue).map(([k, v]) => `${k}=${v}`),
  fc.tuple(labelKey, labelValue).map(([k, v]) => `${k}!=${v}`),
  fc.tuple(labelKey, labelValue).map(([k, v]) => `${k}==${v}`),
  fc.tuple(labelKey, fc.array(labelValue.filter((s) => s.length > 0), { minLength: 1, maxLength: 3 })).map(([k, vs]) => `${k} in (${vs.join(',')})`),
  fc.tuple(labelKey, fc.array(labelValue.filter((s) => s.length > 0), { minLength: 1, maxLength: 3 })).map(([k, vs]) => `${k} notin (${vs.join(',')})`),
  labelKey,
  labelKey.map((k) => `!${k}`),
);
const invalidClause = fc.oneof(
  // (`a in ()` and `a notin ()` are valid: the set of the empty value, docs/rulings.md R18.)
  fc.constantFrom('a in (', 'a in (b', '(', ')', '!', '!!a', 'a in', 'a=(b)', 'a!==b', 'bad key=v', 'a/b/c', '-a', 'a.', '/a', 'x==a==b', '!x=a', 'x<a', 'x>1.5', 'a=b@c', 'ключ', '=', '==', '!=b', 'a b', 'x,,y'),
  fc.stringMatching(/^[a-z]{64,70}$/),
  labelKey.map((k) => `${k}=${'v'.repeat(64)}`),
);
const invalidSelector = fc.tuple(fc.array(validClause, { maxLength: 3 }), invalidClause, fc.nat()).map(([valid, bad, at]) => {
  const all = [...valid];
  all.splice(at % (valid.length + 1), 0, bad);
  return all.join(',');
});
const validSelector = fc.array(validClause, { minLength: 1, maxLength: 4 }).map((cs) => cs.join(','));
const invalidFieldSelector = fc.constantFrom('metadata.name', 'metadata.name==a==b', 'metadata.name in (a)', 'metadata.name=\\', 'spec.holderIdentity=h', 'metadata.uid=x', 'status.phase=x', 'nope=x', 'Metadata.Name=s1');

const selectorCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.record({ sel: invalidSelector, verb: fc.constantFrom('list', 'watch', 'deletecollection'), field: fc.boolean() }).map(({ sel, verb, field }) =>
    mk({
      category: 'selector',
      what: `${verb} with an invalid ${field ? 'field' : 'label'} selector`,
      method: verb === 'deletecollection' ? 'DELETE' : 'GET',
      target: `${LEASES_A}?${verb === 'watch' ? 'watch=1&timeoutSeconds=1&' : ''}${field ? 'fieldSelector' : 'labelSelector'}=${q(sel)}`,
      expect: 'error',
      stream: verb === 'watch',
    }),
  ),
  fc.record({ sel: invalidFieldSelector, verb: fc.constantFrom('list', 'deletecollection') }).map(({ sel, verb }) =>
    mk({ category: 'selector', what: `${verb} with field selector ${sel}`, method: verb === 'list' ? 'GET' : 'DELETE', target: `${LEASES_A}?fieldSelector=${q(sel)}`, expect: 'error' }),
  ),
  fc.record({ sel: validSelector, verb: fc.constantFrom('list', 'deletecollection') }).map(({ sel, verb }) =>
    mk({ category: 'selector', what: `${verb} with a valid selector`, method: verb === 'list' ? 'GET' : 'DELETE', target: `${verb === 'list' ? LEASES_A : LEASES_SCRATCH}?labelSelector=${q(sel)}`, expect: 'ok' }),
  ),
);

// ---------------------------------------------------------------------------------------------
// DELETE with odd bodies and options.

const badDeleteBodies: [string, string | Buffer, string][] = [
  ['orphanDependents a string', json({ orphanDependents: 'yes' }), CT.json],
  ['a Lease as the body', json(lease('s1')), CT.json],
  ['kind Pod', json({ kind: 'Pod', apiVersion: 'v1' }), CT.json],
  ['apiVersion wrong', json({ kind: 'DeleteOptions', apiVersion: 'coordination.orch.io/v9' }), CT.json],
  ['kind DeleteOptions in another group', json({ kind: 'DeleteOptions', apiVersion: 'nope.example.com/v1' }), CT.json],
  ['propagationPolicy Bogus', json({ propagationPolicy: 'Bogus' }), CT.json],
  ['propagationPolicy a number', json({ propagationPolicy: 1 }), CT.json],
  ['gracePeriodSeconds a string', json({ gracePeriodSeconds: '1' }), CT.json],
  ['gracePeriodSeconds a fraction', json({ gracePeriodSeconds: 1.5 }), CT.json],
  ['dryRun a string', json({ dryRun: 'All' }), CT.json],
  ['dryRun Bogus', json({ dryRun: ['Bogus'] }), CT.json],
  ['preconditions a list', json({ preconditions: ['x'] }), CT.json],
  ['preconditions.uid a number', json({ preconditions: { uid: 1 } }), CT.json],
  ['preconditions.resourceVersion mismatch', json({ preconditions: { resourceVersion: '1' } }), CT.json],
  ['preconditions.uid mismatch', json({ preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }), CT.json],
  ['orphanDependents with propagationPolicy', json({ orphanDependents: true, propagationPolicy: 'Background' }), CT.json],
  ['a list', '[]', CT.json],
  ['a number', '7', CT.json],
  ['truncated', '{"kind":"DeleteOptions","apiVersi', CT.json],
  ['garbage', 'not json', CT.json],
  ['YAML with a wrong type', 'kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: soon\n', CT.yaml],
  ['protobuf garbage', Buffer.from('k8s\0\x0a\x7f\x01'), CT.protobuf],
  ['gracePeriodSeconds a map', json({ gracePeriodSeconds: { a: 1 } }), CT.json],
  ['a body of an unsupported type', json({}), 'text/plain'],
];
const badDeleteQueries = ['propagationPolicy=Bogus', 'propagationPolicy=', 'orphanDependents=maybe', 'orphanDependents=true&propagationPolicy=Foreground', 'gracePeriodSeconds=abc', 'gracePeriodSeconds=1.5', 'dryRun=Bogus', 'dryRun=All&dryRun=x', 'dryRun=all'];

const deleteCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.record({ t: anySentinel, i: fc.nat() }).map(({ t, i }) => {
    const [what, body, ct] = badDeleteBodies[i % badDeleteBodies.length]!;
    return mk({ category: 'delete', what: `DELETE with ${what}`, method: 'DELETE', target: t.path, headers: { 'Content-Type': ct }, body, expect: 'error' });
  }),
  fc.record({ t: anySentinel, qs: fc.constantFrom(...badDeleteQueries) }).map(({ t, qs }) => mk({ category: 'delete', what: `DELETE ?${qs}`, method: 'DELETE', target: `${t.path}?${qs}`, expect: 'error' })),
  fc.record({ body: fc.constantFrom<unknown>(undefined, {}, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 }, { propagationPolicy: 'Background' }, { propagationPolicy: 'Orphan' }, { kind: 'DeleteOptions', apiVersion: 'meta.orch.io/v1' }) }).map(({ body }) =>
    mk({ category: 'delete', what: `DELETE with ${json(body)}`, method: 'DELETE', target: SCRATCH_ITEM, headers: body === undefined ? undefined : { 'Content-Type': CT.json }, body: body === undefined ? undefined : json(body), expect: 'ok', setup: [scratchLease()] }),
  ),
  fc.record({ t: anySentinel }).map(({ t }) => mk({ category: 'delete', what: 'a dry-run DELETE of a sentinel', method: 'DELETE', target: `${t.path}?dryRun=All`, expect: 'ok' })),
);

// ---------------------------------------------------------------------------------------------
// deletecollection: every list option validated before anything is deleted.

const deletecollectionCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ qs: fc.constantFrom(...badListQueries, ...badDeleteQueries).filter((s) => !s.startsWith('watch') && !s.startsWith('sendInitialEvents') && !s.startsWith('allowWatchBookmarks')), coll: fc.constantFrom(LEASES_A, SENTINELS[5]!.collection) }).map(({ qs, coll }) =>
      mk({ category: 'deletecollection', what: `deletecollection ?${qs}`, method: 'DELETE', target: `${coll}?${qs}`, expect: 'error' }),
    ),
  },
  fc.record({ i: fc.nat() }).map(({ i }) => {
    const [what, body, ct] = badDeleteBodies[i % badDeleteBodies.length]!;
    const expect: Expect = what.startsWith('preconditions') && what.includes('mismatch') ? 'either' : 'error';
    return mk({ category: 'deletecollection', what: `deletecollection with ${what}`, method: 'DELETE', target: LEASES_A, headers: { 'Content-Type': ct }, body, expect });
  }),
  fc.record({ qs: fc.constantFrom('', 'limit=1', 'labelSelector=app%3Dscratch', 'resourceVersion=0', 'gracePeriodSeconds=0', 'propagationPolicy=Background') }).map(({ qs }) =>
    mk({ category: 'deletecollection', what: `a valid deletecollection ?${qs}`, method: 'DELETE', target: `${LEASES_SCRATCH}${qs ? `?${qs}` : ''}`, expect: 'ok', setup: [scratchLease()] }),
  ),
  fc.constant(mk({ category: 'deletecollection', what: 'a dry-run deletecollection of the sentinels', method: 'DELETE', target: `${LEASES_A}?dryRun=All`, expect: 'ok' })),
);

// ---------------------------------------------------------------------------------------------
// Watches.

const badWatchQueries = ['timeoutSeconds=abc', 'continue=x', 'resourceVersion=abc', 'resourceVersionMatch=Exact&sendInitialEvents=true', 'sendInitialEvents=maybe', 'resourceVersion=-5', 'limit=abc', 'fieldSelector=spec.x%3Dy', 'labelSelector=a%20in%20(', 'allowWatchBookmarks=2'];

const watchCases: fc.Arbitrary<FuzzCase> = fc.oneof(
  fc.record({ qs: fc.constantFrom(...badWatchQueries), path: fc.boolean() }).map(({ qs, path }) =>
    mk({
      category: 'watch',
      what: `watch ${qs}${path ? ' (watch path)' : ''}`,
      method: 'GET',
      target: path ? `/apis/coordination.orch.io/v1/watch/namespaces/${T.NS_A}/leases?${qs}` : `${LEASES_A}?watch=1&${qs}`,
      expect: 'error',
      stream: true,
    }),
  ),
  fc.record({ accept: fc.constantFrom('application/yaml', 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1', 'text/html', 'application/json;q=0') }).map(({ accept }) =>
    mk({ category: 'watch', what: `watch with Accept ${accept}`, method: 'GET', target: `${LEASES_A}?watch=1&timeoutSeconds=1`, headers: { Accept: accept }, expect: 'error', stream: true }),
  ),
  fc.record({ accept: fc.constantFrom('application/json', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf;stream=watch', '*/*'), qs: fc.constantFrom('', '&labelSelector=app', '&resourceVersion=0', '&allowWatchBookmarks=true', '&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true') }).map(({ accept, qs }) =>
    mk({ category: 'watch', what: `a valid watch${qs}, Accept ${accept}`, method: 'GET', target: `${LEASES_A}?watch=1&timeoutSeconds=1${qs}`, headers: { Accept: accept }, expect: 'ok', stream: true }),
  ),
);

// ---------------------------------------------------------------------------------------------
// Oversized shapes: many keys, many unknown or duplicate fields, deep nesting, long strings, long
// lists with merge keys, many managed-field entries — in every format and patch type.

function manyKeys(bytes: number, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  const n = Math.max(1, Math.floor(bytes / 12));
  for (let i = 0; i < n; i++) out[`${prefix}${i.toString(36)}`] = 'v';
  return out;
}

const sizeCases = (scale: Scale): fc.Arbitrary<FuzzCase> =>
  fc.oneof(
    // Many unknown fields with the default validation (warn): created, with bounded warnings.
    fc.record({ size: fc.constantFrom(...scale.sizes), f: fc.constantFrom<Format>('json', 'yaml', 'cbor'), v: fc.constantFrom(undefined, 'Warn', 'Ignore', 'Strict') }).map(({ size, f, v }) =>
      mk({
        category: 'size',
        what: `${size} bytes of unknown top-level keys as ${f}, fieldValidation ${v}`,
        method: 'POST',
        target: `${LEASES_SCRATCH}${v ? `?fieldValidation=${v}` : ''}`,
        headers: { 'Content-Type': CT[f] },
        body: encode(f, { ...lease(T.NAME), ...manyKeys(size, 'u') }),
        // CBOR maps are limited in their number of pairs (1024, as Kubernetes' decoder is).
        expect: v === 'Strict' ? 'error' : f === 'cbor' && size / 12 > 1000 ? 'either' : 'ok',
        timeoutMs: 30_000,
      }),
    ),
    // Many duplicate fields, Strict (text formats): refused.
    fc.record({ size: fc.constantFrom(...scale.sizes), f: fc.constantFrom<Format>('json', 'yaml') }).map(({ size, f }) => {
      const n = Math.max(2, Math.floor(size / 12));
      const dups = Array.from({ length: n }, (_, i) => `"d${i % 50}":"v"`).join(',');
      const body = `{"apiVersion":"coordination.orch.io/v1","kind":"Lease","metadata":{"name":"${T.NAME}","labels":{${dups}}}}`;
      return mk({ category: 'size', what: `${n} duplicate label keys as ${f}, Strict`, method: 'POST', target: `${LEASES_SCRATCH}?fieldValidation=Strict`, headers: { 'Content-Type': CT[f] }, body, expect: 'error', timeoutMs: 30_000 });
    }),
    // Deep nesting, up to and over the depth limit.
    fc.record({ depth: fc.constantFrom(90, 500, 999, 1001, 5000), f: fc.constantFrom<Format>('json', 'yaml', 'cbor'), patch: fc.boolean() }).map(({ depth, f, patch }) => {
      // Written out rather than encoded: encoders recurse.
      const deepText = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const expect: Expect = depth > 1000 ? 'error' : 'either';
      if (patch) return mk({ category: 'size', what: `a ${depth}-deep merge patch`, method: 'PATCH', target: SCRATCH_ITEM, headers: { 'Content-Type': CT.merge }, body: `{"spec":{"x":${deepText}}}`, expect, setup: [scratchLease()], timeoutMs: 30_000 });
      const head = encode(f === 'cbor' ? 'cbor' : 'json', { ...lease(T.NAME), x: 0 });
      // JSON is YAML (flow style); in CBOR the last byte is the 0 of x.
      const body = typeof head === 'string' ? `${head.slice(0, -2)}${deepText}}` : Buffer.concat([head.subarray(0, -1), Buffer.alloc(depth * 3, Buffer.from([0xa1, 0x61, 0x61])), Buffer.from([0x01])]);
      return mk({ category: 'size', what: `${depth}-deep unknown field as ${f}`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': CT[f] }, body, expect, timeoutMs: 30_000 });
    }),
    // Long strings: within the annotation limit, over it, over the body limit.
    fc.record({ size: fc.constantFrom(...scale.sizes, 3 * 1024 * 1024 + 1), f: fc.constantFrom<Format>('json', 'yaml', 'protobuf', 'cbor') }).map(({ size, f }) =>
      mk({
        category: 'size',
        what: `an annotation of ${size} bytes as ${f}`,
        method: 'POST',
        target: LEASES_SCRATCH,
        headers: { 'Content-Type': CT[f] },
        body: encode(f, lease(T.NAME, { annotations: { big: 'x'.repeat(size) } })),
        expect: size > 256 * 1024 ? 'error' : 'ok',
        timeoutMs: 30_000,
      }),
    ),
    // Long lists with merge keys: owner references, by create and by strategic merge.
    fc.record({ size: fc.constantFrom(...scale.sizes), patch: fc.constantFrom('create', CT.strategic, CT.merge, CT.jsonPatch, CT.apply) }).map(({ size, patch }) => {
      const n = Math.max(1, Math.floor(size / 110));
      const refs = Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'Node', name: `n${i}`, uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}` }));
      if (patch === 'create') return mk({ category: 'size', what: `${n} owner references, created`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': CT.json }, body: json(lease(T.NAME, { ownerReferences: refs })), expect: 'either', timeoutMs: 30_000 });
      const body = patch === CT.jsonPatch ? json([{ op: 'add', path: '/metadata/ownerReferences', value: refs }]) : patch === CT.apply ? json(lease(T.NAME, { ownerReferences: refs })) : json({ metadata: { ownerReferences: refs } });
      return mk({ category: 'size', what: `${n} owner references by ${patch}`, method: 'PATCH', target: `${SCRATCH_ITEM}${patch === CT.apply ? '?fieldManager=fuzz' : ''}`, headers: { 'Content-Type': patch }, body, expect: 'either', setup: [scratchLease()], timeoutMs: 30_000 });
    }),
    // Many managed-field entries.
    fc.record({ size: fc.constantFrom(...scale.sizes) }).map(({ size }) => {
      const n = Math.max(1, Math.floor(size / 200));
      const managedFields = Array.from({ length: n }, (_, i) => ({ manager: `m${i}`, operation: 'Update', apiVersion: 'coordination.orch.io/v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { [`f:l${i}`]: {} } } } }));
      return mk({ category: 'size', what: `${n} managed-field entries`, method: 'POST', target: LEASES_SCRATCH, headers: { 'Content-Type': CT.json }, body: json(lease(T.NAME, { managedFields })), expect: 'either', timeoutMs: 30_000 });
    }),
    // Many keys by every patch type.
    fc.record({ size: fc.constantFrom(...scale.sizes), type: fc.constantFrom(CT.merge, CT.strategic, CT.jsonPatch, CT.apply) }).map(({ size, type }) => {
      const labels = manyKeys(Math.min(size, 200 * 1024), 'k');
      const body = type === CT.jsonPatch ? json(Object.entries(labels).slice(0, 9_000).map(([k, v]) => ({ op: 'add', path: `/metadata/labels/${k}`, value: v }))) : type === CT.apply ? json(lease(T.NAME, { labels })) : json({ metadata: { labels } });
      return mk({ category: 'size', what: `${Object.keys(labels).length} labels by ${type}`, method: 'PATCH', target: `${SCRATCH_ITEM}${type === CT.apply ? '?fieldManager=fuzz' : ''}`, headers: { 'Content-Type': type }, body, expect: 'either', setup: [scratchLease()], timeoutMs: 30_000 });
    }),
  );

// ---------------------------------------------------------------------------------------------

export function categories(scale: Scale): Record<string, fc.Arbitrary<FuzzCase>> {
  return {
    path: pathCases,
    method: methodCases,
    header: headerCases,
    body: bodyCases,
    patch: patchCases(scale),
    query: queryCases,
    selector: selectorCases,
    delete: deleteCases,
    deletecollection: deletecollectionCases,
    watch: watchCases,
    size: sizeCases(scale),
  };
}
