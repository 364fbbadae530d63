// The lean cross-entropy extensions in the operator table (include/aclnn_cpu/aclnn_cpu_ext.h):
// aclnnCpuCrossEntropyLossLse (the forward without logProb),
// aclnnCpuCrossEntropyLossGradFromLogits (the gradient from the logits and their lse) and
// aclnnCpuCrossEntropyLossWithGrad (both in one pass).
#include <cmath>

#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "cross_entropy_common.h"
#include "device_tensor.h"
#include "tolerance.h"

namespace optable {
namespace {

using testing_support::Uniform;

// Its kernels are the CANN operators' (with and without logProb); the largest rows.
std::vector<Problem> LeanBenchProblems(const OpSpec* op) {
  std::vector<Problem> v;
  for (aclDataType t : {ACL_FLOAT, ACL_BF16}) {
    Problem p = DefaultProblem(op);
    p.shape =
        t == ACL_FLOAT ? std::vector<int64_t>{4096, 32000} : std::vector<int64_t>{8192, 50257};
    p.dtype = t;
    p.weight = true;
    p.label_smoothing = 0.1;
    p.ignore_every = 17;
    v.push_back(p);
  }
  return v;
}

// ---- aclnnCpuCrossEntropyLossLse --------------------------------------------------------------

// The dtype of the loss, z-loss and lse outputs: FLOAT, DOUBLE for a DOUBLE input (the loss must
// have the input's dtype or FLOAT for a 16-bit one; a DOUBLE lse keeps all of it).
aclDataType Stats(const Problem& p) { return p.dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; }

enum { kInput, kTarget, kWeight, kLossOut, kZlossOut, kLseOut };

std::vector<TensorDecl> DeclareLse(const Problem& p) {
  const int64_t c = p.shape[1];
  return {{true, p.dtype, p.shape},           {true, p.target_dtype, ce::TargetShape(p)},
          {p.weight, ACL_FLOAT, {c}},         {true, Stats(p), ce::LossShape(p)},
          {true, Stats(p), ce::LossShape(p)}, {true, Stats(p), ce::PositionShape(p)}};
}

void FillLse(const Problem& p, std::mt19937_64& rng, Values* v) {
  (*v)[kInput] = testing_support::Normal(rng, ref::Numel(p.shape), 0.0, 2.0);
  (*v)[kTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kWeight] = ce::Weights(p, rng);
}

int Phase1Lse(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossLseGetWorkspaceSize(
      t[kInput], t[kTarget], t[kWeight], a.reduction, a.ignore_index, a.label_smoothing, a.zloss,
      a.return_zloss, t[kLossOut], t[kZlossOut], t[kLseOut], ws, ex);
}

std::vector<Expected> ReferenceLse(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kTarget], in[kWeight]);
  const std::vector<double> rows = ce::ToRows(p, in[kInput]);  // positions in order
  const ref::CrossEntropyResult e = ref::CrossEntropyLoss(a, rows);
  tolerance::CrossEntropyBounds b =
      tolerance::CrossEntropyLossBound(a, rows, e, tolerance::UnitRoundoff(p.dtype));
  return {{kLossOut, e.loss, std::move(b.loss), p.dtype},
          {kZlossOut, e.zloss, std::move(b.zloss), p.dtype},
          {kLseOut, e.lse, std::move(b.lse), p.dtype}};
}

// ---- aclnnCpuCrossEntropyLossGradFromLogits --------------------------------------------------

enum { kGradLoss, kLogits, kGTarget, kGWeight, kGradZloss, kLse, kOut };

std::vector<TensorDecl> DeclareGrad(const Problem& p) {
  const int64_t c = p.shape[1];
  const bool z = p.zloss != 0.0;
  return {{true, p.dtype, ce::LossShape(p)},
          {true, p.dtype, p.shape},
          {true, p.target_dtype, ce::TargetShape(p)},
          {p.weight, ACL_FLOAT, {c}},
          {z, p.dtype, ce::LossShape(p)},
          {true, Stats(p), ce::PositionShape(p)},
          {true, p.dtype, p.shape}};
}

