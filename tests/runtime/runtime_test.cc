// The ACL runtime slice: devices, streams (order, concurrency, asynchronous errors), memory
// tracking, aclTensor creation rules, executors, error messages, logging.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "core/log.h"
#include "device_tensor.h"
#include "runtime/executor.h"
#include "runtime/memory.h"
#include "runtime/parallel.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

using namespace testing_support;
using aclnn_cpu::Plan;
using aclnn_cpu::Status;

namespace {

// A plan whose work is a callback; large work_bytes keeps it off the inline path.
class CallbackPlan final : public Plan {
 public:
  explicit CallbackPlan(std::function<Status()> fn, uint64_t ws = 0)
      : fn_(std::move(fn)), ws_(ws) {}
  Status Run(void*) const override { return fn_(); }
  uint64_t workspace_bytes() const override { return ws_; }
  uint64_t work_bytes() const override { return uint64_t{1} << 40; }
  std::string Describe() const override { return "callback"; }

 private:
  std::function<Status()> fn_;
  uint64_t ws_;
};

aclOpExecutor* MakeExecutor(std::function<Status()> fn, uint64_t ws = 0) {
  uint64_t size = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(aclnn_cpu::FinishPhase1("testOp", Status{},
                                    std::make_unique<CallbackPlan>(std::move(fn), ws), &size, &ex),
            0);
  return ex;
}

int Enqueue(aclOpExecutor* ex, aclrtStream s, void* ws = nullptr, uint64_t size = 0) {
  return aclnn_cpu::RunPhase2("testOp", ws, size, ex, s);
}

bool WaitFor(const std::atomic<bool>& flag, int ms = 5000) {
  for (int i = 0; i < ms && !flag.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return flag.load();
}

}  // namespace

TEST(Device, OneDeviceZero) {
  EXPECT_EQ(aclInit(nullptr), 0);
  uint32_t n = 0;
  EXPECT_EQ(aclrtGetDeviceCount(&n), 0);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(aclrtSetDevice(0), 0);
  int32_t d = -1;
  EXPECT_EQ(aclrtGetDevice(&d), 0);
  EXPECT_EQ(d, 0);
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(TakeMessage().find("device 1 does not exist"), std::string::npos);
  EXPECT_EQ(aclrtResetDevice(3), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtResetDevice(0), 0);
}

TEST(Stream, RunsAsynchronouslyAndInOrder) {
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  std::atomic<bool> release{false};
  std::vector<int> order;
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      // Blocks until the caller, which enqueued without waiting, releases it.
                      if (!WaitFor(release))
                        return Status{ACL_ERROR_INTERNAL_ERROR, "never released"};
                      order.push_back(1);
                      return Status{};
                    }),
                    s),
            0);
  for (int i = 2; i <= 50; ++i) {
    ASSERT_EQ(Enqueue(MakeExecutor([&order, i] {
                        order.push_back(i);
                        return Status{};
                      }),
                      s),
              0);
  }
  EXPECT_TRUE(order.empty());
  release = true;
  ASSERT_EQ(aclrtSynchronizeStream(s), 0);
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i + 1);
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Stream, DifferentStreamsRunConcurrently) {
  aclrtStream a, b;
  ASSERT_EQ(aclrtCreateStream(&a), 0);
  ASSERT_EQ(aclrtCreateStream(&b), 0);
  std::atomic<bool> a_started{false}, b_saw_a{false};
  // a waits for b and b waits for a: only concurrent streams finish both.
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      a_started = true;
                      return WaitFor(b_saw_a) ? Status{} : Status{ACL_ERROR_INTERNAL_ERROR, "a"};
                    }),
                    a),
            0);
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      if (!WaitFor(a_started)) return Status{ACL_ERROR_INTERNAL_ERROR, "b"};
                      b_saw_a = true;
                      return Status{};
                    }),
                    b),
            0);
  EXPECT_EQ(aclrtSynchronizeStream(a), 0);
  EXPECT_EQ(aclrtSynchronizeStream(b), 0);
  EXPECT_EQ(aclrtDestroyStream(a), 0);
  EXPECT_EQ(aclrtDestroyStream(b), 0);
}

