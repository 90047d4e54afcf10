// Webhook token authentication against a real token-review webhook over HTTPS on loopback (its
// certificates made here; it requires the client certificate the kubeconfig's user names): the
// user it answers, failures with and without an error, an answer of another version, v1 and
// v1beta1 in both naming profiles, audiences, the cache and its TTL, retries, a webhook that is
// down; kubectl with an `exec` credential plugin whose token the webhook resolves; the flags.
// Every rejected token is a 401 Status that changes nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { api, testServer } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { withToken } from '../support/identity.ts';
import { kubectl120, kubectlFor } from '../support/kubectl.ts';
import { startServerProcess } from '../support/server-process.ts';
import { tlsFor } from '../support/tls-clients.ts';
import { startServer, type RunningServer } from '../../src/server/server.ts';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const dir = tempDir('authn-webhook');
const b64 = (pem: string) => Buffer.from(pem).toString('base64');

// ---------------------------------------------------------------------------------------------
// The webhook: answers per token, every call recorded.

interface Review {
  apiVersion?: string;
  kind?: string;
  spec?: { token?: string; audiences?: string[] };
}
interface Call {
  apiVersion?: string;
  token?: string;
  audiences?: string[];
  /** The CN of the client certificate the API server presented. */
  client: string;
}
/** `code` 0: no answer at all; `delayMs`: the answer comes that much later. */
type Answer = { code?: number; body?: unknown; status?: Record<string, unknown>; delayMs?: number };

const ca = await makeCa('webhook-test-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
const apiserverClient = await issueCert(ca, { subject: 'CN=orch-apiserver' });
const strangerCa = await makeCa('stranger-ca');
const stranger = await issueCert(strangerCa, { subject: 'CN=stranger' });

const calls: Call[] = [];
const answers = new Map<string, (r: Review) => Answer>();
const ALICE = { username: 'alice', uid: 'alice-uid', groups: ['dev', 'ops'], extra: { 'example.com/team': ['a', 'b'] } };
answers.set('alice-token', () => ({ status: { authenticated: true, user: ALICE } }));
answers.set('bob-token', () => ({ status: { authenticated: true, user: { username: 'bob' } } }));
answers.set('denied-token', () => ({ status: { authenticated: false } }));
answers.set('error-token', () => ({ status: { authenticated: false, error: 'the token has expired', user: { username: 'ignored' } } }));
answers.set('other-audience-token', () => ({ status: { authenticated: true, user: { username: 'carol' }, audiences: ['someone-else'] } }));
answers.set('echo-audiences-token', (r) => ({ status: { authenticated: true, user: { username: 'dave' }, audiences: r.spec?.audiences } }));

function startWebhook(port = 0): Promise<Server> {
  const server = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString()) as Review;
      const client = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
      calls.push({ apiVersion: review.apiVersion, token: review.spec?.token, audiences: review.spec?.audiences, client });
      const a = answers.get(review.spec?.token ?? '')?.(review) ?? { status: { authenticated: false } };
      if (a.code === 0) return; // never answers
      res.statusCode = a.code ?? 200;
      res.setHeader('Content-Type', 'application/json');
      const body = JSON.stringify(a.body ?? { apiVersion: review.apiVersion, kind: 'TokenReview', status: a.status ?? {} });
      if (a.delayMs) setTimeout(() => res.end(body), a.delayMs);
      else res.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => {
      server.unref();
      resolve(server);
    }),
  );
}
const portOf = (s: Server) => (s.address() as { port: number }).port;

const webhook = await startWebhook();
const webhookUrl = `https://127.0.0.1:${portOf(webhook)}/review`;
/** Calls of `token` since `from`. */
const callsOf = (token: string, from = 0) => calls.slice(from).filter((c) => c.token === token);

