// Strategic merge patch (application/strategic-merge-patch+json) over real HTTP, against what
// Kubernetes' k8s.io/apimachinery/pkg/util/strategicpatch produces for the same stored object and
// patch, and how kube-apiserver answers when the merge fails.
//
// Each result is written out in full. Where an upstream case covers the behaviour, its description
// in strategicpatch's patch_test.go is cited ("upstream: …"); the built-in kinds' markers stand for
// the test struct's tags (mergingList: merge by name, mergingIntList: merge, nonMergingList: none).
//
// Failures: malformed `$deleteFromPrimitiveList`/`$retainKeys`/`$setElementOrder` keys are 400
// BadRequest, as kube-apiserver's patch handler (interpretStrategicMergePatchError) reports them.
// Other merge errors kube-apiserver answers with a 500 (the error unconverted, or a panic of its
// merge code); the patch is what is wrong and bad input is never a 500 here, so they are 400
// BadRequest with the same text. In every case nothing is stored.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { applyStrategicMergePatch } from '../../src/machinery/strategic-merge.ts';
import { handlePatch, type HandlerEnv, type ResourceTarget } from '../../src/endpoints/handlers.ts';
import { StatusError } from '../../src/machinery/status.ts';
import { namespaceDefinition } from '../../src/registry/kinds/namespace.ts';
import { namingProfile } from '../../src/naming.ts';
import type { RequestContext } from '../../src/request/context.ts';

const server = await testServer();
const NS = 'smp';
const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };
const LEASES = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
const NODES = '/api/v1/nodes';
const EVENTS = `/apis/events.orch.io/v1/namespaces/${NS}/events`;
const RUNTIME_CLASSES = '/apis/node.orch.io/v1/runtimeclasses';

type Json = Record<string, any>;
type Reply = Awaited<ReturnType<typeof api>>;

const smp = (path: string, patch: unknown): Promise<Reply> => api(server, 'PATCH', path, patch, SMP);

