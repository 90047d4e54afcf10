// The installable package, as a user gets it: `npm pack` once (which builds dist/ through the
// `prepare` script), the tarball installed into one scratch project (the test runners and
// TypeScript linked in from this project's own install), then the package used from every place a
// user would call it: plain node with `import` and with `require()`, a strict `nodenext` TypeScript
// project type-checking the README's example against the shipped declarations, `node --test`,
// Vitest and Jest (each starting and stopping a server per test file), and the `orch-apiserver`
// command through npx.
//
// No network: the scratch project's lock file is cut from this project's own (same versions, same
// integrity hashes, the tarball addresses this project's install fetched), so `npm ci --offline`
// takes every package from the npm cache that this project's install filled; every npm and npx run
// here also goes through a proxy on a closed port, so that a request that did leave would fail.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../support/tmp.ts';

const root = new URL('../..', import.meta.url).pathname;
/** Every npm and npx run here: offline, through a proxy nobody answers on should anything still ask the network. */
const OFFLINE = {
  npm_config_offline: 'true',
  npm_config_proxy: 'http://127.0.0.1:9/',
  npm_config_https_proxy: 'http://127.0.0.1:9/',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** This process's environment for a child, without what makes a node started here report to this test runner. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return { ...env, ...OFFLINE, ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} took over ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ok = (r: Ran, what: string) => assert.equal(r.code, 0, `${what} failed (exit ${r.code})\n${r.stdout}\n${r.stderr}`);

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  dev?: boolean;
  peer?: boolean;
  devOptional?: boolean;
  [k: string]: unknown;
}

/**
 * The tools the scratch project uses: this project's own installed copies (its development
 * dependencies), linked into the scratch project's node_modules after the install, so that the
 * install proves what the package itself needs and extracts nothing else (the tools are most of
 * what it would otherwise extract).
 */
const TOOLS = ['typescript', '@types/node', '@kubernetes/client-node', 'vitest', 'jest'];

/**
 * The scratch project's lock file: the package from its tarball, and every package it needs, found
 * in this project's lock file as Node resolves them (nearest node_modules up).
 */
function scratchLock(tarball: string, integrity: string, registry: string): { manifest: object; lock: object } {
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string>; bin: Record<string, string>; engines: Record<string, string> };
  const source = (JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const packages: Record<string, LockEntry> = {};
  const visit = (from: string, name: string, optional: boolean) => {
    for (let base = from; ; ) {
      const path = `${base ? `${base}/` : ''}node_modules/${name}`;
      const entry = source[path];
      if (entry) {
        if (packages[path]) return;
        const { dev: _dev, peer: _peer, devOptional: _devOptional, ...kept } = entry;
        // Where npm fetched it from (this project's lock file leaves it out): the cache knows it by that address.
        const tail = name.startsWith('@') ? name.slice(name.indexOf('/') + 1) : name;
        packages[path] = { ...kept, resolved: `${registry}${name}/-/${tail}-${entry.version}.tgz` };
        for (const dep of Object.keys(entry.dependencies ?? {})) visit(path, dep, false);
        for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(path, dep, true);
        for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(path, dep, true);
        return;
      }
      if (!base) {
        assert.ok(optional, `${name} (needed by ${from || 'the project'}) is not in package-lock.json`);
        return;
      }
      const up = base.lastIndexOf('/node_modules/');
      base = up < 0 ? '' : base.slice(0, up);
    }
  };
  for (const dep of Object.keys(own.dependencies)) visit('', dep, false);
  const spec = `file:${tarball}`;
  packages[`node_modules/${own.name}`] = { version: own.version, resolved: spec, integrity, license: 'Apache-2.0', dependencies: own.dependencies, bin: own.bin, engines: own.engines };
  const manifest = { name: 'scratch', version: '1.0.0', private: true, type: 'module', dependencies: { [own.name]: spec } };
  packages[''] = { name: 'scratch', version: '1.0.0', dependencies: { [own.name]: spec } };
  return { manifest, lock: { name: 'scratch', version: '1.0.0', lockfileVersion: 3, requires: true, packages } };
}

/** The README's example of starting a server from code: the first TypeScript block of "Using it from code". */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Using it from code'));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'README.md has no TypeScript example under "Using it from code"');
  return m[1]!;
}

/** Starts a server, asks /readyz over HTTPS trusting the server's CA, stops it: what each runner's test does. */
const serverTest = (imports: string, hooks: { before: string; after: string; test: string }) => `${imports}
import { startServer } from 'orch-apiserver';
import { request } from 'node:https';

let server;
${hooks.before}(async () => {
  server = await startServer();
});
${hooks.after}(async () => {
  await server.close();
});
${hooks.test}('the server is ready', async () => {
  const body = await new Promise((resolve, reject) => {
    request(new URL('/readyz', server.url), { ca: server.ca }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(res.statusCode + ' ' + text));
    }).on('error', reject).end();
  });
  if (body !== '200 ok') throw new Error('readyz answered ' + body);
});
`;

