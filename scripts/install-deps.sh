#!/usr/bin/env bash
# Installs the Debian packages the build, tests and benchmarks need, when they are missing.
set -euo pipefail
pkgs=(cmake make g++ clang libomp-dev libhwy-dev libgtest-dev libgmock-dev libbenchmark-dev
      python3 pkg-config libcli11-dev nlohmann-json3-dev libdnnl-dev "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
