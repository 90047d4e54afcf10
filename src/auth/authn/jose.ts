// jose, loaded on first use: a server signs or verifies a token only once one is asked for (a
// service-account token issued or presented, an OIDC token), and most starts never do. It is an
// ES module, required all the same (Node.js 22.12 and newer require an ES module without a flag):
// the built package runs its bundle as a vm script (package-entry.ts), where an `import()` needs
// Node's experimental loader option, which prints an ExperimentalWarning at its first use.

import { createRequire } from 'node:module';

type Jose = typeof import('jose');

let loading: Promise<Jose> | undefined;

/** The jose module, loaded the first time it is asked for. */
export const jose = (): Promise<Jose> => (loading ??= Promise.resolve().then(() => createRequire(import.meta.url)('jose') as Jose));
