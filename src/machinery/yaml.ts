// The YAML library, loaded the first time a YAML body, response or file is read or written: most
// starts read none before their first request, and loading it costs a start tens of milliseconds.
// Callers are synchronous (body decoding, encoders, configuration files), so it is required, not
// imported: the package ships a CommonJS build for Node.js, the same module an import would load.

import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

/** The `yaml` module, loaded on first use. */
export const yaml = (): Yaml => (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);
