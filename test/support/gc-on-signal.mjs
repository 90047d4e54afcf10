// Preloaded (node --expose-gc --import) into a server child process by tests that measure its
// memory: SIGUSR2 runs a full garbage collection, so a reading reflects what is really retained.
process.on('SIGUSR2', () => globalThis.gc?.());
