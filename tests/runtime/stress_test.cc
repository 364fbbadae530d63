// Concurrency stress: several host threads, each with several streams, enqueue many mixed
// operator calls (some with bad targets) and synchronize in varying orders. Every result must
// equal the serial run bit for bit, every error must surface on its own stream, nothing leaks.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "call.h"
#include "runtime/executor.h"
#include "runtime/memory.h"

using namespace testing_support;

namespace {

constexpr int64_t kN = 16, kC = 257, kBadRow = kN / 2;

// One kind of call: an operator of the table with every option on; "bad" ones have a class
// index past C in row kBadRow (operators with class indices only).
struct Kind {
  optable::Problem problem;
  int index_param = -1;  // the class-index parameter of a bad kind
  bool bad = false;
  std::vector<double> expect;  // the serial run's outputs (good kinds)
};

// A fresh call of `kind` (its own inputs and outputs), filled from the kind's seed.
std::unique_ptr<optable::Call> MakeCall(const Kind& kind) {
  auto c = std::make_unique<optable::Call>(kind.problem);
  c->FillRandom();
  if (kind.bad) {
    std::vector<double> t = c->inputs()[static_cast<size_t>(kind.index_param)];
    t[kBadRow] = kC + 5;  // out of range
    c->Set(static_cast<size_t>(kind.index_param), t);
  }
  return c;
}

// Enqueues `c` on `stream`; the workspace (freed by the caller after synchronizing) goes to
// *ws_out.
int Enqueue(optable::Call& c, aclrtStream stream, void** ws_out) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  *ws_out = nullptr;
  const int st = c.Phase1(&ws, &ex);
  if (st != 0) return st;
  if (ws > 0 && aclrtMalloc(ws_out, ws, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return -1;
  return c.Phase2(*ws_out, ws, ex, stream);
}

}  // namespace

TEST(Stress, ManyThreadsStreamsAndCalls) {
  const int64_t executors = aclnn_cpu::LiveExecutorCount();
  const int64_t blocks = aclnn_cpu::LiveBlockCount();
  {
    std::vector<Kind> kinds;
    for (const optable::OpSpec* op : optable::Ops()) {
      Kind k;
      k.problem = op->all_options(optable::DefaultProblem(op));
      k.problem.shape = {kN, kC};
      k.problem.ignore_index = -100;
      kinds.push_back(k);
      k.index_param = op->IndexParam(k.problem);
      if (k.index_param >= 0) {
        k.bad = true;
        kinds.push_back(k);
      }
    }
    // Serial references.
    for (Kind& k : kinds) {
      if (k.bad) continue;
      std::unique_ptr<optable::Call> c = MakeCall(k);
      void* ws = nullptr;
      ASSERT_EQ(Enqueue(*c, nullptr, &ws), 0) << aclGetRecentErrMsg();
      ASSERT_EQ(aclrtSynchronizeStream(nullptr), 0);
      if (ws) aclrtFree(ws);
      k.expect = c->Outputs();
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
          std::vector<std::unique_ptr<optable::Call>> outs;
          std::vector<const Kind*> made;
          std::vector<std::string> bad_param(kStreams);
          std::vector<std::vector<void*>> workspaces(kStreams);
          for (int s = 0; s < kStreams; ++s) {
            for (int k = 0; k < kCallsPerStream; ++k) {
              const Kind& kind = kinds[rng() % kinds.size()];
              outs.push_back(MakeCall(kind));
              made.push_back(&kind);
              void* ws = nullptr;
              if (Enqueue(*outs.back(), streams[s], &ws) != 0) ++failures;
              if (ws) workspaces[s].push_back(ws);
              if (kind.bad) {
                bad_param[s] = std::string(kind.problem.op->params[kind.index_param].name) + "[" +
                               std::to_string(kBadRow) + "]";
              }
              ++calls;
            }
          }
          // Synchronize in a varying order; each stream reports exactly its own bad index.
          std::vector<int> order(kStreams);
          for (int s = 0; s < kStreams; ++s) order[s] = s;
          std::shuffle(order.begin(), order.end(), rng);
          for (int s : order) {
            const int st = aclrtSynchronizeStream(streams[s]);
            for (void* w : workspaces[s]) aclrtFree(w);
            const bool ok = !bad_param[s].empty() ? st == ACL_ERROR_INVALID_PARAM : st == 0;
            if (!ok) ++failures;
            if (st != 0) {
              ++errors_seen;
              const char* m = aclGetRecentErrMsg();
              if (m == nullptr || std::strstr(m, bad_param[s].c_str()) == nullptr) ++failures;
            }
          }
          for (size_t i = 0; i < outs.size(); ++i) {
            if (made[i]->bad) {
              if (!outs[i]->OutputsUntouched()) ++failures;  // a failed call writes nothing
            } else if (outs[i]->Outputs() != made[i]->expect) {
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
        "stress: %d host threads x %d streams, %d calls of %zu kinds, %d stream errors "
        "reported, %.2f s\n",
        kThreads, kStreams, calls.load(), kinds.size(), errors_seen.load(), secs);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(errors_seen.load(), 0);
  }
  EXPECT_EQ(aclnn_cpu::LiveExecutorCount(), executors);
  EXPECT_EQ(aclnn_cpu::LiveBlockCount(), blocks);
}

// aclrtMalloc beyond the available memory: ACL_ERROR_BAD_ALLOC with a message, in a child
// process with a lowered RLIMIT_AS (release builds: sanitizers reserve huge shadow regions).
TEST(ResourceLimits, MallocBeyondAddressSpaceLimit) {
  if (const char* emu = std::getenv("ACLNN_CPU_UNDER_EMULATION")) {
    GTEST_SKIP() << "under " << emu << ": the emulator reserves the guest's address space, so "
                 << "a lowered RLIMIT_AS limits the emulator, not the program";
  }
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
