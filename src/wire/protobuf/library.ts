// protobufjs, loaded the first time a protobuf body is read, a schema parsed or the protobuf form
// of /openapi/v2 asked for: a server that never meets protobuf never loads it. Its callers are
// synchronous, so it is required (it is a CommonJS package: the same module an import would load).

import { createRequire } from 'node:module';

type Protobuf = typeof import('protobufjs');

let loaded: Protobuf | undefined;

/** The `protobufjs` module, loaded on first use. */
export const protobufjs = (): Protobuf => (loaded ??= createRequire(import.meta.url)('protobufjs') as Protobuf);
