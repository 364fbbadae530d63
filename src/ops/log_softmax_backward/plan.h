// aclnnLogSoftmaxBackward: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_
#define ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_

#include <memory>

#include "core/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace lsm_bwd {

constexpr const char* kOp = "aclnnLogSoftmaxBackward";

struct Args {
  const aclTensor* grad_output;
  const aclTensor* output;
  int64_t dim;
  const aclTensor* out;
};

// The spec's rules in order. *empty is set when the work is a no-op (rule 2).
Status Validate(const Args& a, bool* empty);
// Requires Validate(a) to have succeeded with *empty == false.
std::unique_ptr<Plan> MakePlan(const Args& a);

}  // namespace lsm_bwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_
