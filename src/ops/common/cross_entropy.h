// Pieces shared by aclnnCrossEntropyLoss and aclnnCrossEntropyLossGrad: reduction parsing,
// attribute and shape rules, and the run-time target scan.
#ifndef ACLNN_CPU_OPS_COMMON_CROSS_ENTROPY_H_
#define ACLNN_CPU_OPS_COMMON_CROSS_ENTROPY_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/soc.h"
#include "core/status.h"
#include "tensor/tensor.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace ce {

enum class Reduction { kNone, kMean, kSum };
const char* ReductionName(Reduction r);

// null means "mean"; anything but "none", "mean", "sum" is rejected (561002).
Status ParseReduction(const char* op, const char* s, Reduction* r);
// labelSmoothing in [0, 1] (not NaN) and a finite z-loss scale (561002).
Status CheckAttributes(const char* op, double label_smoothing, double zloss_scale);
// For a per-row (none) or scalar (mean/sum) tensor: (N,) or, for mean/sum, 0-d or (1,).
Status CheckLossShape(const char* op, const char* name, const aclTensor* t, Reduction r, int64_t n);
// The same for the per-position tensors of a K-dimensional input: `positions` is
// PositionShape(input), (N,) for an (N, C) input.
Status CheckLossShape(const char* op, const char* name, const aclTensor* t, Reduction r,
                      const std::vector<int64_t>& positions);
// The shape of the per-position tensors (target, lse, loss "none") of an (N, C) input, (N,), or
// of an (N, C, d1, ..., dK) one, (N, d1, ..., dK): the input's without dim 1.
std::vector<int64_t> PositionShape(const aclTensor* input);

// The rules both operators share, in the spec's order, after each has checked the dtypes of its
// floating tensors: target INT64 or INT32 and weight FLOAT (161002); the reduction and the
// attributes; `rows` (the (N, C) tensor, named `rows_name`) 2-d, target (N,) and weight (C,)
// (561002). weight may be null. On success *r, *n and *c are set. With `k_dim` (the lean
// extensions), `rows` may also be (N, C, d1, ..., dK) with target (N, d1, ..., dK).
// Under an NPU profile (docs/soc_profiles.md) the profile's rules apply: INT64 targets only on
// the 910B-family; for the gradient (`grad_loss` non-null) the 910B-family's refusal of label
// smoothing and of unknown reductions, and the 950's order (gradLoss's shape right after the
// rank); the z-loss scale is not checked where the NPU ignores it.
Status CheckTargetsAndAttributes(const char* op, const SocProfile& soc, const char* rows_name,
                                 const aclTensor* rows, const aclTensor* target,
                                 const aclTensor* weight, const char* reduction,
                                 double label_smoothing, double zloss_scale,
                                 const aclTensor* grad_loss, Reduction* r, int64_t* n, int64_t* c,
                                 bool k_dim = false);

// The vocabulary-parallel operators' shard (logits (N, Vs), classes [class_offset,
// class_offset + Vs) of num_classes): the place of the shard (561002), then
// CheckTargetsAndAttributes against the whole vocabulary (target and weight are the whole
// vocabulary's). On success *r and *n are set and *vs is the shard's width.
Status CheckShardAndAttributes(const char* op, const SocProfile& soc, const aclTensor* logits,
                               int64_t class_offset, int64_t num_classes, const aclTensor* target,
                               const aclTensor* weight, const char* reduction,
                               double label_smoothing, double zloss_scale,
                               const aclTensor* grad_loss, Reduction* r, int64_t* n, int64_t* vs);

// 561003 where the profile's NPU has no kernel for `op`: the cross-entropy operators on the
// 910/310P, aclnn-cpu's extensions (`extension`) on every NPU.
Status CheckSocHasOperator(const char* op, const SocProfile& soc, bool extension);

