// Our operators through the public API: tensors allocated, filled and touched once per problem
// (the operator table's data), a repeatable executor run per iteration (phase 2 + synchronize);
// tiny shapes time the whole round trip (phase 1 + phase 2 + synchronize, workspace allocated
// once).
#include "ops_bench.h"

#include <benchmark/benchmark.h>

#include <memory>

#include "call.h"
#include "harness.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"

namespace bench {
namespace {

// The problem's tensors, built once and kept while the same problem is benchmarked again
// (Google Benchmark calls a benchmark several times; ours runs for each thread count).
optable::Call& CallFor(const optable::Problem& p) {
  static std::unique_ptr<optable::Call> call;
  static std::string key;
  const std::string k = p.ToString();
  if (!call || key != k) {
    call.reset();  // free the previous problem's tensors first
    call = std::make_unique<optable::Call>(p);
    call->FillRandom(/*keep_values=*/false);
    key = k;
  }
  return *call;
}

bool Tiny(const optable::Problem& p) {
  int64_t n = 1;
  for (int64_t d : p.shape) n *= d;
  return n <= 4096;
}

}  // namespace

std::vector<optable::Problem> Problems() {
  std::vector<optable::Problem> v;
  for (const optable::OpSpec* op : optable::Ops()) {
    for (const optable::Problem& p : op->bench_problems(op)) v.push_back(p);
  }
  return v;
}

void RunOurs(benchmark::State& state, const optable::Problem& problem, int threads) {
  aclnn_cpu::SetNumThreads(threads);
  optable::Call& c = CallFor(problem);
  const double bw = Bandwidth(c.BandwidthKind(), threads);
  uint64_t ws_size = 0;
  aclOpExecutor* ex = nullptr;
  if (Tiny(problem)) {
    // The whole round trip: phase 1 + phase 2 + synchronize, on the default stream, with a
    // workspace allocated once (as a framework's caching allocator hands it out). Every status
    // is checked: a failing call would time an error path (and leak its executor).
    if (c.Phase1(&ws_size, &ex) != 0) {
      state.SkipWithError(aclGetRecentErrMsg());
      return;
    }
    aclDestroyAclOpExecutor(ex);
    Buffer ws(ws_size > 0 ? ws_size : 32);
    for (auto _ : state) {
      if (c.Phase1(&ws_size, &ex) != 0 || c.Phase2(ws.ptr, ws_size, ex, nullptr) != 0 ||
          aclrtSynchronizeStream(nullptr) != 0) {
        state.SkipWithError(aclGetRecentErrMsg());
        break;
      }
    }
  } else {
    if (c.Phase1(&ws_size, &ex) != 0) {
      state.SkipWithError(aclGetRecentErrMsg());
      return;
    }
    aclSetAclOpExecutorRepeatable(ex);
    Buffer ws(ws_size > 0 ? ws_size : 32);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    for (int i = 0; i < 2; ++i) {  // warm-up, and the check that the call succeeds
      if (c.Phase2(ws.ptr, ws_size, ex, stream) != 0 || aclrtSynchronizeStream(stream) != 0) {
        state.SkipWithError(aclGetRecentErrMsg());
        aclDestroyAclOpExecutor(ex);
        aclrtDestroyStream(stream);
        return;
      }
    }
    for (auto _ : state) {
      c.Phase2(ws.ptr, ws_size, ex, stream);
      aclrtSynchronizeStream(stream);
    }
    aclDestroyAclOpExecutor(ex);
    aclrtDestroyStream(stream);
  }
  SetCounters(state, problem, threads, bw, aclnn_cpu::CurrentTargetName());
  aclnn_cpu::SetNumThreads(0);
}

void SetCounters(benchmark::State& state, const optable::Problem& p, int threads, double bw,
                 const std::string& target) {
  const double bytes = optable::FullTensorBytes(p);
  state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(state.iterations())));
  state.counters["bw_frac"] = benchmark::Counter(
      bytes / bw * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
  state.SetLabel(target);
}

}  // namespace bench
