// Impersonation over HTTPS: the Impersonate-User, -Group, -Uid and -Extra-<key> headers, each
// attribute checked through the authorizer with kube-apiserver's attributes (verb `impersonate`),
// the impersonated user's added groups, its use by authorization and audit, and every refusal
// (denied attribute 403, headers without a user 400, bad credentials 401 first) changing nothing.
// kubectl (--as, --as-group) and client-node (`as` in the kubeconfig) send the headers.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { testServer } from '../support/server.ts';
import { httpsRequest } from '../support/https.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { loadClientNode } from '../support/client-node.ts';
import type { Authorizer } from '../../src/auth/authz/authorizer.ts';
import type { AuditSink } from '../../src/server/filters.ts';
import type { UserInfo } from '../../src/request/user.ts';

const https = httpsRequest;

/** What an impersonation check asked, in the form the tests compare. */
interface Check {
  by: string;
  verb: string;
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
}

/**
 * Allows `root` everything; `limited` may impersonate only what ALLOWED lists (a denial of the
 * user `bob` carries a reason, the others none); any other user may do anything but what DENIED
 * lists. Every impersonation check is recorded, and the user of every other request by path.
 */
const ALLOWED = new Set(['users/jane', 'groups/g1', 'userextras/scopes/s1', 'uids/u1', 'serviceaccounts/sa-ns/robot']);
const DENIED = new Set(['jane create namespaces']);
const checks: Check[] = [];
const seen = new Map<string, UserInfo>();
const authorizer: Authorizer = {
  async authorize({ user, info }) {
    if (info.verb === 'impersonate') {
      checks.push({ by: user.name, verb: info.verb, group: info.apiGroup, version: info.apiVersion, resource: info.subresource ? `${info.resource}/${info.subresource}` : info.resource, namespace: info.namespace, name: info.name });
      if (user.name === 'root') return { decision: 'allow' };
      const key = [info.resource, info.subresource, info.namespace, info.name].filter(Boolean).join('/');
      if (ALLOWED.has(key)) return { decision: 'allow' };
      return info.name === 'bob' ? { decision: 'deny', reason: 'bob is <special> & private' } : { decision: 'no-opinion' };
    }
    seen.set(info.path, user);
    if (DENIED.has(`${user.name} ${info.verb} ${info.resource}`)) return { decision: 'no-opinion' };
    return { decision: 'allow' };
  },
};

const audited: { path: string; user?: UserInfo; impersonatedUser?: UserInfo; headers: string[] }[] = [];
const audit: AuditSink = {
  requestReceived() {},
  responseComplete(ctx) {
    audited.push({ path: ctx.url.pathname, user: ctx.user, impersonatedUser: ctx.impersonatedUser, headers: Object.keys(ctx.req.headers) });
  },
};

const dir = tempDir('impersonation');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['root-token,root,1,system:masters', 'limited-token,limited,2,"team"'].join('\n') + '\n');
const server = await testServer({ secureServing: {}, authentication: { tokenAuthFile: tokenFile }, authorizer, audit });
const ROOT = { Authorization: 'Bearer root-token' };
const LIMITED = { Authorization: 'Bearer limited-token' };

/** The checks made while `run` ran. */
async function checksOf(run: () => Promise<unknown>): Promise<Check[]> {
  const from = checks.length;
  await run();
  return checks.slice(from);
}

const impersonate = (by: string, resource: string, name: string, more: Partial<Check> = {}): Check => ({ by, verb: 'impersonate', group: '', version: '', resource, namespace: '', name, ...more });
const extraCheck = (by: string, key: string, value: string): Check => impersonate(by, `userextras/${key}`, value, { group: 'authentication.orch.io', version: 'v1' });

