// No request multiplies the server's memory: JSON patches are bounded as kube-apiserver bounds
// them (10,000 operations, the bytes their copies add up to, RFC 6902's errors), every patch result
// is bounded before it is decoded further, warnings are bounded as kube-apiserver's recorder bounds
// them, and a sequence of hostile requests of each body format and patch type leaves the server's
// memory where it was. One server runs as a child process for the whole file, so its resident
// memory can be read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Encoder } from 'cbor-x';
import { stringify as toYaml } from 'yaml';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { tempDir } from '../support/tmp.ts';
import { encodeObject } from '../../src/wire/protobuf/index.ts';
import { clientRequest } from '../support/tls-clients.ts';

const MB = 1024 * 1024;
const LIMIT = 3 * MB;
const NS = 'mem';
const LEASES = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
const JSON_CT = { 'Content-Type': 'application/json' };
const JSONPATCH = { 'Content-Type': 'application/json-patch+json' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const STRATEGIC = { 'Content-Type': 'application/strategic-merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

let server: ServerProcess;
before(async () => {
  server = await startServerProcess([`--data-dir=${tempDir('hostile-memory')}`, '--feature-gates=CBORServingAndStorage=true']);
  assert.equal((await send('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }), JSON_CT)).status, 201);
});
after(async () => {
  await server?.kill();
});

interface Answer {
  status: number;
  /** Every header line as sent, names lower-cased. */
  lines: [string, string][];
  text: string;
  body: { kind?: string; code?: number; reason?: string; message?: string; details?: unknown; metadata?: { resourceVersion?: string } };
}

/**
 * One request with node:http, whose raw header lines show each `Warning` on its own. Its parser
 * refuses answers with more than 16 KiB of headers, as Node's fetch does.
 */
function send(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}, timeoutMs = 15_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = clientRequest(server.url + path, { method, headers: { ...headers, ...(body !== undefined ? { 'Content-Length': Buffer.byteLength(body) } : {}) }, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const lines: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        let parsed: Answer['body'] = {};
        try {
          parsed = JSON.parse(text) as Answer['body'];
        } catch {
          // not JSON (a protobuf or CBOR answer)
        }
        resolve({ status: res.statusCode ?? 0, lines, text, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const warnings = (a: Answer): string[] => a.lines.filter(([k]) => k === 'warning').map(([, v]) => v);
const headerBytes = (a: Answer): number => a.lines.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);

/** A Lease created for a test, and its stored JSON (to compare after a refused request). */
async function lease(name: string, spec: Record<string, unknown> = { holderIdentity: 'h' }, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await send('POST', LEASES, JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, finalizers: ['example.com/a', 'example.com/b'], ...extra }, spec }), JSON_CT);
  assert.equal(r.status, 201, r.text.slice(0, 300));
  return stored(name);
}

async function stored(name: string): Promise<string> {
  const r = await send('GET', `${LEASES}/${name}`);
  assert.equal(r.status, 200);
  return r.text;
}

function assertStatus(a: Answer, code: number, reason: string, message: string | RegExp): void {
  assert.equal(a.status, code, a.text.slice(0, 500));
  assert.equal(a.body.kind, 'Status');
  assert.equal(a.body.code, code);
  assert.equal(a.body.reason, reason);
  if (typeof message === 'string') assert.equal(a.body.message, message);
  else assert.match(a.body.message ?? '', message);
}

/** A JSON patch that doubles a 4 KiB value `times` times by copying it into itself. */
function doublingPatch(times: number): string {
  const ops: unknown[] = [{ op: 'add', path: '/spec/d', value: { v: 'x'.repeat(4096) } }];
  for (let i = 0; i < times; i++) ops.push({ op: 'copy', from: '/spec/d', path: `/spec/d/c${i}` });
  return JSON.stringify(ops);
}

describe('JSON patch bounds, as kube-apiserver', () => {
  test('more than 10,000 operations is 413 with the count, and changes nothing', async () => {
    const before = await lease('ops');
    const ops = JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'replace', path: '/spec/holderIdentity', value: 'changed' })));
    assertStatus(await send('PATCH', `${LEASES}/ops`, ops, JSONPATCH), 413, 'RequestEntityTooLarge', 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
    assert.equal(await stored('ops'), before);
    // 10,000 is allowed.
    const ok = await send('PATCH', `${LEASES}/ops`, JSON.stringify(Array.from({ length: 10_000 }, () => ({ op: 'test', path: '/spec/holderIdentity', value: 'h' }))), JSONPATCH);
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
  });

  test('copies that add up past the request-body limit are 422 while they happen, and change nothing', async () => {
    const before = await lease('doubling');
    const t0 = performance.now();
    const a = await send('PATCH', `${LEASES}/doubling?dryRun=All`, doublingPatch(16), JSONPATCH);
    const ms = performance.now() - t0;
    assertStatus(a, 422, 'Invalid', /^the server rejected our request due to an error in our request: Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
    assert.deepEqual(a.body.details, {});
    // Generous: the bound stops the patch after a few megabytes of copies (it took 22 s unbounded).
    assert.ok(ms < 2000, `the doubling patch took ${Math.round(ms)} ms`);
    assertStatus(await send('PATCH', `${LEASES}/doubling`, doublingPatch(16), JSONPATCH), 422, 'Invalid', /accumulated size increase of copy/);
    assert.equal(await stored('doubling'), before);
    // Copies within the limit apply.
    const ok = await send('PATCH', `${LEASES}/doubling?dryRun=All`, doublingPatch(3), JSONPATCH);
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
  });

  test('operations that shift array elements past a bound are 413, before they hold the server for seconds', async () => {
    const finalizers = Array.from({ length: 30_000 }, (_, i) => `example.com/f${i}`);
    const before = await lease('shifts', { holderIdentity: 'h' }, { finalizers });
    const ops = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ op: 'add', path: '/metadata/finalizers/0', value: `example.com/new${i}` })));
    const t0 = performance.now();
    assertStatus(await send('PATCH', `${LEASES}/shifts`, ops, JSONPATCH), 413, 'RequestEntityTooLarge', 'Request entity too large: the JSON patch shifts more than 134217728 array elements in all');
    const ms = performance.now() - t0;
    assert.ok(ms < 3000, `the patch took ${Math.round(ms)} ms`);
    assert.equal(await stored('shifts'), before);
    // A thousand of them are fine.
    const ok = await send('PATCH', `${LEASES}/shifts?dryRun=All`, JSON.stringify(Array.from({ length: 1000 }, () => ({ op: 'remove', path: '/metadata/finalizers/0' }))), JSONPATCH);
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
  });

  test('a result nested deeper than a request body may be is 422, and changes nothing', async () => {
    const before = await lease('deep');
    const deep = JSON.parse(`${'{"a":'.repeat(600)}1${'}'.repeat(600)}`) as unknown;
    const ops = [
      { op: 'add', path: '/spec/d', value: deep },
      { op: 'copy', from: '/spec/d', path: `/spec/d${'/a'.repeat(599)}` },
    ];
    assertStatus(await send('PATCH', `${LEASES}/deep`, JSON.stringify(ops), JSONPATCH), 422, 'Invalid', 'the server rejected our request due to an error in our request: the patched object exceeds the maximum depth of 1000');
    assert.equal(await stored('deep'), before);
  });

  test('RFC 6902 errors are 422 and change nothing: an index past the end for add, move and copy; a missing from', async () => {
    const before = await lease('rfc');
    const prefix = 'the server rejected our request due to an error in our request: ';
    const cases: [unknown[], string][] = [
      [[{ op: 'add', path: '/metadata/finalizers/3', value: 'example.com/c' }], "error in add for path: '/metadata/finalizers/3': Unable to access invalid index: 3: invalid index referenced"],
      [[{ op: 'move', from: '/spec/holderIdentity', path: '/metadata/finalizers/5' }], "error in move for path: '/metadata/finalizers/5': Unable to access invalid index: 5: invalid index referenced"],
      [[{ op: 'copy', from: '/spec/holderIdentity', path: '/metadata/finalizers/9' }], "error in copy for path: '/metadata/finalizers/9': Unable to access invalid index: 9: invalid index referenced"],
      [[{ op: 'move', path: '/metadata/labels' }], 'move operation failed to decode from: operation, missing from field: missing value'],
      [[{ op: 'copy', path: '/metadata/labels' }], 'copy operation failed to decode from: operation, missing from field: missing value'],
      // A failure after operations that applied leaves nothing of them.
      [[{ op: 'replace', path: '/spec/holderIdentity', value: 'changed' }, { op: 'add', path: '/metadata/finalizers/7', value: 'example.com/c' }], "error in add for path: '/metadata/finalizers/7': Unable to access invalid index: 7: invalid index referenced"],
    ];
    for (const [ops, message] of cases) {
      const a = await send('PATCH', `${LEASES}/rfc`, JSON.stringify(ops), JSONPATCH);
      assertStatus(a, 422, 'Invalid', prefix + message);
    }
    assert.equal(await stored('rfc'), before);
    // At the end is allowed: `-` or the length.
    const ok = await send('PATCH', `${LEASES}/rfc?dryRun=All`, JSON.stringify([{ op: 'add', path: '/metadata/finalizers/2', value: 'example.com/c' }, { op: 'move', from: '/metadata/finalizers/0', path: '/metadata/finalizers/-' }]), JSONPATCH);
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.deepEqual((JSON.parse(ok.text) as { metadata: { finalizers: string[] } }).metadata.finalizers, ['example.com/b', 'example.com/c', 'example.com/a']);
  });
});

