#!/usr/bin/env bash
# Builds and runs the benchmark suite, then prints the performance table (docs/performance.md).
# Usage: bash bench/run.sh [extra Google Benchmark flags, e.g. --benchmark_filter=LogSoftmax]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh libtorch-dev
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target aclnn_cpu_bench
# Fresh PyTorch gradient buffers would otherwise pay 4 KiB first-touch faults (PERF_NOTES B.3).
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ./build-bench/bench/aclnn_cpu_bench \
  --benchmark_min_time=1 --benchmark_out=build-bench/bench.json --benchmark_out_format=json "$@"
python3 tools/perf_table.py build-bench/bench.json
