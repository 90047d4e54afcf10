// The extended string library as Kubernetes enables it (cel-go ext.Strings, version 2): charAt,
// indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join, plus
// strings.quote and format. Indices count Unicode code points, as Go's runes do, never UTF-16
// units. The functions cel-js already has under these names index by UTF-16 unit or change
// non-ASCII letters, so ours are registered under internal names the compiler maps the calls to
// (see rewrite.ts).

import { OVERRIDE_SUFFIX } from '../errors.ts';
import { charge, traversalCost } from '../cost.ts';
import { celError, toIndex, type Registrar } from './register.ts';
import { formatString } from './format.ts';

/** Built-in string methods this library replaces (the compiler renames calls to them). */
export const OVERRIDDEN_STRING_METHODS = ['indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'substring', 'trim', 'split', 'join'];

const runes = (s: string): string[] => Array.from(s);

// Kubernetes pins a cel-go whose offset forms refuse an offset outside the string.
function indexOf(str: string, sub: string, offset: bigint): bigint {
  if (sub === '') return offset;
  const r = runes(str);
  const off = toIndex(offset);
  if (off < 0 || off >= r.length) throw celError(`index out of range: ${off}`);
  const s = runes(sub);
  for (let i = off; i <= r.length - s.length; i++) {
    let j = 0;
    while (j < s.length && r[i + j] === s[j]) j++;
    if (j === s.length) return BigInt(i);
  }
  return -1n;
}

function lastIndexOf(str: string, sub: string, offset: bigint | undefined): bigint {
  const r = runes(str);
  if (offset === undefined) {
    if (sub === '') return BigInt(r.length);
    if (str.length < sub.length) return -1n;
    offset = BigInt(r.length - 1);
  }
  if (sub === '') return offset;
  let off = toIndex(offset);
  if (off < 0 || off >= r.length) throw celError(`index out of range: ${off}`);
  const s = runes(sub);
  if (off > r.length - s.length) off = r.length - s.length;
  for (let i = off; i >= 0; i--) {
    let j = 0;
    while (j < s.length && r[i + j] === s[j]) j++;
    if (j === s.length) return BigInt(i);
  }
  return -1n;
}

function substring(str: string, start: bigint, end?: bigint): string {
  const r = runes(str);
  if (end !== undefined && start > end) throw celError(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0n || start > BigInt(r.length)) throw celError(`index out of range: ${start}`);
  if (end !== undefined && (end < 0n || end > BigInt(r.length))) throw celError(`index out of range: ${end}`);
  return r.slice(Number(start), end === undefined ? undefined : Number(end)).join('');
}

const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
const asciiUpper = (s: string) => s.replace(/[a-z]+/g, (m) => m.toUpperCase());

// Go's unicode.IsSpace, which strings.TrimSpace trims.
const SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const TRIM = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, 'g');

/** Go's strings.Replace: n < 0 replaces all; an empty `old` matches between runes. */
/** The length of what replace would build, counted without building it. */
function replacedLength(str: string, old: string, by: string, n: number): number {
  if (n === 0 || old === by) return str.length;
  let count = 0;
  if (old === '') count = runes(str).length + 1;
  else for (let at = str.indexOf(old); at >= 0 && (n < 0 || count < n); at = str.indexOf(old, at + old.length)) count++;
  if (n >= 0) count = Math.min(count, n);
  return str.length + count * (by.length - old.length);
}

function replace(str: string, old: string, by: string, n: number): string {
  if (n === 0 || (old === by && old !== '')) return str;
  if (old === '') {
    const r = runes(str);
    const out: string[] = [];
    let done = 0;
    for (let i = 0; i <= r.length; i++) {
      if (n < 0 || done < n) {
        out.push(by);
        done++;
      }
      if (i < r.length) out.push(r[i]!);
    }
    return out.join('');
  }
  if (n < 0) return str.split(old).join(by);
  let out = '';
  let rest = str;
  for (let i = 0; i < n; i++) {
    const at = rest.indexOf(old);
    if (at < 0) break;
    out += rest.slice(0, at) + by;
    rest = rest.slice(at + old.length);
  }
  return out + rest;
}

