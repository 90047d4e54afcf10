// Regressions found by the property-based test of hostile requests (hostile-fuzz.test.ts), each
// reduced to the request that showed it.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../support/server.ts';
import { startServerProcess } from '../support/server-process.ts';
import { tempDir } from '../support/tmp.ts';
import { decodeBody, exchange } from '../support/fuzz/wire.ts';

// A child process: in one process the client reads the answer before the server's close can race it.
const server = await startServerProcess([`--data-dir=${tempDir('fuzz-regressions')}`]);
after(() => server.kill());
const NS = 'fuzz-regressions';
const LEASES = `/apis/coordination.orch.io/v1/namespaces/${NS}/leases`;
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

const MiB = 1024 * 1024;
const bigLease = (bytes: number) => JSON.stringify({ apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'big', annotations: { big: 'x'.repeat(bytes) } } });

test('a body over the limit, sent whole with its Content-Length: the 413 reaches the client every time (the connection is not reset under it)', async () => {
  const lost: string[] = [];
  for (const size of [4 * MiB, 8 * MiB]) {
    const body = bigLease(size);
    const variants: Record<string, string>[] = [{ 'Content-Type': 'application/json' }, { 'Content-Type': 'application/yaml' }, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }];
    for (const headers of variants) {
      for (let i = 0; i < 4; i++) {
        try {
          const a = await exchange(server.url, { method: 'POST', target: LEASES, headers, body }, { timeoutMs: 10_000 });
          const status = decodeBody(a) as { kind?: string; code?: number } | undefined;
          const expected = headers['Content-Encoding'] ? 415 : 413;
          if (a.status !== expected || status?.kind !== 'Status' || status.code !== expected) lost.push(`${size} bytes ${JSON.stringify(headers)}: ${a.status} ${a.body.subarray(0, 200).toString()}`);
        } catch (e) {
          lost.push(`${size} bytes ${JSON.stringify(headers)}: ${(e as Error).message}`);
        }
      }
    }
  }
  assert.deepEqual(lost, []);
  assert.equal((await api(server, 'GET', `${LEASES}/big`)).status, 404);
});
