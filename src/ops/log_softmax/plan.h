// aclnnLogSoftmax: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_
#define ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_

#include <memory>

#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace lsm_fwd {

constexpr const char* kOp = "aclnnLogSoftmax";

struct Args {
  const aclTensor* self;
  int64_t dim;
  const aclTensor* out;
};

// What Validate hands to MakePlan.
struct Checked {
  bool empty = false;  // no element: nothing else is filled then
  TensorDesc self, out;
  int axis = 0;  // dim wrapped into [0, max(rank, 1))
};

Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

}  // namespace lsm_fwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LOG_SOFTMAX_PLAN_H_
