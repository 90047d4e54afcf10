// Server-side apply and managedFields over HTTP: apply creates and merges, ownership per manager,
// conflicts and their three resolutions, removal of fields a manager stopped applying, Update
// entries of ordinary writes, the `[{}]` reset, subresources, bad input; and kubectl
// `apply --server-side` sequences with the managedFields they leave written out in full.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';
import { kubectlFor } from '../support/kubectl.ts';

const server = await testServer();
const GV = 'coordination.orch.io/v1';
const LEASES = `/apis/${GV}/namespaces/default/leases`;
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };
type Body = Record<string, unknown>;
type Entry = { manager: string; operation: string; apiVersion: string; time?: string; fieldsType: string; fieldsV1: Body; subresource?: string };

const lease = (name: string, spec: Body, extra: Body = {}): Body => ({ apiVersion: GV, kind: 'Lease', metadata: { name, ...extra }, spec });
const apply = (name: string, manager: string, body: Body | string, query = '') =>
  api(server, 'PATCH', `${LEASES}/${name}?fieldManager=${manager}${query}`, typeof body === 'string' ? body : JSON.stringify(body), APPLY);
/** managedFields without the times (they change with the clock). */
const owners = (o: { metadata: { managedFields?: Entry[] } }) => (o.metadata.managedFields ?? []).map(({ time: _t, ...rest }) => rest);

