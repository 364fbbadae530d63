// C entry points of aclnnCrossEntropyLoss and of the extension aclnnCpuCrossEntropyLoss
// (include/aclnn_cpu/aclnn_cpu_ext.h: fp32 loss outputs for 16-bit inputs).
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "ops/common/phase1.h"
#include "ops/cross_entropy_loss/plan.h"
#include "ops/cross_entropy_spatial/plan.h"

using namespace aclnn_cpu;

namespace {

aclnnStatus CrossEntropyLossPhase1(bool float_stats, bool lean, const aclTensor* input,
                                   const aclTensor* target, const aclTensor* weight,
                                   char* reduction, int64_t ignore_index, double label_smoothing,
                                   double zloss_scale, bool return_zloss, const aclTensor* loss,
                                   const aclTensor* log_prob, const aclTensor* zloss,
                                   const aclTensor* lse, uint64_t* workspace_size,
                                   aclOpExecutor** executor) {
  const ce_fwd::Args args{input,           target,      weight,       reduction, ignore_index,
                          label_smoothing, zloss_scale, return_zloss, loss,      log_prob,
                          zloss,           lse,         float_stats,  lean};
  // The lean forward also takes (N, C, d1, ..., dK) inputs (ce_spatial's column tiles).
  return Phase1(args.op(), args, ce_fwd::Validate,
                lean ? ce_spatial::MakeLsePlan : ce_fwd::MakePlan, workspace_size, executor);
}

}  // namespace

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor* lossOut,
    const aclTensor* logProbOut, const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  return CrossEntropyLossPhase1(false, false, input, target, weightOptional, reductionOptional,
                                ignoreIndex, labelSmoothing, lseSquareScaleForZloss, returnZloss,
                                lossOut, logProbOut, zlossOut, lseForZlossOut, workspaceSize,
                                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCrossEntropyLoss(void* workspace, uint64_t workspaceSize,
                                                      aclOpExecutor* executor, aclrtStream stream) {
  return RunPhase2(ce_fwd::kOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor* lossOut,
    const aclTensor* logProbOut, const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  return CrossEntropyLossPhase1(true, false, input, target, weightOptional, reductionOptional,
                                ignoreIndex, labelSmoothing, lseSquareScaleForZloss, returnZloss,
                                lossOut, logProbOut, zlossOut, lseForZlossOut, workspaceSize,
                                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLoss(void* workspace, uint64_t workspaceSize,
                                                         aclOpExecutor* executor,
                                                         aclrtStream stream) {
  return RunPhase2(ce_fwd::kFloatStatsOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor* lossOut,
    const aclTensor* zlossOut, const aclTensor* lseOut, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  return CrossEntropyLossPhase1(true, true, input, target, weightOptional, reductionOptional,
                                ignoreIndex, labelSmoothing, lseSquareScaleForZloss, returnZloss,
                                lossOut, nullptr, zlossOut, lseOut, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLse(void* workspace, uint64_t workspaceSize,
                                                            aclOpExecutor* executor,
                                                            aclrtStream stream) {
  return RunPhase2(ce_fwd::kLseOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    const aclTensor* gradLossOptional, char* reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, bool returnZloss,
    const aclTensor* lossOut, const aclTensor* zlossOut, const aclTensor* lseOut,
    const aclTensor* gradOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
  ce_fwd::Args args{input,
                    target,
                    weightOptional,
                    reductionOptional,
                    ignoreIndex,
                    labelSmoothing,
                    lseSquareScaleForZloss,
                    returnZloss,
                    lossOut,
                    nullptr,
                    zlossOut,
                    lseOut,
                    true,
                    true};
  args.with_grad = true;
  args.grad_loss = gradLossOptional;
  args.grad_out = gradOut;
  return Phase1(args.op(), args, ce_fwd::Validate, ce_spatial::MakeWithGradPlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossWithGrad(void* workspace,
                                                                 uint64_t workspaceSize,
                                                                 aclOpExecutor* executor,
                                                                 aclrtStream stream) {
  return RunPhase2(ce_fwd::kWithGradOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
