// Regular expressions with RE2 semantics (re2js): matches, find, findAll. A pattern RE2 refuses
// (a lookahead, a backreference) is an error, and when it is written as a literal the compiler
// reports it before anything runs (rewrite.ts calls `compileRegex`). RE2 runs in linear time, so
// no pattern can backtrack catastrophically.

import { re2, type RE2JS } from '../../machinery/re2.ts';
import { OVERRIDE_SUFFIX } from '../errors.ts';
import { celError, toIndex, type Registrar } from './register.ts';

const CACHE_SIZE = 256;
const cache = new Map<string, RE2JS>();

/** The compiled pattern, or the RE2 error message ("error parsing regexp: …"). */
export function compileRegex(pattern: string): RE2JS | string {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = re2().compile(pattern);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(pattern, re);
  return re;
}

function regex(pattern: string, str: string, illegal: boolean): RE2JS {
  const re = compileRegex(pattern);
  if (typeof re === 'string') throw celError(illegal ? `Illegal regex: ${re}` : re);
  return re;
}

function findAll(str: string, pattern: string, limit: number): string[] {
  const m = regex(pattern, str, true).matcher(str);
  const out: string[] = [];
  while ((limit < 0 || out.length < limit) && m.find()) out.push(m.group() ?? '');
  return out;
}

export function registerRegex(r: Registrar): void {
  const matches = (s: string, p: string) => regex(p, s, false).matcher(s).find();
  r.fn(`string.matches${OVERRIDE_SUFFIX}(string): bool`, matches);
  r.fn('matches(string, string): bool', matches);
  r.fn('string.find(string): string', (s: string, p: string) => {
    const m = regex(p, s, true).matcher(s);
    return m.find() ? (m.group() ?? '') : '';
  });
  r.fn('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1));
  r.fn('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => findAll(s, p, toIndex(n)));
}