describe('apply', () => {
  test('creates the object (201) with an Apply entry; the same intent again is a no-op (no new resourceVersion)', async () => {
    const c = await apply('a1', 'alice', lease('a1', { holderIdentity: 'me', leaseDurationSeconds: 10 }));
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(owners(c.body), [
      { manager: 'alice', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {} } } },
    ]);
    assert.match(c.body.metadata.managedFields[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const again = await apply('a1', 'alice', lease('a1', { holderIdentity: 'me', leaseDurationSeconds: 10 }));
    assert.equal(again.status, 200);
    assert.equal(again.body.metadata.resourceVersion, c.body.metadata.resourceVersion);
  });

  test('YAML bodies work as JSON ones do', async () => {
    const c = await apply('a-yaml', 'alice', `apiVersion: ${GV}\nkind: Lease\nmetadata:\n  name: a-yaml\nspec:\n  holderIdentity: yaml\n`);
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.spec.holderIdentity, 'yaml');
  });

  test('a conflicting value from another manager is 409 with one cause per field; force moves ownership', async () => {
    await apply('a2', 'alice', lease('a2', { holderIdentity: 'me', leaseDurationSeconds: 10 }));
    const conflict = await apply('a2', 'bob', lease('a2', { holderIdentity: 'bob', leaseDurationSeconds: 20 }));
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.reason, 'Conflict');
    assert.equal(conflict.body.message, 'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.holderIdentity\n- .spec.leaseDurationSeconds');
    assert.deepEqual(conflict.body.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.holderIdentity' },
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.leaseDurationSeconds' },
    ]);
    assert.equal((await api(server, 'GET', `${LEASES}/a2`)).body.spec.holderIdentity, 'me', 'nothing changed');
    const forced = await apply('a2', 'bob', lease('a2', { holderIdentity: 'bob' }), '&force=true');
    assert.equal(forced.status, 200, forced.text);
    assert.deepEqual(owners(forced.body), [
      { manager: 'alice', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:leaseDurationSeconds': {} } } },
      { manager: 'bob', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {} } } },
    ]);
  });

  test('resolution by omission: the value stays and ownership is given up; by agreement: ownership is shared', async () => {
    await apply('a3', 'alice', lease('a3', { holderIdentity: 'me', leaseDurationSeconds: 10 }));
    // bob wants only leaseTransitions, and agrees with alice on the duration.
    const shared = await apply('a3', 'bob', lease('a3', { leaseDurationSeconds: 10, leaseTransitions: 1 }));
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual(owners(shared.body), [
      { manager: 'alice', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {} } } },
      { manager: 'bob', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:leaseDurationSeconds': {}, 'f:leaseTransitions': {} } } },
    ]);
    // A later change of a shared value conflicts for the other owner.
    const conflict = await apply('a3', 'bob', lease('a3', { leaseDurationSeconds: 30, leaseTransitions: 1 }));
    assert.equal(conflict.status, 409);
    assert.match(conflict.body.message, /conflict with "alice": \.spec\.leaseDurationSeconds/);
    // alice gives the duration up by omitting it: the value stays, bob now owns it alone.
    const omitted = await apply('a3', 'alice', lease('a3', { holderIdentity: 'me' }));
    assert.equal(omitted.body.spec.leaseDurationSeconds, 10);
    assert.deepEqual(owners(omitted.body)[0]!.fieldsV1, { 'f:spec': { 'f:holderIdentity': {} } });
    assert.equal((await apply('a3', 'bob', lease('a3', { leaseDurationSeconds: 30, leaseTransitions: 1 }))).status, 200);
  });

  test('a field the manager stops applying is removed, unless another manager owns it', async () => {
    await apply('a4', 'alice', lease('a4', { holderIdentity: 'me', leaseDurationSeconds: 10, leaseTransitions: 3 }));
    const dropped = await apply('a4', 'alice', lease('a4', { holderIdentity: 'me', leaseDurationSeconds: 10 }));
    assert.equal(dropped.body.spec.leaseTransitions, undefined);
    // An ordinary update by carol takes the duration; alice dropping it now leaves it.
    const upd = await api(server, 'PATCH', `${LEASES}/a4?fieldManager=carol`, { spec: { leaseDurationSeconds: 11 } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(upd.status, 200);
    assert.deepEqual(owners(upd.body).map((e) => [e.manager, e.operation]), [
      ['alice', 'Apply'],
      ['carol', 'Update'],
    ]);
    const kept = await apply('a4', 'alice', lease('a4', { holderIdentity: 'me' }));
    assert.equal(kept.body.spec.leaseDurationSeconds, 11);
  });

  test('a resourceVersion in the intent is a precondition: stale is 409, current applies', async () => {
    const c = await apply('a-rv', 'alice', lease('a-rv', { holderIdentity: 'me' }));
    const rv = c.body.metadata.resourceVersion as string;
    await api(server, 'PATCH', `${LEASES}/a-rv`, { spec: { leaseTransitions: 1 } }, { 'Content-Type': 'application/merge-patch+json' });
    const stale = await apply('a-rv', 'alice', lease('a-rv', { holderIdentity: 'you' }, { resourceVersion: rv }));
    assert.equal(stale.status, 409, stale.text);
    assert.equal((await api(server, 'GET', `${LEASES}/a-rv`)).body.spec.holderIdentity, 'me');
    const current = (await api(server, 'GET', `${LEASES}/a-rv`)).body.metadata.resourceVersion as string;
    const ok = await apply('a-rv', 'alice', lease('a-rv', { holderIdentity: 'you' }, { resourceVersion: current }));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.spec.holderIdentity, 'you');
  });

  test('dryRun: an apply that would create stores nothing, same answer shape', async () => {
    const d = await apply('a5', 'alice', lease('a5', { holderIdentity: 'me' }), '&dryRun=All');
    assert.equal(d.status, 201, d.text);
    assert.equal(d.body.metadata.managedFields[0].manager, 'alice');
    assert.equal((await api(server, 'GET', `${LEASES}/a5`)).status, 404);
  });

  test('bad input: no fieldManager, managedFields in the body, wrong version, wrong name, force on a merge patch, Strict unknown fields, invalid merged result', async () => {
    const noManager = await api(server, 'PATCH', `${LEASES}/bad`, JSON.stringify(lease('bad', {})), APPLY);
    assert.equal(noManager.status, 422);
    assert.match(noManager.body.message, /fieldManager: Required value: is required for apply patch/);
    const mf = await apply('bad', 'm', lease('bad', {}, { managedFields: [{ manager: 'x' }] }));
    assert.equal(mf.status, 400);
    assert.equal(mf.body.message, 'metadata.managedFields must be nil');
    const version = await apply('bad', 'm', { ...lease('bad', {}), apiVersion: 'coordination.orch.io/v2' });
    assert.equal(version.status, 400);
    assert.match(version.body.message, /^Incorrect version specified in apply patch/);
    const name = await apply('bad', 'm', lease('other', {}));
    assert.equal(name.status, 400);
    const force = await api(server, 'PATCH', `${LEASES}/a1?force=true`, { spec: {} }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(force.status, 422);
    assert.match(force.body.message, /force: Forbidden: may not be specified for non-apply patch/);
    const strict = await apply('bad', 'm', lease('bad', { holderIdentity: 'x', bogus: 1 }), '&fieldValidation=Strict');
    assert.equal(strict.status, 400);
    assert.match(strict.body.message, /unknown field "spec.bogus"/);
    const invalid = await apply('bad', 'm', lease('bad', { leaseDurationSeconds: 0 }));
    assert.equal(invalid.status, 422);
    const garbage = await api(server, 'PATCH', `${LEASES}/bad?fieldManager=m`, 'spec: [unclosed', APPLY);
    assert.equal(garbage.status, 400);
    assert.equal((await api(server, 'GET', `${LEASES}/bad`)).status, 404, 'nothing stored');
  });
});

