#!/usr/bin/env bash
# The AArch64 cross toolchain and the arm64 packages the cross builds link (scripts/aarch64.sh,
# scripts/wheel.sh): arm64 is added as a multiarch architecture once, then install-deps.sh
# installs what is missing (Highway, GoogleTest and the runtime libraries for arm64, the cross
# compiler, qemu-user), plus any packages given as arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi
bash scripts/install-deps.sh g++-aarch64-linux-gnu qemu-user libhwy-dev:arm64 libgtest-dev:arm64 \
  libgomp1:arm64 libstdc++6:arm64 libdnnl2:arm64 "$@"