describe('the impersonated user', () => {
  test('user, groups (one header each), extras (percent-decoded, lower case) and uid, each checked in order', async () => {
    const path = '/api/v1/namespaces/default';
    const made = await checksOf(async () => {
      const r = await https(server, 'GET', path, {
        ...ROOT,
        'Impersonate-User': 'jane',
        'Impersonate-Group': ['g1', 'g2,with-comma'],
        'Impersonate-Extra-Example.com%2fScopes': ['s1', 's2'],
        'Impersonate-Extra-Reason': 'audit',
        'Impersonate-Uid': 'u1',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });
    assert.deepEqual(made, [
      impersonate('root', 'users', 'jane'),
      impersonate('root', 'groups', 'g1'),
      impersonate('root', 'groups', 'g2,with-comma'),
      extraCheck('root', 'example.com/scopes', 's1'),
      extraCheck('root', 'example.com/scopes', 's2'),
      extraCheck('root', 'reason', 'audit'),
      impersonate('root', 'uids', 'u1', { group: 'authentication.orch.io', version: 'v1' }),
    ]);
    assert.deepEqual(seen.get(path), {
      name: 'jane',
      uid: 'u1',
      groups: ['g1', 'g2,with-comma', 'system:authenticated'],
      extra: { 'example.com/scopes': ['s1', 's2'], reason: ['audit'] },
    });
  });

  test('a service account is checked in its namespace and gets its groups, unless groups are given', async () => {
    const made = await checksOf(() => https(server, 'GET', '/api/v1/namespaces/sa-1', { ...ROOT, 'Impersonate-User': 'system:serviceaccount:sa-ns:robot' }));
    assert.deepEqual(made, [impersonate('root', 'serviceaccounts', 'robot', { namespace: 'sa-ns' })]);
    assert.deepEqual(seen.get('/api/v1/namespaces/sa-1'), { name: 'system:serviceaccount:sa-ns:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:sa-ns', 'system:authenticated'] });
    await https(server, 'GET', '/api/v1/namespaces/sa-2', { ...ROOT, 'Impersonate-User': 'system:serviceaccount:sa-ns:robot', 'Impersonate-Group': 'g1' });
    assert.deepEqual(seen.get('/api/v1/namespaces/sa-2')?.groups, ['g1', 'system:authenticated']);
    // Not a valid service account name: an ordinary user of that name.
    const other = await checksOf(() => https(server, 'GET', '/api/v1/namespaces/sa-3', { ...ROOT, 'Impersonate-User': 'system:serviceaccount:Bad_NS:robot' }));
    assert.deepEqual(other, [impersonate('root', 'users', 'system:serviceaccount:Bad_NS:robot')]);
    assert.deepEqual(seen.get('/api/v1/namespaces/sa-3')?.groups, ['system:authenticated']);
  });

  test('system:anonymous gets system:unauthenticated; a given system:(un)authenticated group is not doubled', async () => {
    await https(server, 'GET', '/api/v1/namespaces/anon-1', { ...ROOT, 'Impersonate-User': 'system:anonymous' });
    assert.deepEqual(seen.get('/api/v1/namespaces/anon-1'), { name: 'system:anonymous', groups: ['system:unauthenticated'] });
    await https(server, 'GET', '/api/v1/namespaces/anon-2', { ...ROOT, 'Impersonate-User': 'someone', 'Impersonate-Group': 'system:unauthenticated' });
    assert.deepEqual(seen.get('/api/v1/namespaces/anon-2')?.groups, ['system:unauthenticated']);
    await https(server, 'GET', '/api/v1/namespaces/anon-3', { ...ROOT, 'Impersonate-User': 'someone', 'Impersonate-Group': ['x', 'system:authenticated'] });
    assert.deepEqual(seen.get('/api/v1/namespaces/anon-3')?.groups, ['x', 'system:authenticated']);
  });

  test('a malformed percent-escape in an extra key keeps the key as sent', async () => {
    const made = await checksOf(() => https(server, 'GET', '/api/v1/namespaces/extra-1', { ...ROOT, 'Impersonate-User': 'jane', 'Impersonate-Extra-Almost%zzEncoded%4': 'v' }));
    assert.deepEqual(made.at(-1), extraCheck('root', 'almost%zzencoded%4', 'v'));
    assert.deepEqual(seen.get('/api/v1/namespaces/extra-1')?.extra, { 'almost%zzencoded%4': ['v'] });
  });

  test('authorization sees the impersonated user: what jane may not do is refused with her name', async () => {
    const r = await https(server, 'POST', '/api/v1/namespaces', { ...ROOT, 'Impersonate-User': 'jane' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'by-jane' } });
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'namespaces is forbidden: User "jane" cannot create resource "namespaces" in API group "" at the cluster scope');
    assert.deepEqual(r.body.details, { kind: 'namespaces' });
    assert.equal((await https(server, 'GET', '/api/v1/namespaces/by-jane', ROOT)).status, 404);
  });

  test('audit keeps both identities; the impersonation headers are gone once the filter ran', async () => {
    await https(server, 'GET', '/api/v1/namespaces/audit-1', { ...ROOT, 'Impersonate-User': 'jane', 'Impersonate-Group': 'g1', 'Impersonate-Extra-Scopes': 's1', 'Impersonate-Uid': 'u1' });
    const e = audited.find((a) => a.path === '/api/v1/namespaces/audit-1')!;
    assert.equal(e.user?.name, 'root');
    assert.deepEqual(e.impersonatedUser, { name: 'jane', uid: 'u1', groups: ['g1', 'system:authenticated'], extra: { scopes: ['s1'] } });
    assert.deepEqual(e.headers.filter((h) => h.startsWith('impersonate-')), []);
    await https(server, 'GET', '/api/v1/namespaces/audit-2', ROOT);
    assert.equal(audited.find((a) => a.path === '/api/v1/namespaces/audit-2')!.impersonatedUser, undefined);
  });
});

