// The feature gates as kube-apiserver treats them: unknown gates and bad values refused, locked GA
// gates only at their default (with a warning), deprecated gates warned about, All* switches only
// reaching unlocked alpha or beta gates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { featureGateStates, parseFeatureGates } from '../../src/machinery/feature-gates.ts';

test('a locked GA gate can be set only to its default, with a warning', () => {
  assert.throws(() => parseFeatureGates('ConsistentListFromCache=false'), { message: 'cannot set feature gate ConsistentListFromCache to false, feature is locked to true' });
  const warned: string[] = [];
  const g = parseFeatureGates('ConsistentListFromCache=true', (m) => warned.push(m));
  assert.equal(g.ConsistentListFromCache, true);
  assert.deepEqual(warned, ['Setting GA feature gate ConsistentListFromCache=true. It will be removed in a future release.']);
});

test('a deprecated gate is warned about; a locked deprecated one keeps its default', () => {
  const warned: string[] = [];
  assert.equal(parseFeatureGates('SeparateCacheWatchRPC=true', (m) => warned.push(m)).SeparateCacheWatchRPC, true);
  assert.deepEqual(warned, ['Setting deprecated feature gate SeparateCacheWatchRPC=true. It will be removed in a future release.']);
  assert.throws(() => parseFeatureGates('WatchFromStorageWithoutResourceVersion=true'), /feature is locked to false/);
});

test('alpha and beta gates take either value silently; unknown gates and bad values are refused', () => {
  const warned: string[] = [];
  const g = parseFeatureGates('CBORServingAndStorage=true,WatchList=false', (m) => warned.push(m));
  assert.equal(g.CBORServingAndStorage, true);
  assert.equal(g.WatchList, false);
  assert.deepEqual(warned, []);
  assert.throws(() => parseFeatureGates('NoSuchGate=true'), { message: 'unrecognized feature gate: NoSuchGate' });
  assert.throws(() => parseFeatureGates('toString=true'), { message: 'unrecognized feature gate: toString' });
  assert.throws(() => parseFeatureGates('AllBeta=maybe'), /invalid boolean/);
});

test('AllAlpha and AllBeta reach only unlocked gates of their stage', () => {
  const off = parseFeatureGates('AllBeta=false');
  assert.equal(off.WatchList, false);
  assert.equal(off.APIResponseCompression, false);
  assert.equal(off.ConsistentListFromCache, true, 'GA and locked');
  const on = parseFeatureGates('AllAlpha=true');
  assert.equal(on.CBORServingAndStorage, true);
  assert.equal(on.WatchFromStorageWithoutResourceVersion, false, 'deprecated and locked');
});

test('the states the metric reports: GA as the empty stage', () => {
  const states = featureGateStates(parseFeatureGates('CBORServingAndStorage=true'));
  assert.deepEqual(states.find((s) => s.name === 'CBORServingAndStorage'), { name: 'CBORServingAndStorage', stage: 'ALPHA', enabled: true });
  assert.deepEqual(states.find((s) => s.name === 'ConsistentListFromCache'), { name: 'ConsistentListFromCache', stage: '', enabled: true });
  assert.deepEqual(states.find((s) => s.name === 'SeparateCacheWatchRPC'), { name: 'SeparateCacheWatchRPC', stage: 'DEPRECATED', enabled: false });
});
