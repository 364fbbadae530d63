#include "runtime/memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "acl/acl_rt.h"
#include "core/status.h"
#include "runtime/stream.h"

namespace aclnn_cpu {
namespace {

struct Block {
  size_t usable;
  bool host;
};

struct MemoryRegistry {
  std::mutex mu;
  std::map<uintptr_t, Block> blocks;  // keyed by base address
};

MemoryRegistry& Registry() {
  static MemoryRegistry* r = new MemoryRegistry;  // never destroyed
  return *r;
}

constexpr size_t kAlign = 64;
constexpr size_t kHugePage = 2u << 20;

aclError Allocate(const char* fn, void** p, size_t size, bool huge, bool host) {
  if (p == nullptr) return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "%s: pointer is null.", fn));
  if (size == 0) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "%s: size 0 is not allowed.", fn));
  }
  if (size > (static_cast<size_t>(1) << 62)) {
    return Fail(MakeError(ACL_ERROR_BAD_ALLOC, "%s: %zu bytes cannot be allocated.", fn, size));
  }
  const size_t usable = (size + 31) / 32 * 32;
  const size_t align = huge && usable >= kHugePage ? kHugePage : kAlign;
  const size_t rounded = (usable + align - 1) / align * align;
  void* mem = std::aligned_alloc(align, rounded);
  if (mem == nullptr) {
    return Fail(MakeError(ACL_ERROR_BAD_ALLOC,
                          "%s: out of memory allocating %zu bytes (the system refused).", fn,
                          size));
  }
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(mem, rounded, MADV_HUGEPAGE);
#endif
  // Back every page now, as device memory is backed when it is returned: operators never pay
  // first-touch page faults.
  std::memset(mem, 0, rounded);
  {
    MemoryRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.blocks[reinterpret_cast<uintptr_t>(mem)] = Block{usable, host};
  }
  *p = mem;
  return ACL_SUCCESS;
}

aclError Release(const char* fn, void* p, bool host) {
  MemoryRegistry& r = Registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.blocks.find(reinterpret_cast<uintptr_t>(p));
    if (p == nullptr || it == r.blocks.end() || it->second.host != host) {
      return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "%s: %p is not the start of a block from %s.",
                            fn, p, host ? "aclrtMallocHost" : "aclrtMalloc"));
    }
    r.blocks.erase(it);
  }
  std::free(p);
  return ACL_SUCCESS;
}

}  // namespace

bool FindBlock(const void* p, BlockInfo* info) {
  MemoryRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = r.blocks.upper_bound(a);
  if (it == r.blocks.begin()) return false;
  --it;
  if (a >= it->first + it->second.usable) return false;
  info->base = reinterpret_cast<const unsigned char*>(it->first);
  info->usable = it->second.usable;
  return true;
}

int64_t LiveBlockCount() {
  MemoryRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<int64_t>(r.blocks.size());
}

}  // namespace aclnn_cpu

using aclnn_cpu::Fail;
using aclnn_cpu::MakeError;

extern "C" {

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  if (policy != ACL_MEM_MALLOC_HUGE_FIRST && policy != ACL_MEM_MALLOC_HUGE_ONLY &&
      policy != ACL_MEM_MALLOC_NORMAL_ONLY) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM,
                          "aclrtMalloc: policy %d is not one of "
                          "HUGE_FIRST (0), HUGE_ONLY (1), NORMAL_ONLY "
                          "(2).",
                          static_cast<int>(policy)));
  }
  return aclnn_cpu::Allocate("aclrtMalloc", devPtr, size, policy != ACL_MEM_MALLOC_NORMAL_ONLY,
                             false);
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void* devPtr) {
  return aclnn_cpu::Release("aclrtFree", devPtr, false);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void** hostPtr, size_t size) {
  return aclnn_cpu::Allocate("aclrtMallocHost", hostPtr, size, false, true);
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void* hostPtr) {
  return aclnn_cpu::Release("aclrtFreeHost", hostPtr, true);
}

ACL_FUNC_VISIBILITY aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value,
                                         size_t count) {
  if (devPtr == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is null."));
  }
  if (count > maxCount) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count %zu exceeds maxCount %zu.",
                          count, maxCount));
  }
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

static aclError CheckCopy(const char* fn, void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind) {
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEFAULT) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "%s: kind %d is not an aclrtMemcpyKind.", fn,
                          static_cast<int>(kind)));
  }
  if (count > destMax) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds destMax %zu.", fn, count,
                          destMax));
  }
  if (count > 0 && (dst == nullptr || src == nullptr)) {
    return Fail(
        MakeError(ACL_ERROR_INVALID_PARAM, "%s: %s is null.", fn, dst == nullptr ? "dst" : "src"));
  }
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                         aclrtMemcpyKind kind) {
  aclError e = CheckCopy("aclrtMemcpy", dst, destMax, src, count, kind);
  if (e != ACL_SUCCESS) return e;
  if (count > 0) std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream) {
  aclError e = CheckCopy("aclrtMemcpyAsync", dst, destMax, src, count, kind);
  if (e != ACL_SUCCESS) return e;
  aclnn_cpu::Stream* s = aclnn_cpu::ResolveStream(stream);
  if (s == nullptr) {
    return Fail(MakeError(ACL_ERROR_INVALID_PARAM,
                          "aclrtMemcpyAsync: %p is not a stream created by aclrtCreateStream.",
                          stream));
  }
  aclnn_cpu::StreamTask task;
  task.fn = [](const aclnn_cpu::StreamTask& t) {
    if (t.n > 0) std::memmove(t.arg0, t.arg1, t.n);
    return aclnn_cpu::OkStatus();
  };
  task.arg0 = dst;
  task.arg1 = src;
  task.n = count;
  s->Submit(std::move(task), count <= aclnn_cpu::kInlineWorkBytes);
  return ACL_SUCCESS;
}

}  // extern "C"
