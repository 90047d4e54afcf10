// Audit with a policy file and the log backend: exactly the expected events for a scripted
// sequence of requests (levels, stages, a watch, an impersonated request, an error), Secrets never
// recorded beyond Metadata, rotation keeping the configured count, and bad flags refused at start.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { issueCert, makeCa } from '../support/certs.ts';
import { api, auditIDOf, testServer, waitFor } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { withToken } from '../support/identity.ts';
import { tlsFor } from '../support/tls-clients.ts';
import { Pool } from 'undici';
import { ALL_VERBS, type KindDefinition } from '../../src/registry/definition.ts';
import { objectSchema } from '../../src/registry/schemas.ts';

const dir = tempDir('audit');
const policy = join(dir, 'policy.yaml');
writeFileSync(
  policy,
  `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/metrics"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["secrets", "configmaps"]
  - level: Request
    verbs: ["create", "patch"]
    resources:
      - group: coordination.orch.io
  - level: Metadata
    omitStages: []
    users: ["system:admin"]
  - level: Metadata
    omitStages: [ResponseStarted]
`,
);
const logPath = join(dir, 'log', 'audit.log');
/** A kind whose validation has a bug: creating one throws what is not a Status (kube-apiserver: a panic). */
const faultyKind: KindDefinition = {
  group: 'faults.example.com',
  version: 'v1',
  kind: 'Faulty',
  resource: 'faulties',
  singular: 'faulty',
  namespaced: false,
  verbs: ALL_VERBS,
  nameRule: 'dns-subdomain',
  tracksGeneration: false,
  allowCreateOnUpdate: false,
  schema: objectSchema({}),
  strategy: {
    validate: () => {
      throw new TypeError("Cannot read properties of undefined (reading 'spec')");
    },
  },
};
const server = await testServer({ auditPolicyFile: policy, auditLog: { path: logPath }, extraKinds: [faultyKind], authentication: { anonymousAuth: false }, runtimeConfig: 'coordination.orch.io/v1alpha2=true', log: () => {} });
const NS = 'audited';
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

interface AuditEvent {
  kind: string;
  apiVersion: string;
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username: string; groups?: string[] };
  userAgent?: string;
  impersonatedUser?: { username: string; groups?: string[] };
  objectRef?: Record<string, string>;
  responseStatus?: { code: number; status?: string; reason?: string; message?: string };
  requestObject?: Record<string, unknown>;
  responseObject?: Record<string, unknown>;
  annotations?: Record<string, string>;
  sourceIPs: string[];
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

