// IPAddress and ServiceCIDR (networking.orch.io/v1) over real HTTP: CRUD, list, watch, Table
// columns, /status, every validation rule (422 Invalid naming the field, nothing stored) and the
// default ServiceCIDR `kubernetes` kept by every API server.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { api, testServer } from '../support/server.ts';
import { readWatch } from '../support/watch.ts';
import { tempDir } from '../support/tmp.ts';
import { startEtcd } from '../support/etcd.ts';
import { namingProfile } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { parseServiceClusterIpRange, serviceCidrController } from '../../src/controllers/service-cidr.ts';

const server = await testServer();
const GV = '/apis/networking.orch.io/v1';
const IPS = `${GV}/ipaddresses`;
const CIDRS = `${GV}/servicecidrs`;
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.orch.io' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

type Json = Record<string, unknown>;
type Response = Awaited<ReturnType<typeof api>>;
interface Cause {
  field: string;
  message: string;
  reason: string;
}

/** An IPAddress body; `spec: null` leaves spec out. */
const ipAddress = (name: string, spec: Json | null = { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'svc' } }, meta: Json = {}) => ({
  apiVersion: 'networking.orch.io/v1',
  kind: 'IPAddress',
  metadata: { name, ...meta },
  ...(spec === null ? {} : { spec }),
});

const serviceCidr = (name: string, cidrs: unknown, extra: Json = {}) => ({
  apiVersion: 'networking.orch.io/v1',
  kind: 'ServiceCIDR',
  metadata: { name },
  ...(cidrs === undefined ? {} : { spec: { cidrs } }),
  ...extra,
});

const readyCondition = (extra: Json = {}) => ({ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'Ready', message: 'ok', ...extra });

/** A 422 Invalid naming `field` among its causes (and, when given, a cause text matching `detail`). */
function assertInvalid(r: Response, field: string, detail?: RegExp): void {
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.reason, 'Invalid', r.text);
  const causes = r.body.details.causes as Cause[];
  const hits = causes.filter((c) => c.field === field);
  assert.ok(hits.length > 0, `no cause for ${field}: ${JSON.stringify(causes)}`);
  if (detail) assert.ok(hits.some((c) => detail.test(c.message)), `no cause for ${field} matching ${detail}: ${JSON.stringify(causes)}`);
}

/** A create that must be refused as Invalid on `field`, after which nothing is stored. */
async function assertCreateInvalid(path: string, body: { metadata: { name: string } }, field: string, detail?: RegExp): Promise<void> {
  assertInvalid(await api(server, 'POST', path, body), field, detail);
  if (body.metadata.name) assert.equal((await api(server, 'GET', `${path}/${body.metadata.name}`)).status, 404, `${body.metadata.name} was stored`);
}

