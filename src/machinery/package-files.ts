// Files the package reads at run time (its package.json, the protobuf schemas, the write worker's
// entry), located from the package's root rather than from the module that reads them: the build
// bundles our modules, so a module's code may run from a shared chunk elsewhere under dist/, and
// its own `import.meta.url` no longer says where its neighbours in src/ were put.

import { existsSync } from 'node:fs';

/** True when this runs as the TypeScript sources (src/), false as the build (dist/). */
export const FROM_SOURCE = import.meta.url.endsWith('.ts');

let root: URL | undefined;

/** The package's root folder: the nearest folder above this code that holds a package.json (src/ and dist/ hold none). */
export function packageRoot(): URL {
  if (root) return root;
  for (let dir = new URL('.', import.meta.url); ; ) {
    if (existsSync(new URL('package.json', dir))) return (root = dir);
    const up = new URL('..', dir);
    if (up.href === dir.href) throw new Error(`no package.json above ${import.meta.url}`);
    dir = up;
  }
}

/**
 * A file of the code's tree by its path below src/ (`wire/protobuf/core.proto`): the same path
 * under src/ from the sources, under dist/ in the build (which copies the files it needs there).
 * A module's own path ends in `.ts` in the sources, `.js` in the build: pass it as `.ts`.
 */
export function codeFile(path: string): URL {
  return new URL(`${FROM_SOURCE ? 'src' : 'dist'}/${FROM_SOURCE ? path : path.replace(/\.ts$/, '.js')}`, packageRoot());
}
