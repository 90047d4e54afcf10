#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: no build step, no generated output.
import { register } from 'tsx/esm/api';

register();
await import('./orch-apiserver.ts');
