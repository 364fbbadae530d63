#!/usr/bin/env bash
# Prints the path of a cached AArch64 Debian root holding what an arm64 Python needs and no
# more: Debian's python3.11 for arm64, its standard library, headers and runtime libraries,
# downloaded with `apt-get download` and unpacked with `dpkg -x` (nothing is installed on this
# machine). scripts/wheel.sh compiles the AArch64 extension module against its headers;
# scripts/wheel-test.sh runs the AArch64 wheel's tests with its interpreter under
# `qemu-aarch64 -L <root>` (qemu looks a program's absolute paths up in the root first).
# Progress goes to stderr; stdout is only the path.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(libc6 libgcc-s1 libstdc++6 libgomp1 python3.11-minimal libpython3.11-minimal
      libpython3.11-stdlib libpython3.11-dev libexpat1 zlib1g libffi8 libbz2-1.0 liblzma5 libssl3
      libsqlite3-0 libuuid1 libcrypt1 libncursesw6 libtinfo6 libreadline8 libtirpc3
      libnsl2 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
      libdb5.3)
key=$(printf '%s\n' "${pkgs[@]}" | sha256sum | cut -c1-12)
root=${ACLNN_CPU_VENV_DIR:-${HOME:-/root}/.cache/aclnn-cpu}/aarch64-root-$key
if [ ! -f "$root/.complete" ]; then
  echo "== unpacking Debian's arm64 Python into $root" >&2
  bash scripts/arm64-deps.sh >&2
  rm -rf "$root"
  mkdir -p "$root/.debs"
  (cd "$root/.debs" && apt-get download -qq "${pkgs[@]/%/:arm64}" >&2)
  for deb in "$root"/.debs/*.deb; do dpkg -x "$deb" "$root"; done
  rm -rf "$root/.debs"
  touch "$root/.complete"
fi
echo "$root"
