// Citations in code and documentation point at files of this repository that exist, down to the
// ruling or heading they name, so a reader can follow every one of them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve('.');
const SCANNED = ['src', 'test', 'bench', 'scripts', 'bin', 'docs'];
const TEXT = /\.(ts|mjs|js|sh|py|md)$/;

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : TEXT.test(e.name) ? [p] : [];
  });
}

const scanned = () => [join(ROOT, 'README.md'), ...SCANNED.flatMap((d) => files(join(ROOT, d)))];

/** The anchors a Markdown file offers: explicit `<a id>` targets and its headings' slugs. */
function anchorsOf(markdown: string): Set<string> {
  const ids = [...markdown.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
  const slugs = [...markdown.matchAll(/^#+\s+(.+)$/gm)].map((m) =>
    m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s-]/gu, '')
      .replace(/\s/g, '-'),
  );
  return new Set([...ids, ...slugs]);
}

test('every cited docs/ file exists and offers the anchor cited', () => {
  const bad: string[] = [];
  let cited = 0;
  for (const file of scanned()) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
      cited++;
      const target = join(ROOT, 'docs', m[1]!);
      const where = `${relative(ROOT, file)}: ${m[0]}`;
      if (!existsSync(target)) bad.push(`${where}: no such file`);
      else if (m[2] && !anchorsOf(readFileSync(target, 'utf8')).has(m[2])) bad.push(`${where}: no such anchor`);
    }
  }
  assert.ok(cited > 0, 'the scan finds citations');
  assert.deepEqual(bad, []);
});

/** Spellings of documents that are not part of this repository. */
const OUTSIDE = /\bspec[- ]0[1-3]\b|\bspec[- ]decisions?\b|\bDESIGN\.md\b|\breference\/[\w-]+\.md\b/i;

test('no comment cites a design or spec document outside the repository', () => {
  const found: Record<string, number> = {};
  for (const file of scanned()) {
    if (file.endsWith('doc-citations.test.ts')) continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    const n = lines.filter((l) => OUTSIDE.test(l)).length;
    if (n) found[relative(ROOT, file)] = n;
  }
  assert.deepEqual(found, {});
});

test('the outside-document pattern recognises the spellings it is meant to catch', () => {
  for (const s of ['as spec 01 says', 'Spec 03: every field', '(spec-decisions #6)', 'spec decision 16', 'DESIGN.md "Request flow"', 'reference/kube-apiserver-facts.md'])
    assert.ok(OUTSIDE.test(s), s);
  for (const s of ['spec.leaseName', "the spec's `required` list", 'docs/rulings.md#r1', '/spec/holderIdentity'])
    assert.ok(!OUTSIDE.test(s), s);
});
