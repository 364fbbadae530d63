#!/usr/bin/env bash
# Builds and runs the benchmark suite, then prints the performance table (docs/performance.md).
# Usage: bash bench/run.sh [CASE_REGEX]      e.g. bash bench/run.sh 'LogSoftmaxBackward/f32'
# On a CPU with AVX-512, PyTorch (whose default kernels are AVX2) runs a second time with
# ATEN_CPU_CAPABILITY=avx512, right after, and the table compares with the faster of the two.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-.}
bash scripts/install-deps.sh libtorch-dev
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target aclnn_cpu_bench
# Fresh PyTorch gradient buffers would otherwise pay 4 KiB first-touch faults (PERF_NOTES B.3).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
./build-bench/bench/aclnn_cpu_bench --benchmark_min_time=1 \
  --benchmark_filter="^(Bandwidth/|(ours|pytorch)/.*($cases))" \
  --benchmark_out=build-bench/bench.json --benchmark_out_format=json
extra=()
if grep -qw avx512f /proc/cpuinfo; then
  ATEN_CPU_CAPABILITY=avx512 ./build-bench/bench/aclnn_cpu_bench --benchmark_min_time=1 \
    --benchmark_filter="^(Bandwidth/|pytorch/.*($cases))" \
    --benchmark_out=build-bench/bench-avx512.json --benchmark_out_format=json
  extra=(build-bench/bench-avx512.json)
fi
python3 tools/perf_table.py build-bench/bench.json "${extra[@]}"
