// An authorization webhook reached with `connectionInfo.type: InClusterConfig`, the server run as
// a child process whose KUBERNETES_SERVICE_HOST and _PORT name a real HTTPS webhook on loopback and
// whose pod files (token, ca.crt) are in a directory of the test: the webhook sees the pod's token
// as a bearer token, a rotated token is read again once the webhook refuses the old one (401), and
// the webhook's certificate is checked against ca.crt (another CA there, after a reload, and no
// call gets through). The webhook metrics are read from /metrics: round-trips and their latency by
// result (success, error, timeout), fail-open decisions, match condition exclusions, errors and
// evaluation time; the configured authorizers' decisions.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:https';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, waitFor } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { withToken } from '../support/identity.ts';
import { startServerProcess } from '../support/server-process.ts';
import { parsePrometheusText } from '../support/prometheus.ts';

const dir = tempDir('authz-in-cluster');
const pod = join(dir, 'serviceaccount');
mkdirSync(pod);

const ca = await makeCa('in-cluster-webhook-ca');
const otherCa = await makeCa('another-ca');
const serving = await issueCert(ca, { subject: 'CN=127.0.0.1', usage: 'server', hosts: [{ type: 'ip', value: '127.0.0.1' }] });
writeFileSync(join(pod, 'token'), 'first-token\n');
writeFileSync(join(pod, 'ca.crt'), ca.cert);

// The webhook: every call recorded with its Authorization header; a token other than the expected
// one is refused with 401.
const calls: { user: string; authorization: string }[] = [];
let expectedToken = 'first-token';
const webhook = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString()) as { apiVersion: string; spec: { user?: string } };
    const user = review.spec.user ?? '';
    calls.push({ user, authorization: req.headers.authorization ?? '' });
    res.setHeader('Content-Type', 'application/json');
    if (req.headers.authorization !== `Bearer ${expectedToken}`) {
      res.statusCode = 401;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
      return;
    }
    const body = JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: { allowed: user === 'allowed' || user === 'slow' } });
    if (user === 'slow') setTimeout(() => res.end(body), 2500).unref();
    else res.end(body);
  });
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
webhook.unref();
const webhookPort = (webhook.address() as { port: number }).port;

const config = (timeout: string) => `apiVersion: apiserver.config.orch.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: in-cluster
  webhook:
    timeout: ${timeout}
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    cacheAuthorizedRequests: false
    cacheUnauthorizedRequests: false
    connectionInfo:
      type: InClusterConfig
    matchConditions:
    - expression: request.user != "skipped"
    - expression: request.user != "errs" || request.nonResourceAttributes.path == "/x"
- type: RBAC
  name: rbac
`;
const configFile = join(dir, 'authz.yaml');
writeFileSync(configFile, config('1s'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['allowed', 'slow', 'skipped', 'errs'].map((u, i) => `${u}-token,${u},uid-${i}`).join('\n') + '\n');

const server = await startServerProcess([`--data-dir=${join(dir, 'data')}`, `--token-auth-file=${tokenFile}`, `--authorization-config=${configFile}`], 30_000, {
  env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(webhookPort) },
  options: { authorization: { inClusterServiceAccount: { dir: pod }, configReloadIntervalMs: 300 } },
});
after(() => server.kill());

const get = (user: string) => withToken(server, 'GET', '/api/v1/namespaces/default/configmaps', `${user}-token`);

