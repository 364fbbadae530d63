// STREAM-like bandwidth kernels (see bandwidth.h). The plain-store loops are left to the
// compiler; the non-temporal ones are written once against Highway and dispatched at run time.
#include "bandwidth.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "acl/acl.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bandwidth.cc"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = a[i] (+ b[i]) for [begin, end), whole vectors, non-temporal stores; arrays are
// vector-aligned (aclrtMalloc) and the range a multiple of the vector.
void StreamLoop(const float* a, const float* b, float* out, int64_t begin, int64_t end) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = begin; i < end; i += N) {
    auto v = hn::Load(d, a + i);
    if (b != nullptr) v = hn::Add(v, hn::Load(d, b + i));
    hn::Stream(v, d, out + i);
  }
  hwy::FlushStream();
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bench {

HWY_EXPORT(StreamLoop);

namespace {

// Each thread streams its own contiguous range (a multiple of 64 floats, so of any vector).
void StreamParallel(const float* a, const float* b, float* out, int64_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t per = (n / nt) / 64 * 64;
    const int64_t begin = t * per, end = t == nt - 1 ? n : begin + per;
    HWY_DYNAMIC_DISPATCH(StreamLoop)(a, b, out, begin, end);
  }
}

}  // namespace

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
    } else if (kind == "rd2wr1") {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < ni; ++i) pc[i] = pa[i] + pb[i];
    } else if (kind == "copy-nt") {
      StreamParallel(pa, nullptr, pb, ni, threads);
    } else if (kind == "rd2wr1-nt") {
      StreamParallel(pa, pb, pc, ni, threads);
    } else {
      throw std::invalid_argument("unknown bandwidth kind " + kind);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) runs.push_back(s);  // the first run warms up
  }
  aclrtFree(a);
  aclrtFree(b);
  aclrtFree(c);
  std::sort(runs.begin(), runs.end());
  const double streams = kind == "copy" || kind == "copy-nt" ? 2.0 : 3.0;
  return streams * static_cast<double>(n * 4) / runs[runs.size() / 2];
}

// ACLNN_CPU_BENCH_BANDWIDTH="copy/1=33.1,copy-nt/2=52.4,..." (GB/s by kind/threads): figures
// measured earlier in the same run, taken instead of measuring again.
static void SeedFromEnvironment(std::map<std::pair<std::string, int>, double>* cache) {
  const char* env = std::getenv("ACLNN_CPU_BENCH_BANDWIDTH");
  if (env == nullptr) return;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ',')) {
    const size_t slash = item.find('/'), eq = item.find('=');
    if (slash == std::string::npos || eq == std::string::npos || eq < slash) continue;
    const int threads = std::atoi(item.substr(slash + 1, eq - slash - 1).c_str());
    const double gbs = std::atof(item.substr(eq + 1).c_str());
    if (threads > 0 && gbs > 0) (*cache)[{item.substr(0, slash), threads}] = gbs * 1e9;
  }
}

double CachedBandwidth(const std::string& kind, int threads) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, double> cache;
  std::lock_guard<std::mutex> lock(mu);
  static const bool seeded = (SeedFromEnvironment(&cache), true);
  (void)seeded;
  auto key = std::make_pair(kind, threads);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, MeasureBandwidth(kind, threads)).first;
  return it->second;
}

double Bandwidth(const std::string& kind, int threads) {
  return std::max(CachedBandwidth(kind, threads), CachedBandwidth(kind + "-nt", threads));
}

}  // namespace bench
#endif  // HWY_ONCE
