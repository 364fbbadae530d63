// Concurrency stress: several host threads, each with several streams, enqueue many mixed
// operator calls (some with bad targets) and synchronize in varying orders. Every result must
// equal the serial run bit for bit, every error must surface on its own stream, nothing leaks.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "device_tensor.h"
#include "runtime/executor.h"
#include "runtime/memory.h"

using namespace testing_support;

namespace {

constexpr int64_t kN = 16, kC = 257;

// One problem: inputs shared by all, an output per call.
struct Inputs {
  DeviceTensor lp{ACL_FLOAT, {kN, kC}}, g{ACL_FLOAT, {kN, kC}}, grad{ACL_FLOAT, {}},
      good{ACL_INT64, {kN}}, bad{ACL_INT64, {kN}};
  Inputs() {
    std::mt19937_64 rng(1);
    lp.Set(Uniform(rng, kN * kC, -8.0, 0.0));
    g.Set(Normal(rng, kN * kC, 0.0, 1.0));
    grad.Set({0.5});
    std::vector<double> t(kN), b(kN);
    for (int64_t i = 0; i < kN; ++i) t[i] = b[i] = static_cast<double>((i * 13) % kC);
    b[kN / 2] = kC + 5;  // out of range
    good.Set(t);
    bad.Set(b);
  }
};

// Enqueues call `kind` (0: LogSoftmaxBackward, 1: CE grad, 2: CE grad with a bad target) into
// `out` on `stream`; the workspace (freed by the caller after synchronizing) goes to *ws_out.
int Enqueue(const Inputs& in, int kind, const DeviceTensor& out, aclrtStream stream,
            void** ws_out) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  *ws_out = nullptr;
  const int st =
      kind == 0
          ? aclnnLogSoftmaxBackwardGetWorkspaceSize(in.g.get(), in.lp.get(), -1, out.get(), &ws,
                                                    &ex)
          : aclnnCrossEntropyLossGradGetWorkspaceSize(
                in.grad.get(), in.lp.get(), kind == 1 ? in.good.get() : in.bad.get(), nullptr,
                nullptr, nullptr, const_cast<char*>("mean"), -100, 0.1, 0.0, out.get(), &ws, &ex);
  if (st != 0) return st;
  if (ws > 0 && aclrtMalloc(ws_out, ws, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return -1;
  return kind == 0 ? aclnnLogSoftmaxBackward(*ws_out, ws, ex, stream)
                   : aclnnCrossEntropyLossGrad(*ws_out, ws, ex, stream);
}

}  // namespace

TEST(Stress, ManyThreadsStreamsAndCalls) {
  const int64_t executors = aclnn_cpu::LiveExecutorCount();
  const int64_t blocks = aclnn_cpu::LiveBlockCount();
  {
    Inputs in;
    // Serial references.
    std::vector<std::vector<double>> expect(2);
    for (int kind = 0; kind < 2; ++kind) {
      DeviceTensor out(ACL_FLOAT, {kN, kC});
      void* ws = nullptr;
      ASSERT_EQ(Enqueue(in, kind, out, nullptr, &ws), 0);
      ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
      if (ws) aclrtFree(ws);
      expect[kind] = out.Get();
    }
    constexpr int kThreads = 4, kStreams = 3, kRounds = 25, kCallsPerStream = 7;
    std::atomic<int> failures{0}, calls{0}, errors_seen{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int th = 0; th < kThreads; ++th) {
      workers.emplace_back([&, th] {
        std::mt19937 rng(static_cast<unsigned>(th));
        std::vector<aclrtStream> streams(kStreams);
        for (auto& s : streams) aclrtCreateStream(&s);
        for (int round = 0; round < kRounds; ++round) {
          std::vector<std::unique_ptr<DeviceTensor>> outs;
          std::vector<int> kinds, bad_on(kStreams, 0);
          std::vector<std::vector<void*>> workspaces(kStreams);
          for (int s = 0; s < kStreams; ++s) {
            for (int k = 0; k < kCallsPerStream; ++k) {
              const int kind = static_cast<int>(rng() % 3);
              outs.push_back(
                  std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{kN, kC}));
              kinds.push_back(kind);
              void* ws = nullptr;
              if (Enqueue(in, kind, *outs.back(), streams[s], &ws) != 0) ++failures;
              if (ws) workspaces[s].push_back(ws);
              if (kind == 2) bad_on[s] = 1;
              ++calls;
            }
          }
          // Synchronize in a varying order; each stream reports exactly its own bad target.
          std::vector<int> order(kStreams);
          for (int s = 0; s < kStreams; ++s) order[s] = s;
          std::shuffle(order.begin(), order.end(), rng);
          for (int s : order) {
            const int st = aclrtSynchronizeStream(streams[s]);
            for (void* w : workspaces[s]) aclrtFree(w);
            const bool ok = bad_on[s] ? st == ACL_ERROR_INVALID_PARAM : st == 0;
            if (!ok) ++failures;
            if (st != 0) {
              ++errors_seen;
              const char* m = aclGetRecentErrMsg();
              if (m == nullptr || std::strstr(m, "target[8]") == nullptr) ++failures;
            }
          }
          for (size_t i = 0; i < outs.size(); ++i) {
            if (kinds[i] == 2) {
              if (!outs[i]->Untouched()) ++failures;  // a failed call writes nothing
            } else if (outs[i]->Get() != expect[kinds[i]]) {
              ++failures;
            }
          }
        }
        for (auto& s : streams) aclrtDestroyStream(s);
      });
    }
    for (auto& w : workers) w.join();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "stress: %d host threads x %d streams, %d calls, %d stream errors reported, "
        "%.2f s\n",
        kThreads, kStreams, calls.load(), errors_seen.load(), secs);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(errors_seen.load(), 0);
  }
  EXPECT_EQ(aclnn_cpu::LiveExecutorCount(), executors);
  EXPECT_EQ(aclnn_cpu::LiveBlockCount(), blocks);
}

// aclrtMalloc beyond the available memory: ACL_ERROR_BAD_ALLOC with a message, in a child
// process with a lowered RLIMIT_AS (release builds: sanitizers reserve huge shadow regions).
TEST(ResourceLimits, MallocBeyondAddressSpaceLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers cannot run under a lowered RLIMIT_AS";
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "sanitizers cannot run under a lowered RLIMIT_AS";
#endif
#endif
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit lim{uint64_t{2} << 30, uint64_t{2} << 30};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(2);
    void* p = nullptr;
    const int st = aclrtMalloc(&p, size_t{8} << 30, ACL_MEM_MALLOC_HUGE_FIRST);
    const char* m = aclGetRecentErrMsg();
    const bool ok = st == ACL_ERROR_BAD_ALLOC && p == nullptr && m != nullptr &&
                    std::strstr(m, "out of memory allocating 8589934592 bytes") != nullptr;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}
