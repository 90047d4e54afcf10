// Access review benchmark: `node --import tsx bench/access-reviews.ts`. A server with RBAC and
// 1,000 roles and 1,000 role bindings (plus the defaults) answers SubjectAccessReviews one at a
// time, for a user with a binding (allowed) and for one without (no opinion: every binding of the
// namespace and the cluster is looked at by subject, none matches). The baseline is a GET of a
// namespace at the same concurrency in the same run, so the ratios compare figures of one run; the
// issue's bound is a p99 under 1 ms for the review.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startServer } from '../src/server/server.ts';
import { load, loadRow } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const OBJECTS = Number(process.env.BENCH_RBAC_OBJECTS ?? 1000);
const RBAC = '/apis/rbac.authorization.orch.io/v1';
const SAR = '/apis/authorization.orch.io/v1/subjectaccessreviews';

const dir = mkdtempSync(join(tmpdir(), 'orch-bench-reviews-'));
// Plain HTTP: every request is the administrator, who may create reviews.
const server = await startServer({ dataDir: dir, port: 0, insecureServing: {}, authorization: { modes: ['RBAC'] }, log: () => {} });
const pool = new Pool(server.url, { connections: 8, pipelining: 1 });

async function send(method: string, path: string, body?: unknown): Promise<void> {
  const r = await pool.request({ method, path, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  await r.body.arrayBuffer();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode}`);
}

try {
  for (const ns of ['team-0', 'team-1']) await send('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  // Half the objects in each of two namespaces, written eight at a time.
  const writes: (() => Promise<void>)[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const ns = `team-${i % 2}`;
    writes.push(() => send('POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name: `r-${i}` }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`cm-${i}`] }] }));
    writes.push(() =>
      send('POST', `${RBAC}/namespaces/${ns}/rolebindings`, {
        metadata: { name: `b-${i}` },
        roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: `r-${i}` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: `user-${i}` }],
      }),
    );
  }
  for (let i = 0; i < writes.length; i += 8) await Promise.all(writes.slice(i, i + 8).map((w) => w()));
  // Let the index catch up with the last writes.
  await new Promise((r) => setTimeout(r, 1000));

  const review = (user: string) =>
    JSON.stringify({ apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:authenticated'], resourceAttributes: { namespace: 'team-0', verb: 'get', resource: 'configmaps', name: 'cm-500' } } });
  const allowedBody = review('user-500');
  const deniedBody = review('nobody');
  const post = (body: string, want: boolean) => async () => {
    const r = await pool.request({ method: 'POST', path: SAR, headers: { 'content-type': 'application/json' }, body });
    const answer = (await r.body.json()) as { status?: { allowed?: boolean } };
    if (r.statusCode !== 201 || answer.status?.allowed !== want) throw new Error(`review: ${r.statusCode} ${JSON.stringify(answer)}`);
  };
  const get = async () => {
    const r = await pool.request({ method: 'GET', path: '/api/v1/namespaces/team-0' });
    await r.body.arrayBuffer();
    if (r.statusCode !== 200) throw new Error(`GET: ${r.statusCode}`);
  };
  for (let i = 0; i < 3; i++) {
    await load(1, 500, get);
    await load(1, 500, post(allowedBody, true));
    await load(1, 500, post(deniedBody, false));
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const base = await load(1, SECONDS * 1000, get);
    const allowed = await load(1, SECONDS * 1000, post(allowedBody, true));
    const denied = await load(1, SECONDS * 1000, post(deniedBody, false));
    loadRow(`round ${round}: GET namespace, 1 at a time (baseline)`, base);
    loadRow(`round ${round}: SAR allowed, ${OBJECTS} roles+bindings`, allowed, base);
    loadRow(`round ${round}: SAR no opinion, ${OBJECTS} roles+bindings`, denied, base);
  }
} finally {
  await pool.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
