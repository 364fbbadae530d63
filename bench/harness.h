// Benchmark harness: pre-faulted device buffers, operator problems through the public API, and
// the machine's memory bandwidth measured in the same process.
#ifndef ACLNN_CPU_BENCH_HARNESS_H_
#define ACLNN_CPU_BENCH_HARNESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "bandwidth.h"

namespace bench {

// An aclrtMalloc buffer filled with values of a dtype.
struct Buffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  Buffer() = default;
  Buffer(size_t n_bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// Fills n elements of dtype with uniform values in [lo, hi) (f32 computed, rounded).
void FillUniform(void* p, aclDataType dt, int64_t n, double lo, double hi, uint64_t seed);
void FillTargets(int64_t* p, int64_t n, int64_t c, int64_t ignore_index, uint64_t seed);

aclTensor* Contiguous(void* data, aclDataType dt, const std::vector<int64_t>& shape);
int64_t DtypeSize(aclDataType dt);

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_HARNESS_H_