void FillGrad(const Problem& p, std::mt19937_64& rng, Values* v) {
  const int64_t n = ref::Numel(ce::PositionShape(p)), c = p.shape[1];
  (*v)[kLogits] = testing_support::Normal(rng, n * c, 0.0, 2.0);
  (*v)[kGradLoss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
  (*v)[kGTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kGWeight] = ce::Weights(p, rng);
  if (p.zloss != 0.0) (*v)[kGradZloss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
  // Each row's log-sum-exp, as the forward gives it (computed before the logits are rounded
  // to their dtype: the gradient is defined for any given lse, and the reference uses the
  // stored values of both).
  std::vector<double> lse(static_cast<size_t>(n), 0.0);
  const std::vector<double> x = ce::ToRows(p, (*v)[kLogits]);
  for (int64_t i = 0; i < n && c > 0; ++i) {
    double m = -HUGE_VAL, s = 0.0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x[i * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(x[i * c + j] - m);
    lse[i] = m + std::log(s);
  }
  (*v)[kLse] = lse;
}

int Phase1Grad(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossGradFromLogitsGetWorkspaceSize(
      t[kGradLoss], t[kLogits], t[kGTarget], t[kGWeight], t[kGradZloss], t[kLse], a.reduction,
      a.ignore_index, a.label_smoothing, a.zloss, t[kOut], ws, ex);
}

std::vector<Expected> ReferenceGrad(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kGTarget], in[kGWeight]);
  const int64_t n = a.n, c = a.c;
  // The log-probabilities the gradient is made of: logits minus the given lse, in double.
  const std::vector<double> x = ce::ToRows(p, in[kLogits]);
  std::vector<double> lp(x.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) lp[i * c + j] = x[i * c + j] - in[kLse][i];
  }
  const std::vector<double>& g = in[kGradLoss];
  std::vector<double> bound = tolerance::CrossEntropyLossGradBound(
      a, lp, g, in[kGradZloss], in[kLse], tolerance::UnitRoundoff(p.dtype));
  // The difference x - lse before exp (f32, or double for DOUBLE) moves the exponent by up to
  // u |x - lse|.
  const std::vector<double> mag =
      ref::CrossEntropyLossGradMagnitudes(a, lp, g, in[kGradZloss], in[kLse]);
  for (size_t e = 0; e < bound.size(); ++e) {
    bound[e] += mag[e] * tolerance::UnitRoundoff(p.dtype) * std::fabs(lp[e]);
  }
  return {{kOut, ce::FromRows(p, ref::CrossEntropyLossGrad(a, lp, g, in[kGradZloss], in[kLse])),
           ce::FromRows(p, bound), p.dtype}};
}

void KDimensional(OpSpec* s);

// ---- aclnnCpuCrossEntropyLossWithGrad ----------------------------------------------------------

enum { kWInput, kWTarget, kWWeight, kWGradLoss, kWLossOut, kWZlossOut, kWLseOut, kWGradOut };

std::vector<TensorDecl> DeclareWithGrad(const Problem& p) {
  const int64_t c = p.shape[1];
  return {{true, p.dtype, p.shape},
          {true, p.target_dtype, ce::TargetShape(p)},
          {p.weight, ACL_FLOAT, {c}},
          {true, p.dtype, ce::LossShape(p)},
          {true, Stats(p), ce::LossShape(p)},
          {true, Stats(p), ce::LossShape(p)},
          {true, Stats(p), ce::PositionShape(p)},
          {true, p.dtype, p.shape}};
}

