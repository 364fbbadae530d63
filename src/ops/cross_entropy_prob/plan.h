// aclnnCpuCrossEntropyLossProb and aclnnCpuCrossEntropyLossProbGrad (extensions: cross-entropy
// with class-probability targets, PyTorch's semantics): validation (pure) and planning. Both
// directions are one plan over rows, built on the row kernels: per row the weighted targets
// wq_c = w_c ((1 - ls) q_c + ls / C) in the kernels' compute type, then
//   forward: lse = max_sum_exp, loss = log_s * sum wq - sum wq (x - max)   (dot, sum)
//   gradient: out = exp(x - lse) g sum wq - g wq_c                         (ce_grad, sum)
// A target that is already wq (no weight, no smoothing, contiguous) is read in place: in the
// compute type by dot / ce_grad, in the logits' 16-bit dtype by dot_t / ce_grad_t.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_PROB_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_PROB_PLAN_H_

#include <memory>

#include "ops/common/cross_entropy.h"
#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_prob {

constexpr const char* kFwdOp = "aclnnCpuCrossEntropyLossProb";
constexpr const char* kGradOp = "aclnnCpuCrossEntropyLossProbGrad";

struct Args {
  bool grad = false;  // the gradient operator (grad_loss, lse in, out) or the forward
  const aclTensor *grad_loss, *logits, *target, *weight, *lse;
  const char* reduction;
  double label_smoothing;
  const aclTensor *loss_out, *out;  // the forward's lossOut; the gradient's out
  const char* op() const { return grad ? kGradOp : kFwdOp; }
};

struct Checked {
  bool grad = false;
  bool empty = false;  // N == 0 or C == 0: nothing to write
  ce::Reduction reduction = ce::Reduction::kMean;
  int64_t n = 0, c = 0;
  double label_smoothing = 0.0;
  bool has_weight = false;
  TensorDesc logits, target, weight, lse, grad_loss, out;  // out: lossOut for the forward
};

Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

}  // namespace ce_prob
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_PROB_PLAN_H_