// What both operators' checked descriptions share (each operator's Checked derives from it).
struct Common {
  Reduction reduction = Reduction::kMean;
  int64_t n = 0, c = 0;
  TensorDesc target, weight;  // weight: when has_weight
  bool has_weight = false;
  int64_t ignore_index = 0;
  double label_smoothing = 0.0, zloss_scale = 0.0;  // zloss_scale: 0 where the SoC ignores it
  SocProfile soc;  // the profile at phase 1: the ignore rule and the bad-target sentence
};
// Fills *k from arguments that passed CheckTargetsAndAttributes (and the storage checks).
void DescribeCommon(const SocProfile& soc, Reduction r, int64_t n, int64_t c,
                    const aclTensor* target, const aclTensor* weight, int64_t ignore_index,
                    double label_smoothing, double zloss_scale, Common* k);

// One row's target after the scan.
struct RowTarget {
  int64_t t;  // the target class, or -1 for an ignored row
  double w;   // weight of the target class (0 for an ignored row)
};

struct TargetScan {
  double d = 1.0;      // mean: sum of m_i * w_{t_i}; otherwise 1
  double m = 1.0;      // mean: number of rows not ignored; otherwise 1
  double w_sum = 0.0;  // sum of all class weights (C without weight)
};

// One row's gradient coefficients, aclnnCrossEntropyLossGrad's formula in double:
// out_j = p_j A - s w_j - [j == t] a, p_j = exp(x_j - shift) (logits) or exp(logProb_j).
struct GradCoef {
  double a = 0.0, s = 0.0, big_a = 0.0;
  bool zero = false;  // an ignored row with finite coefficients: the row is exactly 0
};
// rt: the row's scanned target; g and gz: its upstream gradients (gz 0 without gradZloss); lse:
// its log-sum-exp as stored (used only for the z-loss); cinv: 1 / (the vocabulary's classes).
// Every term carries the row's "not ignored" factor, evaluated in an order that makes a zero
// divisor under "mean" give inf/NaN exactly as the formula does.
inline GradCoef GradCoefficients(const RowTarget& rt, double g, double gz, double lse,
                                 double label_smoothing, double zloss_scale, double cinv,
                                 const TargetScan& scan) {
  const bool m = rt.t >= 0;
  GradCoef k;
  k.a = g * (1.0 - label_smoothing) / scan.d * rt.w;
  k.s = g / scan.d * (label_smoothing * cinv) * (m ? 1.0 : 0.0);
  double zc = 0.0;
  if (zloss_scale != 0.0) {
    const double l = m ? lse : 0.0;
    zc = 2.0 * zloss_scale * l * (m ? 1.0 : 0.0) * (g + gz) / scan.m;
  }
  k.big_a = k.a + k.s * scan.w_sum + zc;
  k.zero = !m && std::isfinite(k.a) && std::isfinite(k.s) && std::isfinite(zc);
  return k;
}
// The log-sum-exp a gradient from logits subtracts before exp, as the row kernels take it: `hi`,
// the lse rounded to f32 (the kernel's shift), and `scale` = exp(hi - lse), by which the caller
// multiplies p's coefficient so that exp(x - hi) * scale = exp(x - lse). Without the scale an lse
// of magnitude L, rounded to f32, puts p off by up to L * 2^-25 relative (logits of ~600: 2e-5).
// scale is 1 where lse is an f32 value already or is not finite.
// With f64 kernels (compute DOUBLE) the kernel takes the whole lse: hi = lse, scale 1.
struct LseShift {
  double hi = 0.0;
  double scale = 1.0;
};
inline LseShift SplitLse(double lse, aclDataType compute) {
  LseShift r;
  if (compute == ACL_DOUBLE) {
    r.hi = lse;
    return r;
  }
  r.hi = static_cast<double>(static_cast<float>(lse));
  if (std::isfinite(lse) && std::isfinite(r.hi)) {
    // e^d for the rounding error d (|d| <= 2^-25 |lse|): below 2^-20 its Taylor polynomial to
    // d^3 (the rest, d^4 / 24 < 2^-84, is below double's precision), else exp.
    const double d = r.hi - lse;
    r.scale = std::fabs(d) < 0x1p-20 ? 1.0 + d * (1.0 + d * (0.5 + d * (1.0 / 6.0))) : std::exp(d);
  }
  return r;
}
// The true class's element from its p, recomputed in double (p is near 1 there, where f32
// cancellation would lose the most).
inline double TrueClassGrad(const GradCoef& k, double p, double w_t) {
  return p * k.big_a - k.s * w_t - k.a;
}

