// The Webhook authorizer against a real authorization webhook over HTTPS on loopback (its
// certificates made here; it requires the client certificate the kubeconfig's user names), with
// users from a static token file: allow, deny and no opinion; `denied` deciding before a later
// RBAC allow; the SubjectAccessReview sent (v1beta1 and v1); the cache and its TTLs; an answer of
// another version, a timeout and the failure policy; `--authorization-config` with match
// conditions, its reload on change (a bad file keeps the previous configuration) and its start-up
// errors. Every refused request is a 403 Status.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { api, testServer, waitFor } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { withToken } from '../support/identity.ts';
import { parseArgs } from '../../src/server/cli.ts';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/server.ts';

const dir = tempDir('authz-webhook');

// The one child process (the command line's exit code), started first: it loads while the rest runs.
const commandLine = (async () => {
  const child = spawn(
    process.execPath,
    [new URL('../../bin/orch-apiserver.js', import.meta.url).pathname, '--secure-port=0', `--data-dir=${tempDir('authz-cli-bad')}`, `--authorization-config=${join(dir, 'absent.yaml')}`, '--authorization-mode=RBAC'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stderr };
})();

// ---------------------------------------------------------------------------------------------
// The webhook: answers per user, every call recorded.

interface Review {
  apiVersion?: string;
  kind?: string;
  spec?: Record<string, unknown> & { user?: string };
}
interface Call {
  apiVersion?: string;
  spec: Record<string, unknown>;
  client: string;
}
type Answer = { body?: unknown; status?: Record<string, unknown>; delayMs?: number };

const ca = await makeCa('authz-webhook-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
const apiserverClient = await issueCert(ca, { subject: 'CN=orch-apiserver' });

const calls: Call[] = [];
const answers = new Map<string, (r: Review) => Answer>();
answers.set('allowed', () => ({ status: { allowed: true } }));
answers.set('denied', () => ({ status: { allowed: false, denied: true, reason: 'the webhook says no' } }));
answers.set('both', () => ({ status: { allowed: true, denied: true, reason: 'both at once' } }));
answers.set('mismatch', (r) => ({ body: { apiVersion: r.apiVersion === 'authorization.orch.io/v1' ? 'authorization.orch.io/v1beta1' : 'authorization.orch.io/v1', kind: 'SubjectAccessReview', status: { allowed: true } } }));
answers.set('slow', () => ({ status: { allowed: true }, delayMs: 3000 }));

const webhook: Server = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString()) as Review;
    calls.push({ apiVersion: review.apiVersion, spec: review.spec ?? {}, client: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '') });
    const a = answers.get(review.spec?.user ?? '')?.(review) ?? { status: { allowed: false, reason: 'no opinion here' } };
    res.setHeader('Content-Type', 'application/json');
    const body = JSON.stringify(a.body ?? { apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: a.status });
    if (a.delayMs) setTimeout(() => res.end(body), a.delayMs).unref();
    else res.end(body);
  });
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
webhook.unref();
const webhookUrl = `https://127.0.0.1:${(webhook.address() as { port: number }).port}/authorize`;
const callsOf = (user: string, from = 0) => calls.slice(from).filter((c) => c.spec.user === user);

writeFileSync(join(dir, 'ca.crt'), ca.cert);
writeFileSync(join(dir, 'client.crt'), apiserverClient.cert);
writeFileSync(join(dir, 'client.key'), apiserverClient.key);
const kubeconfigPath = join(dir, 'webhook.kubeconfig');
writeFileSync(
  kubeconfigPath,
  `apiVersion: v1\nkind: Config\nclusters:\n- name: authz\n  cluster:\n    server: ${webhookUrl}\n    certificate-authority: ca.crt\nusers:\n- name: apiserver\n  user:\n    client-certificate: client.crt\n    client-key: client.key\n` +
    `contexts:\n- name: authz\n  context: {cluster: authz, user: apiserver}\ncurrent-context: authz\n`,
);

const tokenFile = join(dir, 'tokens.csv');
const USERS = ['allowed', 'denied', 'both', 'mismatch', 'slow', 'quiet', 'quiet2', 'quiet3', 'bound', 'skipped', 'errs', 'v1user'];
writeFileSync(tokenFile, USERS.map((u, i) => `${u}-token,${u},uid-${i},"team,${u}-group"`).join('\n') + '\n');