describe('apply to /status', () => {
  test('records an Apply entry for the subresource; another applier of the same field conflicts, naming the subresource', async () => {
    const NODES = '/api/v1/nodes';
    const info = { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: 'k', osImage: 'o', containerRuntimeVersion: 'c', kubeletVersion: 'v1.36.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' };
    const node = (status?: Body) => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'status-applied' }, ...(status ? { status } : {}) });
    assert.equal((await api(server, 'PATCH', `${NODES}/status-applied?fieldManager=admin`, node(), APPLY)).status, 201);
    const s = await api(server, 'PATCH', `${NODES}/status-applied/status?fieldManager=kubelet`, node({ nodeInfo: info }), APPLY);
    assert.equal(s.status, 200, s.text);
    const entry = (s.body.metadata.managedFields as Entry[]).find((e) => e.manager === 'kubelet');
    assert.deepEqual(entry && { ...entry, time: undefined }, {
      manager: 'kubelet',
      operation: 'Apply',
      apiVersion: 'v1',
      time: undefined,
      fieldsType: 'FieldsV1',
      // status.nodeInfo is a struct every Node has: its fields are owned, not the struct.
      fieldsV1: { 'f:status': { 'f:nodeInfo': Object.fromEntries(Object.keys(info).sort().map((k) => [`f:${k}`, {}])) } },
      subresource: 'status',
    });
    const other = await api(server, 'PATCH', `${NODES}/status-applied/status?fieldManager=other`, node({ nodeInfo: { ...info, machineID: 'x' } }), APPLY);
    assert.equal(other.status, 409);
    assert.equal(other.body.message, 'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status": .status.nodeInfo.machineID');
    assert.equal((await api(server, 'GET', `${NODES}/status-applied`)).body.status.nodeInfo.machineID, 'm');
  });
});

