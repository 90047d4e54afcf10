// /version: the release of the platform this server implements (docs/rulings.md#r10).

import { readFileSync } from 'node:fs';
import { packageRoot } from '../machinery/package-files.ts';

const pkg = JSON.parse(readFileSync(new URL('package.json', packageRoot()), 'utf8')) as { version: string };

export function versionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: '36',
    emulationMajor: '1',
    emulationMinor: '36',
    minCompatibilityMajor: '1',
    minCompatibilityMinor: '35',
    gitVersion: `v1.36.0+orch-apiserver.${pkg.version}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsx',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
