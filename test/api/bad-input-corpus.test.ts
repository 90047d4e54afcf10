// A generated corpus of bad requests. Each is sent byte for byte on its own connection (so paths
// are not cleaned and methods not filtered by a client library) and must get a Kubernetes Status
// with a 4xx code — never a 5xx, a hang or a connection closed without an answer — after which the
// server still answers /readyz and the sentinel objects (with their resourceVersions) are unchanged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { testServer } from '../support/server.ts';
import { partialChunks } from '../support/fuzz/wire.ts';
import { clientSocket } from '../support/tls-clients.ts';

const internalErrors: string[] = [];
const server = await testServer({ log: (m) => void internalErrors.push(m) });

// ---------------------------------------------------------------------------------------------
// Raw HTTP.

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One request on a fresh connection; the answer once the server closes it, or an error after `ms`. */
function exchange(request: Buffer, ms = 4000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = clientSocket(server.url);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${ms} ms: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))}`));
    }, ms);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const data = Buffer.concat(chunks);
      const end = data.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data.subarray(0, Math.max(end, 0)).toString('latin1'));
      if (end < 0 || !m) return reject(new Error(`connection closed without an answer: ${JSON.stringify(data.toString('latin1').slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of data.subarray(0, end).toString('latin1').split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const raw = data.subarray(end + 4);
      resolve({ status: Number(m[1]), headers, body: headers['transfer-encoding'] === 'chunked' ? partialChunks(raw) : raw });
    });
    socket.write(request);
  });
}

type Body = string | Buffer | undefined;

function request(method: string, target: string, body?: Body, headers: Record<string, string> = {}): Buffer {
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: corpus', 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (b) lines.push(`Content-Length: ${b.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b ?? Buffer.alloc(0)]);
}

async function json(method: string, path: string, body?: unknown): Promise<{ status: number; value: Record<string, unknown> }> {
  const a = await exchange(request(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : { 'Content-Type': 'application/json' }));
  return { status: a.status, value: JSON.parse(a.body.toString('utf8') || '{}') as Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------
// Sentinels: leases in a few namespaces, with labels, annotations and a finalizer.

const GROUP = 'coordination.orch.io/v1';
const NAMESPACES = ['corpus-a', 'corpus-b', 'corpus-c'];
const leasesIn = (ns: string) => `/apis/${GROUP}/namespaces/${ns}/leases`;
const LEASES = leasesIn('corpus-a');
const ITEM = `${LEASES}/s1`;
const lease = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: GROUP, kind: 'Lease', metadata: { name, labels: { app: 'corpus', tier: name } }, spec: { holderIdentity: 'h', leaseDurationSeconds: 10 }, ...extra });

