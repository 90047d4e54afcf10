// Protobuf encode/decode against JSON on a list of 500 Leases (node heartbeats with managed
// fields, the shape a LIST of the node-lease namespace returns).
// Run: node --import tsx bench/protobuf-codec.ts

import type { KObject } from '../src/machinery/meta.ts';
import { namingProfile } from '../src/naming.ts';
import { decodeObject, encodeItem, encodeList, encodeListFromItems, encodeObject } from '../src/wire/protobuf/index.ts';

const apiVersion = `${namingProfile('orch').group('coordination')}/v1`;

function lease(i: number): KObject {
  const pad = String(i).padStart(12, '0');
  return {
    apiVersion,
    kind: 'Lease',
    metadata: {
      name: `node-${i}`,
      namespace: 'orch-node-lease',
      uid: `0b8f3b5e-6a4c-4c1e-9d7a-${pad}`,
      resourceVersion: String(100000 + i),
      creationTimestamp: '2026-01-02T03:04:05Z',
      labels: { 'app.example.com/name': 'kubelet', tier: 'node' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: `node-${i}`, uid: `c1a2b3c4-0000-4000-8000-${pad}` }],
      managedFields: [
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion,
          time: `2026-01-02T03:${String(i % 60).padStart(2, '0')}:05Z`,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:ownerReferences': { '.': {}, [`k:{"uid":"c1a2b3c4-0000-4000-8000-${pad}"}`]: {} } }, 'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {}, 'f:renewTime': {} } },
        },
      ],
    },
    spec: {
      holderIdentity: `node-${i}`,
      leaseDurationSeconds: 40,
      acquireTime: '2026-01-02T03:00:00.000000Z',
      renewTime: `2026-01-02T03:${String(i % 60).padStart(2, '0')}:05.${String(i * 997).padStart(6, '0').slice(-6)}Z`,
      leaseTransitions: 3,
    },
  };
}

// Fresh objects as JSON.parse makes them, as a server holds them.
const items = JSON.parse(JSON.stringify(Array.from({ length: 500 }, (_, i) => lease(i)))) as KObject[];
const list = { apiVersion, kind: 'LeaseList', metadata: { resourceVersion: '123456' }, items };

/**
 * Median milliseconds per call of each function, measured in interleaved rounds (A B C A B C …)
 * so that load from elsewhere on the machine falls on all of them alike.
 */
function measure(fns: (() => unknown)[], calls: number, rounds = 15): number[] {
  for (const fn of fns) for (let i = 0; i < Math.max(10, calls / 4); i++) fn();
  const times: number[][] = fns.map(() => []);
  for (let r = 0; r < rounds; r++) {
    fns.forEach((fn, k) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) fn();
      times[k]!.push(Number(process.hrtime.bigint() - start) / 1e6 / calls);
    });
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!);
}

const cached = items.map((o) => encodeItem(o));
const body = encodeList(list);
const json = JSON.stringify(list);
console.log(`500 Leases: protobuf ${body.length} bytes, JSON ${Buffer.byteLength(json)} bytes`);

const names = ['JSON.stringify', 'JSON.stringify + Buffer.from', 'encodeList', 'encodeListFromItems (items pre-encoded)'];
const results = measure([() => JSON.stringify(list), () => Buffer.from(JSON.stringify(list)), () => encodeList(list), () => encodeListFromItems(list, cached)], 20);
names.forEach((name, k) => console.log(`${name.padEnd(42)} ${results[k]!.toFixed(3)} ms  (${(results[k]! / results[0]!).toFixed(2)}x JSON.stringify)`));

const one = items[0]!;
const oneBody = encodeObject(one);
const oneJson = JSON.stringify(one);
const [enc, str, dec, parse] = measure([() => encodeObject(one), () => JSON.stringify(one), () => decodeObject(oneBody), () => JSON.parse(oneJson)], 2000).map((ms) => (ms * 1000).toFixed(1));
console.log(`one Lease: encodeObject ${enc} µs, JSON.stringify ${str} µs; decodeObject ${dec} µs, JSON.parse ${parse} µs`);
