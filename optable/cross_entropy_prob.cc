// aclnnCpuCrossEntropyLossProb, aclnnCpuCrossEntropyLossProbGrad and
// aclnnCpuCrossEntropyLossProbWithGrad (class-probability targets, aclnn-cpu's extensions) in the
// operator table.
#include <cmath>

#include "aclnn_cpu/aclnn_cpu_ext.h"
#include "cross_entropy_common.h"
#include "device_tensor.h"
#include "tolerance.h"

namespace optable {

namespace {

using testing_support::Normal;
using testing_support::Uniform;

std::vector<Attr> Attrs() { return {Attr::kReduction, Attr::kWeight, Attr::kLabelSmoothing}; }

// The lse's dtype: FLOAT, DOUBLE for a DOUBLE input (all of it).
aclDataType Stats(const Problem& p) { return p.dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; }

ref::Reduction Red(const Problem& p) {
  return p.reduction == "none"  ? ref::Reduction::kNone
         : p.reduction == "sum" ? ref::Reduction::kSum
                                : ref::Reduction::kMean;
}

// Logits, and targets that are each row's probabilities (a softmax of other logits, so some
// classes are nearly 0 and some dominate).
void FillLogitsAndTargets(const Problem& p, std::mt19937_64& rng, std::vector<double>* x,
                          std::vector<double>* q) {
  const int64_t n = p.shape[0], c = p.shape[1];
  *x = Normal(rng, n * c, 0.0, 2.0);
  *q = Normal(rng, n * c, 0.0, 2.0);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < c; ++j) s += ((*q)[i * c + j] = std::exp((*q)[i * c + j]));
    for (int64_t j = 0; j < c; ++j) (*q)[i * c + j] /= s;
  }
}

Problem AllOptions(Problem p) {
  p.weight = true;
  p.label_smoothing = 0.1;
  return p;
}

std::vector<Problem> Bench(const OpSpec* op) {
  std::vector<Problem> v;
  for (aclDataType t : {ACL_FLOAT, ACL_BF16}) {
    Problem p = DefaultProblem(op);
    p.shape = {4096, 32000};
    p.dtype = t;
    v.push_back(p);
  }
  Problem p = DefaultProblem(op);
  p.shape = {8, 8};
  v.push_back(p);
  return v;
}

// ---- aclnnCpuCrossEntropyLossProb -------------------------------------------------------------

enum { kInput, kTarget, kWeight, kLossOut, kLseOut };

std::vector<TensorDecl> DeclareFwd(const Problem& p) {
  return {{true, p.dtype, p.shape},
          {true, p.dtype, p.shape},
          {p.weight, ACL_FLOAT, {p.shape[1]}},
          {true, p.dtype, ce::LossShape(p)},
          {true, Stats(p), {p.shape[0]}}};
}

void FillFwd(const Problem& p, std::mt19937_64& rng, Values* v) {
  FillLogitsAndTargets(p, rng, &(*v)[kInput], &(*v)[kTarget]);
  if (p.weight) (*v)[kWeight] = ce::Weights(p, rng);
}

int Phase1Fwd(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossProbGetWorkspaceSize(t[kInput], t[kTarget], t[kWeight],
                                                      a.reduction, a.label_smoothing, t[kLossOut],
                                                      t[kLseOut], ws, ex);
}

std::vector<Expected> ReferenceFwd(const Problem& p, const Values& in) {
  const int64_t n = p.shape[0], c = p.shape[1];
  const ref::CrossEntropyProbResult e =
      ref::CrossEntropyProb(in[kInput], in[kTarget], in[kWeight], n, c, Red(p), p.label_smoothing);
  tolerance::CrossEntropyProbBounds b =
      tolerance::CrossEntropyProbBound(in[kInput], in[kTarget], in[kWeight], n, c, Red(p),
                                       p.label_smoothing, e, tolerance::UnitRoundoff(p.dtype));
  return {{kLossOut, e.loss, std::move(b.loss), p.dtype},
          {kLseOut, e.lse, std::move(b.lse), p.dtype}};
}

