// aclnnCrossEntropyLossGrad in the operator table.
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "cross_entropy_common.h"
#include "device_tensor.h"
#include "tolerance.h"

namespace optable {

namespace {

using testing_support::Uniform;

enum { kGradLoss, kLogProb, kTarget, kWeight, kGradZloss, kLse, kOut };

std::vector<TensorDecl> Declare(const Problem& p) {
  const int64_t n = p.shape[0], c = p.shape[1];
  const bool z = p.zloss != 0.0;
  return {{true, p.dtype, ce::LossShape(p)},
          {true, p.dtype, p.shape},
          {true, p.target_dtype, {p.TargetLength()}},
          {p.weight, ACL_FLOAT, {c}},
          {z, p.dtype, ce::LossShape(p)},
          {z, p.dtype, {n}},
          {true, p.dtype, p.shape}};
}

void Fill(const Problem& p, std::mt19937_64& rng, Values* v) {
  const int64_t n = p.shape[0], c = p.shape[1];
  const std::vector<double> logits = testing_support::Normal(rng, n * c, 0.0, 2.0);
  (*v)[kLogProb] = ref::LogSoftmax(logits, p.shape, 1);
  const std::vector<double>& lp = (*v)[kLogProb];
  (*v)[kGradLoss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
  (*v)[kTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kWeight] = ce::Weights(p, rng);
  if (p.zloss != 0.0) {
    (*v)[kGradZloss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
    std::vector<double> lse(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < n && c > 0; ++i) lse[i] = logits[i * c] - lp[i * c];
    (*v)[kLse] = lse;
  }
}

int Phase1(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCrossEntropyLossGradGetWorkspaceSize(
      t[kGradLoss], t[kLogProb], t[kTarget], t[kWeight], t[kGradZloss], t[kLse], a.reduction,
      a.ignore_index, a.label_smoothing, a.zloss, t[kOut], ws, ex);
}

std::vector<Expected> Reference(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kTarget], in[kWeight]);
  const std::vector<double>&lp = in[kLogProb], &g = in[kGradLoss];
  return {{kOut, ref::CrossEntropyLossGrad(a, lp, g, in[kGradZloss], in[kLse]),
           tolerance::CrossEntropyLossGradBound(a, lp, g, in[kGradZloss], in[kLse],
                                                tolerance::UnitRoundoff(p.dtype)),
           p.dtype}};
}

}  // namespace

extern const OpSpec kCrossEntropyLossGrad;  // external linkage (op_table.cc lists it)
// clang-format off
const OpSpec kCrossEntropyLossGrad = ce::MakeSpec(
    "cross_entropy_loss_grad", "ce_grad", "aclnnCrossEntropyLossGrad",
    {{"gradLoss", Role::kInput, false}, {"logProb", Role::kInput, false},
     {"target", Role::kInput, false}, {"weightOptional", Role::kInput, true},
     {"gradZlossOptional", Role::kInput, true}, {"lseForZlossOptional", Role::kInput, true},
     {"out", Role::kOutput, false}},
    Declare, Fill, Phase1, aclnnCrossEntropyLossGrad, Reference);
// clang-format on

}  // namespace optable
