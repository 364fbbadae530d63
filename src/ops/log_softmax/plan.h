// aclnnLogSoftmax: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_
#define ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_

#include <memory>

#include "core/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace lsm_fwd {

constexpr const char* kOp = "aclnnLogSoftmax";

struct Args {
  const aclTensor* self;
  int64_t dim;
  const aclTensor* out;
};

Status Validate(const Args& a, bool* empty);
std::unique_ptr<Plan> MakePlan(const Args& a);

}  // namespace lsm_fwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_
