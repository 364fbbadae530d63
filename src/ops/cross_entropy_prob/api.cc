// C entry points of aclnnCpuCrossEntropyLossProb, aclnnCpuCrossEntropyLossProbGrad and
// aclnnCpuCrossEntropyLossProbWithGrad (extensions).
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "ops/common/phase1.h"
#include "ops/cross_entropy_prob/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    char* reductionOptional, double labelSmoothing, const aclTensor* lossOut,
    const aclTensor* lseOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const ce_prob::Args args{
      ce_prob::Kind::kForward, nullptr,        input,   target, weightOptional, lseOut,
      reductionOptional,       labelSmoothing, lossOut, nullptr};
  return Phase1(ce_prob::kFwdOp, args, ce_prob::Validate, ce_prob::MakePlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProb(void* workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor* executor,
                                                             aclrtStream stream) {
  return RunPhase2(ce_prob::kFwdOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logits, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* lse, char* reductionOptional,
    double labelSmoothing, const aclTensor* out, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const ce_prob::Args args{
      ce_prob::Kind::kGrad, gradLoss,       logits,  target, weightOptional, lse,
      reductionOptional,    labelSmoothing, nullptr, out};
  return Phase1(ce_prob::kGradOp, args, ce_prob::Validate, ce_prob::MakePlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGrad(void* workspace,
                                                                 uint64_t workspaceSize,
                                                                 aclOpExecutor* executor,
                                                                 aclrtStream stream) {
  return RunPhase2(ce_prob::kGradOp, workspace, workspaceSize, executor, stream);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbWithGradGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional,
    const aclTensor* gradLossOptional, char* reductionOptional, double labelSmoothing,
    const aclTensor* lossOut, const aclTensor* lseOut, const aclTensor* gradOut,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const ce_prob::Args args{
      ce_prob::Kind::kWithGrad, gradLossOptional, input,   target, weightOptional, lseOut,
      reductionOptional,        labelSmoothing,   lossOut, gradOut};
  return Phase1(ce_prob::kWithGradOp, args, ce_prob::Validate, ce_prob::MakePlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbWithGrad(void* workspace,
                                                                     uint64_t workspaceSize,
                                                                     aclOpExecutor* executor,
                                                                     aclrtStream stream) {
  return RunPhase2(ce_prob::kWithGradOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
