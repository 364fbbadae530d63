// Phase 2 never allocates: once an executor is planned (and a stream's worker and the OpenMP
// pool are up), running it, queued or inline, on a created or the default stream, and
// synchronizing, makes no call to malloc and friends on any thread. The test counts them by
// interposing the C allocator in this executable (so it is built only without sanitizers,
// which interpose it themselves).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "call.h"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  Count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t s) {
  Count();
  return __libc_calloc(n, s);
}
void* realloc(void* p, size_t n) {
  Count();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  Count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  Count();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  Count();
  *p = __libc_memalign(a, n);
  return *p == nullptr ? ENOMEM : 0;
}
void free(void* p) { __libc_free(p); }
}

using namespace testing_support;

namespace {

// Allocations made while `body` runs, on any thread.
template <typename F>
long AllocationsDuring(F&& body) {
  const long before = g_allocations.load();
  g_counting = true;
  body();
  g_counting = false;
  return g_allocations.load() - before;
}

// One planned, repeatable executor of every operator of the table on an (n, c) problem with
// every option on.
struct Problem {
  struct Call {
    std::unique_ptr<optable::Call> call;
    aclOpExecutor* ex = nullptr;
    void* ws = nullptr;
    uint64_t ws_bytes = 0;
  };
  std::vector<Call> calls;

  Problem(int64_t n, int64_t c) {
    for (const optable::OpSpec* op : optable::Ops()) Add(op, n, c);
  }
  void Add(const optable::OpSpec* op, int64_t n, int64_t c) {
    optable::Problem p = op->all_options(optable::DefaultProblem(op));
    p.shape = {n, c};
    Call call;
    call.call = std::make_unique<optable::Call>(p);
    call.call->FillRandom(/*keep_values=*/false);
    ASSERT_EQ(call.call->Phase1(&call.ws_bytes, &call.ex), ACLNN_SUCCESS) << op->name;
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(call.ex), ACLNN_SUCCESS) << op->name;
    if (call.ws_bytes > 0) {
      ASSERT_EQ(aclrtMalloc(&call.ws, call.ws_bytes, ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    calls.push_back(std::move(call));
  }
  ~Problem() {
    for (Call& call : calls) {
      aclDestroyAclOpExecutor(call.ex);
      if (call.ws != nullptr) aclrtFree(call.ws);
    }
  }
  // A tensor to copy into (the first one of the first operator).
  void* data() const { return calls.front().call->tensor(0)->data(); }

  void RunAll(aclrtStream stream, int times) {
    for (int i = 0; i < times; ++i) {
      for (const Call& call : calls) {
        ASSERT_EQ(call.call->Phase2(call.ws, call.ws_bytes, call.ex, stream), ACLNN_SUCCESS)
            << call.call->op().name;
      }
    }
  }
};

TEST(NoAllocation, CounterSeesAllocations) {
  // The test can fail: an allocation during the body is counted.
  const long n = AllocationsDuring([] {
    std::unique_ptr<std::vector<int>> v(new std::vector<int>(100));
    EXPECT_EQ(v->size(), 100u);
  });
  EXPECT_GE(n, 2);
}

TEST(NoAllocation, Phase2AndSynchronize) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  {
    Problem tiny(8, 8);        // runs inline on an idle stream
    Problem large(256, 2048);  // 2 MiB per tensor: queued to the worker, split over threads
    ASSERT_EQ(tiny.calls.size(), optable::Ops().size());
    ASSERT_EQ(large.calls.size(), optable::Ops().size());
    std::vector<float> host(64, 1.0f);
    // Warm-up: starts each stream's worker thread and the OpenMP pool.
    for (aclrtStream s : {stream, static_cast<aclrtStream>(nullptr)}) {
      tiny.RunAll(s, 1);
      large.RunAll(s, 1);
      ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    }
    for (aclrtStream s : {stream, static_cast<aclrtStream>(nullptr)}) {
      const long n = AllocationsDuring([&] {
        tiny.RunAll(s, 5);
        large.RunAll(s, 3);
        tiny.RunAll(s, 5);  // queued behind the large calls
        EXPECT_EQ(
            aclrtMemcpyAsync(tiny.data(), 256, host.data(), 256, ACL_MEMCPY_HOST_TO_DEVICE, s),
            ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
      });
      EXPECT_EQ(n, 0) << (s == nullptr ? "default stream" : "created stream");
    }
  }
  ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

}  // namespace
