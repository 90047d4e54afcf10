import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  escapeFieldValue,
  labelSelectorFromObject,
  parseFieldSelector,
  lex,
  newRequirement,
  parseLabelSelector,
  SelectorParseError,
  type LabelOperator,
  type TokenKind,
  validateFieldSelectorFields,
  type LabelSelectorObject,
} from '../../src/machinery/selectors.ts';

/** Runs fn and returns the SelectorParseError it throws; fails on success or any other error. */
function parseError(fn: () => unknown): SelectorParseError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SelectorParseError, `expected SelectorParseError, got ${String(e)}`);
    assert.ok(e instanceof Error);
    return e;
  }
  assert.fail('expected a SelectorParseError');
}

/** A deterministic PRNG so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const QNAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('parseLabelSelector: canonical form', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['   \t\r\n ', ''],
    ['x', 'x'],
    ['!x', '!x'],
    [' ! x ', '!x'],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['x=', 'x='],
    ['x==,y', 'x==,y'],
    ['  x  ==  a  ', 'x==a'],
    ['x in (b,a,a)', 'x in (a,b)'],
    ['x in(a)', 'x in (a)'],
    ['x notin ( a , b )', 'x notin (a,b)'],
    ['x in ()', 'x in ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x in (,)', 'x in ()'],
    ['x>1', 'x>1'],
    ['x < 20', 'x<20'],
    ['x>007', 'x>007'],
    ['in in (in,notin)', 'in in (in,notin)'],
    ['notin', 'notin'],
    ['x=in', 'x=in'],
    ['x=a,y in (c,b),!z,w', 'w,x=a,y in (b,c),!z'],
    ['b=1,a=2,b!=3', 'a=2,b=1,b!=3'],
    ['example.com/app-name=my_value.1', 'example.com/app-name=my_value.1'],
    ['A.b_c-D=Z', 'A.b_c-D=Z'],
    [`${'k'.repeat(63)}=${'v'.repeat(63)}`, `${'k'.repeat(63)}=${'v'.repeat(63)}`],
    [`${'a'.repeat(253)}/n`, `${'a'.repeat(253)}/n`],
  ];
  for (const [input, want] of cases) {
    it(JSON.stringify(input.length > 60 ? `${input.slice(0, 60)}…` : input), () => {
      const sel = parseLabelSelector(input);
      assert.equal(sel.toString(), want);
      assert.equal(String(sel), want);
      assert.equal(sel.empty, want === '');
      // The canonical form is a fixed point of parsing.
      assert.equal(parseLabelSelector(want).toString(), want);
    });
  }

  it('exposes requirements with Kubernetes operator names', () => {
    const sel = parseLabelSelector('a=1,b==2,c!=3,d in (x),e notin (y),f,!g,h>4,i<5');
    assert.deepEqual(
      sel.requirements.map((r) => [r.key, r.operator, [...r.values]]),
      [
        ['a', '=', ['1']],
        ['b', '==', ['2']],
        ['c', '!=', ['3']],
        ['d', 'in', ['x']],
        ['e', 'notin', ['y']],
        ['f', 'exists', []],
        ['g', '!', []],
        ['h', 'gt', ['4']],
        ['i', 'lt', ['5']],
      ],
    );
  });
});

describe('parseLabelSelector: matching', () => {
  const labels = { app: 'web', tier: 'front', n: '10', neg: '-3', big: '9223372036854775807', word: 'abc', empty: '' };
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', undefined, true],
    ['', {}, true],
    ['app', labels, true],
    ['nope', labels, false],
    ['!nope', labels, true],
    ['!app', labels, false],
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app=db', labels, false],
    ['nope=web', labels, false],
    ['app!=web', labels, false],
    ['app!=db', labels, true],
    ['nope!=db', labels, true],
    ['empty=', labels, true],
    ['nope=', labels, false],
    ['app in (db,web)', labels, true],
    ['app in (db)', labels, false],
    ['nope in (db)', labels, false],
    ['app notin (db)', labels, true],
    ['app notin (web)', labels, false],
    ['nope notin (web)', labels, true],
    ['empty in ()', labels, true],
    ['n>9', labels, true],
    ['n>10', labels, false],
    ['n<11', labels, true],
    ['n<10', labels, false],
    ['neg<0', labels, true],
    ['big>9223372036854775806', labels, true],
    ['word>0', labels, false],
    ['word<0', labels, false],
    ['nope>0', labels, false],
    ['app=web,tier=front', labels, true],
    ['app=web,tier=back', labels, false],
    ['app=web,app!=web', labels, false],
    ['app', undefined, false],
    ['!app', undefined, true],
    // Only own properties count as labels.
    ['constructor', {}, false],
    ['!toString', {}, true],
    ['constructor=x', { constructor: 'x' }, true],
  ];
  for (const [sel, ls, want] of cases) {
    it(`${JSON.stringify(sel)} on ${JSON.stringify(ls)} → ${want}`, () => {
      assert.equal(parseLabelSelector(sel).matches(ls), want);
    });
  }
});

describe('parseLabelSelector: invalid input', () => {
  const cases: [string, string | RegExp][] = [
    [',', "found ',', expected: !, identifier, or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['(', "found '(', expected: !, identifier, or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['a,,b', "found ',', expected: identifier after ','"],
    ['a,=b', "found '=', expected: identifier after ','"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x in (a) b', "found 'b', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x=a=b', "found '=', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!x', "unable to parse requirement: found '!', expected: identifier"],
    ['x foo', 'unable to parse requirement: found \'foo\', expected: in, notin, =, ==, !=, gt, lt'],
    ['x !', 'unable to parse requirement: found \'!\', expected: in, notin, =, ==, !=, gt, lt'],
    ['x (a)', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ['x in', "unable to parse requirement: found '' expected: '('"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in =', "unable to parse requirement: found '=' expected: '('"],
    ['x in (=', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['x in (', "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (a,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['x=(', "unable to parse requirement: found '(', expected: identifier"],
    ['x!==a', "unable to parse requirement: found '=', expected: identifier"],
    ['x>', 'unable to parse requirement: values[0]: Invalid value: "": for \'Gt\', \'Lt\' operators, the value must be an integer'],
    ['x>abc', 'unable to parse requirement: values[0]: Invalid value: "abc": for \'Gt\', \'Lt\' operators, the value must be an integer'],
    ['x<1.5', 'unable to parse requirement: values[0]: Invalid value: "1.5": for \'Gt\', \'Lt\' operators, the value must be an integer'],
    ['x>9223372036854775808', /values\[0\]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer$/],
    ['x>-1', `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_RULE}`],
    ['x=a@b', `unable to parse requirement: values[0][x]: Invalid value: "a@b": ${VALUE_RULE}`],
    ['x in (ok,-bad)', `unable to parse requirement: values[0][x]: Invalid value: "-bad": ${VALUE_RULE}`],
    ['x=-a', `unable to parse requirement: values[0][x]: Invalid value: "-a": ${VALUE_RULE}`],
    [`x=${'v'.repeat(64)}`, `unable to parse requirement: values[0][x]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`],
    ['a/b/c', `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${QNAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    ['-x', `unable to parse requirement: <nil>: Invalid value: "-x": name part ${QNAME_RULE}`],
    ['x.', `unable to parse requirement: <nil>: Invalid value: "x.": name part ${QNAME_RULE}`],
    ['a/', `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; name part ${QNAME_RULE}`],
    ['/a', 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'],
    ['Example.com/a', /<nil>: Invalid value: "Example.com\/a": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters/],
    ['a..b/c', /prefix part a lowercase RFC 1123 subdomain/],
    [`${'a'.repeat(254)}/n`, /prefix part must be no more than 253 characters$/],
    [`${'k'.repeat(64)}`, `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`],
    ['x\u0000', /<nil>: Invalid value: "x\\u0000": name part/],
    ['x=a\u0000 b', /values\[0\]\[x\]: Invalid value: "a\\u0000"/],
    ['ключ', /<nil>: Invalid value: "ключ"/],
    ['x\fy', /<nil>: Invalid value: "x\\fy"/],
  ];
  for (const [input, want] of cases) {
    it(JSON.stringify(input.length > 60 ? `${input.slice(0, 60)}…` : input), () => {
      const err = parseError(() => parseLabelSelector(input));
      if (typeof want === 'string') assert.equal(err.message, want);
      else assert.match(err.message, want);
      assert.equal(err.name, 'SelectorParseError');
    });
  }
});

describe('labelSelectorFromObject', () => {
  it('combines matchLabels and matchExpressions, sorted by key', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { b: '2', a: '1' },
      matchExpressions: [
        { key: 'c', operator: 'In', values: ['y', 'x'] },
        { key: 'd', operator: 'NotIn', values: ['z'] },
        { key: 'e', operator: 'Exists' },
        { key: 'f', operator: 'DoesNotExist', values: [] },
      ],
    });
    assert.equal(sel.toString(), 'a=1,b=2,c in (x,y),d notin (z),e,!f');
    assert.equal(sel.empty, false);
    assert.equal(sel.matches({ a: '1', b: '2', c: 'x', e: '' }), true);
    assert.equal(sel.matches({ a: '1', b: '2', c: 'x', d: 'z', e: '' }), false);
    assert.equal(sel.matches({ a: '1', b: '2', c: 'x', e: '', f: '' }), false);
    assert.equal(sel.matches({ a: '1', b: '2', c: 'w', e: '' }), false);
    assert.equal(sel.matches(undefined), false);
  });

  it('an object without terms selects everything; null selects nothing', () => {
    for (const empty of [{}, { matchLabels: {} }, { matchExpressions: [] }]) {
      const sel = labelSelectorFromObject(empty);
      assert.equal(sel.empty, true);
      assert.equal(sel.matches({ any: 'thing' }), true);
      assert.equal(sel.toString(), '');
    }
    for (const nothing of [null, undefined]) {
      const sel = labelSelectorFromObject(nothing);
      assert.equal(sel.empty, false);
      assert.equal(sel.matches({}), false);
      assert.equal(sel.toString(), '');
    }
  });

  const invalid: [LabelSelectorObject, string | RegExp][] = [
    [{ matchExpressions: [{ key: 'a', operator: 'In' }] }, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'],
    [{ matchExpressions: [{ key: 'a', operator: 'Gt' as 'In', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'toString' as 'In', values: ['1'] }] }, '"toString" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'b@d'] }] }, `values[1][a]: Invalid value: "b@d": ${VALUE_RULE}`],
    [{ matchLabels: { 'bad key': 'v' } }, `key: Invalid value: "bad key": name part ${QNAME_RULE}`],
    [{ matchLabels: { k: 'bad value' } }, `values[0][k]: Invalid value: "bad value": ${VALUE_RULE}`],
    [
      { matchExpressions: [{ key: '', operator: 'In' }] },
      `[key: Invalid value: "": name part must be non-empty; name part ${QNAME_RULE}, values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty]`,
    ],
  ];
  for (const [obj, want] of invalid) {
    it(`rejects ${JSON.stringify(obj)}`, () => {
      const err = parseError(() => labelSelectorFromObject(obj));
      if (typeof want === 'string') assert.equal(err.message, want);
      else assert.match(err.message, want);
    });
  }
});

describe('parseFieldSelector', () => {
  const cases: [string, [string, '=' | '!=', string][], string][] = [
    ['', [], ''],
    [',', [], ''],
    ['=', [], ''],
    ['!=,==', [], ''],
    ['metadata.name=foo', [['metadata.name', '=', 'foo']], 'metadata.name=foo'],
    ['metadata.name==foo', [['metadata.name', '=', 'foo']], 'metadata.name=foo'],
    ['status.phase!=Running', [['status.phase', '!=', 'Running']], 'status.phase!=Running'],
    ['spec.nodeName=', [['spec.nodeName', '=', '']], 'spec.nodeName='],
    ['=v', [['', '=', 'v']], '=v'],
    [
      'status.phase!=Running,metadata.name=foo',
      [
        ['metadata.name', '=', 'foo'],
        ['status.phase', '!=', 'Running'],
      ],
      'metadata.name=foo,status.phase!=Running',
    ],
    ['a=x\\,y\\=z\\\\w', [['a', '=', 'x,y=z\\w']], 'a=x\\,y\\=z\\\\w'],
    ['a=\\,,b=c', [['a', '=', ','], ['b', '=', 'c']], 'a=\\,,b=c'],
    ['a!b=c', [['a!b', '=', 'c']], 'a!b=c'],
    [' a = b ', [[' a ', '=', ' b ']], ' a = b '],
    ['a=ü', [['a', '=', 'ü']], 'a=ü'],
  ];
  for (const [input, reqs, str] of cases) {
    it(JSON.stringify(input), () => {
      const sel = parseFieldSelector(input);
      assert.deepEqual(
        sel.requirements.map((r) => [r.field, r.op, r.value]),
        reqs,
      );
      assert.equal(sel.empty, reqs.length === 0);
      assert.equal(sel.toString(), str);
      assert.deepEqual(parseFieldSelector(str).requirements, sel.requirements);
    });
  }

  it('matches, treating a missing field as ""', () => {
    const fields = { 'metadata.name': 'foo', 'metadata.namespace': 'ns', 'spec.nodeName': '' };
    const table: [string, boolean][] = [
      ['', true],
      ['metadata.name=foo', true],
      ['metadata.name==foo', true],
      ['metadata.name=bar', false],
      ['metadata.name!=bar', true],
      ['metadata.name!=foo', false],
      ['metadata.name=foo,metadata.namespace=ns', true],
      ['metadata.name=foo,metadata.namespace!=ns', false],
      ['spec.nodeName=', true],
      ['status.phase=', true],
      ['status.phase!=', false],
      ['status.phase=Running', false],
      ['constructor=', true],
    ];
    for (const [sel, want] of table) assert.equal(parseFieldSelector(sel).matches(fields), want, sel);
  });

  it('requiresExactMatch returns the pinned value of an = term only', () => {
    const sel = parseFieldSelector('metadata.name==foo,metadata.namespace!=kube-system,spec.x=');
    assert.equal(sel.requiresExactMatch('metadata.name'), 'foo');
    assert.equal(sel.requiresExactMatch('metadata.namespace'), undefined);
    assert.equal(sel.requiresExactMatch('spec.x'), '');
    assert.equal(sel.requiresExactMatch('other'), undefined);
    assert.equal(parseFieldSelector('').requiresExactMatch('metadata.name'), undefined);
  });

  const invalid: [string, string][] = [
    ['abc', "invalid selector: 'abc'; can't understand 'abc'"],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a<b', "invalid selector: 'a<b'; can't understand 'a<b'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a!=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b\\c', 'invalid field selector: invalid escape sequence: \\c'],
    ['a==\\n', 'invalid field selector: invalid escape sequence: \\n'],
  ];
  for (const [input, want] of invalid) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.equal(parseError(() => parseFieldSelector(input)).message, want);
    });
  }

  it('escapeFieldValue round-trips through the parser', () => {
    for (const v of ['', 'plain', 'a,b', 'a=b', 'back\\slash', '\\,=\\\\==,,']) {
      assert.equal(parseFieldSelector(`f=${escapeFieldValue(v)}`).requiresExactMatch('f'), v);
    }
  });

  it('validateFieldSelectorFields rejects fields outside the allowed list', () => {
    const allowed = ['metadata.name', 'metadata.namespace'] as const;
    validateFieldSelectorFields(parseFieldSelector(''), allowed);
    validateFieldSelectorFields(parseFieldSelector('metadata.name=a,metadata.namespace!=b'), allowed);
    const err = parseError(() => validateFieldSelectorFields(parseFieldSelector('metadata.name=a,spec.nodeName=n'), allowed));
    assert.equal(err.message, 'field label not supported: spec.nodeName');
  });
});

describe('robustness', () => {
  const big = 100_000;
  const alphabet = 'abcXYZ019-_./=!(),<> \t\\@in';
  const r = rng(42);
  const random = Array.from({ length: big }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
  const inputs: [string, string][] = [
    ['random', random],
    ['one long identifier', 'a'.repeat(big)],
    ['long identifier ending badly', `${'a'.repeat(big)}-`],
    ['long prefix', `${'a.'.repeat(big / 2)}/x`],
    ['long prefix ending badly', `${'a-'.repeat(big / 2)}/x`],
    ['open parens', '('.repeat(big)],
    ['bangs', '!'.repeat(big)],
    ['commas', ','.repeat(big)],
    ['equals', '='.repeat(big)],
    ['backslashes', '\\'.repeat(big)],
    ['huge value set', `x in (${'b,'.repeat(big / 2)})`],
    ['many distinct values', `x in (${Array.from({ length: 10_000 }, (_, i) => `v${i}`).join(',')})`],
    ['many requirements', Array.from({ length: 10_000 }, (_, i) => `k${i}=v`).join(',')],
    ['long value', `x=${'v'.repeat(big)}`],
    ['long number', `x>${'9'.repeat(big)}`],
    ['long field selector', `a=${'b'.repeat(big)}`],
    ['many field terms', 'a=b,'.repeat(big / 4)],
  ];
  for (const [name, input] of inputs) {
    it(`returns or throws SelectorParseError quickly: ${name}`, () => {
      for (const parse of [parseLabelSelector, parseFieldSelector]) {
        const start = performance.now();
        try {
          parse(input);
        } catch (e) {
          assert.ok(e instanceof SelectorParseError, `${name}: ${String(e)}`);
        }
        const ms = performance.now() - start;
        assert.ok(ms < 1000, `${name} took ${ms.toFixed(0)} ms`);
      }
    });
  }

  it('Gt/Lt against huge label values neither throws nor hangs', () => {
    const sel = parseLabelSelector('x>1');
    assert.equal(sel.matches({ x: '9'.repeat(big) }), false);
    assert.equal(sel.matches({ x: `+${'0'.repeat(big)}2` }), true);
  });

  it('short random inputs: only SelectorParseError, and canonical forms re-parse to themselves', () => {
    const rand = rng(7);
    const pieces = ['a', 'b', 'k/x', 'ex.com/k', 'in', 'notin', ' ', '=', '==', '!=', '!', '(', ')', ',', '>', '<', '1', '-', '', '\\', '@'];
    for (let i = 0; i < 20_000; i++) {
      const n = 1 + Math.floor(rand() * 8);
      const text = Array.from({ length: n }, () => pieces[Math.floor(rand() * pieces.length)]).join('');
      for (const parse of [parseLabelSelector, parseFieldSelector]) {
        let canonical: string;
        try {
          canonical = parse(text).toString();
        } catch (e) {
          assert.ok(e instanceof SelectorParseError, `${JSON.stringify(text)}: ${String(e)}`);
          continue;
        }
        assert.equal(parse(canonical).toString(), canonical, JSON.stringify(text));
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Kubernetes' own tables (k8s.io/apimachinery pkg/labels/selector_test.go and
// pkg/fields/selector_test.go), case for case: the valid ones must parse to the same meaning, the
// invalid ones must fail.

type Req = [key: string, op: string, values: string[]];
const meaning = (sel: { requirements: readonly { key: string; operator: string; values: readonly string[] }[] }): Req[] =>
  sel.requirements.map((r) => [r.key, r.operator, [...r.values].sort()] as Req).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

describe("Kubernetes' labels TestSelectorParse", () => {
  for (const good of ['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=', 'x= ', 'x=,z= ', 'x= ,z= ', '!x', 'x>1', 'x>1,z<5']) {
    it(`parses and re-strings ${JSON.stringify(good)}`, () => assert.equal(parseLabelSelector(good).toString(), good.replace(/ /g, '')));
  }
  for (const bad of ['x=a||y=b', 'x==a==b', '!x=a', 'x<a']) {
    it(`refuses ${JSON.stringify(bad)}`, () => void parseError(() => parseLabelSelector(bad)));
  }
});

describe("Kubernetes' labels TestSetSelectorParser", () => {
  // [input, requirements (undefined: not compared), Kubernetes compares the order too, valid]
  const table: [string, Req[] | undefined, boolean, boolean][] = [
  ["", [], true, true],
  ["\rx", [["x", 'exists', []]], true, true],
  ["this-is-a-dns.domain.com/key-with-dash", [["this-is-a-dns.domain.com/key-with-dash", 'exists', []]], true, true],
  ["this-is-another-dns.domain.com/key-with-dash in (so,what)", [["this-is-another-dns.domain.com/key-with-dash", 'in', ["so", "what"]]], true, true],
  ["0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", [["0.1.2.domain/99", 'notin', ["10.10.100.1", "tick.tack.clock"]]], true, true],
  ["foo  in\t (abc)", [["foo", 'in', ["abc"]]], true, true],
  ["x notin\n (abc)", [["x", 'notin', ["abc"]]], true, true],
  ["x  notin\t\t\t(abc,def)", [["x", 'notin', ["abc", "def"]]], true, true],
  ["x in (abc,def)", [["x", 'in', ["abc", "def"]]], true, true],
  ["x in (abc,)", [["x", 'in', ["", "abc"]]], true, true],
  ["x in (abc,abc)", [["x", 'in', ["abc"]]], true, true],
  ["x in ()", [["x", 'in', [""]]], true, true],
  ["x in (a,,)", [["x", 'in', ["", "a"]]], true, true],
  ["x in (a,,,)", [["x", 'in', ["", "a"]]], true, true],
  ["x in (a,,,,,,)", [["x", 'in', ["", "a"]]], true, true],
  ["x in (a,,a,,a,,a,,)", [["x", 'in', ["", "a"]]], true, true],
  ["x notin (abc,,def),bar,z in (),w", [["bar", 'exists', []], ["w", 'exists', []], ["x", 'notin', ["", "abc", "def"]], ["z", 'in', [""]]], true, true],
  ["x,y in (a)", [["y", 'in', ["a"]], ["x", 'exists', []]], false, true],
  ["x=a", [["x", '=', ["a"]]], true, true],
  ["x>1", [["x", 'gt', ["1"]]], true, true],
  ["x<7", [["x", 'lt', ["7"]]], true, true],
  ["x=a,y!=b", [["x", '=', ["a"]], ["y", '!=', ["b"]]], true, true],
  ["x=a,y!=b,z in (h,i,j)", [["x", '=', ["a"]], ["y", '!=', ["b"]], ["z", 'in', ["h", "i", "j"]]], true, true],
  ["x=a||y=b", [], false, false],
  ["x,,y", undefined, true, false],
  [",x,y", undefined, true, false],
  ["x nott in (y)", undefined, true, false],
  ["x notin ( )", [["x", 'notin', [""]]], true, true],
  ["x notin (, a)", [["x", 'notin', ["", "a"]]], true, true],
  ["a in (xyz),", undefined, true, false],
  ["a in (xyz)b notin ()", undefined, true, false],
  ["a ", [["a", 'exists', []]], true, true],
  ["a in (x,y,notin, z,in)", [["a", 'in', ["in", "notin", "x", "y", "z"]]], true, true],
  ["a in (xyz abc)", undefined, false, false],
  ["a notin(", undefined, true, false],
  ["a (", undefined, false, false],
  ["(", undefined, false, false],
  ];
  for (const [input, want, , valid] of table) {
    it(`${valid ? 'parses' : 'refuses'} ${JSON.stringify(input)}`, () => {
      if (!valid) return void parseError(() => parseLabelSelector(input));
      const got = meaning(parseLabelSelector(input));
      if (want) assert.deepEqual(got, [...want].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
    });
  }
});

describe("Kubernetes' labels TestLexer", () => {
  const table: [string, TokenKind][] = [
    ['', 'end'],
    [',', ','],
    ['notin', 'notin'],
    ['in', 'in'],
    ['=', '='],
    ['==', '=='],
    ['>', '>'],
    ['<', '<'],
    ['!', '!'],
    ['!=', '!='],
    ['(', '('],
    [')', ')'],
    ['~', 'ident'],
    ['||', 'ident'],
  ];
  for (const [input, kind] of table) {
    it(`${JSON.stringify(input)} is ${kind}`, () => {
      const [first] = lex(input);
      assert.equal(first?.kind, kind);
      assert.equal(first?.lit, input);
    });
  }
  it('TestLexerSequence', () => {
    const seq: [string, TokenKind[]][] = [
      ['key in ( value )', ['ident', 'in', '(', 'ident', ')']],
      ['key notin ( value )', ['ident', 'notin', '(', 'ident', ')']],
      ['key in ( value1, value2 )', ['ident', 'in', '(', 'ident', ',', 'ident', ')']],
      ['key', ['ident']],
      ['!key', ['!', 'ident']],
      ['()', ['(', ')']],
      ['x in (),y', ['ident', 'in', '(', ')', ',', 'ident']],
      ['== != (), = notin', ['==', '!=', '(', ')', ',', '=', 'notin']],
      ['key>2', ['ident', '>', 'ident']],
      ['key<1', ['ident', '<', 'ident']],
    ];
    for (const [input, kinds] of seq) assert.deepEqual(lex(input).map((t) => t.kind), [...kinds, 'end'], input);
  });
});

describe("Kubernetes' labels TestRequirementConstructor", () => {
  // [key, operator, values, the field of the (only) error, or undefined when valid]
  const table: [string, LabelOperator, string[], string | undefined][] = [
    ['x1', 'in', [], 'values'],
    ['x2', 'notin', [], 'values'],
    ['x3', 'in', ['foo'], undefined],
    ['x4', 'notin', ['foo'], undefined],
    ['x5', '=', ['bar', 'foo'], 'values'],
    ['x6', 'exists', [], undefined],
    ['x7', '!', [], undefined],
    ['x8', 'exists', ['foo'], 'values'],
    ['x9', 'in', ['bar'], undefined],
    ['x10', 'in', ['bar'], undefined],
    ['x11', 'gt', ['1'], undefined],
    ['x12', 'lt', ['6'], undefined],
    ['x13', 'gt', [], 'values'],
    ['x14', 'gt', ['bar'], 'values[0]'],
    ['x15', 'lt', ['bar'], 'values[0]'],
    ['a'.repeat(254), 'exists', [], 'key'],
    ['x16', '=', ['a'.repeat(254)], 'values[0][x16]'],
    ['x17', '=', ['a b'], 'values[0][x17]'],
  ];
  for (const [key, op, values, field] of table) {
    it(`${key.length > 20 ? `${key.slice(0, 5)}…(${key.length})` : key} ${op} ${JSON.stringify(values)}`, () => {
      if (field === undefined) return void assert.deepEqual(newRequirement(key, op, values), { key, operator: op, values });
      const err = parseError(() => newRequirement(key, op, values));
      assert.ok(err.message.startsWith(`${field}: Invalid value: `), err.message);
    });
  }
  it("x1 In with no values: Kubernetes' message", () => {
    assert.equal(parseError(() => newRequirement('x1', 'in', [])).message, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty");
  });
});

describe("Kubernetes' labels TestToString (through a parse round trip)", () => {
  for (const s of ['x in (abc,def),y notin (jkl),z', 'x notin (abc,def),y!=jkl,!z', 'x notin (abc),y in (jkl,mno),z notin ()', 'x=abc,y==jkl,z!=a,z', 'x>2,y<8,z']) {
    it(s, () => assert.equal(parseLabelSelector(s).toString(), s));
  }
  it('a trailing comma is no selector', () => void parseError(() => parseLabelSelector('x in (abc,def),')));
});

describe("Kubernetes' labels TestSelectorMatches", () => {
  const yes: [string, Record<string, string>][] = [
    ['', { x: 'y' }], ['x=y', { x: 'y' }], ['x=y,z=w', { x: 'y', z: 'w' }], ['x!=y,z!=w', { x: 'z', z: 'a' }], ['notin=in', { notin: 'in' }],
    ['x', { x: 'z' }], ['!x', { y: 'z' }], ['x>1', { x: '2' }], ['x<1', { x: '0' }],
    ['foo=bar', { foo: 'bar', baz: 'blah' }], ['baz=blah', { foo: 'bar', baz: 'blah' }], ['foo=bar,baz=blah', { foo: 'bar', baz: 'blah' }],
  ];
  const no: [string, Record<string, string>][] = [
    ['x=z', {}], ['x=y', { x: 'z' }], ['x=y,z=w', { x: 'w', z: 'w' }], ['x!=y,z!=w', { x: 'z', z: 'w' }], ['x', { y: 'z' }], ['!x', { x: 'z' }],
    ['x>1', { x: '0' }], ['x<1', { x: '2' }], ['foo=blah', { foo: 'bar', baz: 'blah' }], ['baz=bar', { foo: 'bar', baz: 'blah' }], ['foo=bar,foobar=bar,baz=blah', { foo: 'bar', baz: 'blah' }],
  ];
  for (const [sel, labels] of yes) it(`${sel} matches ${JSON.stringify(labels)}`, () => assert.equal(parseLabelSelector(sel).matches(labels), true));
  for (const [sel, labels] of no) it(`${sel} does not match ${JSON.stringify(labels)}`, () => assert.equal(parseLabelSelector(sel).matches(labels), false));
});

describe("Kubernetes' fields tables", () => {
  // Go's raw strings, written with escaped backslashes: '\\' is one backslash.
  it('TestSelectorParse: good strings re-string to themselves', () => {
    for (const good of ['x=a,y=b,z=c', '', 'x!=a,y=b', 'x=a||y\\=b', 'x=a\\=\\=b']) assert.equal(parseFieldSelector(good).toString(), good, good);
  });
  for (const bad of ['x=a||y=b', 'x==a==b', 'x=a,b', 'x in (a)', 'x in (a,b,c)', 'x']) {
    it(`TestSelectorParse refuses ${JSON.stringify(bad)}`, () => void parseError(() => parseFieldSelector(bad)));
  }
  it('TestDeterministicParse', () => assert.equal(parseFieldSelector('x=a,a=x').toString(), parseFieldSelector('a=x,x=a').toString()));
  it('TestEscapeValue', () => {
    const table: [string, string][] = [
      ['', ''],
      ['a', 'a'],
      ['=', '\\='],
      [',', '\\,'],
      ['\\', '\\\\'],
      ['\\=\\,\\', '\\\\\\=\\\\\\,\\\\'],
    ];
    for (const [raw, escaped] of table) {
      assert.equal(escapeFieldValue(raw), escaped, raw);
      assert.equal(parseFieldSelector(`k=${escaped}`).requiresExactMatch('k'), raw, escaped);
    }
    for (const invalid of ['\\', '\\\\\\', '\\a']) parseError(() => parseFieldSelector(`k=${invalid}`));
  });
  it('TestSplitTerms and TestSplitTerm, through parsing', () => {
    // Order aside: both sort their terms, by slightly different texts.
    const reqs = (s: string) => parseFieldSelector(s).requirements.map((r) => [r.field, r.op, r.value]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
    assert.deepEqual(reqs('k=\\,,k2=v2'), [['k', '=', ','], ['k2', '=', 'v2']]);
    assert.deepEqual(reqs('k=\\\\,k2=v2'), [['k', '=', '\\'], ['k2', '=', 'v2']]);
    assert.deepEqual(reqs('k=\\\\\\,,k2=v2'), [['k', '=', '\\,'], ['k2', '=', 'v2']]);
    assert.deepEqual(reqs('함=수,목=록'), [['목', '=', '록'], ['함', '=', '수']]);
    assert.deepEqual(reqs('a=avalue,b==bvalue,c!=cvalue'), [['a', '=', 'avalue'], ['b', '=', 'bvalue'], ['c', '!=', 'cvalue']]);
    assert.deepEqual(reqs('a=a,'), [['a', '=', 'a']]);
    assert.deepEqual(reqs(',a=a'), [['a', '=', 'a']]);
    assert.deepEqual(reqs('k=\\='), [['k', '=', '=']]);
    // Non-escape sequences and an orphan backslash split as terms but are not valid values.
    for (const bad of ['k=\\a\\b\\', 'k=\\', 'a', 'k=\\\\\\a\\b\\=\\,\\']) parseError(() => parseFieldSelector(bad));
  });
  it('TestSelectorMatches', () => {
    const fieldset = { foo: 'bar', baz: 'blah', complex: '=value\\,\\' };
    const yes: [string, Record<string, string>][] = [
      ['', { x: 'y' }],
      ['x=y', { x: 'y' }],
      ['x=y,z=w', { x: 'y', z: 'w' }],
      ['x!=y,z!=w', { x: 'z', z: 'a' }],
      ['notin=in', { notin: 'in' }],
      ['foo=bar', fieldset],
      ['baz=blah', fieldset],
      ['foo=bar,baz=blah', fieldset],
      ['foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\', fieldset],
    ];
    const no: [string, Record<string, string>][] = [
      ['x=y', { x: 'z' }],
      ['x=y,z=w', { x: 'w', z: 'w' }],
      ['x!=y,z!=w', { x: 'z', z: 'w' }],
      ['foo=blah', fieldset],
      ['baz=bar', fieldset],
      ['foo=bar,foobar=bar,baz=blah', fieldset],
    ];
    for (const [sel, f] of yes) assert.equal(parseFieldSelector(sel).matches(f), true, sel);
    for (const [sel, f] of no) assert.equal(parseFieldSelector(sel).matches(f), false, sel);
  });
  it('TestRequiresExactMatch', () => {
    assert.equal(parseFieldSelector('').requiresExactMatch('test'), undefined);
    assert.equal(parseFieldSelector('a=b').requiresExactMatch('test'), undefined);
    assert.equal(parseFieldSelector('test=b').requiresExactMatch('test'), 'b');
    assert.equal(parseFieldSelector('test=').requiresExactMatch('test'), '');
    assert.equal(parseFieldSelector('test!=b').requiresExactMatch('test'), undefined);
    assert.equal(parseFieldSelector('a=,test=b').requiresExactMatch('test'), 'b');
  });
});
