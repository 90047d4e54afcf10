// The Scale's managed fields mapped from an object's and back (src/ssa/scale.ts), rule by rule.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { managedFieldsFromScale, managedFieldsToScale, type ReplicasPaths } from '../../src/ssa/scale.ts';

const T1 = '2026-01-02T03:04:05Z';
const T2 = '2026-01-02T03:04:06Z';
const replicas = { 'f:spec': { 'f:replicas': {} } };
const replicasAndSize = { 'f:spec': { 'f:replicas': {}, 'f:size': {} } };
const size = { 'f:spec': { 'f:size': {} } };

/** v1 and v2 keep the desired count at different paths; v0 has no scale subresource. */
const PATHS: ReplicasPaths = new Map([
  ['example.com/v1', ['spec', 'replicas']],
  ['example.com/v2', ['spec', 'count']],
  ['example.com/v0', null],
]);

const entry = (manager: string, operation: 'Apply' | 'Update', apiVersion: string, fieldsV1: object, extra: { time?: string; subresource?: string } = {}) => ({
  manager,
  operation,
  apiVersion,
  ...(extra.time ? { time: extra.time } : {}),
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...(extra.subresource ? { subresource: extra.subresource } : {}),
});

describe('managed fields of a Scale', () => {
  it('to the Scale: only owners of the replicas path at a version whose path is known, each owning spec.replicas at autoscaling/v1 with its time', () => {
    const object = [
      entry('applier', 'Apply', 'example.com/v1', replicasAndSize, { time: T1 }),
      entry('sizer', 'Update', 'example.com/v1', size, { time: T1 }),
      entry('counter', 'Update', 'example.com/v2', { 'f:spec': { 'f:count': {} } }, { time: T2 }),
      entry('old', 'Update', 'example.com/v0', replicas, { time: T1 }),
      entry('unknown', 'Update', 'example.com/v9', replicas, { time: T1 }),
    ];
    assert.deepEqual(managedFieldsToScale(object, PATHS), [
      entry('applier', 'Apply', 'autoscaling/v1', replicas, { time: T1 }),
      entry('counter', 'Update', 'autoscaling/v1', replicas, { time: T2 }),
    ]);
    assert.deepEqual(managedFieldsToScale(undefined, PATHS), []);
  });

  it('back to the object: kept, stolen, added, or dropped', () => {
    const object = [
      entry('applier', 'Apply', 'example.com/v1', replicasAndSize, { time: T1 }),
      entry('updater', 'Update', 'example.com/v1', replicas, { time: T1 }),
      entry('old', 'Update', 'example.com/v0', replicas, { time: T1 }),
      entry('unknown', 'Update', 'example.com/v9', size, { time: T1 }),
    ];
    const scale = [
      // The applier is one identity on both sides (an Apply entry's identity has no version).
      entry('applier', 'Apply', 'autoscaling/v1', replicas, { time: T2, subresource: '' }),
      // The updater is another identity on the Scale (its version is part of it).
      entry('updater', 'Update', 'autoscaling/v1', replicas, { time: T2 }),
      entry('scaler', 'Update', 'autoscaling/v1', replicas, { time: T2, subresource: 'scale' }),
      entry('status-only', 'Update', 'autoscaling/v1', { 'f:status': { 'f:replicas': {} } }, { time: T2, subresource: 'scale' }),
    ];
    assert.deepEqual(managedFieldsFromScale(object, scale, 'example.com/v1', PATHS), [
      // The applier's entry stays as the object had it, time included.
      entry('applier', 'Apply', 'example.com/v1', replicasAndSize, { time: T1 }),
      // New on the object: no time (the object had none for these identities).
      entry('scaler', 'Update', 'example.com/v1', replicas, { subresource: 'scale' }),
      entry('updater', 'Update', 'example.com/v1', replicas),
      // A version without the scale subresource keeps its entry; the object's updater entry lost
      // the replicas and, with nothing left, is gone; an unknown version is dropped.
      entry('old', 'Update', 'example.com/v0', replicas, { time: T1 }),
    ]);
  });

  it('written through another version: new owners own that version\'s path', () => {
    const object = [entry('creator', 'Update', 'example.com/v1', replicasAndSize, { time: T1 })];
    const scale = [entry('scaler', 'Update', 'autoscaling/v1', replicas, { time: T2, subresource: 'scale' })];
    assert.deepEqual(managedFieldsFromScale(object, scale, 'example.com/v2', PATHS), [
      entry('scaler', 'Update', 'example.com/v2', { 'f:spec': { 'f:count': {} } }, { subresource: 'scale' }),
      entry('creator', 'Update', 'example.com/v1', size, { time: T1 }),
    ]);
  });

  it('stored managed fields that do not decode are an error', () => {
    assert.throws(() => managedFieldsToScale([{ manager: 'x', operation: 'Sideways', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1', fieldsV1: {} }], PATHS), /failed to decode managed fields/);
  });
});
