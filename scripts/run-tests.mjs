#!/usr/bin/env node
// Runs every test file under test/ (`*.test.ts`) with Node's test runner, one file at a time:
// unit tests first, then storage, then the API suites. Node 20's runner takes no globs, so the
// files are found here and a new test file cannot be forgotten. Arguments narrow the run to the
// files whose path contains one of them (`npm test -- kubectl yaml`).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const order = ['test/unit', 'test/storage', 'test/api'];
function find(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? find(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
    .sort();
}
const rank = (f) => {
  const i = order.findIndex((d) => f.startsWith(`${d}/`));
  return i < 0 ? order.length : i;
};
const filters = process.argv.slice(2);
const files = find('test')
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  process.stderr.write(`no test files match ${filters.join(' ')}\n`);
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
