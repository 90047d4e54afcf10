// The audit policy's decisions kept per frozen user and request shape give exactly what evaluating
// the rules gives, for every user, verb, namespace, resource, subresource, name and path, asked in
// any order and again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePolicy, parseAuditPolicy, policyEvaluator } from '../../src/server/audit/policy.ts';
import { parseRequestInfo } from '../../src/request/request-info.ts';
import type { UserInfo } from '../../src/request/user.ts';

const policy = parseAuditPolicy(
  `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["configmaps"]
        resourceNames: ["special"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "serviceaccounts/token"]
  - level: Request
    userGroups: ["team"]
    namespaces: ["a b", "kube-system"]
  - level: Request
    verbs: ["create", "update", "patch"]
    resources:
      - group: "apps"
        resources: ["*/scale", "deployments"]
  - level: Metadata
    omitStages: [ResponseStarted]
`,
  ['audit.k8s.io'],
);

const freeze = (name: string, groups: string[]): UserInfo => Object.freeze({ name, groups: Object.freeze(groups) as string[] });
const users = [freeze('system:kube-proxy', ['system:authenticated']), freeze('alice', ['team', 'system:authenticated']), freeze('bob', ['system:authenticated']), { name: 'carol', groups: ['team'] }];
const paths = [
  '/api/v1/namespaces/default/configmaps/special',
  '/api/v1/namespaces/default/configmaps/other',
  '/api/v1/namespaces/default/configmaps',
  '/api/v1/namespaces/kube-system/secrets/s',
  '/api/v1/namespaces/default/serviceaccounts/x/token',
  '/api/v1/namespaces/a%20b/pods',
  '/api/v1/namespaces/a/pods',
  '/apis/apps/v1/namespaces/default/deployments/d/scale',
  '/apis/apps/v1/namespaces/default/deployments/d',
  '/apis/apps/v1/namespaces/default/replicasets/r/scale',
  '/healthz/etcd',
  '/version',
  '/metrics',
];
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const watch = new URLSearchParams('watch=true');
const none = new URLSearchParams();

test('kept decisions are the evaluated ones, for every user, request and order, asked twice', () => {
  const decide = policyEvaluator(policy);
  const asked: { user: UserInfo; path: string; method: string; query: URLSearchParams }[] = [];
  for (const user of users) for (const path of paths) for (const method of methods) for (const query of [none, watch]) asked.push({ user, path, method, query });
  for (const round of [asked, [...asked].reverse()]) {
    for (const { user, path, method, query } of round) {
      const info = parseRequestInfo(method, path, query);
      const want = evaluatePolicy(policy, user, info);
      const got = decide(user, info);
      assert.deepEqual({ level: got.level, omit: [...got.omitStages] }, { level: want.level, omit: [...want.omitStages] }, `${user.name} ${method} ${path}?${query}`);
    }
  }
  // Not everything is one level: the policy's rules are really told apart.
  const levels = new Set(asked.map(({ user, path, method, query }) => decide(user, parseRequestInfo(method, path, query)).level));
  assert.deepEqual([...levels].sort(), ['Metadata', 'None', 'Request', 'RequestResponse']);
});
