// The expression language's costs, in one run:
//   1. a typical validation rule, `self.spec.replicas <= 10 && self.metadata.name.startsWith('a')`,
//      evaluated with cost tracking, against plain cel-js evaluation of the same rule without it
//      (the faster of self as a dyn map and self of declared object types is the baseline) (goal ≤ 2×);
//   2. compiling a 200-character rule (parse, rewrites, type-check; not from the cache) (goal < 1 ms);
//   3. a rule over a 1,000-item list on an object, with cost tracking (goal < 1 ms).
// Prints each figure, the ratios, and whether the goals hold.
// Run: node --import tsx bench/cel.ts

import { Environment } from '@marcbachmann/cel-js';
import { RuleEnvironment } from '../src/cel/schema.ts';
import { DEFAULT_PER_CALL_LIMIT } from '../src/cel/cost.ts';
import type { Schema } from '../src/machinery/schema.ts';
import { fmt, row } from './lib.ts';

/** Nanoseconds per call of `fn`: the best of several rounds of `n` calls (the machine is shared). */
function timeIt(n: number, fn: (i: number) => unknown, rounds = 7): number {
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (fn(i)) sink++;
    const ns = Number(process.hrtime.bigint() - start) / n;
    if (ns < best) best = ns;
  }
  if (sink < 0) console.log(sink);
  return best;
}

const schema: Schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string' }, namespace: { type: 'string' } } },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'integer' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
};
const rules = new RuleEnvironment(schema, { resourceRoot: true });
const object = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'abc', namespace: 'default' }, spec: { replicas: 3, items: [], labels: { a: 'b' } } };

const goals: [string, boolean][] = [];
console.log('bench/cel.ts — expression language');

// 1. The typical rule, cost-tracked, against plain cel-js.
const RULE = "self.spec.replicas <= 10 && self.metadata.name.startsWith('a')";
const program = rules.env.compile(RULE);
const activation = rules.activation({ self: object });
const plainEnv = new Environment({ unlistedVariablesAreDyn: false }).registerVariable('self', 'map<string, dyn>');
const plain = plainEnv.parse(RULE);
plain.check();
const plainActivation = { self: { ...object, spec: { ...object.spec, replicas: 3n } } };
// The same rule in plain cel-js over declared object types (what our schema types compile to).
class Meta {
  name = 'abc';
  namespace = 'default';
}
class Spec {
  replicas = 3n;
}
class Self {
  metadata = new Meta();
  spec = new Spec();
}
const typedEnv = new Environment({ unlistedVariablesAreDyn: false })
  .registerType('Meta', { ctor: Meta, fields: { name: 'string', namespace: 'string' } })
  .registerType('Spec', { ctor: Spec, fields: { replicas: 'int' } })
  .registerType('Self', { ctor: Self, fields: { metadata: 'Meta', spec: 'Spec' } })
  .registerVariable('self', 'Self');
const typed = typedEnv.parse(RULE);
typed.check();
const typedActivation = { self: new Self() };
if (program.evaluate(activation, { costLimit: DEFAULT_PER_CALL_LIMIT }).value !== true || plain(plainActivation) !== true || typed(typedActivation) !== true) throw new Error('the typical rule does not hold on the bench object');
const N = 200_000;
const tracked = timeIt(N, () => program.evaluate(activation, { costLimit: DEFAULT_PER_CALL_LIMIT }).value);
const untracked = timeIt(N, () => program.evaluate(activation).value);
const celjsDyn = timeIt(N, () => plain(plainActivation));
const celjsTyped = timeIt(N, () => typed(typedActivation));
// The faster of the two is the baseline.
const celjs = Math.min(celjsDyn, celjsTyped);
const cost = program.evaluate(activation, { costLimit: DEFAULT_PER_CALL_LIMIT }).cost!;
console.log(`\n1. ${RULE}  (runtime cost ${cost})`);
row('plain cel-js, self as map<string, dyn>', `${fmt(celjsDyn)} ns`);
row('plain cel-js, self of declared object types', `${fmt(celjsTyped)} ns`);
row('ours, no cost tracking', `${fmt(untracked)} ns`, untracked / celjs);
row('ours, cost-tracked', `${fmt(tracked)} ns`, tracked / celjs);
goals.push([`cost-tracked evaluation ≤ 2× plain cel-js (${fmt(tracked / celjs, 2)}×)`, tracked / celjs <= 2]);

// 2. Compiling a 200-character rule (a fresh expression each time, so the cache never answers).
const BODY = "self.spec.replicas >= 0 && self.spec.items.all(i, i.name.startsWith('item-') && i.value < 1000) && self.metadata.name.size() <= 63 && self.spec.labels.exists(k, k == 'app') || self.spec.replicas ==";
let serial = 0;
const fresh = () => `${BODY} ${1000 + serial++}`;
console.log(`\n2. compile a ${fresh().length}-character rule`);
const compileNs = timeIt(300, () => rules.env.compile(fresh()), 5);
row('compile (parse, rewrite, type-check)', `${fmt(compileNs / 1e6, 3)} ms`);
goals.push([`compile of a 200-character rule < 1 ms (${fmt(compileNs / 1e6, 3)} ms)`, compileNs < 1e6]);

// 3. A rule over a 1,000-item list on an object.
const LIST_RULE = "self.spec.items.all(i, i.name.startsWith('item-') && i.value >= 0)";
const listProgram = rules.env.compile(LIST_RULE);
const bigObject = { ...object, spec: { ...object.spec, items: Array.from({ length: 1000 }, (_, i) => ({ name: `item-${i}`, value: i })) } };
const bigActivation = rules.activation({ self: bigObject });
const listResult = listProgram.evaluate(bigActivation, { costLimit: DEFAULT_PER_CALL_LIMIT });
if (listResult.value !== true) throw new Error('the list rule does not hold on the bench object');
console.log(`\n3. ${LIST_RULE} over 1,000 items  (runtime cost ${listResult.cost})`);
const listNs = timeIt(300, () => listProgram.evaluate(bigActivation, { costLimit: DEFAULT_PER_CALL_LIMIT }).value);
const withConversion = timeIt(100, () => listProgram.evaluate(rules.activation({ self: bigObject }), { costLimit: DEFAULT_PER_CALL_LIMIT }).value);
row('evaluate, cost-tracked', `${fmt(listNs / 1e6, 3)} ms`);
row('convert the object + evaluate', `${fmt(withConversion / 1e6, 3)} ms`);
goals.push([`1,000-item list rule < 1 ms (${fmt(listNs / 1e6, 3)} ms)`, listNs < 1e6]);

console.log('\ngoals:');
for (const [text, held] of goals) console.log(`  ${held ? 'HOLDS ' : 'MISSED'}  ${text}`);
