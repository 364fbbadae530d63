// C entry points of aclnnLogSoftmaxBackward.
#include "aclnnop/aclnn_logsoftmax_backward.h"

#include "core/validate.h"
#include "ops/log_softmax_backward/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* output, int64_t dim, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const lsm_bwd::Args args{gradOutput, output, dim, out};
  Status st = CheckNotNull(lsm_bwd::kOp, "workspaceSize", workspaceSize);
  if (st.ok()) st = CheckNotNull(lsm_bwd::kOp, "executor", executor);
  bool empty = false;
  if (st.ok()) st = lsm_bwd::Validate(args, &empty);
  std::unique_ptr<Plan> plan;
  if (st.ok()) plan = empty ? std::make_unique<EmptyPlan>(lsm_bwd::kOp) : lsm_bwd::MakePlan(args);
  return FinishPhase1(lsm_bwd::kOp, std::move(st), std::move(plan), workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackward(void* workspace, uint64_t workspaceSize,
                                                        aclOpExecutor* executor,
                                                        aclrtStream stream) {
  return RunPhase2(lsm_bwd::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
