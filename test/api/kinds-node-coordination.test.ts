// RuntimeClass (node.orch.io/v1) and LeaseCandidate (coordination.orch.io/v1beta1, off by
// default) over real HTTP: CRUD, list, watch, patch, Table, every validation rule (422 Invalid
// naming the field, nothing stored), the TaintTolerationComparisonOperators gate, and the garbage
// collection of stale LeaseCandidates.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { namingProfile } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { openLmdbStorage } from '../../src/storage/lmdb/lmdb-storage.ts';
import { openWatchCache, type WatchCache } from '../../src/storage/cache/watch-cache.ts';
import type { Storage } from '../../src/storage/interface.ts';
import { RegistryStore } from '../../src/registry/store.ts';
import type { Admission } from '../../src/registry/admission.ts';
import type { ListOptions } from '../../src/machinery/list-options.ts';
import { nowMicroTimestamp, type KObject } from '../../src/machinery/meta.ts';
import { leaseCandidateDefinition, parseSemVer, compareSemVer } from '../../src/registry/kinds/lease-candidate.ts';
import { decimalInt64, toleratesNumerically } from '../../src/registry/kinds/runtime-class.ts';
import { parseQuantity } from '../../src/machinery/resources.ts';
import { storeKey, type ControllerContext } from '../../src/controllers/controller.ts';
import {
  isStaleLeaseCandidate,
  lastRenewal,
  leaseCandidateGc,
  leaseCandidateGcWith,
  LeaseCandidateGarbageCollector,
  LEASE_CANDIDATE_GC_INTERVAL_MS,
  LEASE_CANDIDATE_MAX_AGE_MS,
} from '../../src/controllers/lease-candidate-gc.ts';

const RUNTIME_CONFIG = 'coordination.orch.io/v1beta1=true';
const TABLE = 'application/json;as=Table;g=meta.orch.io;v=v1';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };

// LeaseCandidates off (the default), on, and a server with the Lt/Gt toleration gate.
const plain = await testServer();
const server = await testServer({ runtimeConfig: RUNTIME_CONFIG });
const gated = await testServer({ featureGates: 'TaintTolerationComparisonOperators=true' });

// Namespaces for LeaseCandidates; all top-level set-up happens before the first suite starts.
const NS = 'lc-a';
const NS2 = 'lc-b';
for (const ns of [NS, NS2]) assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);

type Body = Record<string, unknown>;
type Server = { url: string };

interface Cause {
  field: string;
  reason: string;
  message: string;
}

/** A write that must fail validation: 422, reason Invalid, `field` among the causes. */
async function expectInvalid(s: Server, method: string, path: string, body: unknown, field: string, headers: Record<string, string> = {}): Promise<Cause[]> {
  const r = await api(s, method, path, body, headers);
  assert.equal(r.status, 422, `${method} ${path}: ${r.text}`);
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.reason, 'Invalid');
  const causes = r.body.details.causes as Cause[];
  assert.ok(
    causes.some((c) => c.field === field),
    `expected a cause on ${field}, got ${JSON.stringify(causes.map((c) => `${c.field}: ${c.message}`))}`,
  );
  return causes;
}

// ==== RuntimeClass ====

const RC = '/apis/node.orch.io/v1/runtimeclasses';
const runtimeClass = (name: string, extra: Body = {}): Body => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name }, handler: 'runc', ...extra });

/** Create must be rejected on `field` and leave nothing behind. */
async function rejectRuntimeClass(s: Server, body: Body, field: string): Promise<Cause[]> {
  const causes = await expectInvalid(s, 'POST', RC, body, field);
  const name = (body.metadata as { name: string }).name;
  assert.equal((await api(s, 'GET', `${RC}/${name}`)).status, 404, 'nothing stored');
  return causes;
}

/** An update (PUT of `mutate(stored)`) must be rejected on `field`; the stored object is unchanged. */
async function rejectUpdate(s: Server, path: string, mutate: (o: Body) => Body, field: string): Promise<void> {
  const before = await api(s, 'GET', path);
  assert.equal(before.status, 200, before.text);
  await expectInvalid(s, 'PUT', path, mutate(structuredClone(before.body)), field);
  const afterwards = await api(s, 'GET', path);
  assert.deepEqual(afterwards.body, before.body, 'stored object unchanged');
}

