#include "harness.h"

#include <stdexcept>

namespace bench {

Buffer::Buffer(size_t n_bytes) : bytes(n_bytes) {
  if (aclrtMalloc(&ptr, n_bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    throw std::runtime_error("aclrtMalloc failed");
  }
}

Buffer::~Buffer() {
  if (ptr) aclrtFree(ptr);
}

}  // namespace bench
