// Property-based test of hostile requests (fast-check): malformed and oversized requests of every
// category — paths, methods, headers, bodies in every format, patches of every type, query
// options, selectors, DELETE bodies, deletecollection, watches, oversized shapes — are sent to one
// server (a child process), and for each: the answer is a Status with a 4xx code, or a 2xx where
// the generator built a valid request; never a 5xx, a hang or a dropped connection; /readyz
// answers within 1 s while the request runs and after it; the sentinel objects are byte-for-byte
// unchanged. See test/support/fuzz/ for the generators and the checks.
//
// `npm test` runs a fixed seed; `npm run fuzz` (FUZZ_LONG=1) runs many more cases, with bodies up
// to the 3 MiB limit, from a random seed. On failure the seed, fast-check's counterexample and its
// path are printed; replay one category with
//   FUZZ_SEED=<seed> FUZZ_ONLY=<category> FUZZ_PATH=<path> node --import tsx --test test/api/hostile-fuzz.test.ts
// Other switches: FUZZ_RUNS (cases per category), FUZZ_SKIP=<category>,… (skip categories),
// FUZZ_SURVEY=1 (run every case of a category without stopping at the first failure, and list
// every distinct failure at the end).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describeCase, type FuzzCase } from '../support/fuzz/case.ts';
import { categories } from '../support/fuzz/generators.ts';
import { Harness } from '../support/fuzz/harness.ts';
import { runCase } from '../support/fuzz/runner.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const LONG = process.env.FUZZ_LONG === '1';
const FIXED_SEED = 230_023;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : LONG ? Math.floor(Math.random() * 2 ** 31) : FIXED_SEED;
const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);
const only = list(process.env.FUZZ_ONLY);
const skip = list(process.env.FUZZ_SKIP);
const path = process.env.FUZZ_PATH;
const survey = process.env.FUZZ_SURVEY === '1';

// Sizes of the oversized shapes, kept clear of the 256 KiB annotation limit.
const scale = LONG ? { sizes: [96 * KiB, 300 * KiB, 1 * MiB, 2.5 * MiB] } : { sizes: [24 * KiB, 300 * KiB] };
/** Cases per category in `npm test` (about 45 s in all on two cores); `npm run fuzz` runs 10 times as many. */
const RUNS: Record<string, number> = { path: 60, method: 30, header: 60, body: 80, patch: 80, query: 50, selector: 50, delete: 40, deletecollection: 40, watch: 20, size: 15 };
const runsFor = (name: string) => (process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : (RUNS[name] ?? 40) * (LONG ? 10 : 1));
/** Shrinking replays requests against the server: bounded so a failing run still ends. */
const timeLimitMs = LONG ? 30 * 60_000 : 40_000;

const harness = new Harness(['--feature-gates=CBORServingAndStorage=true']);
await harness.start();
after(() => harness.stop());
process.stderr.write(`hostile fuzz: seed ${seed}${LONG ? ' (long run)' : ''}\n`);

for (const [name, arb] of Object.entries(categories(scale))) {
  const skipped = (only.length > 0 && !only.includes(name)) || skip.includes(name);
  test(`hostile requests: ${name}`, { skip: skipped ? 'FUZZ_ONLY / FUZZ_SKIP' : false, timeout: LONG ? Infinity : 240_000 }, async (t) => {
    /** Every distinct failure seen, shrinking included: the first line of each, by what was sent. */
    const seen = new Map<string, string>();
    const codes = new Map<string, number>();
    const property = fc.asyncProperty(arb, async (c: FuzzCase) => {
      const o = await runCase(harness, c);
      const key = `${c.expect} ${o.status ?? 'none'}`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
      if (o.failures.length > 0) {
        if (!seen.has(c.what)) seen.set(c.what, `${describeCase(c).slice(0, 300)}\n      → ${o.failures[0]!.split('\n')[0]!.slice(0, 300)}`);
        if (!survey) throw new Error(o.failures.join('\n'));
      }
    });
    const details = await fc.check(property, { seed, path: only.includes(name) ? path : undefined, numRuns: runsFor(name), interruptAfterTimeLimit: timeLimitMs });
    t.diagnostic(`${name}: ${details.numRuns} runs, ${details.numShrinks} shrinks; expect/status counts ${JSON.stringify(Object.fromEntries([...codes].sort()))}; sentinel generation ${harness.generation}; server restarts ${harness.restartCount}; server RSS ${harness.rssMiB()} MiB`);
    if (survey && seen.size > 0) assert.fail(`seed ${seed}: ${seen.size} distinct failing requests in this category:\n${[...seen.values()].map((s) => `  - ${s}`).join('\n')}`);
    if (details.failed) {
      const report = fc.defaultReportMessage(details) ?? 'failed';
      const distinct = [...seen.values()].map((s) => `  - ${s}`).join('\n');
      assert.fail(
        `${report}\n\nReplay: FUZZ_SEED=${seed} FUZZ_ONLY=${name} FUZZ_PATH=${details.counterexamplePath ?? ''} node --import tsx --test test/api/hostile-fuzz.test.ts\n\n` +
          `${seen.size} distinct failing requests seen in this category:\n${distinct}`,
      );
    }
  });
}
