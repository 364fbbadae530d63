// C entry points of aclnnLogSoftmaxBackward.
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "ops/common/phase1.h"
#include "ops/log_softmax_backward/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                                        const aclTensor* output,
                                                                        int64_t dim, aclTensor* out,
                                                                        uint64_t* workspaceSize,
                                                                        aclOpExecutor** executor) {
  const lsm_bwd::Args args{gradOutput, output, dim, out};
  return Phase1(lsm_bwd::kOp, args, lsm_bwd::Validate, lsm_bwd::MakePlan, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackward(void* workspace, uint64_t workspaceSize,
                                                        aclOpExecutor* executor,
                                                        aclrtStream stream) {
  return RunPhase2(lsm_bwd::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
