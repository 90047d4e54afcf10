// One generated request and what its generator knows about it.

import fc from 'fast-check';
import { TOKENS } from './harness.ts';

/**
 * What a valid server answers. `ok`: the request is valid by construction (2xx). `error`: it is
 * invalid by construction (4xx). `either`: its validity depends on details the generator does not
 * decide (a random byte flip, a YAML document cut short); the other checks still apply.
 */
export type Expect = 'ok' | 'error' | 'either';

export interface FuzzCase {
  category: string;
  what: string;
  method: string;
  /** Request target, with tokens (see harness.ts). */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  expect: Expect;
  /** Throw-away objects created (POST, JSON) before the request; each must answer 201. */
  setup?: { path: string; body: unknown }[];
  /** A watch: a 2xx answer is a stream, read briefly and closed. */
  stream?: boolean;
  /** Bodies of several MiB get more time than the default. */
  timeoutMs?: number;
}

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** How a case prints in fast-check's counterexample: bodies shortened, binary ones in hex. */
export function describeCase(c: FuzzCase): string {
  const body = c.body === undefined ? '' : Buffer.isBuffer(c.body) ? ` body(hex)=${short(c.body.toString('hex'), 200)}` : ` body=${JSON.stringify(short(c.body, 300))}`;
  const headers = c.headers && Object.keys(c.headers).length > 0 ? ` headers=${JSON.stringify(c.headers)}` : '';
  const setup = c.setup?.length ? ` setup=${c.setup.map((s) => `POST ${s.path}`).join(';')}` : '';
  return `[${c.category}] ${c.what} (expect ${c.expect}): ${c.method} ${short(c.target, 200)}${headers}${body}${setup}`;
}

export function mk(c: FuzzCase): FuzzCase {
  return Object.assign(c, { [fc.toStringMethod]: () => describeCase(c) });
}

export const T = TOKENS;