describe('managedFields of ordinary writes', () => {
  test('create and update record Update entries from fieldManager, or the User-Agent', async () => {
    const c = await api(server, 'POST', `${LEASES}?fieldManager=creator`, lease('u1', { holderIdentity: 'a' }));
    assert.deepEqual(owners(c.body), [{ manager: 'creator', operation: 'Update', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {} } } }]);
    const u = await api(server, 'PATCH', `${LEASES}/u1`, { spec: { leaseTransitions: 1 } }, { 'Content-Type': 'application/merge-patch+json', 'User-Agent': 'my-controller/v1.2 (linux)' });
    assert.deepEqual(owners(u.body).map((e) => e.manager), ['creator', 'my-controller']);
  });

  test('[{}] clears the history (the writer then owns what it changed); an empty list does not', async () => {
    await api(server, 'POST', `${LEASES}?fieldManager=first`, lease('u2', { holderIdentity: 'a', leaseDurationSeconds: 5 }));
    const empty = await api(server, 'PATCH', `${LEASES}/u2?fieldManager=second`, { metadata: { managedFields: [] } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual(owners(empty.body).map((e) => e.manager), ['first']);
    const reset = await api(server, 'PATCH', `${LEASES}/u2?fieldManager=second`, { metadata: { managedFields: [{}] }, spec: { holderIdentity: 'b' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual(owners(reset.body), [{ manager: 'second', operation: 'Update', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {} } } }]);
  });

  test('a patch that changes only what an entry owns is stored, whichever way it reaches into the entry', async () => {
    // Each patch edits the stored entry's fieldsV1 (alice gives up leaseDurationSeconds): the
    // write must see the entry as it was stored, not as the patch left it, or it finds no change.
    const owned = { 'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {} } };
    const edited = { 'f:spec': { 'f:holderIdentity': {} } };
    const entry = (fieldsV1: Body) => ({ manager: 'alice', operation: 'Update', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1 });
    const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
    const patches: [string, unknown, Record<string, string>][] = [
      ['json remove', [{ op: 'remove', path: '/metadata/managedFields/0/fieldsV1/f:spec/f:leaseDurationSeconds' }], JSON_PATCH],
      ['json replace', [{ op: 'replace', path: '/metadata/managedFields/0/fieldsV1', value: edited }], JSON_PATCH],
      [
        'json move out of metadata and back',
        [
          { op: 'move', from: '/metadata', path: '/spare' },
          { op: 'remove', path: '/spare/managedFields/0/fieldsV1/f:spec/f:leaseDurationSeconds' },
          { op: 'move', from: '/spare', path: '/metadata' },
        ],
        JSON_PATCH,
      ],
      ['merge', { metadata: { managedFields: [entry(edited)] } }, { 'Content-Type': 'application/merge-patch+json' }],
      ['strategic', { metadata: { managedFields: [entry(edited)] } }, { 'Content-Type': 'application/strategic-merge-patch+json' }],
    ];
    for (const [i, [what, patch, headers]] of patches.entries()) {
      const name = `u-owned-${i}`;
      const c = await api(server, 'POST', `${LEASES}?fieldManager=alice`, lease(name, { holderIdentity: 'a', leaseDurationSeconds: 5 }));
      assert.deepEqual(owners(c.body), [entry(owned)], what);
      const p = await api(server, 'PATCH', `${LEASES}/${name}?fieldManager=bob`, patch, headers);
      assert.equal(p.status, 200, `${what}: ${p.text}`);
      assert.deepEqual(owners(p.body), [entry(edited)], what);
      assert.notEqual(p.body.metadata.resourceVersion, c.body.metadata.resourceVersion, `${what}: a write`);
      assert.deepEqual(owners((await api(server, 'GET', `${LEASES}/${name}`)).body), [entry(edited)], `${what}: stored`);
    }
  });

  test('writes through /status record the subresource; status is never owned through the main resource', async () => {
    const n = await api(server, 'POST', '/api/v1/nodes?fieldManager=kubelet', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'mf-node' }, spec: { unschedulable: false }, status: { phase: 'Running' } });
    assert.equal(n.status, 201, n.text);
    assert.deepEqual(owners(n.body), [{ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:unschedulable': {} } } }]);
    const s = await api(server, 'PATCH', '/api/v1/nodes/mf-node/status?fieldManager=kubelet', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(s.status, 200, s.text);
    const statusEntry = owners(s.body).find((e) => e.subresource === 'status');
    assert.deepEqual(statusEntry, {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } } } },
      subresource: 'status',
    });
  });
});

// ---------------------------------------------------------------------------------------------

const k = kubectlFor(server, { namespace: 'default', label: 'apply-kubectl', timeoutMs: 30_000 });
const kubectl = (args: string[], input?: string) => k.run(args, input);
const manifest = (spec: Body) => JSON.stringify(lease('k1', spec));

describe('kubectl apply --server-side', () => {
  test('first apply, re-apply with a field removed, a conflicting manager, --force-conflicts; the managedFields written out', async () => {
    const first = await kubectl(['apply', '--server-side', '-f', '-'], manifest({ holderIdentity: 'me', leaseDurationSeconds: 10, leaseTransitions: 1 }));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /lease\.coordination\.orch\.io\/k1 serverside-applied/);
    const removed = await kubectl(['apply', '--server-side', '-f', '-'], manifest({ holderIdentity: 'me', leaseDurationSeconds: 10 }));
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await api(server, 'GET', `${LEASES}/k1`)).body.spec.leaseTransitions, undefined);
    const conflict = await kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], manifest({ holderIdentity: 'other' }));
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "kubectl": \.spec\.holderIdentity/);
    const forced = await kubectl(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], manifest({ holderIdentity: 'other' }));
    assert.equal(forced.code, 0, forced.stderr);
    const shown = JSON.parse((await kubectl(['get', 'lease', 'k1', '-o', 'json', '--show-managed-fields'])).stdout) as { metadata: { managedFields: Entry[] } };
    assert.deepEqual(owners(shown), [
      { manager: 'kubectl', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:leaseDurationSeconds': {} } } },
      { manager: 'other', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:holderIdentity': {} } } },
    ]);
    const hidden = JSON.parse((await kubectl(['get', 'lease', 'k1', '-o', 'json'])).stdout) as { metadata: { managedFields?: unknown } };
    assert.equal(hidden.metadata.managedFields, undefined, 'kubectl hides them unless asked');
  });
});
