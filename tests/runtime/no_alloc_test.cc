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

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "device_tensor.h"

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

// One planned, repeatable executor of each operator on an (n, c) problem.
struct Problem {
  int64_t n, c;
  DeviceTensor x, g, lp, out, grad_loss, target, weight, loss, zl, lse;
  struct Call {
    const char* name;
    aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream);
    aclOpExecutor* ex = nullptr;
    void* ws = nullptr;
    uint64_t ws_bytes = 0;
  };
  std::vector<Call> calls;

  Problem(int64_t n_, int64_t c_)
      : n(n_),
        c(c_),
        x(ACL_FLOAT, {n_, c_}),
        g(ACL_FLOAT, {n_, c_}),
        lp(ACL_FLOAT, {n_, c_}),
        out(ACL_FLOAT, {n_, c_}),
        grad_loss(ACL_FLOAT, {}),
        target(ACL_INT64, {n_}),
        weight(ACL_FLOAT, {c_}),
        loss(ACL_FLOAT, {}),
        zl(ACL_FLOAT, {}),
        lse(ACL_FLOAT, {n_}) {
    std::mt19937_64 rng(7);
    x.Set(Normal(rng, n * c, 0.0, 2.0));
    g.Set(Normal(rng, n * c, 0.0, 1.0));
    lp.Set(Uniform(rng, n * c, -9.0, -0.1));
    grad_loss.Set({1.0});
    std::vector<double> t(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) t[i] = static_cast<double>((i * 7) % c);
    target.Set(t);
    weight.Set(Uniform(rng, c, 0.5, 2.0));
    char mean[] = "mean";
    Add("LogSoftmaxBackward", aclnnLogSoftmaxBackward, [&](uint64_t* ws, aclOpExecutor** ex) {
      return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), lp.get(), -1, out.get(), ws, ex);
    });
    Add("LogSoftmax", aclnnLogSoftmax, [&](uint64_t* ws, aclOpExecutor** ex) {
      return aclnnLogSoftmaxGetWorkspaceSize(x.get(), 1, out.get(), ws, ex);
    });
    Add("CrossEntropyLossGrad", aclnnCrossEntropyLossGrad, [&](uint64_t* ws, aclOpExecutor** ex) {
      return aclnnCrossEntropyLossGradGetWorkspaceSize(grad_loss.get(), lp.get(), target.get(),
                                                       weight.get(), nullptr, nullptr, mean, -100,
                                                       0.1, 0.0, out.get(), ws, ex);
    });
    Add("CrossEntropyLoss", aclnnCrossEntropyLoss, [&](uint64_t* ws, aclOpExecutor** ex) {
      return aclnnCrossEntropyLossGetWorkspaceSize(x.get(), target.get(), weight.get(), mean, -100,
                                                   0.1, 1e-4, true, loss.get(), out.get(), zl.get(),
                                                   lse.get(), ws, ex);
    });
  }
  ~Problem() {
    for (Call& call : calls) {
      aclDestroyAclOpExecutor(call.ex);
      if (call.ws != nullptr) aclrtFree(call.ws);
    }
  }

  template <typename Plan>
  void Add(const char* name, aclnnStatus (*run)(void*, uint64_t, aclOpExecutor*, aclrtStream),
           Plan&& plan) {
    Call call{name, run};
    ASSERT_EQ(plan(&call.ws_bytes, &call.ex), ACLNN_SUCCESS) << name;
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(call.ex), ACLNN_SUCCESS) << name;
    if (call.ws_bytes > 0) {
      ASSERT_EQ(aclrtMalloc(&call.ws, call.ws_bytes, ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    calls.push_back(call);
  }

  void RunAll(aclrtStream stream, int times) {
    for (int i = 0; i < times; ++i) {
      for (const Call& call : calls) {
        ASSERT_EQ(call.run(call.ws, call.ws_bytes, call.ex, stream), ACLNN_SUCCESS) << call.name;
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
            aclrtMemcpyAsync(tiny.x.data(), 256, host.data(), 256, ACL_MEMCPY_HOST_TO_DEVICE, s),
            ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
      });
      EXPECT_EQ(n, 0) << (s == nullptr ? "default stream" : "created stream");
    }
  }
  ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

}  // namespace
