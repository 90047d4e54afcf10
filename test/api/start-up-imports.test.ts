// What a default start loads: a fresh Node.js imports the package's entry point and starts a
// server (throw-away storage, generated certificates, no token, no YAML, no protobuf), then lists
// every module it loaded — ES modules through a resolve hook, CommonJS ones from the require cache.
// The libraries a start does not need before its first request of their kind stay unloaded: an
// ASN.1/X.509 library (certificates are issued with node:crypto), jose (no token signed or
// verified yet), the YAML library, protobufjs, the ciphers of encryption at rest (none configured),
// and prom-client beyond its registry and metric classes. Each cost a start time to load.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tsLoader } from '../support/ts-loader.ts';
import { tempDir } from '../support/tmp.ts';

const entry = new URL('../../src/index.ts', import.meta.url).href;

/** The child: records resolved ES modules into `file` (from the hooks' thread), starts and stops a server, adds the require cache. */
const script = (file: string) => `
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
const server = await startServer();
await server.close();
appendFileSync(${JSON.stringify(file)}, Object.keys(createRequire(import.meta.url).cache).map((p) => pathToFileURL(p).href + '\\n').join(''));
`;

test('a default start loads no certificate library, jose, YAML, protobufjs, ciphers or prom-client beyond its metric classes', async () => {
  const file = join(tempDir('start-up-imports'), 'loaded.txt');
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, [...tsLoader, '--input-type=module', '-e', script(file)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  const loaded = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  // Sanity: the hook saw the server's own modules and its storage library.
  assert.ok(loaded.some((u) => u.endsWith('/src/server/server.ts')), 'the resolve hook saw nothing');
  assert.ok(loaded.some((u) => u.includes('/node_modules/lmdb/')), 'lmdb was not seen loading');
  const packageOf = (u: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(u);
  const unwanted = loaded.filter((u) => {
    const m = packageOf(u);
    if (!m) return false;
    const [, name, rest] = m;
    if (['@peculiar/x509', '@peculiar/asn1-schema', 'asn1js', 'reflect-metadata', 'tsyringe', 'jose', 'yaml', 'protobufjs', '@noble/ciphers'].includes(name!)) return true;
    return name === 'prom-client' && !/^lib\/(registry|counter|gauge|histogram|metric|util|validation|exemplar)\.js$/.test(rest!);
  });
  assert.deepEqual(unwanted, []);
});
