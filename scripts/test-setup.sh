#!/usr/bin/env bash
# Installs what the test suites drive for real: a local etcd (Debian's etcd-server), kubectl
# (Debian's kubernetes-client) and the Python client (Debian's python3-kubernetes). Tests never
# skip for a missing tool; they install it here or fail with a clear message.
set -euo pipefail
need=()
command -v etcd >/dev/null 2>&1 || [ -x /usr/sbin/etcd ] || need+=(etcd-server)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
# The Python client, for Debian's own python3 (a pyenv python earlier on the PATH is not used).
/usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || need+=(python3-kubernetes)
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

# kubectl 1.20 (Debian bookworm's kubernetes-client) for the OpenAPI suite: older kubectl reads
# /openapi/v2 as protobuf. It is unpacked next to the dependencies (not installed: a newer kubectl
# may own /usr/bin/kubectl); KUBECTL_1_20 points at another binary instead.
k120=node_modules/.cache/kubectl-1.20
if [ -z "${KUBECTL_1_20:-}" ] && ! "$k120/usr/bin/kubectl" version --client 2>/dev/null | grep -q 'v1\.20\.'; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test set-up: kubectl 1.20 is missing; run as root, or set KUBECTL_1_20=/path/to/kubectl-1.20" >&2
    exit 1
  fi
  echo "test set-up: unpacking Debian's kubernetes-client (kubectl 1.20) into $k120"
  rm -rf "$k120" && mkdir -p "$k120"
  (cd "$k120" && { apt-get download kubernetes-client >/dev/null 2>&1 || { apt-get update -qq && apt-get download kubernetes-client >/dev/null; }; })
  dpkg -x "$k120"/kubernetes-client_*.deb "$k120"
fi
