// A CustomResourceDefinition changed while its custom resources are served (kubernetes profile):
// as kube-apiserver's crdHandler, a change of spec or accepted names serves the kind through the
// new definition at once (no request meanwhile finds no kind), the watches opened before go on for
// a second and while a short request on the old definition runs, then end as finished streams (the
// client watches again), a change of labels or status only keeps them; the garbage collector
// follows kinds whose storage version is not served; an embedded resource's metadata is checked.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, testServer, waitFor } from '../support/server.ts';
import { readWatch, type WatchReader } from '../support/watch.ts';
import { widgetCrd, establishCrd } from '../support/crd.ts';
import { clientRequest } from '../support/tls-clients.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const server = await testServer({ naming: 'kubernetes' });
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = { Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' };
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

const establish = (crd: Body): Promise<void> => establishCrd(server, crd);

/** Reads the CRD, changes it with `edit` and writes it back (retried on conflict). */
async function updateCrd(name: string, edit: (crd: Body) => void): Promise<void> {
  for (;;) {
    const crd = (await api(server, 'GET', `${CRDS}/${name}`)).body;
    edit(crd);
    const r = await api(server, 'PUT', `${CRDS}/${name}`, crd);
    if (r.status === 409) continue;
    assert.equal(r.status, 200, r.text);
    return;
  }
}

/** Every event left on a watch that has ended (none may be an ERROR). */
async function rest(w: WatchReader): Promise<string[]> {
  await w.ended;
  const types: string[] = [];
  for (;;) {
    try {
      types.push(...(await w.next(1, 0)).map((e) => e.type));
    } catch {
      return types;
    }
  }
}

const widget = (group: string, name: string, spec: Body = { size: 2 }): Body => ({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec });

describe('a changed CRD', () => {
  test('labels or status only: watches go on; a schema change: served at once, watches end without an error, the new schema applies', async () => {
    const group = 'live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const name = crd.metadata.name;
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    assert.equal((await api(server, 'POST', base, widget(group, 'a'))).status, 201);
    const w = readWatch(`${server.url}${base}?watch=1`);
    try {
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'a']]);
      // Metadata only: the kind is not served anew.
      assert.equal((await api(server, 'PATCH', `${CRDS}/${name}`, { metadata: { labels: { team: 'blue' } } }, MERGE)).status, 200);
      assert.equal((await api(server, 'POST', base, widget(group, 'b'))).status, 201);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b']]);
      const seen = (await api(server, 'GET', `${base}/b`)).body.metadata.resourceVersion as string;

      // Reads go on while the kind is swapped: never a 404.
      let reading = true;
      const failures: number[] = [];
      const reads = (async () => {
        while (reading) {
          const r = await api(server, 'GET', `${base}/a`);
          if (r.status !== 200) failures.push(r.status);
        }
      })();
      await updateCrd(name, (c) => {
        const v = c.spec.versions[0];
        v.schema.openAPIV3Schema.properties.spec.properties.shape = { type: 'string' };
        v.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.size < 9', message: 'too big now' }];
        v.additionalPrinterColumns.push({ name: 'Shape', type: 'string', jsonPath: '.spec.shape' });
      });
      // The watch opened before ends as a finished stream, with no ERROR event.
      assert.deepEqual(await rest(w), []);
      await waitFor('the new column', async () => (await api(server, 'GET', base, undefined, TABLE)).body.columnDefinitions.some((c: Body) => c.name === 'Shape'));
      reading = false;
      await reads;
      assert.deepEqual(failures, []);
      // OpenAPI follows the new schema.
      const openapi = await api(server, 'GET', `/openapi/v3/apis/${group}/v1`);
      assert.equal(openapi.status, 200);
      const spec = openapi.body.components.schemas['com.example.live.v1.Widget']?.properties?.spec;
      assert.equal(spec?.properties?.shape?.type, 'string', JSON.stringify(spec));

      // The client watches again from what it saw: nothing was lost, the new schema applies.
      const again = readWatch(`${server.url}${base}?watch=1&resourceVersion=${seen}`);
      try {
        assert.equal((await api(server, 'POST', base, widget(group, 'c', { size: 3, shape: 'round' }))).status, 201);
        const [added] = await again.next(1);
        assert.deepEqual([added!.type, added!.object.metadata.name, added!.object.spec.shape], ['ADDED', 'c', 'round']);
        const refused = await api(server, 'POST', base, widget(group, 'd', { size: 9 }));
        assert.equal(refused.status, 422, refused.text);
        assert.match(refused.body.message, /too big now/);
        assert.equal((await api(server, 'PATCH', `${base}/a`, { spec: { size: 9 } }, MERGE)).status, 422);
        const table = (await api(server, 'GET', base, undefined, TABLE)).body;
        const row = table.rows.find((r: Body) => r.cells[0] === 'c').cells;
        assert.deepEqual([row[0], row[1], row[3]], ['c', 3, 'round']);
      } finally {
        again.close();
      }
    } finally {
      w.close();
    }
  });

  test('a version no longer served: its paths go and the watches of every version end; the other version serves on', async () => {
    const group = 'versions.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const name = crd.metadata.name;
    crd.spec.versions.push({ ...structuredClone(crd.spec.versions[0]), name: 'v2', storage: false });
    await establish(crd);
    assert.equal((await api(server, 'POST', `/apis/${group}/v1/widgets`, widget(group, 'a'))).status, 201);
    const v1 = readWatch(`${server.url}/apis/${group}/v1/widgets?watch=1`);
    const v2 = readWatch(`${server.url}/apis/${group}/v2/widgets?watch=1`);
    try {
      assert.equal((await v1.next(1))[0]!.object.apiVersion, `${group}/v1`);
      assert.equal((await v2.next(1))[0]!.object.apiVersion, `${group}/v2`);
      await updateCrd(name, (c) => (c.spec.versions[1].served = false));
      assert.deepEqual(await rest(v2), []);
      assert.deepEqual(await rest(v1), []);
      await waitFor('v2 gone', async () => (await api(server, 'GET', `/apis/${group}/v2/widgets/a`)).status === 404);
      assert.equal((await api(server, 'GET', `/apis/${group}/v1/widgets/a`)).status, 200);
    } finally {
      v1.close();
      v2.close();
    }
  });

  test('changed again and again while clients create and read (kube\'s TestChangeCRD): every request succeeds', async () => {
    const group = 'churn.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const name = crd.metadata.name;
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    let changing = true;
    const failures: string[] = [];
    const clients = [0, 1, 2].map(async (i) => {
      const created = await api(server, 'POST', base, widget(group, `w${i}`));
      if (created.status !== 201) failures.push(`create ${created.status}`);
      while (changing) {
        const r = await api(server, 'GET', `${base}/w${i}`);
        if (r.status !== 200) failures.push(`get ${r.status}`);
      }
    });
    for (let n = 0; n < 10; n++) {
      await updateCrd(name, (c) => {
        if (c.spec.versions.length === 1) c.spec.versions.push({ ...structuredClone(c.spec.versions[0]), name: 'v2', storage: false });
        else c.spec.versions = c.spec.versions.slice(0, 1);
      });
      await new Promise((r) => setTimeout(r, 30));
    }
    changing = false;
    await Promise.all(clients);
    assert.deepEqual(failures, []);
    assert.equal((await api(server, 'GET', base)).body.items.length, 3);
  });
});

