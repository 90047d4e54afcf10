// The Node authorizer, the NodeRestriction admission step and the default authorization
// (`Node,RBAC`) of a server started with no authorization options. Node agents are client
// certificates CN=system:node:<name>, O=system:nodes; every refusal is a 403 Status that leaves
// nothing stored.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServer } from '../support/server.ts';
import { issueCert, makeCa, type TestCert } from '../support/certs.ts';
import { authorizationModes } from '../../src/server/security.ts';

const dir = mkdtempSync(join(tmpdir(), 'authz-node-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ca = await makeCa('node-clients');
const caFile = join(dir, 'client-ca.crt');
writeFileSync(caFile, ca.cert);
// No authorization options: the default modes.
const server = await testServer({ authentication: { clientCaFile: caFile } });

const LEASES = '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases';
const EVENTS = '/api/v1/namespaces/default/events';

interface Reply {
  status: number;
  body: any;
}

/** One request with `cert` as the client certificate (none: anonymous), on a connection of its own. */
function as(cert: TestCert | undefined, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(server.url + path, { method, agent: false, ca: server.ca, cert: cert?.cert, key: cert?.key, headers: data ? { 'Content-Type': contentType } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

const nodeCert = (name: string, groups = ['system:nodes']) => issueCert(ca, { subject: [`CN=system:node:${name}`, ...groups.map((g) => `O=${g}`)].join(', ') });
const n1 = await nodeCert('n1');
const n3 = await nodeCert('n3');
const jane = await issueCert(ca, { subject: 'CN=jane, O=dev' });
// The client CA file replaces the server's own: the administrator has a certificate of it too.
const admin = await issueCert(ca, { subject: 'CN=root, O=system:masters' });
const api = (method: string, path: string, body?: unknown, contentType?: string) => as(admin, method, path, body, contentType);

/** A 403 Forbidden Status whose message matches `message`. */
function forbidden(r: Reply, message: string | RegExp): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.reason, 'Forbidden');
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else assert.match(r.body.message, message);
}

const node = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, ...extra } });
const merge = 'application/merge-patch+json';
const adminGet = async (path: string) => (await api('GET', path)).body;

describe('default authorization: Node,RBAC', () => {
  test('no authorization options means Node,RBAC', () => {
    assert.deepEqual(authorizationModes({}), ['Node', 'RBAC']);
  });

  test('anonymous requests reach only the public health and version paths', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await as(undefined, 'GET', path)).status, 200, path);
    forbidden(await as(undefined, 'GET', '/api'), 'forbidden: User "system:anonymous" cannot get path "/api"');
    forbidden(await as(undefined, 'GET', '/api/v1/namespaces'), 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
    forbidden(await as(undefined, 'POST', '/api/v1/namespaces', { metadata: { name: 'anon' } }), /User "system:anonymous" cannot create resource "namespaces"/);
    assert.equal((await api('GET', '/api/v1/namespaces/anon')).status, 404, 'nothing was created');
  });

  test('an authenticated user gets discovery, version and selfsubjectreview; not namespaces. The admin gets everything', async () => {
    assert.equal((await as(jane, 'GET', '/api')).status, 200);
    assert.equal((await as(jane, 'GET', '/apis')).status, 200);
    assert.equal((await as(jane, 'GET', '/version')).status, 200);
    const review = await as(jane, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(review.status, 201, JSON.stringify(review.body));
    assert.equal(review.body.status.userInfo.username, 'jane');
    forbidden(await as(jane, 'GET', '/api/v1/namespaces'), 'namespaces is forbidden: User "jane" cannot list resource "namespaces" in API group "" at the cluster scope');
    assert.equal((await api('GET', '/api/v1/namespaces')).status, 200);
  });
});

