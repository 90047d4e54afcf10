// The fast YAML reader (js-yaml's events, our constructor) against the `yaml` library it stands in
// for: on generated texts (fast-check, fixed seed) and mutations of them, whenever the fast reader
// answers, the library reads the same value and the same repeated-key verdict (request bodies,
// YAML 1.1) or the same documents (CRD files, YAML 1.2 core); and the fast reader does answer for
// the YAML clients write, so the comparison is not vacuous.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { parseAllDocuments, stringify } from 'yaml';
import { readYamlFast, YamlAliasError, type FastReadOptions } from '../../src/machinery/yaml-read.ts';
import { parseYamlWithLibrary } from '../../src/endpoints/decode.ts';

const SEED = 20261127;
const BODY: FastReadOptions = { scalars: '1.1', multi: false, duplicates: true, maxDepth: 1001, aliasErrors: false };
const FILE: FastReadOptions = { scalars: 'core', multi: true, duplicates: false, maxDepth: 1000, aliasErrors: false };

/** Plain scalars whose reading differs between schemas, or from a string. */
const TOKENS = [
  'yes', 'no', 'Yes', 'NO', 'on', 'Off', 'y', 'n', 'Y', 'N', 'true', 'False', 'TRUE', 'null', 'Null', 'NULL', '~', '', '0', '-0', '+0', '00', '0777', '-0777',
  '0o17', '0b101', '-0b1_0', '0x1F', '0x_1', '+0x1f', '1_000', '1__0', '089', '1e3', '1E+3', '1.5e-3', '.5', '-.5', '+.5', '.', '-.', 'e1', '.e1', '1.', '1._',
  '._5', '.inf', '-.Inf', '+.INF', '.nan', '.NaN', 'NaN', 'inf', '1:20', '1:20:30', '2026-01-02', '2026-01-02T03:04:05Z', '12345678901234567890', '0.1_0', '1_', '_1',
  '-', '+', '-1', '+1', '0x', '0b', '0b2', '09.5', '1e', '1e1.5', '3.14e+2', '=', 'a b', 'a#b', 'a #b', '@x', '%x', '"q"', "'q'", 'ünï', '🙂', '__proto__', 'constructor',
  'toString', '1.0', '-1.0e0', '<<', '&a', '*a', '!x', '!!str', '|', '>', '? x',
];
const token = fc.constantFrom(...TOKENS);
const scalar = fc.oneof(token, fc.string({ maxLength: 6 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.oneof(token, fc.string({ maxLength: 4 })), tie('v'), { maxKeys: 4 })),
})).v;
const style = fc.record({
  flow: fc.boolean(),
  quote: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
  indent: fc.integer({ min: 1, max: 4 }),
  indentSeq: fc.boolean(),
  crlf: fc.boolean(),
});

/** A value written as YAML by the `yaml` library in one of its styles (undefined when it cannot). */
function write(v: unknown, s: { flow: boolean; quote: string; indent: number; indentSeq: boolean; crlf: boolean }): string | undefined {
  try {
    const text = stringify(v, { defaultStringType: s.quote as 'PLAIN', indent: s.indent, indentSeq: s.indentSeq, collectionStyle: s.flow ? 'flow' : 'any' });
    return s.crlf ? text.replace(/\n/g, '\r\n') : text;
  } catch {
    return undefined;
  }
}

/** Block-style lines of keys from a small set (so keys repeat) and token values, at random indents. */
const lines = fc
  .array(fc.tuple(fc.nat(3), fc.constantFrom('a', 'b', '"a"', "'b'", '1', '"1"', '01', '1.0', 'yes', 'true', '~', 'null', '- a', '-'), token), { minLength: 1, maxLength: 12 })
  .map((ls) => ls.map(([depth, key, v]) => `${'  '.repeat(depth)}${key.startsWith('-') ? key : `${key}:`} ${v}\n`).join(''));