// The kubeconfig of the webhook: files relative to its directory in one, inline data in another.
writeFileSync(join(dir, 'ca.crt'), ca.cert);
writeFileSync(join(dir, 'client.crt'), apiserverClient.cert);
writeFileSync(join(dir, 'client.key'), apiserverClient.key);
function kubeconfig(name: string, server: string, inline: boolean, user = apiserverClient): string {
  const cluster = inline ? `certificate-authority-data: ${b64(ca.cert)}` : 'certificate-authority: ca.crt';
  const creds = inline ? `client-certificate-data: ${b64(user.cert)}\n    client-key-data: ${b64(user.key)}` : 'client-certificate: client.crt\n    client-key: client.key';
  const path = join(dir, name);
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: webhook\n  cluster:\n    server: ${server}\n    ${cluster}\nusers:\n- name: apiserver\n  user:\n    ${creds}\n` +
      `contexts:\n- name: webhook\n  context: {cluster: webhook, user: apiserver}\ncurrent-context: webhook\n`,
  );
  return path;
}

const selfReview = (s: RunningServer, token: string, group = 'authentication.orch.io') =>
  withToken(s, 'POST', `/apis/${group}/v1/selfsubjectreviews`, token, { apiVersion: `${group}/v1`, kind: 'SelfSubjectReview' });
const tokenReview = (s: RunningServer, token: string, audiences?: string[]) =>
  api(s, 'POST', '/apis/authentication.orch.io/v1/tokenreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } });

// v1beta1 (the default version) in the orch profile, answers kept for long.
// What is tested is authentication: every authenticated user is allowed.
const server = await testServer({
  authentication: { tokenWebhook: { configFile: kubeconfig('webhook.kubeconfig', webhookUrl, false), cacheTtlMs: 600_000, retryInitialBackoffMs: 5, requestTimeoutMs: 500 } },
  authorization: { modes: ['AlwaysAllow'] },
});
const API_AUDIENCE = 'https://orch.default.svc.cluster.local';

describe('the webhook authenticates', () => {
  test('the user it answers: name, uid, groups, extra, system:authenticated; the request it gets', async () => {
    const from = calls.length;
    const r = await selfReview(server, 'alice-token');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.status.userInfo, { ...ALICE, groups: ['dev', 'ops', 'system:authenticated'] });
    assert.deepEqual(callsOf('alice-token', from), [{ apiVersion: 'authentication.orch.io/v1beta1', token: 'alice-token', audiences: [API_AUDIENCE], client: 'orch-apiserver' }]);
  });

  test('the cache: a repeated token does not reach the webhook; other audiences are another entry', async () => {
    await selfReview(server, 'bob-token');
    const from = calls.length;
    for (let i = 0; i < 3; i++) assert.equal((await selfReview(server, 'bob-token')).status, 201);
    assert.equal(callsOf('bob-token', from).length, 0, 'answered from the cache');
    // A TokenReview for other audiences is asked anew.
    const r = await tokenReview(server, 'bob-token', ['custom']);
    assert.deepEqual(callsOf('bob-token', from).map((c) => c.audiences), [['custom']]);
    // The webhook named no audience: the token is for the server's own, not "custom".
    assert.deepEqual(r.body.status, { user: {}, error: 'invalid bearer token' });
  });

  test('concurrent requests with the same token share one call', async () => {
    answers.set('slow-token', () => ({ status: { authenticated: true, user: { username: 'slow' } }, delayMs: 200 }));
    const from = calls.length;
    const replies = await Promise.all(Array.from({ length: 5 }, () => selfReview(server, 'slow-token')));
    assert.deepEqual(replies.map((r) => r.status), [201, 201, 201, 201, 201]);
    assert.equal(callsOf('slow-token', from).length, 1);
  });

  test('audiences: those the review names, or the implicit ones; none in common is 401', async () => {
    const r = await tokenReview(server, 'echo-audiences-token', ['custom', 'more']);
    assert.deepEqual(r.body.status, { authenticated: true, user: { username: 'dave', groups: ['system:authenticated'] }, audiences: ['custom', 'more'] });
    // Without spec.audiences a TokenReview is for the server's audiences, as a request is.
    const own = await tokenReview(server, 'bob-token');
    assert.deepEqual(own.body.status, { authenticated: true, user: { username: 'bob', groups: ['system:authenticated'] }, audiences: [API_AUDIENCE] });
    const other = await selfReview(server, 'other-audience-token');
    assert.equal(other.status, 401);
    assert.deepEqual(other.body, UNAUTHORIZED);
  });

  test('a failed review is 401: with status.error (asked again next time) and without (kept)', async () => {
    for (const token of ['denied-token', 'error-token']) {
      const r = await selfReview(server, token);
      assert.equal(r.status, 401, token);
      assert.deepEqual(r.body, UNAUTHORIZED);
    }
    const from = calls.length;
    await selfReview(server, 'denied-token');
    await selfReview(server, 'error-token');
    assert.equal(callsOf('denied-token', from).length, 0, 'an unauthenticated answer is cached');
    assert.equal(callsOf('error-token', from).length, 1, 'an answer with an error is not');
    // TokenReview shows the webhook's error.
    assert.deepEqual((await tokenReview(server, 'error-token')).body.status, { user: {}, error: 'the token has expired' });
  });

  test('an answer of another version or kind, or no TokenReview at all, is 401 and not cached', async () => {
    const bad: [string, Answer][] = [
      ['v1-answer', { body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } } }],
      ['k8s-group-answer', { body: { apiVersion: 'authentication.k8s.io/v1beta1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } } }],
      ['kind-answer', { body: { apiVersion: 'authentication.orch.io/v1beta1', kind: 'SubjectAccessReview', status: { authenticated: true, user: { username: 'x' } } } }],
      ['no-type-answer', { body: { status: { authenticated: true, user: { username: 'x' } } } }],
      ['wrong-type-answer', { body: { apiVersion: 'authentication.orch.io/v1beta1', kind: 'TokenReview', status: { authenticated: 'yes', user: { username: 'x' } } } }],
      ['not-json-answer', { body: 'not json' }],
      ['not-found', { code: 404 }],
    ];
    for (const [token, a] of bad) answers.set(token, () => a);
    const from = calls.length;
    for (const [token] of bad) {
      const r = await selfReview(server, token);
      assert.equal(r.status, 401, token);
      assert.deepEqual(r.body, UNAUTHORIZED);
    }
    for (const [token] of bad) await selfReview(server, token);
    for (const [token] of bad) assert.equal(callsOf(token, from).length, 2, `${token}: asked again, never cached, never retried`);
  });

  test('HTTP 500 and 429 are retried with backoff (five attempts); an error is never cached', async () => {
    let failures = 3;
    answers.set('flaky-token', () => (failures-- > 0 ? { code: failures % 2 ? 500 : 429 } : { status: { authenticated: true, user: { username: 'flaky' } } }));
    const from = calls.length;
    const r = await selfReview(server, 'flaky-token');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(callsOf('flaky-token', from).length, 4, 'three failures, then the answer');

    answers.set('broken-token', () => ({ code: 500 }));
    const from2 = calls.length;
    assert.equal((await selfReview(server, 'broken-token')).status, 401);
    assert.equal(callsOf('broken-token', from2).length, 5, 'five attempts in all');
    answers.set('broken-token', () => ({ status: { authenticated: true, user: { username: 'mended' } } }));
    const mended = await selfReview(server, 'broken-token');
    assert.equal(mended.status, 201, 'the failure was not cached');
    assert.equal(mended.body.status.userInfo.username, 'mended');
  });

  test('a webhook that does not answer in time, or answers too much, is 401', async () => {
    answers.set('silent-token', () => ({ code: 0 }));
    answers.set('huge-token', () => ({ status: { authenticated: true, user: { username: 'huge', groups: Array.from({ length: 100_000 }, (_, i) => `group-${i}`) } } }));
    const from = calls.length;
    const started = Date.now();
    assert.equal((await selfReview(server, 'silent-token')).status, 401);
    // The request timeout (500 ms here) bounds the call; a timeout is not retried.
    assert.ok(Date.now() - started < 5_000);
    assert.equal(callsOf('silent-token', from).length, 1);
    assert.equal((await selfReview(server, 'huge-token')).status, 401, 'an answer over 1 MiB is refused');
  });

  test('a rejected request creates nothing', async () => {
    for (const token of ['denied-token', 'error-token', 'v1-answer', 'unknown-token']) {
      const r = await withToken(server, 'POST', '/api/v1/namespaces', token, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `rejected-${token}` } });
      assert.equal(r.status, 401, token);
      assert.deepEqual(r.body, UNAUTHORIZED);
      assert.equal((await api(server, 'GET', `/api/v1/namespaces/rejected-${token}`)).status, 404);
    }
    // The same request with a good token is created.
    const ok = await withToken(server, 'POST', '/api/v1/namespaces', 'alice-token', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'webhook-created' } });
    assert.equal(ok.status, 201);
  });
});

// These servers turn off the 10 s cache that sits in front of every token authenticator (as in
// kube-apiserver), so what is measured is the webhook's own cache.
describe('v1 in the kubernetes profile, a short TTL, a webhook that goes down', () => {
  test('v1 TokenReviews in authentication.k8s.io; the answer is asked again once the TTL has passed', async () => {
    const s = await testServer({
      naming: 'kubernetes',
      authentication: { tokenWebhook: { configFile: kubeconfig('v1.kubeconfig', webhookUrl, true), version: 'v1', cacheTtlMs: 300, retryInitialBackoffMs: 5 }, tokenCacheTtlMs: 0 },
    });
    const from = calls.length;
    const r = await selfReview(s, 'alice-token', 'authentication.k8s.io');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status.userInfo.username, 'alice');
    assert.deepEqual(callsOf('alice-token', from)[0], { apiVersion: 'authentication.k8s.io/v1', token: 'alice-token', audiences: ['https://kubernetes.default.svc.cluster.local'], client: 'orch-apiserver' });
    await selfReview(s, 'alice-token', 'authentication.k8s.io');
    assert.equal(callsOf('alice-token', from).length, 1, 'within the TTL: from the cache');
    await new Promise((done) => setTimeout(done, 350));
    await selfReview(s, 'alice-token', 'authentication.k8s.io');
    assert.equal(callsOf('alice-token', from).length, 2, 'after the TTL: asked again');
    // The v1beta1 answer of a v1 review is refused.
    answers.set('beta-answer', () => ({ body: { apiVersion: 'authentication.k8s.io/v1beta1', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } } }));
    assert.equal((await selfReview(s, 'beta-answer', 'authentication.k8s.io')).status, 401);
  });

  test('a webhook that is down is 401, not cached: once it is back the token authenticates; TTL 0 keeps nothing', async () => {
    const second = await startWebhook();
    const port = portOf(second);
    await new Promise((done) => second.close(done));
    const logs: string[] = [];
    const s = await testServer({
      authentication: { tokenWebhook: { configFile: kubeconfig('down.kubeconfig', `https://127.0.0.1:${port}/`, true), version: 'v1', cacheTtlMs: 0, retryInitialBackoffMs: 5 }, tokenCacheTtlMs: 0 },
      log: (m) => logs.push(m),
    });
    const down = await selfReview(s, 'alice-token');
    assert.equal(down.status, 401);
    assert.deepEqual(down.body, UNAUTHORIZED);
    assert.ok(logs.some((l) => /Failed to make webhook authenticator request: .*ECONNREFUSED/.test(l)), logs.join('\n'));
    assert.ok(!logs.some((l) => l.includes('alice-token')), 'the token is never logged');
    const back = await startWebhook(port);
    try {
      const from = calls.length;
      assert.equal((await selfReview(s, 'alice-token')).status, 201);
      assert.equal((await selfReview(s, 'alice-token')).status, 201);
      assert.equal(callsOf('alice-token', from).length, 2, 'TTL 0: every request asks');
    } finally {
      back.close();
    }
  });

  test('a webhook that refuses the client certificate is 401', async () => {
    const logs: string[] = [];
    const s = await testServer({
      authentication: { tokenWebhook: { configFile: kubeconfig('stranger.kubeconfig', webhookUrl, true, stranger), retryInitialBackoffMs: 5 } },
      log: (m) => logs.push(m),
    });
    const from = calls.length;
    assert.equal((await selfReview(s, 'alice-token')).status, 401);
    assert.equal(callsOf('alice-token', from).length, 0, 'the webhook never took the review');
    assert.ok(logs.some((l) => l.startsWith('Unable to authenticate the request: Failed to make webhook authenticator request: ')), logs.join('\n'));
  });
});

