// The request metrics on /metrics, read with a Prometheus text-format parser: kube-apiserver's
// names and labels, counts that follow the requests made, the in-flight and long-running gauges,
// and no series for resources the server does not serve (a client cannot grow them at will).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrometheusText, type Family } from '../support/prometheus.ts';
import { api, testServer, waitFor } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { withToken } from '../support/identity.ts';

const server = await testServer();
const NS = 'metrics-requests';
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
const LEASES = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;

async function scrape(): Promise<Map<string, Family>> {
  const r = await api(server, 'GET', '/metrics');
  assert.equal(r.status, 200);
  return parsePrometheusText(r.text);
}

const matches = (labels: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => labels[k] === v);
/**
 * The value of the one series of `name` whose labels include `want` (0 when there is none); for a
 * histogram, its count.
 */
function value(families: Map<string, Family>, name: string, want: Record<string, string>): number {
  const f = families.get(name);
  const sampleName = f?.type === 'histogram' ? `${name}_count` : name;
  const found = (f?.samples ?? []).filter((m) => m.name === sampleName && matches(m.labels, want));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(want)}: ${found.length} series`);
  return found[0]?.value ?? 0;
}

const lease = (name: string) => ({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'h' } });
const base = { group: 'coordination.orch.io', version: 'v1', resource: 'leases', component: 'apiserver' };

test("apiserver_request_total and apiserver_request_duration_seconds count each request with kube-apiserver's labels", async () => {
  const before = await scrape();
  assert.equal((await api(server, 'POST', LEASES, lease('a'))).status, 201);
  assert.equal((await api(server, 'POST', `${LEASES}?dryRun=All`, lease('b'))).status, 201);
  assert.equal((await api(server, 'POST', LEASES, lease('a'))).status, 409);
  assert.equal((await api(server, 'GET', `${LEASES}/a`)).status, 200);
  assert.equal((await api(server, 'GET', `${LEASES}/missing`)).status, 404);
  assert.equal((await api(server, 'GET', LEASES)).status, 200);
  assert.equal((await api(server, 'GET', '/apis/coordination.orch.io/v1/leases')).status, 200);
  assert.equal((await api(server, 'PATCH', `${LEASES}/a`, { metadata: { labels: { x: 'y' } } }, { 'Content-Type': 'application/merge-patch+json' })).status, 200);
  const applied = await api(server, 'PATCH', `${LEASES}/a?fieldManager=m`, JSON.stringify(lease('a')), { 'Content-Type': 'application/apply-patch+yaml' });
  assert.equal(applied.status, 200, applied.text);
  assert.equal((await api(server, 'DELETE', `${LEASES}/a`)).status, 200);
  const after = await scrape();

  const total = after.get('apiserver_request_total')!;
  assert.equal(total.type, 'counter');
  assert.match(total.help, /^\[STABLE\] /);
  const counted = (want: Record<string, string>) => value(after, 'apiserver_request_total', want) - value(before, 'apiserver_request_total', want);
  assert.equal(counted({ ...base, verb: 'POST', scope: 'namespace', dry_run: '', code: '201', subresource: '' }), 1);
  assert.equal(counted({ ...base, verb: 'POST', scope: 'namespace', dry_run: 'All', code: '201' }), 1);
  assert.equal(counted({ ...base, verb: 'POST', scope: 'namespace', dry_run: '', code: '409' }), 1);
  assert.equal(counted({ ...base, verb: 'GET', scope: 'resource', code: '200' }), 1);
  assert.equal(counted({ ...base, verb: 'GET', scope: 'resource', code: '404' }), 1);
  assert.equal(counted({ ...base, verb: 'LIST', scope: 'namespace', code: '200' }), 1);
  assert.equal(counted({ ...base, verb: 'LIST', scope: 'cluster', code: '200' }), 1);
  assert.equal(counted({ ...base, verb: 'PATCH', scope: 'resource', code: '200' }), 1);
  assert.equal(counted({ ...base, verb: 'APPLY', scope: 'resource', code: '200' }), 1);
  assert.equal(counted({ ...base, verb: 'DELETE', scope: 'resource', code: '200' }), 1);

  const duration = after.get('apiserver_request_duration_seconds')!;
  assert.equal(duration.type, 'histogram');
  const timed = (want: Record<string, string>) => value(after, 'apiserver_request_duration_seconds', want) - value(before, 'apiserver_request_duration_seconds', want);
  // Both the 201 and the 409 of a POST without dryRun: one series, no code label.
  assert.equal(timed({ ...base, verb: 'POST', scope: 'namespace', dry_run: '' }), 2);
  assert.equal(timed({ ...base, verb: 'LIST', scope: 'cluster' }), 1);
  const sizes = after.get('apiserver_response_sizes')!;
  assert.ok(sizes.samples.some((m) => matches(m.labels, { ...base, verb: 'LIST', scope: 'namespace' })), 'the size of a LIST answer');
  assert.ok(!sizes.samples.some((m) => matches(m.labels, { verb: 'POST' })), 'no sizes of writes');
});

test('apiserver_response_sizes records the bytes each answer sent, a compressed one as compressed', async () => {
  const ns = `${NS}-sizes`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const leases = `/apis/coordination.orch.io/v1/namespaces/${ns}/leases`;
  // Four leases of 40 KB each: their list passes the 128 KiB from which a GET or LIST is compressed.
  for (let i = 0; i < 4; i++) {
    const big = { ...lease(`big-${i}`), metadata: { name: `big-${i}`, annotations: { pad: 'x'.repeat(40_000) } } };
    assert.equal((await api(server, 'POST', leases, big)).status, 201);
  }
  const sum = (families: Map<string, Family>, want: Record<string, string>) =>
    families.get('apiserver_response_sizes')?.samples.find((m) => m.name === 'apiserver_response_sizes_sum' && matches(m.labels, want))?.value ?? 0;
  const get = { ...base, verb: 'GET', scope: 'resource' };
  const list = { ...base, verb: 'LIST', scope: 'namespace' };
  const before = await scrape();
  const one = await api(server, 'GET', `${leases}/big-0`);
  assert.equal(one.status, 200);
  const all = await api(server, 'GET', leases, undefined, { 'Accept-Encoding': 'gzip' });
  assert.equal(all.status, 200);
  assert.equal(all.headers.get('content-encoding'), 'gzip');
  assert.equal(all.body.items.length, 4);
  const after = await scrape();
  const sent = (r: { headers: Headers }) => Number(r.headers.get('content-length'));
  assert.ok(sent(one) > 40_000 && sent(all) < 40_000, `${sent(one)} and ${sent(all)} bytes`);
  assert.equal(sum(after, get) - sum(before, get), sent(one));
  assert.equal(sum(after, list) - sum(before, list), sent(all), 'the compressed bytes, counted once they are out');
});

test('core, discovery and subresource requests are labelled as kube-apiserver labels them', async () => {
  const before = await scrape();
  assert.equal((await api(server, 'GET', `/api/v1/namespaces/${NS}`)).status, 200);
  assert.equal((await api(server, 'GET', `/api/v1/namespaces/${NS}/status`)).status, 200);
  assert.equal((await api(server, 'GET', '/apis')).status, 200);
  const after = await scrape();
  const counted = (want: Record<string, string>) => value(after, 'apiserver_request_total', want) - value(before, 'apiserver_request_total', want);
  assert.equal(counted({ verb: 'GET', group: '', version: 'v1', resource: 'namespaces', subresource: '', scope: 'resource', code: '200' }), 1);
  assert.equal(counted({ verb: 'GET', group: '', version: 'v1', resource: 'namespaces', subresource: 'status', scope: 'resource', code: '200' }), 1);
  assert.equal(counted({ verb: 'GET', group: '', version: '', resource: '', scope: '', code: '200' }), 1, 'discovery at /apis');
});

test('requests for resources the server does not serve make no series, whatever their names', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await api(server, 'GET', `/apis/made-up-${i}.example/v1/things${i}`)).status, 404);
  const bogus = await api(server, 'POST', `${LEASES}?dryRun=Bogus${Math.random()}`, lease('c'));
  assert.ok(bogus.status >= 400);
  const after = await scrape();
  const series = after.get('apiserver_request_total')!.samples;
  assert.ok(!series.some((m) => /made-up|things/.test(JSON.stringify(m.labels))), 'no label names an unserved resource');
  assert.ok(!series.some((m) => /Bogus/.test(m.labels.dry_run ?? '')), 'a dryRun value is never a label value');
  assert.ok(series.some((m) => m.labels.dry_run === 'invalid'), 'an invalid dryRun counts as "invalid", as in kube-apiserver');
});

test('a watch is a long-running request while it is open; in-flight requests are reported by kind', async () => {
  const watching = { ...base, verb: 'WATCH', scope: 'namespace' };
  const before = value(await scrape(), 'apiserver_longrunning_requests', watching);
  const w = readWatch(`${server.url}${LEASES}?watch=true`);
  assert.equal(await w.status, 200);
  await waitFor('the watch to count as long-running', async () => value(await scrape(), 'apiserver_longrunning_requests', watching) === before + 1);
  w.close();
  await waitFor('the closed watch to stop counting', async () => value(await scrape(), 'apiserver_longrunning_requests', watching) === before);
  const families = await scrape();
  assert.equal(families.get('apiserver_longrunning_requests')!.type, 'gauge');
  const total = value(families, 'apiserver_request_total', { ...watching, code: '200' });
  assert.ok(total >= 1, 'the ended watch is counted');
  const inflight = families.get('apiserver_current_inflight_requests')!;
  assert.deepEqual(inflight.samples.map((m) => m.labels.request_kind).sort(), ['mutating', 'readOnly']);
  // The scrape itself is a non-resource request: it does not count against the read budget.
  for (const m of inflight.samples) assert.ok(m.value >= 0);
});

test('stored objects, registered watchers, watch events and storage latencies follow what happens', async () => {
  const resource = { resource: 'leases.coordination.orch.io' };
  const kind = { group: 'coordination.orch.io', version: 'v1', kind: 'Lease' };
  const before = await scrape();
  const objects = value(before, 'apiserver_storage_objects', resource);
  const w = readWatch(`${server.url}${LEASES}?watch=true`);
  assert.equal(await w.status, 200);
  for (const n of ['w1', 'w2']) assert.equal((await api(server, 'POST', LEASES, lease(n))).status, 201);
  await w.next(2);
  const during = await scrape();
  assert.equal(value(during, 'apiserver_storage_objects', resource), objects + 2);
  assert.equal(value(during, 'apiserver_registered_watchers', kind), value(before, 'apiserver_registered_watchers', kind) + 1);
  assert.equal(value(during, 'apiserver_watch_events_total', kind) - value(before, 'apiserver_watch_events_total', kind), 2);
  const storage = during.get('etcd_request_duration_seconds')!;
  assert.equal(storage.type, 'histogram');
  const created = value(during, 'etcd_request_duration_seconds', { operation: 'create', type: '/registry/coordination.orch.io/leases' });
  assert.ok(created - value(before, 'etcd_request_duration_seconds', { operation: 'create', type: '/registry/coordination.orch.io/leases' }) >= 2, 'each create is timed');
  w.close();
  assert.equal((await api(server, 'DELETE', `${LEASES}/w1`)).status, 200);
  await waitFor('the closed watch to be unregistered', async () => value(await scrape(), 'apiserver_registered_watchers', kind) === value(before, 'apiserver_registered_watchers', kind));
  assert.equal(value(await scrape(), 'apiserver_storage_objects', resource), objects + 1);
});

test('authentication and authorization attempts are counted by result', async () => {
  const before = await scrape();
  assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${NS}`, 'not-a-known-token')).status, 401);
  assert.equal((await api(server, 'GET', `/api/v1/namespaces/${NS}`)).status, 200);
  const after = await scrape();
  const delta = (name: string, want: Record<string, string>) => value(after, name, want) - value(before, name, want);
  assert.equal(delta('authentication_attempts', { result: 'failure' }), 1);
  // The two scrapes and the GET, as the administrator.
  assert.ok(delta('authentication_attempts', { result: 'success' }) >= 2);
  assert.ok(delta('authenticated_user_requests', { username: 'other' }) >= 2, 'system:admin is "other", as kube-apiserver compresses names');
  assert.ok(delta('authentication_duration_seconds', { result: 'failure' }) === 1);
  assert.ok(delta('authorization_attempts_total', { result: 'allowed' }) >= 2);
  assert.ok(delta('authorization_duration_seconds', { result: 'allowed' }) >= 2);
  assert.equal(after.get('authorization_attempts_total')!.type, 'counter');
});

test('kubernetes_feature_enabled reports every gate with its stage', async () => {
  const families = await scrape();
  assert.equal(value(families, 'kubernetes_feature_enabled', { name: 'WatchList', stage: 'BETA' }), 1);
  assert.equal(value(families, 'kubernetes_feature_enabled', { name: 'CBORServingAndStorage', stage: 'ALPHA' }), 0);
  assert.equal(value(families, 'kubernetes_feature_enabled', { name: 'ConsistentListFromCache', stage: '' }), 1);
});

test('a deprecated version asked for warns and sets apiserver_requested_deprecated_apis', async () => {
  const want = { group: '', version: 'v1', resource: 'componentstatuses', subresource: '', removed_release: '' };
  assert.equal(value(await scrape(), 'apiserver_requested_deprecated_apis', want), 0);
  const r = await api(server, 'GET', '/api/v1/componentstatuses');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('warning') ?? '', /^299 - "v1 ComponentStatus is deprecated in v1\.19\+"/);
  assert.equal(value(await scrape(), 'apiserver_requested_deprecated_apis', want), 1);
});
