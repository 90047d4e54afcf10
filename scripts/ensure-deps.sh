#!/usr/bin/env bash
# Installs the npm dependencies when they are missing or older than the lock file, so every entry
# point (npm start, npm test) works on a fresh clone.
set -euo pipefail
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