describe('kubectl with an exec credential plugin', () => {
  /** A plugin printing `token` as an ExecCredential of `apiVersion`, counting its runs in a file. */
  function plugin(name: string, apiVersion: string, token: string, expires: boolean): { script: string; runs: () => number } {
    const count = join(dir, `${name}.runs`);
    writeFileSync(count, '');
    const script = join(dir, `${name}.cjs`);
    const expiry = expires ? `, expirationTimestamp: new Date(Date.now() + 3600e3).toISOString().replace(/\\.\\d+Z$/, 'Z')` : '';
    writeFileSync(
      script,
      `const fs = require('fs');\nfs.appendFileSync(${JSON.stringify(count)}, 'x');\n` +
        `const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO || '{}');\n` +
        `if (info.apiVersion && info.apiVersion !== ${JSON.stringify(apiVersion)}) { console.error('unexpected ' + info.apiVersion); process.exit(1); }\n` +
        `console.log(JSON.stringify({ apiVersion: ${JSON.stringify(apiVersion)}, kind: 'ExecCredential', status: { token: ${JSON.stringify(token)}${expiry} } }));\n`,
    );
    return { script, runs: () => readFileSync(count, 'utf8').length };
  }

  function execKubeconfig(path: string, apiVersion: string, script: string): string {
    const interactive = apiVersion.endsWith('/v1') ? '\n      interactiveMode: Never' : '';
    writeFileSync(
      path,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server.url}\n    certificate-authority-data: ${b64(tlsFor(server.url)!.ca)}\n` +
        `users:\n- name: u\n  user:\n    exec:\n      apiVersion: ${apiVersion}\n      command: ${process.execPath}\n      args: [${JSON.stringify(script)}]${interactive}\n` +
        `contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`,
    );
    return path;
  }

  test('the newest kubectl (client.authentication.k8s.io/v1): get ns and auth whoami; the plugin runs once per run', async () => {
    const k = kubectlFor(server, { label: 'kubectl-exec', anonymous: true });
    const p = plugin('v1-plugin', 'client.authentication.k8s.io/v1', 'alice-token', true);
    const config = execKubeconfig(join(k.dir, 'exec.kubeconfig'), 'client.authentication.k8s.io/v1', p.script);
    const out = await k.ok(['--kubeconfig', config, 'get', 'ns', 'webhook-created', '-o', 'name']);
    assert.equal(out.trim(), 'namespace/webhook-created');
    assert.equal(p.runs(), 1, 'one run of kubectl, several requests (discovery, the get), one run of the plugin');
    const who = JSON.parse(await k.ok(['--kubeconfig', config, 'auth', 'whoami', '-o', 'json']));
    assert.deepEqual(who.status.userInfo, { ...ALICE, groups: ['dev', 'ops', 'system:authenticated'] });
    // A plugin whose token the webhook refuses: kubectl reports Unauthorized.
    const refused = plugin('refused-plugin', 'client.authentication.k8s.io/v1', 'denied-token', false);
    const bad = await k.fails(['--kubeconfig', execKubeconfig(join(k.dir, 'refused.kubeconfig'), 'client.authentication.k8s.io/v1', refused.script), 'get', 'ns']);
    assert.match(bad.stderr, /Unauthorized|must be logged in/);
  });

  test('kubectl 1.20 (client.authentication.k8s.io/v1beta1): get ns', async () => {
    const k = kubectlFor(server, { label: 'kubectl-exec-120', anonymous: true, bin: kubectl120() });
    const p = plugin('v1beta1-plugin', 'client.authentication.k8s.io/v1beta1', 'bob-token', true);
    const config = execKubeconfig(join(k.dir, 'exec.kubeconfig'), 'client.authentication.k8s.io/v1beta1', p.script);
    const out = await k.ok(['--kubeconfig', config, 'get', 'ns', 'webhook-created', '-o', 'name']);
    assert.equal(out.trim(), 'namespace/webhook-created');
    assert.equal(p.runs(), 1);
  });
});

describe('configuration', () => {
  test('start-up errors of one line', async () => {
    const fails = async (tokenWebhook: { configFile: string; version?: 'v1' | 'v1beta1' }, message: RegExp) => {
      const started = await startServer({ authentication: { tokenWebhook } }).catch((e: Error) => e);
      // A server that starts all the same is closed, or it would keep the test process alive.
      if (!(started instanceof Error)) {
        await started.close();
        assert.fail(`started, where ${message} was expected`);
      }
      assert.match(started.message, message);
      assert.ok(!started.message.includes('\n'), started.message);
    };
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    await fails({ configFile: join(dir, 'missing.kubeconfig') }, /^--authentication-token-webhook-config-file: unable to read kubeconfig ".*missing.kubeconfig": ENOENT/);
    await fails({ configFile: write('bad.yaml', 'clusters: [unclosed') }, /^--authentication-token-webhook-config-file: invalid kubeconfig ".*bad.yaml": not YAML or JSON/);
    await fails({ configFile: write('empty.yaml', '') }, /no configuration has been provided/);
    await fails({ configFile: write('no-server.yaml', 'clusters:\n- name: c\n  cluster: {}\n') }, /no server found for cluster "c"/);
    await fails({ configFile: write('no-ctx.yaml', `current-context: x\nclusters:\n- name: c\n  cluster: {server: ${webhookUrl}}\n`) }, /context was not found for specified context: x/);
    await fails({ configFile: write('no-ca.yaml', `clusters:\n- name: c\n  cluster: {server: ${webhookUrl}, certificate-authority: nope.crt}\n`) }, /certificate-authority: ENOENT.*nope\.crt/);
    await fails({ configFile: write('no-key.yaml', `clusters:\n- name: c\n  cluster: {server: ${webhookUrl}}\nusers:\n- name: u\n  user: {client-certificate: client.crt}\n`) }, /client-key-data or client-key must be specified for u/);
    await fails({ configFile: kubeconfig('version.kubeconfig', webhookUrl, true), version: 'v2' as 'v1' }, /^unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"$/);
  });

  test('the flags: config file, version and cache TTL; bad ones exit non-zero with one line', async () => {
    const exit = async (args: string[]) => {
      const child = spawn(process.execPath, [new URL('../../bin/orch-apiserver.js', import.meta.url).pathname, '--secure-port=0', `--data-dir=${tempDir('webhook-cli-bad')}`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      return { code, first: stderr.split('\n')[0]! };
    };
    const [missing, version, p] = await Promise.all([
      exit([`--authentication-token-webhook-config-file=${join(dir, 'missing.kubeconfig')}`]),
      exit([`--authentication-token-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`, '--authentication-token-webhook-version=v2']),
      startServerProcess([
        `--data-dir=${tempDir('webhook-cli')}`,
        `--authentication-token-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`,
        '--authentication-token-webhook-version=v1',
        '--authentication-token-webhook-cache-ttl=1m',
      ]),
    ]);
    assert.equal(missing.code, 1);
    assert.match(missing.first, /^Error: --authentication-token-webhook-config-file: unable to read kubeconfig ".*missing.kubeconfig": ENOENT/);
    assert.deepEqual(version, { code: 2, first: 'Error: invalid --authentication-token-webhook-version "v2": expected v1 or v1beta1' });
    try {
      const s = { url: p.url, ca: tlsFor(p.url)!.ca } as RunningServer;
      const from = calls.length;
      const r = await selfReview(s, 'alice-token');
      assert.equal(r.status, 201, JSON.stringify(r.body));
      await selfReview(s, 'alice-token');
      assert.deepEqual(
        callsOf('alice-token', from).map((c) => c.apiVersion),
        ['authentication.orch.io/v1'],
        'v1, and cached',
      );
    } finally {
      await p.kill();
    }
  });
});
