// Unit tests: continue tokens, list/watch option parsing and the request-info parser.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeContinue, encodeContinue } from '../../src/machinery/continue-token.ts';
import { parseListOptions } from '../../src/machinery/list-options.ts';
import { parseRequestInfo } from '../../src/request/request-info.ts';
import { StatusError } from '../../src/machinery/status.ts';
import { parseDuration } from '../../src/server/durations.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';

const G = 'meta.orch.io';

describe('continue token', () => {
  test('round trip, opaque base64url', () => {
    const t = encodeContinue(G, { revision: 42, start: 'ns/name\0' });
    assert.match(t, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeContinue(G, t), { revision: 42, start: 'ns/name\0' });
    assert.deepEqual(JSON.parse(Buffer.from(t, 'base64url').toString()), { v: 'meta.orch.io/v1', rv: 42, start: 'ns/name\0' });
  });
  const bad = (why: string, token: string) =>
    test(`rejects ${why}`, () => {
      assert.throws(() => decodeContinue(G, token), (e: unknown) => e instanceof StatusError && e.code === 400 && /^invalid continue token/.test(e.message));
    });
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  bad('non-base64', '!!!');
  bad('non-JSON', Buffer.from('hello').toString('base64url'));
  bad('a JSON non-object', enc(7));
  bad('another version', enc({ v: 'meta.k8s.io/v2', rv: 1, start: 'a' }));
  bad('revision 0', enc({ v: 'meta.orch.io/v1', rv: 0, start: 'a' }));
  bad('a string revision', enc({ v: 'meta.orch.io/v1', rv: '5', start: 'a' }));
  bad('an empty start key', enc({ v: 'meta.orch.io/v1', rv: 5, start: '' }));
  bad('a start key climbing out of the prefix', enc({ v: 'meta.orch.io/v1', rv: 5, start: '../secrets/x' }));
  bad('an absolute start key', enc({ v: 'meta.orch.io/v1', rv: 5, start: '/registry/x' }));
});

