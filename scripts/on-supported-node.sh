#!/usr/bin/env bash
# Runs a command on a Node.js major this project supports (22, 24 and 26: `engines`): the `node` on
# the PATH when it is one of them, else the newest, 26, fetched by scripts/with-node.sh. Node.js 20
# is past its end of life and not supported: `npm test` on a machine that has only 20 tests on 26.
set -euo pipefail
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -ge 22 ]; then
  exec "$@"
fi
exec bash "$(dirname "$0")/with-node.sh" 26 "$@"
