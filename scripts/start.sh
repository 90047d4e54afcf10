#!/usr/bin/env bash
# `npm start`: install the dependencies if needed, build the JavaScript the package runs (dist/,
# quick when nothing changed), then run the server from it on the embedded store (data in ./data
# unless --data-dir says otherwise), on a supported Node.js (scripts/on-supported-node.sh). Extra
# arguments go to the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh >&2
npm run --silent build >&2
ORCH_APISERVER_RUN=dist exec bash scripts/on-supported-node.sh node bin/orch-apiserver.js "$@"
