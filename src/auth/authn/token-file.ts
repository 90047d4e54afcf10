// The static token file (`--token-auth-file`): a CSV of `token,user,uid[,"group1,group2"]`, read
// once at start. Parsed as Kubernetes parses it (Go's encoding/csv: RFC 4180 quoting, records of
// any length, bare quotes refused), with its start-up errors: fewer than three columns, or a CSV
// syntax error. Rows with an empty token are skipped; a repeated token keeps the last row.

import { readFileSync } from 'node:fs';
import type { UserInfo } from '../../request/user.ts';
import type { TokenAuthenticator } from './bearer-token.ts';


export function tokenFileAuthenticator(path: string, warn: (message: string) => void = () => {}): TokenAuthenticator {
  const text = readFileSync(path, 'utf8');
  const tokens = parseTokenFile(text, path, warn);
  return {
    async authenticateToken(token) {
      const user = tokens.get(token);
      // Not one of ours: the bearer authenticator turns "nobody knows it" into a rejection.
      if (!user) return { kind: 'no-credential' };
      return { kind: 'authenticated', user: { ...user, groups: [...user.groups] } };
    },
  };
}

export function parseTokenFile(text: string, path: string, warn: (message: string) => void = () => {}): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  let recordNum = 0;
  for (const record of readCsv(text)) {
    if (record.length < 3) throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    recordNum++;
    const [token, name, uid] = record as [string, string, string];
    if (token === '') {
      warn(`empty token has been found in token file '${path}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(token)) warn(`duplicate token has been found in token file '${path}', record number '${recordNum}'`);
    tokens.set(token, { name, uid, groups: record.length >= 4 ? record[3]!.split(',') : [] });
  }
  return tokens;
}

/** A CSV syntax error, worded as Go's csv.ParseError. */
class CsvError extends Error {}

const csvError = (startLine: number, line: number, column: number, what: string) =>
  new CsvError(startLine !== line ? `record on line ${startLine}; parse error on line ${line}, column ${column}: ${what}` : `parse error on line ${line}, column ${column}: ${what}`);

/** Go's encoding/csv reader with FieldsPerRecord = -1: records of any length; empty lines skipped. */
export function readCsv(input: string): string[][] {
  const text = input.replace(/\r\n/g, '\n');
  const records: string[][] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    // Empty lines are no record.
    if (text[i] === '\n') {
      i++;
      line++;
      continue;
    }
    const startLine = line;
    const fields: string[] = [];
    let lineStart = i;
    for (;;) {
      if (text[i] === '"') {
        // A quoted field: "" is a quote; it may span lines; the closing quote ends the field.
        const column = i - lineStart + 1;
        i++;
        let value = '';
        for (;;) {
          if (i >= text.length) throw csvError(startLine, line, column, 'extraneous or missing " in quoted-field');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            if (i < text.length && text[i] !== ',' && text[i] !== '\n') throw csvError(startLine, line, i - lineStart, 'extraneous or missing " in quoted-field');
            break;
          }
          if (c === '\n') {
            line++;
            lineStart = i + 1;
          }
          value += c;
          i++;
        }
        fields.push(value);
      } else {
        let end = i;
        while (end < text.length && text[end] !== ',' && text[end] !== '\n') end++;
        const value = text.slice(i, end);
        const quote = value.indexOf('"');
        if (quote >= 0) throw csvError(startLine, line, i - lineStart + quote + 1, 'bare " in non-quoted-field');
        fields.push(value);
        i = end;
      }
      if (text[i] === ',') {
        i++;
        continue;
      }
      // End of line or of input ends the record.
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    records.push(fields);
  }
  return records;
}
