#include "harness.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

#include "core/dtype.h"

namespace bench {

Buffer::Buffer(size_t n_bytes) : bytes(n_bytes) {
  if (aclrtMalloc(&ptr, n_bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    throw std::runtime_error("aclrtMalloc failed");
  }
}

Buffer::~Buffer() {
  if (ptr) aclrtFree(ptr);
}

int64_t DtypeSize(aclDataType dt) { return aclnn_cpu::DtypeSize(dt); }

void FillUniform(void* p, aclDataType dt, int64_t n, double lo, double hi, uint64_t seed) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
    std::uniform_real_distribution<double> d(lo, hi);
    for (int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) {
      aclnn_cpu::StoreFromDouble(dt, p, i, d(rng));
    }
  }
}

void FillTargets(int64_t* p, int64_t n, int64_t c, int64_t ignore_index, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> cls(0, c - 1);
  for (int64_t i = 0; i < n; ++i) p[i] = (i % 17 == 16) ? ignore_index : cls(rng);
}

aclTensor* Contiguous(void* data, aclDataType dt, const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return aclCreateTensor(shape.data(), shape.size(), dt, strides.data(), 0, ACL_FORMAT_ND,
                         shape.data(), shape.size(), data);
}

}  // namespace bench
