#!/usr/bin/env bash
# Installs what the test suites drive for real: a local etcd (Debian's etcd-server) and kubectl
# (Debian's kubernetes-client). Tests never skip for a missing tool; they install it here or fail
# with a clear message.
set -euo pipefail
need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/sbin/etcd ] || need+=(etcd-server)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test set-up: missing ${need[*]}; install them (apt-get install -y ${need[*]}) or run as root" >&2
    exit 1
  fi
  echo "test set-up: installing ${need[*]} from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
bash scripts/ensure-deps.sh
