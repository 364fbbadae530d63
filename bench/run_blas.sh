#!/usr/bin/env bash
# The BLAS comparison of docs/large_vocab.md: OpenBLAS and oneDNN on the fused linear
# cross-entropy's three products, f32 and bf16, on this machine's threads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh libopenblas-dev
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target aclnn_cpu_blas_bench
grep -m1 'model name' /proc/cpuinfo
./build-bench/bench/aclnn_cpu_blas_bench --benchmark_min_time=1 "$@"
