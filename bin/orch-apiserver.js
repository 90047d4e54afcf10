#!/usr/bin/env node
// The orch-apiserver command. An installed package runs its compiled JavaScript (dist/): nothing is
// transpiled at run time. A source checkout (src/ beside this folder) runs its TypeScript (through
// tsx, a development dependency, where Node.js does not strip types itself), so that its tests and
// a development loop never run a stale build;
// ORCH_APISERVER_RUN=dist makes a checkout run its build instead (`npm start` builds, then does).
import { existsSync } from 'node:fs';
import module from 'node:module';

const source = new URL('../src/server/cli.ts', import.meta.url);
const fromSource = process.env.ORCH_APISERVER_RUN !== 'dist' && existsSync(source);
// Node.js that strips types itself (22.18 and newer) runs the sources as they are.
if (fromSource && !process.features.typescript) (await import('tsx/esm/api')).register();
// The build's compiled code is kept on disk (Node.js 22.1 and newer, in the temporary directory),
// so a start after the first skips compiling its modules.
if (!fromSource) module.enableCompileCache?.();
const { main } = await import(fromSource ? source.href : '../dist/server/cli.js');
await main(process.argv.slice(2));
