// aclnnCrossEntropyLossGrad: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_

#include <memory>

#include "core/executor.h"
#include "ops/common/cross_entropy.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_grad {

constexpr const char* kOp = "aclnnCrossEntropyLossGrad";

struct Args {
  const aclTensor* grad_loss;
  const aclTensor* log_prob;
  const aclTensor* target;
  const aclTensor* weight;      // nullable
  const aclTensor* grad_zloss;  // nullable
  const aclTensor* lse;         // nullable unless zloss_scale != 0
  const char* reduction;        // nullable: "mean"
  int64_t ignore_index;
  double label_smoothing;
  double zloss_scale;
  const aclTensor* out;
};

// The spec's rules in order; *empty is set when N == 0 or C == 0 (nothing to do).
Status Validate(const Args& a, bool* empty);
std::unique_ptr<Plan> MakePlan(const Args& a);

}  // namespace ce_grad
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_