/** An update that must be refused as Invalid on `field`, after which the object is unchanged. */
async function assertUpdateInvalid(path: string, send: () => Promise<Response>, field: string, detail?: RegExp): Promise<void> {
  const before = (await api(server, 'GET', path)).body;
  assertInvalid(await send(), field, detail);
  assert.deepEqual((await api(server, 'GET', path)).body, before, 'the stored object changed');
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const readyOf = (o: { status?: { conditions?: Json[] } }) => o.status?.conditions?.find((c) => c.type === 'Ready');

describe('IPAddress', () => {
  test('create, get, list, update, patch, delete', async () => {
    const c = await api(server, 'POST', IPS, ipAddress('192.168.10.5', undefined, { labels: { app: 'crud' } }));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.metadata.name, '192.168.10.5');
    assert.equal(c.body.metadata.generation, 1);
    assert.equal(c.body.metadata.namespace, undefined);
    assert.deepEqual(c.body.spec.parentRef, { group: '', resource: 'services', namespace: 'default', name: 'svc' });
    const g = await api(server, 'GET', `${IPS}/192.168.10.5`);
    assert.equal(g.status, 200);
    assert.equal(g.body.metadata.uid, c.body.metadata.uid);

    const v6 = await api(server, 'POST', IPS, ipAddress('2001:db8::1:0:0:1'));
    assert.equal(v6.status, 201, v6.text);
    assert.equal((await api(server, 'GET', `${IPS}/2001:db8::1:0:0:1`)).status, 200);

    const list = await api(server, 'GET', IPS);
    assert.equal(list.status, 200);
    assert.equal(list.body.kind, 'IPAddressList');
    const names = list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    assert.ok(names.includes('192.168.10.5') && names.includes('2001:db8::1:0:0:1'), JSON.stringify(names));
    const selected = await api(server, 'GET', `${IPS}?labelSelector=app%3Dcrud`);
    assert.deepEqual(selected.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['192.168.10.5']);

    const up = await api(server, 'PUT', `${IPS}/192.168.10.5`, { ...g.body, metadata: { ...g.body.metadata, labels: { app: 'crud', v: '2' } } });
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.metadata.labels.v, '2');
    assert.equal(up.body.metadata.generation, 1, 'a metadata change keeps the generation');
    const p = await api(server, 'PATCH', `${IPS}/192.168.10.5`, { metadata: { annotations: { note: 'x' } } }, MERGE);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.metadata.annotations.note, 'x');

    const d = await api(server, 'DELETE', `${IPS}/192.168.10.5`);
    assert.equal(d.status, 200);
    assert.equal((await api(server, 'GET', `${IPS}/192.168.10.5`)).status, 404);
    assert.equal((await api(server, 'DELETE', `${IPS}/2001:db8::1:0:0:1`)).status, 200);
  });

  test('a parent in another group and a cluster-scoped parent are accepted', async () => {
    const r = await api(server, 'POST', IPS, ipAddress('10.1.2.3', { parentRef: { group: 'example.com', resource: 'gateways', name: 'gw' } }));
    assert.equal(r.status, 201, r.text);
    const t = await api(server, 'GET', `${IPS}/10.1.2.3`, undefined, TABLE);
    assert.equal(t.body.rows[0].cells[1], 'gateways.example.com/gw');
  });

  test('Table columns: Name, ParentRef, Age', async () => {
    assert.equal((await api(server, 'POST', IPS, ipAddress('10.9.9.9', { parentRef: { resource: 'Services', namespace: 'ns1', name: 'web' } }))).status, 201);
    const t = await api(server, 'GET', `${IPS}/10.9.9.9`, undefined, TABLE);
    assert.equal(t.status, 200, t.text);
    assert.equal(t.body.kind, 'Table');
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'ParentRef', 'Age']);
    assert.equal(t.body.rows[0].cells[0], '10.9.9.9');
    assert.equal(t.body.rows[0].cells[1], 'services/ns1/web');
    assert.match(t.body.rows[0].cells[2], /^\d+s$/);
  });

  test('watch: ADDED, MODIFIED, DELETED', async () => {
    const w = readWatch(`${server.url}${IPS}?watch=1&fieldSelector=metadata.name%3D10.20.30.40`);
    try {
      assert.equal((await api(server, 'POST', IPS, ipAddress('10.20.30.40'))).status, 201);
      assert.equal((await api(server, 'PATCH', `${IPS}/10.20.30.40`, { metadata: { labels: { w: '1' } } }, MERGE)).status, 200);
      assert.equal((await api(server, 'DELETE', `${IPS}/10.20.30.40`)).status, 200);
      const events = await w.next(3);
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.equal(events[0]!.object.kind, 'IPAddress');
      assert.equal(events[1]!.object.metadata.labels.w, '1');
    } finally {
      w.close();
    }
  });

  test('deletecollection with a label selector removes only the selected', async () => {
    for (const ip of ['10.50.0.1', '10.50.0.2']) assert.equal((await api(server, 'POST', IPS, ipAddress(ip, undefined, { labels: { batch: 'dc' } }))).status, 201);
    assert.equal((await api(server, 'POST', IPS, ipAddress('10.50.0.3'))).status, 201);
    const r = await api(server, 'DELETE', `${IPS}?labelSelector=batch%3Ddc`);
    assert.equal(r.status, 200, r.text);
    assert.equal((await api(server, 'GET', `${IPS}/10.50.0.1`)).status, 404);
    assert.equal((await api(server, 'GET', `${IPS}/10.50.0.2`)).status, 404);
    assert.equal((await api(server, 'GET', `${IPS}/10.50.0.3`)).status, 200);
  });

  describe('the name is one IP in canonical text (RFC 5952 for IPv6)', () => {
    const cases: [string, RegExp][] = [
      ['2001:db8::0:1', /must be in canonical form \("2001:db8::1"\)/],
      ['2001:db8:0:0:1:0:0:1', /must be in canonical form \("2001:db8::1:0:0:1"\)/],
      ['2001:0db8::1', /must be in canonical form \("2001:db8::1"\)/],
      ['2001:DB8::1', /must be in canonical form \("2001:db8::1"\)/],
      ['fe80:0:0:0:0:0:0:1', /must be in canonical form \("fe80::1"\)/],
      ['::ffff:1.2.3.4', /must not be an IPv4-mapped IPv6 address/],
      ['::ffff:102:304', /must not be an IPv4-mapped IPv6 address/],
      ['::ffff:01.2.3.4', /must not have leading 0s/],
      ['010.1.1.1', /must not have leading 0s/],
      ['10.01.1.1', /must not have leading 0s/],
      ['1.2.3', /must be a valid IP address/],
      ['1.2.3.256', /must be a valid IP address/],
      ['not-an-ip', /must be a valid IP address/],
      ['2001:db8::1::2', /must be a valid IP address/],
    ];
    for (const [name, detail] of cases) {
      test(`${name} → 422 on metadata.name`, async () => {
        await assertCreateInvalid(IPS, ipAddress(name), 'metadata.name', detail);
      });
    }
    test('a zone is not part of an address', async () => {
      assertInvalid(await api(server, 'POST', IPS, ipAddress('fe80::1%eth0')), 'metadata.name', /must be a valid IP address/);
    });
    test('canonical forms are accepted: IPv4, compressed IPv6, a single zero group kept, ::', async () => {
      for (const name of ['0.0.0.0', '255.255.255.255', '2001:db8:0:1:1:1:1:1', '::', '::1', 'fd00::a:b']) {
        const r = await api(server, 'POST', IPS, ipAddress(name));
        assert.equal(r.status, 201, `${name}: ${r.text}`);
      }
    });
    test('the name is the error subject of the message', async () => {
      const r = await api(server, 'POST', IPS, ipAddress('2001:db8::0:1'));
      assert.equal(r.body.message, 'IPAddress.networking.orch.io "2001:db8::0:1" is invalid: metadata.name: Invalid value: "2001:db8::0:1": must be in canonical form ("2001:db8::1")');
    });
  });

  describe('spec.parentRef', () => {
    const ref = (r: Json) => ({ parentRef: r });
    test('required: spec absent, spec empty', async () => {
      await assertCreateInvalid(IPS, ipAddress('10.60.0.1', null), 'spec.parentRef', /Required value/);
      await assertCreateInvalid(IPS, ipAddress('10.60.0.2', {}), 'spec.parentRef', /Required value/);
    });
    test('resource is required (absent or empty)', async () => {
      await assertCreateInvalid(IPS, ipAddress('10.60.0.3', ref({ name: 'svc' })), 'spec.parentRef.resource', /Required value/);
      await assertCreateInvalid(IPS, ipAddress('10.60.0.4', ref({ resource: '', name: 'svc' })), 'spec.parentRef.resource', /Required value/);
    });
    test('name is required (absent or empty)', async () => {
      await assertCreateInvalid(IPS, ipAddress('10.60.0.5', ref({ resource: 'services' })), 'spec.parentRef.name', /Required value/);
      await assertCreateInvalid(IPS, ipAddress('10.60.0.6', ref({ resource: 'services', name: '' })), 'spec.parentRef.name', /Required value/);
    });
    test('resource, name and namespace must be path segments', async () => {
      await assertCreateInvalid(IPS, ipAddress('10.60.0.7', ref({ resource: 'a/b', name: 'svc' })), 'spec.parentRef.resource', /may not contain '\/'/);
      await assertCreateInvalid(IPS, ipAddress('10.60.0.8', ref({ resource: 'services', name: '..' })), 'spec.parentRef.name', /may not be '\.\.'/);
      await assertCreateInvalid(IPS, ipAddress('10.60.0.9', ref({ resource: 'services', name: 'svc', namespace: 'a%b' })), 'spec.parentRef.namespace', /may not contain '%'/);
    });
    test('group, when set, must be a DNS subdomain', async () => {
      await assertCreateInvalid(IPS, ipAddress('10.60.0.10', ref({ group: 'Not_A_Group', resource: 'services', name: 'svc' })), 'spec.parentRef.group', /RFC 1123 subdomain/);
    });
    test('wrong types are 400', async () => {
      const r = await api(server, 'POST', IPS, ipAddress('10.60.0.11', ref({ resource: 'services', name: 7 })));
      assert.equal(r.status, 400, r.text);
      assert.equal((await api(server, 'GET', `${IPS}/10.60.0.11`)).status, 404);
    });
    test('several violations are reported together', async () => {
      const r = await api(server, 'POST', IPS, ipAddress('010.0.0.1', ref({ resource: '', name: '' })));
      assertInvalid(r, 'metadata.name');
      assertInvalid(r, 'spec.parentRef.resource');
      assertInvalid(r, 'spec.parentRef.name');
    });
  });

  describe('updates', () => {
    const path = `${IPS}/10.70.0.1`;
    test('spec.parentRef is immutable (PUT and patch)', async () => {
      const c = await api(server, 'POST', IPS, ipAddress('10.70.0.1'));
      assert.equal(c.status, 201);
      await assertUpdateInvalid(path, () => api(server, 'PUT', path, { ...c.body, spec: { parentRef: { resource: 'services', namespace: 'default', name: 'other' } } }), 'spec.parentRef', /field is immutable/);
      await assertUpdateInvalid(path, () => api(server, 'PATCH', path, { spec: { parentRef: { namespace: 'kube' } } }, MERGE), 'spec.parentRef', /field is immutable/);
      await assertUpdateInvalid(path, () => api(server, 'PATCH', path, [{ op: 'replace', path: '/spec/parentRef/group', value: 'x.io' }], { 'Content-Type': 'application/json-patch+json' }), 'spec.parentRef', /field is immutable/);
    });
    test('the same reference written differently is not a change', async () => {
      const cur = (await api(server, 'GET', path)).body;
      const same = { name: 'svc', namespace: 'default', resource: 'services' }; // group '' left out, keys reordered
      const r = await api(server, 'PUT', path, { ...cur, metadata: { ...cur.metadata, labels: { x: 'y' } }, spec: { parentRef: same } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.metadata.labels.x, 'y');
    });
    test('an update revalidates the reference', async () => {
      await assertUpdateInvalid(path, () => api(server, 'PATCH', path, { spec: { parentRef: { name: '' } } }, MERGE), 'spec.parentRef.name', /Required value/);
    });
    test('the name cannot change', async () => {
      const cur = (await api(server, 'GET', path)).body;
      const r = await api(server, 'PUT', path, { ...cur, metadata: { ...cur.metadata, name: '10.70.0.2' } });
      assert.equal(r.status, 400, r.text);
    });
  });
});

