// Hostile create and update bodies (issue 23, section 1): the cost of a body grows linearly with
// its size in every format, a large body does not hold the event loop (another client's /readyz
// answers meanwhile), and moving the work off the loop changes no answer: warnings and Strict
// errors for unknown and duplicate fields are the same texts, small body or large.
//
// Times are compared as ratios measured in the same run, never as absolute figures, with generous
// bounds: the machine is shared, and a linear cost gives 3× for 3× the bytes where the quadratic
// ones this guards against gave 9× and more.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { whileReadyzPolled } from '../support/readyz.ts';
import { encodeCbor } from '../../src/wire/cbor.ts';
import { encodeObject } from '../../src/wire/protobuf/index.ts';
import { WritePool } from '../../src/endpoints/write-pool.ts';
import { writeInput } from '../../src/endpoints/write-inputs.ts';
import type { BodyType, FieldValidation } from '../../src/endpoints/decode.ts';
import { kindKey, WritePreparation, type Answered, type PreparedWrite } from '../../src/registry/preparation.ts';
import { builtinKinds } from '../../src/registry/kinds/index.ts';
import { namingProfile } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { isStatusError } from '../../src/machinery/status.ts';
import { fillText as fill } from '../../bench/hostile.ts';
import { clientRequest as request } from '../support/tls-clients.ts';

const server = await testServer({ featureGates: 'CBORServingAndStorage=true' });
const GROUP = 'coordination.orch.io';
const LEASES = `/apis/${GROUP}/v1/namespaces/default/leases`;
const KiB = 1024;
const MiB = 1024 * KiB;
/** A 3 MiB body that stays under the request-body limit with its head. */
const THREE_MIB = 3 * MiB - 8 * KiB;
/** The growth allowed for 3× the bytes. */
const GROWTH_BOUND = 6;
/** The longest another client may wait for /readyz while one hostile body is handled. */
const READYZ_BOUND_MS = 1000;

interface Answer {
  status: number;
  text: string;
  warnings: string[];
  ms: number;
}

/** A request on its own connection, reading answers with any number of headers. */
function send(method: string, path: string, body: Buffer | string, contentType: string, timeoutMs = 60_000): Promise<Answer> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(server.url + path, { method, headers: { 'Content-Type': contentType }, agent: false, maxHeaderSize: 64 * MiB, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const w = res.headers.warning;
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), warnings: w === undefined ? [] : Array.isArray(w) ? w : [w], ms: performance.now() - start });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} took more than ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The request's answer, and the worst /readyz latency of another client meanwhile. */
async function withReadyz(run: () => Promise<Answer>): Promise<{ answer: Answer; worstReadyzMs: number; polls: number }> {
  const { answer, worstMs, polls } = await whileReadyzPolled(server.url, run);
  return { answer, worstReadyzMs: worstMs, polls };
}

let serial = 0;
const nextName = (prefix: string) => `${prefix}-${++serial}`;


const yamlHead = (name: string) => `apiVersion: ${GROUP}/v1\nkind: Lease\nmetadata:\n  name: ${name}\nspec:\n  holderIdentity: h\n`;

/** YAML shapes whose cost was quadratic in the number of keys of one map. */
const yamlShapes: Record<string, (bytes: number) => string> = {
  'unknown fields': (bytes) => fill(bytes, yamlHead(nextName('yu')), (i) => `u${i}: 1\n`),
  'duplicate fields': (bytes) => fill(bytes, yamlHead(nextName('yd')), () => 'kind: Lease\n'),
  'many labels': (bytes) => fill(bytes, `apiVersion: ${GROUP}/v1\nkind: Lease\nmetadata:\n  name: ${nextName('yk')}\n  labels:\n`, (i) => `    l${i}: v\n`),
};

describe('the cost of a body is linear in its size', () => {
  // The YAML library reads well under 1 MiB/s on this hardware, so YAML is measured from 256 KiB
  // to 768 KiB (3× the bytes); a quadratic check took minutes at 768 KiB.
  test('YAML (fieldValidation Warn): unknown fields, duplicate fields and many keys', async () => {
    // The first large body starts a write worker: that start is not part of any figure.
    assert.equal((await send('POST', `${LEASES}?dryRun=All`, yamlShapes['unknown fields']!(64 * KiB), 'application/yaml')).status, 201);
    for (const [shape, build] of Object.entries(yamlShapes)) {
      const small = await send('POST', LEASES, build(256 * KiB), 'application/yaml', 30_000);
      const large = await send('POST', LEASES, build(768 * KiB), 'application/yaml', 30_000);
      assert.equal(small.status, 201, `${shape}: ${small.text.slice(0, 300)}`);
      assert.equal(large.status, 201, `${shape}: ${large.text.slice(0, 300)}`);
      const growth = large.ms / small.ms;
      assert.ok(growth <= GROWTH_BOUND, `${shape}: 256 KiB took ${small.ms.toFixed(0)} ms, 768 KiB ${large.ms.toFixed(0)} ms (${growth.toFixed(1)}×)`);
    }
  });
});