// ---- aclnnCpuCrossEntropyLossProbGrad ---------------------------------------------------------

enum { kGradLoss, kLogits, kGTarget, kGWeight, kLse, kOut };

std::vector<TensorDecl> DeclareGrad(const Problem& p) {
  return {{true, p.dtype, ce::LossShape(p)}, {true, p.dtype, p.shape},
          {true, p.dtype, p.shape},          {p.weight, ACL_FLOAT, {p.shape[1]}},
          {true, Stats(p), {p.shape[0]}},    {true, p.dtype, p.shape}};
}

void FillGrad(const Problem& p, std::mt19937_64& rng, Values* v) {
  const int64_t n = p.shape[0], c = p.shape[1];
  FillLogitsAndTargets(p, rng, &(*v)[kLogits], &(*v)[kGTarget]);
  if (p.weight) (*v)[kGWeight] = ce::Weights(p, rng);
  (*v)[kGradLoss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
  // The logits' own lse (the gradient is that of the lse as given: any value would do).
  (*v)[kLse] =
      ref::CrossEntropyProb((*v)[kLogits], (*v)[kGTarget], {}, n, c, ref::Reduction::kNone, 0.0)
          .lse;
}

int Phase1Grad(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossProbGradGetWorkspaceSize(t[kGradLoss], t[kLogits], t[kGTarget],
                                                          t[kGWeight], t[kLse], a.reduction,
                                                          a.label_smoothing, t[kOut], ws, ex);
}

std::vector<Expected> ReferenceGrad(const Problem& p, const Values& in) {
  const int64_t n = p.shape[0], c = p.shape[1];
  return {{kOut,
           ref::CrossEntropyProbGrad(in[kLogits], in[kGTarget], in[kGWeight], in[kLse],
                                     in[kGradLoss], n, c, Red(p), p.label_smoothing),
           tolerance::CrossEntropyProbGradBound(in[kLogits], in[kGTarget], in[kGWeight], in[kLse],
                                                in[kGradLoss], n, c, Red(p), p.label_smoothing,
                                                tolerance::UnitRoundoff(p.dtype)),
           p.dtype}};
}

// ---- aclnnCpuCrossEntropyLossProbWithGrad -----------------------------------------------------

enum { kWInput, kWTarget, kWWeight, kWGradLoss, kWLossOut, kWLseOut, kWGradOut };

std::vector<TensorDecl> DeclareWithGrad(const Problem& p) {
  return {{true, p.dtype, p.shape},
          {true, p.dtype, p.shape},
          {p.weight, ACL_FLOAT, {p.shape[1]}},
          {true, p.dtype, ce::LossShape(p)},
          {true, p.dtype, ce::LossShape(p)},
          {true, Stats(p), {p.shape[0]}},
          {true, p.dtype, p.shape}};
}

void FillWithGrad(const Problem& p, std::mt19937_64& rng, Values* v) {
  FillLogitsAndTargets(p, rng, &(*v)[kWInput], &(*v)[kWTarget]);
  if (p.weight) (*v)[kWWeight] = ce::Weights(p, rng);
  (*v)[kWGradLoss] = Uniform(rng, ref::Numel(ce::LossShape(p)), 0.5, 1.5);
}

int Phase1WithGrad(const CallArgs& a, uint64_t* ws, aclOpExecutor** ex) {
  aclTensor* const* t = a.tensors;
  return aclnnCpuCrossEntropyLossProbWithGradGetWorkspaceSize(
      t[kWInput], t[kWTarget], t[kWWeight], t[kWGradLoss], a.reduction, a.label_smoothing,
      t[kWLossOut], t[kWLseOut], t[kWGradOut], ws, ex);
}

// The forward's and the gradient's references; the gradient takes lseOut's lse, off by the
// forward's lse bound and rounded to lseOut's dtype.
std::vector<Expected> ReferenceWithGrad(const Problem& p, const Values& in) {
  const int64_t n = p.shape[0], c = p.shape[1];
  const double u = tolerance::UnitRoundoff(p.dtype);
  const ref::CrossEntropyProbResult e = ref::CrossEntropyProb(
      in[kWInput], in[kWTarget], in[kWWeight], n, c, Red(p), p.label_smoothing);
  tolerance::CrossEntropyProbBounds b = tolerance::CrossEntropyProbBound(
      in[kWInput], in[kWTarget], in[kWWeight], n, c, Red(p), p.label_smoothing, e, u);
  const double u_lse = tolerance::UnitRoundoff(Stats(p));
  std::vector<double> lse_error(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) lse_error[i] = b.lse[i] + u_lse * std::fabs(e.lse[i]);
  const std::vector<double>& g = in[kWGradLoss];
  std::vector<double> bound =
      tolerance::CrossEntropyProbGradBound(in[kWInput], in[kWTarget], in[kWWeight], e.lse, g, n, c,
                                           Red(p), p.label_smoothing, u, lse_error);
  std::vector<double> grad = ref::CrossEntropyProbGrad(in[kWInput], in[kWTarget], in[kWWeight],
                                                       e.lse, g, n, c, Red(p), p.label_smoothing);
  return {{kWLossOut, e.loss, std::move(b.loss), p.dtype},
          {kWLseOut, e.lse, std::move(b.lse), p.dtype},
          {kWGradOut, std::move(grad), std::move(bound), p.dtype}};
}

OpSpec Spec(const char* name, const char* alias, const char* api, std::vector<Param> params,
            decltype(OpSpec::declare) declare, decltype(OpSpec::fill) fill,
            decltype(OpSpec::phase1) phase1, decltype(OpSpec::phase2) phase2,
            decltype(OpSpec::reference) reference) {
  return OpSpec{name,       alias,
                api,        std::move(params),
                Attrs(),    {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE},
                2,          2,
                "NxC",      declare,
                fill,       phase1,
                phase2,     reference,
                AllOptions, Bench};
}

}  // namespace

