// kubectl with custom resources (newest kubectl, kubernetes profile): a CRD applied and waited for,
// its objects applied (client-side and server-side) and listed by short name and category with
// the CRD's printer columns, validation errors as kube-apiserver words them, and the paths gone
// once the CRD is deleted. A file of its own: kubectl runs take most of its time.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { api, testServer } from '../support/server.ts';
import { kubectlFor, tableRows } from '../support/kubectl.ts';
import { widgetCrd } from '../support/crd.ts';

const server = await testServer({ naming: 'kubernetes' });

describe('kubectl', () => {
  test('kubectl: apply a CRD, wait for it, apply and get its resources by plural, short name and category, server-side apply, delete the CRD', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubectl' } })).status, 201);
    const k = kubectlFor(server, { namespace: 'kubectl', label: 'crd-kubectl' });
    // Names no other test's CRD uses: kubectl resolves a name to the first group that has it.
    const crd = widgetCrd('kubectl.example.com', { plural: 'sprockets', kind: 'Sprocket', shortNames: ['spk'], categories: ['machinery'] });
    await k.ok(['apply', '-f', k.file('crd.yaml', stringify(crd))]);
    await k.ok(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=20s']);
    const widget = (name: string, size: number) => stringify({ apiVersion: 'kubectl.example.com/v1', kind: 'Sprocket', metadata: { name }, spec: { size, colour: 'green' } });
    await k.ok(['apply', '-f', k.file('w1.yaml', widget('one', 2))]);
    await k.ok(['apply', '--server-side', '-f', k.file('w2.yaml', widget('two', 7))]);
    for (const name of ['spk', 'machinery']) {
      const rows = tableRows(await k.ok(['get', name]));
      assert.deepEqual(rows[0], ['NAME', 'SIZE', 'AGE'], name);
      assert.deepEqual(rows.slice(1).map((r) => r.slice(0, 2)), [['one', '2'], ['two', '7']], name);
    }
    // A server-side apply by another manager that changes an owned field conflicts.
    const conflict = await k.run(['apply', '--server-side', '--field-manager=other', '-f', k.file('w2b.yaml', widget('two', 8))]);
    assert.notEqual(conflict.code, 0, conflict.stdout);
    assert.match(conflict.stderr, /conflict/i);
    const bad = await k.run(['apply', '-f', k.file('bad.yaml', widget('three', 20))]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.size: Invalid value: 20: spec\.size in body should be less than or equal to 10/);
    await k.ok(['delete', 'crd', crd.metadata.name]);
    // (kubectl's discovery cache may still name the resource: the path is what must be gone.)
    const raw = await k.run(['get', '--raw', '/apis/kubectl.example.com/v1']);
    assert.notEqual(raw.code, 0);
    assert.match(raw.stderr, /NotFound/);
  });
});

