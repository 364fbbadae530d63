// The row kernels' run-time settings (row_kernels.h): the thresholds and distances read once
// from the environment, and the scalar log-sum-exp the kernels' two sums feed. Not per target:
// the Highway code that uses them is in row_kernels.cc.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "kernels/row_kernels.h"

namespace aclnn_cpu {

namespace {
// A number of bytes from the environment variable `name` (digits only, at most `max`), else
// `fallback`.
uint64_t BytesFromEnvironment(const char* name, uint64_t fallback, uint64_t max) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env < '0' || *env > '9') return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  return *end == '\0' && v <= max ? static_cast<uint64_t>(v) : fallback;
}
}  // namespace

uint64_t StreamingOutputBytes() {
  static const uint64_t bytes =
      BytesFromEnvironment("ACLNN_CPU_STREAMING_MIN_BYTES", kStreamingOutputBytes, UINT64_MAX);
  return bytes;
}

uint64_t PrefetchBytes() {
  static const uint64_t bytes =
      BytesFromEnvironment("ACLNN_CPU_PREFETCH_BYTES", kPrefetchBytes, kMaxPrefetchBytes);
  return bytes;
}

double LogSumExpShifted(double rest, double count_at_max) {
  return std::log(count_at_max) + std::log1p(rest / count_at_max);
}

}  // namespace aclnn_cpu
