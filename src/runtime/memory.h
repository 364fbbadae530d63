// Device memory is host memory from aclrtMalloc: 64-byte aligned, usable size rounded up to 32
// bytes, backed (pages touched) before it is returned, and remembered so that operators can
// check tensor storages against their block.
#ifndef ACLNN_CPU_RUNTIME_MEMORY_H_
#define ACLNN_CPU_RUNTIME_MEMORY_H_

#include <cstddef>
#include <cstdint>

namespace aclnn_cpu {

struct BlockInfo {
  const unsigned char* base = nullptr;
  size_t usable = 0;  // bytes usable from base
};

// The aclrtMalloc block containing `p`, if any.
bool FindBlock(const void* p, BlockInfo* info);
int64_t LiveBlockCount();

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_RUNTIME_MEMORY_H_
