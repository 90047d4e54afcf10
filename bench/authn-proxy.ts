// Authenticating-proxy benchmark: `node --import tsx bench/authn-proxy.ts`. One GET of a namespace
// over kept-alive TLS connections, measured in alternating rounds: an ordinary client certificate
// on a server without the proxy (the baseline), the same certificate on a server with
// `--requestheader-*` (the proxy's authenticator, first in the union, refuses it before the client
// certificate authenticator accepts it), and the proxy's certificate with the user in headers.
import { Agent, request } from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../src/server/server.ts';
import type { RunningServer } from '../src/server/options.ts';
import { issueCert, makeCa, type TestCert } from '../test/support/certs.ts';
import { tempDir } from '../test/support/tmp.ts';
import { fmt, load, row } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 8;
const PATH = '/api/v1/namespaces/default';

const dir = tempDir('bench-authn-proxy');
const clientCa = await makeCa('clients');
const proxyCa = await makeCa('front-proxy-ca');
writeFileSync(join(dir, 'client-ca.crt'), clientCa.cert);
writeFileSync(join(dir, 'front-proxy-ca.crt'), proxyCa.cert);
const admin = await issueCert(clientCa, { subject: 'CN=admin, O=system:masters' });
const proxy = await issueCert(proxyCa, { subject: 'CN=front-proxy' });
const quiet = () => {};
const plain = await startServer({ log: quiet, authentication: { clientCaFile: join(dir, 'client-ca.crt') } });
const withProxy = await startServer({
  log: quiet,
  authentication: {
    clientCaFile: join(dir, 'client-ca.crt'),
    requestHeader: { clientCaFile: join(dir, 'front-proxy-ca.crt'), usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefix: ['X-Remote-Extra-'] },
  },
});

function getter(server: RunningServer, cert: TestCert, headers: Record<string, string>) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS, ca: server.ca, cert: cert.cert, key: cert.key });
  const op = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(server.url + PATH, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`GET ${PATH}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end();
    });
  return { op, close: () => agent.destroy() };
}

const cases = [
  { label: 'client certificate, no proxy configured (baseline)', ...getter(plain, admin, {}) },
  { label: 'client certificate, proxy configured', ...getter(withProxy, admin, {}) },
  { label: 'proxy certificate, user in headers', ...getter(withProxy, proxy, { 'X-Remote-User': 'alice', 'X-Remote-Group': 'system:masters', 'X-Remote-Extra-Scopes': 'read' }) },
];

try {
  for (let i = 0; i < 2; i++) for (const c of cases) await load(CONNECTIONS, 500, c.op);
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round}`);
    let baseline = 0;
    for (const c of cases) {
      const r = await load(CONNECTIONS, SECONDS * 1000, c.op);
      if (!baseline) baseline = r.perSecond;
      row(c.label, `${fmt(r.perSecond)}/s p50 ${fmt(r.p50, 2)} ms`, r.perSecond / baseline);
    }
  }
} finally {
  for (const c of cases) c.close();
  await Promise.all([plain.close(), withProxy.close()]);
}
