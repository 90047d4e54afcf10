// resource.Quantity parsing and canonical form, checked against the cases of Kubernetes'
// quantity_test.go (TestQuantityParse, TestQuantityString, TestQuantityParseEmit, TestJSONWhitespace).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, parseQuantity, quantityString, type Quantity, type QuantityFormat } from '../../src/machinery/quantity.ts';

const dec = (v: number | bigint, exponent: number, format: QuantityFormat): Quantity => ({ unscaled: BigInt(v), exponent, format });
const MAX = dec((1n << 63n) - 1n, 0, 'BinarySI');

function parsed(text: string): Quantity {
  const q = parseQuantity(text);
  assert.equal(typeof q, 'object', `${text}: ${String(q)}`);
  return q as Quantity;
}

/** a − b as a sign, exactly. */
function cmp(a: Quantity, b: Quantity): number {
  const e = Math.min(a.exponent, b.exponent);
  const x = a.unscaled * 10n ** BigInt(a.exponent - e);
  const y = b.unscaled * 10n ** BigInt(b.exponent - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

const PARSE: [string, Quantity][] = [
  ['0', dec(0, 0, 'DecimalSI')], ['0n', dec(0, 0, 'DecimalSI')], ['0u', dec(0, 0, 'DecimalSI')], ['0m', dec(0, 0, 'DecimalSI')],
  ['0Ki', dec(0, 0, 'BinarySI')], ['0k', dec(0, 0, 'DecimalSI')], ['0Mi', dec(0, 0, 'BinarySI')], ['0M', dec(0, 0, 'DecimalSI')],
  ['0Gi', dec(0, 0, 'BinarySI')], ['0G', dec(0, 0, 'DecimalSI')], ['0Ti', dec(0, 0, 'BinarySI')], ['0T', dec(0, 0, 'DecimalSI')],
  ['1', dec(1, 0, 'DecimalSI')],
  ['1Ki', dec(1024, 0, 'BinarySI')], ['8Ki', dec(8 * 1024, 0, 'BinarySI')], ['7Mi', dec(7 * 1024 ** 2, 0, 'BinarySI')],
  ['6Gi', dec(6 * 1024 ** 3, 0, 'BinarySI')], ['5Ti', dec(5 * 1024 ** 4, 0, 'BinarySI')], ['4Pi', dec(4n * 1024n ** 5n, 0, 'BinarySI')],
  ['3Ei', dec(3n * 1024n ** 6n, 0, 'BinarySI')], ['10Ti', dec(10 * 1024 ** 4, 0, 'BinarySI')], ['100Ti', dec(100 * 1024 ** 4, 0, 'BinarySI')],
  ['5n', dec(5, -9, 'DecimalSI')], ['4u', dec(4, -6, 'DecimalSI')], ['3m', dec(3, -3, 'DecimalSI')], ['9', dec(9, 0, 'DecimalSI')],
  ['8k', dec(8, 3, 'DecimalSI')], ['50k', dec(5, 4, 'DecimalSI')], ['7M', dec(7, 6, 'DecimalSI')], ['6G', dec(6, 9, 'DecimalSI')],
  ['5T', dec(5, 12, 'DecimalSI')], ['40T', dec(4, 13, 'DecimalSI')], ['300T', dec(3, 14, 'DecimalSI')], ['2P', dec(2, 15, 'DecimalSI')],
  ['1E', dec(1, 18, 'DecimalSI')],
  ['1E-3', dec(1, -3, 'DecimalExponent')], ['1e3', dec(1, 3, 'DecimalExponent')], ['1E6', dec(1, 6, 'DecimalExponent')],
  ['1e9', dec(1, 9, 'DecimalExponent')], ['1E12', dec(1, 12, 'DecimalExponent')], ['1e15', dec(1, 15, 'DecimalExponent')],
  ['1E18', dec(1, 18, 'DecimalExponent')], ['1e14', dec(1, 14, 'DecimalExponent')], ['1e13', dec(1, 13, 'DecimalExponent')],
  ['100.035k', dec(100035, 0, 'DecimalSI')],
  ['0.001', dec(1, -3, 'DecimalSI')], ['0.0005k', dec(5, -1, 'DecimalSI')], ['0.005', dec(5, -3, 'DecimalSI')], ['0.05', dec(5, -2, 'DecimalSI')],
  ['0.5', dec(5, -1, 'DecimalSI')], ['0.00050k', dec(5, -1, 'DecimalSI')], ['0.00500', dec(5, -3, 'DecimalSI')], ['0.05000', dec(5, -2, 'DecimalSI')],
  ['0.50000', dec(5, -1, 'DecimalSI')], ['0.5e0', dec(5, -1, 'DecimalExponent')], ['0.5e-1', dec(5, -2, 'DecimalExponent')],
  ['0.5e-2', dec(5, -3, 'DecimalExponent')], ['10.035M', dec(10035, 3, 'DecimalSI')],
  ['1.2e3', dec(12, 2, 'DecimalExponent')], ['1.3E+6', dec(13, 5, 'DecimalExponent')], ['1.40e9', dec(14, 8, 'DecimalExponent')],
  ['1.53E12', dec(153, 10, 'DecimalExponent')], ['1.6e15', dec(16, 14, 'DecimalExponent')], ['1.7E18', dec(17, 17, 'DecimalExponent')],
  ['9.01', dec(901, -2, 'DecimalSI')], ['8.1k', dec(81, 2, 'DecimalSI')], ['7.123456M', dec(7123456, 0, 'DecimalSI')],
  ['6.987654321G', dec(6987654321, 0, 'DecimalSI')], ['5.444T', dec(5444, 9, 'DecimalSI')], ['40.1T', dec(401, 11, 'DecimalSI')],
  ['300.2T', dec(3002, 11, 'DecimalSI')], ['2.5P', dec(25, 14, 'DecimalSI')], ['1.01E', dec(101, 16, 'DecimalSI')],
  ['3.001n', dec(4, -9, 'DecimalSI')], ['1.1E-9', dec(2, -9, 'DecimalExponent')], ['0.0000000001', dec(1, -9, 'DecimalSI')],
  ['0.0000000005', dec(1, -9, 'DecimalSI')], ['0.00000000050', dec(1, -9, 'DecimalSI')], ['0.5e-9', dec(1, -9, 'DecimalExponent')],
  ['0.9n', dec(1, -9, 'DecimalSI')], ['0.00000012345', dec(124, -9, 'DecimalSI')], ['0.00000012354', dec(124, -9, 'DecimalSI')],
  ['9Ei', MAX], ['9223372036854775807Ki', MAX], ['12E', dec(12, 18, 'DecimalSI')],
  ['100.035Ki', dec(10243584, -2, 'BinarySI')], ['0.5Mi', dec(0.5 * 1024 * 1024, 0, 'BinarySI')], ['0.05Gi', dec(536870912, -1, 'BinarySI')],
  ['0.025Ti', dec(274877906944, -1, 'BinarySI')],
  ['0.000000000001Ki', dec(2, -9, 'DecimalSI')], ['.001', dec(1, -3, 'DecimalSI')], ['.0001k', dec(100, -3, 'DecimalSI')],
  ['1.', dec(1, 0, 'DecimalSI')], ['1.G', dec(1, 9, 'DecimalSI')],
];

test('parse: value and format of every case, and of its negative and explicitly positive forms', () => {
  for (const [text, want] of PARSE) {
    for (const [prefix, sign] of [['', 1n], ['-', -1n], ['+', 1n]] as const) {
      const got = parsed(prefix + text);
      assert.equal(cmp(got, { ...want, unscaled: want.unscaled * sign }), 0, `${prefix}${text}: ${got.unscaled}e${got.exponent}`);
      assert.equal(got.format, want.format, `${prefix}${text}`);
    }
  }
});

test('parse: malformed quantities are errors, with Kubernetes\' messages', () => {
  for (const text of ['1.1.M', '1+1.0M', '0.1mi', '0.1am', 'aoeu', '.5i', '1i', '-3.01i', '-3.01e-', ' 1', '1 ', '']) assert.equal(typeof parseQuantity(text), 'string', JSON.stringify(text));
  assert.match(parseQuantity('aoeu') as string, /^quantities must match the regular expression/);
  assert.equal(parseQuantity('1i'), "unable to parse quantity's suffix");
});

const STRING: [Quantity, string, string][] = [
  [dec(1024 ** 3, 0, 'BinarySI'), '1Gi', '1024Mi'], [dec(300 * 1024 ** 2, 0, 'BinarySI'), '300Mi', '307200Ki'], [dec(6 * 1024, 0, 'BinarySI'), '6Ki', ''],
  [dec(1001 * 1024 ** 3, 0, 'BinarySI'), '1001Gi', '1025024Mi'], [dec(1024 ** 4, 0, 'BinarySI'), '1Ti', '1024Gi'], [dec(5, 0, 'BinarySI'), '5', '5000m'],
  [dec(500, -3, 'BinarySI'), '500m', '0.5'], [dec(1, 9, 'DecimalSI'), '1G', '1000M'], [dec(1000, 6, 'DecimalSI'), '1G', '0.001T'],
  [dec(1000000, 3, 'DecimalSI'), '1G', ''], [dec(1000000000, 0, 'DecimalSI'), '1G', ''], [dec(1, -3, 'DecimalSI'), '1m', '1000u'],
  [dec(80, -3, 'DecimalSI'), '80m', ''], [dec(1080, -3, 'DecimalSI'), '1080m', '1.08'], [dec(108, -2, 'DecimalSI'), '1080m', '1080000000n'],
  [dec(10800, -4, 'DecimalSI'), '1080m', ''], [dec(300, 6, 'DecimalSI'), '300M', ''], [dec(1, 12, 'DecimalSI'), '1T', ''],
  [dec(1234567, 6, 'DecimalSI'), '1234567M', ''], [dec(1234567, -3, 'BinarySI'), '1234567m', ''], [dec(3, 3, 'DecimalSI'), '3k', ''],
  [dec(1025, 0, 'BinarySI'), '1025', ''], [dec(0, 0, 'DecimalSI'), '0', ''], [dec(0, 0, 'BinarySI'), '0', ''],
  [dec(1, 9, 'DecimalExponent'), '1e9', '.001e12'], [dec(1, -3, 'DecimalExponent'), '1e-3', '0.001e0'], [dec(1, -9, 'DecimalExponent'), '1e-9', '1000e-12'],
  [dec(80, -3, 'DecimalExponent'), '80e-3', ''], [dec(300, 6, 'DecimalExponent'), '300e6', ''], [dec(1, 12, 'DecimalExponent'), '1e12', ''],
  [dec(1, 3, 'DecimalExponent'), '1e3', ''], [dec(3, 3, 'DecimalExponent'), '3e3', ''], [dec(3, 3, 'DecimalSI'), '3k', ''],
  [dec(0, 0, 'DecimalExponent'), '0', '00'], [dec(1, -9, 'DecimalSI'), '1n', ''], [dec(80, -9, 'DecimalSI'), '80n', ''],
  [dec(1080, -9, 'DecimalSI'), '1080n', ''], [dec(108, -8, 'DecimalSI'), '1080n', ''], [dec(10800, -10, 'DecimalSI'), '1080n', ''],
  [dec(1, -6, 'DecimalSI'), '1u', ''], [dec(80, -6, 'DecimalSI'), '80u', ''], [dec(1080, -6, 'DecimalSI'), '1080u', ''],
];

test('canonical form: each value, its negative, its canonical text kept as parsed, and an alternate spelling rewritten', () => {
  for (const [q, want, alternate] of STRING) {
    assert.equal(quantityString(q), want, `${q.unscaled}e${q.exponent} ${q.format}`);
    if (q.unscaled !== 0n) assert.equal(quantityString({ ...q, unscaled: -q.unscaled }), `-${want}`);
    assert.equal(parsed(want).text, want, `${want} is kept as parsed`);
    if (!alternate) continue;
    const alt = parsed(alternate);
    assert.equal(alt.text, undefined, `${alternate} is not kept`);
    assert.equal(quantityString(alt), want, alternate);
  }
});

test('parse then write: suffix families are kept, amounts grow to the largest exact suffix', () => {
  const cases: [string, string][] = [['1Ki', '1Ki'], ['1Mi', '1Mi'], ['1Gi', '1Gi'], ['1024Mi', '1Gi'], ['1000M', '1G'], ['.001Ki', '1024m'], ['.000001Ki', '1024u'], ['.000000001Ki', '1024n'], ['.000000000001Ki', '2n']];
  for (const [text, want] of cases) {
    assert.equal(quantityString(parsed(text)), want, text);
    assert.equal(quantityString(parsed(`-${text}`)), `-${want}`, `-${text}`);
  }
  // The examples of the acceptance run, and text Kubernetes writes back unchanged.
  for (const [text, want] of [['1000m', '1'], ['0.5', '500m'], ['1.5Gi', '1536Mi'], ['1e3', '1e3'], ['+1Ki', '+1Ki'], ['1.500k', '1.500k'], ['1.5', '1500m']]) assert.equal(quantityString(parsed(text)), want, text);
});

test('JSON decoding: surrounding spaces are ignored, numbers are read as their text', () => {
  for (const [input, want] of [[' 1', '1'], ['1 ', '1'], [1, '1'], [10, '10'], [-1, '-1'], [' -1', '-1'], [0.5, '500m'], [1024, '1024']] as const) assert.deepEqual(canonicalQuantity(input), { text: want }, String(input));
  assert.deepEqual(canonicalQuantity('lots'), { error: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" });
  assert.deepEqual(canonicalQuantity('5i'), { error: "unable to parse quantity's suffix" });
});

test('the shortcut for already canonical text agrees with the full parse', () => {
  const texts = [...PARSE.map(([t]) => t), ...STRING.flatMap(([, a, b]) => [a, b]), '1000', '1000m', '1001m', '8Ki', '9Ki', '1024Mi', '1023Mi', '123456789012345678', '1234567890123456789', '99999999999999Ki', '9999999999999Ki', '7Ei', '8Ei', '15Gi', '16Gi'];
  for (const text of texts.filter(Boolean)) {
    const full = parseQuantity(text);
    assert.deepEqual(canonicalQuantity(text), typeof full === 'string' ? { error: full } : { text: quantityString(full) }, text);
  }
});
