// Every library function the API contract lists, with the results Kubernetes gives, errors included: the
// extended strings, lists, regex (RE2), URLs, quantities, optionals, cross-type numbers,
// timestamps with time zones. Cases follow Kubernetes' library tests and cel-go's ext tests.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { CelCompileError, CelEvaluationError } from '../../src/cel/errors.ts';
import { toJSON } from '../../src/cel/schema.ts';

const env = new CelEnvironment({ variables: [{ name: 's', type: 'string' }] });

function value(expr: string): unknown {
  return toJSON(env.compile(expr).evaluate({ s: 'héllo wörld' }).value);
}

/** Each case: expression → its value as JSON (ints as numbers). */
function check(cases: [string, unknown][]): void {
  for (const [expr, want] of cases) assert.deepEqual(value(expr), want, expr);
}

/** Each case: expression → the evaluation error's message (a RegExp or the exact text). */
function fails(cases: [string, string | RegExp][]): void {
  for (const [expr, want] of cases) {
    assert.throws(
      () => value(expr),
      (e: unknown) => e instanceof CelEvaluationError && (typeof want === 'string' ? e.message === want : want.test(e.message)),
      expr,
    );
  }
}

/** Each case: expression → a compile error whose message matches. */
function refuses(cases: [string, RegExp][]): void {
  for (const [expr, want] of cases) assert.throws(() => env.compile(expr), (e: unknown) => e instanceof CelCompileError && want.test(e.message), expr);
}

test('extended strings: charAt, indexOf, lastIndexOf count code points', () => {
  check([
    ["'tacocat'.charAt(3)", 'o'],
    ["'tacocat'.charAt(7)", ''],
    ["'©αT'.charAt(1)", 'α'],
    ["'tacocat'.indexOf('')", 0],
    ["'tacocat'.indexOf('ac')", 1],
    ["'tacocat'.indexOf('none') == -1", true],
    ["'tacocat'.indexOf('a', 3)", 5],
    ["'ta©o©αT'.indexOf('©')", 2],
    ["'ta©o©αT'.indexOf('©', 3)", 4],
    ["'ta©o©αT'.indexOf('αT')", 5],
    ["'tacocat'.lastIndexOf('')", 7],
    ["'tacocat'.lastIndexOf('at')", 5],
    ["'tacocat'.lastIndexOf('a', 3)", 1],
    ["'ta©o©αT'.lastIndexOf('©')", 4],
    ["''.lastIndexOf('@@') == -1", true],
    ["s.indexOf('w')", 6],
  ]);
  fails([
    ["'tacocat'.charAt(30)", 'index out of range: 30'],
    ["'tacocat'.charAt(-1)", 'index out of range: -1'],
    ["'tacocat'.indexOf('a', 30)", 'index out of range: 30'],
    ["'tacocat'.lastIndexOf('a', -1)", 'index out of range: -1'],
  ]);
});

test('extended strings: case, replace, split, substring, trim, join, quote, format', () => {
  check([
    ["'TacoCat'.lowerAscii()", 'tacocat'],
    ["'TacoCÆt Xii'.lowerAscii()", 'tacocÆt xii'],
    ["'tacoCat'.upperAscii()", 'TACOCAT'],
    ["'tacoCαt'.upperAscii()", 'TACOCαT'],
    ["'12 days 12 hours'.replace('{0}', '2')", '12 days 12 hours'],
    ["'{0} days {0} hours'.replace('{0}', '2')", '2 days 2 hours'],
    ["'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23')", '2 days 23 hours'],
    ["'1 ©αT taco'.replace('αT', 'o©α')", '1 ©o©α taco'],
    ["'hello hello'.replace('', '_')", '_h_e_l_l_o_ _h_e_l_l_o_'],
    ["'hello world'.split(' ')", ['hello', 'world']],
    ["'hello world events!'.split(' ', 0)", []],
    ["'hello world events!'.split(' ', 1)", ['hello world events!']],
    ["'o©o©o©o'.split('©', -1)", ['o', 'o', 'o', 'o']],
    ["'o©o©o©o'.split('©', 2)", ['o', 'o©o©o']],
    ["'tacocat'.substring(4)", 'cat'],
    ["'tacocat'.substring(0, 4)", 'taco'],
    ["'ta©o©αT'.substring(2, 6)", '©o©α'],
    ["' \\ttrim\\n    '.trim()", 'trim'],
    ["['x', 'y'].join()", 'xy'],
    ["['x', 'y'].join('-')", 'x-y'],
    ["[].join()", ''],
    ['strings.quote(\'first\\nsecond\')', '"first\\nsecond"'],
    ['strings.quote(\'bell\\a\')', '"bell\\a"'],
    ['strings.quote(\'"quoted"\')', '"\\"quoted\\""'],
    ["'%s, %d, %.2f, %e, %x, %X, %o, %b'.format([dyn('a'), dyn(42), dyn(3.14159), dyn(1052.032911275), dyn(255), dyn('Hi'), dyn(8), dyn(5)])", 'a, 42, 3.14, 1.052033e+03, ff, 4869, 10, 101'],
    ["'%s'.format([[1, 2]])", '[1, 2]'],
    ["'%s %%'.format([true])", 'true %'],
  ]);
  fails([
    ["'tacocat'.substring(40)", 'index out of range: 40'],
    ["'tacocat'.substring(3, 1)", 'invalid substring range. start: 3, end: 1'],
    ["'tacocat'.substring(1, 40)", 'index out of range: 40'],
    ["'%d'.format(['a'])", /decimal clause can only be used on integers/],
    ["'%s %s'.format(['a'])", /index 1 out of range/],
    ["'%z'.format([1])", /unrecognized formatting clause "z"/],
  ]);
});