const events = (): AuditEvent[] =>
  readFileSync(logPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
const ofId = (id: string) => events().filter((e) => e.auditID === id);

describe('audit log', () => {
  test('Request level for a Lease create: the body, the answer code, one ResponseComplete event', async () => {
    const r = await api(server, 'POST', `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'me' } });
    assert.equal(r.status, 201);
    const id = r.headers.get('audit-id')!;
    assert.ok(id, 'every answer carries an Audit-ID');
    const [e, ...more] = ofId(id);
    assert.equal(more.length, 0, 'RequestReceived is omitted by the policy');
    assert.equal(e!.kind, 'Event');
    assert.equal(e!.apiVersion, 'audit.orch.io/v1');
    assert.equal(e!.level, 'Request');
    assert.equal(e!.stage, 'ResponseComplete');
    assert.equal(e!.verb, 'create');
    assert.equal(e!.user.username, 'system:admin');
    assert.deepEqual(e!.objectRef, { resource: 'leases', namespace: NS, name: 'l1', apiGroup: 'coordination.orch.io', apiVersion: 'v1' }, "the name from the request's object");
    assert.deepEqual(e!.responseStatus, { metadata: {}, code: 201 });
    assert.deepEqual(e!.annotations, { 'authorization.orch.io/decision': 'allow', 'authorization.orch.io/reason': '' }, 'system:masters is allowed without a reason');
    assert.equal((e!.requestObject as { spec: { holderIdentity: string } }).spec.holderIdentity, 'me');
    assert.equal(e!.responseObject, undefined, 'Request level: no answer');
    assert.match(e!.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(e!.sourceIPs.length >= 1);
  });

  test('every kind of answer carries the Audit-ID: a watch, a probe, /version, /openapi/v2, a discovery 304', async () => {
    const idOf = async (path: string, headers: Record<string, string> = {}) => (await auditIDOf(server, path, headers)).id;
    assert.ok(await idOf(`/api/v1/namespaces/${NS}/configmaps?watch=true`), 'a watch');
    for (const path of ['/readyz', '/version', '/openapi/v2', '/apis']) assert.ok(await idOf(path), path);
    const discovery = await fetch(`${server.url}/apis`, { headers: { Accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList,application/json' } });
    const etag = discovery.headers.get('etag')!;
    assert.ok(etag);
    const again = await fetch(`${server.url}/apis`, { headers: { Accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList,application/json', 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.ok(again.headers.get('audit-id'), 'a 304');
    assert.equal((await idOf('/version', { 'Audit-ID': 'given' })), 'given');
  });

  test('Metadata level for a read that fails: the Status, no bodies; a client Audit-ID is kept', async () => {
    const r = await api(server, 'GET', `/apis/coordination.orch.io/v1/namespaces/${NS}/leases/missing`, undefined, { 'Audit-ID': 'my-own-id' });
    assert.equal(r.status, 404);
    assert.equal(r.headers.get('audit-id'), 'my-own-id');
    const got = ofId('my-own-id');
    // A rule's omitStages add to the policy's (an empty list clears nothing), as in kube-apiserver.
    assert.deepEqual(got.map((e) => e.stage), ['ResponseComplete']);
    const done = got[0]!;
    assert.equal(done.level, 'Metadata');
    assert.equal(done.responseStatus?.code, 404);
    assert.equal(done.responseStatus?.status, 'Failure');
    assert.equal(done.responseStatus?.reason, 'NotFound');
    assert.equal(done.requestObject, undefined);
  });

  test("a client's Audit-ID is written as Go's encoder writes it: quotes, backslashes and <>& escaped", async () => {
    const id = 'mine<1>&"2"\\3';
    const r = await api(server, 'GET', `/apis/coordination.orch.io/v1/namespaces/${NS}/leases/missing`, undefined, { 'Audit-ID': id });
    assert.equal(r.headers.get('audit-id'), id);
    assert.equal(ofId(id).length, 1);
    const line = readFileSync(logPath, 'utf8').split('\n').find((l) => l.includes('mine\\u003c1'));
    assert.ok(line?.includes('"auditID":"mine\\u003c1\\u003e\\u0026\\"2\\"\\\\3"'), line);
  });

  test('what is not ASCII is written as UTF-8: a user agent, and the next request on the connection', async () => {
    // Node hands a header's bytes over as Latin-1 characters: é is one character, U+00E9.
    const agent = 'agent-\u00e9';
    const first = await api(server, 'GET', `/apis/coordination.orch.io/v1/namespaces/${NS}/leases/missing`, undefined, { 'User-Agent': agent, 'Audit-ID': 'the-agent' });
    const second = await api(server, 'GET', `/apis/coordination.orch.io/v1/namespaces/${NS}/leases/missing`, undefined, { 'User-Agent': 'plain', 'Audit-ID': 'the-plain-agent' });
    assert.equal(first.status, 404);
    assert.equal(second.status, 404);
    assert.equal(ofId('the-agent')[0]?.userAgent, agent);
    assert.equal(ofId('the-plain-agent')[0]?.userAgent, 'plain');
    assert.ok(readFileSync(logPath).includes(Buffer.from('"userAgent":"agent-\u00e9"', 'utf8')), 'é as its two UTF-8 bytes');
  });

  test('Secrets are recorded at Metadata only, whatever the policy; ConfigMaps at RequestResponse', async () => {
    const secret = await api(server, 'POST', `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, stringData: { password: 'hunter2' } });
    assert.equal(secret.status, 201);
    const cm = await api(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { k: 'v' } });
    assert.equal(cm.status, 201);
    const s = ofId(secret.headers.get('audit-id')!)[0]!;
    assert.equal(s.level, 'Metadata');
    assert.ok(!readFileSync(logPath, 'utf8').includes('hunter2'), 'the value is nowhere in the log');
    assert.ok(!readFileSync(logPath, 'utf8').includes(Buffer.from('hunter2').toString('base64')));
    const c = ofId(cm.headers.get('audit-id')!)[0]!;
    assert.equal(c.level, 'RequestResponse');
    assert.deepEqual((c.requestObject as { data: unknown }).data, { k: 'v' });
    assert.equal((c.responseObject as { metadata: { name: string } }).metadata.name, 'c1');
  });

  test('a large ConfigMap is recorded whole at RequestResponse (both bodies, 600 KB each), and the events after it are whole too', async () => {
    const value = `${'ü'.repeat(150 * 1024)}é日本🎉${'x'.repeat(300 * 1024)}`;
    const big = await api(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { v: value } });
    assert.equal(big.status, 201);
    const small = await api(server, 'GET', `/api/v1/namespaces/${NS}/configmaps/c1`);
    assert.equal(small.status, 200);
    const [e] = ofId(big.headers.get('audit-id')!).filter((x) => x.stage === 'ResponseComplete');
    assert.equal((e!.requestObject as { data: { v: string } }).data.v, value);
    assert.equal((e!.responseObject as { data: { v: string } }).data.v, value);
    const after = ofId(small.headers.get('audit-id')!);
    // The policy leaves RequestReceived out.
    assert.deepEqual(after.map((x) => x.stage), ['ResponseComplete']);
    assert.equal(after[0]!.objectRef?.name, 'c1');
    assert.equal((after[0]!.responseObject as { data: unknown }).data !== undefined, true);
  });

  test('an impersonated request records both identities (and, refused, its 403)', async () => {
    const r = await api(server, 'GET', `/api/v1/namespaces/${NS}/configmaps`, undefined, { 'Impersonate-User': 'jane', 'Impersonate-Group': 'devs' });
    assert.equal(r.status, 403, 'jane has no role');
    const e = ofId(r.headers.get('audit-id')!)[0]!;
    assert.equal(e.responseStatus?.code, 403);
    assert.equal(e.responseStatus?.reason, 'Forbidden');
    assert.equal(e.user.username, 'system:admin');
    assert.equal(e.impersonatedUser?.username, 'jane');
    assert.ok(e.impersonatedUser?.groups?.includes('devs'));
    assert.equal(e.annotations?.['authorization.orch.io/decision'], 'forbid', 'the decision is for the impersonated user');
    assert.equal(typeof e.annotations?.['authorization.orch.io/reason'], 'string');
  });

  test("objectRef is completed from the request's object (name, uid, resourceVersion); a generated name is not known yet; a Success Status is copied", async () => {
    const base = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
    const created = await api(server, 'POST', base, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l2' }, spec: { holderIdentity: 'a' } });
    assert.equal(created.status, 201);
    const lease = created.body as { metadata: { uid: string; resourceVersion: string } };
    const put = await api(server, 'PUT', `${base}/l2`, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l2', uid: lease.metadata.uid, resourceVersion: lease.metadata.resourceVersion }, spec: { holderIdentity: 'b' } }, { 'Audit-ID': 'the-put' });
    assert.equal(put.status, 200);
    await waitFor('the update event', () => ofId('the-put').length > 0);
    assert.deepEqual(ofId('the-put')[0]!.objectRef, {
      resource: 'leases',
      namespace: NS,
      name: 'l2',
      uid: lease.metadata.uid,
      apiGroup: 'coordination.orch.io',
      apiVersion: 'v1',
      resourceVersion: lease.metadata.resourceVersion,
    });
    const generated = await api(server, 'POST', base, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { generateName: 'g-' } }, { 'Audit-ID': 'the-generated' });
    assert.equal(generated.status, 201);
    await waitFor('the generated event', () => ofId('the-generated').length > 0);
    assert.deepEqual(ofId('the-generated')[0]!.objectRef, { resource: 'leases', namespace: NS, apiGroup: 'coordination.orch.io', apiVersion: 'v1' }, 'the name is generated after the request is recorded');
    // Refused by validation: the name is known all the same (it was decoded first).
    const invalid = await api(server, 'POST', base, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'Not_Valid' } }, { 'Audit-ID': 'the-invalid' });
    assert.equal(invalid.status, 422);
    await waitFor('the invalid event', () => ofId('the-invalid').length > 0);
    assert.equal(ofId('the-invalid')[0]!.objectRef?.name, 'Not_Valid');
    // A large body is decoded in a write worker: its identity comes back from there.
    const large = await api(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large' }, data: { k: 'x'.repeat(200 * 1024) } }, { 'Audit-ID': 'the-large' });
    assert.equal(large.status, 201);
    await waitFor('the large event', () => ofId('the-large').length > 0);
    assert.equal(ofId('the-large')[0]!.objectRef?.name, 'large');
    // A deletion answered with a Success Status: its bounded fields are the event's responseStatus.
    assert.equal((await api(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone' } })).status, 201);
    const del = await api(server, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/gone`, undefined, { 'Audit-ID': 'the-delete' });
    assert.equal(del.status, 200);
    const answered = del.body as { kind: string; status: string; details: unknown };
    assert.equal(answered.kind, 'Status');
    await waitFor('the delete event', () => ofId('the-delete').length > 0);
    const d = ofId('the-delete')[0]!;
    assert.deepEqual(d.responseStatus, { metadata: {}, status: 'Success', details: answered.details, code: 200 });
    assert.equal(d.annotations?.['authorization.orch.io/decision'], 'allow');
  });

  test('a watch has a ResponseStarted stage when its answer starts, and ResponseComplete when it ends', async () => {
    const w = readWatch(`${server.url}/api/v1/namespaces/${NS}/serviceaccounts?watch=true&timeoutSeconds=1`, { 'Audit-ID': 'the-watch' });
    assert.equal(await w.status, 200);
    await waitFor('ResponseStarted', () => ofId('the-watch').some((e) => e.stage === 'ResponseStarted'));
    await w.ended;
    await waitFor('ResponseComplete', () => ofId('the-watch').some((e) => e.stage === 'ResponseComplete'));
    assert.deepEqual(ofId('the-watch').map((e) => e.stage), ['ResponseStarted', 'ResponseComplete']);
  });

  test("an audit sink of the embedder's own that fails on a panic: the client still gets its 500 Status, the server keeps serving", async () => {
    const failing = await testServer({
      extraKinds: [faultyKind],
      log: () => {},
      audit: {
        requestReceived() {},
        responseComplete() {},
        panicked() {
          throw new Error('the sink is broken');
        },
      },
    });
    try {
      const r = await api(failing, 'POST', '/apis/faults.example.com/v1/faulties', { apiVersion: 'faults.example.com/v1', kind: 'Faulty', metadata: { name: 'f2' } });
      assert.equal(r.status, 500);
      assert.equal((r.body as { kind: string }).kind, 'Status');
      assert.equal((await api(failing, 'GET', '/readyz')).status, 200);
    } finally {
      await failing.close();
    }
  });

  test('a handler that throws (a panic) ends its events with the Panic stage and a 500 of its own, without ResponseComplete', async () => {
    const r = await api(server, 'POST', '/apis/faults.example.com/v1/faulties', { apiVersion: 'faults.example.com/v1', kind: 'Faulty', metadata: { name: 'f1' } }, { 'Audit-ID': 'the-panic' });
    assert.equal(r.status, 500);
    assert.equal((r.body as { kind: string }).kind, 'Status', 'the client still gets a Status');
    await waitFor('the Panic event', () => ofId('the-panic').length > 0);
    const got = ofId('the-panic');
    assert.deepEqual(got.map((e) => e.stage), ['Panic']);
    assert.deepEqual(got[0]!.responseStatus, { metadata: {}, status: 'Failure', message: "APIServer panic'd: Cannot read properties of undefined (reading 'spec')", reason: 'InternalError', code: 500 });
    assert.deepEqual(got[0]!.objectRef, { resource: 'faulties', name: 'f1', apiGroup: 'faults.example.com', apiVersion: 'v1' });
    // A request that fails with a Status is no panic.
    const refused = await api(server, 'GET', '/apis/faults.example.com/v1/faulties/f1', undefined, { 'Audit-ID': 'no-panic' });
    assert.equal(refused.status, 404);
    await waitFor('its ResponseComplete', () => ofId('no-panic').length > 0);
    assert.deepEqual(ofId('no-panic').map((e) => e.stage), ['ResponseComplete']);
  });

  test('a request that fails authentication is recorded once, at ResponseStarted, with no user and the credentials it tried', async () => {
    const path = `/api/v1/namespaces/${NS}/configmaps`;
    const bad = await withToken(server, 'GET', path, 'not-a-token');
    assert.equal(bad.status, 401);
    const badId = bad.headers['audit-id'];
    assert.ok(typeof badId === 'string' && badId, 'a 401 carries an Audit-ID too');
    const none = await withToken(server, 'GET', `${path}/c1`, undefined);
    assert.equal(none.status, 401, 'anonymous is off');
    const noneId = none.headers['audit-id'] as string;
    await waitFor('both events', () => ofId(badId).length > 0 && ofId(noneId).length > 0);
    const [b, ...moreB] = ofId(badId);
    assert.equal(moreB.length, 0);
    assert.equal(b!.stage, 'ResponseStarted');
    assert.equal(b!.level, 'RequestResponse', "the policy's level for a request of no user");
    assert.deepEqual(b!.user, {});
    assert.equal(b!.verb, 'list');
    assert.deepEqual(b!.objectRef, { resource: 'configmaps', namespace: NS, apiVersion: 'v1' });
    assert.deepEqual(b!.responseStatus, { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 });
    assert.equal(b!.annotations, undefined);
    assert.equal(b!.requestObject, undefined);
    const [n, ...moreN] = ofId(noneId);
    assert.equal(moreN.length, 0);
    assert.equal(n!.stage, 'ResponseStarted');
    assert.deepEqual(n!.objectRef, { resource: 'configmaps', namespace: NS, name: 'c1', apiVersion: 'v1' });
    assert.deepEqual(n!.responseStatus, { metadata: {}, message: 'Authentication failed, no credentials provided', code: 401 });
  });

  test('a deprecated version with a removal release is annotated with both, as kube-apiserver does', async () => {
    const r = await api(server, 'GET', `/apis/coordination.orch.io/v1alpha2/namespaces/${NS}/leasecandidates`, undefined, { 'Audit-ID': 'deprecated-read' });
    assert.equal(r.status, 200);
    await waitFor('its event', () => ofId('deprecated-read').length > 0);
    assert.deepEqual(ofId('deprecated-read')[0]!.annotations, {
      'authorization.orch.io/decision': 'allow',
      'authorization.orch.io/reason': '',
      'orch.io/deprecated': 'true',
      'orch.io/removed-release': '1.38',
    });
  });

  test('paths the policy sets to None are not recorded', async () => {
    const r = await api(server, 'GET', '/healthz');
    assert.equal(r.status, 200);
    assert.equal(ofId(r.headers.get('audit-id') ?? 'none').length, 0);
  });
});

describe('rotation and start-up errors', () => {
  test('past --audit-log-maxsize the log is rotated; --audit-log-maxbackup backups are kept', async () => {
    const rdir = tempDir('audit-rotate');
    const path = join(rdir, 'audit.log');
    const s = await testServer({ auditPolicyFile: policy, auditLog: { path, maxSizeMB: 1, maxBackups: 2 } });
    const big = 'x'.repeat(200 * 1024);
    for (let i = 0; i < 24; i++) {
      const r = await api(s, 'POST', `/api/v1/namespaces/default/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } });
      assert.equal(r.status, 201);
    }
    const files = readdirSync(rdir).sort();
    const backups = files.filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(f));
    assert.equal(backups.length, 2, files.join(' '));
    assert.ok(files.includes('audit.log'));
    for (const f of files) assert.ok(readFileSync(join(rdir, f)).length <= 1024 * 1024, `${f} is within the size`);
  });

  test('--audit-log-mode blocking-strict: a request whose arrival cannot be logged is refused with 500 (blocking: served)', async () => {
    // /dev/full refuses every write (Linux). Every request is audited at RequestReceived but the readiness checks.
    const everything = join(dir, 'metadata.yaml');
    writeFileSync(everything, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: None\n    nonResourceURLs: ["/readyz*"]\n  - level: Metadata\n');
    const s = await testServer({ auditPolicyFile: everything, auditLog: { path: '/dev/full', mode: 'blocking-strict' } });
    try {
      const r = await api(s, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict' } });
      assert.equal(r.status, 500);
      const status = r.body as { kind: string; reason: string; message: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'InternalError');
      assert.equal(status.message, 'Internal error occurred: failed to store audit event');
      // Requests the policy does not audit at RequestReceived are served (the readiness check, here).
      assert.equal((await api(s, 'GET', '/readyz')).status, 200);
    } finally {
      await s.close();
    }
    const lenient = await testServer({ auditPolicyFile: everything, auditLog: { path: '/dev/full', mode: 'blocking' } });
    try {
      const r = await api(lenient, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict' } });
      assert.equal(r.status, 201, 'blocking: the events are lost, the request is not');
      assert.equal((await api(lenient, 'GET', '/api/v1/namespaces/default/configmaps/strict')).status, 200);
    } finally {
      await lenient.close();
    }
  });

  test('a bad policy, a policy without a backend and a backend without a policy are start-up errors', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Everything\n');
    await assert.rejects(testServer({ auditPolicyFile: bad, auditLog: { path: join(dir, 'x.log') } }), /rules\[0\]\.level: Unsupported value: "Everything"/);
    await assert.rejects(testServer({ auditPolicyFile: policy }), /--audit-policy-file needs a backend/);
    await assert.rejects(testServer({ auditLog: { path: join(dir, 'y.log') } }), /--audit-log-path and --audit-webhook-config-file need --audit-policy-file/);
    await assert.rejects(testServer({ auditPolicyFile: join(dir, 'missing.yaml'), auditLog: { path: join(dir, 'z.log') } }), /--audit-policy-file: ENOENT/);
  });
});

