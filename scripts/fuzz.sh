#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, coverage) and runs each for SECONDS
# (default 60) from the seed corpus in fuzz/corpus/<target>/; new inputs go to
# build-fuzz/corpus-<target>/ and crashes to build-fuzz/. Exit non-zero on any finding.
# usage: bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
bash scripts/install-deps.sh
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ "-DACLNN_CPU_SANITIZE=address;undefined;fuzzer-no-link" \
  -DACLNN_CPU_BUILD_FUZZERS=ON -DACLNN_CPU_BUILD_TESTS=OFF -DACLNN_CPU_BUILD_BENCHMARKS=OFF \
  >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target phase1_fuzz phase2_fuzz
for t in phase1_fuzz phase2_fuzz; do
  mkdir -p "build-fuzz/corpus-$t"
  echo "== fuzzing $t for $secs s"
  # Leaks are reported by LeakSanitizer; the default stream's worker lives until exit by design.
  status=0
  ASAN_OPTIONS=detect_leaks=1 ACLNN_CPU_NUM_THREADS=1 \
    "build-fuzz/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix=build-fuzz/ \
    "build-fuzz/corpus-$t" "fuzz/corpus/$t" >"build-fuzz/$t.log" 2>&1 || status=$?
  grep -E "INITED|DONE|stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY|Test unit written" \
    "build-fuzz/$t.log" || true
  if [ "$status" -ne 0 ]; then
    tail -40 "build-fuzz/$t.log"
    exit "$status"
  fi
done
