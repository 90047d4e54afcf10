// application/yaml: request bodies for create and update, responses for reads, writes and errors,
// and 406 for a YAML watch (YAML has no stream framing), over HTTP, each response decoded with the
// `yaml` package independently of the server's encoder.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { api, testServer, waitFor } from '../support/server.ts';
import { widgetCrd } from '../support/crd.ts';

const server = await testServer();
const LEASES = '/apis/coordination.orch.io/v1/namespaces/default/leases';
const YAML = { Accept: 'application/yaml' };

async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { method, headers, body });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text(), warning: res.headers.get('warning') };
}

describe('YAML responses', () => {
  test('get and list answer YAML that decodes to the JSON answer', async () => {
    assert.equal((await api(server, 'POST', LEASES, { metadata: { name: 'y1', labels: { b: '2', a: '1' } }, spec: { holderIdentity: 'me', leaseDurationSeconds: 10 } })).status, 201);
    const json = await api(server, 'GET', `${LEASES}/y1`);
    const y = await raw('GET', `${LEASES}/y1`, undefined, YAML);
    assert.equal(y.status, 200);
    assert.equal(y.type, 'application/yaml');
    assert.deepEqual(parse(y.text), json.body);
    // Keys sorted, lists at their key's indentation, as Kubernetes writes YAML.
    assert.match(y.text, /^apiVersion: coordination\.orch\.io\/v1\nkind: Lease\nmetadata:\n/);
    assert.match(y.text, /labels:\n {4}a: "1"\n {4}b: "2"\n/);
    const list = await raw('GET', LEASES, undefined, YAML);
    assert.equal(list.type, 'application/yaml');
    const parsed = parse(list.text) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(parsed.kind, 'LeaseList');
    assert.ok(parsed.items.some((i) => i.metadata.name === 'y1'));
  });

  test('errors are YAML Status objects when YAML was asked for', async () => {
    const r = await raw('GET', `${LEASES}/missing`, undefined, YAML);
    assert.equal(r.status, 404);
    assert.equal(r.type, 'application/yaml');
    const status = parse(r.text) as { kind: string; reason: string; code: number };
    assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'NotFound', 404]);
  });

  test('a watch cannot stream YAML: 406, unless JSON is also accepted', async () => {
    const r = await raw('GET', `${LEASES}?watch=1&timeoutSeconds=1`, undefined, YAML);
    assert.equal(r.status, 406);
    assert.match(r.text, /application\/json/);
    const both = await fetch(`${server.url}${LEASES}?watch=1&timeoutSeconds=1`, { headers: { Accept: 'application/yaml, application/json' } });
    assert.equal(both.status, 200);
    assert.equal(both.headers.get('content-type'), 'application/json');
    await both.body?.cancel();
  });
});

