#ifndef ACLNN_CPU_BENCH_OPS_BENCH_H_
#define ACLNN_CPU_BENCH_OPS_BENCH_H_

#include <benchmark/benchmark.h>

#include <string>

#include "shapes.h"

namespace bench {

void RunOurs(benchmark::State& state, const Case& c, int threads);
// PyTorch's CPU implementation of the same problem; false if not built with libtorch or the
// op has no PyTorch counterpart (z-loss, fp16 LogSoftmaxBackward).
bool HavePyTorch(const Case& c);
void RunPyTorch(benchmark::State& state, const Case& c, int threads);
void SetCounters(benchmark::State& state, const Case& c, int threads, double bw,
                 const std::string& target);

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_OPS_BENCH_H_