/** The value of a sample (a histogram's `_count` when asked for one), 0 when absent. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const r = await api(server, 'GET', '/metrics');
  assert.equal(r.status, 200);
  const family = parsePrometheusText(r.text).get(name.replace(/_count$/, ''));
  const sample = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value ?? 0;
}
const IN_CLUSTER = { name: 'in-cluster' };

test("the webhook is called at the service's address with the pod's token, its certificate checked against ca.crt", async () => {
  const decided = { type: 'Webhook', name: 'in-cluster', decision: 'allowed' };
  const allows = await metric('apiserver_authorization_decisions_total', decided);
  const before = calls.length;
  const r = await get('allowed');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(await metric('apiserver_authorization_decisions_total', decided), allows + 1, 'the allow is counted as the webhook authorizer\'s');
  const mine = calls.slice(before).filter((c) => c.user === 'allowed');
  assert.deepEqual(
    mine.map((c) => c.authorization),
    ['Bearer first-token'],
  );
});

test('a rotated token is read again once the webhook refuses the old one', async () => {
  const errors = await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'error' });
  const failOpen = await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'error' });
  writeFileSync(join(pod, 'token'), 'second-token\n');
  expectedToken = 'second-token';
  const before = calls.length;
  // The old token is refused: no opinion (the failure policy), then RBAC has none either.
  const refused = await get('allowed');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'Forbidden');
  const allowed = await get('allowed');
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  assert.deepEqual(
    calls.slice(before).filter((c) => c.user === 'allowed').map((c) => c.authorization),
    ['Bearer first-token', 'Bearer second-token'],
  );
  assert.equal(await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'error' }), errors + 1);
  assert.equal(await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'error' }), failOpen + 1);
});

test('round-trips, their latency and fail-open decisions are counted by result', async () => {
  const success = await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'success' });
  const successCount = await metric('apiserver_authorization_webhook_duration_seconds_count', { ...IN_CLUSTER, result: 'success' });
  const timeouts = await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'timeout' });
  const timeoutCount = await metric('apiserver_authorization_webhook_duration_seconds_count', { ...IN_CLUSTER, result: 'timeout' });
  const failOpen = await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'timeout' });
  assert.equal((await get('allowed')).status, 200);
  // The webhook answers after the 1 s timeout: no opinion, so RBAC decides (403).
  assert.equal((await get('slow')).status, 403);
  // Requests of anonymous probes may be counted too, hence at least.
  assert.ok((await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'success' })) >= success + 1);
  assert.ok((await metric('apiserver_authorization_webhook_duration_seconds_count', { ...IN_CLUSTER, result: 'success' })) >= successCount + 1);
  assert.equal(await metric('apiserver_authorization_webhook_evaluations_total', { ...IN_CLUSTER, result: 'timeout' }), timeouts + 1);
  assert.equal(await metric('apiserver_authorization_webhook_duration_seconds_count', { ...IN_CLUSTER, result: 'timeout' }), timeoutCount + 1);
  assert.equal(await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'timeout' }), failOpen + 1);
  const r = await api(server, 'GET', '/metrics');
  const families = parsePrometheusText(r.text);
  assert.equal(families.get('apiserver_authorization_webhook_evaluations_total')?.type, 'counter');
  assert.equal(families.get('apiserver_authorization_webhook_duration_seconds')?.type, 'histogram');
  assert.equal(families.get('apiserver_authorization_webhook_evaluations_fail_open_total')?.help, '[BETA] NoOpinion results due to webhook timeout or error.');
});

test('match conditions: an exclusion and an evaluation error are counted, with the evaluation time', async () => {
  const labels = { type: 'Webhook', name: 'in-cluster' };
  const exclusions = await metric('apiserver_authorization_match_condition_exclusions_total', labels);
  const errors = await metric('apiserver_authorization_match_condition_evaluation_errors_total', labels);
  const evaluations = await metric('apiserver_authorization_match_condition_evaluation_seconds_count', labels);
  const before = calls.length;
  assert.equal((await get('skipped')).status, 403);
  assert.equal((await get('errs')).status, 403);
  assert.deepEqual(
    calls.slice(before).filter((c) => c.user === 'skipped' || c.user === 'errs'),
    [],
    'neither reaches the webhook',
  );
  assert.equal(await metric('apiserver_authorization_match_condition_exclusions_total', labels), exclusions + 1);
  assert.equal(await metric('apiserver_authorization_match_condition_evaluation_errors_total', labels), errors + 1);
  assert.ok((await metric('apiserver_authorization_match_condition_evaluation_seconds_count', labels)) >= evaluations + 2);
});

test("another CA in ca.crt (read again with the reloaded configuration) refuses the webhook's certificate", async () => {
  const reloads = await metric('apiserver_authorization_config_controller_automatic_reloads_total', { status: 'success' });
  const failOpen = await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'error' });
  writeFileSync(join(pod, 'ca.crt'), otherCa.cert);
  writeFileSync(configFile, config('2s'));
  await waitFor('the configuration reloaded', async () => (await metric('apiserver_authorization_config_controller_automatic_reloads_total', { status: 'success' })) > reloads);
  const before = calls.length;
  const r = await get('allowed');
  assert.equal(r.status, 403);
  assert.equal(r.body.kind, 'Status');
  assert.equal(calls.length, before, 'no call got through the TLS handshake');
  assert.equal(await metric('apiserver_authorization_webhook_evaluations_fail_open_total', { ...IN_CLUSTER, result: 'error' }), failOpen + 1);
});
