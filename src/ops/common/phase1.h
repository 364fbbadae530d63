// The phase-1 sequence every operator shares: null checks of the out-parameters, the
// operator's pure Validate (raw arguments -> a checked description: tensor descriptions,
// wrapped dim, parsed attributes, the empty flag), then an empty plan or MakePlan built from
// that description alone, published as an executor.
#ifndef ACLNN_CPU_OPS_COMMON_PHASE1_H_
#define ACLNN_CPU_OPS_COMMON_PHASE1_H_

#include <memory>

#include "runtime/executor.h"
#include "tensor/validate.h"

namespace aclnn_cpu {

// Checked must have a `bool empty` member.
template <typename Args, typename Checked>
aclnnStatus Phase1(const char* op, const Args& args, Status (*validate)(const Args&, Checked*),
                   std::unique_ptr<Plan> (*make_plan)(const Checked&), uint64_t* workspaceSize,
                   aclOpExecutor** executor) {
  Status st = CheckNotNull(op, "workspaceSize", workspaceSize);
  if (st.ok()) st = CheckNotNull(op, "executor", executor);
  Checked checked;
  if (st.ok()) st = validate(args, &checked);
  std::unique_ptr<Plan> plan;
  if (st.ok()) plan = checked.empty ? std::make_unique<EmptyPlan>(op) : make_plan(checked);
  return FinishPhase1(op, std::move(st), std::move(plan), workspaceSize, executor);
}

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_PHASE1_H_
