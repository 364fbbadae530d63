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
# PyTorch allocates its N x C results on every call. glibc would mmap each one and unmap it on
# free, so every call would pay the kernel's zeroing of fresh pages (PERF_NOTES B.3; 60% of
# PyTorch's cross-entropy backward time here). Steady state, as a caching allocator gives it:
# large blocks come from the heap (mmap_max=0) and stay there when freed (trim_threshold).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736
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
