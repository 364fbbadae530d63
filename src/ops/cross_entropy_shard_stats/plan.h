// aclnnCpuCrossEntropyShardStats (extension, vocabulary-parallel cross-entropy): validation
// (pure) and planning. Each row's shard log-sum-exp, target logit and weighted logit sum, for
// the processes holding the other shards to combine (docs/large_vocab.md).
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_SHARD_STATS_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_SHARD_STATS_PLAN_H_

#include <memory>

#include "ops/common/cross_entropy.h"
#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_stats {

constexpr const char* kOp = "aclnnCpuCrossEntropyShardStats";

struct Args {
  const aclTensor *logits, *target, *weight;
  int64_t ignore_index, class_offset, num_classes;
  const aclTensor *lse_out, *target_logit_out, *weighted_sum_out;
};

struct Checked : ce::Common {  // c: the shard's width Vs
  bool empty = false;          // N == 0: nothing to write
  int64_t class_offset = 0, num_classes = 0;
  TensorDesc logits, lse, target_logit, weighted_sum;
};

Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

}  // namespace ce_stats
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_SHARD_STATS_PLAN_H_
