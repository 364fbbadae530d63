// aclnnCrossEntropyLoss: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_

#include <memory>

#include "ops/common/cross_entropy.h"
#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_fwd {

constexpr const char* kOp = "aclnnCrossEntropyLoss";
// aclnn-cpu's extension (include/aclnn_cpu/aclnn_cpu_ext.h): the same operator with fp32 loss,
// z-loss and log-sum-exp outputs allowed for 16-bit inputs.
constexpr const char* kFloatStatsOp = "aclnnCpuCrossEntropyLoss";
// The lean forward (extension): no logProbOut; lseOut FLOAT, always written.
constexpr const char* kLseOp = "aclnnCpuCrossEntropyLossLse";
// The lean forward that also writes the gradient (extension), optionally over the input.
constexpr const char* kWithGradOp = "aclnnCpuCrossEntropyLossWithGrad";

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
  // kFloatStatsOp: lossOut, zlossOut and lseForZlossOut may be FLOAT for a 16-bit input.
  bool float_stats = false;
  // kLseOp (implies float_stats): log_prob_out is null and unused.
  bool lean = false;
  // kWithGradOp (implies lean): grad_out (N, C) receives dloss/dinput for grad_loss (null:
  // ones), and may be the input's own view.
  bool with_grad = false;
  const aclTensor* grad_loss = nullptr;
  const aclTensor* grad_out = nullptr;

  const char* op() const {
    return with_grad ? kWithGradOp : (lean ? kLseOp : (float_stats ? kFloatStatsOp : kOp));
  }
};

// What Validate hands to MakePlan: tensor descriptions and parsed attributes.
struct Checked : ce::Common {
  bool empty = false;  // no element of any output exists: nothing else is filled
  TensorDesc input, loss, log_prob, zloss, lse;
  bool return_zloss = false;
  const char* op = kOp;                           // the entry point's name, for messages
  bool lean = false;                              // no logProb; lse always written
  bool with_grad = false, has_grad_loss = false;  // kWithGradOp: the gradient too
  TensorDesc grad_loss, grad_out;
  // An (N, C, d1, ..., dK) input (kLseOp, kWithGradOp): ce_spatial's plan; n is N, the positions
  // are N * d1 * ... * dK.
  bool spatial = false;
};

Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

// For operators composed of this one (the fused linear cross-entropy runs it on chunks of rows
// it computes): the workspace the plan of `c` needs, and that plan run once on the stack, with
// no executor and no allocation.
uint64_t PlanWorkspaceBytes(const Checked& c);
Status RunPlanOnce(const Checked& c, void* workspace);

}  // namespace ce_fwd
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_PLAN_H_
