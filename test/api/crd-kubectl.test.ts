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

  test('kubectl: printer columns with a JSONPath filter and blank cells for missing values, scale, field selectors on selectable fields', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubectl-serve' } })).status, 201);
    const k = kubectlFor(server, { namespace: 'kubectl-serve', label: 'crd-kubectl-serve' });
    const crd = widgetCrd('serve.kubectl.example.com', { plural: 'gears', kind: 'Gear', shortNames: ['gr'], categories: [] });
    const v = crd.spec.versions[0];
    Object.assign(v.schema.openAPIV3Schema.properties.spec.properties, { replicas: { type: 'integer' } });
    v.schema.openAPIV3Schema.properties.status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    v.subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    v.additionalPrinterColumns = [
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Colour', type: 'string', jsonPath: '.spec.colour', priority: 1 },
    ];
    v.selectableFields = [{ jsonPath: '.spec.colour' }];
    await k.ok(['apply', '--server-side', '-f', k.file('crd.yaml', stringify(crd))]);
    await k.ok(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=20s']);
    const gear = (name: string, colour: string) => stringify({ apiVersion: 'serve.kubectl.example.com/v1', kind: 'Gear', metadata: { name }, spec: { size: 1, colour, replicas: 1 } });
    await k.ok(['apply', '-f', k.file('g1.yaml', gear('one', 'red'))]);
    await k.ok(['apply', '-f', k.file('g2.yaml', gear('two', 'blue'))]);
    await k.ok(['patch', 'gr', 'one', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True' }] } })]);
    await k.ok(['scale', 'gr/two', '--replicas=3']);
    // The write through /scale is recorded on the object, owning its replicas, as kube-apiserver maps it.
    const two = JSON.parse(await k.ok(['get', 'gr', 'two', '-o', 'json', '--show-managed-fields']));
    const entries = two.metadata.managedFields.map((e: { manager: string; operation: string; subresource?: string; fieldsV1: unknown }) => [e.manager, e.operation, e.subresource ?? '', JSON.stringify(e.fieldsV1)]);
    const viaScale = entries.filter((e: string[]) => e[2] === 'scale');
    assert.deepEqual(viaScale.map((e: string[]) => e.slice(1)), [['Update', 'scale', '{"f:spec":{"f:replicas":{}}}']], JSON.stringify(entries));
    assert.match(viaScale[0][0], /^kubectl/);
    assert.ok(!entries.some((e: string[]) => e[2] === '' && e[3].includes('f:replicas')), JSON.stringify(entries));
    // A custom resource's column with nothing to show is a null cell, as kube-apiserver sends it;
    // kubectl leaves it blank (it prints <none> only for its own client-side columns).
    const out = await k.ok(['get', 'gr']);
    assert.match(out, /^NAME\s+READY\s+REPLICAS\none\s+True\s+1\ntwo\s+3\n$/);
    assert.deepEqual(tableRows(await k.ok(['get', 'gr', 'two', '--subresource=scale'])), [['NAME', 'DESIRED', 'AVAILABLE'], ['two', '3', '0']]);
    const wide = tableRows(await k.ok(['get', 'gr', '-o', 'wide']));
    assert.deepEqual(wide[0], ['NAME', 'READY', 'REPLICAS', 'COLOUR']);
    const blue = tableRows(await k.ok(['get', 'gr', '--field-selector', 'spec.colour=blue']));
    assert.deepEqual(blue.slice(1).map((r) => r[0]), ['two']);
    const refused = await k.run(['get', 'gr', '--field-selector', 'spec.size=1']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /field label not supported: spec\.size/);
  });

  test('kubectl: rules real CRDs write (has() of an indexed element, isIP, durations of unbounded strings) and an RE2 (?i) pattern', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubectl-rules' } })).status, 201);
    const k = kubectlFor(server, { namespace: 'kubectl-rules', label: 'crd-kubectl-rules' });
    const crd = widgetCrd('rules.kubectl.example.com', { plural: 'trails', kind: 'Trail', shortNames: ['trl'], categories: [] });
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = {
      type: 'object',
      properties: {
        hostnames: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 253 }, 'x-kubernetes-validations': [{ rule: 'self.all(h, !isIP(h))', message: 'hostnames must be names, not IP addresses' }] },
        mode: { type: 'string', pattern: '^(?i)(fast|safe)$' },
        segments: {
          type: 'array',
          maxItems: 16,
          items: {
            type: 'object',
            properties: {
              matches: { type: 'array', maxItems: 8, items: { type: 'object', properties: { path: { type: 'object', properties: { kind: { type: 'string', enum: ['Exact', 'Prefix'] } } } } } },
              timeouts: {
                type: 'object',
                properties: { total: { type: 'string' }, attempt: { type: 'string' } },
                'x-kubernetes-validations': [{ rule: '!(has(self.total) && has(self.attempt)) || duration(self.attempt) <= duration(self.total)', message: 'an attempt may not outlast the total' }],
              },
            },
            'x-kubernetes-validations': [{ rule: "size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.kind == 'Prefix'", message: 'a single match must be a prefix' }],
          },
        },
      },
    };
    await k.ok(['apply', '--server-side', '-f', k.file('crd.yaml', stringify(crd))]);
    await k.ok(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=20s']);
    const trail = (name: string, spec: unknown) => k.file(`${name}.yaml`, stringify({ apiVersion: 'rules.kubectl.example.com/v1', kind: 'Trail', metadata: { name }, spec }));
    await k.ok(['apply', '--server-side', '-f', trail('good', { hostnames: ['example.com'], mode: 'SAFE', segments: [{ matches: [{ path: { kind: 'Prefix' } }], timeouts: { total: '10s', attempt: '2s' } }, { matches: [] }] })]);
    const refused = async (name: string, spec: unknown, message: RegExp) => {
      const r = await k.run(['apply', '--server-side', '-f', trail(name, spec)]);
      assert.notEqual(r.code, 0, `${name} was accepted`);
      assert.match(r.stderr, message, name);
    };
    await refused('ip', { hostnames: ['192.0.2.1'] }, /spec\.hostnames: Invalid value: "array": hostnames must be names, not IP addresses/);
    await refused('slow', { mode: 'slow' }, /spec\.mode: Invalid value: "slow": spec\.mode in body should match '\^\(\?i\)\(fast\|safe\)\$'/);
    await refused('exact', { segments: [{ matches: [{ path: { kind: 'Exact' } }] }] }, /spec\.segments\[0\]: Invalid value: "object": a single match must be a prefix/);
    await refused('long', { segments: [{ timeouts: { total: '1s', attempt: '5s' } }] }, /spec\.segments\[0\]\.timeouts: Invalid value: "object": an attempt may not outlast the total/);
    assert.deepEqual(tableRows(await k.ok(['get', 'trl'])).slice(1).map((r) => r[0]), ['good']);
  });
});
