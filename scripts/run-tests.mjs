#!/usr/bin/env node
// Runs every test file under test/ (`*.test.ts`) with Node's test runner: unit tests first, then
// storage, then the API suites. Node 20's runner takes no globs, so the files are found here and a
// new test file cannot be forgotten. Arguments narrow the run to the files whose path contains one
// of them (`npm test -- kubectl yaml`).
//
// Two files run at a time (the machine this is written for has two cores), after the files whose
// checks are timed (a /readyz latency, a resident memory size, a time bound, the fuzz test) have
// run one at a time on their own: those must not share the machine with another suite of this
// run. TEST_JOBS=1 (or `--jobs=1`) runs every file one at a time.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const order = ['test/unit', 'test/storage', 'test/api'];
/**
 * Files with timed checks (a latency or time bound, memory sizes, the fuzz test, a race on a
 * connection): run one at a time, before any other file, whatever the job count. A time bound
 * far above what its work takes (seconds for milliseconds of work in the CEL and selector unit
 * files and the computed store) holds with another file running: those run two at a time.
 */
const alone = [
  'test/api/faults.test.ts',
  'test/api/hostile-memory.test.ts',
  'test/api/hostile-bodies.test.ts',
  'test/api/hostile-patches.test.ts',
  'test/api/hostile-fuzz.test.ts',
  'test/api/hostile-fuzz-regressions.test.ts',
  'test/api/hostile-objects.test.ts',
  'test/api/garbage-collector.test.ts',
  'test/api/bad-input.test.ts',
  'test/storage/etcd-backend.test.ts',
];

/**
 * The longest of the other files, longest first: they start first, so that the two lanes of the
 * parallel run end together instead of one long file running on alone at the end.
 */
const longest = [
  'test/package/package.test.ts',
  'test/api/bad-input-corpus.test.ts',
  'test/api/all-kinds-clients.test.ts',
  'test/api/authn-oidc.test.ts',
  'test/api/cli.test.ts',
  'test/api/kubectl.test.ts',
  'test/storage/crash.test.ts',
  'test/api/client-node.test.ts',
  'test/api/python-client.test.ts',
  // Long for their child processes (the server, kubectl, python3) rather than for their cases;
  // versions and the in-cluster webhook would otherwise start near the end of the run.
  'test/api/versions.test.ts',
  'test/api/authz-webhook-in-cluster.test.ts',
  'test/api/kubectl-versions.test.ts',
  'test/api/kubectl-default-profile.test.ts',
  'test/api/explain.test.ts',
];

function find(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? find(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort();
}
const rank = (f) => {
  const i = order.findIndex((d) => f.startsWith(`${d}/`));
  return i < 0 ? order.length : i;
};

const args = process.argv.slice(2);
const jobsArg = args.find((a) => a.startsWith('--jobs='));
const jobs = Number(jobsArg?.slice('--jobs='.length) ?? process.env.TEST_JOBS ?? 2);
if (!Number.isInteger(jobs) || jobs < 1) {
  process.stderr.write(`the job count must be a positive integer, not ${jobsArg ?? process.env.TEST_JOBS}\n`);
  process.exit(2);
}
const filters = args.filter((a) => a !== jobsArg);
const all = find('test').sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const missing = [...alone, ...longest].filter((f) => !all.includes(f));
if (missing.length > 0) {
  process.stderr.write(`run-tests.mjs names test files that do not exist: ${missing.join(' ')}\n`);
  process.exit(1);
}
const files = all
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  process.stderr.write(`no test files match ${filters.join(' ')}\n`);
  process.exit(1);
}

// Where Node.js runs TypeScript itself by stripping types (22.18 and newer) no loader is needed, and
// each test process (and each server process it starts) loads its modules several times faster
// than through tsx, which older versions use.
const loader = process.features.typescript ? [] : ['--import', 'tsx'];
const run = (list, concurrency) =>
  list.length === 0 ? 0 : (spawnSync(process.execPath, [...loader, '--test', `--test-concurrency=${concurrency}`, ...list], { stdio: 'inherit' }).status ?? 1);

if (jobs === 1) process.exit(run(files, 1));
const first = files.filter((f) => alone.includes(f));
const startRank = (f) => (longest.includes(f) ? longest.indexOf(f) : longest.length);
const rest = files.filter((f) => !alone.includes(f)).sort((a, b) => startRank(a) - startRank(b));
const started = performance.now();
const a = run(first, 1);
const middle = performance.now();
const b = run(rest, jobs);
const secs = (from, to) => `${Math.round((to - from) / 1000)} s`;
const result = (status) => (status === 0 ? 'passed' : 'FAILED');
// Two runs print two summaries: this line says how both went.
process.stderr.write(
  `run-tests: ${first.length} files one at a time ${result(a)} in ${secs(started, middle)}, then ${rest.length} files ${jobs} at a time ${result(b)} in ${secs(middle, performance.now())}\n`,
);
process.exit(a || b);
