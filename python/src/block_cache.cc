// A cache of large host blocks behind the torch tensors the package allocates for operator
// outputs. A block whose last tensor is freed is kept, up to a byte limit, and handed to the next
// request of the same rounded size with its pages already backed: the first touch of fresh
// memory costs a page fault and the kernel's zeroing per page (on the Xeon of
// docs/performance.md a third of a K-dimensional training step's time), which a training loop
// pays again every step for tensors of the same shapes. The same idea as PyTorch's CUDA caching
// allocator, for the outputs of this package only. New blocks are aligned to 2 MiB and advised
// as huge pages. The tensors are DLPack views whose owner returns the block here.
//
// Limit: ACLNN_CPU_CACHE_BYTES (default 2 GiB; 0 turns the cache off), or set_cache_limit.
#include "block_cache.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "acl/acl_base.h"

namespace nb = nanobind;

namespace {

constexpr size_t kAlign = size_t{2} << 20;  // a huge page
constexpr size_t kDefaultLimit = size_t{2} << 30;

size_t LimitFromEnvironment() {
  const char* v = std::getenv("ACLNN_CPU_CACHE_BYTES");
  if (v == nullptr || *v == '\0') return kDefaultLimit;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<size_t>(n) : kDefaultLimit;
}

struct Block {
  void* p;
  size_t bytes;
};

class BlockCache {
 public:
  // Never destroyed: a tensor may outlive the module (freed at interpreter exit).
  static BlockCache& Instance() {
    static BlockCache* cache = new BlockCache();
    return *cache;
  }

  // A block of `bytes` (a multiple of kAlign): a cached one of that size, else a new one.
  void* Take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->bytes != bytes) continue;
        void* p = it->p;
        cached_ -= bytes;
        free_.erase(it);
        ++hits_;
        return p;
      }
      ++misses_;
    }
    void* p = std::aligned_alloc(kAlign, bytes);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP it changes nothing
    return p;
  }

  // The block of a freed tensor: kept (most recent first) while the cache stays within its
  // limit, the least recently freed blocks released beyond it.
  void Give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_front({p, bytes});
    cached_ += bytes;
    Trim(limit_);
  }

  void SetLimit(size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = limit;
    Trim(limit_);
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    Trim(0);
  }

  // (cached bytes, limit, hits, misses)
  std::tuple<size_t, size_t, uint64_t, uint64_t> Info() {
    std::lock_guard<std::mutex> lock(mu_);
    return {cached_, limit_, hits_, misses_};
  }

  bool enabled() {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_ > 0;
  }

 private:
  BlockCache() : limit_(LimitFromEnvironment()) {}

  void Trim(size_t limit) {
    while (cached_ > limit) {
      std::free(free_.back().p);
      cached_ -= free_.back().bytes;
      free_.pop_back();
    }
  }

  std::mutex mu_;
  std::list<Block> free_;
  size_t cached_ = 0, limit_;
  uint64_t hits_ = 0, misses_ = 0;
};

nb::dlpack::dtype DlpackDtype(int acl, size_t* size) {
  switch (acl) {
    case ACL_FLOAT:
      *size = 4;
      return nb::dtype<float>();
    case ACL_DOUBLE:
      *size = 8;
      return nb::dtype<double>();
    case ACL_FLOAT16:
      *size = 2;
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case ACL_BF16:
      *size = 2;
      return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    default:
      throw nb::value_error("aclnn_cpu: cached_empty takes FLOAT, DOUBLE, FLOAT16 or BF16.");
  }
}

using TorchArray = nb::ndarray<nb::pytorch, nb::device::cpu>;

// A contiguous torch tensor of `shape` and aclDataType `acl` on a cached block.
TorchArray CachedEmpty(const std::vector<int64_t>& shape, int acl) {
  size_t esize = 0;
  const nb::dlpack::dtype dt = DlpackDtype(acl, &esize);
  std::vector<size_t> dims;
  size_t bytes = esize;
  for (int64_t d : shape) {
    if (d < 0) throw nb::value_error("aclnn_cpu: cached_empty: a negative dimension.");
    dims.push_back(static_cast<size_t>(d));
    bytes *= static_cast<size_t>(d);
  }
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  if (bytes == 0) bytes = kAlign;
  auto* block = new Block{BlockCache::Instance().Take(bytes), bytes};
  nb::capsule owner(block, [](void* b) noexcept {
    auto* blk = static_cast<Block*>(b);
    BlockCache::Instance().Give(blk->p, blk->bytes);
    delete blk;
  });
  return TorchArray(block->p, dims.size(), dims.data(), owner, nullptr, dt);
}

}  // namespace

void BindBlockCache(nb::module_& m) {
  m.def("cached_empty", &CachedEmpty,
        "A contiguous torch tensor (shape, aclDataType) on a block of the output cache.");
  m.def("cache_enabled", [] { return BlockCache::Instance().enabled(); });
  m.def(
      "cache_info", [] { return BlockCache::Instance().Info(); },
      "(cached bytes, limit, hits, misses) of the output cache.");
  m.def(
      "empty_cache", [] { BlockCache::Instance().Clear(); },
      "Releases every cached block (tensors in use keep theirs).");
  m.def(
      "set_cache_limit", [](size_t limit) { BlockCache::Instance().SetLimit(limit); },
      "The output cache's limit in bytes (0: off).");
}
