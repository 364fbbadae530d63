// K-dimensional cross-entropy, aclnn-cpu's extension: the lean forward
// (aclnnCpuCrossEntropyLossLse) and the gradient from logits
// (aclnnCpuCrossEntropyLossGradFromLogits), and both in one pass
// (aclnnCpuCrossEntropyLossWithGrad), of an (N, C, d1, ..., dK) input, read in place. The
// class dim is strided (d1 * ... * dK for a contiguous input), so positions are taken in column
// tiles: a tile of adjacent positions along the innermost contiguous dim, a class per row,
// vectorized across the positions (row_kernels.h: ce_stats_cols, ce_grad_cols). No transposed
// copy. Validation is the operators' own (their Checked.spatial); this module plans.
#ifndef ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_PLAN_H_
#define ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_PLAN_H_

#include <memory>

#include "ops/cross_entropy_loss/plan.h"
#include "ops/cross_entropy_loss_grad/plan.h"
#include "runtime/executor.h"

namespace aclnn_cpu {
namespace ce_spatial {

// The plan of a checked lean forward: the column-tile plan where c.spatial, else ce_fwd's.
std::unique_ptr<Plan> MakeLsePlan(const ce_fwd::Checked& c);
// The plan of a checked lean forward with the gradient: forward and gradient tile by tile where
// c.spatial, else ce_fwd's.
std::unique_ptr<Plan> MakeWithGradPlan(const ce_fwd::Checked& c);
// The plan of a checked gradient from logits: the column-tile plan where c.spatial, else
// ce_grad's.
std::unique_ptr<Plan> MakeGradPlan(const ce_grad::Checked& c);

}  // namespace ce_spatial
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_CROSS_ENTROPY_SPATIAL_PLAN_H_
