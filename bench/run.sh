#!/usr/bin/env bash
# Builds and runs the benchmark suite, then prints the performance table (docs/performance.md).
# Usage: [ROUNDS=3] bash bench/run.sh [CASE_REGEX]    e.g. bash bench/run.sh 'LogSoftmaxBackward/f32'
# Runs the suite ROUNDS times (default 3); the table reports medians over the rounds of times
# and of the ratios measured within each round (shared/PERF_NOTES.md, benchmark protocol).
# On a CPU with AVX-512, PyTorch (whose default kernels are AVX2) runs a second time with
# ATEN_CPU_CAPABILITY=avx512, right after each round, and the table compares with the faster of
# the two.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-.}
bash scripts/install-deps.sh
# The peer is current PyTorch: the PyPI wheel in the project's cached environment, whose
# libtorch headers, libraries and CMake package the C++ benchmark links (torch_cpu only).
venv=$(bash scripts/venv.sh)
torch_cmake=$("$venv/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_cmake" >/dev/null
cmake --build build-bench -j"$(nproc)" --target aclnn_cpu_bench
# PyTorch allocates its N x C results on every call. glibc would mmap each one and unmap it on
# free, so every call would pay the kernel's zeroing of fresh pages (PERF_NOTES B.3; 60% of
# PyTorch's cross-entropy backward time here). Steady state, as a caching allocator gives it:
# large blocks come from the heap (mmap_max=0) and stay there when freed (trim_threshold).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736
rounds=${ROUNDS:-3}
avx512=no
grep -qw avx512f /proc/cpuinfo && avx512=yes
files=() extra=()
for r in $(seq "$rounds"); do
  echo "== round $r of $rounds" >&2
  ./build-bench/bench/aclnn_cpu_bench --benchmark_min_time=1 \
    --benchmark_filter="^(Bandwidth/|(ours|pytorch)/.*($cases))" \
    --benchmark_out="build-bench/bench-$r.json" --benchmark_out_format=json
  files+=("build-bench/bench-$r.json")
  if [ $avx512 = yes ]; then
    ATEN_CPU_CAPABILITY=avx512 ./build-bench/bench/aclnn_cpu_bench --benchmark_min_time=1 \
      --benchmark_filter="^(Bandwidth/|pytorch/.*($cases))" \
      --benchmark_out="build-bench/bench-$r-avx512.json" --benchmark_out_format=json
    extra+=("build-bench/bench-$r-avx512.json")
  fi
done
if [ ${#extra[@]} -gt 0 ]; then
  python3 tools/perf_table.py "${files[@]}" --avx512 "${extra[@]}"
else
  python3 tools/perf_table.py "${files[@]}"
fi