async function create(path: string, body: Json): Promise<Json> {
  const r = await api(server, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function get(path: string): Promise<Json> {
  const r = await api(server, 'GET', path);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** A successful patch: 200 and the object as the response shows it. */
function patched(r: Reply): Json {
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** A failed patch: the Status kube-apiserver answers (no reason: the field is absent). */
function assertStatus(r: Reply, code: number, reason: string | undefined, message: string): void {
  assert.equal(r.status, code, r.text);
  assert.equal(r.body?.kind, 'Status', r.text);
  assert.equal(r.body.status, 'Failure');
  assert.equal(r.body.code, code);
  assert.equal(r.body.reason, reason);
  assert.equal(r.body.message, message);
}

/** The stored object is still exactly `before` (same resourceVersion: nothing was written). */
async function unchanged(path: string, before: Json): Promise<void> {
  assert.deepEqual(await get(path), before);
}

const lease = (name: string, metadata: Json = {}, spec: Json = { holderIdentity: 'a' }): Json => ({
  apiVersion: 'coordination.orch.io/v1',
  kind: 'Lease',
  metadata: { name, ...metadata },
  spec,
});
const node = (name: string, extra: Json = {}): Json => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, ...extra });

assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

describe('lists without a merge strategy are replaced whole (Node spec.taints)', () => {
  const path = `${NODES}/taints`;
  const taints = [
    { key: 'a', effect: 'NoSchedule' },
    { key: 'b', value: 'x', effect: 'NoExecute' },
  ];

  test('the patch list replaces the stored one', async () => {
    await create(NODES, node('taints', { spec: { taints } }));
    // upstream: "replace list of scalars"; taints have no patchStrategy (listType=atomic only).
    const out = patched(await smp(path, { spec: { taints: [{ key: 'c', effect: 'PreferNoSchedule' }] } }));
    assert.deepEqual(out.spec, { taints: [{ key: 'c', effect: 'PreferNoSchedule' }] });
  });

  test('directives inside such a list are plain data: unknown fields, dropped with a warning', async () => {
    const before = await get(path);
    const r = await smp(path, { spec: { taints: [{ key: 'c', effect: 'PreferNoSchedule', $patch: 'delete' }] } });
    assert.deepEqual(patched(r).spec, { taints: [{ key: 'c', effect: 'PreferNoSchedule' }] });
    assert.match(r.headers.get('warning') ?? '', /unknown field \\"spec\.taints\[0\]\.\$patch\\"/);
    // The list is what it was: no write.
    assert.equal(r.body.metadata.resourceVersion, before.metadata.resourceVersion);
  });

  test('$deleteFromPrimitiveList on a list of objects without merge key: 400, nothing stored', async () => {
    const before = await get(path);
    const r = await smp(path, { spec: { '$deleteFromPrimitiveList/taints': [{ key: 'c', effect: 'PreferNoSchedule' }] } });
    assertStatus(r, 400, 'BadRequest', 'cannot merge lists without merge key for struct');
    await unchanged(path, before);
  });

  test('$setElementOrder on a list of objects without merge key (where Kubernetes\' merge code panics): 400, nothing stored', async () => {
    const before = await get(path);
    const r = await smp(path, { spec: { '$setElementOrder/taints': [{ key: 'c' }] } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.reason, 'BadRequest');
    assert.match(r.body.message, /^the patch could not be applied: /);
    await unchanged(path, before);
  });
});

describe('Node status.conditions merge by type (through /status)', () => {
  const path = `${NODES}/conditions`;
  const status = `${path}/status`;

  test('matching items merge, new ones come first, server-only items keep their place', async () => {
    await create(NODES, node('conditions', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }, { type: 'MemoryPressure', status: 'False' }] } }));
    // upstream: "preserve the order from the patch in a merging list 2" (patch order; a server-only
    // item goes before the next patch item it preceded) and "nested patch merge with empty list"
    // (an item new to the list goes before the server's items).
    const out = patched(await smp(status, { status: { conditions: [{ type: 'DiskPressure', status: 'False' }, { type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } }));
    assert.deepEqual(out.status.conditions, [
      { type: 'DiskPressure', status: 'False' },
      { type: 'Ready', status: 'False', reason: 'KubeletNotReady' },
      { type: 'MemoryPressure', status: 'False' },
    ]);
  });

  test('null deletes a field of a merged item', async () => {
    // upstream: "delete field from map in merging list".
    const out = patched(await smp(status, { status: { conditions: [{ type: 'Ready', reason: null }] } }));
    assert.deepEqual(out.status.conditions, [
      { type: 'DiskPressure', status: 'False' },
      { type: 'Ready', status: 'False' },
      { type: 'MemoryPressure', status: 'False' },
    ]);
  });

  test('$patch: delete with $setElementOrder', async () => {
    // upstream: "delete an item in a list and preserve order".
    const out = patched(
      await smp(status, { status: { '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }], conditions: [{ type: 'DiskPressure', $patch: 'delete' }] } }),
    );
    assert.deepEqual(out.status.conditions, [
      { type: 'MemoryPressure', status: 'False' },
      { type: 'Ready', status: 'False' },
    ]);
  });

  test('$setElementOrder naming items the patch list leaves out; an item it does not name keeps its place', async () => {
    // upstream: "set elements order in a list with server-only items 2" and "$setElementOrder
    // contains item that is not present in the list to be merged" (PIDPressure is in neither list).
    const out = patched(
      await smp(status, {
        status: {
          '$setElementOrder/conditions': [{ type: 'Ready' }, { type: 'PIDPressure' }, { type: 'NetworkUnavailable' }],
          conditions: [{ type: 'NetworkUnavailable', status: 'False' }],
        },
      }),
    );
    // MemoryPressure is server-only: it stays in front of Ready, which followed it.
    assert.deepEqual(out.status.conditions, [
      { type: 'MemoryPressure', status: 'False' },
      { type: 'Ready', status: 'False' },
      { type: 'NetworkUnavailable', status: 'False' },
    ]);
  });

  test('$patch: replace makes the list the patch list', async () => {
    // upstream: "delete all items from merging list" (a replace directive among the items).
    const out = patched(await smp(status, { status: { conditions: [{ $patch: 'replace' }, { type: 'Ready', status: 'True' }] } }));
    assert.deepEqual(out.status.conditions, [{ type: 'Ready', status: 'True' }]);
  });

  test('status.addresses merge by type too: the patch strategy counts, not listType=atomic', async () => {
    const addressed = `${NODES}/addresses`;
    await create(NODES, node('addresses', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }, { type: 'Hostname', address: 'addresses' }] } }));
    // upstream: "replace map field value in merging list".
    const out = patched(await smp(`${addressed}/status`, { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } }));
    assert.deepEqual(out.status.addresses, [
      { type: 'InternalIP', address: '10.0.0.2' },
      { type: 'Hostname', address: 'addresses' },
    ]);
  });
});

