// Static-partition parallel loops over OpenMP. Work is split by index range only, so kernels
// whose per-index results do not depend on the partition are deterministic for any thread count.
#ifndef ACLNN_CPU_RUNTIME_PARALLEL_H_
#define ACLNN_CPU_RUNTIME_PARALLEL_H_

#include <algorithm>
#include <cstdint>

#ifdef ACLNN_CPU_USE_OPENMP
#include <omp.h>
#endif

namespace aclnn_cpu {

// Threads the operators use: the calling thread's ScopedNumThreads, else SetNumThreads (tests,
// benchmarks), else ACLNN_CPU_NUM_THREADS, else OMP_NUM_THREADS, else all cores. Always >= 1.
// Plans take it at phase 1 and run with at most that many.
int NumThreads();
void SetNumThreads(int n);  // n <= 0 restores the environment's choice

// While alive, NumThreads() on the constructing thread returns n (n <= 0: no change): a caller
// that plans on behalf of someone with their own thread count (the Python binding: torch's
// get_num_threads()) without touching other threads' choice.
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n);
  ~ScopedNumThreads();
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  int previous_;
};

// Calls fn(thread_index, begin, end) on contiguous, near-equal ranges of [0, n), one per
// thread, using at most `max_threads` threads and at least `min_per_thread` items each.
template <typename F>
void ParallelFor(int64_t n, int max_threads, int64_t min_per_thread, F&& fn) {
  if (n <= 0) return;
  int64_t t = std::min<int64_t>(max_threads, n / std::max<int64_t>(1, min_per_thread));
  t = std::max<int64_t>(1, t);
#ifdef ACLNN_CPU_USE_OPENMP
  if (t > 1) {
#pragma omp parallel num_threads(static_cast <int>(t))
    {
      const int64_t nt = omp_get_num_threads();
      const int64_t i = omp_get_thread_num();
      const int64_t b = n * i / nt, e = n * (i + 1) / nt;
      if (b < e) fn(static_cast<int>(i), b, e);
    }
    return;
  }
#endif
  fn(0, int64_t{0}, n);
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_RUNTIME_PARALLEL_H_