/** A Lease of 1.75 MiB, and a patch of each type that adds 1.3 MiB to it. */
const BIG = 'x'.repeat(1.75 * MB);
const ADDED = 'y'.repeat(1.3 * MB);
const growing: [string, Record<string, string>, (name: string) => string][] = [
  ['JSON patch', JSONPATCH, () => JSON.stringify([{ op: 'add', path: '/spec/preferredHolder', value: ADDED }])],
  ['merge patch', MERGE, () => JSON.stringify({ spec: { preferredHolder: ADDED } })],
  ['strategic merge patch', STRATEGIC, () => JSON.stringify({ spec: { preferredHolder: ADDED } })],
  ['apply patch', APPLY, (name) => JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { preferredHolder: ADDED, strategy: 'OldestEmulationVersion' } })],
];

describe('every patch result is bounded before it is decoded further', () => {
  for (const [type, headers, patch] of growing) {
    test(`${type}: a result past the request-body limit is 413 and changes nothing`, async () => {
      const name = `grow-${type.split(' ')[0]!.toLowerCase()}`;
      const before = await lease(name, { holderIdentity: BIG });
      const q = type === 'apply patch' ? '?fieldManager=grower' : '';
      assertStatus(await send('PATCH', `${LEASES}/${name}${q}`, patch(name), headers), 413, 'RequestEntityTooLarge', `Request entity too large: limit is ${LIMIT}`);
      assert.equal(await stored(name), before);
    });
  }
});

