// What a start loads: a fresh Node.js imports the package's entry point and starts a server (no
// token, no YAML, no protobuf), then lists every module it loaded — ES modules through a resolve
// hook, CommonJS ones from the require cache, Node's own from its load list (Node's fetch
// implementation, which an ES module import of node:http loads, stays unloaded). The libraries a start does not need before its
// first request of their kind stay unloaded: jose (no token signed or verified yet), the YAML
// library, protobufjs, the ciphers of encryption at rest (none configured), the RE2 engine (no
// schema pattern or CEL regular expression compiled yet), and prom-client beyond its registry and metric classes, and the expression language (cel-js) while no kind,
// CRD or configuration holds an expression: a start given a CRD with a validation rule loads it.
// The certificate library is loaded by a start that issues certificates (the first on a data
// directory, or the first with throw-away storage on an empty certificate cache), never by a
// restart, which reads them back, nor by a throw-away start that finds them in the cache. Of the
// server's own modules, the OpenAPI documents', audit's, those of JWT
// authenticators, webhooks, the authorization configuration file and ABAC, and the readers of the
// encryption configuration and of CRD files load only when asked for. Each cost a start time to load.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tsLoader } from '../support/ts-loader.ts';
import { tempDir } from '../support/tmp.ts';

const entry = new URL('../../src/index.ts', import.meta.url).href;

/** The child: records resolved ES modules into `file` (from the hooks' thread), starts and stops a server with `options`, adds the require cache. */
const script = (file: string, options: object) => `
import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const hook = \`import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(file, r.url + '\\\\n');
  return r;
}\`;
register('data:text/javascript,' + encodeURIComponent(hook), { data: { file: ${JSON.stringify(file)} } });
const { startServer } = await import(${JSON.stringify(entry)});
const server = await startServer(${JSON.stringify(options)});
await server.close();
appendFileSync(${JSON.stringify(file)}, Object.keys(createRequire(import.meta.url).cache).map((p) => pathToFileURL(p).href + '\\n').join(''));
appendFileSync(${JSON.stringify(file)}, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => 'node:' + m.slice(13) + '\\n').join(''));
`;

const CERTIFICATE_LIBRARY = ['@peculiar/x509', '@peculiar/asn1-schema', 'asn1js', 'reflect-metadata', 'tsyringe'];
const EXPRESSION_LANGUAGE = ['@marcbachmann/cel-js'];
/** The server's own modules loaded on first use: the OpenAPI documents, the encryption configuration's and the CRD files' readers, audit (policy and backends). */
const OPENAPI = ['src/endpoints/openapi.ts', 'src/endpoints/openapi-v2-proto.ts'];
const CRD_FILES = ['src/server/crd-files.ts'];
const AUDIT = ['src/server/audit/audit.ts', 'src/server/audit/policy.ts', 'src/server/audit/log-backend.ts', 'src/server/audit/webhook-backend.ts'];
/** JWT authenticators, the webhooks, the authorization configuration file and ABAC: loaded when the options name them. */
const AUTH_CONFIGURATIONS = ['jwt-config', 'jwt', 'jwt-set', 'webhook'].map((m) => `src/auth/authn/${m}.ts`).concat(['src/auth/kubeconfig.ts', 'src/auth/authz/webhook.ts', 'src/auth/authz/config-file.ts', 'src/auth/authz/abac.ts']);
const OWN_ON_FIRST_USE = [...OPENAPI, ...CRD_FILES, ...AUDIT, ...AUTH_CONFIGURATIONS, 'src/server/encryption-config.ts'];

/** The packages a start on `dataDir` loaded that it should not have (`allowed`: these may load); `dataDir` may be options instead. */
async function unwantedLoads(dir: string, dataDir: string | object, allowed: readonly string[], crds: string[] = []): Promise<string[]> {
  const file = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const options = typeof dataDir === 'string' ? { dataDir, crds } : dataDir;
  const child = spawn(process.execPath, [...tsLoader, '--input-type=module', '-e', script(file, options)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  const loaded = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  // Sanity: the hook saw the server's own modules and its storage library.
  assert.ok(loaded.some((u) => u.endsWith('/src/server/server.ts')), 'the resolve hook saw nothing');
  assert.ok(loaded.some((u) => u.includes('/node_modules/lmdb/')), 'lmdb was not seen loading');
  // Node's own fetch implementation is loaded by an ES module import of node:http (its export facade).
  if (loaded.includes('node:internal/deps/undici/undici')) return ['node:internal/deps/undici/undici'];
  const packageOf = (u: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(u);
  return loaded.filter((u) => {
    const own = OWN_ON_FIRST_USE.find((f) => u.endsWith(`/${f}`));
    if (own) return !allowed.includes(own);
    const m = packageOf(u);
    if (!m) return false;
    const [, name, rest] = m;
    if (allowed.includes(name!)) return false;
    if ([...CERTIFICATE_LIBRARY, ...EXPRESSION_LANGUAGE, 'jose', 'yaml', 'protobufjs', '@noble/ciphers', 're2js'].includes(name!)) return true;
    return name === 'prom-client' && !/^lib\/(registry|counter|gauge|histogram|metric|util|validation|exemplar)\.js$/.test(rest!);
  });
}

test('a start loads no jose, YAML, RE2 engine, protobufjs, ciphers, expression language, OpenAPI documents or prom-client beyond its metric classes; a restart loads no certificate library either', async () => {
  const dir = tempDir('start-up-imports');
  const dataDir = join(dir, 'data');
  // The first start issues the CA, serving and administrator certificates.
  assert.deepEqual(await unwantedLoads(dir, dataDir, CERTIFICATE_LIBRARY), []);
  // The restart reads them back.
  assert.deepEqual(await unwantedLoads(dir, dataDir, []), []);
});

test('a throw-away start loads the certificate library on an empty certificate cache, and the next process\'s does not', async () => {
  const dir = tempDir('start-up-imports-cache');
  const options = { secureServing: { certificateCache: join(dir, 'pki') } };
  const loadedLibrary = (unwanted: string[]) => unwanted.some((u) => u.includes('/node_modules/@peculiar/x509/'));
  assert.equal(loadedLibrary(await unwantedLoads(dir, options, [])), true, 'the first start did not issue');
  assert.deepEqual(await unwantedLoads(dir, options, []), []);
});

test('a start given a CRD with a validation rule loads the expression language, and nothing else it need not', async () => {
  const dir = tempDir('start-up-imports-cel');
  const crd = join(dir, 'crd.json');
  writeFileSync(
    crd,
    JSON.stringify({
      // (The default naming profile's group.)
      apiVersion: 'apiextensions.orch.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { name: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: "!has(self.name) || self.name != ''" }] } } } } }],
      },
    }),
  );
  const unwanted = await unwantedLoads(dir, join(dir, 'data'), [...CERTIFICATE_LIBRARY, ...CRD_FILES], [crd]);
  assert.deepEqual(unwanted.filter((u) => !EXPRESSION_LANGUAGE.some((p) => u.includes(`/node_modules/${p}/`))), []);
  assert.ok(unwanted.some((u) => u.includes('/node_modules/@marcbachmann/cel-js/')), 'the expression language was not loaded for a CRD with a rule');
});
