// C entry points of aclnnCpuLinearCrossEntropy (extension).
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "ops/linear_cross_entropy/plan.h"
#include "tensor/validate.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyV2GetWorkspaceSize(
    const aclTensor* input, const aclTensor* linearWeight, const aclTensor* linearBiasOptional,
    const aclTensor* target, const aclTensor* weightOptional, const aclTensor* gradLossOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, double logitSoftcap, int64_t chunkSize, const aclTensor* lossOut,
    const aclTensor* lseOut, const aclTensor* gradInputOptional,
    const aclTensor* gradWeightOptional, const aclTensor* gradBiasOptional, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const lce::Args args{input,
                       linearWeight,
                       linearBiasOptional,
                       target,
                       weightOptional,
                       gradLossOptional,
                       reductionOptional,
                       ignoreIndex,
                       labelSmoothing,
                       lseSquareScaleForZloss,
                       logitSoftcap,
                       chunkSize,
                       lossOut,
                       lseOut,
                       gradInputOptional,
                       gradWeightOptional,
                       gradBiasOptional};
  // Phase1 (ops/common/phase1.h) with a plan whose making can fail (the BLAS's primitives).
  Status st = CheckNotNull(lce::kOp, "workspaceSize", workspaceSize);
  if (st.ok()) st = CheckNotNull(lce::kOp, "executor", executor);
  lce::Checked checked;
  if (st.ok()) st = lce::Validate(args, &checked);
  std::unique_ptr<Plan> plan;
  if (st.ok()) {
    if (checked.empty) {
      plan = std::make_unique<EmptyPlan>(lce::kOp);
    } else {
      st = lce::MakePlan(checked, &plan);
    }
  }
  return FinishPhase1(lce::kOp, std::move(st), std::move(plan), workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyV2(void* workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor* executor,
                                                             aclrtStream stream) {
  return RunPhase2(lce::kOp, workspace, workspaceSize, executor, stream);
}

// The first version: V2 without soft-capping (CANN's way of adding a parameter).
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyGetWorkspaceSize(
    const aclTensor* input, const aclTensor* linearWeight, const aclTensor* linearBiasOptional,
    const aclTensor* target, const aclTensor* weightOptional, const aclTensor* gradLossOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, int64_t chunkSize, const aclTensor* lossOut,
    const aclTensor* lseOut, const aclTensor* gradInputOptional,
    const aclTensor* gradWeightOptional, const aclTensor* gradBiasOptional, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  return aclnnCpuLinearCrossEntropyV2GetWorkspaceSize(
      input, linearWeight, linearBiasOptional, target, weightOptional, gradLossOptional,
      reductionOptional, ignoreIndex, labelSmoothing, lseSquareScaleForZloss, 0.0, chunkSize,
      lossOut, lseOut, gradInputOptional, gradWeightOptional, gradBiasOptional, workspaceSize,
      executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropy(void* workspace, uint64_t workspaceSize,
                                                           aclOpExecutor* executor,
                                                           aclrtStream stream) {
  return RunPhase2(lce::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