// Protobuf has no case here: it cannot carry unknown or duplicate fields, and decoding 3 MiB of
// it takes a fraction of a second even on the event loop; what a large protobuf body that is kept
// costs is the store's work.
describe('a large body does not hold the event loop', () => {
  const cases: { name: string; path: string; type: string; status: number; body: () => Buffer | string }[] = [
    {
      name: 'JSON, 3 MiB of unknown fields',
      path: `${LEASES}?fieldValidation=Ignore`,
      type: 'application/json',
      status: 201,
      body: () => fill(THREE_MIB, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"${nextName('ju')}"}`, (i) => `,"u${i}":1`, '}'),
    },
    {
      // 1 MiB of YAML already takes seconds to parse: what matters is that it is not parsed on the loop.
      name: 'YAML, 1 MiB of unknown fields',
      path: `${LEASES}?fieldValidation=Ignore`,
      type: 'application/yaml',
      status: 201,
      body: () => yamlShapes['unknown fields']!(1 * MiB),
    },
    {
      name: 'CBOR, 3 MiB of unknown fields holding maps of 1000 keys',
      path: `${LEASES}?fieldValidation=Ignore`,
      type: 'application/cbor',
      status: 201,
      body: () => {
        const inner = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
        const o: Record<string, unknown> = { apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: nextName('cu') } };
        for (let i = 0; i < 380; i++) o[`u${i}`] = inner;
        return encodeCbor(o);
      },
    },
  ];
  for (const c of cases) {
    test(`${c.name}: /readyz answers within ${READYZ_BOUND_MS} ms meanwhile`, async () => {
      const body = c.body();
      assert.ok(body.length <= 3 * MiB, `${c.name}: the body is ${body.length} bytes`);
      const { answer, worstReadyzMs, polls } = await withReadyz(() => send('POST', c.path, body, c.type));
      assert.equal(answer.status, c.status, answer.text.slice(0, 300));
      assert.ok(worstReadyzMs <= READYZ_BOUND_MS, `/readyz waited ${worstReadyzMs.toFixed(0)} ms behind a ${answer.ms.toFixed(0)} ms request (${polls} polls)`);
    });
  }
});

describe('decoding off the event loop answers as decoding on it', () => {
  /** A YAML Lease with an unknown field, a repeated key and, when `pad` is set, a 32 KiB annotation (a worker decodes it). */
  const body = (name: string, pad: boolean) =>
    `apiVersion: ${GROUP}/v1\nkind: Lease\nmetadata:\n  name: ${name}\n  annotations:\n    pad: "${pad ? 'x'.repeat(32 * KiB) : ''}"\nspec:\n  holderIdentity: a\n  foo: 1\n  holderIdentity: b\n`;

  for (const pad of [false, true]) {
    const where = pad ? 'a large body (worker)' : 'a small body (inline)';
    test(`YAML, ${where}: Warn warns of each, Strict refuses with the same texts, nothing stored`, async () => {
      const warned = await send('POST', LEASES, body(nextName('yw'), pad), 'application/yaml');
      assert.equal(warned.status, 201, warned.text.slice(0, 300));
      assert.deepEqual(warned.warnings.join(', ').split(', ').sort(), ['299 - "Map keys must be unique"', '299 - "unknown field \\"spec.foo\\""']);
      assert.equal(JSON.parse(warned.text).spec.holderIdentity, 'b');

      const name = nextName('ys');
      const strict = await send('POST', `${LEASES}?fieldValidation=Strict`, body(name, pad), 'application/yaml');
      assert.equal(strict.status, 400);
      assert.equal(JSON.parse(strict.text).message, 'error strict decoding YAML: Map keys must be unique');
      const unknown = await send('POST', `${LEASES}?fieldValidation=Strict`, body(name, pad).replace('  holderIdentity: b\n', ''), 'application/yaml');
      assert.equal(unknown.status, 400);
      assert.equal(JSON.parse(unknown.text).message, 'strict decoding error: unknown field "spec.foo"');
      assert.equal((await api(server, 'GET', `${LEASES}/${name}`)).status, 404);
    });
  }

  test('YAML keys repeat as the YAML library compares them, in maps of any size', async () => {
    const many = Array.from({ length: 20 }, (_, i) => `    k${i}: v\n`).join('');
    const cases: [string, boolean][] = [
      [`    k3: again\n`, true], // a repeat in a large map
      [`    "k3": again\n`, true], // quoting does not make another key
      [`    1: a\n    0x1: b\n`, true], // both read as the integer 1
      [`    1: a\n    "1": b\n`, false], // an integer and a string
      [`    .nan: a\n    .NaN: b\n`, false], // NaN is equal to nothing
    ];
    for (const pad of [false, true]) {
      for (const [extra, repeated] of cases) {
        const text = `apiVersion: ${GROUP}/v1\nkind: Lease\nmetadata:\n  name: ${nextName('yr')}\n  annotations:\n    pad: "${pad ? 'x'.repeat(32 * KiB) : ''}"\n${many}${extra}`;
        const r = await send('POST', `${LEASES}?dryRun=All`, text, 'application/yaml');
        assert.equal(r.status, 201, r.text.slice(0, 300));
        assert.equal(r.warnings.some((w) => w.includes('Map keys must be unique')), repeated, `${JSON.stringify(extra)} (${pad ? 'worker' : 'inline'}): ${r.warnings.join(', ')}`);
      }
    }
  });

  test('strict errors are deduped and bounded at 100, as Kubernetes\' decoder keeps them', async () => {
    const repeats = Array.from({ length: 5000 }, () => '"holderIdentity":"h"').join(',');
    const unknown = Array.from({ length: 150 }, (_, i) => `"u${i}":1`).join(',');
    const dup = await send('POST', `${LEASES}?fieldValidation=Strict`, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"sd"},"spec":{${repeats}}}`, 'application/json');
    assert.equal(dup.status, 400);
    assert.equal(JSON.parse(dup.text).message, 'strict decoding error: duplicate field "spec.holderIdentity"');
    const many = await send('POST', `${LEASES}?fieldValidation=Strict`, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"su"},"spec":{${unknown},${repeats}}}`, 'application/json');
    assert.equal(many.status, 400);
    const listed = (JSON.parse(many.text).message as string).replace('strict decoding error: ', '').split(', ');
    assert.deepEqual(listed, Array.from({ length: 100 }, (_, i) => `unknown field "spec.u${i}"`));
    const warned = await send('POST', `${LEASES}?dryRun=All`, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"sw"},"spec":{${repeats}}}`, 'application/json');
    assert.equal(warned.status, 201, warned.text.slice(0, 300));
    assert.deepEqual(warned.warnings, ['299 - "duplicate field \\"spec.holderIdentity\\""']);
  });

  test('JSON, CBOR and protobuf errors from a worker are the Status they were inline', async () => {
    const pad = 'x'.repeat(100 * KiB);
    const json = await send('POST', `${LEASES}?fieldValidation=Strict`, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"jw","annotations":{"pad":"${pad}"}},"spec":{"holderIdentity":"a","holderIdentity":"b","x":1}}`, 'application/json');
    assert.equal(json.status, 400);
    assert.equal(JSON.parse(json.text).message, 'strict decoding error: unknown field "spec.x", duplicate field "spec.holderIdentity"');
    const typed = await send('POST', LEASES, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"jt","annotations":{"pad":"${pad}"}},"spec":{"leaseDurationSeconds":"ten"}}`, 'application/json');
    assert.equal(typed.status, 400);
    assert.equal(JSON.parse(typed.text).message, 'Lease in version "v1" cannot be handled as a Lease: spec.leaseDurationSeconds: Invalid value: "string": spec.leaseDurationSeconds in body must be of type integer: "string"');
    const cbor = await send('POST', LEASES, Buffer.concat([encodeCbor({ apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: 'cw', annotations: { pad } } }), Buffer.from([0])]), 'application/cbor');
    assert.equal(cbor.status, 400);
    assert.equal(JSON.parse(cbor.text).reason, 'BadRequest');
    const proto = await send('POST', LEASES, Buffer.concat([encodeObject({ apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: 'pw', annotations: { pad } } }).subarray(0, 80 * KiB)]), 'application/vnd.kubernetes.protobuf');
    assert.equal(proto.status, 400);
    assert.match(JSON.parse(proto.text).message, /^Lease in version "v1" cannot be handled as a Lease: /);
    for (const name of ['jw', 'jt', 'cw', 'pw']) assert.equal((await api(server, 'GET', `${LEASES}/${name}`)).status, 404);
  });
});