describe('Node spec.podCIDRs: a list of scalars with patch strategy merge', () => {
  const path = `${NODES}/cidrs`;

  test('$setElementOrder applies under a spec the node was created without', async () => {
    await create(NODES, node('cidrs'));
    const before = await get(path);
    // The patch list must follow the $setElementOrder order. upstream: "$setElementOrder contains
    // item that is not present in the int list to be merged" (an error: "doesn't match").
    const mismatch = await smp(path, { spec: { '$setElementOrder/podCIDRs': ['10.2.0.0/24', 'fd00:2::/64'], podCIDRs: ['fd00:2::/64', '10.2.0.0/24'] } });
    assertStatus(mismatch, 400, 'BadRequest', "the order in patch list:\n[fd00:2::/64 10.2.0.0/24]\n doesn't match $setElementOrder list:\n[10.2.0.0/24 fd00:2::/64]");
    await unchanged(path, before);
    // upstream: "add multiple items in a int list and preserve order" (items of the order list the
    // patch list does not have are left out).
    const out = patched(await smp(path, { spec: { '$setElementOrder/podCIDRs': ['10.2.0.0/24', '10.9.0.0/24', 'fd00:2::/64'], podCIDRs: ['10.2.0.0/24', 'fd00:2::/64'] } }));
    assert.deepEqual(out.spec, { podCIDR: '10.2.0.0/24', podCIDRs: ['10.2.0.0/24', 'fd00:2::/64'] });
  });

  test('an item already there merges into it: no change, no write', async () => {
    const before = await get(path);
    // upstream: "unique scalars when merging lists".
    const out = patched(await smp(path, { spec: { podCIDRs: ['fd00:2::/64'] } }));
    assert.deepEqual(out, before);
  });

  test('a new item goes first; the node then has a changed podCIDR and three CIDRs: 422, nothing stored', async () => {
    const before = await get(path);
    const r = await smp(path, { spec: { podCIDRs: ['10.3.0.0/24'] } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.reason, 'Invalid');
    // The merged list, as the validation quotes it: [10.3.0.0/24 10.2.0.0/24 fd00:2::/64].
    assert.match(r.body.message, /10\.3\.0\.0\/24.*10\.2\.0\.0\/24.*fd00:2::\/64/);
    assert.ok((r.body.details.causes as { field: string }[]).some((c) => c.field === 'spec.podCIDRs'), r.text);
    await unchanged(path, before);
  });
});

describe('metadata.finalizers: a set of scalars, patch strategy merge', () => {
  const path = `${LEASES}/fin`;

  test('union: the patch order, server-only items slotted in, new items first', async () => {
    await create(LEASES, lease('fin', { finalizers: ['example.com/a', 'example.com/b'] }));
    // upstream: "preserve the order from the patch in a merging int list" and "add an item in a list
    // of primitives and preserve order".
    const out = patched(await smp(path, { metadata: { finalizers: ['example.com/c', 'example.com/a'] } }));
    assert.deepEqual(out.metadata.finalizers, ['example.com/c', 'example.com/a', 'example.com/b']);
  });

  test('$deleteFromPrimitiveList and an addition together', async () => {
    // upstream: "add and delete items in lists of scalars".
    const out = patched(await smp(path, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a', 'example.com/zzz'], finalizers: ['example.com/d'] } }));
    assert.deepEqual(out.metadata.finalizers, ['example.com/d', 'example.com/c', 'example.com/b']);
  });

  test('$setElementOrder alone reorders', async () => {
    // upstream: "set elements order in a int list".
    const out = patched(await smp(path, { metadata: { '$setElementOrder/finalizers': ['example.com/b', 'example.com/d', 'example.com/c'] } }));
    assert.deepEqual(out.metadata.finalizers, ['example.com/b', 'example.com/d', 'example.com/c']);
  });

  test('a $deleteFromPrimitiveList value that is not a list is refused (Kubernetes ignores it) and changes nothing', async () => {
    const before = await get(path);
    const r = await smp(path, { metadata: { '$deleteFromPrimitiveList/finalizers': 'example.com/b' } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.message, 'invalid patch format of primitive list');
    assert.deepEqual(await get(path), before);
  });

  test('null removes the list', async () => {
    // upstream: "retainKeys map deletes nested merging int list" (a null list).
    const out = patched(await smp(path, { metadata: { finalizers: null } }));
    assert.equal(out.metadata.finalizers, undefined);
  });
});

describe('metadata.ownerReferences: merged by uid', () => {
  const path = `${LEASES}/owned`;
  const ref: Record<string, Json> = {};
  const uid: Record<string, string> = {};

  test('matching items merge field by field, new ones first', async () => {
    for (const n of ['a', 'b', 'c', 'd']) {
      const owner = await create(NODES, node(`owner-${n}`));
      uid[n] = owner.metadata.uid;
      ref[n] = { apiVersion: 'v1', kind: 'Node', name: `owner-${n}`, uid: uid[n] };
    }
    await create(LEASES, lease('owned', { ownerReferences: [ref.a, ref.b] }));
    // upstream: "preserve the order from the patch in a merging list 2", "add field to map in
    // merging list".
    const out = patched(await smp(path, { metadata: { ownerReferences: [ref.c, { uid: uid.a, blockOwnerDeletion: true }] } }));
    assert.deepEqual(out.metadata.ownerReferences, [ref.c, { ...ref.a, blockOwnerDeletion: true }, ref.b]);
  });

  test('$patch: delete removes the item with that uid', async () => {
    // upstream: "delete map from merging list".
    const out = patched(await smp(path, { metadata: { ownerReferences: [{ uid: uid.b, $patch: 'delete' }] } }));
    assert.deepEqual(out.metadata.ownerReferences, [ref.c, { ...ref.a, blockOwnerDeletion: true }]);
  });

  test('$setElementOrder alone reorders', async () => {
    // upstream: "set elements order in a list".
    const out = patched(await smp(path, { metadata: { '$setElementOrder/ownerReferences': [{ uid: uid.a }, { uid: uid.c }] } }));
    assert.deepEqual(out.metadata.ownerReferences, [{ ...ref.a, blockOwnerDeletion: true }, ref.c]);
  });

  test('add and delete with $setElementOrder: the stored order as the merge edited it decides', async () => {
    // upstream: "add map and delete map from merging list with conflict" — current [1, 4],
    // $setElementOrder [2, 3], list [2, 3, 1 deleted] gives [4, 2, 3]: here a=1, c=4, b=2, d=3.
    const out = patched(
      await smp(path, {
        metadata: { '$setElementOrder/ownerReferences': [{ uid: uid.b }, { uid: uid.d }], ownerReferences: [ref.b, ref.d, { uid: uid.a, $patch: 'delete' }] },
      }),
    );
    assert.deepEqual(out.metadata.ownerReferences, [ref.c, ref.b, ref.d]);
  });

  test('$patch: replace', async () => {
    // upstream: "delete all items from merging list", with an item left.
    const out = patched(await smp(path, { metadata: { ownerReferences: [{ $patch: 'replace' }, ref.a] } }));
    assert.deepEqual(out.metadata.ownerReferences, [ref.a]);
  });

  test('$retainKeys in an item clears the fields it does not list', async () => {
    patched(await smp(path, { metadata: { ownerReferences: [{ uid: uid.a, controller: true }] } }));
    // upstream: "retainKeys list of maps clears a field".
    const out = patched(await smp(path, { metadata: { ownerReferences: [{ $retainKeys: ['apiVersion', 'kind', 'name', 'uid'], uid: uid.a }] } }));
    assert.deepEqual(out.metadata.ownerReferences, [ref.a]);
  });

  test('a list the object does not have is taken from the patch, without its directive items', async () => {
    await create(LEASES, lease('fresh'));
    // upstream: "nested patch merge with empty list" (its two-way result).
    const out = patched(await smp(`${LEASES}/fresh`, { metadata: { ownerReferences: [ref.d, { uid: uid.c, $patch: 'delete' }] } }));
    assert.deepEqual(out.metadata.ownerReferences, [ref.d]);
    // So is a map: a directive map for labels the object does not have is dropped.
    const again = patched(await smp(`${LEASES}/fresh`, { metadata: { labels: { $patch: 'delete' } } }));
    assert.deepEqual(again, out);
    // Unless it is no directive at all: refused, where Kubernetes would drop it unread.
    const bogus = await smp(`${LEASES}/fresh`, { metadata: { labels: { $patch: 'bogus' } } });
    assert.equal(bogus.status, 400, bogus.text);
  });

  test('malformed items: the merge error as 400, nothing stored', async () => {
    const before = await get(path);
    const cases: [unknown, string][] = [
      // upstream: "missing merge key should error out".
      [{ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'owner-b' }] } }, 'map: map[apiVersion:v1 kind:Node name:owner-b] does not contain declared merge key: uid'],
      [{ metadata: { ownerReferences: [{ name: 'owner-a', $patch: 'delete' }] } }, 'map: map[$patch:delete name:owner-a] does not contain declared merge key: uid'],
      [{ metadata: { ownerReferences: [{ uid: uid.a, $patch: 'merge' }] } }, 'merging lists cannot yet be specified in the patch'],
      [{ metadata: { ownerReferences: [{ uid: uid.a, $patch: 'bogus' }] } }, `unknown patch type: bogus in map: map[$patch:bogus uid:${uid.a}]`],
      [{ metadata: { '$setElementOrder/ownerReferences': 'x' } }, 'expected a []interface {}, but received a string'],
      // upstream: "should check if order in $setElementOrder and patch list match".
      [
        { metadata: { '$setElementOrder/ownerReferences': [{ uid: uid.a }, { uid: uid.b }], ownerReferences: [ref.b, { uid: uid.a, blockOwnerDeletion: false }] } },
        `the order in patch list:\n[map[apiVersion:v1 kind:Node name:owner-b uid:${uid.b}] map[blockOwnerDeletion:false uid:${uid.a}]]\n doesn't match $setElementOrder list:\n[map[uid:${uid.a}] map[uid:${uid.b}]]`,
      ],
      [{ metadata: { '$setElementOrder/ownerReferences': [{ name: 'owner-a' }], ownerReferences: [ref.a] } }, 'map: map[name:owner-a] does not contain declared merge key: uid'],
    ];
    for (const [patch, message] of cases) {
      assertStatus(await smp(path, patch), 400, 'BadRequest', message);
      await unchanged(path, before);
    }
  });
});

describe('maps: metadata.labels', () => {
  const path = `${LEASES}/labels`;

  test('null deletes a key, other keys merge', async () => {
    await create(LEASES, lease('labels', { labels: { a: '1', b: '2' } }));
    // upstream: "add field and delete field from map", "delete field from nested map".
    const out = patched(await smp(path, { metadata: { labels: { a: null, c: '3', gone: null } } }));
    assert.deepEqual(out.metadata.labels, { b: '2', c: '3' });
  });

  test('$retainKeys clears the keys it does not list (any object, whatever its strategy)', async () => {
    // upstream: "retainKeys map adds a field and clear a field".
    const out = patched(await smp(path, { metadata: { labels: { $retainKeys: ['c', 'd'], d: '4' } } }));
    assert.deepEqual(out.metadata.labels, { c: '3', d: '4' });
  });

  test('$patch: replace makes the map the patch map', async () => {
    // upstream: "add key and delete all keys from map".
    const out = patched(await smp(path, { metadata: { labels: { $patch: 'replace', x: '1' } } }));
    assert.deepEqual(out.metadata.labels, { x: '1' });
  });

  test('$patch: delete empties the map', async () => {
    // upstream: "delete map from nested map" (an empty map, which the object does not show).
    const out = patched(await smp(path, { metadata: { labels: { $patch: 'delete' } } }));
    assert.equal(out.metadata.labels, undefined);
  });

  test('malformed directives: 400 for $retainKeys and for $patch; nothing stored', async () => {
    await smp(path, { metadata: { labels: { x: '1' } } });
    const before = await get(path);
    for (const patch of [{ metadata: { labels: { $retainKeys: ['x'], y: '1' } } }, { metadata: { labels: { $retainKeys: 'x' } } }]) {
      assertStatus(await smp(path, patch), 400, 'BadRequest', 'invalid patch format of retainKeys');
      await unchanged(path, before);
    }
    // An object takes replace and delete only: merge is an unknown patch type there.
    const cases: [unknown, string][] = [
      [{ metadata: { labels: { $patch: 'merge', y: '1' } } }, 'unknown patch type: merge in map: map[$patch:merge y:1]'],
      [{ metadata: { labels: { $patch: 'bogus' } } }, 'unknown patch type: bogus in map: map[$patch:bogus]'],
      [{ metadata: { labels: { $patch: 7 } } }, 'unknown patch type: %!s(int64=7) in map: map[$patch:7]'],
    ];
    for (const [patch, message] of cases) {
      assertStatus(await smp(path, patch), 400, 'BadRequest', message);
      await unchanged(path, before);
    }
  });
});

describe('objects (Lease spec) and directive keys', () => {
  const path = `${LEASES}/spec`;

  test('$retainKeys in a struct without the retainKeys strategy is honoured', async () => {
    await create(LEASES, lease('spec', {}, { holderIdentity: 'a', leaseDurationSeconds: 10 }));
    // upstream: "retainKeys map should clear defaulted field with conflict (discriminated union)".
    const out = patched(await smp(path, { spec: { $retainKeys: ['holderIdentity', 'leaseTransitions'], leaseTransitions: 1 } }));
    assert.deepEqual(out.spec, { holderIdentity: 'a', leaseTransitions: 1 });
  });

  test('$patch: replace and $patch: delete on an object', async () => {
    const replaced = patched(await smp(path, { spec: { $patch: 'replace', holderIdentity: 'b' } }));
    assert.deepEqual(replaced.spec, { holderIdentity: 'b' });
    const deleted = patched(await smp(path, { spec: { $patch: 'delete' } }));
    assert.deepEqual(deleted.spec, {});
  });

  test('malformed directive keys: 400, nothing stored', async () => {
    const before = await get(path);
    const cases: [unknown, string][] = [
      [{ metadata: { $deleteFromPrimitiveListfinalizers: ['example.com/x'] } }, 'invalid patch format of primitive list'],
      [{ metadata: { '$deleteFromPrimitiveListX/finalizers': ['example.com/x'] } }, 'invalid patch format of primitive list'],
      [{ metadata: { $setElementOrder: [] } }, 'invalid patch format of setElementOrder list'],
      [{ metadata: { '$setElementOrderX/finalizers': [] } }, 'invalid patch format of setElementOrder list'],
    ];
    for (const [patch, message] of cases) {
      assertStatus(await smp(path, patch), 400, 'BadRequest', message);
      await unchanged(path, before);
    }
  });

  test('an unknown $-key is an unknown field, not a directive: a warning, nothing changed', async () => {
    const before = await get(path);
    const r = await smp(path, { $bogus: 1 });
    assert.deepEqual(patched(r), before);
    assert.match(r.headers.get('warning') ?? '', /unknown field \\"\$bogus\\"/);
  });

  test('the patch document: null changes nothing, anything but an object is 400', async () => {
    const before = await get(path);
    assert.deepEqual(patched(await smp(path, 'null')), before);
    assertStatus(await smp(path, '[]'), 400, 'BadRequest', 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    assertStatus(await smp(path, '"x"'), 400, 'BadRequest', 'json: cannot unmarshal string into Go value of type map[string]interface {}');
    await unchanged(path, before);
  });
});

describe('fields Kubernetes marks atomic merge strategically all the same', () => {
  test('RuntimeClass: scheduling.tolerations (no patch strategy) is replaced; the atomic nodeSelector map merges', async () => {
    await create(RUNTIME_CLASSES, {
      apiVersion: 'node.orch.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'smp-rc' },
      handler: 'runc',
      scheduling: { nodeSelector: { a: '1' }, tolerations: [{ key: 'k', operator: 'Equal', value: 'v' }] },
    });
    const out = patched(await smp(`${RUNTIME_CLASSES}/smp-rc`, { scheduling: { nodeSelector: { b: '2' }, tolerations: [{ key: 'k2', operator: 'Exists' }] } }));
    assert.deepEqual(out.scheduling, { nodeSelector: { a: '1', b: '2' }, tolerations: [{ key: 'k2', operator: 'Exists' }] });
  });

  test('Event: series merges field by field; the atomic regarding merges too, then fails as immutable', async () => {
    await create(EVENTS, {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name: 'smp-ev' },
      eventTime: '2024-05-01T10:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' },
      reportingController: 'orch.io/test',
      reportingInstance: 'i-1',
      action: 'Scheduling',
      reason: 'Scheduled',
      type: 'Normal',
      regarding: { kind: 'Pod', namespace: NS, name: 'web-1', uid: 'uid-web-1', apiVersion: 'v1' },
    });
    const path = `${EVENTS}/smp-ev`;
    const out = patched(await smp(path, { series: { count: 3 } }));
    assert.deepEqual(out.series, { count: 3, lastObservedTime: '2024-05-01T10:01:00.000000Z' });
    const before = await get(path);
    const r = await smp(path, { regarding: { fieldPath: 'spec.containers{sidecar}' } });
    assert.equal(r.status, 422, r.text);
    const causes = r.body.details.causes as { field: string; message: string }[];
    // Kubernetes validates the update as a core Event, whose field is involvedObject.
    assert.deepEqual(
      causes.map((c) => c.field),
      ['involvedObject'],
    );
    // The merged reference: the stored fields and the patched one.
    assert.match(causes[0]!.message, /web-1.*spec\.containers\{sidecar\}/);
    await unchanged(path, before);
  });

  test('Namespace spec.finalizers (atomic): the main resource ignores it, /finalize takes no PATCH', async () => {
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'smp-atomic' } });
    const before = await get('/api/v1/namespaces/smp-atomic');
    const out = patched(await smp('/api/v1/namespaces/smp-atomic', { spec: { finalizers: ['example.com/x'] } }));
    assert.deepEqual(out.spec, before.spec);
    const fin = await smp('/api/v1/namespaces/smp-atomic/finalize', { spec: { finalizers: ['example.com/x'] } });
    assertStatus(fin, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  });

  test('Namespace spec.finalizers (atomic), merged directly: replaced, and $deleteFromPrimitiveList applies', () => {
    const schema = namespaceDefinition(namingProfile('orch')).schema;
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: ['kubernetes', 'example.com/a'] } };
    // upstream: "replace list of scalars".
    assert.deepEqual(applyStrategicMergePatch(ns, { spec: { finalizers: ['example.com/b'] } }, schema), { ...ns, spec: { finalizers: ['example.com/b'] } });
    // upstream: "$deleteFromPrimitiveList should delete item from a list without merge patch strategy".
    assert.deepEqual(applyStrategicMergePatch(ns, { spec: { '$deleteFromPrimitiveList/finalizers': ['kubernetes'] } }, schema), { ...ns, spec: { finalizers: ['example.com/a'] } });
    // The stored object is not touched.
    assert.deepEqual(ns.spec.finalizers, ['kubernetes', 'example.com/a']);
    // Values other than strings delete their equals too; values of mixed types are refused.
    const numbers = { ...ns, spec: { finalizers: [1, 2, 3, 2] } };
    assert.deepEqual(applyStrategicMergePatch(numbers, { spec: { '$deleteFromPrimitiveList/finalizers': [2, 4] } }, schema), { ...ns, spec: { finalizers: [1, 3] } });
    assert.throws(() => applyStrategicMergePatch({ ...ns, spec: { finalizers: ['1', 1] } }, { spec: { '$deleteFromPrimitiveList/finalizers': [1] } }, schema), /list element types are not identical/);
  });
});