describe('YAML request bodies', () => {
  test('create and update in YAML; the answer follows Accept', async () => {
    const body = 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: y2\nspec:\n  holderIdentity: yaml-writer\n  leaseDurationSeconds: 15\n';
    const c = await raw('POST', LEASES, body, { 'Content-Type': 'application/yaml' });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.type, 'application/json');
    assert.equal(JSON.parse(c.text).spec.holderIdentity, 'yaml-writer');
    const u = await raw('PUT', `${LEASES}/y2`, body.replace('yaml-writer', 'yaml-updater'), { 'Content-Type': 'application/yaml', Accept: 'application/yaml' });
    assert.equal(u.status, 200, u.text);
    assert.equal(u.type, 'application/yaml');
    assert.equal((parse(u.text) as { spec: { holderIdentity: string } }).spec.holderIdentity, 'yaml-updater');
  });

  test('plain timestamps stay the strings they were written as, and 1:20 is no base-60 number (as Kubernetes reads YAML)', async () => {
    const body =
      'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: y-times\n  annotations: {day: 2026-01-02, clock: 1:20, octal: "0777"}\n' +
      'spec:\n  holderIdentity: 1:20\n  acquireTime: 2026-01-02T03:04:05.123456Z\n  renewTime: 2026-01-02 03:04:05.5Z\n';
    const c = await raw('POST', LEASES, body, { 'Content-Type': 'application/yaml' });
    // renewTime is not RFC 3339 (a space, not T): refused as a MicroTime, not turned into a Date.
    assert.equal(c.status, 400, c.text);
    assert.match(JSON.parse(c.text).message, /renewTime/);
    assert.equal((await api(server, 'GET', `${LEASES}/y-times`)).status, 404);
    const ok = await raw('POST', LEASES, body.replace(/  renewTime.*\n/, ''), { 'Content-Type': 'application/yaml' });
    assert.equal(ok.status, 201, ok.text);
    const got = JSON.parse(ok.text);
    assert.equal(got.spec.acquireTime, '2026-01-02T03:04:05.123456Z');
    assert.equal(got.spec.holderIdentity, '1:20');
    assert.deepEqual(got.metadata.annotations, { day: '2026-01-02', clock: '1:20', octal: '0777' });
  });

  test('a float needs a digit, as Kubernetes reads YAML: e1, .e1 and . are strings; 1e1 and .5 are numbers', async () => {
    const body = 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: e1\n  annotations: {a: .e1, b: ., c: -e1}\nspec:\n  holderIdentity: E5\n  leaseDurationSeconds: 1e1\n';
    const c = await raw('POST', LEASES, body, { 'Content-Type': 'application/yaml' });
    assert.equal(c.status, 201, c.text);
    const got = JSON.parse(c.text);
    assert.equal(got.metadata.name, 'e1');
    assert.deepEqual(got.metadata.annotations, { a: '.e1', b: '.', c: '-e1' });
    assert.equal(got.spec.holderIdentity, 'E5');
    assert.equal(got.spec.leaseDurationSeconds, 10);
  });

  test('duplicate keys: a warning by default, 400 with fieldValidation=Strict (nothing stored)', async () => {
    const body = 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: NAME\nspec:\n  holderIdentity: a\n  holderIdentity: b\n';
    const warned = await raw('POST', LEASES, body.replace('NAME', 'y3'), { 'Content-Type': 'application/yaml' });
    assert.equal(warned.status, 201, warned.text);
    assert.match(warned.warning ?? '', /Map keys must be unique/);
    const strict = await raw('POST', `${LEASES}?fieldValidation=Strict`, body.replace('NAME', 'y4'), { 'Content-Type': 'application/yaml' });
    assert.equal(strict.status, 400);
    assert.match(JSON.parse(strict.text).message, /^error strict decoding YAML: /);
    assert.equal((await api(server, 'GET', `${LEASES}/y4`)).status, 404);
  });

  test('malformed YAML, a non-object and a wrong type are 400; nothing stored', async () => {
    for (const [body, pattern] of [
      ['metadata: [unclosed', /^error decoding YAML: /],
      ['- just\n- a list\n', /must be a JSON object|cannot be handled/],
      ['apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata: {name: y5}\nspec: {leaseDurationSeconds: "ten"}\n', /must be of type integer/],
    ] as const) {
      const r = await raw('POST', LEASES, body, { 'Content-Type': 'application/yaml' });
      assert.equal(r.status, 400, `${body}: ${r.text}`);
      assert.match(JSON.parse(r.text).message, pattern);
    }
    assert.equal((await api(server, 'GET', `${LEASES}/y5`)).status, 404);
  });

  test('an alias bomb does not expand without bounds', async () => {
    let body = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 10; i++) body += `a${i}: &a${i} [*a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}, *a${i - 1}]\n`;
    const r = await raw('POST', LEASES, body, { 'Content-Type': 'application/yaml' });
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.text).message, /^error decoding YAML: /);
  });

  test('an alias bomb after half a megabyte of plain YAML is refused by the same bound, with the same message', async () => {
    let pad = 'apiVersion: coordination.orch.io/v1\nkind: Lease\nmetadata:\n  name: bomb\n  annotations:\n';
    for (let i = 0; pad.length < 512 * 1024; i++) pad += `    a${i}: "v"\n`;
    let bomb = 'spec:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 30; i++) bomb += `  l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]\n`;
    const started = Date.now();
    const r = await raw('POST', LEASES, pad + bomb, { 'Content-Type': 'application/yaml' });
    assert.equal(r.status, 400, r.text.slice(0, 300));
    assert.equal(JSON.parse(r.text).message, 'error decoding YAML: Excessive alias count indicates a resource exhaustion attack');
    assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    assert.equal((await api(server, 'GET', `${LEASES}/bomb`)).status, 404);
  });
});

describe('YAML request bodies: how values are read', () => {
  test('YAML 1.1 scalars into a free-form field, as kube-apiserver reads them; Windows line ends', async () => {
    const kube = await testServer({ naming: 'kubernetes' });
    assert.equal((await api(kube, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd('yaml.example.com'))).status, 201);
    const widgets = '/apis/yaml.example.com/v1/namespaces/default/widgets';
    await waitFor('widgets served', async () => (await api(kube, 'GET', widgets)).status === 200);
    const extra: [string, unknown][] = [
      ['yes', true], ['Off', false], ['y', true], ['0777', 511], ['0x1F', 31], ['0b101', 5], ['1_000', 1000], ['+12', 12], ['089', 89], ['.5', 0.5], ['1e3', 1000],
      ['-1.5e-1', -0.15], ['~', null], ['null', null], ['1:20', '1:20'], ['2026-01-02', '2026-01-02'], ['e1', 'e1'], ['0o17', '0o17'], ['"yes"', 'yes'], ["'0777'", '0777'],
      ['[a, 1, on]', ['a', 1, true]], ['{k: no}', { k: false }], ['|\n      two\n      lines', 'two\nlines\n'], ['>-\n      folded\n      text', 'folded text'],
    ];
    const body = (name: string) =>
      `apiVersion: yaml.example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n  size: 3\n  extra:\n` +
      extra.map(([text], i) => `    k${i}: ${text}\n`).join('') +
      // Keys that are not strings name properties as they always did: 1 → "1", true → "true", ~ → "".
      '    nested:\n      1: one\n      true: t\n      ~: nothing\n';
    const want = { ...Object.fromEntries(extra.map(([, v], i) => [`k${i}`, v])), nested: { 1: 'one', true: 't', '': 'nothing' } };
    // CR LF line ends read as LF ones (block scalars included).
    for (const [name, text] of [['scalars', body('scalars')], ['scalars-crlf', body('scalars-crlf').replace(/\n/g, '\r\n')]] as const) {
      const r = await fetch(kube.url + widgets, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: text });
      const answer = await r.text();
      assert.equal(r.status, 201, `${name}: ${answer}`);
      assert.deepEqual((JSON.parse(answer) as { spec: { extra: unknown } }).spec.extra, want, name);
    }
  });
});
