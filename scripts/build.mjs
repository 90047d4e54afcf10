// `npm run build`, after `tsc -b tsconfig.build.json` has written the declarations (dist/**/*.d.ts
// with their maps): bundles our modules into dist/ with esbuild. Node.js loads an ES module with
// a fixed cost before any of its code runs, and our code is a couple of hundred modules, so the
// build is a few files instead: one per entry point (at the entry's own path under dist/: the
// package's `exports`, the command's module, the write worker, which write-pool.ts starts by path)
// and shared chunks in dist/chunks/. Code the modules import lazily (`import()`) stays in chunks of
// its own, loaded on first use as before. The dependencies stay imports of their packages.
// Last, the files the code reads at run time (the protobuf schemas) are copied from src/ into
// dist/ at the same relative paths (src/machinery/package-files.ts finds them there).
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const entryPoints = ['src/index.ts', 'src/server/cli.ts', 'src/endpoints/write-worker.ts'];

// What an earlier build wrote (the bundle, or a build of one compiled file per module) goes first,
// so that nothing stale is packed; the declarations stay (tsc -b has just brought them up to date).
const stale = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) stale(path);
    else if (/\.js(\.map)?$/.test(entry.name)) rmSync(path);
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

cpSync('src', 'dist', { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('.proto') });
