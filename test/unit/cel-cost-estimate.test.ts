// The static cost estimator: worst-case costs Kubernetes' compilation tests give for rules on
// schemas with and without bounds, its library cost tests' estimates, and the refusal of an
// over-budget rule with Kubernetes' message.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../src/machinery/schema.ts';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { RuleEnvironment } from '../../src/cel/schema.ts';
import { checkEstimatedCost, costErrorMessage, estimateCost } from '../../src/cel/estimate.ts';
import { maxCardinality, schemaBounds } from '../../src/cel/sizes.ts';
import { STATIC_ESTIMATED_COST_LIMIT } from '../../src/cel/cost.ts';

type Gen = (max: number | undefined) => Schema;

function scalar(type: string): Schema {
  switch (type) {
    case 'int-or-string':
      return { 'x-kubernetes-int-or-string': true };
    case 'duration':
    case 'date':
    case 'date-time':
      return { type: 'string', format: type };
    default:
      return { type: type as Schema['type'] };
  }
}
const arrayOf = (type: string): Gen => (max) => ({ type: 'array', items: scalar(type), maxItems: max });
const arrayOfArrays = (type: string): Gen => (max) => ({ type: 'array', items: { type: 'array', items: scalar(type) }, maxItems: max });
const OBJECT: Schema = { type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] };
const arrayOfObjects: Gen = (max) => ({ type: 'array', items: OBJECT, maxItems: max });
const arrayOfMaps = (type: string): Gen => (max) => ({ type: 'array', items: { type: 'object', additionalProperties: scalar(type) }, maxItems: max });
const mapOf = (type: string): Gen => (max) => ({ type: 'object', additionalProperties: scalar(type), maxProperties: max });
const mapOfItems = (item: Schema): Gen => (max) => ({ type: 'object', additionalProperties: item, maxProperties: max });
const string: Gen = (max) => ({ type: 'string', maxLength: max });
const bytes: Gen = (max) => ({ type: 'string', format: 'byte', maxLength: max });
const nested: Gen = (max) => ({ type: 'object', additionalProperties: { type: 'string', maxLength: max }, maxProperties: max });
const stringsList: Gen = (max) => ({ type: 'array', items: { type: 'string', maxLength: max }, maxItems: max });
const enumString = (...values: string[]): Gen => (max) => ({ type: 'string', maxLength: max, enum: values });
const intOrString: Gen = (max) => ({ 'x-kubernetes-int-or-string': true, maxLength: max });

/**
 * [schema, rule, worst case without bounds, the bound, worst case with it] — Kubernetes'
 * compilation cost tests (0: the figure is not checked there).
 */