describe('warnings are bounded as kube-apiserver bounds them', () => {
  test('5,000 unknown fields: the first 100 warned about, as Kubernetes\' decoder keeps 100 strict errors; headers Node can read', async () => {
    const spec: Record<string, unknown> = { holderIdentity: 'h' };
    for (let i = 0; i < 5000; i++) spec[`f${String(i).padStart(4, '0')}`] = i;
    const body = JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'warned' }, spec });
    const a = await send('POST', `${LEASES}?dryRun=All`, body, JSON_CT);
    assert.equal(a.status, 201, a.text.slice(0, 300));
    const w = warnings(a);
    // The decoder keeps the first 100 strict errors; each text is `unknown field "spec.fNNNN"`,
    // 26 characters, so all 100 fit in the warnings' 4,096.
    assert.equal(w.length, 100);
    w.forEach((h, i) => assert.equal(h, `299 - "unknown field \\"spec.f${String(i).padStart(4, '0')}\\""`));
    assert.ok(headerBytes(a) < 8 * 1024, `${headerBytes(a)} bytes of headers`);
    // Node's fetch reads the answer too.
    const res = await fetch(`${server.url}${LEASES}?dryRun=All`, { method: 'POST', headers: JSON_CT, body });
    assert.equal(res.status, 201);
    assert.match(res.headers.get('warning') ?? '', /^299 - "unknown field \\"spec\.f0000\\""/);
    await res.arrayBuffer();
  });

  test('past 4,096 characters every warning is cut to 256, then the rest are dropped', async () => {
    const spec: Record<string, unknown> = { holderIdentity: 'h' };
    const names = Array.from({ length: 20 }, (_, i) => `${String.fromCharCode(97 + i)}`.repeat(300));
    for (const n of names) spec[n] = 1;
    const a = await send('POST', `${LEASES}?dryRun=All`, JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'cut' }, spec }), JSON_CT);
    assert.equal(a.status, 201, a.text.slice(0, 300));
    // 12 texts of 321 characters fit; the 13th passes 4,096: all are cut to 256 (3,328 in all), and
    // three more fit before the total reaches 4,096 again.
    const texts = names.map((n) => `unknown field "spec.${n}"`);
    assert.deepEqual(warnings(a), texts.slice(0, 16).map((t) => `299 - ${JSON.stringify(t.slice(0, 256))}`));
  });
});

