/* aclnnLogSoftmax (aclnn-cpu, CANN-compatible). out = x - max - log(sum(exp(x - max))). */
#ifndef ACLNNOP_ACLNN_LOGSOFTMAX_H_
#define ACLNNOP_ACLNN_LOGSOFTMAX_H_

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                                aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_LOGSOFTMAX_H_ */