describe('the write pool', () => {
  const defs = builtinKinds(namingProfile('orch'), parseFeatureGates(''), { componentHealth: async () => [] });
  const lease = defs.find((d) => d.kind === 'Lease')!;
  const prep = new WritePreparation(lease);
  const small = (name: string) => Buffer.from(JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'h', x: 1 } }));
  /** A create of `body` prepared by the pool (every write goes to a worker: offLoopBytes is 0). */
  const create = async (pool: WritePool, body: Buffer, type: BodyType, validation: FieldValidation, deadline?: number, answered?: Answered): Promise<PreparedWrite & { warnings: string[] }> => {
    const input = writeInput({ form: 'body', bytes: body.length, body, type, validation }, prep);
    const job = { kind: kindKey(lease), namespace: 'default', opts: {} };
    const inline = () => Promise.reject(new Error('prepared inline: the pool was expected to take it'));
    const warnings: string[] = [];
    const prepared = await (pool.prepare({ job, input, deadline, warn: (w) => warnings.push(w), answered, inline }) ?? Promise.reject(new Error('the pool refused the job')));
    return { ...prepared, warnings };
  };

  test('a worker that runs out of memory refuses its write as too large (413) and the next job gets a new worker', async () => {
    // A small heap, which 3 MiB of unknown fields exhausts.
    const pool = new WritePool({ naming: 'orch', featureGates: {}, defs, offLoopBytes: 0, heapMb: 32 });
    try {
      const first = await create(pool, small('a'), 'json', 'Warn');
      assert.deepEqual(first.warnings, ['unknown field "spec.x"']);
      assert.equal(first.op, 'create');
      const huge = Buffer.from(fill(THREE_MIB, `{"apiVersion":"${GROUP}/v1","kind":"Lease","metadata":{"name":"b"}`, (i) => `,"u${i}":{"v":[${i}]}`, '}'));
      await assert.rejects(
        async () => create(pool, huge, 'json', 'Warn'),
        (e: unknown) => isStatusError(e) && e.code === 413 && e.reason === 'RequestEntityTooLarge',
      );
      const after = await create(pool, small('c'), 'json', 'Strict').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isStatusError(after) && after.message === 'strict decoding error: unknown field "spec.x"', String(after));
    } finally {
      await pool.close();
    }
  });

  test("a worker collects a large job's garbage once the request is answered, and is told only for large jobs", async () => {
    const pool = new WritePool({ naming: 'orch', featureGates: {}, defs, offLoopBytes: 0 });
    try {
      const told: (() => void)[] = [];
      const answered: Answered = (then) => void told.push(then);
      await create(pool, small('g'), 'json', 'Ignore', undefined, answered);
      assert.equal(told.length, 0, 'a small job leaves nothing worth a collection');
      const large = Buffer.from(JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Lease', metadata: { name: 'h' }, spec: { holderIdentity: 'x'.repeat(THREE_MIB) } }));
      const h = await create(pool, large, 'json', 'Ignore', undefined, answered);
      assert.equal(h.op, 'create');
      assert.equal(told.length, 1, 'a large job waits for its answer before its worker collects');
      // Answered now, while the worker is busy with the next job: that job goes first, the collection after it.
      const next = create(pool, large, 'json', 'Ignore', undefined, answered);
      told[0]!();
      assert.equal((await next).op, 'create');
      told[1]!();
      const after = await create(pool, small('i'), 'json', 'Ignore');
      assert.equal(after.op === 'create' && prep.decodeNew(after.bytes).metadata.name, 'i');
    } finally {
      await pool.close();
    }
  });

  test('a job past its deadline is answered 504 and its worker replaced', async () => {
    const pool = new WritePool({ naming: 'orch', featureGates: {}, defs, offLoopBytes: 0 });
    try {
      await create(pool, small('d'), 'json', 'Ignore');
      const yaml = Buffer.from(fill(1 * MiB, yamlHead('e'), (i) => `u${i}: 1\n`));
      await assert.rejects(async () => create(pool, yaml, 'yaml', 'Warn', Date.now() + 50), (e: unknown) => isStatusError(e) && e.code === 504);
      const f = await create(pool, small('f'), 'json', 'Ignore');
      assert.equal(f.op === 'create' && prep.decodeNew(f.bytes).metadata.name, 'f');
    } finally {
      await pool.close();
    }
  });
});