describe('warning headers stay readable whatever the texts', () => {
  test('texts of escaped characters: the first warnings as kube-apiserver would send them, within 8 KiB of headers', async () => {
    const spec: Record<string, unknown> = { holderIdentity: 'h' };
    const names = Array.from({ length: 100 }, (_, i) => `${'é'.repeat(100)}${String(i).padStart(3, '0')}`);
    for (const n of names) spec[n] = 1;
    const body = JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'accents' }, spec });
    const a = await send('POST', `${LEASES}?dryRun=All`, body, JSON_CT);
    assert.equal(a.status, 201, a.text.slice(0, 300));
    // Each character outside ASCII goes out as \u00e9, six bytes: within kube-apiserver's 4,096
    // characters that would be 22 KiB of headers, more than Node reads. The first ones are sent.
    const w = warnings(a);
    assert.ok(w.length >= 8 && w.length < 34, `${w.length} warnings`);
    w.forEach((h, i) => assert.equal(h, `299 - "unknown field \\"spec.${'\\u00e9'.repeat(100)}${String(i).padStart(3, '0')}\\""`));
    assert.ok(headerBytes(a) < 8 * 1024 + 512, `${headerBytes(a)} bytes of headers`);
    const res = await fetch(`${server.url}${LEASES}?dryRun=All`, { method: 'POST', headers: JSON_CT, body });
    assert.equal(res.status, 201);
    await res.arrayBuffer();
  });
});

// ---------------------------------------------------------------------------------------------
// Memory over sequences of hostile requests.

interface Hostile {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The answer expected. */
  code: number;
}

/** Many unknown fields and a long string: a body that makes warnings and copies. */
function hostileLease(name: string, unknown = 5000): Record<string, unknown> {
  const spec: Record<string, unknown> = { holderIdentity: 'z'.repeat(256 * 1024) };
  for (let i = 0; i < unknown; i++) spec[`unknown${i}`] = { n: i, s: 'v'.repeat(20) };
  return { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name, annotations: { a: 'b' } }, spec };
}

// A CBOR map holds at most 1,024 pairs (as in kube-apiserver).
const cbor = new Encoder({ useRecords: false, variableMapSize: true });