/** Hand-written constructs: flow pairs and keys without values, escapes, folding, chomping, comments. */
const FRAGMENTS = [
  '[a: b]', '{a, b}', '[a, b: c]', '{ ? a : b }', '[ "a": b ]', '{"a":b}', '[a, ]', '{a: }', '[a: [b]]', '{a: [b, {c: d}]}', '"\\x41\\u263A\\N\\_\\L\\P\\e\\0\\t\\/"',
  '"a\\\n  b"', "'it''s'", 'plain\n  continued', '"multi\n  line\n\n  para"', "'single\n\n  folded'", '|\n  lit\n  eral\n', '|-\n  strip\n\n', '|+\n  keep\n\n',
  '>\n  fold\n  ed\n\n  x\n', '>-\n  a\n   more\n  b\n', 'a # comment', '# only comment', 'x #', '"q" # c', '- a\n  - b', '\n  - a\n  - b', '\n  k: v\n  k2: [1, 2]',
  '&a x', '*a', '!!int 1', 'a:b', 'a :b', 'http://x:80/y', '-a', '?a', ':a', 'a?', '[]', '{}', '""', "''", '0:0', 'x: y', '- x',
];
const fragment = fc.constantFrom(...FRAGMENTS);
const fragmentLines = fc
  .array(fc.tuple(fc.nat(2), fc.constantFrom('a', 'b', 'c', '- ', '? '), fc.oneof(fragment, token)), { minLength: 1, maxLength: 8 })
  .map((ls) => ls.map(([depth, key, v]) => `${'  '.repeat(depth)}${key.endsWith(' ') ? key : `${key}: `}${v}\n`).join(''));

/** Characters that make or break YAML, for mutations. */
const edit = fc.constantFrom(' ', '\n', '\t', ':', '-', '#', '[', ']', '{', '}', ',', '"', "'", '?', '|', '>', '!', '&', '*', '%', '@', '\\', 'a', '0', '.', '\r', '\r\n', '\u00a0', '\ufeff', '---\n', '...\n', '- ', ': ', '  ', '<<: ');

function mutate(text: string, edits: [number, boolean, string][]): string {
  for (const [at, replace, c] of edits) {
    const p = text.length ? at % text.length : 0;
    text = text.slice(0, p) + c + text.slice(p + (replace ? 1 : 0));
  }
  return text;
}

function bodyProblem(text: string, options = BODY): string | undefined {
  let fast;
  try {
    fast = readYamlFast(text, options);
  } catch (e) {
    if (!(e instanceof YamlAliasError)) throw e;
    try {
      parseYamlWithLibrary(text, 'Warn');
    } catch (l) {
      return (l as Error).message === `error decoding YAML: ${e.message}` ? undefined : `${JSON.stringify(text)}: ${e.message}, the library ${(l as Error).message}`;
    }
    return `${JSON.stringify(text)}: ${e.message}, the library reads it`;
  }
  if (!fast) return undefined;
  let slow: { value: unknown; duplicate?: string };
  try {
    slow = parseYamlWithLibrary(text, 'Warn');
  } catch (e) {
    return `${JSON.stringify(text)}: the library refuses it (${(e as Error).message}), the fast reader reads ${JSON.stringify(fast.documents[0])}`;
  }
  if (!isDeepStrictEqual(fast.documents[0], slow.value)) return `${JSON.stringify(text)}: ${JSON.stringify(fast.documents[0])}, the library ${JSON.stringify(slow.value)}`;
  if (fast.repeated !== (slow.duplicate !== undefined)) return `${JSON.stringify(text)}: repeated keys ${fast.repeated}, the library ${slow.duplicate}`;
  return undefined;
}

function fileProblem(text: string): string | undefined {
  const fast = readYamlFast(text, FILE);
  if (!fast) return undefined;
  const docs = Array.from(parseAllDocuments(text, { uniqueKeys: false }));
  const error = docs.find((d) => d.errors.length);
  if (error) return `${JSON.stringify(text)}: the library refuses it (${error.errors[0]!.message})`;
  const slow = docs.map((d) => d.toJS() as unknown);
  return isDeepStrictEqual(fast.documents, slow) ? undefined : `${JSON.stringify(text)}: ${JSON.stringify(fast.documents)}, the library ${JSON.stringify(slow)}`;
}