describe('kinds without strategic merge support', () => {
  const env = {} as HandlerEnv;
  const ctx = (contentType: string) => ({ req: { headers: { 'content-type': contentType } } }) as unknown as RequestContext;
  // A custom kind: the handler reads only its verbs, identity and the flag before refusing.
  const target = (strategicMergePatch?: boolean) =>
    ({ store: { def: { group: 'example.com', version: 'v1', kind: 'Widget', verbs: ['patch'], strategicMergePatch } }, namespace: NS, name: 'x' }) as unknown as ResourceTarget;

  test('a kind with strategicMergePatch: false answers 415 with the patch types it takes', async () => {
    await assert.rejects(handlePatch(ctx('application/strategic-merge-patch+json'), env, target(false)), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.status.code, 415);
      assert.equal(e.status.reason, 'UnsupportedMediaType');
      assert.equal(e.status.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
      return true;
    });
  });

  test('built-in kinds take it; an unknown patch type lists it among the accepted ones', async () => {
    const r = await api(server, 'PATCH', `${LEASES}/spec`, {}, { 'Content-Type': 'application/x-bogus' });
    assertStatus(
      r,
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });
});

describe('kubectl patch --type=strategic', () => {
  const k = kubectlFor(server, { namespace: NS, label: 'kubectl-smp', timeoutMs: 30_000 });
  const kubectl = (...args: string[]) => k.run(args);

  test('$deleteFromPrimitiveList with an addition, on finalizers', async () => {
    await create(LEASES, lease('kc-fin', { finalizers: ['example.com/a', 'example.com/b'] }));
    const r = await kubectl('patch', 'lease', 'kc-fin', '--type=strategic', '-p', '{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/a"],"finalizers":["example.com/c"]}}');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'lease.coordination.orch.io/kc-fin patched\n');
    assert.deepEqual((await get(`${LEASES}/kc-fin`)).metadata.finalizers, ['example.com/c', 'example.com/b']);
  });

  test('an unknown $patch: a BadRequest with the merge error, nothing stored', async () => {
    const before = await get(`${LEASES}/kc-fin`);
    const r = await kubectl('patch', 'lease', 'kc-fin', '--type=strategic', '-p', '{"spec":{"$patch":"bogus","holderIdentity":"b"}}');
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error from server (BadRequest): unknown patch type: bogus in map: map[$patch:bogus holderIdentity:b]\n');
    await unchanged(`${LEASES}/kc-fin`, before);
  });
});