describe('list options', () => {
  const q = (s: string) => new URLSearchParams(s);
  test('defaults', () => {
    const o = parseListOptions(q(''), G, 'list');
    assert.equal(o.resourceVersion, undefined);
    assert.equal(o.limit, undefined);
    assert.equal(o.allowWatchBookmarks, false);
    assert.ok(o.labelSelector.empty && o.fieldSelector.empty);
  });
  test('limit ≤ 0 means no limit, as in kube-apiserver', () => {
    assert.equal(parseListOptions(q('limit=0'), G, 'list').limit, undefined);
    assert.equal(parseListOptions(q('limit=-3'), G, 'list').limit, undefined);
    assert.equal(parseListOptions(q('limit=7'), G, 'list').limit, 7);
  });
  const invalid = (verb: 'list' | 'watch', query: string, fragment: RegExp) =>
    test(`${verb} ${query || '(empty)'} → 400`, () => {
      assert.throws(() => parseListOptions(q(query), G, verb), (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest' && fragment.test(e.message));
    });
  invalid('list', 'resourceVersionMatch=Exact', /resourceVersionMatch is forbidden unless resourceVersion is provided/);
  invalid('list', 'resourceVersionMatch=Exact&resourceVersion=0', /"exact" is forbidden for resourceVersion "0"/);
  invalid('list', 'resourceVersionMatch=NotOlderThan', /forbidden unless resourceVersion is provided/);
  invalid('list', 'resourceVersionMatch=Bogus&resourceVersion=5', /Unsupported value: "Bogus"/);
  invalid('list', 'resourceVersion=5&continue=abc', /specifying resource version is not allowed when using continue/);
  invalid('list', 'resourceVersionMatch=Exact&resourceVersion=5&continue=abc', /forbidden when continue is provided/);
  invalid('list', 'sendInitialEvents=true', /sendInitialEvents is forbidden for list/);
  invalid('list', 'resourceVersion=abc', /invalid resource version/);
  invalid('list', 'limit=ten', /limit/);
  invalid('list', 'timeoutSeconds=-1', /timeoutSeconds/);
  invalid('list', 'allowWatchBookmarks=maybe', /allowWatchBookmarks/);
  invalid('list', 'labelSelector=a%20in%20(', /./);
  invalid('list', 'fieldSelector=a', /./);
  invalid('list', 'shardSelector=x', /shardSelector/);
  invalid('watch', 'sendInitialEvents=true', /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
  invalid('watch', 'resourceVersionMatch=NotOlderThan&resourceVersion=5', /forbidden for watch unless sendInitialEvents is provided/);
  invalid('watch', 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan', /allowWatchBookmarks must be set to true/);
  invalid('watch', 'continue=abc', /continue is forbidden for watch/);
  test('the message names ListOptions in the meta group', () => {
    try {
      parseListOptions(q('resourceVersionMatch=Exact'), G, 'list');
      assert.fail('no error');
    } catch (e) {
      assert.ok(e instanceof StatusError);
      assert.equal(e.message, 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
      assert.equal(e.status.details?.causes?.[0]?.field, 'resourceVersionMatch');
    }
  });
  test('valid watch-list options', () => {
    const o = parseListOptions(q('sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&watch=1'), G, 'watch');
    assert.equal(o.sendInitialEvents, true);
    assert.equal(o.resourceVersionMatch, 'NotOlderThan');
  });
});

describe('request info', () => {
  const info = (method: string, path: string, query = '') => parseRequestInfo(method, path, new URLSearchParams(query));
  test('core, cluster-scoped', () => {
    const i = info('GET', '/api/v1/nodes/n1');
    assert.deepEqual([i.isResourceRequest, i.apiGroup, i.apiVersion, i.namespace, i.resource, i.name, i.verb], [true, '', 'v1', '', 'nodes', 'n1', 'get']);
  });
  test('named group, namespaced collection, watch', () => {
    const i = info('GET', '/apis/coordination.orch.io/v1/namespaces/ns1/leases', 'watch=true');
    assert.deepEqual([i.apiGroup, i.namespace, i.resource, i.name, i.verb], ['coordination.orch.io', 'ns1', 'leases', '', 'watch']);
    assert.equal(info('GET', '/apis/coordination.orch.io/v1/namespaces/ns1/leases', 'watch=false').verb, 'list');
  });
  test('the namespace object and its subresources', () => {
    const i = info('PUT', '/api/v1/namespaces/ns1/finalize');
    assert.deepEqual([i.resource, i.name, i.subresource, i.namespace, i.verb], ['namespaces', 'ns1', 'finalize', 'ns1', 'update']);
    const j = info('DELETE', '/api/v1/namespaces/ns1');
    assert.deepEqual([j.resource, j.name, j.verb], ['namespaces', 'ns1', 'delete']);
  });
  test('verbs from methods', () => {
    assert.equal(info('POST', '/api/v1/nodes').verb, 'create');
    assert.equal(info('PATCH', '/api/v1/nodes/a').verb, 'patch');
    assert.equal(info('DELETE', '/api/v1/nodes').verb, 'deletecollection');
    assert.equal(info('GET', '/api/v1/watch/nodes').verb, 'watch');
  });
  test('non-resource paths', () => {
    assert.equal(info('GET', '/healthz').isResourceRequest, false);
    assert.equal(info('GET', '/apis').isResourceRequest, false);
    assert.equal(info('GET', '/api/v1').isResourceRequest, false);
  });
});

describe('flags', () => {
  test('durations', () => {
    assert.equal(parseDuration('75s'), 75_000);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('10'), 10_000);
    for (const bad of ['', 'x', '5 s', '1d', 's5']) assert.throws(() => parseDuration(bad));
  });
  test('feature gates', () => {
    const g = parseFeatureGates('CBORServingAndStorage=true,APIResponseCompression=false');
    assert.equal(g.CBORServingAndStorage, true);
    assert.equal(g.APIResponseCompression, false);
    assert.equal(g.DeclarativeValidation, true);
    assert.throws(() => parseFeatureGates('NoSuchGate=true'), /unrecognized feature gate: NoSuchGate/);
    assert.throws(() => parseFeatureGates('WatchList=yes'), /invalid boolean/);
  });
});