describe('RuntimeClass', () => {
  test('a deprecated node label in the node selector is accepted with a Warning header, on create and update', async () => {
    const c = await api(server, 'POST', RC, runtimeClass('warn-label', { scheduling: { nodeSelector: { 'beta.orch.io/arch': 'amd64' } } }));
    assert.equal(c.status, 201, c.text);
    assert.match(c.headers.get('warning') ?? '', /^299 - "scheduling\.nodeSelector: deprecated since v1\.14; use \\"orch\.io\/arch\\" instead"$/);
    const plainCreate = await api(server, 'POST', RC, runtimeClass('no-warn-label', { scheduling: { nodeSelector: { 'orch.io/arch': 'amd64' } } }));
    assert.equal(plainCreate.headers.get('warning'), null);
    const u = await api(server, 'PUT', `${RC}/no-warn-label`, { ...plainCreate.body, scheduling: { nodeSelector: { 'beta.orch.io/os': 'linux' } } });
    assert.equal(u.status, 200, u.text);
    assert.match(u.headers.get('warning') ?? '', /beta\.orch\.io\/os|orch\.io\/os/);
  });

  test('create, get, list, update, delete; cluster-scoped, no generation', async () => {
    const body = runtimeClass('crud', {
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: { nodeSelector: { 'example.com/sandbox': 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
    });
    const c = await api(server, 'POST', RC, body);
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.handler, 'runc');
    assert.equal(c.body.metadata.namespace, undefined);
    assert.equal(c.body.metadata.generation, undefined);
    assert.deepEqual(c.body.overhead, { podFixed: { cpu: '250m', memory: '120Mi' } });
    const g = await api(server, 'GET', `${RC}/crud`);
    assert.equal(g.status, 200);
    assert.deepEqual(g.body, c.body);
    const l = await api(server, 'GET', RC);
    assert.equal(l.body.kind, 'RuntimeClassList');
    assert.ok(l.body.items.some((i: KObject) => i.metadata.name === 'crud'));
    const u = await api(server, 'PUT', `${RC}/crud`, { ...g.body, scheduling: { nodeSelector: { 'example.com/sandbox': 'false' } } });
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(u.body.scheduling, { nodeSelector: { 'example.com/sandbox': 'false' } });
    assert.equal(u.body.metadata.generation, undefined);
    assert.equal((await api(server, 'POST', RC, body)).status, 409);
    const d = await api(server, 'DELETE', `${RC}/crud`);
    assert.equal(d.status, 200);
    assert.equal(d.body.status, 'Success');
    assert.equal((await api(server, 'GET', `${RC}/crud`)).status, 404);
  });

  test('PUT of a missing RuntimeClass creates it', async () => {
    const r = await api(server, 'PUT', `${RC}/put-created`, runtimeClass('put-created'));
    assert.equal(r.status, 201, r.text);
    assert.equal((await api(server, 'GET', `${RC}/put-created`)).body.handler, 'runc');
  });

  test('merge, strategic merge and JSON patch', async () => {
    assert.equal((await api(server, 'POST', RC, runtimeClass('patched'))).status, 201);
    const mp = await api(server, 'PATCH', `${RC}/patched`, { scheduling: { tolerations: [{ key: 'k', operator: 'Equal', value: 'v' }] } }, MERGE);
    assert.equal(mp.status, 200, mp.text);
    assert.deepEqual(mp.body.scheduling.tolerations, [{ key: 'k', operator: 'Equal', value: 'v' }]);
    // Strategic merge: tolerations are atomic, so the list is replaced, not merged by key.
    const smp = await api(server, 'PATCH', `${RC}/patched`, { scheduling: { tolerations: [{ key: 'k2', operator: 'Exists' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.status, 200, smp.text);
    assert.deepEqual(smp.body.scheduling.tolerations, [{ key: 'k2', operator: 'Exists' }]);
    const jp = await api(server, 'PATCH', `${RC}/patched`, [{ op: 'add', path: '/overhead', value: { podFixed: { cpu: '1' } } }], JSON_PATCH);
    assert.equal(jp.status, 200, jp.text);
    assert.deepEqual(jp.body.overhead, { podFixed: { cpu: '1' } });
    // The handler may not change, through a patch either; nothing is stored.
    await expectInvalid(server, 'PATCH', `${RC}/patched`, { handler: 'kata' }, 'handler', MERGE);
    assert.equal((await api(server, 'GET', `${RC}/patched`)).body.metadata.resourceVersion, jp.body.metadata.resourceVersion);
    // A patch that breaks a rule is refused as well.
    await expectInvalid(server, 'PATCH', `${RC}/patched`, { overhead: { podFixed: { cpu: '-1' } } }, 'overhead.limits[cpu]', MERGE);
    assert.deepEqual((await api(server, 'GET', `${RC}/patched`)).body, jp.body);
  });

  test('watch: ADDED, MODIFIED, DELETED', async () => {
    const rv = (await api(server, 'GET', RC)).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${RC}?watch=1&resourceVersion=${rv}`);
    try {
      assert.equal((await api(server, 'POST', RC, runtimeClass('watched'))).status, 201);
      assert.equal((await api(server, 'PATCH', `${RC}/watched`, { metadata: { labels: { a: 'b' } } }, MERGE)).status, 200);
      assert.equal((await api(server, 'DELETE', `${RC}/watched`)).status, 200);
      const events = await w.next(3);
      assert.deepEqual(
        events.map((e) => `${e.type}:${e.object.metadata.name}`),
        ['ADDED:watched', 'MODIFIED:watched', 'DELETED:watched'],
      );
      assert.equal(events[1]!.object.metadata.labels.a, 'b');
      assert.equal(events[0]!.object.kind, 'RuntimeClass');
    } finally {
      w.close();
    }
  });

  test('deletecollection with a label selector', async () => {
    for (const name of ['dc-1', 'dc-2']) assert.equal((await api(server, 'POST', RC, { ...runtimeClass(name), metadata: { name, labels: { dc: 'yes' } } })).status, 201);
    assert.equal((await api(server, 'POST', RC, runtimeClass('dc-keep'))).status, 201);
    const d = await api(server, 'DELETE', `${RC}?labelSelector=dc%3Dyes`);
    assert.equal(d.status, 200, d.text);
    assert.equal((await api(server, 'GET', `${RC}/dc-1`)).status, 404);
    assert.equal((await api(server, 'GET', `${RC}/dc-2`)).status, 404);
    assert.equal((await api(server, 'GET', `${RC}/dc-keep`)).status, 200);
  });

  test('Table: Name, Handler, Age', async () => {
    assert.equal((await api(server, 'POST', RC, { ...runtimeClass('tabled'), handler: 'kata' })).status, 201);
    const t = await api(server, 'GET', `${RC}/tabled`, undefined, { Accept: TABLE });
    assert.equal(t.status, 200, t.text);
    assert.deepEqual(
      t.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'Handler', 'Age'],
    );
    const [name, handler, age] = t.body.rows[0].cells;
    assert.equal(name, 'tabled');
    assert.equal(handler, 'kata');
    assert.match(age, /^\d+s$/);
  });

  test('discovery: cluster-scoped runtimeclasses in node.orch.io/v1', async () => {
    const r = await api(server, 'GET', '/apis/node.orch.io/v1');
    assert.equal(r.status, 200);
    const res = r.body.resources.find((x: { name: string }) => x.name === 'runtimeclasses');
    assert.ok(res);
    assert.equal(res.namespaced, false);
    assert.equal(res.kind, 'RuntimeClass');
    assert.deepEqual([...res.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  });

  test('valid edge cases are accepted', async () => {
    const ok = async (name: string, extra: Body) => {
      const r = await api(server, 'POST', RC, runtimeClass(name, extra));
      assert.equal(r.status, 201, `${name}: ${r.text}`);
    };
    await ok('ok-match-all', { scheduling: { tolerations: [{ operator: 'Exists' }] } });
    await ok('ok-noexecute-seconds', { scheduling: { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: -5 }] } });
    await ok('ok-default-operator', { scheduling: { tolerations: [{ key: 'k', value: 'v', effect: 'PreferNoSchedule' }] } });
    await ok('ok-same-key-other-effect', {
      scheduling: {
        tolerations: [
          { key: 'k', operator: 'Exists', effect: 'NoSchedule' },
          { key: 'k', operator: 'Exists', effect: 'NoExecute' },
        ],
      },
    });
    await ok('ok-overhead', { overhead: { podFixed: { cpu: 1, memory: '1Gi', 'ephemeral-storage': '1G', 'hugepages-2Mi': '4Mi', 'example.com/dev': '2' } } });
    await ok('ok-empty-scheduling', { scheduling: {} });
    await ok('0ok.dots.in.name', {});
    await ok('ok-63', { handler: 'h'.repeat(63) });
  });
});

describe('RuntimeClass validation: 422 Invalid on the field, nothing stored', () => {
  const tol = (t: Body | Body[]): Body => ({ scheduling: { tolerations: Array.isArray(t) ? t : [t] } });
  const cases: [string, Body, string][] = [
    ['handler missing', { handler: undefined }, 'handler'],
    ['handler empty', { handler: '' }, 'handler'],
    ['handler upper case', { handler: 'Runc' }, 'handler'],
    ['handler with a dot (a label, not a subdomain)', { handler: 'run.c' }, 'handler'],
    ['handler starting with a dash', { handler: '-runc' }, 'handler'],
    ['handler longer than 63', { handler: 'h'.repeat(64) }, 'handler'],
    ['negative overhead', { overhead: { podFixed: { cpu: '-100m' } } }, 'overhead.limits[cpu]'],
    ['negative integer overhead', { overhead: { podFixed: { memory: -1 } } }, 'overhead.limits[memory]'],
    ['overhead resource not standard', { overhead: { podFixed: { gpu: '1' } } }, 'overhead.limits[gpu]'],
    ['overhead resource not for containers', { overhead: { podFixed: { pods: '1' } } }, 'overhead.limits[pods]'],
    ['overhead resource name not qualified', { overhead: { podFixed: { 'a/b/c': '1' } } }, 'overhead.limits[a/b/c]'],
    ['extended resource not a whole number', { overhead: { podFixed: { 'example.com/dev': '500m' } } }, 'overhead.limits[example.com/dev]'],
    ['huge pages not whole pages', { overhead: { podFixed: { cpu: '1', 'hugepages-2Mi': '3Mi' } } }, 'overhead.limits[hugepages-2Mi]'],
    ['huge pages without cpu or memory', { overhead: { podFixed: { 'hugepages-2Mi': '4Mi' } } }, 'overhead'],
    ['node selector key invalid', { scheduling: { nodeSelector: { '-bad': 'x' } } }, 'scheduling.nodeSelector'],
    ['node selector key with two slashes', { scheduling: { nodeSelector: { 'a/b/c': 'x' } } }, 'scheduling.nodeSelector'],
    ['node selector value invalid', { scheduling: { nodeSelector: { ok: 'not valid!' } } }, 'scheduling.nodeSelector'],
    ['node selector value longer than 63', { scheduling: { nodeSelector: { ok: 'v'.repeat(64) } } }, 'scheduling.nodeSelector'],
    ['toleration key invalid', tol({ key: 'bad key', operator: 'Exists' }), 'scheduling.tolerations[0].key'],
    ['empty key needs Exists (Equal)', tol({ operator: 'Equal', value: 'v' }), 'scheduling.tolerations[0].operator'],
    ['empty key needs Exists (default operator)', tol({ effect: 'NoSchedule' }), 'scheduling.tolerations[0].operator'],
    ['tolerationSeconds needs NoExecute', tol({ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 10 }), 'scheduling.tolerations[0].effect'],
    ['tolerationSeconds with all effects', tol({ key: 'k', operator: 'Exists', tolerationSeconds: 10 }), 'scheduling.tolerations[0].effect'],
    ['Equal value not a label value', tol({ key: 'k', operator: 'Equal', value: 'a b' }), 'scheduling.tolerations[0].operator'],
    ['Exists with a value', tol({ key: 'k', operator: 'Exists', value: 'v' }), 'scheduling.tolerations[0].operator'],
    ['unknown operator', tol({ key: 'k', operator: 'In', value: 'v' }), 'scheduling.tolerations[0].operator'],
    ['Lt without the gate', tol({ key: 'k', operator: 'Lt', value: '5' }), 'scheduling.tolerations[0].operator'],
    ['Gt without the gate', tol({ key: 'k', operator: 'Gt', value: '5' }), 'scheduling.tolerations[0].operator'],
    ['unknown effect', tol({ key: 'k', operator: 'Exists', effect: 'Sometimes' }), 'scheduling.tolerations[0].effect'],
    [
      'duplicate toleration',
      tol([
        { key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 1 },
        { key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 2 },
      ]),
      'scheduling.tolerations[1]',
    ],
  ];
  for (const [what, extra, field] of cases) {
    test(what, async () => {
      const name = `bad-${what.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-$/, '')}`;
      const body = runtimeClass(name, extra);
      if (extra.handler === undefined && 'handler' in extra) delete body.handler;
      await rejectRuntimeClass(server, body, field);
    });
  }

  test('metadata.name must be a DNS subdomain', async () => {
    const r = await api(server, 'POST', RC, runtimeClass('Bad_Name'));
    assert.equal(r.status, 422);
    assert.equal(r.body.details.causes[0].field, 'metadata.name');
    assert.equal((await api(server, 'GET', `${RC}/Bad_Name`)).status, 404);
  });

  test('an overhead that is no quantity is a 400 decoding error, as Kubernetes cannot decode it', async () => {
    const r = await api(server, 'POST', RC, runtimeClass('not-a-quantity', { overhead: { podFixed: { cpu: 'lots' } } }));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.reason, 'BadRequest');
    assert.match(r.body.message, /cannot be handled as a RuntimeClass: quantities must match the regular expression/);
    assert.equal((await api(server, 'GET', `${RC}/not-a-quantity`)).status, 404);
  });

  test('a field of the wrong type is a 400 decoding error', async () => {
    const r = await api(server, 'POST', RC, runtimeClass('wrong-type', { handler: 5 }));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal((await api(server, 'GET', `${RC}/wrong-type`)).status, 404);
  });

  test('messages and reasons as Kubernetes words them', async () => {
    const causes = await rejectRuntimeClass(server, runtimeClass('bad-messages', { handler: 'Runc', ...tol({ key: 'k', operator: 'Gt', value: '1' }) }), 'handler');
    const byField = new Map(causes.map((c) => [c.field, c]));
    assert.match(byField.get('handler')!.message, /^Invalid value: "Runc": a lowercase RFC 1123 label must consist of/);
    const op = byField.get('scheduling.tolerations[0].operator')!;
    assert.equal(op.reason, 'FieldValueNotSupported');
    assert.equal(op.message, 'Unsupported value: "Gt": supported values: "Equal", "Exists"');
    const neg = await rejectRuntimeClass(server, runtimeClass('bad-negative', { overhead: { podFixed: { cpu: '-1' } } }), 'overhead.limits[cpu]');
    assert.equal(neg[0]!.message, 'Invalid value: "-1": must be greater than or equal to 0');
    const dup = await rejectRuntimeClass(server, runtimeClass('bad-dup', tol([{ operator: 'Exists' }, { operator: 'Exists' }])), 'scheduling.tolerations[1]');
    assert.equal(dup[0]!.reason, 'FieldValueDuplicate');
  });

  test('handler is immutable; an invalid update leaves the object as it was', async () => {
    assert.equal((await api(server, 'POST', RC, runtimeClass('immutable'))).status, 201);
    const path = `${RC}/immutable`;
    await rejectUpdate(server, path, (o) => ({ ...o, handler: 'kata' }), 'handler');
    await rejectUpdate(server, path, (o) => ({ ...o, ...tol({ key: 'k', operator: 'Exists', value: 'v' }) }), 'scheduling.tolerations[0].operator');
    await rejectUpdate(server, path, (o) => ({ ...o, overhead: { podFixed: { memory: '-1Mi' } } }), 'overhead.limits[memory]');
    await rejectUpdate(server, path, (o) => ({ ...o, scheduling: { nodeSelector: { 'bad key': 'v' } } }), 'scheduling.nodeSelector');
    const { handler: _h, ...rest } = (await api(server, 'GET', path)).body as Body;
    await expectInvalid(server, 'PUT', path, rest, 'handler');
  });
});

describe('RuntimeClass tolerations with TaintTolerationComparisonOperators', () => {
  test('Lt and Gt are accepted with a canonical 64-bit integer value', async () => {
    const r = await api(gated, 'POST', RC, runtimeClass('numeric', { scheduling: { tolerations: [{ key: 'sla', operator: 'Gt', value: '950', effect: 'NoSchedule' }, { key: 'cost', operator: 'Lt', value: '-5' }, { key: 'z', operator: 'Gt', value: '0' }] } }));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.scheduling.tolerations[0].operator, 'Gt');
  });

  for (const value of ['abc', '0100', '+5', '-0', '', '9.5', '9223372036854775808', '-9223372036854775809']) {
    test(`a value of ${JSON.stringify(value)} is refused on .value`, async () => {
      const name = `numeric-bad-${Buffer.from(value).toString('hex') || 'empty'}`;
      const causes = await rejectRuntimeClass(gated, runtimeClass(name, { scheduling: { tolerations: [{ key: 'sla', operator: 'Lt', value }] } }), 'scheduling.tolerations[0].value');
      assert.equal(causes[0]!.reason, 'FieldValueInvalid');
    });
  }

  test('the gate adds Lt and Gt to the supported operators', async () => {
    const causes = await rejectRuntimeClass(gated, runtimeClass('numeric-unknown-op', { scheduling: { tolerations: [{ key: 'k', operator: 'Ge', value: '1' }] } }), 'scheduling.tolerations[0].operator');
    assert.equal(causes[0]!.message, 'Unsupported value: "Ge": supported values: "Equal", "Exists", "Lt", "Gt"');
  });

  test('the other toleration rules hold with the gate on', async () => {
    await rejectRuntimeClass(gated, runtimeClass('numeric-empty-key', { scheduling: { tolerations: [{ operator: 'Gt', value: '1' }] } }), 'scheduling.tolerations[0].operator');
    await rejectRuntimeClass(gated, runtimeClass('numeric-seconds', { scheduling: { tolerations: [{ key: 'k', operator: 'Gt', value: '1', tolerationSeconds: 3 }] } }), 'scheduling.tolerations[0].effect');
  });

  test('numbers are compared as numbers, never as strings', () => {
    assert.equal(toleratesNumerically('Gt', '950', '999'), true);
    assert.equal(toleratesNumerically('Gt', '950', '1000'), true); // "1000" < "950" as strings
    assert.equal(toleratesNumerically('Gt', '950', '950'), false);
    assert.equal(toleratesNumerically('Lt', '10', '9'), true);
    assert.equal(toleratesNumerically('Lt', '10', '-11'), true);
    assert.equal(toleratesNumerically('Lt', '10', '10'), false);
    assert.equal(toleratesNumerically('Gt', '1', 'high'), false);
    assert.equal(toleratesNumerically('Gt', '1', '05'), false);
    assert.deepEqual(decimalInt64('9223372036854775807'), []);
    assert.deepEqual(decimalInt64('-9223372036854775808'), []);
  });

  test('quantities are read exactly', () => {
    assert.deepEqual(parseQuantity('1.5Gi'), { num: 15n * (1n << 30n), den: 10n });
    assert.deepEqual(parseQuantity('250m'), { num: 250n, den: 1000n });
    assert.deepEqual(parseQuantity('1e3'), { num: 1000n, den: 1n });
    assert.deepEqual(parseQuantity('2E'), { num: 2n * 10n ** 18n, den: 1n });
    assert.deepEqual(parseQuantity(-3), { num: -3n, den: 1n });
    assert.equal(parseQuantity('1.5.5'), undefined);
  });
});

// ==== LeaseCandidate ====

const LC_GV = '/apis/coordination.orch.io/v1beta1';
const lcs = (ns: string) => `${LC_GV}/namespaces/${ns}/leasecandidates`;
const candidate = (name: string, spec: Body = {}, meta: Body = {}): Body => ({
  apiVersion: 'coordination.orch.io/v1beta1',
  kind: 'LeaseCandidate',
  metadata: { name, ...meta },
  spec: { leaseName: 'kube-scheduler', binaryVersion: '1.33.0', emulationVersion: '1.32.0', strategy: 'OldestEmulationVersion', ...spec },
});

async function rejectCandidate(body: Body, field: string): Promise<Cause[]> {
  const causes = await expectInvalid(server, 'POST', lcs(NS), body, field);
  const name = (body.metadata as { name: string }).name;
  const got = await api(server, 'GET', `${lcs(NS)}/${encodeURIComponent(name)}`);
  assert.notEqual(got.status, 200, 'nothing stored');
  return causes;
}

describe('LeaseCandidate is off by default', () => {
  test('not served without --runtime-config', async () => {
    assert.equal((await api(plain, 'GET', lcs('default'))).status, 404);
    assert.equal((await api(plain, 'POST', lcs('default'), candidate('x'))).status, 404);
    assert.equal((await api(plain, 'GET', `${LC_GV}/leasecandidates`)).status, 404);
    assert.equal((await api(plain, 'GET', LC_GV)).status, 404);
    const group = (await api(plain, 'GET', '/apis/coordination.orch.io')).body;
    assert.deepEqual(
      group.versions.map((v: { version: string }) => v.version),
      ['v1'],
    );
    // Leases (v1) are unaffected.
    assert.equal((await api(plain, 'GET', '/apis/coordination.orch.io/v1/namespaces/default/leases')).status, 200);
  });

  test('served and discoverable with coordination.orch.io/v1beta1=true', async () => {
    const gv = await api(server, 'GET', LC_GV);
    assert.equal(gv.status, 200, gv.text);
    const res = gv.body.resources.find((r: { name: string }) => r.name === 'leasecandidates');
    assert.ok(res, gv.text);
    assert.equal(res.namespaced, true);
    assert.equal(res.kind, 'LeaseCandidate');
    const group = (await api(server, 'GET', '/apis/coordination.orch.io')).body;
    assert.ok(group.versions.some((v: { version: string }) => v.version === 'v1beta1'));
  });
});

describe('LeaseCandidate', () => {
  test('create, get, list, renew by update, delete; no generation', async () => {
    const c = await api(server, 'POST', lcs(NS), candidate('sched-1', { renewTime: nowMicroTimestamp() }));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.metadata.namespace, NS);
    assert.equal(c.body.metadata.generation, undefined);
    const g = await api(server, 'GET', `${lcs(NS)}/sched-1`);
    assert.deepEqual(g.body, c.body);
    const l = await api(server, 'GET', lcs(NS));
    assert.equal(l.body.kind, 'LeaseCandidateList');
    assert.ok(l.body.items.some((i: KObject) => i.metadata.name === 'sched-1'));
    const renewed = nowMicroTimestamp(Date.now() + 1000);
    const u = await api(server, 'PUT', `${lcs(NS)}/sched-1`, { ...g.body, spec: { ...g.body.spec, renewTime: renewed, binaryVersion: '1.34.0' } });
    assert.equal(u.status, 200, u.text);
    assert.equal(u.body.spec.renewTime, renewed);
    assert.equal(u.body.spec.binaryVersion, '1.34.0');
    assert.equal(u.body.metadata.generation, undefined);
    const d = await api(server, 'DELETE', `${lcs(NS)}/sched-1`);
    assert.equal(d.status, 200);
    assert.equal((await api(server, 'GET', `${lcs(NS)}/sched-1`)).status, 404);
  });

  test('names are config keys: upper case and underscores allowed', async () => {
    const r = await api(server, 'POST', lcs(NS), candidate('Kube_Scheduler.Node-1'));
    assert.equal(r.status, 201, r.text);
    assert.equal((await api(server, 'GET', `${lcs(NS)}/Kube_Scheduler.Node-1`)).status, 200);
  });

  test('PUT of a missing candidate creates it; ping then renew by merge patch', async () => {
    const r = await api(server, 'PUT', `${lcs(NS)}/put-made`, candidate('put-made'));
    assert.equal(r.status, 201, r.text);
    const ping = nowMicroTimestamp();
    const p = await api(server, 'PATCH', `${lcs(NS)}/put-made`, { spec: { pingTime: ping } }, MERGE);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.spec.pingTime, ping);
    const renew = await api(server, 'PATCH', `${lcs(NS)}/put-made`, [{ op: 'add', path: '/spec/renewTime', value: ping }], JSON_PATCH);
    assert.equal(renew.status, 200, renew.text);
    assert.equal(renew.body.spec.renewTime, ping);
  });

  test('list across namespaces and by spec.leaseName', async () => {
    assert.equal((await api(server, 'POST', lcs(NS), candidate('x-a', { leaseName: 'controller-manager' }))).status, 201);
    assert.equal((await api(server, 'POST', lcs(NS2), candidate('x-b', { leaseName: 'controller-manager' }))).status, 201);
    assert.equal((await api(server, 'POST', lcs(NS2), candidate('x-c', { leaseName: 'other' }))).status, 201);
    const all = await api(server, 'GET', `${LC_GV}/leasecandidates`);
    assert.equal(all.status, 200, all.text);
    const names = all.body.items.map((i: KObject) => `${i.metadata.namespace}/${i.metadata.name}`);
    for (const n of [`${NS}/x-a`, `${NS2}/x-b`, `${NS2}/x-c`]) assert.ok(names.includes(n), n);
    const byLease = await api(server, 'GET', `${LC_GV}/leasecandidates?fieldSelector=spec.leaseName%3Dcontroller-manager`);
    assert.equal(byLease.status, 200, byLease.text);
    assert.deepEqual(byLease.body.items.map((i: KObject) => i.metadata.name).sort(), ['x-a', 'x-b']);
    const unknown = await api(server, 'GET', `${LC_GV}/leasecandidates?fieldSelector=spec.binaryVersion%3D1`);
    assert.equal(unknown.status, 400);
  });

  test('watch across namespaces: ADDED, MODIFIED on renewal, DELETED', async () => {
    const rv = (await api(server, 'GET', `${LC_GV}/leasecandidates`)).body.metadata.resourceVersion;
    const w = readWatch(`${server.url}${LC_GV}/leasecandidates?watch=1&resourceVersion=${rv}`);
    try {
      assert.equal((await api(server, 'POST', lcs(NS2), candidate('watched'))).status, 201);
      const renewTime = nowMicroTimestamp();
      assert.equal((await api(server, 'PATCH', `${lcs(NS2)}/watched`, { spec: { renewTime } }, MERGE)).status, 200);
      assert.equal((await api(server, 'DELETE', `${lcs(NS2)}/watched`)).status, 200);
      const events = await w.next(3);
      assert.deepEqual(
        events.map((e) => `${e.type}:${e.object.metadata.namespace}/${e.object.metadata.name}`),
        [`ADDED:${NS2}/watched`, `MODIFIED:${NS2}/watched`, `DELETED:${NS2}/watched`],
      );
      assert.equal(events[1]!.object.spec.renewTime, renewTime);
    } finally {
      w.close();
    }
  });

  test('Table: Name, LeaseName, BinaryVersion, EmulationVersion, Age', async () => {
    assert.equal((await api(server, 'POST', lcs(NS), candidate('tabled', { binaryVersion: '1.34.1', emulationVersion: '1.33.0' }))).status, 201);
    const t = await api(server, 'GET', `${lcs(NS)}/tabled`, undefined, { Accept: TABLE });
    assert.equal(t.status, 200, t.text);
    assert.deepEqual(
      t.body.columnDefinitions.map((c: { name: string }) => c.name),
      ['Name', 'LeaseName', 'BinaryVersion', 'EmulationVersion', 'Age'],
    );
    const [name, leaseName, binary, emulation, age] = t.body.rows[0].cells;
    assert.deepEqual([name, leaseName, binary, emulation], ['tabled', 'kube-scheduler', '1.34.1', '1.33.0']);
    assert.match(age, /^\d+s$/);
  });

  test('valid edge cases are accepted', async () => {
    const ok = async (name: string, spec: Body) => {
      const r = await api(server, 'POST', lcs(NS), candidate(name, spec));
      assert.equal(r.status, 201, `${name}: ${r.text}`);
    };
    await ok('ok-equal-versions', { binaryVersion: '1.33.0', emulationVersion: '1.33.0' });
    await ok('ok-prerelease-emulation', { binaryVersion: '1.33.0', emulationVersion: '1.33.0-beta.1' });
    await ok('ok-build-metadata', { binaryVersion: '1.33.0+abc.1', emulationVersion: '1.33.0+zzz' });
    await ok('ok-custom-strategy', { strategy: 'example.com/newest', emulationVersion: undefined });
    await ok('ok-numeric-compare', { binaryVersion: '1.10.0', emulationVersion: '1.9.0' });
    await ok('ok-prerelease-numbers', { binaryVersion: '1.33.0-alpha.10', emulationVersion: '1.33.0-alpha.9' });
  });
});

describe('LeaseCandidate validation: 422 Invalid on the field, nothing stored', () => {
  const cases: [string, Body, string][] = [
    ['leaseName missing', { leaseName: undefined }, 'spec.leaseName'],
    ['leaseName empty', { leaseName: '' }, 'spec.leaseName'],
    ['binaryVersion missing', { binaryVersion: undefined }, 'spec.binaryVersion'],
    ['binaryVersion empty', { binaryVersion: '' }, 'spec.binaryVersion'],
    ['binaryVersion with a v', { binaryVersion: 'v1.33.0' }, 'spec.binaryVersion'],
    ['binaryVersion without a patch', { binaryVersion: '1.33' }, 'spec.binaryVersion'],
    ['binaryVersion with a leading zero', { binaryVersion: '1.033.0' }, 'spec.binaryVersion'],
    ['binaryVersion with four parts', { binaryVersion: '1.33.0.1' }, 'spec.binaryVersion'],
    ['binaryVersion with an empty pre-release part', { binaryVersion: '1.33.0-alpha..1' }, 'spec.binaryVersion'],
    ['emulationVersion with a v', { emulationVersion: 'v1.32.0' }, 'spec.emulationVersion'],
    ['emulationVersion not a version', { emulationVersion: 'latest' }, 'spec.emulationVersion'],
    ['emulationVersion above binaryVersion', { binaryVersion: '1.32.0', emulationVersion: '1.33.0' }, 'spec.binaryVersion'],
    ['a release emulated by its own pre-release', { binaryVersion: '1.33.0-rc.1', emulationVersion: '1.33.0' }, 'spec.binaryVersion'],
    ['strategy missing', { strategy: undefined }, 'spec.strategy'],
    ['strategy empty', { strategy: '' }, 'spec.strategy'],
    ['strategy unknown', { strategy: 'NewestEmulationVersion' }, 'spec.strategy.strategy'],
    ['strategy with two slashes', { strategy: 'a/b/c' }, 'spec.strategy.strategy'],
    ['strategy with a bad domain', { strategy: 'Example.COM/x' }, 'spec.strategy.strategy'],
    ['OldestEmulationVersion without emulationVersion', { emulationVersion: undefined }, 'spec.emulationVersion'],
    ['OldestEmulationVersion with emulationVersion 0.0.0', { emulationVersion: '0.0.0', binaryVersion: '1.0.0' }, 'spec.emulationVersion'],
  ];
  for (const [what, spec, field] of cases) {
    test(what, async () => {
      const name = `bad-${what.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-$/, '')}`;
      await rejectCandidate(candidate(name, spec), field);
    });
  }

  test('no spec at all: every required field named', async () => {
    const causes = await rejectCandidate({ apiVersion: 'coordination.orch.io/v1beta1', kind: 'LeaseCandidate', metadata: { name: 'bad-no-spec' } }, 'spec.leaseName');
    assert.deepEqual(causes.map((c) => c.field).sort(), ['spec.binaryVersion', 'spec.leaseName', 'spec.strategy']);
    assert.ok(causes.every((c) => c.reason === 'FieldValueRequired'));
  });

  test('messages as Kubernetes words them', async () => {
    const causes = await rejectCandidate(candidate('bad-words', { binaryVersion: 'v1', emulationVersion: '1.2.3', strategy: 'Other' }), 'spec.binaryVersion');
    const messages = causes.map((c) => `${c.field}: ${c.message}`);
    assert.ok(messages.includes('spec.binaryVersion: Invalid value: "v1": must be a valid semantic version'), messages.join('\n'));
    // An unparsable binaryVersion counts as 0.0.0, below the emulation version.
    assert.ok(messages.includes('spec.binaryVersion: Invalid value: "v1": must be greater than or equal to `emulationVersion`'), messages.join('\n'));
    assert.ok(messages.includes('spec.strategy.strategy: Unsupported value: "Other": supported values: "OldestEmulationVersion"'), messages.join('\n'));
    const missing = await rejectCandidate(candidate('bad-words-2', { emulationVersion: undefined }), 'spec.emulationVersion');
    assert.equal(missing[0]!.message, "Required value: must be specified when `strategy` is 'OldestEmulationVersion'");
  });

  for (const [name, field] of [
    ['bad name', 'metadata.name'],
    ['..hidden', 'metadata.name'],
    ['a'.repeat(254), 'metadata.name'],
  ] as const) {
    test(`metadata.name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…(${name.length})` : name)} is not a config key`, async () => {
      await rejectCandidate(candidate(name), field);
    });
  }

  test('a renewTime that is not a time is a 400 decoding error', async () => {
    const r = await api(server, 'POST', lcs(NS), candidate('bad-time', { renewTime: 'yesterday' }));
    assert.equal(r.status, 400, r.text);
    assert.equal((await api(server, 'GET', `${lcs(NS)}/bad-time`)).status, 404);
  });

  test('leaseName is immutable; an invalid update leaves the object as it was', async () => {
    assert.equal((await api(server, 'POST', lcs(NS), candidate('immutable'))).status, 201);
    const path = `${lcs(NS)}/immutable`;
    const spec = (o: Body) => o.spec as Body;
    await rejectUpdate(server, path, (o) => ({ ...o, spec: { ...spec(o), leaseName: 'another' } }), 'spec.leaseName');
    await rejectUpdate(server, path, (o) => ({ ...o, spec: { ...spec(o), binaryVersion: '1.0.0' } }), 'spec.binaryVersion');
    await rejectUpdate(server, path, (o) => ({ ...o, spec: { ...spec(o), strategy: '' } }), 'spec.strategy');
    await rejectUpdate(server, path, (o) => ({ ...o, spec: { ...spec(o), emulationVersion: 'x' } }), 'spec.emulationVersion');
    await rejectUpdate(server, path, (o) => ({ ...o, spec: { leaseName: spec(o).leaseName, strategy: 'OldestEmulationVersion' } }), 'spec.binaryVersion');
    const before = await api(server, 'GET', path);
    await expectInvalid(server, 'PATCH', path, { spec: { leaseName: 'moved' } }, 'spec.leaseName', MERGE);
    await expectInvalid(server, 'PATCH', path, { spec: { leaseName: null } }, 'spec.leaseName', MERGE);
    assert.deepEqual((await api(server, 'GET', path)).body, before.body);
  });

  test('semantic version parsing and order', () => {
    const v = (s: string) => parseSemVer(s)!;
    assert.equal(parseSemVer('1.2'), undefined);
    assert.equal(parseSemVer('1.2.3-01'), undefined);
    assert.equal(parseSemVer('18446744073709551616.0.0'), undefined);
    assert.ok(parseSemVer('18446744073709551615.0.0'));
    const ordered = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.10.0', '2.0.0'];
    for (let i = 1; i < ordered.length; i++) {
      assert.equal(compareSemVer(v(ordered[i - 1]!), v(ordered[i]!)), -1, `${ordered[i - 1]} < ${ordered[i]}`);
      assert.equal(compareSemVer(v(ordered[i]!), v(ordered[i - 1]!)), 1);
    }
    assert.equal(compareSemVer(v('1.0.0+a'), v('1.0.0+b')), 0);
  });
});

// ==== LeaseCandidate garbage collection ====

describe('stale LeaseCandidates', () => {
  const at = (ms: number) => nowMicroTimestamp(ms);
  const obj = (renewTime: string | undefined, created: string): KObject => ({ metadata: { name: 'c', creationTimestamp: created }, spec: renewTime ? { renewTime } : {} });

  test("Kubernetes' threshold and period: 30 minutes", () => {
    assert.equal(LEASE_CANDIDATE_MAX_AGE_MS, 30 * 60_000);
    assert.equal(LEASE_CANDIDATE_GC_INTERVAL_MS, 30 * 60_000);
  });

  test('stale once renewTime (or creation, if never renewed) is older than the threshold', () => {
    const now = Date.parse('2030-01-01T12:00:00Z');
    const created = '2030-01-01T00:00:00Z';
    assert.equal(lastRenewal(obj(at(now - 5000), created)), now - 5000);
    assert.equal(lastRenewal(obj(undefined, created)), Date.parse(created));
    assert.equal(isStaleLeaseCandidate(obj(at(now - 31 * 60_000), created), now), true);
    assert.equal(isStaleLeaseCandidate(obj(at(now - 29 * 60_000), created), now), false);
    assert.equal(isStaleLeaseCandidate(obj(at(now - 30 * 60_000), created), now), false, 'exactly at the threshold is not yet stale');
    assert.equal(isStaleLeaseCandidate(obj(undefined, created), now), true, 'created 12 h ago, never renewed');
    assert.equal(isStaleLeaseCandidate(obj(undefined, '2030-01-01T11:59:00Z'), now), false, 'created a minute ago, never renewed');
    assert.equal(isStaleLeaseCandidate(obj(at(now - 1000), created), now, 500), true, 'a custom threshold');
  });

  test('the collector runs only where LeaseCandidates are served', () => {
    const ctx: ControllerContext = { stores: new Map(), naming: namingProfile('orch'), featureGates: parseFeatureGates(), log: () => {} };
    assert.equal(leaseCandidateGc(ctx), undefined);
    assert.equal(leaseCandidateGcWith({ maxAgeMs: 1, intervalMs: 1 })(ctx), undefined);
  });

  describe('against a store, with short thresholds', () => {
    const naming = namingProfile('orch');
    const allowAll: Admission = { admitCreate: async () => {}, admitUpdate: async () => {}, admitDelete: async () => {} };
    let backend: Storage | undefined;
    let cache: WatchCache | undefined;
    after(async () => {
      await cache?.close();
      await backend?.close();
    });

    /** A LeaseCandidate store of its own; `beforeListReturns` runs between a list's read and its answer. */
    async function openStore(beforeListReturns?: () => Promise<void>): Promise<RegistryStore> {
      backend ??= await openLmdbStorage({ path: tempDir('lc-gc') });
      const def = leaseCandidateDefinition(naming, parseFeatureGates());
      cache ??= await openWatchCache(backend, { prefix: `/registry/${def.group}/${def.resource}/` });
      return new (class extends RegistryStore {
        override async list(namespace: string | undefined, opts: ListOptions) {
          const listed = await super.list(namespace, opts);
          await beforeListReturns?.();
          return listed;
        }
      })(def, cache, naming, allowAll);
    }
    const contextFor = (store: RegistryStore): ControllerContext => ({
      stores: new Map([[storeKey(store.def.group, store.def.resource), store]]),
      naming,
      featureGates: parseFeatureGates(),
      log: (m) => assert.fail(`unexpected controller log: ${m}`),
    });
    const create = (store: RegistryStore, name: string, renewTime?: string) =>
      store.create('gc', { apiVersion: 'coordination.orch.io/v1beta1', kind: 'LeaseCandidate', metadata: { name }, spec: { leaseName: 'l', binaryVersion: '1.0.0', strategy: 'example.com/s', ...(renewTime ? { renewTime } : {}) } }, { dryRun: false });
    const exists = async (store: RegistryStore, name: string) => {
      try {
        await store.get('gc', name);
        return true;
      } catch {
        return false;
      }
    };
    const renew = (store: RegistryStore, name: string) =>
      store.guaranteedUpdate('gc', name, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Body), renewTime: nowMicroTimestamp() } }), { dryRun: false });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    test('a pass deletes the stale and keeps the renewed', async () => {
      const store = await openStore();
      await create(store, 'old', nowMicroTimestamp(Date.now() - 3_600_000));
      await create(store, 'fresh', nowMicroTimestamp());
      const gc = new LeaseCandidateGarbageCollector(store, () => {}, { maxAgeMs: 60_000, intervalMs: 60_000 });
      assert.equal(await gc.collect(), 1);
      assert.equal(await exists(store, 'old'), false);
      assert.equal(await exists(store, 'fresh'), true);
      assert.equal(await gc.collect(), 0);
      await store.delete('gc', 'fresh', { dryRun: false });
    });

    test('periodic: unrenewed candidates go, renewed ones stay; stop() ends it', async () => {
      const store = await openStore();
      const gc = leaseCandidateGcWith({ maxAgeMs: 400, intervalMs: 50 })(contextFor(store));
      assert.ok(gc instanceof LeaseCandidateGarbageCollector);
      await create(store, 'quiet', nowMicroTimestamp());
      await create(store, 'alive', nowMicroTimestamp());
      await create(store, 'never-renewed');
      await gc.start();
      assert.equal(await exists(store, 'quiet'), true, 'young enough at the first pass');
      const deadline = Date.now() + 5000;
      while ((await exists(store, 'quiet')) && Date.now() < deadline) {
        await renew(store, 'alive');
        await sleep(50);
      }
      assert.equal(await exists(store, 'quiet'), false, 'removed once older than the threshold');
      assert.equal(await exists(store, 'never-renewed'), false, 'never renewed: aged from creation');
      assert.equal(await exists(store, 'alive'), true, 'kept alive by renewals');
      gc.stop();
      await sleep(600);
      assert.equal(await exists(store, 'alive'), true, 'no pass after stop()');
      await store.delete('gc', 'alive', { dryRun: false });
    });

    test('a renewal between the decision and the delete wins', async () => {
      let racing = false;
      const store: RegistryStore = await openStore(async () => {
        if (racing) await renew(store, 'raced');
      });
      await create(store, 'raced', nowMicroTimestamp(Date.now() - 3_600_000));
      const gc = new LeaseCandidateGarbageCollector(store, (m) => assert.fail(m), { maxAgeMs: 60_000 });
      racing = true;
      assert.equal(await gc.collect(), 0);
      racing = false;
      assert.equal(await exists(store, 'raced'), true, 'the renewed candidate is kept');
      assert.equal(await gc.collect(), 0, 'and is no longer stale');
      await store.delete('gc', 'raced', { dryRun: false });
    });
  });

  test('end to end: a restarted server collects candidates that went stale', async () => {
    const dataDir = tempDir('lc-restart');
    const first = await testServer({ runtimeConfig: RUNTIME_CONFIG, dataDir });
    const path = lcs('default');
    assert.equal((await api(first, 'POST', path, candidate('gone-away', { renewTime: nowMicroTimestamp(Date.now() - 2 * 3_600_000) }))).status, 201);
    assert.equal((await api(first, 'POST', path, candidate('still-here', { renewTime: nowMicroTimestamp() }))).status, 201);
    assert.equal((await api(first, 'POST', path, candidate('just-born'))).status, 201);
    await first.close();
    // The collector's first pass runs while the server starts.
    const second = await testServer({ runtimeConfig: RUNTIME_CONFIG, dataDir });
    assert.equal((await api(second, 'GET', `${path}/gone-away`)).status, 404);
    assert.equal((await api(second, 'GET', `${path}/still-here`)).status, 200);
    assert.equal((await api(second, 'GET', `${path}/just-born`)).status, 200);
  });
});