/** An HTTPS audit webhook: what it received, a switch to make it fail, and a kubeconfig to reach it. */
async function auditHook() {
  const ca = await makeCa('audit-webhook-ca');
  const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
  const client = await issueCert(ca, { subject: 'CN=orch-apiserver' });
  const received: { apiVersion: string; kind: string; items: AuditEvent[] }[] = [];
  const state = { failing: false };
  const hook = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.failing) {
        res.writeHead(400).end('no');
        return;
      }
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hdir = tempDir('audit-webhook');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const config = join(hdir, 'webhook.kubeconfig');
  writeFileSync(
    config,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: https://127.0.0.1:${(hook.address() as AddressInfo).port}/audit\n    certificate-authority-data: ${b64(ca.cert)}\n` +
      `users:\n- name: apiserver\n  user:\n    client-certificate-data: ${b64(client.cert)}\n    client-key-data: ${b64(client.key)}\n` +
      `contexts:\n- name: hook\n  context: {cluster: hook, user: apiserver}\ncurrent-context: hook\n`,
  );
  return { received, state, config, close: () => hook.close() };
}

describe('webhook backend', () => {
  test('events reach an HTTPS webhook as EventLists in batches; a webhook that fails loses its batch, not the server', async () => {
    const { received, state, config, close } = await auditHook();
    const s = await testServer({ naming: 'kubernetes', auditPolicyFile: policy, auditWebhook: { configFile: config, maxBatchSize: 3, maxBatchWaitMs: 200, initialBackoffMs: 5 } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await api(s, 'GET', `/api/v1/namespaces/default/configmaps?i=${i}`);
        assert.equal(r.status, 200);
        ids.push(r.headers.get('audit-id')!);
      }
      // Three make a full batch at once; the fourth goes when its wait is over.
      await waitFor('both batches', () => received.flatMap((l) => l.items).filter((e) => ids.includes(e.auditID)).length === 4);
      const lists = received.filter((l) => l.items.some((e) => ids.includes(e.auditID)));
      for (const l of lists) {
        assert.equal(l.kind, 'EventList');
        assert.equal(l.apiVersion, 'audit.k8s.io/v1');
        assert.ok(l.items.length <= 3);
        for (const e of l.items) assert.equal(e.apiVersion, 'audit.k8s.io/v1');
      }
      state.failing = true;
      const lost = await api(s, 'GET', '/api/v1/namespaces/default/configmaps?lost=1');
      assert.equal(lost.status, 200, 'a failing webhook does not fail requests');
      await new Promise((r) => setTimeout(r, 400));
      state.failing = false;
      const after = await api(s, 'GET', '/api/v1/namespaces/default/configmaps?after=1');
      await waitFor('the next batch', () => received.flatMap((l) => l.items).some((e) => e.auditID === after.headers.get('audit-id')));
      assert.ok(!received.flatMap((l) => l.items).some((e) => e.auditID === lost.headers.get('audit-id')), 'the refused batch is dropped');
    } finally {
      await s.close();
      close();
    }
  });

  test('--audit-webhook-mode blocking sends each event as it comes, the request waiting for its arrival; blocking-strict refuses a request whose arrival was not sent', async () => {
    const { received, state, config, close } = await auditHook();
    const everything = join(dir, 'metadata-hook.yaml');
    writeFileSync(everything, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: None\n    nonResourceURLs: ["/readyz*"]\n  - level: Metadata\n');
    const blocking = await testServer({ auditPolicyFile: everything, auditWebhook: { configFile: config, mode: 'blocking', initialBackoffMs: 5 } });
    const strict = await testServer({ auditPolicyFile: everything, auditWebhook: { configFile: config, mode: 'blocking-strict', initialBackoffMs: 5 } });
    try {
      const r = await api(blocking, 'GET', '/api/v1/namespaces/default/configmaps?blocking=1');
      assert.equal(r.status, 200);
      const id = r.headers.get('audit-id');
      const mine = () => received.filter((l) => l.items.some((e) => e.auditID === id));
      assert.ok(mine().some((l) => l.items[0]!.stage === 'RequestReceived'), 'the arrival was sent before the answer');
      await waitFor('ResponseComplete', () => mine().length === 2);
      for (const l of mine()) assert.equal(l.items.length, 1, 'one event per request to the webhook');
      state.failing = true;
      assert.equal((await api(blocking, 'GET', '/api/v1/namespaces/default/configmaps?blocking=2')).status, 200, 'blocking: a failing webhook loses the event, not the request');
      const refused = await api(strict, 'GET', '/api/v1/namespaces/default/configmaps?strict=1');
      assert.equal(refused.status, 500);
      assert.equal((refused.body as { message: string }).message, 'Internal error occurred: failed to store audit event');
      state.failing = false;
      assert.equal((await api(strict, 'GET', '/api/v1/namespaces/default/configmaps?strict=2')).status, 200);
    } finally {
      await blocking.close();
      await strict.close();
      close();
    }
  });
});

test('one keep-alive connection: each event says its own path, object, client, source and decision, whatever the requests before it on the connection said', async () => {
  const tls = tlsFor(server.url)!;
  const pool = new Pool(server.url, { connections: 1, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
  const lease = (name: string) => `/apis/coordination.orch.io/v1/namespaces/${NS}/leases/${name}`;
  const sends: { path: string; headers: Record<string, string>; want: { name: string; userAgent?: string; sourceIP: string; decision: string; impersonated?: string } }[] = [
    { path: lease('one'), headers: { 'user-agent': 'first/1' }, want: { name: 'one', userAgent: 'first/1', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('one'), headers: { 'user-agent': 'first/1' }, want: { name: 'one', userAgent: 'first/1', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('two'), headers: { 'user-agent': 'first/1' }, want: { name: 'two', userAgent: 'first/1', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('two'), headers: { 'user-agent': 'second/2' }, want: { name: 'two', userAgent: 'second/2', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('two'), headers: { 'user-agent': 'second/2', 'x-forwarded-for': '10.1.2.3' }, want: { name: 'two', userAgent: 'second/2', sourceIP: '10.1.2.3', decision: 'allow' } },
    { path: lease('two'), headers: { 'user-agent': 'second/2' }, want: { name: 'two', userAgent: 'second/2', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('two'), headers: { 'user-agent': 'second/2', 'impersonate-user': 'nobody-at-all' }, want: { name: 'two', userAgent: 'second/2', sourceIP: '127.0.0.1', decision: 'forbid', impersonated: 'nobody-at-all' } },
    { path: lease('two'), headers: { 'user-agent': 'second/2' }, want: { name: 'two', userAgent: 'second/2', sourceIP: '127.0.0.1', decision: 'allow' } },
    { path: lease('two'), headers: {}, want: { name: 'two', sourceIP: '127.0.0.1', decision: 'allow' } },
  ];
  try {
    const ids: string[] = [];
    for (const s of sends) {
      const r = await pool.request({ method: 'GET', path: s.path, headers: s.headers });
      await r.body.text();
      ids.push(String(r.headers['audit-id']));
    }
    assert.equal(new Set(ids).size, sends.length, 'an Audit-ID of its own for each request');
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const said = ids.map((id) =>
      ofId(id).map((e) => ({
        stage: e.stage,
        requestURI: e.requestURI,
        name: e.objectRef?.name,
        ...(e.userAgent !== undefined && { userAgent: e.userAgent }),
        sourceIP: e.sourceIPs[0],
        decision: e.annotations?.['authorization.orch.io/decision'],
        ...(e.impersonatedUser && { impersonated: e.impersonatedUser.username }),
      })),
    );
    assert.deepEqual(
      said,
      // The policy leaves RequestReceived out.
      sends.map((s) => [{ stage: 'ResponseComplete', requestURI: s.path, ...s.want }]),
    );
  } finally {
    await pool.close();
  }
});