/**
 * A create whose body is sent in two parts: the request is served (and holds the store it was
 * routed to) from its headers until `finish()` sends the rest; the promise is its status.
 */
function slowCreate(path: string, body: Body): { finish(): void; status: Promise<number> } {
  const text = Buffer.from(JSON.stringify(body));
  const half = text.length >> 1;
  let finish!: () => void;
  const status = new Promise<number>((resolve, reject) => {
    const req = clientRequest(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': String(text.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.flushHeaders();
    req.write(text.subarray(0, half));
    finish = () => req.end(text.subarray(half));
  });
  return { finish: () => finish(), status };
}

/** Polls closely until the CRD's change is served (the Table has the column `name`); the time it was seen. */
async function columnServed(base: string, name: string): Promise<number> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const table = (await api(server, 'GET', base, undefined, TABLE)).body;
    if (table.columnDefinitions.some((c: Body) => c.name === name)) return Date.now();
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`column ${name} not served`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An established cluster-scoped Widget CRD of `group`, a watch of its objects, and when that watch ended. */
async function watchedWidgets(group: string) {
  const crd = widgetCrd(group, { scope: 'Cluster' });
  await establish(crd);
  const base = `/apis/${group}/v1/widgets`;
  const w = readWatch(`${server.url}${base}?watch=1`);
  let ended: number | undefined;
  void w.ended.then(() => (ended = Date.now()));
  return { crd, base, w, endedAt: () => ended };
}

describe('the watches of a changed CRD (kube-apiserver\'s teardown of the old storage)', () => {
  test('go on receiving events for a second after the new definition is served, then end without an error', async () => {
    const group = 'grace.live.example.com';
    const { crd, base, w, endedAt } = await watchedWidgets(group);
    try {
      assert.equal((await api(server, 'POST', base, widget(group, 'a'))).status, 201);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'a']]);
      await updateCrd(crd.metadata.name, (c) => c.spec.versions[0].additionalPrinterColumns.push({ name: 'Colour', type: 'string', jsonPath: '.spec.colour' }));
      const served = await columnServed(base, 'Colour');
      // Served anew, the watch opened before still reports what happens.
      assert.equal((await api(server, 'POST', base, widget(group, 'b'))).status, 201);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b']]);
      await sleep(Math.max(0, served + 300 - Date.now()));
      assert.equal(endedAt(), undefined, 'the watch ended within the grace');
      assert.equal((await api(server, 'POST', base, widget(group, 'c'))).status, 201);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'c']]);
      // Then the old storage goes: the watch ends as a finished stream, about a second after the change.
      assert.deepEqual(await rest(w), []);
      assert.ok(endedAt()! - served < 3_000, `ended ${endedAt()! - served} ms after the change was served`);
    } finally {
      w.close();
    }
  });

  test('a short request in flight on the old definition completes, and the watches end only after it', async () => {
    const group = 'drain.live.example.com';
    const { crd, base, w, endedAt } = await watchedWidgets(group);
    try {
      assert.equal((await api(server, 'POST', base, widget(group, 'a'))).status, 201);
      await w.next(1);
      // Routed to the old definition's store: its headers are in, its body is not.
      const slow = slowCreate(base, widget(group, 'slow', { size: 3 }));
      await sleep(300);
      await updateCrd(crd.metadata.name, (c) => {
        c.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.size < 3', message: 'too big now' }];
        c.spec.versions[0].additionalPrinterColumns.push({ name: 'Colour', type: 'string', jsonPath: '.spec.colour' });
      });
      const served = await columnServed(base, 'Colour');
      // Past the grace, the request in flight holds the old storage: its watches go on.
      await sleep(Math.max(0, served + 1_800 - Date.now()));
      assert.equal(endedAt(), undefined, 'the watch ended while a request on the old definition was in flight');
      assert.equal((await api(server, 'POST', base, widget(group, 'b'))).status, 201);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b']]);
      // It completes, as the old definition had it (its rule came later), and the watch then ends.
      slow.finish();
      assert.equal(await slow.status, 201);
      const finished = Date.now();
      const rule = await api(server, 'POST', base, widget(group, 'late', { size: 3 }));
      assert.equal(rule.status, 422, rule.text);
      const left = await rest(w);
      assert.ok(left.every((t) => t === 'ADDED'), JSON.stringify(left));
      assert.ok(endedAt()! - finished < 3_000, `ended ${endedAt()! - finished} ms after the last request on the old definition`);
    } finally {
      w.close();
    }
  });
});