describe('the Node authorizer', () => {
  test('a node registers itself, reads every node, updates itself and its status', async () => {
    assert.equal((await api('POST', '/api/v1/nodes', node('n2'))).status, 201);
    const created = await as(n1, 'POST', '/api/v1/nodes', node('n1', { labels: { 'orch.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'node.orch.io/pool': 'a', 'example.com/free': 'x' } }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await as(n1, 'GET', '/api/v1/nodes/n1')).status, 200);
    assert.equal((await as(n1, 'GET', '/api/v1/nodes/n2')).status, 200);
    const list = await as(n1, 'GET', '/api/v1/nodes');
    assert.equal(list.status, 200);
    assert.ok(list.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'n2'));
    assert.equal((await as(n1, 'GET', '/api/v1/nodes?watch=true&timeoutSeconds=1')).status, 200);
    // Nodes, and not the rest of the cluster.
    forbidden(await as(n1, 'GET', '/api/v1/namespaces/default'), /User "system:node:n1" cannot get resource "namespaces"/);
    const patched = await as(n1, 'PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'example.com/free': 'y', 'topology.orch.io/zone': 'z1' } } }, merge);
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const status = await as(n1, 'PATCH', '/api/v1/nodes/n1/status', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, merge);
    assert.equal(status.status, 200, JSON.stringify(status.body));
    const put = await as(n1, 'PUT', '/api/v1/nodes/n1', { ...status.body, metadata: { ...status.body.metadata, annotations: { note: 'x' } } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });

  test('its own Lease in the node lease namespace: get, create, update, patch, delete', async () => {
    const lease = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 } };
    assert.equal((await as(n1, 'POST', LEASES, lease)).status, 201);
    const got = await as(n1, 'GET', `${LEASES}/n1`);
    assert.equal(got.status, 200);
    assert.equal((await as(n1, 'PUT', `${LEASES}/n1`, { ...got.body, spec: { ...got.body.spec, leaseDurationSeconds: 41 } })).status, 200);
    assert.equal((await as(n1, 'PATCH', `${LEASES}/n1`, { spec: { leaseDurationSeconds: 42 } }, merge)).status, 200);
    assert.equal((await as(n1, 'DELETE', `${LEASES}/n1`)).status, 200);
    // Its own only, whether or not another exists.
    forbidden(await as(n1, 'GET', `${LEASES}/n7`), /can only access node lease with the same name as the requesting node/);
  });

  test('events about itself, token reviews', async () => {
    const core = await as(n1, 'POST', EVENTS, { metadata: { name: 'n1.1' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'Starting', message: 'up' });
    assert.equal(core.status, 201, JSON.stringify(core.body));
    assert.equal((await as(n1, 'PATCH', `${EVENTS}/n1.1`, { count: 2 }, merge)).status, 200);
    // Written, never deleted.
    forbidden(await as(n1, 'DELETE', `${EVENTS}/n1.1`), /User "system:node:n1" cannot delete resource "events"/);
    const ev = await as(n1, 'POST', '/apis/events.orch.io/v1/namespaces/default/events', {
      metadata: { name: 'n1.2' },
      regarding: { kind: 'Node', name: 'n1' },
      reason: 'Starting',
      action: 'Start',
      eventTime: new Date().toISOString(),
      reportingController: 'kubelet',
      reportingInstance: 'n1',
      type: 'Normal',
    });
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
    const review = await as(n1, 'POST', '/apis/authentication.orch.io/v1/tokenreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } });
    assert.equal(review.status, 201, JSON.stringify(review.body));
  });

  test('refused: deleting its Node, other kinds, Secrets and ConfigMaps and tokens (no Pods are bound to it)', async () => {
    forbidden(await as(n1, 'DELETE', '/api/v1/nodes/n1'), 'nodes "n1" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope');
    assert.equal((await api('GET', '/api/v1/nodes/n1')).status, 200, 'still there');
    forbidden(await as(n1, 'GET', '/api/v1/namespaces'), /User "system:node:n1" cannot list resource "namespaces"/);
    await api('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 's' } });
    await api('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' } });
    const noRelationship = "no relationship found between node 'n1' and this object";
    forbidden(await as(n1, 'GET', '/api/v1/namespaces/default/secrets/s'), `secrets "s" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": ${noRelationship}`);
    forbidden(await as(n1, 'GET', '/api/v1/namespaces/default/configmaps/c'), new RegExp(`cannot get resource "configmaps" .*: ${noRelationship}`));
    forbidden(await as(n1, 'GET', '/api/v1/namespaces/default/secrets'), /cannot list resource "secrets" in API group "" in the namespace "default": No Object name found/);
    forbidden(await as(n1, 'GET', '/api/v1/secrets'), /at the cluster scope: can only read namespaced object of this type/);
    forbidden(await as(n1, 'DELETE', '/api/v1/namespaces/default/secrets/s'), /cannot delete resource "secrets" .*: can only read resources of this type/);
    assert.equal((await api('GET', '/api/v1/namespaces/default/secrets/s')).status, 200, 'still there');
    forbidden(await as(n1, 'GET', '/api/v1/namespaces/default/serviceaccounts/default'), /: can only create tokens for individual service accounts/);
    const token = await as(n1, 'POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} });
    forbidden(token, new RegExp(`cannot create resource "serviceaccounts/token" in API group "" in the namespace "default": ${noRelationship}`));
  });

  test('refused leases: another name, another namespace, list', async () => {
    const other = { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'n2' }, spec: { holderIdentity: 'n2' } };
    forbidden(await as(n1, 'POST', LEASES, other), 'leases.coordination.orch.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
    assert.equal((await api('GET', `${LEASES}/n2`)).status, 404, 'nothing stored');
    assert.equal((await api('POST', LEASES, other)).status, 201);
    forbidden(await as(n1, 'GET', `${LEASES}/n2`), /cannot get resource "leases" .*: can only access node lease with the same name as the requesting node/);
    forbidden(await as(n1, 'PATCH', `${LEASES}/n2`, { spec: { holderIdentity: 'n1' } }, merge), /cannot patch resource "leases"/);
    assert.equal((await adminGet(`${LEASES}/n2`)).spec.holderIdentity, 'n2');
    forbidden(await as(n1, 'GET', LEASES), /cannot list resource "leases" .*: can only get, create, update, patch, or delete a node lease/);
    const elsewhere = await as(n1, 'POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', { ...other, metadata: { name: 'n1' } });
    forbidden(elsewhere, /in the namespace "default": can only access leases in the "orch-node-lease" system namespace/);
    assert.equal((await api('GET', '/apis/coordination.orch.io/v1/namespaces/default/leases/n1')).status, 404, 'nothing stored');
  });

  test('users that are not nodes get nothing from this mode', async () => {
    // The node's name without the group, and the group without a node name.
    const nameOnly = await nodeCert('n1', []);
    forbidden(await as(nameOnly, 'GET', '/api/v1/nodes'), 'nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope');
    forbidden(await as(nameOnly, 'POST', LEASES, { metadata: { name: 'n1' } }), /cannot create resource "leases"/);
    const unnamed = await issueCert(ca, { subject: 'CN=system:node:, O=system:nodes' });
    forbidden(await as(unnamed, 'GET', '/api/v1/nodes'), /cannot list resource "nodes" .*: unknown node for user "system:node:"/);
    const other = await issueCert(ca, { subject: 'CN=kubelet, O=system:nodes' });
    forbidden(await as(other, 'GET', '/api/v1/nodes'), /User "kubelet" cannot list resource "nodes"/);
  });
});

describe('NodeRestriction', () => {
  test('a node writes only its own Node', async () => {
    forbidden(await as(n1, 'POST', '/api/v1/nodes', node('n9')), 'nodes "n9" is forbidden: node "n1" is not allowed to modify node "n9"');
    assert.equal((await api('GET', '/api/v1/nodes/n9')).status, 404, 'nothing stored');
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n2', { metadata: { labels: { x: 'y' } } }, merge), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n2/status', { status: { phase: 'Running' } }, merge), 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    const n2 = await adminGet('/api/v1/nodes/n2');
    assert.equal(n2.metadata.labels, undefined);
    assert.equal(n2.status?.phase, undefined);
  });

  test('restricted labels and the configSource at registration', async () => {
    const labelled = node('n3', { labels: { 'node-restriction.orch.io/trusted': 'yes', 'node-role.orch.io/control-plane': '', 'orch.io/hostname': 'n3' } });
    forbidden(await as(n3, 'POST', '/api/v1/nodes', labelled), 'nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: node-restriction.orch.io/trusted, node-role.orch.io/control-plane');
    const kubeSpelling = node('n3', { labels: { 'node-restriction.kubernetes.io/trusted': 'yes' } });
    forbidden(await as(n3, 'POST', '/api/v1/nodes', kubeSpelling), /not allowed to set the following labels: node-restriction.kubernetes.io\/trusted$/);
    const configured = { ...node('n3'), spec: { configSource: { configMap: { namespace: 'orch-system', name: 'cfg', kubeletConfigKey: 'kubelet' } } } };
    forbidden(await as(n3, 'POST', '/api/v1/nodes', configured), 'nodes "n3" is forbidden: node "n3" is not allowed to create pods with a non-nil configSource');
    assert.equal((await api('GET', '/api/v1/nodes/n3')).status, 404, 'nothing stored');
  });

  test('its own labels under the restricted domains and its taints stay as they are', async () => {
    assert.equal((await api('PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'node-restriction.orch.io/trusted': 'yes' } }, spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } }, merge)).status, 200);
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'node-role.orch.io/control-plane': '' } } }, merge), 'nodes "n1" is forbidden: is not allowed to modify labels: node-role.orch.io/control-plane');
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n1', { metadata: { labels: { 'node-restriction.orch.io/trusted': null } } }, merge), 'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.orch.io/trusted');
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n1', { spec: { taints: null } }, merge), 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    forbidden(await as(n1, 'PATCH', '/api/v1/nodes/n1', { spec: { configSource: { configMap: { namespace: 'orch-system', name: 'cfg', kubeletConfigKey: 'kubelet' } } } }, merge), 'nodes "n1" is forbidden: node "n1" is not allowed to update configSource to a new non-nil configSource');
    const stored = await adminGet('/api/v1/nodes/n1');
    assert.equal(stored.metadata.labels['node-restriction.orch.io/trusted'], 'yes');
    assert.equal(stored.metadata.labels['node-role.orch.io/control-plane'], undefined);
    assert.equal(stored.spec.taints.length, 1);
    assert.equal(stored.spec.configSource, undefined);
  });

  test('events only about itself', async () => {
    const about = (name: string, kind = 'Node') => ({ metadata: { name: `${name}.x` }, involvedObject: { kind, name }, reason: 'R', message: 'm' });
    forbidden(await as(n1, 'POST', EVENTS, about('n2')), 'events "n2.x" is forbidden: node "n1" can only create events about itself');
    forbidden(await as(n1, 'POST', EVENTS, about('web', 'Pod')), 'events "web.x" is forbidden: node "n1" can only create events about itself');
    assert.equal((await api('GET', `${EVENTS}/n2.x`)).status, 404, 'nothing stored');
    forbidden(await as(n1, 'PATCH', `${EVENTS}/n1.1`, { involvedObject: { name: 'n2' } }, merge), /node "n1" can only create events about itself/);
    assert.equal((await adminGet(`${EVENTS}/n1.1`)).involvedObject.name, 'n1');
  });
});