describe('refusals', () => {
  const NS = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'by-refused' } };
  /** POSTs a namespace with `headers`, expects `status` and `message`, and that nothing was created. */
  async function refused(headers: OutgoingHttpHeaders, status: number, reason: string, message: string): Promise<any> {
    const r = await https(server, 'POST', '/api/v1/namespaces', headers, NS);
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, reason);
    assert.equal(r.body.message, message);
    assert.equal((await https(server, 'GET', '/api/v1/namespaces/by-refused', ROOT)).status, 404);
    return r.body;
  }

  test('each denied attribute is 403 with kube-apiserver message and details, at the first denial', async () => {
    const base = 'User "limited" cannot impersonate resource';
    let body = await refused({ ...LIMITED, 'Impersonate-User': 'alice' }, 403, 'Forbidden', `users "alice" is forbidden: ${base} "users" in API group "" at the cluster scope`);
    assert.deepEqual(body.details, { name: 'alice', kind: 'users' });
    // The authorizer's reason follows; kube-apiserver escapes HTML only in its own part.
    await refused({ ...LIMITED, 'Impersonate-User': 'bob' }, 403, 'Forbidden', `users "bob" is forbidden: ${base} "users" in API group "" at the cluster scope: bob is <special> & private`);
    body = await refused({ ...LIMITED, 'Impersonate-User': 'jane', 'Impersonate-Group': ['g1', 'g2'] }, 403, 'Forbidden', `groups "g2" is forbidden: ${base} "groups" in API group "" at the cluster scope`);
    assert.deepEqual(body.details, { name: 'g2', kind: 'groups' });
    body = await refused(
      { ...LIMITED, 'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': ['s1', 's2'] },
      403,
      'Forbidden',
      `userextras.authentication.orch.io "s2" is forbidden: ${base} "userextras/scopes" in API group "authentication.orch.io" at the cluster scope`,
    );
    assert.deepEqual(body.details, { name: 's2', group: 'authentication.orch.io', kind: 'userextras' });
    await refused({ ...LIMITED, 'Impersonate-User': 'jane', 'Impersonate-Uid': 'u2' }, 403, 'Forbidden', `uids.authentication.orch.io "u2" is forbidden: ${base} "uids" in API group "authentication.orch.io" at the cluster scope`);
    await refused(
      { ...LIMITED, 'Impersonate-User': 'system:serviceaccount:other:robot' },
      403,
      'Forbidden',
      `serviceaccounts "robot" is forbidden: ${base} "serviceaccounts" in API group "" in the namespace "other"`,
    );
    // The checks stop at the first denial: the uid after a denied group is never asked.
    const made = await checksOf(() => https(server, 'GET', '/api/v1/namespaces', { ...LIMITED, 'Impersonate-User': 'jane', 'Impersonate-Group': 'nope', 'Impersonate-Uid': 'u1' }));
    assert.deepEqual(made, [impersonate('limited', 'users', 'jane'), impersonate('limited', 'groups', 'nope')]);
  });

  test('what limited may impersonate is allowed', async () => {
    const r = await https(server, 'GET', '/api/v1/namespaces/limited-ok', { ...LIMITED, 'Impersonate-User': 'jane', 'Impersonate-Group': 'g1', 'Impersonate-Extra-Scopes': 's1', 'Impersonate-Uid': 'u1' });
    assert.equal(r.status, 404);
    assert.deepEqual(seen.get('/api/v1/namespaces/limited-ok'), { name: 'jane', uid: 'u1', groups: ['g1', 'system:authenticated'], extra: { scopes: ['s1'] } });
  });

  test('groups, extras or a uid without a user are 400, listing what was asked, with no check made', async () => {
    const made = await checksOf(async () => {
      await refused({ ...ROOT, 'Impersonate-Group': ['g1', 'g2'] }, 400, 'BadRequest', 'requested [{Group  g1    } {Group  g2    }] without impersonating a user');
      await refused({ ...ROOT, 'Impersonate-Extra-Scopes': 's1' }, 400, 'BadRequest', 'requested [{UserExtra  s1  authentication.orch.io/v1  scopes}] without impersonating a user');
      await refused({ ...ROOT, 'Impersonate-Uid': 'u1' }, 400, 'BadRequest', 'requested [{UID  u1  authentication.orch.io/v1  }] without impersonating a user');
      // An empty user is no user.
      await refused({ ...ROOT, 'Impersonate-User': '', 'Impersonate-Group': 'g1' }, 400, 'BadRequest', 'requested [{Group  g1    }] without impersonating a user');
    });
    assert.deepEqual(made, []);
  });

  test('bad credentials, or none with anonymous off, are 401 before impersonation; anonymous is checked as system:anonymous', async () => {
    const bad = await checksOf(() => refused({ Authorization: 'Bearer wrong', 'Impersonate-User': 'jane' }, 401, 'Unauthorized', 'Unauthorized'));
    assert.deepEqual(bad, []);
    const closed = await testServer({ secureServing: {}, authentication: { tokenAuthFile: tokenFile, anonymousAuth: false }, authorizer });
    const made = await checksOf(async () => {
      const r = await https(closed, 'GET', '/api/v1/namespaces', { 'Impersonate-User': 'jane' });
      assert.equal(r.status, 401);
      assert.equal(r.body.reason, 'Unauthorized');
    });
    assert.deepEqual(made, []);
    const anonymous = await checksOf(() => refused({ 'Impersonate-User': 'alice' }, 403, 'Forbidden', 'users "alice" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope'));
    assert.deepEqual(anonymous, [impersonate('system:anonymous', 'users', 'alice')]);
  });
});

