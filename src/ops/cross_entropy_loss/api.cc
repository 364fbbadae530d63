// C entry points of aclnnCrossEntropyLoss.
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "ops/common/phase1.h"
#include "ops/cross_entropy_loss/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor* lossOut,
    const aclTensor* logProbOut, const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const ce_fwd::Args args{input,
                          target,
                          weightOptional,
                          reductionOptional,
                          ignoreIndex,
                          labelSmoothing,
                          lseSquareScaleForZloss,
                          returnZloss,
                          lossOut,
                          logProbOut,
                          zlossOut,
                          lseForZlossOut};
  return Phase1(ce_fwd::kOp, args, ce_fwd::Validate, ce_fwd::MakePlan, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLoss(void* workspace, uint64_t workspaceSize,
                                                      aclOpExecutor* executor, aclrtStream stream) {
  return RunPhase2(ce_fwd::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
