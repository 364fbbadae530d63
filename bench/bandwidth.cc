#include "bandwidth.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "acl/acl.h"

namespace bench {

double MeasureBandwidth(const std::string& kind, int threads) {
  const size_t n = (256u << 20) / sizeof(float);
  // aclrtMalloc memory, as the operators get; touched before timing.
  void *a = nullptr, *b = nullptr, *c = nullptr;
  if (aclrtMalloc(&a, n * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMalloc(&b, n * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMalloc(&c, n * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    throw std::runtime_error("aclrtMalloc failed (bandwidth arrays)");
  }
  float* pa = static_cast<float*>(a);
  float* pb = static_cast<float*>(b);
  float* pc = static_cast<float*>(c);
  std::memset(a, 0, n * 4);
  std::memset(b, 0, n * 4);
  std::memset(c, 0, n * 4);
  std::vector<double> runs;
  const int64_t ni = static_cast<int64_t>(n);
  for (int rep = 0; rep < 8; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (kind == "copy") {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < ni; ++i) pb[i] = pa[i];
    } else if (kind == "triad") {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < ni; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < ni; ++i) pc[i] = pa[i] + pb[i];
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) runs.push_back(s);  // the first run warms up
  }
  aclrtFree(a);
  aclrtFree(b);
  aclrtFree(c);
  std::sort(runs.begin(), runs.end());
  const double streams = kind == "copy" ? 2.0 : 3.0;
  return streams * static_cast<double>(n * 4) / runs[runs.size() / 2];
}

double Bandwidth(const std::string& kind, int threads) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, double> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(kind, threads);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, MeasureBandwidth(kind, threads)).first;
  return it->second;
}

}  // namespace bench
