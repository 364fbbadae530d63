// aclnnCpuCrossEntropyLossProb, aclnnCpuCrossEntropyLossProbGrad and
// aclnnCpuCrossEntropyLossProbWithGrad (extensions: cross-entropy with class-probability
// targets, PyTorch's semantics): validation (pure) and planning. All three are one plan over
// rows, built on the row kernels: per row the weighted targets wq_c = w_c ((1 - ls) q_c + ls / C)
// in the kernels' compute type, then
//   forward: lse = max_sum_exp, loss = log_s * sum wq - sum wq (x - max)   (dot, sum)
//   gradient: out = exp(x - lse) g sum wq - g wq_c                         (ce_grad, sum)
// and with the gradient, both on the row (the gradient from the lse as lseOut holds it).
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
constexpr const char* kWithGradOp = "aclnnCpuCrossEntropyLossProbWithGrad";

// The forward (lossOut, lseOut), the gradient (gradLoss, lse in, out) or both (lossOut, lseOut,
// gradOut, with an optional gradLoss).
enum class Kind { kForward, kGrad, kWithGrad };
inline const char* OpName(Kind k) {
  return k == Kind::kGrad ? kGradOp : k == Kind::kWithGrad ? kWithGradOp : kFwdOp;
}
// Whether a kind computes the loss (lossOut, lseOut) and whether it computes the gradient.
inline bool LossPass(Kind k) { return k != Kind::kGrad; }
inline bool GradPass(Kind k) { return k != Kind::kForward; }

struct Args {
  Kind kind = Kind::kForward;
  const aclTensor *grad_loss, *logits, *target, *weight, *lse;
  const char* reduction;
  double label_smoothing;
  const aclTensor *loss_out, *out;  // lossOut (forward, both); the gradient's out or gradOut
  const char* op() const { return OpName(kind); }
};

struct Checked {
  Kind kind = Kind::kForward;
  bool empty = false;  // N == 0 or C == 0: nothing to write
  ce::Reduction reduction = ce::Reduction::kMean;
  int64_t n = 0, c = 0;
  double label_smoothing = 0.0;
  bool has_weight = false, has_grad_loss = false;
  // loss: lossOut; out: the gradient (both unset where the kind has none).
  TensorDesc logits, target, weight, lse, grad_loss, loss, out;
  bool loss_pass() const { return LossPass(kind); }
  bool grad_pass() const { return GradPass(kind); }
};

Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

}  // namespace ce_prob
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_PROB_PLAN_H_