/** Go's strings.SplitN: n == 0 gives no parts, n < 0 all of them; an empty separator splits runes. */
function split(str: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const r = runes(str);
    if (n < 0 || n >= r.length) return r;
    return [...r.slice(0, n - 1), r.slice(n - 1).join('')];
  }
  const parts = str.split(sep);
  if (n < 0 || parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

/** strings.quote: double-quoted with CEL's escapes, invalid code points replaced. */
export function quote(s: string): string {
  const escapes: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\\': '\\\\', '"': '\\"' };
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0)!;
    out += escapes[c] ?? (code >= 0xd800 && code <= 0xdfff ? '\uFFFD' : c);
  }
  return `${out}"`;
}

function join(list: unknown, sep: string): string {
  const items = Array.isArray(list) ? list : [...(list as Iterable<unknown>)];
  for (const item of items) if (typeof item !== 'string') throw celError(`join: invalid input: ${String(item)}`);
  return items.join(sep);
}

export function registerStrings(r: Registrar): void {
  const o = (name: string) => `${name}${OVERRIDE_SUFFIX}`;
  r.fn('string.charAt(int): string', (s: string, i: bigint) => {
    const chars = runes(s);
    if (i < 0n || i > BigInt(chars.length)) throw celError(`index out of range: ${i}`);
    return chars[Number(i)] ?? '';
  });
  r.fn(`string.${o('indexOf')}(string): int`, (s: string, sub: string) => (sub === '' ? 0n : s === '' ? -1n : indexOf(s, sub, 0n)));
  r.fn(`string.${o('indexOf')}(string, int): int`, (s: string, sub: string, at: bigint) => (indexOf(s, sub, at)));
  r.fn(`string.${o('lastIndexOf')}(string): int`, (s: string, sub: string) => (lastIndexOf(s, sub, undefined)));
  r.fn(`string.${o('lastIndexOf')}(string, int): int`, (s: string, sub: string, at: bigint) => (lastIndexOf(s, sub, at)));
  r.fn(`string.${o('lowerAscii')}(): string`, (s: string) => (asciiLower(s)));
  r.fn(`string.${o('upperAscii')}(): string`, (s: string) => (asciiUpper(s)));
  r.fn(`string.${o('substring')}(int): string`, (s: string, start: bigint) => (substring(s, start)));
  r.fn(`string.${o('substring')}(int, int): string`, (s: string, start: bigint, end: bigint) => (substring(s, start, end)));
  r.fn(`string.${o('trim')}(): string`, (s: string) => (s.replace(TRIM, '')));
  r.fn(`string.${o('split')}(string): list<string>`, (s: string, sep: string) => (split(s, sep, -1)));
  r.fn(`string.${o('split')}(string, int): list<string>`, (s: string, sep: string, n: bigint) => (split(s, sep, toIndex(n))));
  // Kubernetes prices replace by the length of its input; a replacement that grows the string
  // more than fourfold (replace('', x)) is also charged by what it adds, before it is built, so
  // nested replacements run out of budget long before they run out of memory.
  const growth = (s: string, old: string, by: string, n: number) => {
    const extra = replacedLength(s, old, by, n) - 4 * s.length;
    if (extra > 0) charge(traversalCost(extra));
  };
  r.fn('string.replace(string, string): string', (s: string, old: string, by: string) => (growth(s, old, by, -1), replace(s, old, by, -1)));
  r.fn('string.replace(string, string, int): string', (s: string, old: string, by: string, n: bigint) => (growth(s, old, by, toIndex(n)), replace(s, old, by, toIndex(n))));
  r.fn(`list<string>.${o('join')}(): string`, (l: unknown) => join(l, ''));
  r.fn(`list<string>.${o('join')}(string): string`, (l: unknown, sep: string) => join(l, sep));
  r.fn('string.format(list<dyn>): string', (s: string, args: unknown[]) => formatString(s, args));

  class StringsNamespace {}
  r.env.registerType('StringsNamespace', StringsNamespace);
  r.env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  r.fn('StringsNamespace.quote(string): string', (_ns: unknown, s: string) => (quote(s)));
}