TEST(Stream, ErrorsSurfaceAtSynchronizeOnce) {
  TakeMessage();
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  std::atomic<int> ran{0};
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      ++ran;
                      return Status{ACL_ERROR_INVALID_PARAM, "first failure."};
                    }),
                    s),
            0);
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      ++ran;
                      return Status{ACL_ERROR_INTERNAL_ERROR, "second failure."};
                    }),
                    s),
            0);
  EXPECT_EQ(TakeMessage(), "");  // nothing reported at enqueue time
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(TakeMessage(), "first failure.");
  EXPECT_EQ(TakeMessage(), "");             // reading clears it
  EXPECT_EQ(aclrtSynchronizeStream(s), 0);  // cleared by the previous synchronize
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Stream, DestroyWaitsForPendingWorkAndRejectsUnknown) {
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  std::atomic<bool> done{false};
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      std::this_thread::sleep_for(std::chrono::milliseconds(50));
                      done = true;
                      return Status{};
                    }),
                    s),
            0);
  EXPECT_EQ(aclrtDestroyStream(s), 0);
  EXPECT_TRUE(done.load());
  EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(TakeMessage().find("is not a stream"), std::string::npos);
  EXPECT_EQ(aclrtSynchronizeStream(reinterpret_cast<aclrtStream>(0x1234)), ACL_ERROR_INVALID_PARAM);
}

