// The controllers as the server runs them: one list built from the served stores, each under the
// Controller contract, started in order and stopped in one place.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { namingProfile } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { isStatusError } from '../../src/machinery/status.ts';
import type { KObject } from '../../src/machinery/meta.ts';
import { DeclarativeValidation } from '../../src/registry/declarative-validation.ts';
import type { RegistryStore } from '../../src/registry/store.ts';
import { startControllers, stopControllers, storeKey, type Controller, type ControllerContext } from '../../src/controllers/controller.ts';
import { buildControllers } from '../../src/controllers/index.ts';
import { ensureSystemNamespaces } from '../../src/controllers/system-namespaces.ts';
import { createServerMetrics } from '../../src/server/metrics.ts';
import { openStorage, storageComponentName, type OpenedStorage } from '../../src/server/open-storage.ts';
import { servedKinds } from '../../src/server/served-kinds.ts';
import { buildStores, type ServedStores } from '../../src/server/stores.ts';

const naming = namingProfile('orch');
const featureGates = parseFeatureGates();
let storage: OpenedStorage;
let served: ServedStores;
let ctx: ControllerContext;
let controllers: Controller[];
const logged: string[] = [];

before(async () => {
  // LeaseCandidates (off by default) are served too, so every built-in controller applies.
  const runtimeConfig = `${naming.group('coordination')}/v1beta1=true`;
  const defs = servedKinds({ naming, featureGates, runtimeConfig, storageComponent: storageComponentName({}), storage: () => storage?.backend });
  storage = await openStorage({});
  const declarative = new DeclarativeValidation(featureGates, createServerMetrics().validation, (m) => logged.push(m));
  served = await buildStores(defs, storage.backend, { naming, featureGates, declarative });
  ctx = {
    stores: new Map(served.stores.map((s) => [storeKey(s.def.group, s.def.resource), s])),
    naming,
    featureGates,
    namespaceSyncIntervalMs: 50,
    log: (m) => logged.push(m),
  };
  controllers = buildControllers(ctx);
  await ensureSystemNamespaces(store('', 'namespaces'), naming);
});

after(async () => {
  stopControllers(controllers);
  await served.close();
  await storage.close();
});

function store(group: string, resource: string): RegistryStore {
  const s = ctx.stores.get(storeKey(group && naming.group(group), resource));
  assert.ok(s, `${group}/${resource} is served`);
  return s;
}

async function exists(s: RegistryStore, namespace: string | undefined, name: string): Promise<KObject | undefined> {
  try {
    return await s.get(namespace, name);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return undefined;
    throw e;
  }
}

async function eventually(what: string, done: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A namespace with an owner lease and a lease it owns. */
async function ownerAndDependent(ns: string): Promise<void> {
  await store('', 'namespaces').create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { dryRun: false });
  const leases = store('coordination', 'leases');
  const apiVersion = `${naming.group('coordination')}/v1`;
  const owner = (await leases.create(ns, { apiVersion, kind: 'Lease', metadata: { name: 'owner' }, spec: {} }, { dryRun: false })).object;
  const ownerReferences = [{ apiVersion, kind: 'Lease', name: 'owner', uid: owner.metadata.uid }];
  await leases.create(ns, { apiVersion, kind: 'Lease', metadata: { name: 'dependent', ownerReferences }, spec: {} }, { dryRun: false });
}

test('every controller, namespace deletion and garbage collection included, comes from one list in start order', () => {
  assert.deepEqual(
    controllers.map((c) => c.name),
    ['namespace-controller', 'garbage-collector', 'apiservice-registration-and-availability', 'kubernetes-service-cidr-controller', 'serviceaccount-controller', 'lease-candidate-gc', 'event-ttl', 'clusterrole-aggregation-controller'],
  );
  for (const c of controllers) {
    assert.equal(typeof c.start, 'function', c.name);
    assert.equal(typeof c.stop, 'function', c.name);
  }
  assert.deepEqual(buildControllers({ ...ctx, stores: new Map() }).map((c) => c.name), ['garbage-collector'], 'with nothing served, only the collector (it watches whatever is)');
});

test('started together they act; stopped together none of them does', async () => {
  await startControllers(controllers);
  const namespaces = store('', 'namespaces');
  const leases = store('coordination', 'leases');

  await ownerAndDependent('running');
  await leases.delete('running', 'owner', { dryRun: false });
  await eventually('the garbage collector deletes the orphaned dependent', async () => !(await exists(leases, 'running', 'dependent')));
  await namespaces.delete(undefined, 'running', { dryRun: false });
  await eventually('the namespace controller finishes the deletion', async () => !(await exists(namespaces, undefined, 'running')));

  stopControllers(controllers);
  await ownerAndDependent('stopped');
  await leases.delete('stopped', 'owner', { dryRun: false });
  await namespaces.delete(undefined, 'stopped', { dryRun: false });
  await sleep(500);
  assert.ok(await exists(leases, 'stopped', 'dependent'), 'no garbage collection once stopped');
  assert.ok((await exists(namespaces, undefined, 'stopped'))?.metadata.deletionTimestamp, 'the namespace stays terminating once the controller is stopped');
  assert.deepEqual(logged, []);
});
