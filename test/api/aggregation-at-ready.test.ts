// A start returns once the aggregation controller's first pass is done: the default roles that
// aggregate aggregated roles (admin from edit from view) hold every level's rules at once, with no
// wait after the start.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer } from '../support/server.ts';

type Rule = { verbs?: string[]; resources?: string[] };

test('at start, admin holds its own, edit\'s and view\'s aggregated rules; edit holds view\'s', async () => {
  const server = await testServer({ naming: 'kubernetes' });
  const rules = async (name: string): Promise<Rule[]> => (await api(server, 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`)).body.rules ?? [];
  const has = (rs: Rule[], verb: string, resource: string) => rs.some((r) => r.verbs?.includes(verb) && r.resources?.includes(resource));
  const [admin, edit, view] = await Promise.all([rules('admin'), rules('edit'), rules('view')]);
  // (Of each level, a resource this server serves: the defaults name only those.)
  assert.ok(has(view, 'get', 'namespaces'), JSON.stringify(view));
  assert.ok(has(edit, 'create', 'leases') && has(edit, 'get', 'namespaces'), JSON.stringify(edit));
  assert.ok(has(admin, 'create', 'roles') && has(admin, 'create', 'leases') && has(admin, 'get', 'namespaces'), JSON.stringify(admin));
});
