// aclnnCrossEntropyLoss in the operator table.
#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "cross_entropy_common.h"
#include "device_tensor.h"
#include "tolerance.h"

namespace optable {

namespace {

enum { kInput, kTarget, kWeight, kLossOut, kLogProbOut, kZlossOut, kLseOut };

std::vector<TensorDecl> Declare(const Problem& p) {
  const int64_t n = p.shape[0], c = p.shape[1];
  return {{true, p.dtype, p.shape},   {true, p.target_dtype, {n}},
          {p.weight, ACL_FLOAT, {c}}, {true, p.dtype, ce::LossShape(p)},
          {true, p.dtype, p.shape},   {true, p.dtype, ce::LossShape(p)},
          {true, p.dtype, {n}}};
}

void Fill(const Problem& p, std::mt19937_64& rng, Values* v) {
  (*v)[kInput] = testing_support::Normal(rng, ref::Numel(p.shape), 0.0, 2.0);
  (*v)[kTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kWeight] = ce::Weights(p, rng);
}

int Phase1(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCrossEntropyLossGetWorkspaceSize(
      t[kInput], t[kTarget], t[kWeight], a.reduction, a.ignore_index, a.label_smoothing, a.zloss,
      a.return_zloss, t[kLossOut], t[kLogProbOut], t[kZlossOut], t[kLseOut], ws, ex);
}

std::vector<Expected> Reference(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kTarget], in[kWeight]);
  const ref::CrossEntropyResult e = ref::CrossEntropyLoss(a, in[kInput]);
  tolerance::CrossEntropyBounds b = tolerance::CrossEntropyLossBound(a, in[kInput], e);
  std::vector<Expected> v = {{kLogProbOut, e.log_prob, std::move(b.log_prob), p.dtype},
                             {kLossOut, e.loss, std::move(b.loss), p.dtype},
                             {kZlossOut, e.zloss, std::move(b.zloss), p.dtype}};
  // lseForZlossOut is written only when the z-loss is on.
  if (p.zloss != 0.0) v.push_back({kLseOut, e.lse, std::move(b.lse), p.dtype});
  return v;
}

}  // namespace

extern const OpSpec kCrossEntropyLoss;  // external linkage (op_table.cc lists it)
// clang-format off
const OpSpec kCrossEntropyLoss = ce::MakeSpec(
    "cross_entropy_loss", "ce", "aclnnCrossEntropyLoss",
    {{"input", Role::kInput, false}, {"target", Role::kInput, false},
     {"weightOptional", Role::kInput, true},
     {"lossOut", Role::kOutput, false}, {"logProbOut", Role::kOutput, false},
     {"zlossOut", Role::kOutput, false}, {"lseForZlossOut", Role::kOutput, false}},
    Declare, Fill, Phase1, aclnnCrossEntropyLoss, Reference);
// clang-format on

}  // namespace optable