const sequences: [string, () => Promise<Hostile>][] = [
  ['JSON body', async () => ({ method: 'POST', path: `${LEASES}?dryRun=All`, headers: JSON_CT, body: Buffer.from(JSON.stringify(hostileLease('b-json'))), code: 201 })],
  [
    'YAML body',
    async () => {
      // YAML with many unknown keys is slow to decode: fewer of them.
      const obj = hostileLease('b-yaml');
      const spec: Record<string, unknown> = { holderIdentity: 'z'.repeat(128 * 1024) };
      for (let i = 0; i < 500; i++) spec[`unknown${i}`] = i;
      obj.spec = spec;
      return { method: 'POST', path: `${LEASES}?dryRun=All`, headers: { 'Content-Type': 'application/yaml' }, body: Buffer.from(toYaml(obj)), code: 201 };
    },
  ],
  [
    'protobuf body',
    async () => ({
      method: 'POST',
      path: `${LEASES}?dryRun=All`,
      headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' },
      body: Buffer.from(encodeObject({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'b-pb', annotations: { a: 'b' } }, spec: { holderIdentity: 'z'.repeat(MB) } })),
      code: 201,
    }),
  ],
  ['CBOR body', async () => ({ method: 'POST', path: `${LEASES}?dryRun=All`, headers: { 'Content-Type': 'application/cbor' }, body: Buffer.from(cbor.encode(hostileLease('b-cbor', 1000))), code: 201 })],
  [
    'JSON patch',
    async () => {
      await lease('p-json');
      return { method: 'PATCH', path: `${LEASES}/p-json?dryRun=All`, headers: JSONPATCH, body: Buffer.from(doublingPatch(16)), code: 422 };
    },
  ],
  ...growing
    .filter(([type]) => type !== 'JSON patch')
    .map(([type, headers, patch]): [string, () => Promise<Hostile>] => [
      type,
      async () => {
        const name = `p-${type.split(' ')[0]!.toLowerCase()}`;
        await lease(name, { holderIdentity: BIG });
        const q = type === 'apply patch' ? 'fieldManager=grower&dryRun=All' : 'dryRun=All';
        return { method: 'PATCH', path: `${LEASES}/${name}?${q}`, headers, body: Buffer.from(patch(name)), code: 413 };
      },
    ]),
];

/**
 * Requests per sequence: 100, or 50 for bodies of a megabyte or more (the slowest), so that a
 * request that kept its body would keep at least 50 MB, past the bounds below, either way.
 */
const rounds = (body: Buffer): number => (body.length >= MB ? 50 : 100);

describe('100 hostile requests of each body format and patch type (50 of a megabyte or more) leave the server memory where it was', () => {
  for (const [what, build] of sequences) {
    test(what, async (t) => {
      const r = await build();
      const n = rounds(r.body);
      const start = await server.rssAfterGc();
      // What the requests leave behind, read after a full collection every quarter of the
      // requests; and the highest reading between them, which also holds the garbage not yet collected.
      let retained = start;
      let peak = start;
      const t0 = performance.now();
      for (let i = 1; i <= n; i++) {
        const a = await send(r.method, r.path, r.body, r.headers);
        assert.equal(a.status, r.code, a.text.slice(0, 300));
        assert.ok(headerBytes(a) < 8 * 1024);
        peak = Math.max(peak, server.rss());
        if (i % Math.floor(n / 4) === 0) retained = Math.max(retained, await server.rssAfterGc());
      }
      const ms = performance.now() - t0;
      const end = await server.rssAfterGc();
      t.diagnostic(
        `${what}: ${r.body.length} bytes x ${n} in ${Math.round(ms)} ms; RSS ${Math.round(start / MB)} MB at the start, at most +${Math.round((retained - start) / MB)} MB after a collection, +${Math.round((peak - start) / MB)} MB with garbage, +${Math.round((end - start) / MB)} MB at the end`,
      );
      assert.ok(retained - start < 64 * MB, `RSS grew by ${Math.round((retained - start) / MB)} MB`);
      // Garbage waits for the collector, but never multiplies (unbounded, one doubling patch took 2.3 GB).
      assert.ok(peak - start < 256 * MB, `RSS grew by ${Math.round((peak - start) / MB)} MB before a collection`);
      assert.ok(end - start < 32 * MB, `RSS stayed ${Math.round((end - start) / MB)} MB above the start`);
    });
  }
});