void FillWithGrad(const Problem& p, std::mt19937_64& rng, Values* v) {
  (*v)[kWInput] = testing_support::Normal(rng, ref::Numel(p.shape), 0.0, 2.0);
  (*v)[kWTarget] = ce::Targets(p, rng);
  if (p.weight) (*v)[kWWeight] = ce::Weights(p, rng);
  (*v)[kWGradLoss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
}

int Phase1WithGrad(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossWithGradGetWorkspaceSize(
      t[kWInput], t[kWTarget], t[kWWeight], t[kWGradLoss], a.reduction, a.ignore_index,
      a.label_smoothing, a.zloss, a.return_zloss, t[kWLossOut], t[kWZlossOut], t[kWLseOut],
      t[kWGradOut], ws, ex);
}

std::vector<Expected> ReferenceWithGrad(const Problem& p, const Values& in) {
  const ref::CrossEntropyArgs a = ce::RefArgs(p, in[kWTarget], in[kWWeight]);
  const std::vector<double> rows = ce::ToRows(p, in[kWInput]);  // positions in order
  const ref::CrossEntropyResult e = ref::CrossEntropyLoss(a, rows);
  tolerance::CrossEntropyBounds b =
      tolerance::CrossEntropyLossBound(a, rows, e, tolerance::UnitRoundoff(p.dtype));
  const std::vector<double>& g = in[kWGradLoss];
  std::vector<double> bound = tolerance::CrossEntropyLossGradBound(
      a, e.log_prob, g, {}, e.lse, tolerance::UnitRoundoff(p.dtype));
  // The gradient takes p = exp(x - lse) with lseOut's lse (off by its bound, then rounded to
  // lseOut's dtype) and one subtraction in the compute type: both move the exponent.
  const std::vector<double> mag = ref::CrossEntropyLossGradMagnitudes(a, e.log_prob, g, {}, e.lse);
  const int64_t c = p.shape[1];
  for (size_t k = 0; k < bound.size(); ++k) {
    const size_t i = k / static_cast<size_t>(c);
    bound[k] += mag[k] * (tolerance::UnitRoundoff(p.dtype) *
                              (std::fabs(e.log_prob[k]) + std::fabs(e.lse[i])) +
                          b.lse[i]);
  }
  return {{kWLossOut, e.loss, std::move(b.loss), p.dtype},
          {kWZlossOut, e.zloss, std::move(b.zloss), p.dtype},
          {kWLseOut, e.lse, std::move(b.lse), p.dtype},
          {kWGradOut, ce::FromRows(p, ref::CrossEntropyLossGrad(a, e.log_prob, g, {}, e.lse)),
           ce::FromRows(p, bound), p.dtype}};
}

OpSpec WithGradSpec() {
  OpSpec s = ce::MakeSpec("cross_entropy_loss_with_grad", "ce_with_grad",
                          "aclnnCpuCrossEntropyLossWithGrad",
                          {{"input", Role::kInput, false},
                           {"target", Role::kInput, false},
                           {"weightOptional", Role::kInput, true},
                           {"gradLossOptional", Role::kInput, true},
                           {"lossOut", Role::kOutput, false},
                           {"zlossOut", Role::kOutput, false},
                           {"lseOut", Role::kOutput, false},
                           {"gradOut", Role::kOutput, false}},
                          DeclareWithGrad, FillWithGrad, Phase1WithGrad,
                          aclnnCpuCrossEntropyLossWithGrad, ReferenceWithGrad);
  s.in_place_input = "input";
  KDimensional(&s);
  return s;
}

// The lean forward, the gradient from logits and both in one pass also take K-dimensional problems
// (N x C x d1 x ... x dK, the class dim strided: ce_spatial's column tiles), and benchmark a
// segmentation batch.
void KDimensional(OpSpec* s) {
  s->max_rank = 8;
  s->shape_hint = "NxC or NxCxd1x...xdK";
  s->bench_problems = [](const OpSpec* op) {
    std::vector<Problem> v = LeanBenchProblems(op);
    for (aclDataType t : {ACL_FLOAT, ACL_BF16}) {
      Problem p = DefaultProblem(op);
      p.shape = {8, 21, 512, 512};
      p.dtype = t;
      p.ignore_index = 255;
      p.ignore_every = 17;
      v.push_back(p);
    }
    return v;
  };
}

OpSpec LseSpec() {
  OpSpec s =
      ce::MakeSpec("cross_entropy_loss_lse", "ce_lse", "aclnnCpuCrossEntropyLossLse",
                   {{"input", Role::kInput, false},
                    {"target", Role::kInput, false},
                    {"weightOptional", Role::kInput, true},
                    {"lossOut", Role::kOutput, false},
                    {"zlossOut", Role::kOutput, false},
                    {"lseOut", Role::kOutput, false}},
                   DeclareLse, FillLse, Phase1Lse, aclnnCpuCrossEntropyLossLse, ReferenceLse);
  s.bench_problems = LeanBenchProblems;
  KDimensional(&s);
  return s;
}

OpSpec GradSpec() {
  OpSpec s = ce::MakeSpec("cross_entropy_loss_grad_from_logits", "ce_grad_logits",
                          "aclnnCpuCrossEntropyLossGradFromLogits",
                          {{"gradLoss", Role::kInput, false},
                           {"logits", Role::kInput, false},
                           {"target", Role::kInput, false},
                           {"weightOptional", Role::kInput, true},
                           {"gradZlossOptional", Role::kInput, true},
                           {"lse", Role::kInput, false},
                           {"out", Role::kOutput, false}},
                          DeclareGrad, FillGrad, Phase1Grad, aclnnCpuCrossEntropyLossGradFromLogits,
                          ReferenceGrad);
  s.bench_problems = LeanBenchProblems;
  s.in_place_input = "logits";
  KDimensional(&s);
  return s;
}

}  // namespace

extern const OpSpec kCrossEntropyLossLse;  // external linkage (op_table.cc lists it)
const OpSpec kCrossEntropyLossLse = LseSpec();
extern const OpSpec kCrossEntropyLossGradFromLogits;
const OpSpec kCrossEntropyLossGradFromLogits = GradSpec();
extern const OpSpec kCrossEntropyLossWithGrad;
const OpSpec kCrossEntropyLossWithGrad = WithGradSpec();

}  // namespace optable
