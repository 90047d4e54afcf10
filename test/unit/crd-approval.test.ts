// The API approval annotation of CRDs in protected groups, in each naming profile's spelling:
// `api-approved.kubernetes.io` for `*.k8s.io` / `*.kubernetes.io` groups in the kubernetes
// profile, `api-approved.orch.io` for `*.orch.io` groups in the orch profile (the HTTP tests
// cover the kubernetes profile's messages).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namingProfile } from '../../src/naming.ts';
import { validateCrd, type CrdObject } from '../../src/registry/kinds/custom-resource-definition.ts';
import { loadCel } from '../../src/cel/load.ts';

// Validation rules are compiled by the expression language, loaded on first need.
await loadCel();

const crd = (group: string, annotations?: Record<string, string>): CrdObject => ({
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `things.${group}`, ...(annotations ? { annotations } : {}) },
  spec: {
    group,
    scope: 'Cluster',
    names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  },
  status: { storedVersions: ['v1'] },
});

const approval = (o: CrdObject, profile: 'orch' | 'kubernetes') => validateCrd(o, namingProfile(profile)).filter((e) => e.field.startsWith('metadata.annotations')).map((e) => e.field);

test('the orch profile protects its own domain with its own annotation', () => {
  assert.deepEqual(approval(crd('widgets.orch.io'), 'orch'), ['metadata.annotations[api-approved.orch.io]']);
  assert.deepEqual(approval(crd('orch.io'), 'orch'), ['metadata.annotations[api-approved.orch.io]']);
  assert.deepEqual(approval(crd('widgets.orch.io', { 'api-approved.orch.io': 'https://example.com/review/1' }), 'orch'), []);
  assert.deepEqual(approval(crd('widgets.k8s.io'), 'orch'), []);
  assert.deepEqual(approval(crd('example.com'), 'orch'), []);
});

test('the kubernetes profile protects k8s.io and kubernetes.io', () => {
  assert.deepEqual(approval(crd('widgets.kubernetes.io'), 'kubernetes'), ['metadata.annotations[api-approved.kubernetes.io]']);
  assert.deepEqual(approval(crd('x.k8s.io', { 'api-approved.kubernetes.io': 'unapproved, testing only' }), 'kubernetes'), []);
  assert.deepEqual(approval(crd('widgets.orch.io'), 'kubernetes'), []);
});
