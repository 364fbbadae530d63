// Independent double-precision references, written from the spec's formulas. They share no
// code with the library: tensors are plain row-major std::vector<double> in logical order, and
// rounding to FLOAT/FLOAT16/BF16 is implemented here with frexp/ldexp.
#ifndef ACLNN_CPU_TESTS_REFERENCE_REFERENCE_H_
#define ACLNN_CPU_TESTS_REFERENCE_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl_base.h"

namespace ref {

// Precision (significand bits incl. the implicit one), smallest normal exponent, largest finite.
struct FloatFormat {
  int precision;
  int min_exp;
  double max_finite;
};
FloatFormat FormatOf(aclDataType t);  // FLOAT, FLOAT16, BF16, DOUBLE
// Round to nearest even into dtype t (overflow to inf, subnormals kept).
double RoundTo(aclDataType t, double v);
// Spacing of dtype t at |v| (the ulp), for error reporting and tolerances.
double Ulp(aclDataType t, double v);
// Bit patterns of a value already representable in t (RoundTo first), and back.
uint64_t Encode(aclDataType t, double v);
double Decode(aclDataType t, uint64_t bits);

using Shape = std::vector<int64_t>;
int64_t Numel(const Shape& s);

// out = g - exp(y) * sum_dim(g); dim already wrapped (0-d: dim 0, one element).
std::vector<double> LogSoftmaxBackward(const std::vector<double>& g, const std::vector<double>& y,
                                       const Shape& shape, int dim);
// Per element: |g| + |exp(y) * S| and exp(y) * sum |g| (magnitudes for error bounds).
void LogSoftmaxBackwardMagnitudes(const std::vector<double>& g, const std::vector<double>& y,
                                  const Shape& shape, int dim, std::vector<double>* terms,
                                  std::vector<double>* sum_terms);

// out = x - max - log(sum(exp(x - max))) along dim. slice_log_sum (optional) receives, per
// element, log(sum(exp(x - max))) of its slice.
std::vector<double> LogSoftmax(const std::vector<double>& x, const Shape& shape, int dim,
                               std::vector<double>* slice_log_sum = nullptr);

enum class Reduction { kNone, kMean, kSum };

struct CrossEntropyArgs {
  int64_t n = 0, c = 0;
  std::vector<int64_t> target;
  std::vector<double> weight;  // empty: no weight
  Reduction reduction = Reduction::kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  double zloss_scale = 0.0;
};

// Backward. grad_loss: N values for none, 1 otherwise; grad_zloss likewise or empty; lse: N
// values or empty.
std::vector<double> CrossEntropyLossGrad(const CrossEntropyArgs& a,
                                         const std::vector<double>& log_prob,
                                         const std::vector<double>& grad_loss,
                                         const std::vector<double>& grad_zloss,
                                         const std::vector<double>& lse);
// Per element magnitudes of the terms of the backward formula (for error bounds).
std::vector<double> CrossEntropyLossGradMagnitudes(const CrossEntropyArgs& a,
                                                   const std::vector<double>& log_prob,
                                                   const std::vector<double>& grad_loss,
                                                   const std::vector<double>& grad_zloss,
                                                   const std::vector<double>& lse);

struct CrossEntropyResult {
  std::vector<double> loss;      // N (none) or 1
  std::vector<double> log_prob;  // N*C
  std::vector<double> zloss;     // like loss
  std::vector<double> lse;       // N
};
CrossEntropyResult CrossEntropyLoss(const CrossEntropyArgs& a, const std::vector<double>& x);

// The fused linear cross-entropy: logits = x w^T + bias (x: N x H, w: V x H = a.c x h, bias: V
// values or empty), then CrossEntropyLoss and, with grad_loss, CrossEntropyLossGrad G;
// grad_input = G w, grad_weight = G^T x, grad_bias = the column sums of G. softcap > 0: the
// logits are softcap * tanh(z / softcap) of z = x w^T + bias (`logits` holds those), and G is
// the gradient with respect to z (times 1 - tanh^2).
struct LinearCrossEntropyResult {
  std::vector<double> logits;  // N*V
  CrossEntropyResult ce;
  std::vector<double> grad_logits, grad_input, grad_weight, grad_bias;
};
LinearCrossEntropyResult LinearCrossEntropy(const CrossEntropyArgs& a, int64_t h,
                                            const std::vector<double>& x,
                                            const std::vector<double>& w,
                                            const std::vector<double>& bias,
                                            const std::vector<double>& grad_loss,
                                            double softcap = 0.0);

// Cross-entropy with class-probability targets (PyTorch's semantics), x and q (N, C) row-major,
// weight (C,) or empty: q' = (1 - ls) q + ls / C, loss_i = -sum_c w_c q'_ic log_softmax(x)_ic;
// "none": per row, "sum": their sum, "mean": their sum / N.
struct CrossEntropyProbResult {
  std::vector<double> loss, lse;
};
CrossEntropyProbResult CrossEntropyProb(const std::vector<double>& x, const std::vector<double>& q,
                                        const std::vector<double>& weight, int64_t n, int64_t c,
                                        Reduction r, double label_smoothing);
// Its gradient with respect to x given lse (N,) and the loss's gradient g (N for "none", else 1):
// g_i' (p_ic sum_c' w_c' q'_ic' - w_c q'_ic), p = exp(x - lse), g' = g / N for "mean".
std::vector<double> CrossEntropyProbGrad(const std::vector<double>& x, const std::vector<double>& q,
                                         const std::vector<double>& weight,
                                         const std::vector<double>& lse,
                                         const std::vector<double>& grad_loss, int64_t n, int64_t c,
                                         Reduction r, double label_smoothing);

}  // namespace ref

#endif  // ACLNN_CPU_TESTS_REFERENCE_REFERENCE_H_
