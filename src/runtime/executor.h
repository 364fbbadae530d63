// Executors: phase 1 turns validated arguments into a Plan (plain data plus a kernel choice);
// phase 2 binds the workspace and enqueues Plan::Run on a stream.
#ifndef ACLNN_CPU_RUNTIME_EXECUTOR_H_
#define ACLNN_CPU_RUNTIME_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"
#include "core/status.h"

namespace aclnn_cpu {

class Plan {
 public:
  virtual ~Plan() = default;
  // Runs the planned work. `workspace` holds at least workspace_bytes() bytes. Returns an
  // aclError status for errors that depend on tensor data (nothing is written then).
  virtual Status Run(void* workspace) const = 0;
  virtual uint64_t workspace_bytes() const { return 0; }
  // Approximate bytes touched; tiny work may run inline on an idle stream.
  virtual uint64_t work_bytes() const { return 0; }
  // One line for the debug log: shapes, dtypes, kernel path, CPU target, threads.
  virtual std::string Describe() const = 0;
};

// A plan that does nothing (empty tensors).
class EmptyPlan final : public Plan {
 public:
  explicit EmptyPlan(const char* op) : op_(op) {}
  Status Run(void*) const override { return OkStatus(); }
  std::string Describe() const override;

 private:
  const char* op_;
};

// Phase 1 epilogue: on success publishes the plan as a new executor; on failure records the
// message and returns its code (outputs untouched, nothing allocated).
aclnnStatus FinishPhase1(const char* op, Status st, std::unique_ptr<Plan> plan,
                         uint64_t* workspaceSize, aclOpExecutor** executor);

// Phase 2: checks the executor and workspace, then enqueues the plan on `stream`.
aclnnStatus RunPhase2(const char* op, void* workspace, uint64_t workspaceSize,
                      aclOpExecutor* executor, aclrtStream stream);

// Number of executors alive (for leak tests).
int64_t LiveExecutorCount();

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_RUNTIME_EXECUTOR_H_