test('request bodies: whatever the fast reader reads, the yaml library reads the same (YAML 1.1, repeated keys)', () => {
  let fast = 0;
  const count = (text: string) => {
    if (readYamlFast(text, BODY)) fast++;
  };
  fc.assert(
    fc.property(value, style, (v, s) => {
      const text = write(v, s);
      if (text === undefined) return;
      count(text);
      assert.equal(bodyProblem(text), undefined);
    }),
    { seed: SEED, numRuns: 1500 },
  );
  // Not vacuous: most of what the yaml library writes is read the fast way.
  assert.ok(fast > 750, `${fast} of 1500 read fast`);
  fc.assert(fc.property(lines, (text) => assert.equal(bodyProblem(text), undefined)), { seed: SEED, numRuns: 1500 });
  fc.assert(
    fc.property(fragmentLines, fc.array(fc.tuple(fc.nat(), fc.boolean(), edit), { maxLength: 2 }), (text, edits) => assert.equal(bodyProblem(mutate(text, edits)), undefined)),
    { seed: SEED, numRuns: 3000 },
  );
  fc.assert(
    fc.property(value, style, fc.array(fc.tuple(fc.nat(), fc.boolean(), edit), { minLength: 1, maxLength: 4 }), (v, s, edits) => {
      const text = write(v, s);
      if (text !== undefined) assert.equal(bodyProblem(mutate(text, edits)), undefined);
    }),
    { seed: SEED, numRuns: 4000 },
  );
});

/** Anchors (some redefined) of scalars, lists and maps holding values, aliases and empty lists, then aliases of them. */
const aliasDocs = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.array(fc.constantFrom('x', '[]', '*a', '*b', '*c', '{k: *a}', '[*b, x]', '[[]]', '&c y', '*a', '*b'), { maxLength: 12, size: 'max' }), fc.boolean()), { minLength: 1, maxLength: 6 }),
    fc.array(fc.constantFrom('*a', '*b', '*c', '[*a, *b]', 'x'), { maxLength: 120, size: 'max' }),
    fc.boolean(),
  )
  .map(([anchors, uses, block]) => {
    let text = 'd0: &a v\nd1: &b [v]\nd2: &c []\n';
    text += anchors.map(([name, items, scalar], i) => (scalar ? `k${i}: &${name} v${i}\n` : `k${i}: &${name} [${items.join(', ')}]\n`)).join('');
    text += block ? `z:\n${uses.map((u) => `  - ${u}\n`).join('')}` : `z: [${uses.join(', ')}]\n`;
    return text;
  });

test('aliases: the same values, and the same bound (100) with the same error, as the yaml library', () => {
  const errors = { ...BODY, aliasErrors: true };
  let refused = 0;
  let read = 0;
  fc.assert(
    fc.property(aliasDocs, (text) => {
      assert.equal(bodyProblem(text, errors), undefined);
      try {
        if (readYamlFast(text, errors)) read++;
      } catch {
        refused++;
      }
    }),
    { seed: SEED, numRuns: 3000 },
  );
  // Both outcomes are exercised.
  assert.ok(refused > 50 && read > 500, `${refused} refused, ${read} read`);
  // A billion laughs: refused at the fourth level, having built nothing larger than the text.
  let bomb = 'l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i < 30; i++) bomb += `l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]\n`;
  assert.throws(() => readYamlFast(bomb, errors), new YamlAliasError('Excessive alias count indicates a resource exhaustion attack'));
  assert.equal(readYamlFast(bomb, BODY), undefined);
  // An alias is its anchor's value itself.
  const shared = readYamlFast('a: &a {k: v}\nb: *a\n', BODY)?.documents[0] as { a: unknown; b: unknown };
  assert.equal(shared.a, shared.b);
});

test('CRD files: whatever the fast reader reads, the yaml library reads the same documents (YAML 1.2 core)', () => {
  const docs = fc.array(fc.tuple(value, style), { minLength: 1, maxLength: 3 }).map((ds) => ds.map(([v, s]) => write(v, { ...s, crlf: false }) ?? '').join('---\n'));
  fc.assert(fc.property(docs, (text) => assert.equal(fileProblem(text), undefined)), { seed: SEED, numRuns: 1000 });
  fc.assert(
    fc.property(docs, fc.array(fc.tuple(fc.nat(), fc.boolean(), edit), { minLength: 1, maxLength: 4 }), (text, edits) => assert.equal(fileProblem(mutate(text, edits)), undefined)),
    { seed: SEED, numRuns: 2000 },
  );
});

