// The package's entry point as the build ships it (dist/index.cjs, which dist/index.js re-exports
// for `import`): it runs the bundled code (dist/bundle.cjs, every module of src/index.ts in one
// CommonJS file) with V8's compiled form of it kept in the user's cache (`orch-apiserver/code`).
//
// Compiling the bundle's ~1 MB and the functions a start runs for the first time is a good part
// of what a start costs. The kept form holds the bytecode of every function compiled by the time
// the first server of the process was ready, so the next process starts without compiling them.
// Node's own compile cache would do the same, but enabling it from a library changes the whole
// process (every module loaded after it, coverage's precision); this touches the package's own
// code only.
//
// The kept form is used only when it is the user's alone (see user-cache.ts) and its name matches
// the bundle's contents, the Node.js version and the architecture; V8 also refuses a form made by
// another V8 or with other flags, and one it refuses is made again. Nothing depends on it: a
// missing, foreign or refused form only means compiling. `NODE_DISABLE_COMPILE_CACHE` (Node's
// own switch for its cache) turns this one off too. Loaded in a context other than the process's
// main one (a test runner's vm context), the bundle is required as a plain module, in that context.
// An `import()` in the bundle goes to Node's default loader, an experimental option of vm that
// prints an ExperimentalWarning the first time it is used: the bundle's code requires what it loads
// on first use instead (the build refuses a bundle that imports; test/package checks that a start
// that loads them prints nothing).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hash } from 'node:crypto';
import { join } from 'node:path';
import { debuglog } from 'node:util';
import vm from 'node:vm';
import { pruneFiles, readPrivateFile, userCacheDirectory, writePrivateFile } from './server/user-cache.ts';
import type * as Package from './index.ts';

type Exports = typeof Package;

/** Kept forms per user: one per version of the package and of Node.js in use at once is plenty. */
const KEEP = 6;
const KEPT = /^bundle-[0-9a-f]{32}\.v8$/;
/** `NODE_DEBUG=orch-apiserver` says what became of the kept form. */
const debug = debuglog('orch-apiserver');

function load(): Exports {
  const dir = import.meta.dirname;
  const file = join(dir, 'bundle.cjs');
  const requireHere = createRequire(file);
  const cacheDir = process.env.NODE_DISABLE_COMPILE_CACHE ? undefined : userCacheDirectory('code');
  // Loaded in a context of its own (a test runner's vm context): the bundle runs there, as required.
  if (cacheDir === undefined || vm.runInThisContext('globalThis') !== globalThis) {
    debug('code cache: off');
    return requireHere(file) as Exports;
  }
  const source = readFileSync(file, 'utf8');
  const name = `bundle-${hash('sha256', `${process.version}\0${process.arch}\0${source}`, 'hex').slice(0, 32)}.v8`;
  const kept = readPrivateFile(cacheDir, name);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData: kept,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as Exports };
  (script.runInThisContext() as (e: object, r: NodeJS.Require, m: object, f: string, d: string) => void)(module.exports, requireHere, module, file, dir);
  const inner = module.exports;
  if (kept && !script.cachedDataRejected) {
    debug(`code cache: ${name} used`);
    return inner;
  }
  debug(kept ? `code cache: ${name} refused by V8` : `code cache: none usable in ${cacheDir}`);
  // Kept once the first server is ready (its start has compiled what a start runs), after its
  // caller has it.
  let keeping = false;
  const keep = () => {
    if (keeping) return;
    keeping = true;
    setImmediate(() => {
      try {
        const written = writePrivateFile(cacheDir, name, script.createCachedData());
        if (written) pruneFiles(cacheDir, (f) => KEPT.test(f), KEEP);
        debug(`code cache: ${name} ${written ? 'kept' : 'not kept'}`);
      } catch {
        debug(`code cache: ${name} not kept`);
      }
    });
  };
  const startServer: Exports['startServer'] = async (...args) => {
    const server = await inner.startServer(...args);
    keep();
    return server;
  };
  return { ...inner, startServer };
}

const entry = load();
export const { startServer, namingProfile } = entry;
/** Every value src/index.ts exports is passed on above (a new one fails the type check here). */
const passedOn: Record<keyof Exports, true> = { startServer: true, namingProfile: true };
void passedOn;
