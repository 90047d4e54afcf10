// The command line's server with ServerOptions that have no flag (JSON in ORCH_TEST_SERVER_OPTIONS,
// merged over what the flags describe), for tests that need such an option in a child process.
// It prints the administrator's kubeconfig as the command line's banner does and stops on SIGTERM.
// Node.js that strips types itself (22.18 and newer) loads the sources as they are.
if (!process.features.typescript) (await import('tsx/esm/api')).register();
const { parseArgs } = await import('../../src/server/cli.ts');
const { startServer } = await import('../../src/server/server.ts');

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const merge = (into, from) => {
  for (const [k, v] of Object.entries(from)) into[k] = isObject(v) && isObject(into[k]) ? merge(into[k], v) : v;
  return into;
};
const opts = merge(parseArgs(process.argv.slice(2)), JSON.parse(process.env.ORCH_TEST_SERVER_OPTIONS ?? '{}'));
const server = await startServer(opts).catch((e) => {
  process.stderr.write(`Error: ${e.message}\n`);
  process.exit(1);
});
process.stderr.write(`serving on ${server.listening}\nexport KUBECONFIG=${server.kubeconfigPath}\n`);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
