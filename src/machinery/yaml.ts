// The YAML libraries, loaded the first time a YAML body, response or file is read or written: most
// starts read none before their first request, and loading one costs a start tens of milliseconds.
// Callers are synchronous (body decoding, encoders, configuration files), so they are required,
// not imported: both packages ship a CommonJS build for Node.js, the same module an import would load.
//
// `yaml` writes YAML and reads configuration files; `js-yaml` reads request bodies and CRD files
// (yaml-read.ts), about ten times faster than `yaml` on large documents.

import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
type JsYaml = typeof import('js-yaml');

let loaded: Yaml | undefined;
let loadedJs: JsYaml | undefined;

/** The `yaml` module, loaded on first use. */
export const yaml = (): Yaml => (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);

/** The `js-yaml` module, loaded on first use. */
export const jsYaml = (): JsYaml => (loadedJs ??= createRequire(import.meta.url)('js-yaml') as JsYaml);