describe('the watches of a deleted CRD', () => {
  test('see their objects deleted, end once the old storage is torn down; a CRD made again at once keeps its storage\'s cache', async () => {
    const group = 'again.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    assert.equal((await api(server, 'POST', base, widget(group, 'a'))).status, 201);
    const w = readWatch(`${server.url}${base}?watch=1`);
    try {
      await w.next(1);
      assert.equal((await api(server, 'DELETE', `${CRDS}/${crd.metadata.name}`)).status, 200);
      assert.deepEqual((await w.next(1)).map((e) => [e.type, e.object.metadata.name]), [['DELETED', 'a']]);
      await waitFor('the CRD is gone', async () => (await api(server, 'GET', `${CRDS}/${crd.metadata.name}`)).status === 404);
      // Made again before the old storage is torn down: the new kind reads the same cache.
      await establish(widgetCrd(group, { scope: 'Cluster' }));
      const again = readWatch(`${server.url}${base}?watch=1`);
      try {
        assert.deepEqual(await rest(w), []);
        // The teardown closes only caches no store reads: the new kind's watch goes on.
        await sleep(1_500);
        assert.equal((await api(server, 'POST', base, widget(group, 'b'))).status, 201);
        assert.deepEqual((await again.next(1)).map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'b']]);
        assert.deepEqual(((await api(server, 'GET', base)).body.items as Body[]).map((i) => i.metadata.name), ['b']);
      } finally {
        again.close();
      }
    } finally {
      w.close();
    }
  });
});

