#!/usr/bin/env bash
# `npm start`: install the dependencies if needed, then run the server on the embedded store
# (data in ./data unless --data-dir says otherwise). Extra arguments go to the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh >&2
exec node bin/orch-apiserver.js "$@"