const CASES: [Gen, string, number, number, number][] = [
  [arrayOf('number'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('string'), 'self.all(x, true)', 3145727, 20, 62],
  [arrayOf('boolean'), 'self.all(x, true)', 1887437, 5, 17],
  [arrayOfArrays('number'), 'self.all(x, true)', 3145727, 100, 302],
  [arrayOfObjects, 'self.all(x, true)', 555128, 50, 152],
  [mapOf('number'), 'self.all(x, true)', 1348169, 10, 32],
  [mapOf('string'), 'self.all(x, true)', 1179647, 3, 11],
  [mapOf('boolean'), 'self.all(x, true)', 943718, 100, 302],
  [string, "self.contains('test')", 314574, 10, 5],
  [string, "self.startsWith('test')", 2, 15, 2],
  [string, "self.endsWith('test')", 2, 30, 2],
  [string, 'size(self + "hello") > size("hello")', 314578, 4, 7],
  [arrayOf('number'), 'self[1] == 0.0', 2, 5000, 2],
  [arrayOf('string'), 'self[1] == self[1]', 314577, 8, 314577],
  [arrayOf('number'), 'self.all(x, self.all(y, true))', 0, 10, 352],
  [arrayOf('number'), 'self.all(x, self.all(y, self.all(z, true)))', 0, 10, 3552],
  [string, 'self.matches("x")', 314574, 50, 22],
  [string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7],
  [string, 'self.matches("")', 1, 100, 1],
  [nested, 'self.all(x, x.contains(self[x]))', 2752507, 10, 72],
  [arrayOf('number'), 'self[3] == 0.0', 2, 0, 2],
  [mapOf('number'), 'self["x"] == 0.0', 2, 0, 2],
  [string, 'self == "x"', 2, 0, 1],
  [bytes, 'self == b"x"', 2, 0, 1],
  [arrayOf('number'), 'self.all(x, x == 0.0)', 6291454, 3 * 1024 * 2048, 25165826],
  [arrayOf('int-or-string'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('int-or-string'), 'self[0] == 5', 3, 10, 3],
  [arrayOf('boolean'), 'self[0] == false', 2, 25, 2],
  [arrayOfArrays('number'), 'self[0][0] == -1.0', 3, 51, 3],
  [arrayOfMaps('number'), 'self.all(x, x.y == 25.2)', 6291452, 12, 74],
  [arrayOfMaps('number'), 'self[0].x > 2.0', 4, 3000, 4],
  [arrayOf('duration'), 'self.all(x, true)', 2359295, 5, 17],
  [arrayOf('duration'), 'self[0].getHours() == 2', 4, 525, 4],
  [arrayOf('date'), 'self.all(x, true)', 725936, 15, 47],
  [arrayOf('date'), 'self[2].getDayOfMonth() == 13', 4, 42, 4],
  [arrayOf('date-time'), 'self.all(x, true)', 428963, 25, 77],
  [arrayOf('date-time'), 'self[2].getMinutes() == 45', 4, 99, 4],
  [mapOf('int-or-string'), 'self.all(x, true)', 1348169, 15, 47],
  [mapOfItems(OBJECT), 'self.all(x, true)', 428963, 20, 62],
  [mapOfItems({ type: 'object', additionalProperties: { type: 'number' } }), 'self.all(x, true)', 1179647, 10, 32],
  [mapOfItems({ type: 'array', items: { type: 'number' } }), 'self.all(x, true)', 1179647, 25, 77],
  [mapOf('duration'), 'self.all(x, true)', 1048577, 5, 17],
  [mapOf('date'), 'self.all(x, true)', 524288, 10, 32],
  [mapOf('date-time'), 'self.all(x, true)', 349526, 25, 77],
  [string, "self.find('[0-9]+') == ''", 629147, 10, 11],
  [stringsList, "self.join(' ') == 'aa bb'", 329853068905, 10, 43],
  [stringsList, 'self.isSorted() == true', 329854432052, 10, 52],
  [(max) => ({ type: 'string', maxLength: max }), "self.lowerAscii() == 'lower!'", 314575, 10, 6],
  [mapOf('integer'), 'oldSelf.size() == self.size()', 5, 10, 5],
  [mapOf('date-time'), 'self["a"] == self["b"]', 8, 7, 8],
  [mapOf('duration'), 'self["c"] == self["d"]', 8, 42, 8],
  [enumString('A', 'B', 'C', 'LongValue'), "self.contains('A')", 2, 1000, 401],
  [intOrString, 'isQuantity(self)', 314574, 20, 9],
];

function worstCase(schema: Schema, rule: string): number {
  const env = new RuleEnvironment(schema);
  return estimateCost(env.env.compile(rule), env).max;
}

test("worst-case costs are the figures of Kubernetes' compilation tests, with and without bounds", () => {
  const wrong: string[] = [];
  for (const [gen, rule, unbounded, bound, bounded] of CASES) {
    if (unbounded !== 0) {
      const got = worstCase(gen(undefined), rule);
      if (got !== unbounded) wrong.push(`${rule} (no bounds): ${got}, Kubernetes ${unbounded}`);
    }
    const got = worstCase(gen(bound), rule);
    if (got !== bounded) wrong.push(`${rule} (bound ${bound}): ${got}, Kubernetes ${bounded}`);
  }
  assert.deepEqual(wrong, []);
});