test('lists: isSorted, sum, min, max, indexOf, lastIndexOf', () => {
  check([
    ['[1, 2, 3].isSorted()', true],
    ['[1, 3, 2].isSorted()', false],
    ["['a', 'b', 'b'].isSorted()", true],
    ['[].isSorted()', true],
    ["[duration('1s'), duration('2s')].isSorted()", true],
    ['[1, 2, 3].sum()', 6],
    ['[1.5, 2.5].sum()', 4],
    ['[1u, 2u].sum()', 3],
    ["[duration('1s'), duration('2m')].sum()", '121s'],
    ['[1, 4, -2].min()', -2],
    ['[1, 4, -2].max()', 4],
    ["['b', 'a'].min()", 'a'],
    ['[1.5].max()', 1.5],
    ["[timestamp('2024-01-01T00:00:00Z'), timestamp('2023-01-01T00:00:00Z')].min()", '2023-01-01T00:00:00Z'],
    ['[1, 2, 2, 3].indexOf(2)', 1],
    ['[1, 2, 2, 3].lastIndexOf(2)', 2],
    ['[1, 2].indexOf(5)', -1],
    ["[[1], [2]].indexOf([2])", 1],
    ["['a', 'b'].lastIndexOf('c')", -1],
  ]);
  fails([
    ['[].min()', 'min called on empty list'],
    ['[].max()', 'max called on empty list'],
    ['[9223372036854775807, 1].sum()', 'integer overflow'],
  ]);
  refuses([['[{}, {}].isSorted()', /found no matching overload for 'isSorted'/]]);
});