describe('ServiceCIDR', () => {
  test('create, get, list, update, patch, delete', async () => {
    const c = await api(server, 'POST', CIDRS, serviceCidr('extra-v4', ['10.100.0.0/16']));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.metadata.generation, 1);
    assert.deepEqual(c.body.spec.cidrs, ['10.100.0.0/16']);
    assert.equal((await api(server, 'GET', `${CIDRS}/extra-v4`)).body.metadata.uid, c.body.metadata.uid);
    const list = await api(server, 'GET', CIDRS);
    assert.equal(list.body.kind, 'ServiceCIDRList');
    assert.deepEqual(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['extra-v4', 'kubernetes']);
    const up = await api(server, 'PUT', `${CIDRS}/extra-v4`, { ...c.body, metadata: { ...c.body.metadata, labels: { a: 'b' } } });
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.metadata.generation, 1);
    const p = await api(server, 'PATCH', `${CIDRS}/extra-v4`, { metadata: { labels: { c: 'd' } } }, MERGE);
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(p.body.metadata.labels, { a: 'b', c: 'd' });
    assert.equal((await api(server, 'DELETE', `${CIDRS}/extra-v4`)).status, 200);
    assert.equal((await api(server, 'GET', `${CIDRS}/extra-v4`)).status, 404);
  });

  test('a create keeps the status it carries, as Kubernetes does', async () => {
    const r = await api(server, 'POST', CIDRS, serviceCidr('with-status', ['10.104.0.0/16'], { status: { conditions: [readyCondition()] } }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.status.conditions, [readyCondition()]);
    assert.equal((await api(server, 'DELETE', `${CIDRS}/with-status`)).status, 200);
  });

  test('dual-stack pairs in either order', async () => {
    for (const [name, cidrs] of [
      ['dual-a', ['10.101.0.0/16', 'fd01::/112']],
      ['dual-b', ['fd02::/112', '10.102.0.0/16']],
    ] as const) {
      const r = await api(server, 'POST', CIDRS, serviceCidr(name, cidrs));
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.spec.cidrs, cidrs);
    }
  });

  test('Table columns: Name, CIDRs, Age', async () => {
    const t = await api(server, 'GET', CIDRS, undefined, TABLE);
    assert.equal(t.status, 200, t.text);
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'CIDRs', 'Age']);
    const row = t.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'dual-a');
    assert.equal(row.cells[1], '10.101.0.0/16,fd01::/112');
    assert.match(row.cells[2], /^\d+s$/);
  });

  test('watch: ADDED, status MODIFIED, DELETED', async () => {
    const w = readWatch(`${server.url}${CIDRS}?watch=1&fieldSelector=metadata.name%3Dwatched`);
    try {
      const c = await api(server, 'POST', CIDRS, serviceCidr('watched', ['10.103.0.0/16']));
      assert.equal(c.status, 201);
      const s = await api(server, 'PUT', `${CIDRS}/watched/status`, { ...c.body, status: { conditions: [readyCondition()] } });
      assert.equal(s.status, 200, s.text);
      assert.equal((await api(server, 'DELETE', `${CIDRS}/watched`)).status, 200);
      const events = await w.next(3);
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.equal(events[1]!.object.status.conditions[0].type, 'Ready');
    } finally {
      w.close();
    }
  });

  describe('spec.cidrs on create', () => {
    const cases: [string, unknown, string, RegExp][] = [
      ['no-spec', undefined, 'spec.cidrs', /Required value: at least one CIDR required/],
      ['empty', [], 'spec.cidrs', /Required value: at least one CIDR required/],
      ['three', ['10.0.0.0/24', 'fd00::/64', '10.1.0.0/24'], 'spec.cidrs', /may only hold up to 2 values/],
      ['two-v4', ['10.0.0.0/24', '192.168.0.0/24'], 'spec.cidrs', /may specify no more than one IP for each IP family/],
      ['two-v6', ['2001:db8::/64', 'fd00::/64'], 'spec.cidrs', /may specify no more than one IP for each IP family/],
      ['host-bits', ['10.0.0.1/24'], 'spec.cidrs[0]', /must not have bits set beyond the prefix length/],
      ['host-bits-v6', ['fd00::1/64'], 'spec.cidrs[0]', /must not have bits set beyond the prefix length/],
      ['too-long', ['10.0.0.0/33'], 'spec.cidrs[0]', /must be a valid CIDR value/],
      ['no-prefix', ['10.0.0.0'], 'spec.cidrs[0]', /must be a valid CIDR value/],
      ['garbage', ['not-a-cidr'], 'spec.cidrs[0]', /must be a valid CIDR value/],
      ['leading-zero-ip', ['010.0.0.0/24'], 'spec.cidrs[0]', /must not have leading 0s in IP or prefix length/],
      ['leading-zero-len', ['10.0.0.0/024'], 'spec.cidrs[0]', /must not have leading 0s in IP or prefix length/],
      ['upper-case', ['2001:DB8::/64'], 'spec.cidrs[0]', /must be in canonical form \("2001:db8::\/64"\)/],
      ['zero-group', ['2001:db8:0::/64'], 'spec.cidrs[0]', /must be in canonical form \("2001:db8::\/64"\)/],
      ['mapped', ['::ffff:10.0.0.0/120'], 'spec.cidrs[0]', /must not have an IPv4-mapped IPv6 address/],
      ['second-bad', ['10.0.0.0/24', 'fd00::1/64'], 'spec.cidrs[1]', /must not have bits set beyond the prefix length/],
    ];
    for (const [name, cidrs, field, detail] of cases) {
      test(`${name}: ${JSON.stringify(cidrs)} → 422 on ${field}`, async () => {
        await assertCreateInvalid(CIDRS, serviceCidr(name, cidrs), field, detail);
      });
    }
    test('a non-string CIDR is 400', async () => {
      const r = await api(server, 'POST', CIDRS, serviceCidr('typed', [24]));
      assert.equal(r.status, 400, r.text);
      assert.equal((await api(server, 'GET', `${CIDRS}/typed`)).status, 404);
    });
    test('the name is a DNS subdomain', async () => {
      await assertCreateInvalid(CIDRS, serviceCidr('Bad_Name', ['10.0.0.0/24']), 'metadata.name', /RFC 1123 subdomain/);
    });
  });

  describe('spec.cidrs on update', () => {
    const path = `${CIDRS}/upd`;
    const put = (cidrs: unknown) => async () => {
      const cur = (await api(server, 'GET', path)).body;
      return api(server, 'PUT', path, { ...cur, spec: { cidrs } });
    };
    test('a CIDR cannot change, be removed, or be joined by a third', async () => {
      assert.equal((await api(server, 'POST', CIDRS, serviceCidr('upd', ['10.110.0.0/16']))).status, 201);
      await assertUpdateInvalid(path, put(['10.111.0.0/16']), 'spec.cidrs[0]', /field is immutable/);
      await assertUpdateInvalid(path, put([]), 'spec.cidrs', /field is immutable/);
      await assertUpdateInvalid(path, put(['10.110.0.0/16', 'fd10::/112', '10.112.0.0/16']), 'spec.cidrs', /field is immutable/);
      await assertUpdateInvalid(path, () => api(server, 'PATCH', path, { spec: { cidrs: ['10.113.0.0/16'] } }, MERGE), 'spec.cidrs[0]', /field is immutable/);
    });
    test('a second CIDR must be of the other family, valid, with the first unchanged', async () => {
      await assertUpdateInvalid(path, put(['10.110.0.0/16', '10.120.0.0/16']), 'spec.cidrs', /one IP for each IP family/);
      await assertUpdateInvalid(path, put(['10.110.0.0/16', 'fd10::1/112']), 'spec.cidrs[1]', /bits set beyond the prefix length/);
      await assertUpdateInvalid(path, put(['10.111.0.0/16', 'fd10::/112']), 'spec.cidrs[0]', /field is immutable/);
    });
    test('a single-family range may become dual-stack (generation bumps)', async () => {
      const r = await put(['10.110.0.0/16', 'fd10::/112'])();
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.spec.cidrs, ['10.110.0.0/16', 'fd10::/112']);
      assert.equal(r.body.metadata.generation, 2);
    });
    test('and then neither CIDR may change nor be dropped', async () => {
      await assertUpdateInvalid(path, put(['10.110.0.0/16', 'fd11::/112']), 'spec.cidrs[1]', /field is immutable/);
      await assertUpdateInvalid(path, put(['10.110.0.0/16']), 'spec.cidrs', /field is immutable/);
    });
  });

  describe('/status', () => {
    const path = `${CIDRS}/st`;
    const putStatus = (conditions: unknown[], extra: Json = {}) => async () => {
      const cur = (await api(server, 'GET', path)).body;
      return api(server, 'PUT', `${path}/status`, { ...cur, ...extra, status: { conditions } });
    };

    test('GET /status returns the object', async () => {
      assert.equal((await api(server, 'POST', CIDRS, serviceCidr('st', ['10.130.0.0/16']))).status, 201);
      const r = await api(server, 'GET', `${path}/status`);
      assert.equal(r.status, 200);
      assert.equal(r.body.kind, 'ServiceCIDR');
      assert.deepEqual(r.body.spec.cidrs, ['10.130.0.0/16']);
    });

    test('PUT /status changes only status; the generation stays', async () => {
      const cur = (await api(server, 'GET', path)).body;
      const ok = await api(server, 'PUT', `${path}/status`, { ...cur, metadata: { ...cur.metadata, labels: { ignored: 'yes' } }, spec: { cidrs: ['10.131.0.0/16'] }, status: { conditions: [readyCondition({ observedGeneration: 1 })] } });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body.spec.cidrs, ['10.130.0.0/16'], 'spec is not written through /status');
      assert.equal(ok.body.metadata.labels, undefined, 'labels are not written through /status');
      assert.equal(ok.body.metadata.generation, 1);
      assert.equal(ok.body.status.conditions[0].observedGeneration, 1);
    });

    test('PATCH /status merges conditions by type', async () => {
      const r = await api(server, 'PATCH', `${path}/status`, { status: { conditions: [{ type: 'example.com/Probed', status: 'Unknown', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'NotYet', message: '' }] } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
      assert.equal(r.status, 200, r.text);
      // The new condition goes first, as Kubernetes' strategicpatch orders new items.
      assert.deepEqual(r.body.status.conditions.map((c: { type: string }) => c.type), ['example.com/Probed', 'Ready']);
    });

    test('the main resource cannot change status', async () => {
      const cur = (await api(server, 'GET', path)).body;
      const r = await api(server, 'PUT', path, { ...cur, status: { conditions: [readyCondition({ status: 'False', reason: 'Broken' })] } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status.conditions.find((c: { type: string }) => c.type === 'Ready').status, 'True');
      assert.equal(r.body.metadata.resourceVersion, cur.metadata.resourceVersion, 'nothing was written');
      const p = await api(server, 'PATCH', path, { status: null }, MERGE);
      assert.equal(p.status, 200, p.text);
      assert.equal(p.body.status.conditions.length, 2);
    });

    const bad: [string, Json, string, RegExp][] = [
      ['status not True/False/Unknown', { status: 'Maybe' }, 'status.conditions[0].status', /Unsupported value: "Maybe"/],
      ['status empty', { status: '' }, 'status.conditions[0].status', /Required value/],
      ['type empty', { type: '' }, 'status.conditions[0].type', /Required value/],
      ['type not a qualified name', { type: 'not a type' }, 'status.conditions[0].type', /name part must consist of alphanumeric characters/],
      ['type with a bad domain', { type: 'Bad_Domain/Ready' }, 'status.conditions[0].type', /prefix part/],
      ['reason empty', { reason: '' }, 'status.conditions[0].reason', /Required value/],
      ['reason not CamelCase', { reason: 'not camel case' }, 'status.conditions[0].reason', /a condition reason must start with alphabetic character/],
      ['reason ending in a colon', { reason: 'Reason:' }, 'status.conditions[0].reason', /a condition reason/],
      ['observedGeneration negative', { observedGeneration: -1 }, 'status.conditions[0].observedGeneration', /must be greater than or equal to zero/],
    ];
    for (const [what, change, field, detail] of bad) {
      test(`${what} → 422 on ${field}`, async () => {
        await assertUpdateInvalid(path, putStatus([readyCondition(change)]), field, detail);
      });
    }

    test('a lastTransitionTime that is not a time is 400, nothing stored', async () => {
      const before = (await api(server, 'GET', path)).body;
      const r = await putStatus([readyCondition({ lastTransitionTime: 'yesterday' })])();
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.message, /status\.conditions\[0\]\.lastTransitionTime/);
      assert.deepEqual((await api(server, 'GET', path)).body, before);
    });

    const missing: [string, string][] = [
      ['reason', 'status.conditions[0].reason'],
      ['message', 'status.conditions[0].message'],
      ['lastTransitionTime', 'status.conditions[0].lastTransitionTime'],
      ['status', 'status.conditions[0].status'],
      ['type', 'status.conditions[0].type'],
    ];
    for (const [f, field] of missing) {
      test(`${f} missing → 422 on ${field}`, async () => {
        const c: Json = readyCondition();
        delete c[f];
        await assertUpdateInvalid(path, putStatus([c]), field, /Required value/);
      });
    }

    test('duplicate condition types → 422', async () => {
      await assertUpdateInvalid(path, putStatus([readyCondition(), readyCondition({ status: 'False' })]), 'status.conditions[1]', /Duplicate value/);
    });

    test('an empty message and a domain-qualified type are valid', async () => {
      const r = await putStatus([readyCondition({ message: '' }), readyCondition({ type: 'networking.example.com/Reconciled' })])();
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status.conditions.length, 2);
    });

    test('a create carrying an invalid status is refused and stores nothing', async () => {
      await assertCreateInvalid(CIDRS, serviceCidr('st-bad', ['10.132.0.0/16'], { status: { conditions: [readyCondition({ reason: 'no good' })] } }), 'status.conditions[0].reason');
    });
  });
});

