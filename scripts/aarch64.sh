#!/usr/bin/env bash
# The AArch64 stage: cross-builds the library and its tests for aarch64 with
# cmake/aarch64-linux-gnu.cmake (Debian's g++-aarch64-linux-gnu; Highway, GoogleTest and the
# runtime libraries as arm64 multiarch packages) and runs CTest under qemu-aarch64 once per CPU:
#   neon     -cpu cortex-a72 (NEON only: the Kunpeng 920 class)      targets NEON, SCALAR
#   sve128   -cpu max, SVE vector length 128 bits                     SVE2_128, SVE2, SVE, NEON, SCALAR
#   sve256   -cpu max, 256 bits                                       SVE_256, SVE2, SVE, NEON, SCALAR
#   sve512   -cpu max, 512 bits                                       SVE2, SVE, NEON, SCALAR
#   sve2048  -cpu max, 2048 bits                                      SVE2, SVE, NEON, SCALAR
# (tests that loop over targets force each one; the dispatch test prints them with their vector
# sizes). Under emulation a test runs 30-100x slower than natively, so:
#   neon runs the whole suite except the large sweeps (the per-operator accuracy sweeps, the
#     2^31-element tensor and the 32 MiB streaming test), whose every operator, dtype, layout
#     and target is covered by the operator-table and kernel tests it does run;
#   the SVE lengths run what depends on the vector length: every kernel, the operator table's
#     accuracy of every operator, dtype, layout and option set, exp, dispatch, determinism across
#     thread counts, and the streams, stress and no-allocation tests (the weak memory model).
# usage: bash scripts/aarch64.sh [CONFIG...]     (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(neon sve128 sve256 sve512 sve2048)

# The arm64 packages come through multiarch.
bash scripts/arm64-deps.sh

dir=build-aarch64
start=$(date +%s)
echo "== [aarch64] cross build"
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=ON -DACLNN_CPU_BUILD_BENCHMARKS=OFF \
  -DACLNN_CPU_BUILD_DRIVER=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "== [aarch64] built in $(( $(date +%s) - start )) s"

heavy="Accuracy|LargeTensor|StreamingStores"
vl_dependent="RowKernels|OpTable|KernelExp|Dispatch|Determinism|Stream\\.|Stress|NoAllocation"
export ACLNN_CPU_UNDER_EMULATION=qemu-aarch64
for cfg in "${configs[@]}"; do
  case $cfg in
    neon) cpu=cortex-a72 args=(-E "$heavy") ;;
    sve128) cpu=max,sve-default-vector-length=16 args=(-R "$vl_dependent") ;;
    sve256) cpu=max,sve-default-vector-length=32 args=(-R "$vl_dependent") ;;
    sve512) cpu=max,sve-default-vector-length=64 args=(-R "$vl_dependent") ;;
    sve2048) cpu=max,sve-default-vector-length=256 args=(-R "$vl_dependent") ;;
    *) echo "unknown aarch64 configuration $cfg" >&2; exit 2 ;;
  esac
  t0=$(date +%s)
  [ "$cfg" = neon ] && echo "== [aarch64 neon] left out under emulation (30-100x slower): $heavy"
  echo "== [aarch64 $cfg] QEMU_CPU=$cpu: $(QEMU_CPU=$cpu qemu-aarch64 "$dir/tests/dispatch_test" \
    --gtest_filter=Dispatch.ReportsTargetsAndVectorSizes | grep '^dispatch:')"
  QEMU_CPU=$cpu ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "${args[@]}"
  echo "== [aarch64 $cfg] done in $(( $(date +%s) - t0 )) s"
done
echo "== [aarch64] done in $(( $(date +%s) - start )) s"
