// One scenario — create, get, list with paging, patch, delete, an error, and a watch over all of
// it — run in each media type the server speaks: JSON, YAML, protobuf and CBOR (gate on). Every answer is
// decoded here, independently of the server's codecs: JSON.parse, the `yaml` package, protobufjs
// reflection over the .proto files (its own decoder, not the server's), and cbor-x. Each decoded
// object must equal the same object read as JSON.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { Decoder, Encoder } from 'cbor-x';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { api, testServer } from '../support/server.ts';

const server = await testServer({ featureGates: 'CBORServingAndStorage=true' });
const GV = 'coordination.orch.io/v1';
const leases = (ns: string, name = '') => `/apis/${GV}/namespaces/${ns}/leases${name ? `/${name}` : ''}`;
type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// protobuf, read with protobufjs reflection over the .proto files

const root = new protobuf.Root();
for (const f of ['apimachinery.proto', 'core.proto', 'apis.proto'])
  protobuf.parse(readFileSync(new URL(`../../src/wire/protobuf/${f}`, import.meta.url), 'utf8'), root, { keepCase: true });
const Unknown = root.lookupType('wire.apimachinery.Unknown');
const WatchEvent = root.lookupType('wire.apimachinery.WatchEvent');
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const PB = 'application/vnd.orch.protobuf';

function messageFor(kind: string): protobuf.Type {
  for (const pkg of ['wire.apis', 'wire.core', 'wire.apimachinery']) {
    const t = root.lookup(`${pkg}.${kind}`);
    if (t instanceof protobuf.Type) return t;
  }
  throw new Error(`no message for ${kind}`);
}

const num = (v: unknown): number => (typeof v === 'object' && v !== null ? Number(String(v)) : Number(v));
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
function rfc3339(seconds: number, micros?: number): string {
  const d = new Date(seconds * 1000);
  const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return micros === undefined ? `${base}Z` : `${base}.${pad(micros, 6)}Z`;
}

/** A decoded message as its JSON form: field names are the JSON names; Time and friends by their Kubernetes JSON forms. */
function pbToJson(type: protobuf.Type, msg: protobuf.Message): Obj {
  const out: Obj = {};
  const m = msg as unknown as Obj;
  for (const field of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(m, field.name)) continue;
    const value = m[field.name];
    const one = (v: unknown): unknown => (field.resolvedType instanceof protobuf.Type ? special(field.resolvedType, v as protobuf.Message) : ['int64', 'int32'].includes(field.type) ? num(v) : v);
    if (field.map) {
      const entries = Object.entries(value as Obj);
      if (entries.length) out[field.name] = Object.fromEntries(entries.map(([k, v]) => [k, one(v)]));
    } else if (field.repeated) {
      if ((value as unknown[]).length) out[field.name] = (value as unknown[]).map(one);
    } else out[field.name] = one(value);
  }
  return out;
}

function special(type: protobuf.Type, msg: protobuf.Message): unknown {
  const m = msg as unknown as Obj;
  switch (type.name) {
    case 'Time':
      return rfc3339(num(m.seconds));
    case 'MicroTime':
      return rfc3339(num(m.seconds), Math.floor(num(m.nanos) / 1000));
    case 'Quantity':
      return m.string;
    case 'FieldsV1':
      return JSON.parse(Buffer.from(m.Raw as Uint8Array).toString('utf8'));
    case 'IntOrString':
      return num(m.type) === 1 ? m.strVal : num(m.intVal);
    default:
      return pbToJson(type, msg);
  }
}

/** An enveloped object: the magic, then Unknown{typeMeta, raw}. */
function pbDecode(bytes: Uint8Array): Obj {
  assert.deepEqual(Buffer.from(bytes.subarray(0, 4)), MAGIC, 'the k8s\\0 prefix');
  const env = Unknown.decode(bytes.subarray(4)) as unknown as { typeMeta: { apiVersion: string; kind: string }; raw: Uint8Array };
  const type = messageFor(env.typeMeta.kind);
  return { apiVersion: env.typeMeta.apiVersion, kind: env.typeMeta.kind, ...pbToJson(type, type.decode(env.raw)) };
}