describe('the default ServiceCIDR', () => {
  const path = `${CIDRS}/kubernetes`;

  test('exists from start with 10.0.0.0/24 and Ready=True', async () => {
    const r = await api(server, 'GET', path);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.spec.cidrs, ['10.0.0.0/24']);
    const ready = readyOf(r.body);
    assert.ok(ready, JSON.stringify(r.body.status));
    assert.equal(ready.status, 'True');
    assert.equal(ready.reason, 'Ready');
    assert.equal(ready.message, 'Kubernetes default Service CIDR is ready');
    assert.match(String(ready.lastTransitionTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('a custom --service-cluster-ip-range pair is used as given', async () => {
    const dual = await testServer({ serviceClusterIpRange: '10.96.0.0/16,fd00::/108' });
    const r = await api(dual, 'GET', path);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.spec.cidrs, ['10.96.0.0/16', 'fd00::/108']);
    assert.equal(readyOf(r.body)?.status, 'True');
    const t = await api(dual, 'GET', CIDRS, undefined, TABLE);
    assert.deepEqual(t.body.rows.map((row: { cells: unknown[] }) => row.cells.slice(0, 2)), [['kubernetes', '10.96.0.0/16,fd00::/108']]);
    await dual.close();
  });

  test('a lenient range is stored as its canonical network', async () => {
    const s = await testServer({ serviceClusterIpRange: '10.96.0.5/16' });
    assert.deepEqual((await api(s, 'GET', path)).body.spec.cidrs, ['10.96.0.0/16']);
    await s.close();
  });

  test('its CIDRs are immutable like any other', async () => {
    await assertUpdateInvalid(path, () => api(server, 'PATCH', path, { spec: { cidrs: ['10.1.0.0/24'] } }, MERGE), 'spec.cidrs[0]', /field is immutable/);
  });

  test('a lost Ready condition is set again', async () => {
    const cur = (await api(server, 'GET', path)).body;
    const r = await api(server, 'PUT', `${path}/status`, { ...cur, status: {} });
    assert.equal(r.status, 200, r.text);
    const back = await eventually('Ready again', async () => {
      const o = (await api(server, 'GET', path)).body;
      return readyOf(o)?.status === 'True' ? o : undefined;
    });
    assert.equal(readyOf(back)?.reason, 'Ready');
  });

  test('Ready=False set by someone else is left alone; Unknown is turned into True', async () => {
    const cur = (await api(server, 'GET', path)).body;
    const falsy = await api(server, 'PUT', `${path}/status`, { ...cur, status: { conditions: [readyCondition({ status: 'False', reason: 'Overlapping', message: 'by hand' })] } });
    assert.equal(falsy.status, 200, falsy.text);
    await new Promise((r) => setTimeout(r, 700));
    const still = (await api(server, 'GET', path)).body;
    assert.equal(readyOf(still)?.status, 'False');
    assert.equal(still.metadata.resourceVersion, falsy.body.metadata.resourceVersion);
    const unknown = await api(server, 'PUT', `${path}/status`, { ...still, status: { conditions: [readyCondition({ status: 'Unknown', reason: 'Checking' })] } });
    assert.equal(unknown.status, 200, unknown.text);
    const back = await eventually('Ready=True', async () => {
      const o = (await api(server, 'GET', path)).body;
      return readyOf(o)?.status === 'True' ? o : undefined;
    });
    assert.equal(back.status.conditions.length, 1);
    assert.equal(readyOf(back)?.message, 'Kubernetes default Service CIDR is ready');
  });

  test('a deleted default ServiceCIDR is created again, Ready', async () => {
    const before = (await api(server, 'GET', path)).body;
    const d = await api(server, 'DELETE', path);
    assert.equal(d.status, 200, d.text);
    const again = await eventually('the default ServiceCIDR again', async () => {
      const r = await api(server, 'GET', path);
      return r.status === 200 && r.body.metadata.uid !== before.metadata.uid && readyOf(r.body)?.status === 'True' ? r.body : undefined;
    });
    assert.deepEqual(again.spec.cidrs, ['10.0.0.0/24']);
  });

  test('on restart: a single-family range is widened to the configured pair; a different range is left alone', async () => {
    const dataDir = tempDir('servicecidr');
    const first = await testServer({ dataDir, serviceClusterIpRange: '10.96.0.0/16' });
    const one = (await api(first, 'GET', path)).body;
    assert.deepEqual(one.spec.cidrs, ['10.96.0.0/16']);
    await first.close();

    const second = await testServer({ dataDir, serviceClusterIpRange: '10.96.0.0/16,fd00::/108' });
    const two = (await api(second, 'GET', path)).body;
    assert.equal(two.metadata.uid, one.metadata.uid);
    assert.deepEqual(two.spec.cidrs, ['10.96.0.0/16', 'fd00::/108']);
    assert.equal(two.metadata.generation, 2);
    assert.equal(readyOf(two)?.status, 'True');
    await second.close();

    const logs: string[] = [];
    const third = await testServer({ dataDir, serviceClusterIpRange: '10.200.0.0/16', log: (m) => logs.push(m) });
    const kept = (await api(third, 'GET', path)).body;
    assert.deepEqual(kept.spec.cidrs, ['10.96.0.0/16', 'fd00::/108']);
    assert.equal(kept.metadata.resourceVersion, two.metadata.resourceVersion);
    assert.ok(logs.some((m) => m.includes('does not match')), JSON.stringify(logs));
    await third.close();
  });

  test('two API servers on one etcd: one object between them, Ready, recreated by either', async () => {
    const etcd = await startEtcd();
    try {
      const [a, b] = await Promise.all([
        testServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints }),
        testServer({ storageBackend: 'etcd3', etcdServers: etcd.endpoints }),
      ]);
      const list = (await api(a, 'GET', CIDRS)).body;
      assert.deepEqual(list.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['kubernetes']);
      assert.equal(readyOf(list.items[0])?.status, 'True');
      assert.equal((await api(b, 'GET', path)).body.metadata.uid, list.items[0].metadata.uid);
      assert.equal((await api(b, 'DELETE', path)).status, 200);
      const again = await eventually('recreated', async () => {
        const r = await api(a, 'GET', path);
        return r.status === 200 && readyOf(r.body)?.status === 'True' ? r.body : undefined;
      });
      assert.notEqual(again.metadata.uid, list.items[0].metadata.uid);
      await Promise.all([a.close(), b.close()]);
    } finally {
      await etcd.stop();
    }
  });

  describe('--service-cluster-ip-range must be usable', () => {
    const invalid: [string, RegExp][] = [
      ['10.0.0.0/33', /service-cluster-ip-range\[0\] "10.0.0.0\/33" is not a valid CIDR/],
      ['nonsense', /is not a valid CIDR/],
      ['10.0.0.0/24,10.1.0.0/24', /must be of different IP family/],
      ['fd00::/108,fd01::/108', /must be of different IP family/],
      ['10.0.0.0/24,fd00::/108,10.1.0.0/24', /must not contain more than two entries/],
      ['10.0.0.0/24,', /service-cluster-ip-range\[1\] "" is not a valid CIDR/],
      ['::ffff:10.0.0.0/120', /must not have an IPv4-mapped IPv6 address/],
    ];
    for (const [range, message] of invalid) {
      test(`${JSON.stringify(range)} is refused`, () => {
        assert.throws(() => parseServiceClusterIpRange(range), message);
      });
    }
    test('valid forms, defaulted and canonical', () => {
      assert.deepEqual(parseServiceClusterIpRange(undefined), ['10.0.0.0/24']);
      assert.deepEqual(parseServiceClusterIpRange(''), ['10.0.0.0/24']);
      assert.deepEqual(parseServiceClusterIpRange('fd00::/108,10.96.0.0/16'), ['fd00::/108', '10.96.0.0/16']);
      assert.deepEqual(parseServiceClusterIpRange('FD00:0::/108'), ['fd00::/108']);
    });
    test('the controller factory throws on a bad range (the server start fails)', () => {
      const ctx = { stores: new Map(), naming: namingProfile('orch'), featureGates: parseFeatureGates(), serviceClusterIpRange: '10.0.0.0/24,10.1.0.0/24', log: () => {} };
      assert.throws(() => serviceCidrController(ctx), /--service-cluster-ip-range/);
    });
    test('the command line exits 1 with the message', async () => {
      const bin = new URL('../../bin/orch-apiserver.js', import.meta.url).pathname;
      const child = spawn(process.execPath, [bin, '--bind-address=127.0.0.1', '--secure-port=0', `--data-dir=${tempDir('badrange')}`, '--service-cluster-ip-range=10.0.0.0/24,10.1.0.0/24'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = await once(child, 'exit');
      assert.equal(code, 1, stderr);
      assert.match(stderr, /Error: invalid --service-cluster-ip-range "10.0.0.0\/24,10.1.0.0\/24": --service-cluster-ip-range\[0\] and --service-cluster-ip-range\[1\] must be of different IP family/);
      assert.doesNotMatch(stderr, /serving on/);
    });
  });
});
