#!/usr/bin/env bash
# The main job: build the library, install the SDK to ./_install, build the example programs of
# examples/ against that install exactly as CANN documents (CMake, -std=c++11, SDK path from
# the environment after `source set_env.sh`), and run them; then a demo of the installed
# aclnn-cpu-driver checking and timing a small problem of every operator and option; then the
# Python package installed into the project's cached environment (PyTorch from PyPI) and its
# training demo, PyTorch's loss against ours (scripts/python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build-sdk -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF \
  -DACLNN_CPU_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-sdk -j"$jobs"
rm -rf _install
cmake --install build-sdk --prefix "$PWD/_install" >/dev/null
echo "== SDK installed to $PWD/_install"

# A fresh shell, as a CANN user has it: only set_env.sh tells where the SDK is.
env -i PATH="$PATH" HOME="${HOME:-/root}" bash -c '
  set -euo pipefail
  source _install/set_env.sh
  rm -rf build-examples
  # CANN example programs pass string literals to char* parameters; the compiler warns about
  # that habit, so the build log is shown only if the build fails.
  if ! { cmake -S examples -B build-examples && cmake --build build-examples -j"$(nproc)"; } \
      >build-examples.log 2>&1; then
    cat build-examples.log
    exit 1
  fi
  for exe in build-examples/bin/*; do
    echo "== $(basename "$exe")"
    "$exe"
  done
  echo "== test_soc_name, unchanged, under the SoC profile of an Atlas A2 (ACLNN_CPU_SOC=Ascend910B2)"
  ACLNN_CPU_SOC=Ascend910B2 build-examples/bin/test_soc_name
  echo "== aclnn-cpu-driver --batch driver/problems/smoke.txt --check --perf"
  aclnn-cpu-driver --batch driver/problems/smoke.txt --check --perf --reps 5
'
bash scripts/python.sh demo
