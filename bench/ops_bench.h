// The benchmarked problems come from the operator table (each OpSpec's bench_problems); ours
// run through the public API, PyTorch's through libtorch where it has the operator.
#ifndef ACLNN_CPU_BENCH_OPS_BENCH_H_
#define ACLNN_CPU_BENCH_OPS_BENCH_H_

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "op_table.h"

namespace bench {

// Every operator's benchmarked problems, in table order.
std::vector<optable::Problem> Problems();

void RunOurs(benchmark::State& state, const optable::Problem& p, int threads);
// PyTorch's CPU implementation of the same problem; false if not built with libtorch or PyTorch
// has no counterpart (z-loss, fp16 LogSoftmaxBackward, an operator it lacks).
bool HavePyTorch(const optable::Problem& p);
void RunPyTorch(benchmark::State& state, const optable::Problem& p, int threads);
void SetCounters(benchmark::State& state, const optable::Problem& p, int threads, double bw,
                 const std::string& target);

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_OPS_BENCH_H_
