#!/usr/bin/env bash
# The whole test suite: configure, build and run CTest in each configuration of
# ACLNN_CPU_TEST_CONFIGS (default: fuzz wheel release asan tsan aarch64):
#   fuzz     - both libFuzzer targets for 60 s each (scripts/fuzz.sh; clang, ASan + UBSan)
#   wheel    - the binary wheels and the sdist (scripts/wheel.sh: x86-64 and AArch64, repaired
#              by auditwheel), then tested as installed in fresh environments
#              (scripts/wheel-test.sh): auditwheel show, the whole pytest suite (PyTorch from
#              the project's cached environment), CANN's examples against the wheel's SDK, the
#              driver; under qemu-x86_64 CPU models without AVX-512 and without AVX2; the
#              AArch64 wheel under qemu with NEON and SVE
#   python   - (not by default: `wheel` runs the same suite) pip install . into the project's
#              cached environment, then pytest (scripts/python.sh)
#   release  - optimized build, every test
#   asan     - AddressSanitizer + UndefinedBehaviorSanitizer (leaks included)
#   tsan     - ThreadSanitizer, with clang and LLVM's libomp + Archer so OpenMP is understood
#   aarch64  - cross build for AArch64, CTest under qemu-aarch64 with NEON and SVE at 128, 256,
#              512 and 2048 bits (scripts/aarch64.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
configs=${ACLNN_CPU_TEST_CONFIGS:-fuzz wheel release asan tsan aarch64}
for cfg in $configs; do
  start=$(date +%s)
  if [ "$cfg" = fuzz ]; then
    bash scripts/fuzz.sh 60
    echo "== [fuzz] done in $(( $(date +%s) - start )) s"
    continue
  fi
  if [ "$cfg" = wheel ]; then
    bash scripts/wheel.sh
    bash scripts/wheel-test.sh
    echo "== [wheel] done in $(( $(date +%s) - start )) s"
    continue
  fi
  if [ "$cfg" = python ]; then
    bash scripts/python.sh test
    echo "== [python] done in $(( $(date +%s) - start )) s"
    continue
  fi
  if [ "$cfg" = aarch64 ]; then
    bash scripts/aarch64.sh
    continue
  fi
  dir=build-$cfg
  case $cfg in
    release) args=(-DCMAKE_BUILD_TYPE=Release) ; envs=() ;;
    asan) args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DACLNN_CPU_SANITIZE=address;undefined")
          envs=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1) ;;
    tsan) args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DACLNN_CPU_SANITIZE=thread
                -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
          # The default stream's worker (and the OpenMP pool it starts) lives until exit by
          # design, so thread "leaks" at exit are not reported.
          envs=(OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so
                "TSAN_OPTIONS=halt_on_error=1 ignore_noninstrumented_modules=1 report_thread_leaks=0") ;;
    *) echo "unknown configuration $cfg" >&2; exit 2 ;;
  esac
  echo "== [$cfg] configure and build"
  cmake -S . -B "$dir" "${args[@]}" -DACLNN_CPU_BUILD_TESTS=ON -DACLNN_CPU_BUILD_BENCHMARKS=OFF \
    >/dev/null
  cmake --build "$dir" -j"$jobs"
  echo "== [$cfg] ctest"
  env "${envs[@]}" ctest --test-dir "$dir" --output-on-failure -j"$jobs"
  echo "== [$cfg] done in $(( $(date +%s) - start )) s"
done
