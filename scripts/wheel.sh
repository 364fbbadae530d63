#!/usr/bin/env bash
# The binary wheels and the sdist, in dist/ (docs/python.md, "Installing"):
#   1. the sdist (python -m build --sdist);
#   2. the x86-64 wheel, built from that sdist (so the sdist is proven complete) and repaired
#      with auditwheel, which bundles oneDNN, Highway and libgomp into aclnn_cpu.libs/ and picks
#      the oldest manylinux tag the binaries honour;
#   3. the AArch64 wheel, cross-built from the same sdist with cmake/aarch64-linux-gnu.cmake,
#      against Debian's arm64 Python headers (downloaded and unpacked, not installed: see
#      scripts/wheel-aarch64-root.sh), and repaired the same way (auditwheel reads ELF files; it
#      needs no Arm host).
# The build tools come from python/requirements-wheel.txt in their own cached environment;
# scikit-build-core and nanobind from PyPI, as pyproject.toml's build requirements.
# usage: bash scripts/wheel.sh [x86_64] [aarch64]     (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 aarch64)
bash scripts/install-deps.sh
if [[ " ${arches[*]} " == *" aarch64 "* ]]; then bash scripts/arm64-deps.sh; fi
tools=$(bash scripts/venv.sh python/requirements-wheel.txt)
rm -f dist/aclnn_cpu-*.tar.gz
mkdir -p dist build-wheel
start=$(date +%s)
echo "== [wheel] sdist"
"$tools/bin/python" -m build --sdist --outdir dist . >build-wheel/sdist.log 2>&1 ||
  { cat build-wheel/sdist.log; exit 1; }
sdist=$(ls dist/aclnn_cpu-*.tar.gz)
echo "   $sdist"

for arch in "${arches[@]}"; do
  t0=$(date +%s)
  raw=build-wheel/raw-$arch
  rm -rf "$raw" dist/aclnn_cpu-*_"$arch".whl
  envs=()
  if [ "$arch" = aarch64 ]; then
    # Debian 12's arm64 Python is 3.11: the wheel's tag comes from the building Python's.
    pyver=$("$tools/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ "$pyver" = 3.11 ] || { echo "the AArch64 wheel needs a Python 3.11 to build it" \
      "(Debian 12's arm64 headers); this one is $pyver: PYTHON=python3.11" >&2; exit 1; }
    root=$(bash scripts/wheel-aarch64-root.sh)
    inc=$root/usr/include
    # Cross build: the toolchain file, Debian's arm64 Python headers (their pyconfig.h), the
    # extension suffix and the platform tag that the build machine's Python cannot know.
    envs=(CMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake"
          SKBUILD_CMAKE_ARGS="-DPython_INCLUDE_DIR=$inc/python3.11;-DCMAKE_CXX_FLAGS=-isystem $inc"
          SETUPTOOLS_EXT_SUFFIX=.cpython-311-aarch64-linux-gnu.so
          _PYTHON_HOST_PLATFORM=linux-aarch64)
  fi
  echo "== [wheel $arch] build from the sdist"
  env "${envs[@]}" "$tools/bin/python" -m build --wheel --outdir "$raw" "$sdist" \
    >"build-wheel/$arch.log" 2>&1 || { tail -50 "build-wheel/$arch.log"; exit 1; }
  echo "== [wheel $arch] auditwheel repair"
  # The arm64 multiarch libraries (oneDNN, Highway, libgomp) are where ld.so.conf.d says.
  PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w dist "$raw"/*.whl 2>&1 |
    grep -v "^INFO:" || true
  ls "dist/"*"$arch.whl" >/dev/null
  echo "== [wheel $arch] done in $(( $(date +%s) - t0 )) s"
done
ls -l dist
echo "== [wheel] done in $(( $(date +%s) - start )) s"
