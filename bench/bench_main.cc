// aclnn-cpu benchmark suite. For every benchmarked problem of the operator table and 1 and all
// threads: the machine's
// bandwidth (copy and read-2/write-1 kernels with plain and non-temporal stores, same process),
// our operator, and PyTorch's, registered side by side so that ratios come from one run.
#include <benchmark/benchmark.h>
#include <sched.h>

#include <thread>

#include "harness.h"
#include "ops_bench.h"
#include "runtime/parallel.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // "All threads" = the CPUs this process may run on (taskset -c 0,1 benchmarks 2 cores of a
  // larger machine), not every CPU online.
  cpu_set_t set;
  int all = static_cast<int>(std::thread::hardware_concurrency());
  if (sched_getaffinity(0, sizeof(set), &set) == 0) all = CPU_COUNT(&set);
  std::vector<int> thread_counts = {1};
  if (all > 1) thread_counts.push_back(all);
  for (int t : thread_counts) {
    for (const char* kind : {"copy", "copy-nt", "rd2wr1", "rd2wr1-nt", "triad"}) {
      benchmark::RegisterBenchmark(
          (std::string("Bandwidth/") + kind + "/threads:" + std::to_string(t)).c_str(),
          [kind, t](benchmark::State& state) {
            double bytes = 0.0;
            for (auto _ : state) bytes = bench::MeasureBandwidth(kind, t);
            state.counters["GB/s"] = bytes / 1e9;
          })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const optable::Problem& c : bench::Problems()) {
    for (int t : thread_counts) {
      const std::string suffix = "/threads:" + std::to_string(t);
      benchmark::RegisterBenchmark(("ours/" + c.Name() + suffix).c_str(),
                                   [c, t](benchmark::State& s) { bench::RunOurs(s, c, t); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      if (bench::HavePyTorch(c)) {
        benchmark::RegisterBenchmark(("pytorch/" + c.Name() + suffix).c_str(),
                                     [c, t](benchmark::State& s) { bench::RunPyTorch(s, c, t); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
