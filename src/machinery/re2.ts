// The RE2 engine (re2js), loaded the first time a pattern is compiled: a schema's `pattern` or a
// CEL regular expression. Its one large module costs a start that compiles no pattern more than
// everything else it reads. Required synchronously (its CommonJS build), since patterns are compiled
// inside synchronous validation; the schema validator and CEL share this one copy.

import { createRequire } from 'node:module';
import type { RE2JS as Engine } from 're2js';

export type RE2JS = Engine;

let engine: typeof Engine | undefined;

/** The RE2JS class, loaded on first use. */
export function re2(): typeof Engine {
  return (engine ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof Engine }).RE2JS);
}
