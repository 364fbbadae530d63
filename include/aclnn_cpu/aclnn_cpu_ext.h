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
 * Forward: aclnnCrossEntropyLoss without logProbOut. lseOut (N,) FLOAT or DOUBLE receives every
 * row's log-sum-exp (what the backward needs; DOUBLE keeps all of it, which the gradient of logits
 * of large magnitude needs); lossOut and zlossOut as in aclnnCpuCrossEntropyLoss
 * (the input's dtype or FLOAT). Every other rule is aclnnCrossEntropyLoss's.
 *
 * K-dimensional inputs (N, C, d1, ..., dK), K >= 1 (segmentation and the like; fewer than 2^24
 * classes): target, lseOut and, for reduction "none", lossOut and zlossOut are (N, d1, ..., dK),
 * one value per position; the input is read in place (class stride d1 * ... * dK for a
 * contiguous one), docs/numerics.md. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut,
    const aclTensor *zlossOut, const aclTensor *lseOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossLse(void *workspace, uint64_t workspaceSize,
                                                            aclOpExecutor *executor,
                                                            aclrtStream stream);

/* The lean forward and the gradient in one pass (docs/large_vocab.md):
 * aclnnCpuCrossEntropyLossLse that also writes gradOut (N, C) = d(sum of gradLoss * loss)/d input,
 * for gradLossOptional shaped like lossOut (the input's dtype or FLOAT; null: ones), each row's
 * gradient computed right after its lse, while the row is in cache: the bits of
 * aclnnCpuCrossEntropyLossGradFromLogits on the forward's lse (without gradZloss). gradOut may be
 * input itself (the same aclTensor or an identical view): the gradient then overwrites the
 * logits, one read and one write per element for the whole training step. K-dimensional inputs
 * as aclnnCpuCrossEntropyLossLse takes them: gradOut has the input's shape, gradLossOptional
 * the loss's, and the gradient is computed tile by tile right after the tile's lse (a gradOut
 * whose innermost dim is not contiguous: the two operators in turn, the same bits). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *gradLossOptional, char *reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, bool returnZloss,
    const aclTensor *lossOut, const aclTensor *zlossOut, const aclTensor *lseOut,
    const aclTensor *gradOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossWithGrad(void *workspace,
                                                                 uint64_t workspaceSize,
                                                                 aclOpExecutor *executor,
                                                                 aclrtStream stream);

/* Backward from the logits: aclnnCrossEntropyLossGrad with `logits` (N, C) in place of logProb
 * and the forward's lse (N,) FLOAT or DOUBLE, required (the gradient is that of this lse), in place
 * of lseForZlossOptional (it also serves the z-loss term): out = dloss/dlogits, with every option
 * of aclnnCrossEntropyLossGrad. `out` may be `logits` itself (the same aclTensor or an identical
 * view): the gradient then overwrites the logits, one read and one write per element.
 * K-dimensional logits (N, C, d1, ..., dK) as aclnnCpuCrossEntropyLossLse's: target, lse and, for
 * reduction "none", gradLoss and gradZlossOptional (N, d1, ..., dK); out the logits' shape. */
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

/* The fused linear + cross-entropy (docs/large_vocab.md): the loss of
 * F.cross_entropy(F.linear(input, linearWeight, linearBiasOptional), target, ...) and,
 * optionally, the gradients of input, linearWeight and linearBias, without the (N, V) logits:
 * rows are processed chunkSize at a time (0: an automatic size, the chunk's buffers at most
 * 1/16 of the bytes of f32 logits), each chunk's logits computed by the BLAS (oneDNN) into the
 * workspace in fp32, reduced to the loss and, when a gradient is asked for, turned into dlogits in
 * place and multiplied back.
 *
 * input (N, H) and linearWeight (V, H): FLOAT or BF16, the same; linearBiasOptional (V,) their
 * dtype; target (N,) INT64 or INT32; weightOptional (V,) FLOAT; reduction, ignoreIndex,
 * labelSmoothing and lseSquareScaleForZloss as aclnnCrossEntropyLoss's (the z-loss term is part
 * of lossOut). lossOut (N,) for "none", else 0-d or (1,): the input's dtype or FLOAT. lseOut (N,)
 * FLOAT or DOUBLE: every row's log-sum-exp (the gradients use it in double either way).
 * Gradients are computed when any of gradInputOptional (N, H; the input's dtype),
 * gradWeightOptional (V, H; the weight's dtype or FLOAT, which then also serves as fp32
 * accumulator) and gradBiasOptional (V,; the bias's dtype or FLOAT; needs the bias) is given:
 * d(sum of gradLoss * loss)/d(each), with gradLossOptional shaped like lossOut (the input's
 * dtype or FLOAT), or all ones when it is null. Outputs must not overlap the inputs. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyGetWorkspaceSize(
    const aclTensor *input, const aclTensor *linearWeight, const aclTensor *linearBiasOptional,
    const aclTensor *target, const aclTensor *weightOptional, const aclTensor *gradLossOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, int64_t chunkSize, const aclTensor *lossOut,
    const aclTensor *lseOut, const aclTensor *gradInputOptional,
    const aclTensor *gradWeightOptional, const aclTensor *gradBiasOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropy(void *workspace, uint64_t workspaceSize,
                                                           aclOpExecutor *executor,
                                                           aclrtStream stream);

/* aclnnCpuLinearCrossEntropy with final-logit soft-capping (Gemma 2/3): logitSoftcap > 0 replaces
 * every logit z by logitSoftcap * tanh(z / logitSoftcap) before the cross-entropy (and the z-loss),
 * and the gradients go through it (times 1 - tanh^2); 0 is no capping, the first version's
 * behaviour. A negative or non-finite cap is refused (ACLNN_ERR_PARAM_INVALID). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyV2GetWorkspaceSize(
    const aclTensor *input, const aclTensor *linearWeight, const aclTensor *linearBiasOptional,
    const aclTensor *target, const aclTensor *weightOptional, const aclTensor *gradLossOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, double logitSoftcap, int64_t chunkSize, const aclTensor *lossOut,
    const aclTensor *lseOut, const aclTensor *gradInputOptional,
    const aclTensor *gradWeightOptional, const aclTensor *gradBiasOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuLinearCrossEntropyV2(void *workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor *executor,
                                                             aclrtStream stream);

/* Vocabulary-parallel cross-entropy (docs/large_vocab.md): each process holds the logits of a
 * shard of the classes, columns [classOffset, classOffset + Vs) of numClasses, and every
 * process the whole target (N,) and class weights (numClasses,).
 *
 * Statistics of a shard, for the processes to combine (aclnn_cpu.torch does it with
 * torch.distributed all-reduces): lseOut (N,) FLOAT, the log-sum-exp of each row's shard;
 * targetLogitOut (N,) FLOAT, the logit of the row's target class where the target falls in
 * the shard and the row is not ignored, else 0; weightedSumOut (N,) FLOAT, sum_j w_j x_j over
 * the shard's classes (w_j = 1 without weights), the label-smoothing term's part. logits (N, Vs):
 * FLOAT, FLOAT16 or BF16. Targets out of [0, numClasses) (and not ignored) are reported as by
 * aclnnCrossEntropyLoss. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyShardStatsGetWorkspaceSize(
    const aclTensor *logits, const aclTensor *target, const aclTensor *weightOptional,
    int64_t ignoreIndex, int64_t classOffset, int64_t numClasses, const aclTensor *lseOut,
    const aclTensor *targetLogitOut, const aclTensor *weightedSumOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyShardStats(void *workspace,
                                                               uint64_t workspaceSize,
                                                               aclOpExecutor *executor,
                                                               aclrtStream stream);

/* The gradient of a shard's logits given the global lse (N,) FLOAT or DOUBLE:
 * aclnnCpuCrossEntropyLossGradFromLogits over the whole vocabulary, restricted to the shard's
 * columns. target and weightOptional (numClasses,) are the whole vocabulary's, so the mean's
 * divisor and the label-smoothing terms are the single-process ones; out (N, Vs) may be logits
 * itself (in place). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradShardGetWorkspaceSize(
    const aclTensor *gradLoss, const aclTensor *logits, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *gradZlossOptional, const aclTensor *lse,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, int64_t classOffset, int64_t numClasses, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossGradShard(void *workspace,
                                                                  uint64_t workspaceSize,
                                                                  aclOpExecutor *executor,
                                                                  aclrtStream stream);

/* Cross-entropy with class-probability targets (PyTorch's F.cross_entropy with a floating
 * target; docs/python.md): input (N, C) and target (N, C) of one dtype (FLOAT, FLOAT16, BF16 or
 * DOUBLE), weightOptional (C,) FLOAT or DOUBLE, labelSmoothing in [0, 1]. With
 * q'_ic = (1 - labelSmoothing) target_ic + labelSmoothing / C and w_c the weights (1 without),
 *   loss_i = -sum_c w_c q'_ic (input_ic - lse_i),   lse_i = log sum_c exp(input_ic);
 * "none": lossOut (N,); "sum": their sum; "mean": their sum / N (PyTorch's divisor for
 * probabilities: the weights do not enter it). lossOut has the input's dtype (or FLOAT for a
 * 16-bit input); lseOut (N,) FLOAT or DOUBLE receives each row's lse. N == 0 or C == 0: nothing
 * to do, nothing written. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, double labelSmoothing, const aclTensor *lossOut,
    const aclTensor *lseOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProb(void *workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor *executor,
                                                             aclrtStream stream);

/* Its gradient with respect to the logits, from the logits and the forward's lse (N,) FLOAT or
 * DOUBLE (the gradient is that of the lse as given):
 *   out_ic = g_i (p_ic sum_c' w_c' q'_ic' - w_c q'_ic),   p_ic = exp(logits_ic - lse_i),
 * g_i = gradLoss_i for "none", gradLoss (0-d or (1,)) for "sum", and that / N for "mean".
 * gradLoss and out have the logits' dtype; out (N, C) may be logits itself (in place). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(
    const aclTensor *gradLoss, const aclTensor *logits, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *lse, char *reductionOptional,
    double labelSmoothing, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbGrad(void *workspace,
                                                                 uint64_t workspaceSize,
                                                                 aclOpExecutor *executor,
                                                                 aclrtStream stream);

/* Both in one pass: aclnnCpuCrossEntropyLossProb that also writes gradOut (N, C) = d(sum of
 * gradLoss * loss)/d input for gradLossOptional shaped like lossOut (the input's dtype or FLOAT;
 * null: ones), each row's gradient computed right after its lse, while the row and its target
 * are in cache: the bits of aclnnCpuCrossEntropyLossProbGrad on the forward's lseOut. gradOut
 * has the input's shape and dtype and may be input itself (in place). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbWithGradGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *gradLossOptional, char *reductionOptional, double labelSmoothing,
    const aclTensor *lossOut, const aclTensor *lseOut, const aclTensor *gradOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyLossProbWithGrad(void *workspace,
                                                                     uint64_t workspaceSize,
                                                                     aclOpExecutor *executor,
                                                                     aclrtStream stream);

/* The library's version, "MAJOR.MINOR.PATCH": the numbers aclrtGetVersion gives, and the same
 * string as the CMake package's version, the Python package's aclnn_cpu.__version__ and the
 * wheel's metadata (all from CMakeLists.txt's project() line). Static storage, never null. */
ACL_FUNC_VISIBILITY const char *aclnnCpuGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_CPU_ACLNN_CPU_EXT_H_ */
