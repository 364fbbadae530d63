// C entry points of aclnnCrossEntropyLossGrad.
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"

#include "core/validate.h"
#include "ops/cross_entropy_loss_grad/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logProb, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional,
    const aclTensor* lseForZlossOptional, char* reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, const aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const ce_grad::Args args{gradLoss,           logProb,     target,         weightOptional,
                           gradZlossOptional,  lseForZlossOptional,         reductionOptional,
                           ignoreIndex,        labelSmoothing,              lseSquareScaleForZloss,
                           out};
  Status st = CheckNotNull(ce_grad::kOp, "workspaceSize", workspaceSize);
  if (st.ok()) st = CheckNotNull(ce_grad::kOp, "executor", executor);
  bool empty = false;
  if (st.ok()) st = ce_grad::Validate(args, &empty);
  std::unique_ptr<Plan> plan;
  if (st.ok()) {
    plan = empty ? std::make_unique<EmptyPlan>(ce_grad::kOp) : ce_grad::MakePlan(args);
  }
  return FinishPhase1(ce_grad::kOp, std::move(st), std::move(plan), workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGrad(void* workspace,
                                                          uint64_t workspaceSize,
                                                          aclOpExecutor* executor,
                                                          aclrtStream stream) {
  return RunPhase2(ce_grad::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