// ScanTargets' rules one target at a time, for plans that scan their own way: whether value t
// is ignored under the profile's rule, and the error for target[i] = t that is neither ignored
// nor a class in [0, C).
inline bool IsIgnoredTarget(SocFamily soc, int64_t t, int64_t ignore_index) {
  switch (soc) {
    case SocFamily::kAscend910B:
      return static_cast<float>(t) == static_cast<float>(ignore_index);
    case SocFamily::kAscend950:
      return ignore_index >= 0 && t == ignore_index;
    default:
      return t == ignore_index;
  }
}
Status BadTargetError(const char* op, const SocProfile& soc, int64_t i, int64_t t,
                      int64_t ignore_index, int64_t c);
// ScanTargets' weight copy: weight (nullable) into w_contig[0..C) in the compute type; returns
// the sum of the copies (C without weight).
double CopyWeights(const TensorDesc* weight, int64_t c, aclDataType compute, void* w_contig);

// A row's (a position's) loss terms: -w_t log p_t, the smoothing sum -sum_c w_c log p_c and the
// z-loss; zero for an ignored row.
struct LossTerms {
  double nll = 0.0, smooth = 0.0, zl = 0.0;
};
// The loss of a row's terms, or of the terms' sums under "sum".
inline double CombineLoss(const LossTerms& t, double label_smoothing, int64_t c) {
  return (1.0 - label_smoothing) * t.nll + label_smoothing / static_cast<double>(c) * t.smooth +
         t.zl;
}
// The "mean" loss from the terms' sums (in the rows' order) and the scan's divisors.
inline double MeanLoss(const LossTerms& sums, double label_smoothing, int64_t c,
                       const TargetScan& scan) {
  return ((1.0 - label_smoothing) * sums.nll +
          label_smoothing / static_cast<double>(c) * sums.smooth) /
             scan.d +
         sums.zl / scan.m;
}

// Reads the N targets (INT64 or INT32, any stride), checks each is ignored (the profile's rule:
// t == ignoreIndex by default; the 910B-family compares both rounded to fp32; on the 950 a
// negative ignoreIndex masks nothing) or in [0, C), and fills rows[0..N) and the sums in a fixed
// order. weight (FLOAT, nullable) is copied to w_contig[0..C) when non-null. On a bad target
// returns ACL_ERROR_INVALID_PARAM naming the first bad row and value (and, under an NPU profile,
// what that NPU would do with it); nothing has been written to any output then.
// The weights are copied in the kernels' compute type `compute` (FLOAT or DOUBLE; a DOUBLE
// weight rounded once to FLOAT for the f32 kernels), and the row weights and sums are of those
// copies.
Status ScanTargets(const char* op, const SocProfile& soc, const TensorDesc& target,
                   const TensorDesc* weight, int64_t n, int64_t c, int64_t ignore_index,
                   Reduction r, aclDataType compute, void* w_contig, RowTarget* rows,
                   TargetScan* scan);

// Weight j of ScanTargets' copy (1 when there is none), and the copy from class j on.
inline double WeightAt(const void* w, aclDataType compute, int64_t j) {
  return w != nullptr ? LoadAsDouble(compute, w, j) : 1.0;
}
inline const void* WeightsFrom(const void* w, aclDataType compute, int64_t j) {
  return w != nullptr ? static_cast<const char*>(w) + j * DtypeSize(compute) : nullptr;
}

}  // namespace ce
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_CROSS_ENTROPY_H_
