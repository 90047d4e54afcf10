// The layer order of src/README.md, checked over the import graph: a file imports from its own
// layer or from a lower one, so request facts and configuration reach lower layers as arguments.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve('src');

/** Each layer's rank, as src/README.md lists them. */
const RANK: Record<string, number> = {
  naming: 0,
  request: 0,
  storage: 1,
  machinery: 2,
  ssa: 3,
  wire: 3,
  negotiation: 3,
  cel: 3,
  registry: 4,
  endpoints: 5,
  controllers: 5,
  auth: 5,
  server: 6,
  index: 7,
  'package-entry': 8,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** `src/registry/kinds/lease.ts` → `registry`; `src/naming.ts` → `naming`. */
function layerOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? parts[0]!.replace(/\.ts$/, '') : parts[0]!;
}

/** Every relative import or re-export of a file, static or dynamic, as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*'(\.{1,2}\/[^']+)'/g), ...text.matchAll(/import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)];
  return specs.map((m) => resolve(dirname(file), m[1]!));
}

test('every layer of src/ has a rank, and src/README.md lists it', () => {
  const readme = readFileSync(join(SRC, 'README.md'), 'utf8');
  const layers = new Set(sourceFiles(SRC).map(layerOf));
  for (const l of layers) {
    assert.ok(l in RANK, `layer ${l} has a rank here`);
    assert.ok(readme.includes(`\`${l}/\``) || readme.includes(`\`${l}.ts\``), `src/README.md lists ${l}`);
  }
});

test('no import points to a layer beside or above its own', () => {
  const bad: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    for (const target of importsOf(file)) {
      assert.ok(target.startsWith(SRC + '/'), `${relative(SRC, file)} imports outside src/: ${target}`);
      const to = layerOf(target);
      if (to !== from && RANK[to]! >= RANK[from]!) bad.push(`${relative(SRC, file)} (${from}) imports ${relative(SRC, target)} (${to})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('the import reader finds imports (a pattern that matched nothing would let every file pass)', () => {
  const handlers = join(SRC, 'endpoints', 'handlers.ts');
  assert.ok(importsOf(handlers).some((t) => layerOf(t) === 'registry'), 'handlers.ts imports the registry');
  assert.ok(RANK[layerOf(handlers)]! > RANK['registry']!);
});
