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
bench=./build-bench/bench/aclnn_cpu_bench
# One process per problem (ours and PyTorch, 1 and all threads): with the tunables above the
# heap keeps what it grew to, and one process for the whole list grew past this machine's 24
# GiB in its second round (the out-of-memory killer, 2026-12-04). The round's bandwidth is
# measured once, first, and handed to every process of the round.
list() { "$bench" --benchmark_list_tests --benchmark_filter="$1" | sed -E 's#^[a-z]+/(.*)/threads:[0-9]+/real_time$#\1#' | uniq; }
escape() { sed 's/[].[+*?^$(){}|\\]/\\&/g' <<<"$1"; }
mapfile -t problems < <(list "^ours/.*($cases)")
mapfile -t with_torch < <(list "^pytorch/.*($cases)")
rounds_dirs=() extra_dirs=()
for r in $(seq "$rounds"); do
  echo "== round $r of $rounds (${#problems[@]} problems)" >&2
  dir=build-bench/round-$r
  rm -rf "$dir" && mkdir -p "$dir/default" "$dir/avx512"
  "$bench" --benchmark_filter='^Bandwidth/' --benchmark_out="$dir/default/000.json" \
    --benchmark_out_format=json
  # Every process of the round takes these figures for its fractions (bandwidth.h).
  ACLNN_CPU_BENCH_BANDWIDTH=$(python3 -c 'import json, sys
print(",".join(b["name"].split("/", 1)[1].replace("threads:", "").replace("/iterations:1", "")
               + "=" + str(b["GB/s"]) for b in json.load(open(sys.argv[1]))["benchmarks"]))' \
    "$dir/default/000.json")
  export ACLNN_CPU_BENCH_BANDWIDTH
  i=0
  for p in "${problems[@]}"; do
    i=$((i + 1))
    out=$(printf '%s/%03d.json' "$dir/default" "$i")
    re=$(escape "$p")
    "$bench" --benchmark_min_time=1 --benchmark_filter="^(ours|pytorch)/$re/threads:" \
      --benchmark_out="$out" --benchmark_out_format=json
    if [ $avx512 = yes ] && printf '%s\n' "${with_torch[@]}" | grep -qxF -- "$p"; then
      ATEN_CPU_CAPABILITY=avx512 "$bench" --benchmark_min_time=1 \
        --benchmark_filter="^pytorch/$re/threads:" \
        --benchmark_out="$(printf '%s/%03d.json' "$dir/avx512" "$i")" --benchmark_out_format=json
    fi
  done
  rounds_dirs+=("$dir/default")
  extra_dirs+=("$dir/avx512")
done
if [ $avx512 = yes ]; then
  python3 tools/perf_table.py "${rounds_dirs[@]}" --avx512 "${extra_dirs[@]}"
else
  python3 tools/perf_table.py "${rounds_dirs[@]}"
fi
