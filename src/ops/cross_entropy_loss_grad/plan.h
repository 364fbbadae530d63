// aclnnCrossEntropyLossGrad: validation (pure) and planning.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_

#include <memory>

#include "ops/common/cross_entropy.h"
#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace ce_grad {

constexpr const char* kOp = "aclnnCrossEntropyLossGrad";
// The lean backward (extension): logits and their row log-sum-exp in place of logProb.
constexpr const char* kFromLogitsOp = "aclnnCpuCrossEntropyLossGradFromLogits";
// The vocabulary-parallel backward (extension): the from-logits gradient of one shard of the
// classes, [classOffset, classOffset + Vs) of numClasses.
constexpr const char* kShardOp = "aclnnCpuCrossEntropyLossGradShard";

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
  // kFromLogitsOp: log_prob holds the logits, lse (FLOAT, required) their row log-sum-exp, and
  // out may be the logits' own view (in place).
  bool from_logits = false;
  // kShardOp (implies from_logits): log_prob holds columns [class_offset, class_offset + Vs) of
  // logits over num_classes classes; target and weight are the whole vocabulary's.
  bool shard = false;
  int64_t class_offset = 0, num_classes = 0;

  const char* op() const { return shard ? kShardOp : (from_logits ? kFromLogitsOp : kOp); }
};

// What Validate hands to MakePlan: tensor descriptions and parsed attributes.
struct Checked : ce::Common {
  bool empty = false;  // N == 0 or C == 0: nothing to do, nothing else is filled
  // lse: when zloss_scale != 0 or from_logits.
  TensorDesc grad_loss, log_prob, grad_zloss, lse, out;
  bool has_grad_zloss = false;
  bool from_logits = false;
  const char* op = kOp;  // the entry point's name, for messages
  // Set by a composed operator whose batch this is a slice of (the fused linear
  // cross-entropy's chunks): the mean reduction's divisors d and m of the whole batch, in place
  // of this slice's own.
  bool has_batch_divisors = false;
  double batch_d = 1.0, batch_m = 1.0;
  // A shard of the classes (kShardOp): c is the shard's width; targets and weights range over
  // total_classes, of which the shard starts at class_offset. total_classes 0: c.
  int64_t class_offset = 0, total_classes = 0;
  // K-dimensional logits (N, C, d1, ..., dK) (kFromLogitsOp only): ce_spatial's plan.
  bool spatial = false;
};

// The spec's rules in order; on success fills *c.
Status Validate(const Args& a, Checked* c);
std::unique_ptr<Plan> MakePlan(const Checked& c);

// As ce_fwd's: the plan of `c`'s workspace, and the plan run once on the stack (no executor,
// no allocation), for composed operators.
uint64_t PlanWorkspaceBytes(const Checked& c);
Status RunPlanOnce(const Checked& c, void* workspace);

}  // namespace ce_grad
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_LOSS_GRAD_PLAN_H_
