// Benchmark harness: pre-faulted device buffers (workspaces) and the machine's memory bandwidth
// measured in the same process (bandwidth.h).
#ifndef ACLNN_CPU_BENCH_HARNESS_H_
#define ACLNN_CPU_BENCH_HARNESS_H_

#include <cstddef>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "bandwidth.h"

namespace bench {

// An aclrtMalloc buffer (its pages touched by aclrtMalloc).
struct Buffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  Buffer() = default;
  explicit Buffer(size_t n_bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

}  // namespace bench

#endif  // ACLNN_CPU_BENCH_HARNESS_H_