describe('the garbage collector', () => {
  test('follows custom resources whose storage version is not served, as owners and as dependents', async () => {
    const group = 'gc.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    crd.spec.versions.push({ ...structuredClone(crd.spec.versions[0]), name: 'v2', storage: false });
    crd.spec.versions[0].served = false;
    await establish(crd);
    const base = `/apis/${group}/v2/widgets`;
    const cms = '/api/v1/namespaces/default/configmaps';
    const owner = (await api(server, 'POST', base, { ...widget(group, 'owner'), apiVersion: `${group}/v2` })).body;
    assert.ok(owner.metadata?.uid, JSON.stringify(owner));
    const ref = (o: Body, apiVersion: string, kind: string) => [{ apiVersion, kind, name: o.metadata.name, uid: o.metadata.uid }];
    // A config map owned by a widget, and a widget owned by a config map.
    assert.equal((await api(server, 'POST', cms, { metadata: { name: 'owned-by-widget', ownerReferences: ref(owner, `${group}/v2`, 'Widget') } })).status, 201);
    const cmOwner = (await api(server, 'POST', cms, { metadata: { name: 'owns-a-widget' } })).body;
    assert.equal((await api(server, 'POST', base, { ...widget(group, 'dependent'), apiVersion: `${group}/v2`, metadata: { name: 'dependent', ownerReferences: ref(cmOwner, 'v1', 'ConfigMap') } })).status, 201);

    assert.equal((await api(server, 'DELETE', `${base}/owner`)).status, 200);
    await waitFor('the config map owned by the widget collected', async () => (await api(server, 'GET', `${cms}/owned-by-widget`)).status === 404);
    assert.equal((await api(server, 'DELETE', `${cms}/owns-a-widget`)).status, 200);
    await waitFor('the widget owned by the config map collected', async () => (await api(server, 'GET', `${base}/dependent`)).status === 404);
  });
});