test('YAML 1.1 plain scalars as kube-apiserver reads them, and repeated keys', () => {
  const text =
    'a: yes\nb: Off\nc: 0777\nd: 0x1F\ne: 1_000\nf: .5\ng: 1e3\nh: ~\ni: 1:20\nj: 2026-01-02\nk: e1\nl: 0b101\nm: +12\nnn: 089\no: "yes"\np: 0o17\nq: -.inf\nr:\n' +
    '1: one\ntrue: t\n~: nothing\n';
  const got = readYamlFast(text, BODY);
  assert.ok(got);
  assert.deepEqual(got.documents[0], {
    a: true, b: false, c: 511, d: 31, e: 1000, f: 0.5, g: 1000, h: null, i: '1:20', j: '2026-01-02', k: 'e1', l: 5, m: 12, nn: 89, o: 'yes', p: '0o17', q: -Infinity, r: null,
    1: 'one', true: 't', '': 'nothing',
  });
  assert.equal(got.repeated, false);
  assert.equal(readYamlFast('a: 1\nb:\n  c: 1\n  c: 2\n', BODY)?.repeated, true);
  // 1 and "1" are different keys (the later one names the same property), as the library compares them.
  assert.deepEqual(readYamlFast('1: a\n"1": b\n', BODY), { documents: [{ 1: 'b' }], repeated: false });
  // Windows line ends.
  assert.deepEqual(readYamlFast('a: 1\r\nb:\r\n  - x\r\n', BODY)?.documents, [{ a: 1, b: ['x'] }]);
  // YAML 1.2 core for files: yes is a string, 0777 a decimal, 0o17 an octal.
  assert.deepEqual(readYamlFast('a: yes\nc: 0777\np: 0o17\n---\nb: 1\n', FILE)?.documents, [{ a: 'yes', c: 777, p: 15 }, { b: 1 }]);
});

test('a quoted value folded over lines, a line of it starting with `: ` (as generated CRDs write long rules): read the fast way, as the library reads it', () => {
  const text = "rules:\n- rule: 'self.all(p, p.kind\n    == \"\"\n    : true)'\n  message: \"one\n    : two\"\n";
  const fast = readYamlFast(text, FILE);
  assert.ok(fast, 'read the fast way');
  assert.deepEqual(fast.documents, [{ rules: [{ rule: 'self.all(p, p.kind == "" : true)', message: 'one : two' }] }]);
  assert.equal(fileProblem(text), undefined);
  // Outside a quoted value, or in a quoted key, such a line is still the library's.
  for (const t of ["a: 'x'\n: b\n", "a: 'x\n  : y'\nb:\n- 1\n- : 2\n", "\"k\n  : j\": v\n"]) assert.equal(readYamlFast(t, FILE), undefined, JSON.stringify(t));
});

test('what the fast reader leaves to the yaml library', () => {
  for (const text of [
    'a: !!str 1\n', 'a: !foo x\n', 'a: *x\n', 'a: &x [*x]\n', '*x : 1\n', 'base: &b {x: 1}\nc:\n  <<: *b\n', '%YAML 1.1\n---\na: 1\n', '? [a]\n: b\n', 'a: 1\n---\nb: 2\n', 'a: [1\n',
    'a: b\rc: d\n', '\ta: 1\n', '\ufeffa: 1\n', '...\na: 1\n', ': a\n',
    // A block mapping that follows its key on the same line (js-yaml reads it; the library refuses it).
    'a: &x b: 1\n', '  a: &a x     a: {}\n  a: [a, ]\n',
  ]) assert.equal(readYamlFast(text, BODY), undefined, JSON.stringify(text));
  assert.throws(() => parseYamlWithLibrary('a: &x b: 1\n', 'Warn'), /Nested mappings are not allowed in compact mappings/);
});
