// C entry points of aclnnCpuCrossEntropyShardStats (extension).
#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "ops/common/phase1.h"
#include "ops/cross_entropy_shard_stats/plan.h"

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyShardStatsGetWorkspaceSize(
    const aclTensor* logits, const aclTensor* target, const aclTensor* weightOptional,
    int64_t ignoreIndex, int64_t classOffset, int64_t numClasses, const aclTensor* lseOut,
    const aclTensor* targetLogitOut, const aclTensor* weightedSumOut, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const ce_stats::Args args{logits,     target, weightOptional, ignoreIndex,   classOffset,
                            numClasses, lseOut, targetLogitOut, weightedSumOut};
  return Phase1(ce_stats::kOp, args, ce_stats::Validate, ce_stats::MakePlan, workspaceSize,
                executor);
}

ACL_FUNC_VISIBILITY aclnnStatus aclnnCpuCrossEntropyShardStats(void* workspace,
                                                               uint64_t workspaceSize,
                                                               aclOpExecutor* executor,
                                                               aclrtStream stream) {
  return RunPhase2(ce_stats::kOp, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