extern const OpSpec kCrossEntropyLossProb, kCrossEntropyLossProbGrad, kCrossEntropyLossProbWithGrad;
// clang-format off
const OpSpec kCrossEntropyLossProb = Spec(
    "cross_entropy_loss_prob", "ce_prob", "aclnnCpuCrossEntropyLossProb",
    {{"input", Role::kInput, false}, {"target", Role::kInput, false},
     {"weightOptional", Role::kInput, true}, {"lossOut", Role::kOutput, false},
     {"lseOut", Role::kOutput, false}},
    DeclareFwd, FillFwd, Phase1Fwd, aclnnCpuCrossEntropyLossProb, ReferenceFwd);

const OpSpec kCrossEntropyLossProbGrad = [] {
  OpSpec s = Spec(
      "cross_entropy_loss_prob_grad", "ce_prob_grad", "aclnnCpuCrossEntropyLossProbGrad",
      {{"gradLoss", Role::kInput, false}, {"logits", Role::kInput, false},
       {"target", Role::kInput, false}, {"weightOptional", Role::kInput, true},
       {"lse", Role::kInput, false}, {"out", Role::kOutput, false}},
      DeclareGrad, FillGrad, Phase1Grad, aclnnCpuCrossEntropyLossProbGrad, ReferenceGrad);
  s.in_place_input = "logits";
  return s;
}();

const OpSpec kCrossEntropyLossProbWithGrad = [] {
  OpSpec s = Spec(
      "cross_entropy_loss_prob_with_grad", "ce_prob_with_grad",
      "aclnnCpuCrossEntropyLossProbWithGrad",
      {{"input", Role::kInput, false}, {"target", Role::kInput, false},
       {"weightOptional", Role::kInput, true}, {"gradLossOptional", Role::kInput, true},
       {"lossOut", Role::kOutput, false}, {"lseOut", Role::kOutput, false},
       {"gradOut", Role::kOutput, false}},
      DeclareWithGrad, FillWithGrad, Phase1WithGrad, aclnnCpuCrossEntropyLossProbWithGrad,
      ReferenceWithGrad);
  s.in_place_input = "input";
  return s;
}();
// clang-format on

}  // namespace optable