describe('clients', () => {
  test('kubectl --as/--as-group: allowed by an allow-all authorizer, 403 from one that denies', async () => {
    const open = await testServer({ secureServing: {}, authorization: { modes: ['AlwaysAllow'] } });
    const k = kubectlFor(open, { label: 'kubectl-as' });
    const out = await k.ok(['--kubeconfig', open.kubeconfigPath!, '--as=jane', '--as-group=g', 'get', 'ns', 'default', '-o', 'name']);
    assert.equal(out.trim(), 'namespace/default');
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, server.ca!);
    // With a token only: the kubeconfig of kubectlFor would present the administrator's certificate.
    const t = kubectlFor(server, { label: 'kubectl-as-token', anonymous: true });
    const denied = await t.fails(['--server', server.url, '--certificate-authority', caFile, '--token', 'limited-token', '--as=alice', '--as-group=g', 'get', 'ns']);
    // kubectl's discovery client cannot read a Status in place of discovery: it prints "unknown",
    // as it does against kube-apiserver.
    assert.match(denied.stderr, /Error from server \(Forbidden\)/);
    const made = await checksOf(() => t.ok(['--server', server.url, '--certificate-authority', caFile, '--token', 'limited-token', '--as=jane', '--as-group=g1', 'get', 'ns', 'kube-check', '--ignore-not-found']));
    assert.deepEqual(made.slice(0, 2), [impersonate('limited', 'users', 'jane'), impersonate('limited', 'groups', 'g1')]);
  });

  test('client-node sends Impersonate-User from the kubeconfig user\'s `as`', async () => {
    const k8s = await loadClientNode();
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, caData: Buffer.from(server.ca!).toString('base64') }],
      users: [{ name: 'u', token: 'root-token', impersonateUser: 'jane' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' });
    assert.equal(seen.get('/api/v1/namespaces/default')?.name, 'jane');
  });
});