/** The JSON form of a Lease as the protobuf message, enveloped: MicroTime strings become seconds and nanos. */
function pbEncodeLease(obj: Obj): Uint8Array {
  const micro = (s: string) => {
    const [whole, frac = '0'] = s.replace(/Z$/, '').split('.');
    return { seconds: Math.floor(Date.parse(`${whole}Z`) / 1000), nanos: Number(frac.padEnd(6, '0')) * 1000 };
  };
  const spec = { ...obj.spec };
  for (const k of ['acquireTime', 'renewTime']) if (spec[k]) spec[k] = micro(spec[k]);
  const Lease = messageFor('Lease');
  const raw = Lease.encode(Lease.fromObject({ metadata: obj.metadata, spec })).finish();
  const env = Unknown.encode(Unknown.fromObject({ typeMeta: { apiVersion: obj.apiVersion, kind: obj.kind }, raw, contentEncoding: '', contentType: '' })).finish();
  return Buffer.concat([MAGIC, env]);
}

function pbWatch(bytes: Buffer): { type: string; object: Obj }[] {
  const events: { type: string; object: Obj }[] = [];
  for (let at = 0; at < bytes.length; ) {
    const len = bytes.readUInt32BE(at);
    const ev = WatchEvent.decode(bytes.subarray(at + 4, at + 4 + len)) as unknown as { type: string; object: { raw: Uint8Array } };
    events.push({ type: ev.type, object: pbDecode(ev.object.raw) });
    at += 4 + len;
  }
  return events;
}

// ---------------------------------------------------------------------------------------------
// CBOR, read with cbor-x (Kubernetes writes strings as byte strings: read them back as text)

const cborDecoder = new Decoder({ mapsAsObjects: false });
const cborEncoder = new Encoder({ mapsAsObjects: true, useRecords: false, tagUint8Array: false });
const fromCbor = (v: unknown): any => {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return v.map(fromCbor);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [fromCbor(k) as string, fromCbor(x)]));
  return v;
};
const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);
function cborDecode(bytes: Buffer): Obj {
  assert.deepEqual(bytes.subarray(0, 3), SELF_DESCRIBED, 'the self-described CBOR tag');
  return fromCbor(cborDecoder.decode(bytes));
}

// ---------------------------------------------------------------------------------------------
// The four encodings

interface Encoding {
  name: string;
  accept: string;
  /** The Content-Type of answers. */
  type: string;
  decode(bytes: Buffer): Obj;
  /** A request body in this encoding (undefined: send JSON). */
  body?: { type: string; encode(obj: Obj): Uint8Array | string };
  /** An apply intent in this encoding (undefined: the scenario's patch is a merge patch only). */
  apply?: { type: string; encode(obj: Obj): Uint8Array | string };
  /** How a watch streams: its Accept, Content-Type and decoder; or the 406 and the fallback. */
  watch: { accept: string; type: string; decode(bytes: Buffer): { type: string; object: Obj }[]; refused?: string };
}

const jsonLines = (bytes: Buffer) =>
  bytes
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { type: string; object: Obj });

const ENCODINGS: Encoding[] = [
  {
    name: 'json',
    accept: 'application/json',
    type: 'application/json',
    decode: (b) => JSON.parse(b.toString('utf8')),
    body: { type: 'application/json', encode: (o) => JSON.stringify(o) },
    watch: { accept: 'application/json', type: 'application/json', decode: jsonLines },
  },
  {
    name: 'yaml',
    accept: 'application/yaml',
    type: 'application/yaml',
    decode: (b) => parseYaml(b.toString('utf8')),
    body: { type: 'application/yaml', encode: (o) => stringifyYaml(o) },
    apply: { type: 'application/apply-patch+yaml', encode: (o) => stringifyYaml(o) },
    // YAML has no stream form: a YAML-only watch is 406, and the JSON fallback streams.
    watch: { refused: 'application/yaml', accept: 'application/yaml, application/json;q=0.5', type: 'application/json', decode: jsonLines },
  },
  {
    name: 'protobuf',
    accept: PB,
    type: PB,
    decode: pbDecode,
    body: { type: PB, encode: pbEncodeLease },
    watch: { accept: `${PB};stream=watch`, type: `${PB};stream=watch`, decode: pbWatch },
  },
  {
    name: 'cbor',
    accept: 'application/cbor',
    type: 'application/cbor',
    decode: cborDecode,
    body: { type: 'application/cbor', encode: (o) => cborEncoder.encode(o) },
    apply: { type: 'application/apply-patch+cbor', encode: (o) => cborEncoder.encode(o) },
    watch: {
      accept: 'application/cbor-seq',
      type: 'application/cbor-seq',
      decode: (b) => (cborDecoder.decodeMultiple(b) as unknown[]).map((e) => fromCbor(e) as { type: string; object: Obj }),
    },
  },
];

