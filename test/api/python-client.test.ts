// The real Python client (Debian's python3-kubernetes, for Debian's own /usr/bin/python3) against
// a fresh server in each naming profile: test/python/suite.py runs the typed CoreV1Api and
// CoordinationV1Api (CRUD, paging, conflicts, 422, a watch resumed from its last event), the
// dynamic client and raw calls in the kubernetes profile, and the dynamic client and raw calls in
// the orch profile. In the kubernetes profile it then runs the client's own e2e tests that use
// only served kinds (namespaces and an APIService from YAML, nodes, a watch of every change after
// a list), each reported on its own. Last, the client authenticates with a service-account token
// and with a client certificate made in the test, and a SelfSubjectReview says who each is.
// scripts/test-setup.sh installs the package when it is missing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, testServer } from '../support/server.ts';
import { issueCert, makeCa } from '../support/certs.ts';
import { tempDir } from '../support/tmp.ts';

const PYTHON = process.env.PYTHON_FOR_KUBERNETES || '/usr/bin/python3';
const suite = fileURLToPath(new URL('../python/suite.py', import.meta.url));

function run(url: string, profile: string, kubeconfig: string | undefined, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [suite, url, profile, ...(kubeconfig ? [kubeconfig] : [])], { timeout: 120_000, encoding: 'utf8', env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

// The three runs side by side: each has its own server, and most of a run's time is python3
// loading the client and waiting on the server.
describe('python3-kubernetes', { concurrency: true }, () => {
  for (const [profile, scenarios] of [
    [
      'kubernetes',
      [
        ...['typed_core', 'typed_leases', 'typed_watch_with_resume', 'dynamic_client', 'orch_raw_calls', 'cleanup'],
        // The client's own e2e tests for served kinds (kubernetes/e2e_test), in their order.
        ...['e2e_setup_test_utils_namespace', 'e2e_node_apis', 'e2e_create_namespace_from_yaml', 'e2e_create_apiservice_from_yaml_with_conflict'],
        ...['e2e_create_namespace_list_from_yaml', 'e2e_watch_leases', 'e2e_teardown_test_utils_namespace'],
      ],
    ],
    ['orch', ['dynamic_client', 'orch_raw_calls', 'cleanup']],
  ] as const) {
    test(`python3-kubernetes, ${profile} profile: ${scenarios.join(', ')}`, async () => {
      const server = await testServer({ naming: profile });
      const { code, out } = await run(server.url, profile, server.kubeconfigPath);
      if (/No module named 'kubernetes'/.test(out)) assert.fail(`${PYTHON} lacks the kubernetes package: run \`bash scripts/test-setup.sh\` (installs python3-kubernetes) — ${out}`);
      assert.equal(code, 0, out);
      const ok = out.split('\n').filter((l) => l.startsWith('ok ')).map((l) => l.slice(3));
      assert.deepEqual(ok, [...scenarios]);
      assert.match(out, /^done$/m);
    });
  }

  test('python3-kubernetes with a service-account token and with a client certificate of its own: each is who it should be', async () => {
    // The server's CA is one made here (kept in its certificate directory), so the test can issue a
    // client certificate under it.
    const dir = tempDir('python-identity');
    const ca = await makeCa('python-identity-ca');
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'pki', 'ca.key'), ca.key);
    // The identities are for authentication: every authenticated request is allowed.
    const server = await testServer({ naming: 'kubernetes', secureServing: { certDir: join(dir, 'pki') }, authorization: { modes: ['AlwaysAllow'] } });
    const user = await issueCert(ca, { subject: 'CN=py-cert-user, O=py-team, O=py-ops' });
    writeFileSync(join(dir, 'user.crt'), user.cert);
    writeFileSync(join(dir, 'user.key'), user.key);
    const created = await api(server, 'POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'py-robot' } });
    assert.equal(created.status, 201, created.text);
    const tr = await api(server, 'POST', '/api/v1/namespaces/default/serviceaccounts/py-robot/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    assert.equal(tr.status, 201, tr.text);

    const { code, out } = await run(server.url, 'identity', server.kubeconfigPath, { SUITE_TOKEN: tr.body.status.token, SUITE_CERT: join(dir, 'user.crt'), SUITE_KEY: join(dir, 'user.key') });
    assert.equal(code, 0, out);
    const identity = (credential: string) => JSON.parse(out.split('\n').find((l) => l.startsWith(`identity ${credential} `))?.slice(`identity ${credential} `.length) ?? 'null');
    const token = identity('token');
    assert.equal(token.username, 'system:serviceaccount:default:py-robot');
    assert.equal(token.uid, created.body.metadata.uid);
    assert.deepEqual(token.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    const cert = identity('certificate');
    assert.equal(cert.username, 'py-cert-user');
    assert.deepEqual(cert.groups, ['py-team', 'py-ops', 'system:authenticated']);
    assert.match(out, /^done$/m);
  });
});