describe('an embedded resource', () => {
  test('its metadata is checked as ObjectMeta: name and generateName, namespace, generation, labels, annotations and their size, owner references, finalizers', async () => {
    const group = 'embedded.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    };
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    const withTemplate = (name: string, metadata: Body) => widget(group, name, { size: 2, template: { apiVersion: 'v1', kind: 'ConfigMap', metadata } });

    const bad = await api(
      server,
      'POST',
      base,
      withTemplate('bad', {
        name: 'a/b',
        generateName: 'x%',
        namespace: 'Not_A_Label',
        generation: -1,
        labels: { 'bad key': 'ok', good: 'bad value!' },
        annotations: { 'a/b/c': 'x' },
        finalizers: ['not a finalizer'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: '' }],
      }),
    );
    assert.equal(bad.status, 422, bad.text);
    const causes = (bad.body.details.causes as Body[]).map((c) => `${c.field}: ${c.message}`);
    const m = 'spec.template.metadata';
    for (const want of [
      `${m}.generateName: Invalid value: "x%": may not contain '%'`,
      `${m}.name: Invalid value: "a/b": may not contain '/'`,
      `${m}.namespace: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of`,
      `${m}.generation: Invalid value: -1: must be greater than or equal to 0`,
      `${m}.labels: Invalid value: "bad key": name part must consist of alphanumeric characters`,
      `${m}.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters`,
      `${m}.annotations: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters`,
      `${m}.finalizers[0]: Invalid value: "not a finalizer": name part must consist of alphanumeric characters`,
      `${m}.ownerReferences.uid: Invalid value: "": must not be empty`,
    ]) assert.ok(causes.some((c) => c.startsWith(want)), `${want}\nin\n${causes.join('\n')}`);

    const big = await api(server, 'POST', base, withTemplate('big', { annotations: { big: 'x'.repeat(256 * 1024) } }));
    assert.equal(big.status, 422, big.text);
    assert.match(big.body.message, /spec\.template\.metadata\.annotations: Too long: must have at most 262144 bytes/);

    // Without a name (kube makes one up to check the rest), with a generateName ending in '-'.
    const good = await api(server, 'POST', base, withTemplate('good', { generateName: 'web-', namespace: 'default', labels: { app: 'web' }, annotations: { 'example.com/note': 'hi' }, finalizers: ['example.com/keep'] }));
    assert.equal(good.status, 201, good.text);
  });

  test('its managedFields are checked as ObjectMeta\'s: operation, fieldsType, manager, subresource', async () => {
    const group = 'embedded-managed.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    };
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    const withEntries = (name: string, managedFields: Body[]) =>
      widget(group, name, { size: 2, template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', managedFields } } });
    const entry = { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } };

    const bad = await api(server, 'POST', base, withEntries('bad', [
      entry,
      { ...entry, operation: 'Replace', fieldsType: 'FieldsV2' },
      { ...entry, manager: `tab\there`, subresource: 's'.repeat(257) },
      { ...entry, manager: 'm'.repeat(129), operation: undefined },
    ]));
    assert.equal(bad.status, 422, bad.text);
    const causes = (bad.body.details.causes as Body[]).map((c) => `${c.field}: ${c.message}`);
    const m = 'spec.template.metadata.managedFields';
    assert.deepEqual(causes.filter((c) => c.startsWith(m)).sort(), [
      `${m}[1].fieldsType: Invalid value: "FieldsV2": must be \`FieldsV1\``,
      `${m}[1].operation: Invalid value: "Replace": must be \`Apply\` or \`Update\``,
      `${m}[2].manager: Invalid value: "tab\\there": invalid character U+0009 (at position 3)`,
      `${m}[2].subresource: Too long: may not be more than 256 bytes`,
      `${m}[3].manager: Too long: may not be more than 128 bytes`,
      `${m}[3].operation: Invalid value: "": must be \`Apply\` or \`Update\``,
    ]);

    // Valid entries (a fieldsType left out too) are kept as given.
    const good = await api(server, 'POST', base, withEntries('good', [entry, { manager: 'ctl', operation: 'Update', apiVersion: 'v1', subresource: 'status' }]));
    assert.equal(good.status, 201, good.text);
    assert.deepEqual(good.body.spec.template.metadata.managedFields.map((e: Body) => e.manager), ['kubectl', 'ctl']);
  });

  test('a default inside its metadata must result in valid metadata, and applies', async () => {
    const group = 'embedded-defaults.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    const template = (labels: Body) => ({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { metadata: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' }, default: labels } } } },
    });
    const props = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    props.template = template({ 'bad key': 'x', app: 'not/valid' });
    const refused = await api(server, 'POST', CRDS, crd);
    assert.equal(refused.status, 422, refused.text);
    const cause = (refused.body.details.causes as Body[]).find((c) => c.field.endsWith('.properties[template].properties[metadata].properties[labels].default'));
    assert.ok(cause, refused.text);
    assert.match(cause.message, /must result in valid metadata: \[metadata\.labels: Invalid value: "bad key": name part must consist of .*, metadata\.labels: Invalid value: "not\/valid": a valid label must be/);

    props.template = template({ app: 'web' });
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    const created = await api(server, 'POST', base, widget(group, 'a', { size: 2, template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } }));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.spec.template.metadata, { name: 'x', labels: { app: 'web' } });
  });

  test('its metadata is checked on every update, changed or not (not ratcheted)', async () => {
    const group = 'embedded-update.live.example.com';
    const crd = widgetCrd(group, { scope: 'Cluster' });
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    await establish(crd);
    const base = `/apis/${group}/v1/widgets`;
    // Stored while the field was not an embedded resource.
    const template = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { 'bad key': 'x' } } };
    assert.equal((await api(server, 'POST', base, widget(group, 'a', { size: 2, template })).then((r) => r.status)), 201);
    await updateCrd(crd.metadata.name, (c) => (c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template['x-kubernetes-embedded-resource'] = true));
    await waitFor('the embedded resource served', async () => (await api(server, 'PATCH', `${base}/a`, { spec: { size: 3 } }, MERGE)).status === 422);
    const r = await api(server, 'PATCH', `${base}/a`, { spec: { size: 4 } }, MERGE);
    assert.equal(r.status, 422, r.text);
    assert.deepEqual((r.body.details.causes as Body[]).map((c) => c.field), ['spec.template.metadata.labels']);
  });
});