test('regex: matches, find, findAll with RE2; patterns RE2 refuses never compile', () => {
  check([
    ["'abc'.matches('^a.c$')", true],
    ["matches('abc', 'b')", true],
    ["'abc'.matches('^b')", false],
    ["'abc 123'.find('[0-9]+')", '123'],
    ["'abc'.find('[0-9]+')", ''],
    ["'123 abc 456'.findAll('[0-9]+')", ['123', '456']],
    ["'123 abc 456'.findAll('[0-9]+', 1)", ['123']],
    ["'123 abc 456'.findAll('[0-9]+', 0)", []],
    ["'123 abc 456'.findAll('xyz')", []],
    ["'ünï'.matches('^.n.$')", true],
  ]);
  refuses([
    ["'abc'.matches('a(?=b)')", /invalid regex: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`/],
    ["'abc'.find('(a)\\\\1')", /invalid regex/],
    ["'abc'.findAll('[')", /invalid regex: error parsing regexp: missing closing \]/],
    ["matches('abc', '(')", /invalid regex/],
  ]);
  fails([["s.matches(s + '(')", /missing closing \)/], ["s.find('(' + s)", /^Illegal regex: error parsing regexp/]]);
  // A pattern that backtracks catastrophically in JavaScript runs in linear time under RE2.
  const start = performance.now();
  assert.equal(value(`'${'a'.repeat(5000)}!'.matches('^(a+)+$')`), false);
  assert.ok(performance.now() - start < 2000, 'RE2 is linear');
});

test('URLs: url(), isURL() and the accessors', () => {
  check([
    ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('https://a:b:c/')", false],
    ["isURL('../relative-path')", false],
    ["isURL('')", false],
    ["url('/path').getScheme()", ''],
    ["url('https://example.com/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/').getHost()", 'example.com'],
    ["url('https://[::1]:80/').getHost()", '[::1]:80'],
    ["url('https://[::1]/').getHost()", '[::1]'],
    ["url('/path').getHost()", ''],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://127.0.0.1:80/').getHostname()", '127.0.0.1'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('https://example.com/path').getEscapedPath()", '/path'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["url('https://example.com').getEscapedPath()", ''],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", { k1: ['a'], k2: ['b', 'c'] }],
    ["url('https://example.com/path?key with spaces=value with spaces').getQuery()", { 'key with spaces': ['value with spaces'] }],
    ["url('https://example.com/path?').getQuery()", {}],
    ["url('https://example.com/path').getQuery()", {}],
    ["url('https://example.com/a#frag').getEscapedPath()", '/a'],
  ]);
  fails([
    ["url('../relative-path')", /^URL parse error during conversion from string: parse "..\/relative-path": invalid URI for request/],
    ["url('https://a:b:c/')", /^URL parse error during conversion from string: .*invalid port ":b:c" after host/],
  ]);
});

test('quantities: parse, compare, arithmetic, conversion (Kubernetes quantity_test.go)', () => {
  check([
    ["isQuantity('20')", true],
    ["isQuantity('20M')", true],
    ["isQuantity('20Mi')", true],
    ["isQuantity('20Mo')", false],
    ["isQuantity('10Mm')", false],
    ["quantity('200M') == quantity('200M')", true],
    ["quantity('200M') == quantity('0.2G') && quantity('0.2G') == quantity('200M')", true],
    ["quantity('2M') == quantity('0.002G') && quantity('2000k') == quantity('2M') && quantity('0.002G') == quantity('2000k')", true],
    ["quantity('200M') == quantity('0.3G')", false],
    ["quantity('50M').isLessThan(quantity('50Mi'))", true],
    ["quantity('50M').isLessThan(quantity('100M'))", true],
    ["quantity('100M').isLessThan(quantity('50M'))", false],
    ["quantity('50Mi').isGreaterThan(quantity('50M'))", true],
    ["quantity('150Mi').isGreaterThan(quantity('100Mi'))", true],
    ["quantity('50M').isGreaterThan(quantity('100M'))", false],
    ["quantity('200M').compareTo(quantity('0.2G'))", 0],
    ["quantity('50M').compareTo(quantity('50Mi'))", -1],
    ["quantity('50Mi').compareTo(quantity('50M'))", 1],
    ["quantity('50k').add(quantity('20')) == quantity('50.02k')", true],
    ["quantity('50k').add(20).isLessThan(quantity('50020'))", false],
    ["quantity('50k').sub(quantity('20')) == quantity('49.98k')", true],
    ["quantity('50k').sub(20) == quantity('49980')", true],
    ["quantity('50k').add(20).sub(quantity('100k')).asInteger()", -49980],
    ["quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", 20],
    ["quantity('50k').asInteger()", 50000],
    ["quantity('9999999999999999999999999999999999999G').isInteger()", false],
    ["quantity('50').isInteger()", true],
    ["quantity('50.703k').asApproximateFloat()", 50703],
    ["[quantity('9999999999999999999999999999999999999')].all(x, x.add(quantity('1')).compareTo(x.add(quantity('2'))) == -1)", true],
    ["quantity('-1').sign()", -1],
    ["quantity('0').sign()", 0],
    ["quantity('1m').sign()", 1],
  ]);
  fails([
    ["quantity('10Mo')", /^quantities must match the regular expression/],
    ["quantity('10Mm')", "unable to parse quantity's suffix"],
    ["quantity('9999999999999999999999999999999999999G').asInteger()", 'cannot convert value to integer'],
  ]);
  refuses([['isQuantity([1, 2, 3])', /found no matching overload for 'isQuantity' applied to/]]);
});

test('optional types: ?., [?], optional.of/none/ofNonZeroValue, value, hasValue, or, orValue, optMap', () => {
  check([
    ["{'a': 1}.?a.orValue(5)", 1],
    ["{'a': 1}.?b.orValue(5)", 5],
    ["{'a': {'b': 2}}.?a.?b.value()", 2],
    ["{'a': 1}[?'b'].hasValue()", false],
    ["[1, 2][?1].value()", 2],
    ['optional.of(1).hasValue()', true],
    ['optional.none().hasValue()', false],
    ["optional.ofNonZeroValue('').hasValue()", false],
    ['optional.ofNonZeroValue(3).value()', 3],
    ['optional.none().or(optional.of(2)).value()', 2],
    ['optional.of(1) == optional.of(1)', true],
    ['optional.of(1) == optional.none()', false],
    ['optional.of(2).optMap(x, x * 2).value()', 4],
    ['optional.none().optMap(x, x * 2).hasValue()', false],
    ["optional.of({'a': 1}).optFlatMap(m, m.?a).value()", 1],
  ]);
  fails([['optional.none().value()', 'Optional value is not present']]);
});

test('numbers: cross-type orderings compile, cross-type equality holds at run time, int is 64-bit', () => {
  check([
    ['1 < 1.5', true],
    ['1u < 2', true],
    ['2 > 1u', true],
    ['1.0 <= 1', true],
    ['dyn(1) == 1.0', true],
    ['dyn(1u) == 1', true],
    ['dyn(1u) in [1, 2]', true],
    ['[1, 2] == [dyn(1u), dyn(2.0)]', true],
    ["{'a': 1} == {'a': dyn(1.0)}", true],
    ['9223372036854775807', '9223372036854775807'],
    ['int(1u)', 1],
  ]);
  fails([
    ['9223372036854775807 + 1', /overflow/i],
    ['-(-9223372036854775807 - 1)', /overflow/i],
    ['1 / 0', 'division by zero'],
  ]);
  refuses([
    ['1 == 1.0', /found no matching overload for '_==_' applied to '\(int, double\)'/],
    ['1u in [1, 2]', /found no matching overload for '@in' applied to '\(uint, list<int>\)'/],
    ["[1, 'a']", /List elements must have the same type/],
    ["{'a': 1, 'b': 'c'}", /Map value uses wrong type/],
  ]);
});

test('timestamps and durations: UTC by default, time-zone arguments, conversions', () => {
  check([
    ["timestamp('2009-02-13T23:31:30Z').getHours()", 23],
    ["timestamp('2009-02-13T23:31:30Z').getHours('America/Los_Angeles')", 15],
    ["timestamp('2009-02-13T23:31:30Z').getHours('+02:00')", 1],
    ["timestamp('2009-02-13T23:31:30Z').getDate('Australia/Sydney')", 14],
    ["timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", 5],
    ["timestamp('2009-02-13T23:31:30Z').getDayOfYear()", 43],
    ["timestamp('2009-07-13T23:31:30Z').getDayOfYear()", 193],
    ["timestamp('2009-07-13T23:31:30Z').getDayOfYear('Asia/Tokyo')", 194],
    ["timestamp('2009-02-13T23:31:30.123Z').getMilliseconds()", 123],
    ["timestamp('2009-02-13T23:31:30Z').getMonth()", 1],
    ["duration('3h25m').getHours()", 3],
    ["duration('3h25m').getMinutes()", 205],
    ["timestamp('2009-02-13T23:31:30Z').getFullYear('-09:30')", 2009],
    ["string(timestamp('2009-02-13T23:31:30Z'))", '2009-02-13T23:31:30Z'],
    ["int(timestamp('2009-02-13T23:31:30Z'))", 1234567890],
    ['string(timestamp(1234567890))', '2009-02-13T23:31:30Z'],
    ["timestamp('2009-02-13T23:31:30+01:00') == timestamp('2009-02-13T22:31:30Z')", true],
    ["string(duration('1h30m'))", '5400s'],
    ["duration('1.5s').getMilliseconds()", 1500],
    ["timestamp('2009-02-13T23:31:30Z') + duration('1h') > timestamp('2009-02-14T00:00:00Z')", true],
    ["timestamp('2009-02-13T23:31:30Z') - timestamp('2009-02-13T23:31:00Z') == duration('30s')", true],
  ]);
  fails([
    ["timestamp('9999-12-31T23:59:59Z') + duration('1s')", 'timestamp out of range'],
    ["timestamp('2009-02-13T23:31:30Z').getHours('Mars/Olympus')", /invalid time zone/],
    ["timestamp(s + '2009-02-13T23:31:30.5')", /requires a string in RFC 3339 format/],
    ['timestamp(253402300800)', 'timestamp out of range'],
  ]);
});

test('IP library: ip(), isIP(), ip.isCanonical(), the members, string() and equality', () => {
  check([
    ["isIP('127.0.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('127.0.0.256')", false],
    ["isIP(':::1')", false],
    ["isIP('1.2.3.04')", false],
    ["isIP('::ffff:1.2.3.4')", false],
    ["isIP('fe80::1%eth0')", false],
    ["isIP('')", false],
    ["ip('127.0.0.1').family()", 4],
    ["ip('::1').family() == 6", true],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('::').isUnspecified()", true],
    ["ip('::1').isUnspecified()", false],
    ["ip('127.0.0.1').isLoopback()", true],
    ["ip('192.168.0.1').isLoopback()", false],
    ["ip('::1').isLoopback()", true],
    ["ip('224.0.0.1').isLinkLocalMulticast()", true],
    ["ip('224.0.1.1').isLinkLocalMulticast()", false],
    ["ip('ff02::1').isLinkLocalMulticast()", true],
    ["ip('fd00::1').isLinkLocalMulticast()", false],
    ["ip('169.254.169.254').isLinkLocalUnicast()", true],
    ["ip('fe80::1').isLinkLocalUnicast()", true],
    ["ip('fd80::1').isLinkLocalUnicast()", false],
    ["ip('192.168.0.1').isGlobalUnicast()", true],
    ["ip('255.255.255.255').isGlobalUnicast()", false],
    ["ip('2001:db8::abcd').isGlobalUnicast()", true],
    ["ip('ff00::1').isGlobalUnicast()", false],
    ["ip.isCanonical('127.0.0.1')", true],
    ["ip.isCanonical('2001:db8::abcd')", true],
    ["ip.isCanonical('2001:DB8::ABCD')", false],
    ["ip.isCanonical('2001:db8::0:0:0:abcd')", false],
    ["string(ip('2001:DB8::0:0:0:abcd'))", '2001:db8::abcd'],
    ["ip('127.0.0.1') == ip('127.0.0.1')", true],
    ["ip('::1') == ip('0:0::1')", true],
    ["ip('127.0.0.1') == ip('127.0.0.2')", false],
  ]);
  fails([
    ["ip('127.0.0.256')", 'IP Address "127.0.0.256" parse error during conversion from string: ParseAddr("127.0.0.256"): IPv4 field has value >255'],
    ["ip('1.2.3.04')", 'IP Address "1.2.3.04" parse error during conversion from string: ParseAddr("1.2.3.04"): IPv4 field has octet with leading zero'],
    ["ip('::ffff:1.2.3.4')", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'],
    ["ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed'],
  ]);
  refuses([["ip(1)", /found no matching overload for 'ip' applied to '\(int\)'/]]);
});

test('CIDR library: cidr(), isCIDR(), containsIP, containsCIDR, ip, masked, prefixLength, string() and equality', () => {
  check([
    ["isCIDR('192.168.0.0/16')", true],
    ["isCIDR('::1/128')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('::1/129')", false],
    ["isCIDR('192.168.0.1/16')", true],
    ["isCIDR('::ffff:1.2.3.4/120')", false],
    ["isCIDR('10.0.0.0/08')", false],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))", false],
    ["cidr('192.168.0.0/24').containsIP('192.168.0.1')", true],
    ["cidr('0.0.0.0/0').containsIP('10.1.2.3')", true],
    ["cidr('0.0.0.0/0').containsIP('::1')", false],
    ["cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))", true],
    ["cidr('192.168.1.0/24').containsCIDR(cidr('192.168.2.0/24'))", false],
    ["cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')", true],
    ["cidr('192.168.10.0/24').containsCIDR('192.168.0.0/16')", false],
    ["cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", true],
    ["cidr('::1/128').ip().family()", 6],
    ["string(cidr('192.168.0.1/24').masked())", '192.168.0.0/24'],
    ["string(cidr('192.168.0.1/24'))", '192.168.0.1/24'],
    ["cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", true],
    ["cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", false],
    ["cidr('192.168.0.0/16').prefixLength()", 16],
    ["cidr('::1/128').prefixLength()", 128],
  ]);
  fails([["cidr('192.168.0.0/33')", /^network address parse error during conversion from string: .*netip\.ParsePrefix\("192\.168\.0\.0\/33"\)/]]);
});

test('has() tests a field of any operand, as cel-go: an index, a call, a parenthesized expression', () => {
  const list = new CelEnvironment({ variables: [{ name: 'l', type: 'list<map<string, dyn>>' }] });
  const run = (expr: string) => toJSON(list.compile(expr).evaluate({ l: [{ a: { b: 1 } }, {}] }).value);
  assert.equal(run('has(l[0].a)'), true);
  assert.equal(run('has(l[1].a)'), false);
  assert.equal(run('has(l[0].a.b)'), true);
  assert.equal(run('l.exists_one(x, has(x.a))'), true);
  assert.equal(run("has(l[0].a) && l.size() > 1 ? has(l[1].a) : true"), false);
  assert.throws(() => list.compile('has(l[0])'), (e: unknown) => e instanceof CelCompileError && /invalid argument/.test(e.message));
});

test('format library: named validations, optional.none() when valid, Kubernetes’ messages when not', () => {
  const none = (expr: string) => assert.equal(value(`${expr}.hasValue()`), false, expr);
  for (const expr of [
    'format.dns1123Label().validate("my-label-name")',
    'format.dns1123Subdomain().validate("apiextensions.k8s.io")',
    'format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")',
    'format.dns1123LabelPrefix().validate("my-label-prefix-")',
    'format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")',
    'format.dns1035LabelPrefix().validate("my-label-prefix-")',
    'format.uri().validate("http://example.com")',
    'format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")',
    'format.byte().validate("aGVsbG8=")',
    'format.date().validate("2021-01-01")',
    'format.datetime().validate("2021-01-01T00:00:00Z")',
    'format.labelValue().validate("my-cool-label-Value")',
  ])
    none(expr);
  check([
    ['format.dns1123Label().validate("contains a space").value()', ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]],
    ['format.dns1035LabelPrefix().validate("contains a space-").value()', ["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]],
    ['format.byte().validate("aGVsbG8").value()', ['invalid base64']],
    ['format.date().validate("2020-01-32").value()', ['invalid date']],
    ['format.datetime().validate("2020-01-32T00:00:00Z").value()', ['invalid datetime']],
    ['format.uuid().validate("nope").value()', ['does not match the UUID format']],
    ['format.named("unknown").hasValue()', false],
    ['format.named("dns1123Label").value() == format.dns1123Label()', true],
    ['format.dns1123Label() == format.dns1035Label()', false],
    ["!format.dns1123Label().validate('Not_Valid').hasValue()", false],
  ]);
});

test('sets library: contains, equivalent, intersects with CEL equality', () => {
  check([
    ['sets.contains([], [])', true],
    ['sets.contains([1], [])', true],
    ['sets.contains([1], [1, 1])', true],
    ['sets.contains([1, 2, 3, 4], [2, 3])', true],
    ['sets.contains([1], [2])', false],
    ['sets.contains([1], [1, 2])', false],
    ["sets.contains(['a', 'b'], ['b'])", true],
    ['sets.contains([[1], [2]], [[2]])', true],
    ['sets.equivalent([], [])', true],
    ['sets.equivalent([1], [1, 1])', true],
    ['sets.equivalent([2, 1], [1])', false],
    ['sets.intersects([1], [1, 2])', true],
    ['sets.intersects([], [])', false],
    ['sets.intersects([1], [])', false],
    ['sets.intersects([1, 2], [3, 2])', true],
  ]);
});

test('semver library: semver(), isSemver(), normalization, the members and precedence', () => {
  check([
    ["isSemver('1.0.0')", true],
    ["isSemver('0.1.0-alpha.1+build.5')", true],
    ["isSemver('hello')", false],
    ["isSemver('v1.0')", false],
    ["isSemver('01.0.0')", false],
    ["isSemver('1.0.0-01')", false],
    ["isSemver('v1.0', true)", true],
    ["isSemver('1.0-beta', true)", false],
    ["semver('v1.0.0', true) == semver('1.0.0')", true],
    ["semver('1.0', true) == semver('1.0.0')", true],
    ["semver('01.01.01', true) == semver('1.1.1')", true],
    ["semver('1.2.3').major()", 1],
    ["semver('1.2.3').minor()", 2],
    ["semver('1.2.3').patch()", 3],
    ["semver('1.2.3').compareTo(semver('1.2.3'))", 0],
    ["semver('1.2.3').compareTo(semver('2.0.0'))", -1],
    ["semver('1.2.3').compareTo(semver('0.1.2'))", 1],
    ["semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", true],
    ["semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))", true],
    ["semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))", true],
    ["semver('1.0.0-rc.1').isGreaterThan(semver('1.0.0-beta.11'))", true],
    ["semver('1.0.0+a') == semver('1.0.0+b')", true],
    ["isSemver('18446744073709551615.0.0')", true],
    ["isSemver('18446744073709551616.0.0')", false],
    [`isSemver('1.0.0-${'9'.repeat(30)}')`, false],
  ]);
  fails([["semver('200K')", 'No Major.Minor.Patch elements found']]);
});
