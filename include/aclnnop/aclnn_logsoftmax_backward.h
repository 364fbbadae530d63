/* aclnnLogSoftmaxBackward (aclnn-cpu, CANN-compatible).
 * out = gradOutput - exp(output) * sum(gradOutput) along dim. */
#ifndef ACLNNOP_ACLNN_LOGSOFTMAX_BACKWARD_H_
#define ACLNNOP_ACLNN_LOGSOFTMAX_BACKWARD_H_

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                        const aclTensor *output,
                                                                        int64_t dim, aclTensor *out,
                                                                        uint64_t *workspaceSize,
                                                                        aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                                        aclOpExecutor *executor,
                                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_LOGSOFTMAX_BACKWARD_H_ */
