// aclnnCrossEntropyLoss: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_

#include <memory>

#include "core/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_fwd {

constexpr const char* kOp = "aclnnCrossEntropyLoss";

struct Args {
  const aclTensor* input;
  const aclTensor* target;
  const aclTensor* weight;  // nullable
  const char* reduction;    // nullable: "mean"
  int64_t ignore_index;
  double label_smoothing;
  double zloss_scale;
  bool return_zloss;
  const aclTensor* loss_out;
  const aclTensor* log_prob_out;
  const aclTensor* zloss_out;
  const aclTensor* lse_out;
};

Status Validate(const Args& a, bool* empty);
std::unique_ptr<Plan> MakePlan(const Args& a);

}  // namespace ce_fwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_
