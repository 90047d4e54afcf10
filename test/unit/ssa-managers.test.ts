import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { KObject } from '../../src/machinery/meta.ts';
import type { Schema } from '../../src/machinery/schema.ts';
import { arr, bool, int32, obj, objectSchema, str, stringMap } from '../../src/registry/schemas.ts';
import { applyConfig, ApplyConflictError, FieldSet, makePath, SsaBadRequestError, updateManagedFields, type ManagedFieldsEntry } from '../../src/ssa/index.ts';
import { decodeFieldsV1, pathString, type Path } from '../../src/ssa/fieldpath.ts';
import { decodeManagedFields, managerIdentifier, type VersionedSet } from '../../src/ssa/managers.ts';
import { prune, reconcileManagers, type ManagerSets, type UpdaterContext } from '../../src/ssa/updater.ts';
import { mergeValues } from '../../src/ssa/merge.ts';
import { toFieldSet, typeOf, valueAt } from '../../src/ssa/typed.ts';
import { valuesEqual, type JsonMap, type JsonValue } from '../../src/ssa/value.ts';

const schema = objectSchema({
  spec: obj({
    replicas: int32(),
    paused: bool(),
    items: arr(obj({ name: str(), value: str() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    tags: arr(str(), { 'x-kubernetes-list-type': 'set' }),
    data: stringMap(),
    selector: obj({ a: str(), b: str() }, { 'x-kubernetes-map-type': 'atomic' }),
  }),
  status: obj({
    phase: str(),
    conditions: arr(obj({ type: str(), status: str() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  }),
});

/** Timestamps a second apart. */
const T = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s)).toISOString().replace('.000Z', 'Z');

interface Opts {
  force?: boolean;
  now?: string;
  subresource?: string;
  resetFields?: FieldSet;
  apiVersion?: string;
  schema?: Schema;
}

function apply(live: KObject | undefined, body: JsonMap, manager: string, o: Opts = {}): KObject {
  const apiVersion = o.apiVersion ?? 'v1';
  const config = { apiVersion, kind: 'Widget', ...body, metadata: { name: 'w', ...((body.metadata as JsonMap | undefined) ?? {}) } } as KObject;
  return applyConfig({
    schema: o.schema ?? schema,
    live,
    config,
    manager,
    apiVersion,
    force: o.force ?? false,
    now: o.now ?? T(0),
    ...(o.subresource ? { subresource: o.subresource } : {}),
    ...(o.resetFields ? { resetFields: o.resetFields } : {}),
  });
}

function update(live: KObject | undefined, change: (o: KObject) => void, manager: string, o: Opts = {}): KObject {
  const updated = structuredClone(live ?? ({ apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } } as KObject));
  change(updated);
  return updateManagedFields({
    schema: o.schema ?? schema,
    live,
    updated,
    manager,
    apiVersion: o.apiVersion ?? 'v1',
    now: o.now ?? T(0),
    ...(o.subresource ? { subresource: o.subresource } : {}),
    ...(o.resetFields ? { resetFields: o.resetFields } : {}),
  });
}

const mf = (o: KObject): ManagedFieldsEntry[] => (o.metadata.managedFields ?? []) as ManagedFieldsEntry[];

/** `manager/Operation` → owned paths, as the reference prints them. */
function owners(o: KObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of mf(o)) out[`${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`] = decodeFieldsV1(e.fieldsV1).paths().map(pathString);
  return out;
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApplyConflictError, `expected ApplyConflictError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a conflict');
}

const spec = (o: KObject) => o.spec as JsonMap;

describe('first writes', () => {
  it('a first apply of a named object records only what it sets (name and namespace are stripped)', () => {
    const o = apply(undefined, { metadata: { namespace: 'ns', labels: { app: 'a' } }, spec: { replicas: 1 } }, 'm1');
    assert.deepEqual(o, {
      apiVersion: 'v1',
      kind: 'Widget',
      metadata: {
        name: 'w',
        namespace: 'ns',
        labels: { app: 'a' },
        managedFields: [{ manager: 'm1', operation: 'Apply', apiVersion: 'v1', time: T(0), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } } }],
      },
      spec: { replicas: 1 },
    });
    const bare = apply(undefined, { spec: { replicas: 1 } }, 'm1');
    assert.deepEqual(mf(bare)[0]!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    // Nothing but identity: no entry at all.
    assert.equal(apply(undefined, {}, 'm1').metadata.managedFields, undefined);
  });

  it('a create owns every field it sets; new maps are members too, top-level structs are not', () => {
    const o = update(undefined, (x) => Object.assign(x, { metadata: { name: 'w', labels: { a: 'b' } }, spec: { replicas: 1, data: { x: '1' } } }), 'creator', { now: T(3) });
    assert.deepEqual(mf(o), [
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: 'v1',
        time: T(3),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:spec': { 'f:data': { '.': {}, 'f:x': {} }, 'f:replicas': {} } },
      },
    ]);
  });

  it('an empty manager name is "unknown"', () => {
    assert.equal(mf(apply(undefined, { spec: { replicas: 1 } }, ''))[0]!.manager, 'unknown');
  });

  it('server-set metadata is never owned', () => {
    const o = apply(undefined, { metadata: { uid: 'u', resourceVersion: '5', generation: 2, creationTimestamp: T(0), deletionTimestamp: T(1), selfLink: '/x' }, spec: { paused: true } }, 'm1');
    assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.paused'] });
    const u = update(o, (x) => Object.assign(x.metadata, { uid: 'v', resourceVersion: '6', generation: 3 }), 'store');
    assert.deepEqual(owners(u), { 'm1/Apply': ['.spec.paused'] });
  });

  it('refuses a configuration that sets managedFields or has the wrong version', () => {
    assert.throws(() => apply(undefined, { metadata: { managedFields: [] } }, 'm1'), (e: unknown) => e instanceof SsaBadRequestError && e.message === 'metadata.managedFields must be nil');
    assert.throws(
      () => applyConfig({ schema, live: undefined, config: { apiVersion: 'v2', kind: 'Widget', metadata: { name: 'w' } }, manager: 'm', apiVersion: 'v1', force: false, now: T(0) }),
      /Incorrect version specified in apply patch. Specified patch version: v2, expected: v1/,
    );
  });
});

describe('apply', () => {
  it('re-applying the same intent changes nothing: the live object itself comes back', () => {
    const o = apply(undefined, { metadata: { labels: { a: 'b' } }, spec: { replicas: 1, items: [{ name: 'a', value: 'x' }], tags: ['t'], data: { k: 'v' }, selector: { a: '1' } } }, 'm1');
    const again = apply(o, { metadata: { labels: { a: 'b' } }, spec: { replicas: 1, items: [{ name: 'a', value: 'x' }], tags: ['t'], data: { k: 'v' }, selector: { a: '1' } } }, 'm1', { now: T(9) });
    assert.equal(again, o);
  });

  it('prints one conflict as the reference does', () => {
    const o = apply(undefined, { spec: { replicas: 1 } }, 'm1');
    const e = conflictOf(() => apply(o, { spec: { replicas: 2 } }, 'm2'));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "m1": .spec.replicas');
    assert.deepEqual(e.conflicts, [{ manager: 'm1', operation: 'Apply', apiVersion: 'v1', field: '.spec.replicas', printedManager: '"m1"' }]);
    assert.deepEqual(e.causes, [{ type: 'FieldManagerConflict', message: 'conflict with "m1"', field: '.spec.replicas' }]);
  });

  it('names update managers with their version and subresource', () => {
    const o = update(apply(undefined, { spec: { replicas: 1 } }, 'm1'), (x) => (spec(x).replicas = 5), 'controller');
    assert.equal(conflictOf(() => apply(o, { spec: { replicas: 1 } }, 'm1')).message, 'Apply failed with 1 conflict: conflict with "controller" using v1: .spec.replicas');
    const s = update(o, (x) => (x.status = { phase: 'Running' }), 'kubelet', { subresource: 'status' });
    assert.deepEqual(owners(s)['kubelet/Update/status'], ['.status.phase']);
    const e = conflictOf(() => apply(s, { status: { phase: 'Failed' } }, 'other', { subresource: 'status' }));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status" using v1: .status.phase');
    assert.deepEqual(e.conflicts[0], { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', subresource: 'status', field: '.status.phase', printedManager: '"kubelet" with subresource "status" using v1' });
  });

  it('prints several conflicts grouped by manager, in order', () => {
    let o = apply(undefined, { spec: { replicas: 1, data: { b: '1', a: '1' } } }, 'm2');
    o = apply(o, { spec: { paused: true } }, 'm1');
    const e = conflictOf(() => apply(o, { spec: { replicas: 2, paused: false, data: { a: '2', b: '2' } } }, 'm3'));
    assert.equal(e.message, 'Apply failed with 4 conflicts: conflicts with "m1":\n- .spec.paused\nconflicts with "m2":\n- .spec.replicas\n- .spec.data.a\n- .spec.data.b');
    assert.deepEqual(
      e.causes.map((c) => `${c.message} ${c.field}`),
      ['conflict with "m1" .spec.paused', 'conflict with "m2" .spec.replicas', 'conflict with "m2" .spec.data.a', 'conflict with "m2" .spec.data.b'],
    );
  });

  describe('the three resolutions of a conflict', () => {
    // m1 applied replicas=1; a controller then scaled to 5 and owns replicas now.
    const base = update(apply(undefined, { spec: { replicas: 1, paused: false } }, 'm1'), (x) => (spec(x).replicas = 5), 'controller', { now: T(1) });

    it('the update took the field from the applier', () => {
      assert.deepEqual(owners(base), { 'm1/Apply': ['.spec.paused'], 'controller/Update': ['.spec.replicas'] });
      conflictOf(() => apply(base, { spec: { replicas: 1, paused: false } }, 'm1'));
    });

    it('(a) force: the value is overwritten and ownership moves', () => {
      const o = apply(base, { spec: { replicas: 1, paused: false } }, 'm1', { force: true, now: T(2) });
      assert.equal(spec(o).replicas, 1);
      assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.paused', '.spec.replicas'] });
      assert.equal(mf(o)[0]!.time, T(2));
    });

    it('(b) omit the field: the value is kept and the applier does not own it', () => {
      const o = apply(base, { spec: { paused: false } }, 'm1', { now: T(2) });
      assert.equal(spec(o).replicas, 5);
      assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.paused'], 'controller/Update': ['.spec.replicas'] });
    });

    it('(c) set the live value: ownership is shared', () => {
      const o = apply(base, { spec: { replicas: 5, paused: false } }, 'm1', { now: T(2) });
      assert.equal(spec(o).replicas, 5);
      assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.paused', '.spec.replicas'], 'controller/Update': ['.spec.replicas'] });
      // Nothing changed in the object: the applier's time stays.
      assert.equal(mf(o)[0]!.time, T(0));
    });
  });

  it('shares a value set by several appliers; any later change conflicts for all; a sharer gives up by omitting it', () => {
    let o = apply(undefined, { spec: { replicas: 3 } }, 'm1');
    o = apply(o, { spec: { replicas: 3, paused: true } }, 'm2');
    assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.replicas'], 'm2/Apply': ['.spec.paused', '.spec.replicas'] });
    assert.equal(conflictOf(() => apply(o, { spec: { replicas: 4 } }, 'm3')).message, 'Apply failed with 2 conflicts: conflicts with "m1":\n- .spec.replicas\nconflicts with "m2":\n- .spec.replicas');
    assert.equal(conflictOf(() => apply(o, { spec: { replicas: 4 } }, 'm1')).message, 'Apply failed with 1 conflict: conflict with "m2": .spec.replicas');
    // m2 gives up replicas: the value stays (m1 still owns it) and the object does not change.
    const given = apply(o, { spec: { paused: true } }, 'm2', { now: T(5) });
    assert.equal(spec(given).replicas, 3);
    assert.deepEqual(owners(given), { 'm1/Apply': ['.spec.replicas'], 'm2/Apply': ['.spec.paused'] });
    assert.equal(mf(given).find((e) => e.manager === 'm2')!.time, T(0), 'giving up ownership does not touch the time');
    const changed = apply(given, { spec: { replicas: 4 } }, 'm1', { now: T(6) });
    assert.equal(spec(changed).replicas, 4);
  });

  it('removes what a manager stopped applying unless another manager owns it', () => {
    let o = apply(undefined, { metadata: { labels: { a: '1', b: '1' } }, spec: { data: { x: '1', y: '1' }, items: [{ name: 'a', value: '1' }, { name: 'b' }], tags: ['t1', 't2'], replicas: 2 } }, 'm1');
    o = apply(o, { metadata: { labels: { b: '1' } }, spec: { data: { y: '1' }, items: [{ name: 'b' }], tags: ['t2'] } }, 'm2');
    const p = apply(o, { metadata: { labels: { a: '1' } }, spec: { data: { x: '1' }, items: [{ name: 'a' }], tags: ['t1'] } }, 'm1', { now: T(1) });
    assert.deepEqual(p.metadata.labels, { a: '1', b: '1' });
    assert.deepEqual(spec(p), { data: { x: '1', y: '1' }, items: [{ name: 'a' }, { name: 'b' }], tags: ['t1', 't2'] });
    assert.equal(mf(p).find((e) => e.manager === 'm1')!.time, T(1));
    // m1 stops applying everything: only what m2 owns is left.
    const q = apply(p, { spec: { paused: true } }, 'm1', { now: T(2) });
    assert.equal(q.metadata.labels && JSON.stringify(q.metadata.labels), '{"b":"1"}');
    assert.deepEqual(spec(q), { data: { y: '1' }, items: [{ name: 'b' }], tags: ['t2'], paused: true });
    // A field another manager took over by update is not removed either.
    const r0 = update(apply(undefined, { spec: { data: { x: '1', z: '1' } } }, 'm1'), (x) => ((spec(x).data as JsonMap).x = '2'), 'editor');
    const r = apply(r0, { spec: { data: { z: '1' } } }, 'm1');
    assert.deepEqual(spec(r).data, { x: '2', z: '1' });
    // …unless no one owns it any more: then it goes.
    const s = apply(r, { spec: { paused: false } }, 'm1');
    assert.deepEqual(spec(s).data, { x: '2' });
  });

  it('ignores what the endpoint resets (status on the main resource)', () => {
    const o = apply(undefined, { spec: { replicas: 1 }, status: { phase: 'x' } }, 'm1', { resetFields: FieldSet.of(makePath('status')) });
    assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.replicas'] });
  });

  it('keeps one Apply entry across versions; Update entries are per version', () => {
    const v2 = objectSchema({ spec: obj({ replicas: int32(), paused: bool() }) });
    let o = apply(undefined, { spec: { replicas: 1 } }, 'm1', { schema: v2 });
    o = apply(o, { spec: { replicas: 1, paused: true } }, 'm1', { schema: v2, apiVersion: 'v2', now: T(1) });
    assert.deepEqual(
      mf(o).map((e) => `${e.manager} ${e.operation} ${e.apiVersion}`),
      ['m1 Apply v2'],
    );
    o = update(o, (x) => (spec(x).replicas = 2), 'ed', { schema: v2, now: T(2) });
    o = update(o, (x) => (spec(x).paused = false), 'ed', { schema: v2, apiVersion: 'v2', now: T(3) });
    assert.deepEqual(owners(o), { 'ed/Update': ['.spec.paused'] });
    assert.deepEqual(
      mf(o).map((e) => `${e.manager} ${e.operation} ${e.apiVersion} ${e.time}`),
      [`ed Update v1 ${T(2)}`, `ed Update v2 ${T(3)}`],
    );
  });
});

describe('update', () => {
  it('takes ownership of what it changes and never fails on ownership', () => {
    const o = apply(undefined, { spec: { replicas: 1, data: { a: '1' } } }, 'm1');
    const u = update(o, (x) => Object.assign(spec(x), { replicas: 2, data: { a: '1', b: '2' } }), 'editor', { now: T(4) });
    assert.deepEqual(owners(u), { 'm1/Apply': ['.spec.data.a'], 'editor/Update': ['.spec.replicas', '.spec.data.b'] });
  });

  it('removes fields deleted by an update from every manager', () => {
    let o = apply(undefined, { spec: { data: { a: '1', b: '1' } } }, 'm1');
    o = apply(o, { spec: { data: { a: '1' } } }, 'm2');
    const u = update(o, (x) => delete (spec(x).data as JsonMap).a, 'editor');
    assert.deepEqual(owners(u), { 'm1/Apply': ['.spec.data.b'] });
  });

  it('keeps the time of an entry whose manager changed nothing', () => {
    const o = update(undefined, (x) => (x.spec = { replicas: 1 }), 'ed', { now: T(1) });
    const same = update(o, () => undefined, 'ed', { now: T(7) });
    assert.equal(mf(same)[0]!.time, T(1));
  });

  it('[{}] clears managedFields first: the requester then owns what it changed', () => {
    const o = apply(undefined, { spec: { replicas: 1, paused: true } }, 'm1');
    const cleared = update(o, (x) => (x.metadata.managedFields = [{}]), 'editor');
    assert.equal(cleared.metadata.managedFields, undefined);
    const both = update(
      o,
      (x) => {
        x.metadata.managedFields = [{}];
        spec(x).replicas = 2;
      },
      'editor',
      { now: T(2) },
    );
    assert.deepEqual(owners(both), { 'editor/Update': ['.spec.replicas'] });
  });

  it('an empty list does not reset; a valid list replaces the entries', () => {
    const o = apply(undefined, { spec: { replicas: 1 } }, 'm1');
    const empty = update(o, (x) => (x.metadata.managedFields = []), 'editor');
    assert.deepEqual(owners(empty), { 'm1/Apply': ['.spec.replicas'] });
    const edited = update(
      o,
      (x) => (x.metadata.managedFields = [{ manager: 'someone', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }]),
      'editor',
    );
    assert.deepEqual(owners(edited), { 'someone/Update': ['.spec.replicas'] });
    // Through a subresource the request's list is ignored.
    const sub = update(o, (x) => (x.metadata.managedFields = [{}]), 'editor', { subresource: 'status' });
    assert.deepEqual(owners(sub), { 'm1/Apply': ['.spec.replicas'] });
  });

  it('leaves an untracked object untracked until its first apply', () => {
    const plain = { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w', uid: 'u' }, spec: { replicas: 1, data: { a: '1' } } } as KObject;
    const u = update(plain, (x) => (spec(x).replicas = 2), 'editor');
    assert.equal(u.metadata.managedFields, undefined);
    const a = apply(u, { spec: { paused: true } }, 'm1', { now: T(5) });
    // Everything that existed, as a create would own it (a new map is a member too).
    assert.deepEqual(owners(a), { 'm1/Apply': ['.spec.paused'], 'before-first-apply/Update': ['.spec.data', '.spec.replicas', '.spec.data.a'] });
    assert.equal(mf(a).find((e) => e.manager === 'before-first-apply')!.time, T(5));
  });

  it('through /status: identity carries the subresource, and reset paths are not owned', () => {
    const o = apply(undefined, { spec: { replicas: 1 } }, 'm1');
    const s = update(
      o,
      (x) => {
        x.status = { phase: 'Running' };
        spec(x).replicas = 7;
      },
      'kubelet',
      { subresource: 'status', resetFields: FieldSet.of(makePath('spec')) },
    );
    assert.deepEqual(owners(s), { 'm1/Apply': ['.spec.replicas'], 'kubelet/Update/status': ['.status.phase'] });
    assert.equal(mf(s)[1]!.subresource, 'status');
  });

  it('keeps at most 10 Update entries, merging the oldest into ancient-changes', () => {
    let o: KObject | undefined;
    for (let i = 0; i < 11; i++) {
      o = update(
        o,
        (x) => {
          const sp = (x.spec ??= {}) as JsonMap;
          sp.data = { ...((sp.data as JsonMap | undefined) ?? {}), [`k${i}`]: 'v' };
        },
        `u${i}`,
        { now: T(i) },
      );
    }
    const entries = mf(o!);
    assert.equal(entries.length, 10);
    assert.deepEqual(entries[0], { manager: 'ancient-changes', operation: 'Update', apiVersion: 'v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {} } } } });
    assert.deepEqual(
      entries.map((e) => e.manager),
      ['ancient-changes', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9', 'u10'],
    );
  });

  it('sorts entries: Apply first, then oldest first, then by manager', () => {
    let o = update(undefined, (x) => (x.spec = { replicas: 1 }), 'zed', { now: T(1) });
    o = update(o, (x) => (spec(x).paused = true), 'abe', { now: T(1) });
    o = apply(o, { spec: { data: { a: '1' } } }, 'late', { now: T(9) });
    o = update(o, (x) => (spec(x).tags = ['t']), 'early', { now: T(0) });
    assert.deepEqual(
      mf(o).map((e) => e.manager),
      ['late', 'early', 'abe', 'zed'],
    );
  });
});

describe('schema topology changes', () => {
  const granular = objectSchema({ spec: obj({ sel: obj({ a: str(), b: str() }) }) });
  const atomic = objectSchema({ spec: obj({ sel: obj({ a: str(), b: str() }, { 'x-kubernetes-map-type': 'atomic' }) }) });

  it('to atomic: owners of something inside own the whole, and changes conflict with them', () => {
    const o = apply(undefined, { spec: { sel: { a: '1' } } }, 'm1', { schema: granular });
    assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.sel.a'] });
    const e = conflictOf(() => apply(o, { spec: { sel: { b: '2' } } }, 'm2', { schema: atomic }));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "m1": .spec.sel');
  });

  it('from atomic: the owner keeps one member, and nothing conflicts with it', () => {
    const o = apply(undefined, { spec: { sel: { a: '1' } } }, 'm1', { schema: atomic });
    assert.deepEqual(owners(o), { 'm1/Apply': ['.spec.sel'] });
    const g = apply(o, { spec: { sel: { a: '2' } } }, 'm2', { schema: granular, now: T(1) });
    assert.deepEqual(spec(g).sel, { a: '2' });
    assert.deepEqual(owners(g), { 'm1/Apply': ['.spec.sel'], 'm2/Apply': ['.spec.sel.a'] });
  });
});

describe('kubectl moving from client-side apply', () => {
  const annotation = 'kubectl.kubernetes.io/last-applied-configuration';
  const last = (replicas: number) => JSON.stringify({ apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' }, spec: { replicas } });
  const csa = update(undefined, (x) => Object.assign(x, { metadata: { name: 'w', annotations: { [annotation]: last(1) } }, spec: { replicas: 1 } }), 'kubectl-client-side-apply');

  it('forgives conflicts on fields the annotation recorded, and keeps the annotation current', () => {
    const o = apply(csa, { spec: { replicas: 2 } }, 'kubectl', { now: T(1) });
    assert.equal(spec(o).replicas, 2);
    assert.deepEqual(owners(o)['kubectl/Apply'], ['.spec.replicas']);
    assert.equal((o.metadata.annotations as JsonMap)[annotation], '{"apiVersion":"v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2}}\n');
  });

  it('does not forgive other managers, nor fields changed since', () => {
    conflictOf(() => apply(csa, { spec: { replicas: 2 } }, 'other'));
    const drifted = update(csa, (x) => (spec(x).replicas = 9), 'kubectl-client-side-apply');
    conflictOf(() => apply(drifted, { spec: { replicas: 2 } }, 'kubectl'));
  });
});

// ---- property test ----

/** A small deterministic PRNG (LCG), so a failing seed reproduces. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomIntent(r: () => number): JsonMap {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const subset = <T>(xs: readonly T[]): T[] => xs.filter(() => r() < 0.4);
  const s: JsonMap = {};
  if (r() < 0.5) s.replicas = pick([1, 2, 3]);
  const items: JsonMap[] = subset(['a', 'b', 'c']).map((name): JsonMap => (r() < 0.5 ? { name, value: pick(['x', 'y']) } : { name }));
  if (items.length) s.items = items;
  const tags = subset(['t1', 't2', 't3']);
  if (tags.length) s.tags = tags;
  const data: JsonMap = {};
  for (const k of subset(['k1', 'k2', 'k3'])) data[k] = pick(['v1', 'v2']);
  if (Object.keys(data).length) s.data = data;
  if (r() < 0.4) s.selector = r() < 0.5 ? { a: pick(['p', 'q']) } : { a: pick(['p', 'q']), b: 'z' };
  // An empty map would be owned as a value of its own; intents leave empty parts out.
  const body: JsonMap = Object.keys(s).length ? { spec: s } : {};
  const labels: JsonMap = {};
  for (const k of subset(['l1', 'l2'])) labels[k] = pick(['1', '2']);
  if (Object.keys(labels).length) body.metadata = { labels };
  return body;
}

const ctx: UpdaterContext = { type: typeOf(schema), version: 'v1', isKnownVersion: () => true };
const setsOf = (o: KObject | undefined): Map<string, VersionedSet> => decodeManagedFields(o?.metadata.managedFields).fields;
const idOf = (m: string) => managerIdentifier({ manager: m, operation: 'Apply' });

/** Leaf paths of a set (members with nothing owned below them). */
const leafPaths = (s: FieldSet): Path[] => s.leaves().paths();

/**
 * A granular container (map, struct, map-list item) owned as a member: an update that created it
 * owns it, yet others may add entries inside without touching that ownership.
 */
const isGranularContainer = (path: Path): boolean => {
  const last = path[path.length - 1]!;
  return last.kind === 'key' || (last.kind === 'field' && ['spec', 'metadata', 'labels', 'data', 'items', 'tags'].includes(last.name));
};

describe('property: random applies by three managers', () => {
  const managers = ['m0', 'm1', 'm2'];
  // SSA_PROPERTY_SEEDS=n runs seeds 1..n (default 8).
  const seeds = Array.from({ length: Number(process.env.SSA_PROPERTY_SEEDS ?? 8) }, (_, i) => i + 1);
  for (const seed of seeds) {
    it(`seed ${seed}: owned fields survive, pruning is exact, re-applies are no-ops`, () => {
      const r = rng(seed);
      let live: KObject | undefined;
      const intents = new Map<string, JsonMap>();
      let applied = 0;
      let conflicts = 0;
      for (let step = 0; step < 150; step++) {
        if (live && r() < 0.15) {
          // Now and then a controller edits the object with a plain update.
          const before = setsOf(live);
          const prevObj = live as unknown as JsonMap;
          const next = update(
            live,
            (x) => {
              const sp = (x.spec ??= {}) as JsonMap;
              if (r() < 0.5) sp.replicas = Math.floor(r() * 4);
              const data = { ...((sp.data as JsonMap | undefined) ?? {}) };
              const k = `k${1 + Math.floor(r() * 3)}`;
              if (r() < 0.5) delete data[k];
              else data[k] = r() < 0.5 ? 'v1' : 'v3';
              if (Object.keys(data).length) sp.data = data;
              else delete sp.data;
            },
            'ctl',
            { now: T(step) },
          );
          const after = setsOf(next);
          for (const [other, vs] of before) {
            const now = after.get(other)?.set ?? new FieldSet();
            if (other.includes('"ctl"')) continue;
            for (const path of vs.set.difference(now).paths())
              assert.ok(!valuesEqual(valueAt(ctx.type, prevObj, path), valueAt(ctx.type, next as unknown as JsonMap, path)), `update took ${pathString(path)} without changing it`);
          }
          for (const vs of after.values())
            for (const path of leafPaths(vs.set)) if (!isGranularContainer(path)) assert.notEqual(valueAt(ctx.type, next as unknown as JsonMap, path), undefined, `owned ${pathString(path)} is missing`);
          live = next;
          continue;
        }
        const m = managers[Math.floor(r() * managers.length)]!;
        const intent = intents.has(m) && r() < 0.3 ? intents.get(m)! : randomIntent(r);
        const force = r() < 0.3;
        const before = setsOf(live);
        let next: KObject;
        try {
          next = apply(live, intent, m, { force, now: T(step) });
        } catch (e) {
          assert.ok(e instanceof ApplyConflictError && !force, `seed ${seed} step ${step}: ${String(e)}`);
          conflicts++;
          // Every conflict names a field its manager owns.
          for (const c of e.raw) assert.ok(before.get(c.id)?.set.has(c.path), `conflict on an unowned path ${pathString(c.path)}`);
          continue;
        }
        applied++;
        const after = setsOf(next);
        const id = idOf(m);
        const liveObj = (live ?? {}) as JsonMap;
        const nextObj = next as unknown as JsonMap;

        // The applier owns exactly its configuration's fields (identity stripped).
        const cfg = { apiVersion: 'v1', kind: 'Widget', ...intent, metadata: { name: 'w', ...((intent.metadata as JsonMap | undefined) ?? {}) } };
        const want = toFieldSet(ctx.type, cfg).difference(FieldSet.of(makePath('apiVersion'), makePath('kind'), makePath('metadata'), makePath('metadata', 'name')));
        assert.ok((after.get(id)?.set ?? new FieldSet()).equals(want), `seed ${seed} step ${step}: applier's set`);

        for (const [other, vs] of before) {
          if (other === id) continue;
          const now = after.get(other)?.set ?? new FieldSet();
          // Without force nobody loses anything; with force only fields whose value changed.
          if (!force) assert.ok(now.equals(vs.set), `seed ${seed} step ${step}: ${other} lost fields without force`);
          for (const path of vs.set.difference(now).paths()) {
            assert.ok(force, 'only a forced apply takes fields');
            assert.ok(!valuesEqual(valueAt(ctx.type, liveObj, path), valueAt(ctx.type, nextObj, path)), `${other} lost ${pathString(path)} whose value did not change`);
          }
          // Values of fields others still own never change.
          for (const path of leafPaths(now)) {
            if (isGranularContainer(path)) continue;
            assert.deepEqual(valueAt(ctx.type, nextObj, path), valueAt(ctx.type, liveObj, path), `seed ${seed} step ${step}: ${other}'s ${pathString(path)} changed`);
          }
        }

        // What the applier stopped applying is gone unless someone else owns it.
        const prev = before.get(id)?.set;
        if (prev) {
          let othersOwn = new FieldSet();
          for (const [other, vs] of after) if (other !== id) othersOwn = othersOwn.union(vs.set);
          for (const path of leafPaths(prev.difference(after.get(id)?.set ?? new FieldSet()))) {
            if (othersOwn.has(path)) continue;
            assert.equal(valueAt(ctx.type, nextObj, path), undefined, `seed ${seed} step ${step}: ${pathString(path)} was not pruned`);
          }
          // The pruning shortcut (nothing dropped) agrees with the full computation.
          const ms: ManagerSets = reconcileManagers(ctx, new Map(before));
          const merged = mergeValues(ctx.type, liveObj as JsonValue, cfg as JsonValue)!;
          ms.set(id, { set: toFieldSet(ctx.type, cfg), apiVersion: 'v1', applied: true });
          assert.ok(valuesEqual(prune(ctx, merged, ms, id, before.get(id)), prune(ctx, merged, ms, id, before.get(id), true)), 'prune shortcut');
        }

        // Every owned leaf exists in the object. (A container an update created stays owned when
        // an apply prunes its last entry: the reference leaves it null, which decoding drops.)
        for (const vs of after.values())
          for (const path of leafPaths(vs.set)) if (!isGranularContainer(path)) assert.notEqual(valueAt(ctx.type, nextObj, path), undefined, `owned ${pathString(path)} is missing`);

        // Applying the same intent again is a no-op.
        assert.equal(apply(next, intent, m, { now: T(step + 1000) }), next, `seed ${seed} step ${step}: re-apply changed the object`);
        intents.set(m, intent);
        live = next;
      }
      assert.ok(applied > 30 && conflicts > 5, `the sequence exercised both paths (${applied} applied, ${conflicts} conflicts)`);
    });
  }
});