async function send(method: string, path: string, headers: Record<string, string>, body?: Uint8Array | string) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Drop what JSON omits and the binary forms keep as zero values: "", 0, false, [], {}. */
function pruned(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(pruned) : undefined;
  if (v && typeof v === 'object') {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      const p = pruned(x);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === '' || v === 0 || v === false || v === null ? undefined : v;
}

const jsonGet = async (path: string): Promise<Obj> => {
  const r = await api(server, 'GET', path);
  assert.equal(r.status, 200, r.text);
  return r.body as Obj;
};

for (const enc of ENCODINGS) {
  describe(`the scenario in ${enc.name}`, () => {
    const ns = `enc-${enc.name}`;
    const decodeOk = (r: { status: number; type: string | null; bytes: Buffer }, status: number, what: string): Obj => {
      assert.equal(r.status, status, `${what}: ${r.bytes.toString('utf8').slice(0, 300)}`);
      assert.equal(r.type, enc.type, `${what}: Content-Type`);
      return enc.decode(r.bytes);
    };
    const A = { Accept: enc.accept };
    let startRv = '';

    test('create (the body in this encoding), get: each equals the object read as JSON', async () => {
      assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
      startRv = (await jsonGet(leases(ns))).metadata.resourceVersion;
      const lease = {
        apiVersion: GV,
        kind: 'Lease',
        metadata: { name: 'first', labels: { encoding: enc.name, tier: 'a' }, annotations: { note: 'ünïcode ✓' } },
        spec: { holderIdentity: 'holder-1', leaseDurationSeconds: 30, leaseTransitions: 2, acquireTime: '2026-01-02T03:04:05.123456Z' },
      };
      const body = enc.body!;
      const created = decodeOk(await send('POST', leases(ns), { ...A, 'Content-Type': body.type }, body.encode(lease)), 201, 'create');
      const json = await jsonGet(leases(ns, 'first'));
      assert.deepEqual(pruned(created), pruned(json));
      assert.equal(json.spec.acquireTime, '2026-01-02T03:04:05.123456Z');
      assert.equal(json.metadata.annotations.note, 'ünïcode ✓');
      const got = decodeOk(await send('GET', leases(ns, 'first'), A), 200, 'get');
      assert.deepEqual(pruned(got), pruned(json));
      assert.equal(got.kind, 'Lease');
      assert.equal(got.apiVersion, GV);
    });

    test('list with paging: limit 2 over five objects, continue tokens and remaining counts', async () => {
      for (const n of ['second', 'third', 'fourth', 'fifth']) assert.equal((await api(server, 'POST', leases(ns), { metadata: { name: n }, spec: { holderIdentity: n } })).status, 201);
      const all = await jsonGet(leases(ns));
      const names: string[] = [];
      const remaining: (number | undefined)[] = [];
      let cont = '';
      let pages = 0;
      do {
        const page = decodeOk(await send('GET', `${leases(ns)}?limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, A), 200, `page ${pages + 1}`);
        assert.equal(page.kind, 'LeaseList');
        assert.ok(page.items.length <= 2);
        for (const [i, item] of (page.items as Obj[]).entries()) {
          const same = (all.items as Obj[]).find((x) => x.metadata.name === item.metadata.name);
          assert.ok(same, `item ${item.metadata.name} is in the JSON list`);
          assert.deepEqual(pruned({ ...item, apiVersion: undefined, kind: undefined }), pruned({ ...same, apiVersion: undefined, kind: undefined }), `page ${pages + 1} item ${i}`);
          names.push(item.metadata.name);
        }
        remaining.push(page.metadata.remainingItemCount === undefined ? undefined : Number(page.metadata.remainingItemCount));
        cont = page.metadata.continue ?? '';
        pages++;
      } while (cont && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(names, ['fifth', 'first', 'fourth', 'second', 'third']);
      assert.deepEqual(remaining, [3, 1, undefined]);
    });

    test('patch: a merge patch, answered in this encoding' + (enc.apply ? '; then an apply intent in this encoding' : ''), async () => {
      const merged = decodeOk(
        await send('PATCH', leases(ns, 'first'), { ...A, 'Content-Type': 'application/merge-patch+json' }, JSON.stringify({ metadata: { labels: { tier: 'b' } }, spec: { holderIdentity: 'holder-2' } })),
        200,
        'merge patch',
      );
      assert.equal(merged.spec.holderIdentity, 'holder-2');
      assert.equal(merged.metadata.labels.tier, 'b');
      assert.deepEqual(pruned(merged), pruned(await jsonGet(leases(ns, 'first'))));
      if (enc.apply) {
        const intent = { apiVersion: GV, kind: 'Lease', metadata: { name: 'first' }, spec: { holderIdentity: 'applied', leaseDurationSeconds: 45 } };
        const applied = decodeOk(await send('PATCH', `${leases(ns, 'first')}?fieldManager=enc-${enc.name}&force=true`, { ...A, 'Content-Type': enc.apply.type }, enc.apply.encode(intent)), 200, 'apply');
        assert.equal(applied.spec.holderIdentity, 'applied');
        assert.equal(applied.spec.leaseDurationSeconds, 45);
        assert.ok((applied.metadata.managedFields as Obj[]).some((e) => e.manager === `enc-${enc.name}` && e.operation === 'Apply'));
        assert.deepEqual(pruned(applied), pruned(await jsonGet(leases(ns, 'first'))));
      }
    });

    test('delete, then get: the answers and the NotFound Status in this encoding', async () => {
      const before = await jsonGet(leases(ns, 'first'));
      const jsonShape = await api(server, 'DELETE', leases(ns, 'second'));
      assert.equal(jsonShape.status, 200);
      const deleted = decodeOk(await send('DELETE', leases(ns, 'first'), A), 200, 'delete');
      // A delete that takes effect at once answers a success Status naming the object, as JSON does.
      assert.equal(jsonShape.body.kind, 'Status');
      assert.deepEqual(pruned({ ...deleted, details: { ...deleted.details, uid: undefined } }), pruned({ ...jsonShape.body, details: { ...jsonShape.body.details, name: 'first', uid: undefined } }));
      assert.equal(deleted.status, 'Success');
      assert.deepEqual(pruned(deleted.details), { name: 'first', group: 'coordination.orch.io', kind: 'leases', uid: before.metadata.uid });
      const missing = decodeOk(await send('GET', leases(ns, 'first'), A), 404, 'get after delete');
      assert.deepEqual(pruned(missing), pruned((await api(server, 'GET', leases(ns, 'first'))).body));
      assert.equal(missing.kind, 'Status');
      assert.equal(missing.reason, 'NotFound');
      assert.equal(Number(missing.code), 404);
      assert.deepEqual(pruned(missing.details), { name: 'first', group: 'coordination.orch.io', kind: 'leases' });
    });

    test('watch from before the scenario: every event, in order, in this encoding', async () => {
      if (enc.watch.refused) {
        const r = await send('GET', `${leases(ns)}?watch=1&resourceVersion=${startRv}&timeoutSeconds=1`, { Accept: enc.watch.refused });
        assert.equal(r.status, 406);
      }
      const r = await send('GET', `${leases(ns)}?watch=1&resourceVersion=${startRv}&timeoutSeconds=1`, { Accept: enc.watch.accept });
      assert.equal(r.status, 200, r.bytes.toString('utf8').slice(0, 300));
      assert.equal(r.type, enc.watch.type);
      const events = enc.watch.decode(r.bytes).filter((e) => e.type !== 'BOOKMARK');
      const seen = events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec?.holderIdentity ?? ''}`.trim());
      assert.deepEqual(seen, [
        'ADDED first holder-1',
        'ADDED second second',
        'ADDED third third',
        'ADDED fourth fourth',
        'ADDED fifth fifth',
        'MODIFIED first holder-2',
        ...(enc.apply ? ['MODIFIED first applied'] : []),
        'DELETED second second',
        `DELETED first ${enc.apply ? 'applied' : 'holder-2'}`,
      ]);
      const rvs = events.map((e) => BigInt(e.object.metadata.resourceVersion as string));
      assert.ok(rvs.every((rv, i) => i === 0 || rv > rvs[i - 1]!), 'resourceVersions increase');
      for (const e of events) assert.equal(e.object.kind, 'Lease');
    });
  });
}