for (const ns of NAMESPACES) {
  assert.equal((await json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  for (const name of ['s1', 's2']) {
    const body = lease(name);
    (body.metadata as Record<string, unknown>).annotations = { keep: 'me' };
    if (name === 's2') (body.metadata as Record<string, unknown>).finalizers = ['example.com/keep'];
    assert.equal((await json('POST', leasesIn(ns), body)).status, 201);
  }
}

/** Every sentinel with its resourceVersion, and the namespaces. */
async function snapshot(): Promise<unknown> {
  // Over a kept-alive connection: only the corpus needs a connection of its own per request.
  const get = async (path: string) => {
    const r = await fetch(`${server.url}${path}`);
    return { status: r.status, value: (await r.json()) as Record<string, unknown> };
  };
  const [leases, namespaces] = await Promise.all([get(`/apis/${GROUP}/leases?labelSelector=app%3Dcorpus`), get('/api/v1/namespaces')]);
  assert.equal(leases.status, 200);
  assert.equal(namespaces.status, 200);
  const items = (v: Record<string, unknown>) => (v.items as { metadata: Record<string, unknown>; spec?: unknown }[]).map((i) => [i.metadata.namespace, i.metadata.name, i.metadata.resourceVersion, i.metadata.labels, i.metadata.finalizers, i.spec]);
  return { leases: items(leases.value), namespaces: items(namespaces.value).map((i) => i.slice(0, 3)) };
}

// ---------------------------------------------------------------------------------------------
// The corpus.

interface Case {
  category: string;
  what: string;
  method: string;
  target: string;
  body?: Body;
  headers?: Record<string, string>;
}

const corpus: Case[] = [];
const add = (category: string, what: string, method: string, target: string, body?: Body, headers?: Record<string, string>) => corpus.push({ category, what, method, target, body, headers });
const JSON_CT = { 'Content-Type': 'application/json' };
const q = encodeURIComponent;
const valid = JSON.stringify(lease('new-one'));

// Malformed paths.
const dots = ['.', '..', '%2e', '%2E', '%2e%2e', '%2E%2e', '.%2e', '%2e.', '%2E%2E'];
for (const d of dots) {
  for (const [method, target] of [
    ['GET', `${ITEM}/${d}`],
    ['DELETE', `${ITEM}/${d}`],
    ['DELETE', `${LEASES}/${d}`],
    ['GET', `/apis/${GROUP}/namespaces/corpus-b/${d}/corpus-a/leases/s1`],
    ['DELETE', `/apis/${GROUP}/namespaces/nope/${d}/corpus-a/leases`],
    ['GET', `/healthz/${d}/version`],
    ['GET', `/api/v1/${d}/${d}/version`],
  ] as const)
    add('path', `dot segment ${d}`, method, target);
  add('path', `dot segment ${d} before an item`, 'PATCH', `${LEASES}/x/${d}/s1`, '{"spec":{"holderIdentity":"dots"}}', { 'Content-Type': 'application/merge-patch+json' });
  add('path', `dot segment ${d} in a create`, 'POST', `/apis/${GROUP}/namespaces/corpus-b/${d}/corpus-a/leases`, valid, JSON_CT);
}
for (const target of [`${LEASES}/s1%2F..`, `${LEASES}/s1%2fstatus`, `/apis/${GROUP}/namespaces/corpus-a%2Fleases`, `/apis/coordination.orch.io%2Fv1/namespaces/corpus-a/leases`, `${LEASES}%2F`]) {
  add('path', 'an encoded slash', 'GET', target);
  add('path', 'an encoded slash', 'DELETE', target);
}
for (const target of [`/apis/${GROUP}/namespaces//leases/s1`, `${LEASES}//s1`, `//apis/${GROUP}/namespaces/corpus-a/leases`, `${LEASES}/`, `${ITEM}/`, `/apis//${GROUP}`, `/api//v1/namespaces`, '/healthz//ping']) {
  add('path', 'an empty segment', 'GET', target);
  add('path', 'an empty segment', 'DELETE', target);
}
// (Lists and deletecollections in a namespace that cannot exist are empty, as in Kubernetes,
// which does not validate the namespace of a path: those are not bad requests.)
for (const n of [254, 300, 4096]) {
  add('path', `a ${n}-character name`, 'GET', `${LEASES}/${'a'.repeat(n)}`);
  add('path', `a ${n}-character name`, 'DELETE', `${LEASES}/${'a'.repeat(n)}`);
  add('path', `a ${n}-character namespace`, 'GET', `${leasesIn('n'.repeat(n))}/s1`);
  add('path', `a ${n}-character namespace`, 'POST', leasesIn('n'.repeat(n)), valid, JSON_CT);
  add('path', `a ${n}-character name in the body`, 'POST', LEASES, JSON.stringify(lease('b'.repeat(n))), JSON_CT);
}
for (const ns of ['UPPER', 'under_score', 'dot.ted', '-dash', 'a%20b', '%00', 'ns%0Aevil', 'ns%3Bx']) {
  add('path', `bad namespace ${ns}`, 'GET', `${leasesIn(ns)}/s1`);
  add('path', `bad namespace ${ns}`, 'POST', leasesIn(ns), valid, JSON_CT);
  add('path', `bad namespace ${ns}`, 'DELETE', `${leasesIn(ns)}/s1`);
  add('path', `bad namespace ${ns}`, 'PATCH', `${leasesIn(ns)}/s1`, '{}', { 'Content-Type': 'application/merge-patch+json' });
}
for (const target of [
  '/apis/nope.orch.io/v1/namespaces/corpus-a/leases',
  '/apis/coordination.orch.io/v0/namespaces/corpus-a/leases',
  '/apis/coordination.orch.io/v1beta9/leases',
  `/apis/${GROUP}/namespaces/corpus-a/leasez`,
  `/apis/${GROUP}/namespaces/corpus-a/Leases`,
  `/apis/${GROUP}/namespaces/corpus-a/lease/s1`,
  `${ITEM}/status`,
  `${ITEM}/scale`,
  `${ITEM}/finalize`,
  `${ITEM}/log`,
  '/api/v1/namespaces/corpus-a/leases/s1',
  '/api/v2/namespaces',
  '/api/v1/nodes/x/proxy',
  `/apis/${GROUP}/watch/namespaces/corpus-a/leases/s1/extra`,
  '/api/v1/namespaces/corpus-a/status/extra',
  '/apis/coordination.orch.io',
]) {
  add('path', 'unknown group, version, resource or subresource', 'DELETE', target);
  add('path', 'unknown group, version, resource or subresource', 'PUT', target, valid, JSON_CT);
}
for (const c of ['%00', '%01', '%07', '%0D%0A', '%1F', '%7F', '%C0%80', '%FF', '%E2%82']) {
  add('path', `control or invalid-UTF-8 character ${c}`, 'GET', `${LEASES}/s1${c}`);
  add('path', `control or invalid-UTF-8 character ${c}`, 'DELETE', `${LEASES}/s${c}1`);
}
for (const e of ['%', '%G1', '%1', '%%', '%zz', '%u0041']) {
  add('path', `invalid percent-encoding ${e}`, 'GET', `${LEASES}/${e}`);
  add('path', `invalid percent-encoding ${e}`, 'DELETE', `/apis/${GROUP}/namespaces/corpus-a${e}/leases`);
}
// Raw bytes Node's parser refuses: still a Status.
for (const raw of ['\x01', '\x7f', ' ', '\t', '"', '<', '{']) add('path', `raw byte ${JSON.stringify(raw)} in the request line`, 'GET', `${LEASES}/s${raw}1`);

// Methods.
for (const method of ['PROPFIND', 'MKCOL', 'LOCK', 'UNLOCK', 'PURGE', 'COPY', 'MOVE', 'SEARCH', 'REPORT', 'CONNECT', 'TRACE', 'OPTIONS', 'FOO', 'get', 'G\x01T']) {
  add('method', method, method, ITEM);
  add('method', method, method, LEASES);
}
add('method', 'POST to an item', 'POST', ITEM, valid, JSON_CT);
add('method', 'PUT on a collection', 'PUT', LEASES, valid, JSON_CT);
add('method', 'PATCH on a collection', 'PATCH', LEASES, '{}', { 'Content-Type': 'application/merge-patch+json' });
add('method', 'POST across namespaces', 'POST', `/apis/${GROUP}/leases`, valid, JSON_CT);
add('method', 'DELETE across namespaces', 'DELETE', `/apis/${GROUP}/leases`);
add('method', 'DELETE on namespaces', 'DELETE', '/api/v1/namespaces');
add('method', 'POST to /version', 'POST', '/version', '{}', JSON_CT);
add('method', 'DELETE on /readyz', 'DELETE', '/readyz');
add('method', 'PUT on /openapi/v2', 'PUT', '/openapi/v2', '{}', JSON_CT);

// Bodies.
for (const text of [valid, JSON.stringify(lease('s1'))]) {
  for (let cut = 1; cut < text.length; cut += Math.ceil(text.length / 25)) {
    if (text === valid) add('body', `JSON truncated at ${cut}`, 'POST', LEASES, text.slice(0, cut), JSON_CT);
    else add('body', `JSON truncated at ${cut}`, 'PUT', ITEM, text.slice(0, cut), JSON_CT);
  }
}
/** Every position of the lease, with a value of each wrong type. */
const wrongTypes: [string, (v: unknown) => boolean, unknown[]][] = [
  ['string', (v) => typeof v === 'string', [1, true, ['x'], { x: 1 }]],
  ['number', (v) => typeof v === 'number', ['10', true, [10], { n: 10 }, 1.5, 2 ** 31, -1e400, 1e400]],
  ['object', (v) => typeof v === 'object' && v !== null && !Array.isArray(v), ['x', 7, false, ['x']]],
  ['array', (v) => Array.isArray(v), ['x', 7, { a: 'b' }]],
];
const positions: [string[], unknown][] = [
  [['metadata'], {}],
  [['metadata', 'name'], 'x'],
  [['metadata', 'labels'], {}],
  [['metadata', 'labels', 'app'], 'x'],
  [['metadata', 'annotations'], {}],
  [['metadata', 'finalizers'], []],
  [['metadata', 'ownerReferences'], []],
  [['metadata', 'generateName'], 'x'],
  [['spec'], {}],
  [['spec', 'holderIdentity'], 'x'],
  [['spec', 'leaseDurationSeconds'], 10],
  [['spec', 'leaseTransitions'], 1],
  [['spec', 'acquireTime'], 'x'],
  [['spec', 'strategy'], 'x'],
];
for (const [path, sample] of positions) {
  const [, isType, bad] = wrongTypes.find(([, is]) => is(sample))!;
  for (const v of bad) {
    if (isType(v)) continue;
    const body = lease('typed') as Record<string, unknown>;
    let at = body;
    for (const k of path.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[path[path.length - 1]!] = v;
    const text = JSON.stringify(body).replace('"__INF__"', '1e400');
    add('body', `${path.join('.')} = ${JSON.stringify(v)}`, 'POST', LEASES, text, JSON_CT);
  }
}
for (const [what, text] of [
  ['leaseDurationSeconds 1e400', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"huge"},"spec":{"leaseDurationSeconds":1e400}}`],
  ['leaseDurationSeconds 2^64', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"huge"},"spec":{"leaseDurationSeconds":18446744073709551616}}`],
  ['leaseDurationSeconds -2^63-1', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"huge"},"spec":{"leaseDurationSeconds":-9223372036854775809}}`],
  ['leaseTransitions 400 digits', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"huge"},"spec":{"leaseTransitions":${'9'.repeat(400)}}}`],
  ['a 100 000-digit number', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"huge"},"spec":{"leaseTransitions":${'9'.repeat(100_000)}}}`],
]) add('body', `huge number: ${what}`, 'POST', LEASES, text, JSON_CT);
for (const [kind, apiVersion] of [['Pod', GROUP], ['lease', GROUP], ['Lease', 'v1'], ['Lease', 'coordination.orch.io/v2'], ['Lease', 'coordination.k8s.io/v1'], ['Lease', GROUP.toUpperCase()], [7, GROUP], ['Lease', ['x']]]) {
  const body = { ...lease('km'), kind, apiVersion };
  add('body', `kind ${JSON.stringify(kind)} apiVersion ${JSON.stringify(apiVersion)}`, 'POST', LEASES, JSON.stringify(body), JSON_CT);
  add('body', `kind ${JSON.stringify(kind)} apiVersion ${JSON.stringify(apiVersion)}`, 'PUT', ITEM, JSON.stringify({ ...body, metadata: { name: 's1' } }), JSON_CT);
}
for (const depth of [1001, 5000, 100_000]) {
  add('body', `${depth}-deep arrays`, 'POST', LEASES, `${'['.repeat(depth)}${']'.repeat(depth)}`, JSON_CT);
  add('body', `${depth}-deep objects under spec`, 'POST', LEASES, `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"deep"},"spec":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`, JSON_CT);
  add('body', `${depth}-deep merge patch`, 'PATCH', ITEM, `{"metadata":{"labels":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`, { 'Content-Type': 'application/merge-patch+json' });
}
for (const [what, text] of [
  ['metadata.name', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"d1","name":"d2"}}`],
  ['spec.holderIdentity', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"d1"},"spec":{"holderIdentity":"a","holderIdentity":"b"}}`],
  ['a label', `{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"d1","labels":{"a":"1","a":"2"}}}`],
  ['kind', `{"apiVersion":"${GROUP}","kind":"Lease","kind":"Lease","metadata":{"name":"d1"}}`],
]) {
  add('body', `duplicate ${what}, Strict`, 'POST', `${LEASES}?fieldValidation=Strict`, text, JSON_CT);
  add('body', `duplicate ${what}, Strict, as YAML`, 'POST', `${LEASES}?fieldValidation=Strict`, text, { 'Content-Type': 'application/yaml' });
}
for (const bytes of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]]) {
  const text = Buffer.concat([Buffer.from(`{"apiVersion":"${GROUP}","kind":"Lease","metadata":{"name":"u`), Buffer.from(bytes), Buffer.from('"}}')]);
  add('body', `invalid UTF-8 ${Buffer.from(bytes).toString('hex')} in a name`, 'POST', LEASES, text, JSON_CT);
  add('body', `invalid UTF-8 ${Buffer.from(bytes).toString('hex')} in a label patch`, 'PATCH', ITEM, Buffer.concat([Buffer.from('{"metadata":{"labels":{"a":"'), Buffer.from(bytes), Buffer.from('"}}}')]), { 'Content-Type': 'application/merge-patch+json' });
}
for (const [what, text] of [
  ['a bare scalar', 'just words'],
  ['a list', '- a\n- b\n'],
  ['a tab indent', 'metadata:\n\tname: x\n'],
  ['an unclosed flow map', 'metadata: {name: x'],
  ['an unclosed quote', 'metadata:\n  name: "x\n'],
  ['a billion laughs', `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n`],
  ['an undefined alias', 'metadata: *nope\n'],
  ['two documents', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: y1\n---\napiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: y2\n`],
  ['a !!binary name', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: !!binary eTE=\n`],
  ['a !!set of labels', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: y1\n  labels: !!set {a, b}\n`],
  ['a custom tag', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: !x y1\n`],
  ['a directive only', '%YAML 1.2\n---\n'],
  ['NUL bytes', 'metadata:\n  name: a\u0000b\n'],
  ['a map key that is a map', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  ? {a: b}\n  : c\n`],
]) {
  add('body', `YAML: ${what}`, 'POST', LEASES, text, { 'Content-Type': 'application/yaml' });
  add('body', `YAML: ${what}`, 'PUT', ITEM, text, { 'Content-Type': 'application/yaml' });
}
const PROTOBUF = { 'Content-Type': 'application/vnd.kubernetes.protobuf' };
const ORCH_PROTOBUF = { 'Content-Type': 'application/vnd.orch.protobuf' };
for (const [what, bytes] of [
  ['no magic', Buffer.from([0x0a, 0x02, 0x76, 0x31])],
  ['magic only', Buffer.from('k8s\0')],
  ['magic and a truncated Unknown', Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, 0x7f, 0x01])])],
  ['a varint that never ends', Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x1a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])])],
  ['a length past the end', Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, 0x00, 0x12, 0xff, 0x7f, 0x00])])],
  ['random bytes', Buffer.concat([Buffer.from('k8s\0'), Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 73 + 11) % 256))])],
  ['wrong kind inside', Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, 0x09, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x03, 0x50, 0x6f, 0x64, 0x12, 0x00])])],
] as const) {
  add('body', `protobuf: ${what}`, 'POST', LEASES, bytes, ORCH_PROTOBUF);
  add('body', `protobuf: ${what}`, 'PUT', ITEM, bytes, ORCH_PROTOBUF);
  add('body', `protobuf (kubernetes spelling): ${what}`, 'POST', LEASES, bytes, PROTOBUF);
}
for (const [what, bytes] of [
  ['a break outside', [0xff]],
  ['a truncated map', [0xa2, 0x61, 0x61]],
  ['a huge length', [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]],
  ['self-described garbage', [0xd9, 0xd9, 0xf7, 0x1f]],
  ['an array, not a map', [0x82, 0x01, 0x02]],
] as const) {
  add('body', `CBOR: ${what}`, 'POST', LEASES, Buffer.from(bytes), { 'Content-Type': 'application/cbor' });
  add('body', `CBOR apply: ${what}`, 'PATCH', `${ITEM}?fieldManager=corpus`, Buffer.from(bytes), { 'Content-Type': 'application/apply-patch+cbor' });
}
for (const body of ['', ' ', 'null', '[]', '"x"', '0', 'true', '{}garbage', '{"a":1}{"b":2}']) {
  add('body', `body ${JSON.stringify(body)}`, 'POST', LEASES, body, JSON_CT);
  add('body', `body ${JSON.stringify(body)}`, 'PUT', ITEM, body, JSON_CT);
}

// Media types.
for (const ct of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json-seq', 'application/jsonx', 'json', '*/*', 'application/*', ';', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/yaml; charset=ebcdic']) {
  add('media type', `Content-Type ${JSON.stringify(ct)} on create`, 'POST', LEASES, valid, { 'Content-Type': ct });
  add('media type', `Content-Type ${JSON.stringify(ct)} on patch`, 'PATCH', ITEM, '{"spec":{"holderIdentity":"ct"}}', { 'Content-Type': ct });
}
for (const enc of ['gzip', 'br', 'deflate', 'compress', 'zstd', 'gzip, gzip', 'identity, br']) add('media type', `Content-Encoding ${enc}`, 'PUT', ITEM, JSON.stringify(lease('s1')), { ...JSON_CT, 'Content-Encoding': enc });
// `application/json;q=0` and `*/*;q=0` accept nothing: 406, and a DELETE deletes nothing.
for (const accept of ['application/json;q=0', '*/*;q=0, application/json;q=0', 'application/xml', 'text/html', 'image/png', 'application/json;as=Bogus;g=meta.orch.io;v=v1', 'application/json;as=Table;g=nope;v=v1', 'application/json;as=Table;g=meta.orch.io;v=v9']) {
  add('media type', `Accept ${accept} on get`, 'GET', ITEM, undefined, { Accept: accept });
  add('media type', `Accept ${accept} on delete`, 'DELETE', ITEM, undefined, { Accept: accept });
}
add('media type', 'Accept application/yaml on a watch', 'GET', `${LEASES}?watch=1`, undefined, { Accept: 'application/yaml' });
add('media type', 'PartialObjectMetadataList on a watch', 'GET', `${LEASES}?watch=1`, undefined, { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1' });

// Query parameters.
const listQueries = [
  'limit=abc', 'limit=1.5', 'limit=1e3', `limit=${'9'.repeat(25)}`, 'limit=0x10', 'timeoutSeconds=abc', 'timeoutSeconds=-1', 'timeoutSeconds=1.5',
  'resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=1.5', 'resourceVersion=0x10', 'resourceVersion=%2B5', 'resourceVersion=9007199254740993', `resourceVersion=${'9'.repeat(40)}`,
  'resourceVersionMatch=Exact', 'resourceVersionMatch=NotOlderThan', 'resourceVersion=1&resourceVersionMatch=exact', 'resourceVersion=1&resourceVersionMatch=Bogus', 'resourceVersion=0&resourceVersionMatch=Exact',
  'continue=x', 'continue=%21%21', 'continue=eyJ2IjoxfQ', 'resourceVersion=5&continue=eyJ2IjoibWV0YS5vcmNoLmlvL3YxIiwicnYiOjEsInN0YXJ0IjoieCJ9', 'resourceVersionMatch=Exact&resourceVersion=1&continue=eyJ2IjoibWV0YS5vcmNoLmlvL3YxIiwicnYiOjEsInN0YXJ0IjoieCJ9',
  'sendInitialEvents=true', 'sendInitialEvents=maybe', 'allowWatchBookmarks=2', 'watch=maybe', 'watch=yes', 'shardSelector=x',
];
for (const query of listQueries) {
  add('query', `list ${query}`, 'GET', `${LEASES}?${query}`);
  add('query', `deletecollection ${query}`, 'DELETE', `${LEASES}?${query}`);
}
for (const query of ['watch=1&timeoutSeconds=abc', 'watch=1&continue=x', 'watch=1&resourceVersion=abc', 'watch=1&resourceVersionMatch=Exact&sendInitialEvents=true', 'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 'watch=1&sendInitialEvents=maybe', 'watch=1&resourceVersion=-5', 'watch=1&limit=abc', 'watch=1&fieldSelector=spec.x%3Dy', 'watch=1&labelSelector=a%20in%20(']) {
  add('query', `watch ${query}`, 'GET', `${LEASES}?${query}`);
  add('query', `watch path ${query}`, 'GET', `/apis/${GROUP}/watch/namespaces/corpus-a/leases?${query.replace('watch=1&', '')}`);
}
for (const query of ['resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=9007199254740993']) add('query', `get ${query}`, 'GET', `${ITEM}?${query}`);
for (const query of ['propagationPolicy=Bogus', 'propagationPolicy=', 'orphanDependents=maybe', 'orphanDependents=true&propagationPolicy=Foreground', 'gracePeriodSeconds=abc', 'gracePeriodSeconds=1.5', 'dryRun=Bogus', 'dryRun=All&dryRun=x', 'dryRun=all']) {
  add('query', `delete ${query}`, 'DELETE', `${ITEM}?${query}`);
  add('query', `deletecollection ${query}`, 'DELETE', `${LEASES}?${query}`);
}
// A printable non-ASCII manager (a snowman) is a manager, as in kube-apiserver (Go's unicode.IsPrint);
// `force` is a patch option, unknown to (and ignored by) create and update.
for (const query of ['fieldValidation=Bogus', 'fieldValidation=strict', 'dryRun=Bogus', `fieldManager=${'m'.repeat(129)}`, 'fieldManager=a%0Ab', 'fieldManager=%C2%85', 'force=true', 'force=maybe']) {
  if (!query.startsWith('force=')) {
    add('query', `create ${query}`, 'POST', `${LEASES}?${query}`, valid, JSON_CT);
    add('query', `update ${query}`, 'PUT', `${ITEM}?${query}`, JSON.stringify(lease('s1')), JSON_CT);
  }
  add('query', `patch ${query}`, 'PATCH', `${ITEM}?${query}`, '{"spec":{"holderIdentity":"q"}}', { 'Content-Type': 'application/merge-patch+json' });
}
for (const [what, body] of [
  ['propagationPolicy Bogus', { propagationPolicy: 'Bogus' }],
  ['propagationPolicy a number', { propagationPolicy: 1 }],
  ['gracePeriodSeconds a string', { gracePeriodSeconds: '1' }],
  ['gracePeriodSeconds a fraction', { gracePeriodSeconds: 1.5 }],
  ['dryRun a string', { dryRun: 'All' }],
  ['dryRun Bogus', { dryRun: ['Bogus'] }],
  ['preconditions a list', { preconditions: ['x'] }],
  ['preconditions.uid a number', { preconditions: { uid: 1 } }],
  ['preconditions.resourceVersion a number', { preconditions: { resourceVersion: 1 } }],
  ['preconditions.resourceVersion mismatch', { preconditions: { resourceVersion: '1' } }],
  ['preconditions.resourceVersion beyond 2^53', { preconditions: { resourceVersion: '9007199254740993' } }],
  ['preconditions.uid mismatch', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }],
  ['orphanDependents with propagationPolicy', { orphanDependents: true, propagationPolicy: 'Background' }],
  ['kind Pod', { kind: 'Pod', apiVersion: 'v1' }],
]) {
  add('query', `DeleteOptions ${what}`, 'DELETE', ITEM, JSON.stringify(body), JSON_CT);
  add('query', `DeleteOptions ${what} on a collection`, 'DELETE', LEASES, JSON.stringify(body), JSON_CT);
}

// Label and field selectors.
const labelSelectors = ['x=a||y=b', 'x==a==b', '!x=a', 'x<a', 'x>1.5', 'x,,y', ',x,y', 'x nott in (y)', 'a in (xyz),', 'a in (xyz)b notin ()', 'a in (xyz abc)', 'a notin(', 'a (', '(', ')', '!', '!!a', 'a in', 'a in (', 'a in (b', 'a in (b,', 'a=(b)', 'a!==b', 'bad key=v', 'a/b/c', '-a', 'a.', '/a', 'Example.com/a', `${'k'.repeat(64)}`, `a=${'v'.repeat(64)}`, 'a=-b', 'a=b@c', 'ключ', 'a\u0000', 'x>9223372036854775808', 'a b', 'a=b c', '=', '==', '!=b'];
for (const sel of labelSelectors) {
  add('selector', `labelSelector ${JSON.stringify(sel)}`, 'GET', `${LEASES}?labelSelector=${q(sel)}`);
  add('selector', `labelSelector ${JSON.stringify(sel)} on deletecollection`, 'DELETE', `${LEASES}?labelSelector=${q(sel)}`);
  add('selector', `labelSelector ${JSON.stringify(sel)} on a watch`, 'GET', `${LEASES}?watch=1&labelSelector=${q(sel)}`);
}
const fieldSelectors = ['metadata.name', 'metadata.name==a==b', 'metadata.name=a,b', 'metadata.name in (a)', 'metadata.name=\\a', 'metadata.name=\\', 'metadata.name=a=b', 'spec.holderIdentity=h', 'metadata.uid=x', 'status.phase=x', 'nope=x', 'metadata.labels=x', 'Metadata.Name=s1'];
for (const sel of fieldSelectors) {
  add('selector', `fieldSelector ${JSON.stringify(sel)}`, 'GET', `${LEASES}?fieldSelector=${q(sel)}`);
  add('selector', `fieldSelector ${JSON.stringify(sel)} on deletecollection`, 'DELETE', `${LEASES}?fieldSelector=${q(sel)}`);
  add('selector', `fieldSelector ${JSON.stringify(sel)} across namespaces`, 'GET', `/apis/${GROUP}/leases?fieldSelector=${q(sel)}`);
}
for (let i = 0; i < 20; i++) {
  // Deterministic garbage from the selector alphabet.
  const alphabet = '=!(),<> abxyz0-./\\in';
  const sel = Array.from({ length: 8 + i }, (_, j) => alphabet[(i * 31 + j * 17 + ((i * j) % 7)) % alphabet.length]).join('');
  add('selector', `generated selector garbage ${JSON.stringify(sel)}`, 'DELETE', `${LEASES}?labelSelector=${q(sel)}&fieldSelector=${q(sel)}`);
}

// Patches of every type.
const JSONPATCH = { 'Content-Type': 'application/json-patch+json' };
for (const [what, ops] of [
  ['no op', [{ path: '/spec/holderIdentity', value: 'x' }]],
  ['op a number', [{ op: 1, path: '/spec/holderIdentity', value: 'x' }]],
  ['unknown op', [{ op: 'bogus', path: '/spec/holderIdentity', value: 'x' }]],
  ['no path', [{ op: 'replace', value: 'x' }]],
  ['path a number', [{ op: 'replace', path: 5, value: 'x' }]],
  ['path without a leading slash', [{ op: 'replace', path: 'spec/holderIdentity', value: 'x' }]],
  ['a bad ~ escape', [{ op: 'replace', path: '/metadata/labels/a~2b', value: 'x' }]],
  ['add without value', [{ op: 'add', path: '/metadata/labels/x' }]],
  ['move without from', [{ op: 'move', path: '/metadata/labels/x' }]],
  ['copy from nowhere', [{ op: 'copy', from: '/nope/deeper', path: '/metadata/labels/x' }]],
  ['move into itself', [{ op: 'move', from: '/metadata', path: '/metadata/labels' }]],
  ['remove the root', [{ op: 'remove', path: '' }]],
  ['replace the root with a string', [{ op: 'replace', path: '', value: 'x' }]],
  ['index past the end', [{ op: 'add', path: '/metadata/finalizers/9', value: 'example.com/x' }]],
  ['a negative index', [{ op: 'add', path: '/metadata/finalizers/-1', value: 'example.com/x' }]],
  ['a leading-zero index', [{ op: 'replace', path: '/metadata/finalizers/00', value: 'example.com/x' }]],
  ['test failing', [{ op: 'replace', path: '/spec/holderIdentity', value: 'x' }, { op: 'test', path: '/spec/holderIdentity', value: 'y' }]],
  ['renaming', [{ op: 'replace', path: '/metadata/name', value: 'other' }]],
  ['moving namespaces', [{ op: 'replace', path: '/metadata/namespace', value: 'corpus-b' }]],
  ['a wrong type', [{ op: 'replace', path: '/spec/leaseDurationSeconds', value: 'ten' }]],
  ['a null op', [null]],
  ['an op that is a list', [['replace', '/spec', {}]]],
  ['an object, not a list', { op: 'replace', path: '/spec/holderIdentity', value: 'x' }],
  ['an empty object', {}],
]) add('patch', `JSON patch: ${what}`, 'PATCH', ITEM, JSON.stringify(ops), JSONPATCH);
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
for (const [what, patch] of [
  ['a list', [{ spec: {} }]],
  ['a string', 'x'],
  ['a number', 5],
  ['labels a list', { metadata: { labels: ['a'] } }],
  ['a label value a number', { metadata: { labels: { a: 1 } } }],
  ['finalizers a string', { metadata: { finalizers: 'example.com/x' } }],
  ['spec a list', { spec: ['x'] }],
  ['a rename', { metadata: { name: 'other' } }],
  ['a kind change', { kind: 'Namespace' }],
  ['an apiVersion change', { apiVersion: 'v1' }],
  ['a stale resourceVersion', { metadata: { resourceVersion: '1' } }],
  ['a uid change', { metadata: { uid: '00000000-0000-0000-0000-000000000000' } }],
  ['an invalid label', { metadata: { labels: { 'bad key': 'v' } } }],
]) add('patch', `merge patch: ${what}`, 'PATCH', ITEM, JSON.stringify(patch), MERGE);
const STRATEGIC = { 'Content-Type': 'application/strategic-merge-patch+json' };
// (Directives Kubernetes accepts as no-ops are not here: `$setElementOrder/` naming no field, a
// `$patch: delete` item for a list the object does not have.)
for (const [what, patch] of [
  ['$patch a number on spec', { spec: { $patch: 1 } }],
  ['$patch bogus on spec', { spec: { $patch: 'bogus' } }],
  ['$patch a map on labels', { metadata: { labels: { $patch: { x: 1 } } } }],
  ['$patch bogus on finalizers', { metadata: { finalizers: { $patch: 'x' } } }],
  ['$patch bogus on an absent field', { spec: { preferredHolder: { $patch: 'x' } } }],
  ['$patch merge on an owner reference', { metadata: { ownerReferences: [{ uid: 'u', $patch: 'merge' }] } }],
  ['$retainKeys a string', { spec: { $retainKeys: 'holderIdentity' } }],
  ['$retainKeys a map', { spec: { $retainKeys: { a: 1 } } }],
  ['$retainKeys of maps', { spec: { $retainKeys: [{}] } }],
  ['$retainKeys not listing a patched key', { spec: { $retainKeys: ['leaseTransitions'], holderIdentity: 'x' } }],
  ['$setElementOrder a string', { metadata: { '$setElementOrder/finalizers': 'x' } }],
  ['$setElementOrder a map', { metadata: { '$setElementOrder/ownerReferences': { uid: 'x' } } }],
  ['a list of lists', { metadata: { finalizers: [['x']] } }],
  ['a patch that is a list', [{ spec: {} }]],
  ['a patch that is a string', 'spec'],
  ['a wrong type', { spec: { leaseDurationSeconds: 'ten' } }],
  ['a rename', { metadata: { name: 'other' } }],
]) add('patch', `strategic patch: ${what}`, 'PATCH', ITEM, JSON.stringify(patch), STRATEGIC);
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
for (const [what, query, body] of [
  ['no fieldManager', '', JSON.stringify(lease('s1'))],
  ['garbage YAML', '?fieldManager=corpus', 'metadata: {name: ['],
  ['a list', '?fieldManager=corpus', '- a\n'],
  ['no apiVersion', '?fieldManager=corpus', 'kind: Lease\nmetadata:\n  name: s1\n'],
  ['another kind', '?fieldManager=corpus', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: s1\n'],
  ['another name', '?fieldManager=corpus', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: other\n`],
  ['a wrong type', '?fieldManager=corpus', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: s1\nspec:\n  leaseDurationSeconds: ten\n`],
  ['force=maybe', '?fieldManager=corpus&force=maybe', JSON.stringify(lease('s1'))],
  ['a !!binary value', '?fieldManager=corpus', `apiVersion: ${GROUP}\nkind: Lease\nmetadata:\n  name: s1\nspec:\n  holderIdentity: !!binary aGk=\n`],
  ['managedFields set', '?fieldManager=corpus', JSON.stringify({ ...lease('s1'), metadata: { name: 's1', managedFields: [{ manager: 'x', operation: 'Bogus' }] } })],
]) add('patch', `apply patch: ${what}`, 'PATCH', `${ITEM}${query}`, body, APPLY);

// ---------------------------------------------------------------------------------------------

test(`the corpus has at least 500 requests over every category (${corpus.length})`, () => {
  assert.ok(corpus.length >= 500, `${corpus.length} requests`);
  assert.deepEqual([...new Set(corpus.map((c) => c.category))].sort(), ['body', 'media type', 'method', 'patch', 'path', 'query', 'selector']);
});

test('every request of the corpus gets a 4xx Status, the server stays ready, and nothing stored changes', { timeout: 120_000 }, async () => {
  let before = await snapshot();
  const failures: string[] = [];
  const byCode = new Map<number, number>();
  for (const c of corpus) {
    const label = `[${c.category}] ${c.what}: ${c.method} ${c.target.length > 100 ? `${c.target.slice(0, 100)}…` : c.target}`;
    let a: Answer;
    try {
      // A body of 64 KiB or more goes to the write pool, whose first worker starts (loads the
      // server's modules) on that request: the request, not the server, waits for it.
      a = await exchange(request(c.method, c.target, c.body, c.headers), (c.body?.length ?? 0) >= 64 * 1024 ? 20_000 : 4000);
    } catch (e) {
      failures.push(`${label}: ${(e as Error).message}`);
      continue;
    }
    byCode.set(a.status, (byCode.get(a.status) ?? 0) + 1);
    let status: Record<string, unknown> | undefined;
    try {
      // A client that accepts only YAML gets its Status in YAML.
      const text = a.body.toString('utf8');
      status = (a.headers['content-type']?.startsWith('application/yaml') ? parseYaml(text) : JSON.parse(text)) as Record<string, unknown>;
    } catch {
      status = undefined;
    }
    if (a.status < 400 || a.status >= 500) {
      failures.push(`${label}: answered ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
      // Judge the next requests against what is stored now.
      before = await snapshot();
    }
    else if (status?.kind !== 'Status' || status.status !== 'Failure' || status.code !== a.status || typeof status.reason !== 'string')
      failures.push(`${label}: ${a.status} without a matching Status: ${a.body.toString('utf8').slice(0, 200)}`);
    // /readyz and the stored objects, both read after the answer, at the same time.
    const [readyStatus, after] = await Promise.all([
      fetch(`${server.url}/readyz`).then(async (r) => (await r.arrayBuffer(), r.status)),
      a.status < 500 && a.status >= 400 ? snapshot() : undefined,
    ]);
    if (readyStatus !== 200) failures.push(`${label}: /readyz answered ${readyStatus} afterwards`);
    if (after !== undefined) {
      try {
        assert.deepEqual(after, before);
      } catch {
        failures.push(`${label}: stored objects changed`);
      }
    }
    if (failures.length > 30) break;
  }
  assert.deepEqual(failures, [], `${failures.length} failures (codes seen: ${JSON.stringify([...byCode].sort())})`);
  assert.deepEqual(internalErrors, [], 'internal errors were reported');
});