const as = (s: RunningServer, user: string, method: string, path: string, body?: unknown) => withToken(s, method, path, `${user}-token`, body);

function assertForbidden(r: { status: number; body: { kind?: string; reason?: string; code?: number } }, what: string) {
  assert.equal(r.status, 403, what);
  assert.equal(r.body.kind, 'Status', what);
  assert.equal(r.body.reason, 'Forbidden', what);
}

// ---------------------------------------------------------------------------------------------
// The flags' mode: Webhook then RBAC; v1beta1 by default; failures are no opinion.

const flags = await testServer({
  authentication: { tokenAuthFile: tokenFile },
  authorization: { modes: ['Webhook', 'RBAC'], webhook: { configFile: kubeconfigPath, authorizedTtlMs: 600_000, unauthorizedTtlMs: 400, timeoutMs: 500 } },
});

/** A ClusterRoleBinding of `role` for `user`, made by the administrator (system:masters). */
async function bind(s: RunningServer, user: string, role: string) {
  const r = await api(s, 'POST', '/apis/rbac.authorization.orch.io/v1/clusterrolebindings', {
    metadata: { name: `${user}-${role}` },
    roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.orch.io', kind: 'User', name: user }],
  });
  assert.equal(r.status, 201, r.text);
}
await bind(flags, 'denied', 'cluster-admin');
await bind(flags, 'mismatch', 'view');
await bind(flags, 'slow', 'view');
await bind(flags, 'bound', 'view');

// ---------------------------------------------------------------------------------------------
// --authorization-config: v1 reviews, failurePolicy Deny, match conditions, reload.

const configPath = join(dir, 'authz-config.yaml');
function authzConfig(o: { failurePolicy?: string; conditions?: string[]; extra?: string } = {}): string {
  const conditions = (o.conditions ?? []).map((c) => `      - expression: ${JSON.stringify(c)}\n`).join('');
  return (
    `apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n` +
    `- type: Webhook\n  name: first.example.com\n  webhook:\n    timeout: 1s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n` +
    `    failurePolicy: ${o.failurePolicy ?? 'Deny'}\n    unauthorizedTTL: 1ms\n    cacheAuthorizedRequests: false\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: ${kubeconfigPath}\n` +
    (conditions ? `    matchConditions:\n${conditions}` : '') +
    (o.extra ?? '') +
    `- type: RBAC\n  name: rbac\n`
  );
}
const CONDITIONS = ["request.user != 'skipped'", "request.user != 'errs' || request.groups[99] == 'x'"];
writeFileSync(configPath, authzConfig({ conditions: CONDITIONS }));
const file = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { configFile: configPath, configReloadIntervalMs: 200 } });
await bind(file, 'skipped', 'view');
await bind(file, 'errs', 'view');
await bind(file, 'mismatch', 'view');
await bind(file, 'v1user', 'view');

// The kubernetes profile: its configuration group and review group; v1beta1 from the file; a
// failing condition with failurePolicy NoOpinion skips the webhook, and AlwaysAllow (asked after
// it) allows.
const k8sConfigPath = join(dir, 'authz-config-k8s.yaml');
writeFileSync(
  k8sConfigPath,
  authzConfig({ failurePolicy: 'NoOpinion', conditions: CONDITIONS })
    .replace('apiserver.config.orch.io/v1', 'apiserver.config.k8s.io/v1beta1')
    .replace('subjectAccessReviewVersion: v1\n', 'subjectAccessReviewVersion: v1beta1\n')
    .replace('- type: RBAC\n  name: rbac\n', '- type: AlwaysAllow\n  name: alwaysallow\n'),
);
const k8s = await testServer({ naming: 'kubernetes', authentication: { tokenAuthFile: tokenFile }, authorization: { configFile: k8sConfigPath } });

