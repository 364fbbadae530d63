// The phase-1 sequence every operator shares: null checks of the out-parameters, the
// operator's pure Validate, then an empty plan or MakePlan, published as an executor.
#ifndef ACLNN_CPU_OPS_COMMON_PHASE1_H_
#define ACLNN_CPU_OPS_COMMON_PHASE1_H_

#include <memory>

#include "core/executor.h"
#include "core/validate.h"

namespace aclnn_cpu {

template <typename Args>
aclnnStatus Phase1(const char* op, const Args& args, Status (*validate)(const Args&, bool*),
                   std::unique_ptr<Plan> (*make_plan)(const Args&), uint64_t* workspaceSize,
                   aclOpExecutor** executor) {
  Status st = CheckNotNull(op, "workspaceSize", workspaceSize);
  if (st.ok()) st = CheckNotNull(op, "executor", executor);
  bool empty = false;
  if (st.ok()) st = validate(args, &empty);
  std::unique_ptr<Plan> plan;
  if (st.ok()) plan = empty ? std::make_unique<EmptyPlan>(op) : make_plan(args);
  return FinishPhase1(op, std::move(st), std::move(plan), workspaceSize, executor);
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_PHASE1_H_
