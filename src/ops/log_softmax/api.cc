// C entry points of aclnnLogSoftmax.
#include "aclnnop/aclnn_logsoftmax.h"
#include "ops/common/phase1.h"
#include "ops/log_softmax/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim,
                                                                aclTensor* out,
                                                                uint64_t* workspaceSize,
                                                                aclOpExecutor** executor) {
  const lsm_fwd::Args args{self, dim, out};
  return Phase1(lsm_fwd::kOp, args, lsm_fwd::Validate, lsm_fwd::MakePlan, workspaceSize, executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmax(void* workspace, uint64_t workspaceSize,
                                                aclOpExecutor* executor, aclrtStream stream) {
  return RunPhase2(lsm_fwd::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