const plainScript = (load: string) => `${load}
const { request } = require('node:https');
(async () => {
  const server = await startServer();
  const body = await new Promise((resolve, reject) => {
    request(new URL('/readyz', server.url), { ca: server.ca }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(res.statusCode + ' ' + text));
    }).on('error', reject).end();
  });
  await server.close();
  console.log('readyz: ' + body);
})();
`;

/**
 * A start that loads the libraries a start loads on first use: the certificate library (an empty
 * certificate cache: it issues them) and jose (a service-account token issued, then verified).
 */
const LAZY_LOADS = `import { startServer } from 'orch-apiserver';
import { request } from 'node:https';
const server = await startServer();
const pem = (field) => Buffer.from(new RegExp(field + ': (\\\\S+)').exec(server.kubeconfig)[1], 'base64');
const send = (method, path, body, headers = {}) => new Promise((resolve, reject) => {
  const auth = headers.authorization ? {} : { cert: pem('client-certificate-data'), key: pem('client-key-data') };
  request(new URL(path, server.url), { method, ca: server.ca, ...auth, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
    let text = '';
    res.on('data', (d) => (text += d));
    res.on('end', () => resolve({ code: res.statusCode, text }));
  }).on('error', reject).end(body === undefined ? undefined : JSON.stringify(body));
});
const sa = await send('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'lazy' } });
const issued = await send('POST', '/api/v1/namespaces/default/serviceaccounts/lazy/token', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} });
const token = JSON.parse(issued.text).status?.token;
const review = await send('POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' }, { authorization: 'Bearer ' + token });
await server.close();
console.log('serviceaccount ' + sa.code + ', token ' + issued.code + ', review ' + review.code + ' ' + (JSON.parse(review.text).status?.userInfo?.username ?? review.text));
`;

/** Uses of the public types that only type-check when the declarations resolve (an `any` would leave the expected errors unused). */
const TYPES_CHECK = `import { startServer, type RunningServer, type ServerOptions } from 'orch-apiserver';

const options: ServerOptions = { featureGates: { CBORServingAndStorage: true }, naming: 'kubernetes' };
const server: RunningServer = await startServer(options);
const port: number = server.port;
const ca: string | undefined = server.ca;
// @ts-expect-error the port is a number
await startServer({ port: '6443' });
// @ts-expect-error no such option
await startServer({ noSuchOption: true });
await server.close();
export { port, ca };
`;

/**
 * The type-check, as one TypeScript program: the README's example and the type uses above, as a
 * project with `tsconfig.json` finds them (skipLibCheck, as most projects build), and every one of
 * the package's shipped declarations without skipLibCheck. Other packages' declarations are not
 * checked (skipLibCheck leaves them out; client-node's need @types/ws, which is not installed).
 */
const CHECK_TYPES = `import ts from 'typescript';
const { config } = ts.readConfigFile('tsconfig.json', ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, process.cwd());
const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, skipLibCheck: false } });
const checked = program.getSourceFiles().filter((f) => !f.fileName.includes('/node_modules/') || f.fileName.includes('/node_modules/orch-apiserver/'));
const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)])];
process.stdout.write(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\\n' }));
process.stdout.write(JSON.stringify(checked.map((f) => f.fileName)) + '\\n');
process.exitCode = diagnostics.length ? 1 : 0;
`;

/** Preloaded into the command's process: loading tsx or a TypeScript file there fails it (nothing transpiles at run time). */
const NO_TRANSPILER = `import { register } from 'node:module';
const hook = \`export async function resolve(specifier, context, next) {
  if (/^tsx(\\\\/|$)/.test(specifier) || /\\\\.[cm]?tsx?$/.test(specifier)) throw new Error('loaded at run time: ' + specifier);
  return next(specifier, context);
}\`;
register('data:text/javascript,' + encodeURIComponent(hook));
`;

let scratch = '';

