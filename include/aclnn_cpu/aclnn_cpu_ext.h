/* aclnn-cpu's extensions to CANN's API. Not part of CANN: a program that uses them runs only on
 * aclnn-cpu. Same two-phase style, status codes, aclGetRecentErrMsg() sentences and "refused
 * means nothing written" rule as CANN's operators; CANN's own headers (acl/, aclnn/, aclnnop/)
 * stay exactly CANN's. */
#ifndef ACLNN_CPU_ACLNN_CPU_EXT_H_
#define ACLNN_CPU_ACLNN_CPU_EXT_H_

#include <stdbool.h>

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclnnCrossEntropyLoss with one difference: for a FLOAT16 or BF16 input, lossOut, zlossOut and
 * lseForZlossOut may also be FLOAT (each independently), so the loss is rounded once, to fp32,
 * instead of to the input's 16 bits. Every other rule, argument and output is
 * aclnnCrossEntropyLoss's; messages name aclnnCpuCrossEntropyLoss. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut,
    const aclTensor *logProbOut, const aclTensor *zlossOut, const aclTensor *lseForZlossOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLoss(void *workspace, uint64_t workspaceSize,
                                                         aclOpExecutor *executor,
                                                         aclrtStream stream);

/* The lean cross-entropy (the loss without N x C outputs, docs/large_vocab.md).
 *
 * Forward: aclnnCrossEntropyLoss without logProbOut. lseOut (N,) FLOAT receives every row's
 * log-sum-exp (what the backward needs); lossOut and zlossOut as in aclnnCpuCrossEntropyLoss
 * (the input's dtype or FLOAT). Every other rule is aclnnCrossEntropyLoss's. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut,
    const aclTensor *zlossOut, const aclTensor *lseOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLse(void *workspace, uint64_t workspaceSize,
                                                            aclOpExecutor *executor,
                                                            aclrtStream stream);

/* Backward from the logits: aclnnCrossEntropyLossGrad with `logits` (N, C) in place of logProb
 * and the forward's lse (N,) FLOAT, required, in place of lseForZlossOptional (it also serves
 * the z-loss term): out = dloss/dlogits, with every option of aclnnCrossEntropyLossGrad. `out`
 * may be `logits` itself (the same aclTensor or an identical view): the gradient then overwrites
 * the logits, one read and one write per element. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
    const aclTensor *gradLoss, const aclTensor *logits, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *gradZlossOptional, const aclTensor *lse,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, const aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradFromLogits(void *workspace,
                                                                       uint64_t workspaceSize,
                                                                       aclOpExecutor *executor,
                                                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CPU_ACLNN_CPU_EXT_H_ */