describe('the Webhook mode of the flags', () => {
  test('allow: the request is served; the SubjectAccessReview sent is v1beta1 with the resource attributes and the user', async () => {
    const from = calls.length;
    const r = await as(flags, 'allowed', 'GET', '/api/v1/namespaces/default/configmaps/some-name');
    assert.equal(r.status, 404, JSON.stringify(r.body)); // allowed, and the object does not exist
    const sent = callsOf('allowed', from);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.apiVersion, 'authorization.orch.io/v1beta1');
    assert.equal(sent[0]!.client, 'orch-apiserver');
    assert.deepEqual(sent[0]!.spec, {
      resourceAttributes: { namespace: 'default', verb: 'get', version: 'v1', resource: 'configmaps', name: 'some-name' },
      user: 'allowed',
      group: ['team', 'allowed-group', 'system:authenticated'],
      uid: 'uid-0',
    });
    // A non-resource request: its path and verb.
    const h = await as(flags, 'allowed', 'GET', '/healthz');
    assert.equal(h.status, 200);
    assert.deepEqual(callsOf('allowed', from).at(-1)!.spec.nonResourceAttributes, { path: '/healthz', verb: 'get' });
  });

  test('denied: 403 with the reason at once, though RBAC (asked later) would allow; allowed and denied together is a deny', async () => {
    const from = calls.length;
    const r = await as(flags, 'denied', 'GET', '/api/v1/namespaces');
    assertForbidden(r, 'denied');
    assert.match(r.body.message, /User "denied" cannot list resource "namespaces" in API group "" at the cluster scope: the webhook says no/);
    assert.equal(callsOf('denied', from).length, 1);
    const both = await as(flags, 'both', 'GET', '/api/v1/namespaces');
    assertForbidden(both, 'both');
    assert.match(both.body.message, /both at once/);
  });

  test('no opinion: RBAC decides (403 without a binding, allowed with one)', async () => {
    const r = await as(flags, 'quiet', 'GET', '/api/v1/namespaces');
    assertForbidden(r, 'quiet');
    assert.match(r.body.message, /no opinion here/);
    assert.equal((await as(flags, 'bound', 'GET', '/api/v1/namespaces')).status, 200);
  });

  test('the cache: a repeated allow makes no call; other attributes are another entry; no opinion is kept for the unauthorized TTL only', async () => {
    await as(flags, 'allowed', 'GET', '/api/v1/namespaces/default/configmaps');
    let from = calls.length;
    for (let i = 0; i < 3; i++) assert.equal((await as(flags, 'allowed', 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    assert.equal(callsOf('allowed', from).length, 0, 'answered from the cache');
    await as(flags, 'allowed', 'GET', '/api/v1/namespaces/kube-public/configmaps');
    assert.equal(callsOf('allowed', from).length, 1, 'another namespace is another question');

    from = calls.length;
    await as(flags, 'quiet2', 'GET', '/api/v1/pods');
    await as(flags, 'quiet2', 'GET', '/api/v1/pods');
    assert.equal(callsOf('quiet2', from).length, 1, 'no opinion is cached too');
    await new Promise((r) => setTimeout(r, 500)); // the unauthorized TTL is 400 ms
    await as(flags, 'quiet2', 'GET', '/api/v1/pods');
    assert.equal(callsOf('quiet2', from).length, 2, 'asked again once the unauthorized TTL is over');
  });

  test('an answer of another version is an error: no opinion (RBAC then allows), never cached', async () => {
    const from = calls.length;
    assert.equal((await as(flags, 'mismatch', 'GET', '/api/v1/namespaces')).status, 200);
    assert.equal((await as(flags, 'mismatch', 'GET', '/api/v1/namespaces')).status, 200);
    assert.equal(callsOf('mismatch', from).length, 2, 'a failed review is not cached');
    // Without an RBAC grant the request is refused, as with no opinion.
    assertForbidden(await as(flags, 'mismatch', 'DELETE', '/api/v1/namespaces/default'), 'mismatch delete');
  });

  test('a webhook slower than the timeout: no opinion after the timeout, not after its answer', async () => {
    const start = Date.now();
    const r = await as(flags, 'slow', 'GET', '/api/v1/namespaces');
    assert.equal(r.status, 200, 'RBAC allowed once the webhook gave up');
    // The timeout is 500 ms and the webhook answers after 3 s (a generous bound for a busy machine).
    assert.ok(Date.now() - start < 2500, `took ${Date.now() - start} ms`);
  });
});

describe('--authorization-config', () => {
  test('v1 reviews name the groups `groups`; allowed answers are not cached with cacheAuthorizedRequests: false', async () => {
    const from = calls.length;
    assert.equal((await as(file, 'allowed', 'GET', '/api/v1/namespaces')).status, 200);
    assert.equal((await as(file, 'allowed', 'GET', '/api/v1/namespaces')).status, 200);
    const sent = callsOf('allowed', from);
    assert.equal(sent.length, 2, 'not cached');
    assert.equal(sent[0]!.apiVersion, 'authorization.orch.io/v1');
    assert.deepEqual(sent[0]!.spec.groups, ['team', 'allowed-group', 'system:authenticated']);
    assert.equal(sent[0]!.spec.group, undefined);
  });

  test('match conditions: false skips the webhook (RBAC decides); an error with none false applies failurePolicy Deny', async () => {
    const from = calls.length;
    assert.equal((await as(file, 'skipped', 'GET', '/api/v1/namespaces')).status, 200, 'RBAC allowed');
    assert.equal(callsOf('skipped', from).length, 0, 'the webhook was not asked');
    const r = await as(file, 'errs', 'GET', '/api/v1/namespaces');
    assertForbidden(r, 'a condition failed to evaluate');
    assert.equal(callsOf('errs', from).length, 0);
    // All true: the webhook is asked.
    await as(file, 'v1user', 'GET', '/api/v1/namespaces');
    assert.equal(callsOf('v1user', from).length, 1);
  });

  test('failurePolicy Deny: an answer of another version denies though RBAC would allow', async () => {
    assertForbidden(await as(file, 'mismatch', 'GET', '/api/v1/namespaces'), 'mismatch with Deny');
  });

  test('the kubernetes profile: apiserver.config.k8s.io, authorization.k8s.io/v1beta1; NoOpinion on a failing condition', async () => {
    const from = calls.length;
    assert.equal((await as(k8s, 'errs', 'GET', '/api/v1/namespaces')).status, 200, 'the condition failed: no opinion, then AlwaysAllow');
    assert.equal(callsOf('errs', from).length, 0);
    assertForbidden(await as(k8s, 'denied', 'GET', '/api/v1/namespaces'), 'denied before AlwaysAllow');
    assert.deepEqual(
      callsOf('denied', from).map((c) => [c.apiVersion, c.spec.group]),
      [['authorization.k8s.io/v1beta1', ['team', 'denied-group', 'system:authenticated']]],
    );
  });

  test('reload: a changed file takes over; a bad one, or one dropping RBAC, keeps the previous and is counted as a failure', async () => {
    writeFileSync(configPath, authzConfig({ failurePolicy: 'NoOpinion', conditions: CONDITIONS }));
    await waitFor('the NoOpinion policy', async () => (await as(file, 'mismatch', 'GET', '/api/v1/namespaces')).status === 200);
    const reloads = async (status: string) => {
      const m = await api(file, 'GET', '/metrics');
      const line = m.text.split('\n').find((l) => l.startsWith('apiserver_authorization_config_controller_automatic_reloads_total{') && l.includes(`status="${status}"`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    assert.ok((await reloads('success')) >= 1);
    // Invalid: a timeout over 30 s. The previous configuration stays.
    const failures = await reloads('failure');
    writeFileSync(configPath, authzConfig({ failurePolicy: 'Deny' }).replace('timeout: 1s', 'timeout: 31s'));
    await waitFor('the failed reload', async () => (await reloads('failure')) > failures);
    assert.equal((await as(file, 'mismatch', 'GET', '/api/v1/namespaces')).status, 200, 'still NoOpinion');
    // A reload may not drop the RBAC authorizer.
    const failures2 = await reloads('failure');
    writeFileSync(configPath, authzConfig({ failurePolicy: 'Deny' }).replace('- type: RBAC\n  name: rbac\n', ''));
    await waitFor('the refused reload', async () => (await reloads('failure')) > failures2);
    assert.equal((await as(file, 'mismatch', 'GET', '/api/v1/namespaces')).status, 200, 'still NoOpinion and RBAC');
  });
});

// ---------------------------------------------------------------------------------------------
// Start-up errors.

async function startFails(args: string[]): Promise<string> {
  const opts = parseArgs(['--secure-port=0', `--data-dir=${tempDir('authz-bad')}`, ...args]);
  assert.notEqual(opts, 'help');
  const s = await startServer(opts as ServerOptions).catch((e: Error) => e);
  if (!(s instanceof Error)) {
    await s.close();
    assert.fail(`${args.join(' ')} started`);
  }
  // One line, but for a compilation error, which shows the expression under its message as kube does.
  if (!s.message.includes('compilation failed')) assert.doesNotMatch(s.message, /\n/, 'one line');
  return s.message;
}

const badConfig = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return `--authorization-config=${p}`;
};
const HEAD = 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n';
const WEBHOOK = (name: string, body: string) =>
  `- type: Webhook\n  name: ${name}\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: ${kubeconfigPath}\n${body}`;

describe('start-up errors', () => {
  test('flags: exclusive with --authorization-mode and the webhook flags; a webhook file needs mode Webhook and the mode a file; a bad version', async () => {
    const ok = badConfig('ok.yaml', HEAD + '- type: RBAC\n  name: rbac\n');
    assert.equal(await startFails([ok, '--authorization-mode=RBAC']), '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
    assert.equal(await startFails([ok, `--authorization-webhook-config-file=${kubeconfigPath}`]), '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
    assert.equal(await startFails([`--authorization-webhook-config-file=${kubeconfigPath}`, '--authorization-mode=RBAC']), 'cannot specify --authorization-webhook-config-file without mode Webhook');
    assert.equal(await startFails(['--authorization-mode=Webhook']), "authorization-mode Webhook's authorization config file not passed");
    assert.equal(
      await startFails(['--authorization-mode=Webhook', `--authorization-webhook-config-file=${kubeconfigPath}`, '--authorization-webhook-version=v2']),
      'unsupported webhook authorizer version "v2", supported versions are "v1", "v1beta1"',
    );
  });

  test('the file: every field checked with kube-apiserver words', async () => {
    const cases: [string, string | RegExp][] = [
      [HEAD.replace('authorizers:\n', 'authorizers: []\n'), 'authorizers: Required value: at least one authorization mode must be defined'],
      [HEAD + '- type: RBAC\n  name: rbac\n- type: RBAC\n  name: rbac2\n', 'authorizers[1].type: Duplicate value: "RBAC"'],
      [HEAD + '- type: Magic\n  name: magic\n', /authorizers\[0\].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"/],
      [HEAD + '- type: RBAC\n  name: my-rbac\n', 'expected name rbac for authorizer RBAC instead of my-rbac'],
      [HEAD + WEBHOOK('a', '') + WEBHOOK('a', ''), 'authorizers[1].name: Duplicate value: "a"'],
      [HEAD + WEBHOOK('Bad_Name', ''), /authorizers\[0\].name: Invalid value: "Bad_Name": authorizer name is invalid: /],
      [HEAD + WEBHOOK('w', '').replace('timeout: 3s', 'timeout: 31s'), 'authorizers[0].webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s'],
      [HEAD + WEBHOOK('w', '').replace('    timeout: 3s\n', ''), 'authorizers[0].webhook.timeout: Required value'],
      [HEAD + WEBHOOK('w', '').replace('failurePolicy: NoOpinion', 'failurePolicy: Allow'), 'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"'],
      [HEAD + WEBHOOK('w', '').replace('subjectAccessReviewVersion: v1\n    match', 'subjectAccessReviewVersion: v2\n    match'), 'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"'],
      [HEAD + WEBHOOK('w', '').replace(kubeconfigPath, 'relative.kubeconfig'), 'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path'],
      [HEAD + WEBHOOK('w', '    matchConditions:\n    - expression: "request.nope"\n'), /authorizers\[0\].webhook.matchConditions\[0\].expression: Invalid value: "request.nope": compilation failed: /],
      [HEAD + WEBHOOK('w', '    matchConditions:\n    - expression: "request.user"\n'), 'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user": matchCondition request.user must evaluate to bool'],
      [HEAD + WEBHOOK('w', `    matchConditions:\n${Array.from({ length: 65 }, (_, i) => `    - expression: "request.user != 'u${i}'"\n`).join('')}`), 'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items'],
      [HEAD + '- type: RBAC\n  name: rbac\n  surprise: 1\n', 'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].surprise"'],
      [HEAD.replace('apiserver.config.orch.io/v1', 'apiserver.config.k8s.io/v1') + '- type: RBAC\n  name: rbac\n', 'failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver.config.k8s.io/v1"'],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      const got = await startFails([badConfig(`bad-${i}.yaml`, text)]);
      if (typeof message === 'string') assert.equal(got, message, text);
      else assert.match(got, message, text);
    }
  });

  test('the command line exits 1 with one line', async () => {
    const { code, stderr } = await commandLine;
    assert.equal(code, 1);
    assert.equal(stderr, 'Error: --authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined\n');
  });
});
