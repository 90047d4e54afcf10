// The rule resolvers of the authorization modes and their merge (kube's union of RuleResolvers):
// lists concatenated in mode order, incomplete when any mode is, errors aggregated.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modeRules, rulesResolverChain, unlistableRules, allowNothingRules } from '../../src/auth/authz/rules-review.ts';
import type { AuthorizationMode } from '../../src/auth/authz/modes.ts';

const jane = { name: 'jane', groups: ['system:authenticated'] };
const node = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

test('AlwaysAllow lists everything, AlwaysDeny nothing, both complete', async () => {
  assert.deepEqual(await modeRules(['AlwaysDeny', 'AlwaysAllow'], {}).rulesFor(jane, 'default'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  });
});

test('the Node mode is incomplete for nodes only; a mode without a resolver is incomplete with an error', async () => {
  const modes = ['Node', 'AlwaysDeny'] as unknown as AuthorizationMode[];
  assert.deepEqual(await modeRules(modes, {}).rulesFor(jane, 'default'), { resourceRules: [], nonResourceRules: [], incomplete: false });
  assert.deepEqual(await modeRules(modes, {}).rulesFor(node, 'default'), { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' });
  const chain = rulesResolverChain([unlistableRules('webhook authorizer'), allowNothingRules, unlistableRules('other authorizer')]);
  assert.deepEqual(await chain.rulesFor(jane, 'x'), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    error: '[webhook authorizer does not support user rule resolution, other authorizer does not support user rule resolution]',
  });
});