describe('the packed package, installed offline into a scratch project', { concurrency: true }, () => {
  before(async () => {
    scratch = tempDir('package');
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', scratch], root, {}, 240_000);
    ok(packed, 'npm pack');
    const tarball = packed.stdout.trim().split('\n').pop()!;
    const bytes = readFileSync(join(scratch, tarball));
    const registry = (await run('npm', ['config', 'get', 'registry'], scratch)).stdout.trim().replace(/\/?$/, '/');
    const { manifest, lock } = scratchLock(tarball, `sha512-${createHash('sha512').update(bytes).digest('base64')}`, registry);
    writeFileSync(join(scratch, 'package.json'), JSON.stringify(manifest, null, 2));
    writeFileSync(join(scratch, 'package-lock.json'), JSON.stringify(lock, null, 2));
    ok(await run('npm', ['ci', '--offline'], scratch, {}, 240_000), 'npm ci --offline in the scratch project');
    for (const tool of TOOLS) {
      const link = join(scratch, 'node_modules', tool);
      // One the package needs itself (@types/node, through protobufjs) is already there.
      if (existsSync(link)) continue;
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(realpathSync(join(root, 'node_modules', tool)), link, 'dir');
    }

    writeFileSync(join(scratch, 'esm.mjs'), plainScript(`import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nimport { startServer } from 'orch-apiserver';`));
    writeFileSync(join(scratch, 'cjs.cjs'), plainScript(`const { startServer } = require('orch-apiserver');`));
    writeFileSync(join(scratch, 'lazy-loads.mjs'), LAZY_LOADS);
    writeFileSync(join(scratch, 'readme-example.ts'), readmeExample());
    writeFileSync(join(scratch, 'types-check.ts'), TYPES_CHECK);
    // The README's example with skipLibCheck, as most projects build (client-node's own declarations
    // need @types/ws); CHECK_TYPES checks the package's declarations without it.
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true }, files: ['readme-example.ts', 'types-check.ts'] }),
    );
    writeFileSync(join(scratch, 'check-types.mjs'), CHECK_TYPES);
    writeFileSync(join(scratch, 'no-transpiler.mjs'), NO_TRANSPILER);
    for (const dir of ['node-test', 'vitest', 'jest']) mkdirSync(join(scratch, dir));
    writeFileSync(join(scratch, 'node-test', 'server.test.mjs'), serverTest(`import { before, after, test } from 'node:test';`, { before: 'before', after: 'after', test: 'test' }));
    writeFileSync(join(scratch, 'vitest', 'server.test.mjs'), serverTest(`import { beforeAll, afterAll, test } from 'vitest';`, { before: 'beforeAll', after: 'afterAll', test: 'test' }));
    writeFileSync(join(scratch, 'jest', 'server.test.mjs'), serverTest(`import { beforeAll, afterAll, test } from '@jest/globals';`, { before: 'beforeAll', after: 'afterAll', test: 'test' }));
  });

  test('the tarball holds only what runs: the bundled modules (entry points and shared chunks) with their source maps, declarations, the protobuf schemas, the command, README and LICENSE', () => {
    const installed = join(scratch, 'node_modules', 'orch-apiserver');
    const files = (dir: string): string[] =>
      readdirSync(join(installed, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const all = files('.');
    const outside = all.filter((f) => !/^(dist\/.*\.(js|js\.map|cjs|cjs\.map|d\.ts|d\.ts\.map|proto)|bin\/orch-apiserver\.js|package\.json|README\.md|LICENSE)$/.test(f));
    assert.deepEqual(outside, []);
    for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/bundle.cjs', 'dist/index.d.ts', 'dist/index.d.ts.map', 'dist/server/cli.js', 'dist/endpoints/write-worker.js', 'dist/wire/protobuf/core.proto', 'dist/endpoints/openapi-v2.proto', 'LICENSE'])
      assert.ok(all.includes(f), `${f} is missing`);
    // Our modules are bundled: a few files, not one per module of src/.
    assert.ok(all.some((f) => f.startsWith('dist/chunks/') && f.endsWith('.js')), 'no shared chunks');
    assert.ok(!all.includes('dist/server/server.js'), 'a module of src/ was compiled on its own');
    assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
    assert.ok(!existsSync(join(scratch, 'node_modules', 'tsx')), 'tsx, a development dependency, was installed with the package');
  });

  test('plain node: import', async () => {
    const r = await run(process.execPath, ['esm.mjs'], scratch);
    ok(r, 'node esm.mjs');
    assert.match(r.stdout, /readyz: 200 ok/);
  });

  test('libraries loaded on first use (the certificate library, jose) load without a warning on stderr', async () => {
    // A cache of this test's own: its certificate cache is empty, so the start issues certificates.
    const r = await run(process.execPath, ['lazy-loads.mjs'], scratch, { XDG_CACHE_HOME: join(scratch, 'lazy-cache') });
    ok(r, 'node lazy-loads.mjs');
    assert.match(r.stdout, /serviceaccount 201, token 201, review 201 system:serviceaccount:default:lazy/);
    assert.equal(r.stderr, '');
  });

  test('plain node: require()', async () => {
    const r = await run(process.execPath, ['cjs.cjs'], scratch);
    ok(r, 'node cjs.cjs');
    assert.match(r.stdout, /readyz: 200 ok/);
  });

  test("a second process runs the code from the compiled form the first kept in the user's cache; a refused or foreign one is not used", async () => {
    const cache = join(scratch, 'user-cache');
    const dir = join(cache, 'orch-apiserver', 'code');
    const env = { XDG_CACHE_HOME: cache, NODE_DEBUG: 'orch-apiserver' };
    const started = async (script: string, extra: Record<string, string> = {}) => {
      const r = await run(process.execPath, [script], scratch, { ...env, ...extra });
      ok(r, `node ${script}`);
      assert.match(r.stdout, /readyz: 200 ok/);
      return r.stderr;
    };
    const kept = () => readdirSync(dir).filter((f) => f.endsWith('.v8'));

    let said = await started('esm.mjs');
    assert.match(said, /code cache: none usable in /);
    assert.match(said, /code cache: bundle-[0-9a-f]{32}\.v8 kept/);
    assert.equal(kept().length, 1);
    const file = join(dir, kept()[0]!);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const made = readFileSync(file);
    assert.ok(made.length > 100_000, `a compiled form of ${made.length} bytes`);

    // The next process, through require() as through import, uses it and leaves it as it is.
    said = await started('cjs.cjs');
    assert.match(said, /code cache: bundle-[0-9a-f]{32}\.v8 used/);
    assert.doesNotMatch(said, /kept/);
    assert.deepEqual(readFileSync(file), made);

    // One V8 refuses (not its own) is made again.
    writeFileSync(file, 'not a compiled form');
    said = await started('esm.mjs');
    assert.match(said, /refused by V8/);
    assert.match(said, /kept/);
    assert.ok(readFileSync(file).length > 100_000);

    // One that others may read is not read (and is replaced by the user's own).
    chmodSync(file, 0o644);
    said = await started('esm.mjs');
    assert.match(said, /code cache: none usable in /);
    assert.equal(statSync(file).mode & 0o777, 0o600);

    // Node's switch for its compile cache turns this one off: nothing is read or written.
    const off = join(scratch, 'user-cache-off');
    said = await started('esm.mjs', { XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    assert.match(said, /code cache: off/);
    assert.ok(!existsSync(join(off, 'orch-apiserver', 'code')));
  });

  test("a strict nodenext TypeScript project type-checks the README's example against the shipped declarations", async () => {
    const r = await run(process.execPath, ['check-types.mjs'], scratch);
    ok(r, "type-checking the README's example and the package's declarations");
    const checked = JSON.parse(r.stdout.trim().split('\n').pop()!) as string[];
    for (const f of ['/readme-example.ts', '/types-check.ts', '/node_modules/orch-apiserver/dist/index.d.ts', '/node_modules/orch-apiserver/dist/server/options.d.ts'])
      assert.ok(checked.some((c) => c.endsWith(f)), `${f} was not type-checked: ${checked.join(' ')}`);
  });

  test('node --test starts and stops a server in a test file', async () => {
    const r = await run(process.execPath, ['--test', '--test-reporter=tap', 'node-test/server.test.mjs'], scratch);
    ok(r, 'node --test');
    assert.match(r.stdout, /# pass 1/);
  });

  test('Vitest starts and stops a server in a test file', async () => {
    const r = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--dir', 'vitest'], scratch, { CI: '1' });
    ok(r, 'vitest run');
    assert.match(r.stdout, /1 passed/);
  });

  test('Jest starts and stops a server in a test file', async () => {
    const r = await run(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--ci', '--testTimeout=60000', 'jest/'], scratch, { CI: '1' });
    ok(r, 'jest');
    assert.match(r.stderr, /Tests:\s+1 passed/);
  });

  test('npx orch-apiserver --secure-port=0 prints its URL and serves /readyz, loading no TypeScript', async () => {
    const data = join(scratch, 'npx-data');
    const env = childEnv({ NODE_OPTIONS: `--import=${join(scratch, 'no-transpiler.mjs')}` });
    const child = spawn('npx', ['--no-install', 'orch-apiserver', '--secure-port=0', `--data-dir=${data}`], { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up line: ${stderr}`)), 60_000);
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          const m = /serving on (https:\/\/\S+)/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      });
      const kubeconfig = readFileSync(join(data, 'admin.kubeconfig'), 'utf8');
      const ca = Buffer.from(/certificate-authority-data:\s*(\S+)/.exec(kubeconfig)![1]!, 'base64').toString();
      const { request } = await import('node:https');
      const body = await new Promise<string>((resolve, reject) => {
        request(new URL('/readyz', url), { ca }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(body, '200 ok');
    } finally {
      // npx runs the command in a shell of its own: stop the whole process group (unless it is gone).
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  });
});
