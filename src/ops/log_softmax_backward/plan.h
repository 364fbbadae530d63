// aclnnLogSoftmaxBackward: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_
#define ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_

#include <memory>

#include "runtime/executor.h"
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

// What Validate hands to MakePlan: the tensors as plain descriptions and the wrapped dim.
struct Checked {
  bool empty = false;  // the work is a no-op (rule 2); nothing else is filled then
  TensorDesc grad_output, output, out;
  int axis = 0;  // dim wrapped into [0, max(rank, 1))
};

// The spec's rules in order; on success fills *c.
Status Validate(const Args& a, Checked* c);
// Requires Validate to have succeeded with c.empty == false.
std::unique_ptr<Plan> MakePlan(const Checked& c);

}  // namespace lsm_bwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LOG_SOFTMAX_BACKWARD_PLAN_H_