TEST(Stream, FinalizeWaitsForAllStreams) {
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  std::atomic<bool> done{false};
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      std::this_thread::sleep_for(std::chrono::milliseconds(30));
                      done = true;
                      return Status{};
                    }),
                    s),
            0);
  EXPECT_EQ(aclFinalize(), 0);
  EXPECT_TRUE(done.load());
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Stream, MemcpyAsyncIsOrderedWithWork) {
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  const size_t n = 1 << 20;  // large enough to queue rather than run inline
  std::vector<char> src1(n, 1), src2(n, 2), dst(n, 0);
  std::atomic<bool> release{false};
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      return WaitFor(release) ? Status{} : Status{1, "x"};
                    }),
                    s),
            0);
  ASSERT_EQ(aclrtMemcpyAsync(dst.data(), n, src1.data(), n, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
  ASSERT_EQ(aclrtMemcpyAsync(dst.data(), n, src2.data(), n, ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
  EXPECT_EQ(dst[0], 0);
  release = true;
  ASSERT_EQ(aclrtSynchronizeStream(s), 0);
  EXPECT_EQ(dst[0], 2);
  EXPECT_EQ(dst[n - 1], 2);
  EXPECT_EQ(aclrtMemcpyAsync(dst.data(), 1, src2.data(), 2, ACL_MEMCPY_DEVICE_TO_HOST, s),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Stream, FullQueueBlocksTheSubmitterUntilWorkRuns) {
  // The queue holds kStreamQueueDepth calls (allocated with the stream, so submitting never
  // allocates); a further submit waits for space instead of growing it.
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  std::atomic<bool> release{false};
  ASSERT_EQ(Enqueue(MakeExecutor([&] {
                      return WaitFor(release) ? Status{} : Status{1, "x"};
                    }),
                    s),
            0);
  std::vector<int> order;
  std::atomic<int> submitted{0};
  const int total = static_cast<int>(aclnn_cpu::kStreamQueueDepth) + 500;
  std::thread producer([&] {
    for (int i = 0; i < total; ++i) {
      ASSERT_EQ(Enqueue(MakeExecutor([&order, i] {
                          order.push_back(i);
                          return Status{};
                        }),
                        s),
                0);
      ++submitted;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(submitted.load(), static_cast<int>(aclnn_cpu::kStreamQueueDepth));  // first one runs
  release = true;
  producer.join();
  ASSERT_EQ(aclrtSynchronizeStream(s), 0);
  ASSERT_EQ(order.size(), static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) ASSERT_EQ(order[i], i);
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Executor, ConsumedUnlessRepeatable) {
  const int64_t before = aclnn_cpu::LiveExecutorCount();
  std::atomic<int> runs{0};
  aclOpExecutor* once = MakeExecutor([&] {
    ++runs;
    return Status{};
  });
  EXPECT_EQ(Enqueue(once, nullptr), 0);
  EXPECT_EQ(Enqueue(once, nullptr), ACLNN_ERR_PARAM_INVALID);  // consumed
  EXPECT_NE(TakeMessage().find("not a live executor"), std::string::npos);
  aclOpExecutor* rep = MakeExecutor([&] {
    ++runs;
    return Status{};
  });
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(rep), 0);
  aclrtStream s;
  ASSERT_EQ(aclrtCreateStream(&s), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Enqueue(rep, i % 2 ? s : nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(s), 0);
  EXPECT_EQ(runs.load(), 6);
  EXPECT_EQ(aclDestroyAclOpExecutor(rep), 0);
  EXPECT_EQ(Enqueue(rep, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_INNER_NULLPTR);
  EXPECT_EQ(Enqueue(nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnn_cpu::LiveExecutorCount(), before);
  EXPECT_EQ(aclrtDestroyStream(s), 0);
}

TEST(Executor, WorkspaceChecks) {
  aclOpExecutor* ex = MakeExecutor([] { return Status{}; }, 256);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(ex), 0);
  std::vector<char> ws(256);
  EXPECT_EQ(Enqueue(ex, nullptr, ws.data(), 128), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(TakeMessage().find("workspaceSize 128 is smaller than the 256 bytes"),
            std::string::npos);
  EXPECT_EQ(Enqueue(ex, nullptr, nullptr, 256), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(TakeMessage().find("workspace is null"), std::string::npos);
  EXPECT_EQ(Enqueue(ex, nullptr, ws.data(), 256), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), 0);
}

// A repeatable operator executor reruns with the tensors' current data.
TEST(Executor, RepeatableOperatorSeesCurrentData) {
  DeviceTensor g(ACL_FLOAT, {2, 3}, Layout::kTransposed), y(ACL_FLOAT, {2, 3}),
      out(ACL_FLOAT, {2, 3});
  y.Set({0, 0, 0, 0, 0, 0});  // exp(y) = 1: out = g - sum(g)
  uint64_t wsz = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), 1, out.get(), &wsz, &ex), 0);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), 0);
  void* ws = nullptr;
  if (wsz) {
    ASSERT_EQ(aclrtMalloc(&ws, wsz, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  }
  for (int k = 1; k <= 3; ++k) {
    g.Set({1.0 * k, 2.0 * k, 3.0 * k, 0, 0, 1.0 * k});
    ASSERT_EQ(aclnnLogSoftmaxBackward(ws, wsz, ex, nullptr), 0);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
    const std::vector<double> o = out.Get();
    EXPECT_EQ(o[0], 1.0 * k - 6.0 * k);
    EXPECT_EQ(o[5], 1.0 * k - 1.0 * k);
  }
  EXPECT_EQ(aclDestroyAclOpExecutor(ex), 0);
  if (ws) aclrtFree(ws);
}

// ScopedNumThreads changes only its own thread's count, nests, and restores on exit.
TEST(Threads, ScopedCountIsPerThreadAndNests) {
  const int base = aclnn_cpu::NumThreads();
  {
    aclnn_cpu::ScopedNumThreads outer(3);
    EXPECT_EQ(aclnn_cpu::NumThreads(), 3);
    int other = 0;
    std::thread([&] { other = aclnn_cpu::NumThreads(); }).join();
    EXPECT_EQ(other, base);
    {
      aclnn_cpu::ScopedNumThreads inner(5);
      EXPECT_EQ(aclnn_cpu::NumThreads(), 5);
      aclnn_cpu::ScopedNumThreads none(0);  // no override: the enclosing one stays
      EXPECT_EQ(aclnn_cpu::NumThreads(), 5);
    }
    EXPECT_EQ(aclnn_cpu::NumThreads(), 3);
  }
  EXPECT_EQ(aclnn_cpu::NumThreads(), base);
}

TEST(Memory, AlignmentPaddingAndTracking) {
  const int64_t blocks = aclnn_cpu::LiveBlockCount();
  void* p = nullptr;
  ASSERT_EQ(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  aclnn_cpu::BlockInfo info;
  ASSERT_TRUE(aclnn_cpu::FindBlock(static_cast<char*>(p) + 31, &info));
  EXPECT_EQ(info.usable, 32u);  // padded to 32 bytes, as on the NPU
  EXPECT_FALSE(aclnn_cpu::FindBlock(static_cast<char*>(p) + 32, &info));
  // CANN's documented habit: 8 bytes copied into a 2-element INT64 tensor's 8-byte block.
  const int64_t shape[] = {2}, strides[] = {1};
  aclTensor* t = aclCreateTensor(shape, 1, ACL_INT64, strides, 0, ACL_FORMAT_ND, shape, 1, p);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(aclnn_cpu::CheckStorageInBlock("op", "t", t).ok());
  aclDestroyTensor(t);
  EXPECT_EQ(aclrtFree(p), 0);
  EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);  // double free: an error, not a crash
  EXPECT_NE(TakeMessage().find("is not the start of a block"), std::string::npos);
  int local;
  EXPECT_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(&p, 8, static_cast<aclrtMemMallocPolicy>(7)), ACL_ERROR_INVALID_PARAM);
  void* h = nullptr;
  ASSERT_EQ(aclrtMallocHost(&h, 100), 0);
  EXPECT_EQ(aclrtFree(h), ACL_ERROR_INVALID_PARAM);  // host memory goes back with FreeHost
  EXPECT_EQ(aclrtFreeHost(h), 0);
  EXPECT_EQ(aclnn_cpu::LiveBlockCount(), blocks);
  TakeMessage();
}

TEST(Memory, CopyAndSet) {
  void* p = nullptr;
  ASSERT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
  EXPECT_EQ(aclrtMemset(p, 64, 7, 64), 0);
  EXPECT_EQ(static_cast<unsigned char*>(p)[63], 7);
  EXPECT_EQ(aclrtMemset(p, 64, 7, 65), ACL_ERROR_INVALID_PARAM);
  std::vector<char> host(64, 3);
  for (aclrtMemcpyKind k :
       {ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
        ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT}) {
    EXPECT_EQ(aclrtMemcpy(p, 64, host.data(), 64, k), 0);
  }
  EXPECT_EQ(static_cast<char*>(p)[10], 3);
  EXPECT_EQ(aclrtMemcpy(p, 32, host.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(TakeMessage().find("count 64 exceeds destMax 32"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(p, 64, host.data(), 8, static_cast<aclrtMemcpyKind>(9)),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(p), 0);
}

TEST(Tensor, CreationRulesAndGetters) {
  float buf[24];
  const int64_t shape[] = {2, 3}, strides[] = {3, 1}, storage[] = {24};
  aclTensor* t = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 4, ACL_FORMAT_NHWC, storage, 1, buf);
  ASSERT_NE(t, nullptr);
  int64_t* dims = nullptr;
  uint64_t n = 0;
  ASSERT_EQ(aclGetViewShape(t, &dims, &n), 0);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 3);
  delete[] dims;
  ASSERT_EQ(aclGetViewStrides(t, &dims, &n), 0);
  EXPECT_EQ(dims[0], 3);
  delete[] dims;
  ASSERT_EQ(aclGetStorageShape(t, &dims, &n), 0);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(dims[0], 24);
  delete[] dims;
  int64_t off = 0;
  EXPECT_EQ(aclGetViewOffset(t, &off), 0);
  EXPECT_EQ(off, 4);
  aclFormat f;
  EXPECT_EQ(aclGetFormat(t, &f), 0);
  EXPECT_EQ(f, ACL_FORMAT_NHWC);
  aclDataType dt;
  EXPECT_EQ(aclGetDataType(t, &dt), 0);
  EXPECT_EQ(dt, ACL_FLOAT);
  EXPECT_EQ(aclGetDataType(t, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  aclDestroyTensor(t);

  // 0-d: no dims, no strides.
  aclTensor* s = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, buf);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(aclGetViewShape(s, &dims, &n), 0);
  EXPECT_EQ(n, 0u);
  delete[] dims;
  aclDestroyTensor(s);

  const int64_t neg[] = {2, -1}, negs[] = {3, -1}, big[] = {9, 3};  // reaches element 26 of 24
  EXPECT_EQ(aclCreateTensor(neg, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  EXPECT_NE(TakeMessage().find("view dimension is negative"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(shape, 2, ACL_FLOAT, negs, 0, ACL_FORMAT_ND, storage, 1, buf), nullptr);
  EXPECT_EQ(aclCreateTensor(shape, 2, ACL_FLOAT, strides, -1, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  EXPECT_EQ(aclCreateTensor(big, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  EXPECT_NE(TakeMessage().find("reaches outside the storage"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(shape, 2, ACL_FLOAT, strides, 19, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  aclTensor* last =
      aclCreateTensor(shape, 2, ACL_FLOAT, strides, 18, ACL_FORMAT_ND, storage, 1, buf);
  EXPECT_NE(last, nullptr);  // reaches element 23 of 24
  aclDestroyTensor(last);
  EXPECT_EQ(aclCreateTensor(nullptr, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  EXPECT_EQ(aclCreateTensor(shape, 2, ACL_DT_UNDEFINED, strides, 0, ACL_FORMAT_ND, storage, 1, buf),
            nullptr);
  TakeMessage();
}

TEST(Errors, PerThreadMessages) {
  EXPECT_EQ(aclrtSetDevice(5), ACL_ERROR_INVALID_PARAM);
  std::string other = "unset";
  std::thread([&] { other = TakeMessage(); }).join();
  EXPECT_EQ(other, "");  // another thread has no message
  EXPECT_NE(TakeMessage(), "");
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
}

TEST(Logging, DebugLevelLogsEveryPlan) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);
  aclnn_cpu::ReloadLogSettings();
  DeviceTensor g(ACL_BF16, {4, 8}), y(ACL_BF16, {4, 8}), out(ACL_BF16, {4, 8});
  ::testing::internal::CaptureStderr();
  auto r = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), -1, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
  const std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
  aclnn_cpu::ReloadLogSettings();
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(err.find("[DEBUG] aclnn-cpu: aclnnLogSoftmaxBackward plan"), std::string::npos) << err;
  EXPECT_NE(err.find("target"), std::string::npos) << err;
  EXPECT_NE(err.find("threads"), std::string::npos) << err;
}

TEST(Logging, VerboseLinePerExecutionAndPerRefusal) {
  setenv("ACLNN_CPU_VERBOSE", "1", 1);
  aclnn_cpu::ReloadLogSettings();
  DeviceTensor g(ACL_FLOAT, {4, 8}), y(ACL_FLOAT, {4, 8}), out(ACL_FLOAT, {4, 8});
  DeviceTensor bad(ACL_FLOAT, {4, 9});
  ::testing::internal::CaptureStderr();
  auto ok = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), -1, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
  auto refused = RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), bad.get(), -1, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
  const std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("ACLNN_CPU_VERBOSE");
  aclnn_cpu::ReloadLogSettings();
  EXPECT_EQ(ok.status, 0);
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(err.find("aclnn_cpu_verbose,exec,aclnnLogSoftmaxBackward,"), std::string::npos) << err;
  EXPECT_NE(err.find(",ok,"), std::string::npos) << err;
  EXPECT_NE(err.find("aclnn_cpu_verbose,error,161002,aclnnLogSoftmaxBackward"), std::string::npos)
      << err;
  // Off again: nothing printed.
  ::testing::internal::CaptureStderr();
  RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), -1, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}
