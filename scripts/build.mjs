// `npm run build`, after `tsc -b tsconfig.build.json` has written the declarations (dist/**/*.d.ts
// with their maps): bundles our modules into dist/ with esbuild. Node.js loads an ES module with
// a fixed cost before any of its code runs, and our code is a couple of hundred modules, so the
// build is a few files instead.
// - The package's entry (src/index.ts) is one CommonJS file, dist/bundle.cjs, which the entry
//   point dist/index.cjs (src/package-entry.ts) runs with its compiled form kept in the user's
//   cache; dist/index.js passes the same exports on to `import`.
// - The command's module and the write worker (which write-pool.ts starts by path) are ES modules
//   at their own paths under dist/, with shared chunks in dist/chunks/; code they import lazily
//   (`import()`) stays in chunks of its own, loaded on first use.
// The dependencies stay imports (or requires) of their packages. Last, the files the code reads at
// run time (the protobuf schemas) are copied from src/ into dist/ at the same relative paths
// (src/machinery/package-files.ts finds them there).
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const entryPoints = ['src/server/cli.ts', 'src/endpoints/write-worker.ts'];

// What an earlier build wrote (the bundle, or a build of one compiled file per module) goes first,
// so that nothing stale is packed; the declarations stay (tsc -b has just brought them up to date).
const stale = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) stale(path);
    else if (/\.c?js(\.map)?$/.test(entry.name)) rmSync(path);
  }
};
stale('dist');

await build({
  entryPoints,
  outbase: 'src',
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
});

const common = { bundle: true, platform: 'node', target: 'node22', packages: 'external', logLevel: 'warning' };
// The bundle runs as a CommonJS function (package-entry.ts): its modules' import.meta.url is the
// bundle's own URL (what package-files.ts climbs from to the package's root); import.meta.resolve
// is used from the TypeScript sources only (write-pool.ts), never in the build.
await build({
  ...common,
  entryPoints: ['src/index.ts'],
  outfile: 'dist/bundle.cjs',
  format: 'cjs',
  sourcemap: 'linked',
  sourcesContent: false,
  define: { 'import.meta.url': '__bundleUrl', 'import.meta.resolve': 'undefined' },
  banner: { js: 'const __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// The bundle runs as a vm script (package-entry.ts), where an `import()` goes through vm's
// experimental loader option and prints an ExperimentalWarning on the user's stderr: what it loads
// on first use it requires. (The write worker's bootstrap, a string run by a Worker of its own, may import.)
const dynamicImports = readFileSync('dist/bundle.cjs', 'utf8').match(/\bimport\((?!workerData\.)[^)]{0,60}/g) ?? [];
if (dynamicImports.length) throw new Error(`dist/bundle.cjs imports at run time (require it instead; see src/package-entry.ts): ${dynamicImports.join(', ')}`);
await build({ ...common, entryPoints: ['src/package-entry.ts'], outfile: 'dist/index.cjs', format: 'cjs', define: { 'import.meta.dirname': '__dirname' } });
// dist/index.js: the ES module form of the entry, its names taken from the entry itself.
const { metafile } = await build({ ...common, entryPoints: ['src/package-entry.ts'], format: 'esm', write: false, metafile: true, outdir: 'dist' });
const names = Object.values(metafile.outputs).flatMap((o) => o.exports);
writeFileSync(
  'dist/index.js',
  `// The package's ES module entry: the exports of its CommonJS entry (index.cjs).
import { createRequire } from 'node:module';
const entry = createRequire(import.meta.url)('./index.cjs');
${names.map((n) => `export const ${n} = entry.${n};`).join('\n')}
`,
);

cpSync('src', 'dist', { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('.proto') });
