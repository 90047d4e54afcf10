// Preloaded (node --expose-gc --import) into a server child process by tests that measure its
// memory: SIGUSR2 runs a full garbage collection, so a reading reflects what is really retained,
// then writes GC_DONE to stderr so the test knows when to read (server-process.ts strips it).
const GC_DONE = '\u0000gc-done\u0000\n';
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  process.stderr.write(GC_DONE);
});
