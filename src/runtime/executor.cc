#include "runtime/executor.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_set>

#include "core/log.h"
#include "runtime/stream.h"

struct aclOpExecutor {
  std::shared_ptr<const aclnn_cpu::Plan> plan;
  bool repeatable = false;
};

namespace aclnn_cpu {
namespace {

struct ExecutorRegistry {
  std::mutex mu;
  std::unordered_set<const aclOpExecutor*> live;
};

ExecutorRegistry& Registry() {
  static ExecutorRegistry* r = new ExecutorRegistry;  // never destroyed: usable at exit
  return *r;
}

bool IsLive(const aclOpExecutor* e) {
  ExecutorRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.live.count(e) != 0;
}

void Forget(aclOpExecutor* e) {
  {
    ExecutorRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.erase(e);
  }
  delete e;
}

Status RunPlan(const StreamTask& t) { return static_cast<const Plan*>(t.arg1)->Run(t.arg0); }

// RunPlan with an ACLNN_CPU_VERBOSE line: the operator (its name rides in the task's n), the
// plan's description and the time the plan ran. Only this path formats strings.
Status RunPlanVerbose(const StreamTask& t) {
  const auto* plan = static_cast<const Plan*>(t.arg1);
  const auto start = std::chrono::steady_clock::now();
  Status st = plan->Run(t.arg0);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  VerboseLine("exec,%s,%s,%s,%.3f", reinterpret_cast<const char*>(static_cast<uintptr_t>(t.n)),
              plan->Describe().c_str(), st.ok() ? "ok" : st.msg.c_str(), ms);
  return st;
}

}  // namespace

std::string EmptyPlan::Describe() const {
  return std::string(op_) + ": empty tensors, nothing to do";
}

aclnnStatus FinishPhase1(const char* op, Status st, std::unique_ptr<Plan> plan,
                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  if (!st.ok()) return Fail(st);
  if (LogEnabled(LogLevel::kDebug)) {
    LogMessage(LogLevel::kDebug, "%s plan: %s", op, plan->Describe().c_str());
  }
  auto* e = new aclOpExecutor;
  e->plan = std::move(plan);
  {
    ExecutorRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.insert(e);
  }
  *workspaceSize = e->plan->workspace_bytes();
  *executor = e;
  return ACLNN_SUCCESS;
}

aclnnStatus RunPhase2(const char* op, void* workspace, uint64_t workspaceSize,
                      aclOpExecutor* executor, aclrtStream stream) {
  if (executor == nullptr) {
    return Fail(MakeError(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is null.", op));
  }
  if (!IsLive(executor)) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "%s: executor %p is not a live executor (already run without "
                          "aclSetAclOpExecutorRepeatable, or destroyed).",
                          op, static_cast<void*>(executor)));
  }
  const uint64_t need = executor->plan->workspace_bytes();
  if (workspaceSize < need) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "%s: workspaceSize %llu is smaller than the %llu bytes phase 1 asked "
                          "for.",
                          op, static_cast<unsigned long long>(workspaceSize),
                          static_cast<unsigned long long>(need)));
  }
  if (need > 0 && workspace == nullptr) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "%s: workspace is null although phase 1 asked for %llu bytes.", op,
                          static_cast<unsigned long long>(need)));
  }
  Stream* s = ResolveStream(stream);
  if (s == nullptr) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "%s: stream %p was not created by aclrtCreateStream (or was "
                          "destroyed).",
                          op, stream));
  }
  // Tiny work on an idle stream runs right here, without a thread hand-off; queued work keeps
  // the plan alive through `keep`. Neither path allocates.
  StreamTask task;
  task.fn = VerboseEnabled() ? RunPlanVerbose : RunPlan;
  task.n = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(op));  // a string literal
  task.keep = executor->plan;
  task.arg0 = workspace;
  task.arg1 = executor->plan.get();
  s->Submit(std::move(task), executor->plan->work_bytes() <= kInlineWorkBytes);
  if (!executor->repeatable) Forget(executor);  // consumed by this call
  return ACLNN_SUCCESS;
}

int64_t LiveExecutorCount() {
  ExecutorRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<int64_t>(r.live.size());
}

}  // namespace aclnn_cpu

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  using namespace aclnn_cpu;
  if (executor == nullptr) {
    return Fail(MakeError(ACLNN_ERR_INNER_NULLPTR,
                          "aclSetAclOpExecutorRepeatable: executor is "
                          "null."));
  }
  if (!IsLive(executor)) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "aclSetAclOpExecutorRepeatable: executor %p is not a live executor.",
                          static_cast<void*>(executor)));
  }
  executor->repeatable = true;
  return ACLNN_SUCCESS;
}

ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  using namespace aclnn_cpu;
  if (executor == nullptr) {
    return Fail(MakeError(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is null."));
  }
  if (!IsLive(executor)) {
    return Fail(MakeError(ACLNN_ERR_PARAM_INVALID,
                          "aclDestroyAclOpExecutor: executor %p is not a live executor.",
                          static_cast<void*>(executor)));
  }
  Forget(executor);  // queued work holds its own reference to the plan
  return ACLNN_SUCCESS;
}

}  // extern "C"
