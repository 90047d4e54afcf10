// The real Python client (Debian's python3-kubernetes, for Debian's own /usr/bin/python3) against
// a fresh server in each naming profile: test/python/suite.py runs the typed CoreV1Api and
// CoordinationV1Api (CRUD, paging, conflicts, 422, a watch resumed from its last event), the
// dynamic client and raw calls in the kubernetes profile, and the dynamic client and raw calls in
// the orch profile. In the kubernetes profile it then runs the client's own e2e tests that use
// only served kinds (namespaces and an APIService from YAML, nodes, a watch of every change after
// a list), each reported on its own. scripts/test-setup.sh installs the package when it is missing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { testServer } from '../support/server.ts';

const PYTHON = process.env.PYTHON_FOR_KUBERNETES || '/usr/bin/python3';
const suite = fileURLToPath(new URL('../python/suite.py', import.meta.url));

function run(url: string, profile: string, kubeconfig: string | undefined): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [suite, url, profile, ...(kubeconfig ? [kubeconfig] : [])], { timeout: 120_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

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
