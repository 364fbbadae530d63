// C entry points of aclnnCrossEntropyLossGrad.
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "ops/common/phase1.h"
#include "ops/cross_entropy_loss_grad/plan.h"
#include "ops/cross_entropy_spatial/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logProb, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional,
    const aclTensor* lseForZlossOptional, char* reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, const aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const ce_grad::Args args{gradLoss,
                           logProb,
                           target,
                           weightOptional,
                           gradZlossOptional,
                           lseForZlossOptional,
                           reductionOptional,
                           ignoreIndex,
                           labelSmoothing,
                           lseSquareScaleForZloss,
                           out};
  return Phase1(ce_grad::kOp, args, ce_grad::Validate, ce_grad::MakePlan, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGrad(void* workspace, uint64_t workspaceSize,
                                                          aclOpExecutor* executor,
                                                          aclrtStream stream) {
  return RunPhase2(ce_grad::kOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logits, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional, const aclTensor* lse,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, const aclTensor* out, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const ce_grad::Args args{gradLoss,
                           logits,
                           target,
                           weightOptional,
                           gradZlossOptional,
                           lse,
                           reductionOptional,
                           ignoreIndex,
                           labelSmoothing,
                           lseSquareScaleForZloss,
                           out,
                           true};
  // Also (N, C, d1, ..., dK) logits (ce_spatial's column tiles).
  return Phase1(args.op(), args, ce_grad::Validate, ce_spatial::MakeGradPlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradFromLogits(void* workspace,
                                                                       uint64_t workspaceSize,
                                                                       aclOpExecutor* executor,
                                                                       aclrtStream stream) {
  return RunPhase2(ce_grad::kFromLogitsOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradShardGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logits, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional, const aclTensor* lse,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, int64_t classOffset, int64_t numClasses, const aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  ce_grad::Args args{gradLoss,
                     logits,
                     target,
                     weightOptional,
                     gradZlossOptional,
                     lse,
                     reductionOptional,
                     ignoreIndex,
                     labelSmoothing,
                     lseSquareScaleForZloss,
                     out,
                     true};
  args.shard = true;
  args.class_offset = classOffset;
  args.num_classes = numClasses;
  return Phase1(args.op(), args, ce_grad::Validate, ce_grad::MakePlan, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradShard(void* workspace,
                                                                  uint64_t workspaceSize,
                                                                  aclOpExecutor* executor,
                                                                  aclrtStream stream) {
  return RunPhase2(ce_grad::kShardOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
