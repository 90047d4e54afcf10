// jose, loaded on first use: a server signs or verifies a token only once one is asked for (a
// service-account token issued or presented, an OIDC token), and most starts never do.

type Jose = typeof import('jose');

let loading: Promise<Jose> | undefined;

/** The jose module, imported the first time it is asked for. */
export const jose = (): Promise<Jose> => (loading ??= import('jose'));
