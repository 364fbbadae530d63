#include "runtime/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

namespace aclnn_cpu {
namespace {

std::atomic<int> g_override{0};
thread_local int t_override = 0;

int ParsePositive(const char* s) {
  if (s == nullptr || *s == '\0') return 0;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  return (*end == '\0' && v > 0 && v < 4096) ? static_cast<int>(v) : 0;
}

int FromEnvironment() {
  static const int n = [] {
    int v = ParsePositive(std::getenv("ACLNN_CPU_NUM_THREADS"));
    if (v == 0) v = ParsePositive(std::getenv("OMP_NUM_THREADS"));
    if (v == 0) v = static_cast<int>(std::thread::hardware_concurrency());
    return v > 0 ? v : 1;
  }();
  return n;
}

}  // namespace

int NumThreads() {
  if (t_override > 0) return t_override;
  int o = g_override.load(std::memory_order_relaxed);
  return o > 0 ? o : FromEnvironment();
}

void SetNumThreads(int n) { g_override.store(n > 0 ? n : 0); }

ScopedNumThreads::ScopedNumThreads(int n) : previous_(t_override) {
  if (n > 0) t_override = std::min(n, 4095);
}

ScopedNumThreads::~ScopedNumThreads() { t_override = previous_; }

}  // namespace aclnn_cpu
