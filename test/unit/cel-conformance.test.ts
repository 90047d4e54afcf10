// The official CEL conformance suite over every section that applies to a JSON-typed environment
// (cel-conformance.ts says which sections are left out and why). The cases that fail are listed,
// each with its reason, in cel-conformance-failures.json; the list must stay exact: a listed case
// that now passes, or a failing case that is not listed, fails this test.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runConformance } from './cel-conformance.ts';

const known: Record<string, string> = JSON.parse(readFileSync(new URL('./cel-conformance-failures.json', import.meta.url), 'utf8'));
const results = runConformance();

test('at least 95% of the applicable conformance cases pass', () => {
  const passing = [...results.values()].filter((r) => r.passed).length;
  assert.ok(results.size > 1000, `${results.size} applicable cases`);
  assert.ok(passing / results.size >= 0.95, `${passing} of ${results.size} pass`);
});

test('every failing case is listed with its reason', () => {
  const unlisted = [...results].filter(([k, r]) => !r.passed && !(k in known)).map(([k, r]) => `${k}: ${r.detail}`);
  assert.deepEqual(unlisted, []);
});

test('every listed case still fails (a fixed one leaves the list)', () => {
  const fixed = Object.keys(known).filter((k) => results.get(k)?.passed !== false);
  assert.deepEqual(fixed, []);
  for (const [k, reason] of Object.entries(known)) assert.ok(reason.length > 10, `${k} has a reason`);
});
