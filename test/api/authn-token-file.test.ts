// The static token file is read as Kubernetes reads it (Go's encoding/csv with records of any
// length): quoted fields with doubled quotes and line breaks, CRLF, empty lines skipped, groups
// split on commas, rows with an empty token skipped, a repeated token keeping the last row, and
// Go's wording of its syntax errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTokenFile, readCsv } from '../../src/auth/authn/token-file.ts';

test('quoted fields, doubled quotes, line breaks inside quotes, CRLF and empty lines', () => {
  assert.deepEqual(readCsv('a,b,c\r\n\r\n"x ""y""",z,"multi\nline"\n'), [
    ['a', 'b', 'c'],
    ['x "y"', 'z', 'multi\nline'],
  ]);
  // A line of spaces is a record; a trailing comma is an empty field.
  assert.deepEqual(readCsv(' \nq,r,\n'), [[' '], ['q', 'r', '']]);
  assert.deepEqual(readCsv('only,one,line'), [['only', 'one', 'line']]);
});

test('users, uids and groups; an empty fourth column is one empty group, as in Kubernetes', () => {
  const warnings: string[] = [];
  const tokens = parseTokenFile('t1,alice,1,"a,b"\nt2,bob,2,\n,nobody,3\nt1,alice2,4,c,ignored\n', 'tokens.csv', (m) => warnings.push(m));
  assert.deepEqual(Object.fromEntries(tokens), {
    t1: { name: 'alice2', uid: '4', groups: ['c'] },
    t2: { name: 'bob', uid: '2', groups: [''] },
  });
  assert.deepEqual(warnings, ["empty token has been found in token file 'tokens.csv', record number '3'", "duplicate token has been found in token file 'tokens.csv', record number '4'"]);
});

test("Go's syntax errors and the column count", () => {
  assert.throws(() => parseTokenFile('t,u\n', 'f.csv'), { message: "token file 'f.csv' must have at least 3 columns (token, user name, user uid), found 2" });
  assert.throws(() => readCsv('ok,ok,ok\nbad"quote,x,y\n'), { message: 'parse error on line 2, column 4: bare " in non-quoted-field' });
  assert.throws(() => readCsv('"a"b,c,d\n'), /parse error on line 1, column \d+: extraneous or missing " in quoted-field/);
  assert.throws(() => readCsv('"never closed,c,d\n'), /extraneous or missing " in quoted-field/);
});
