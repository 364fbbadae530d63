// Tolerances derived from the dtype and the reduction length, and the comparison of library
// results with the double reference under them. Shared by the test suites and the driver
// (`aclnn-cpu-driver --check`), so both apply the documented bounds; no GoogleTest here.
#ifndef ACLNN_CPU_TESTS_SUPPORT_TOLERANCE_H_
#define ACLNN_CPU_TESTS_SUPPORT_TOLERANCE_H_

#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "reference.h"

namespace tolerance {

constexpr double kEps32 = 1.0 / 16777216.0;          // 2^-24, unit roundoff of f32
constexpr double kEps64 = 1.0 / 9007199254740992.0;  // 2^-53, unit roundoff of f64
// The unit roundoff of the arithmetic of an operator on dtype t: f64 for DOUBLE, else f32.
constexpr double UnitRoundoff(aclDataType t) { return t == ACL_DOUBLE ? kEps64 : kEps32; }

// The chain of roundings a result goes through: computed in f32 (or double), rounded to the
// compute dtype `t`, then converted to the output dtype `out`.
double RoundChain(aclDataType t, aclDataType out, double v);

// Allowed error for one element: `bound` (the f32 arithmetic's error bound, from the formula's
// term magnitudes) plus half an ulp for every round-to-nearest step the result goes through
// (a truncating conversion fails this).
double Tolerance(aclDataType t, aclDataType out, double refv, double bound);

struct ErrorStats {
  double max_ulp = 0.0;  // in ulps of the output dtype at the rounded reference
  // The same over well-conditioned elements: those whose f32 error bound is at most a quarter
  // ulp of the output (cancellation can make f32 arithmetic miss by more elsewhere).
  double max_ulp_conditioned = 0.0;
  double max_tolerance_used = 0.0;  // max of error / tolerance
  int64_t nonzero = 0;
  int64_t count = 0;
  int64_t failures = 0;
};

// got vs reference (unrounded, double) over every element; bound[i]: f32 arithmetic error bound
// of element i. Returns "" when every element is within tolerance, else the first failure.
std::string Compare(const std::vector<double>& got, const std::vector<double>& refv,
                    const std::vector<double>& bound, aclDataType t, aclDataType out,
                    ErrorStats* stats);

// Per-element f32 error bounds of each operator's kernels (docs/numerics.md); a DOUBLE input
// computes in double, with the same terms in units of 2^-53.
std::vector<double> LogSoftmaxBackwardBound(const std::vector<double>& g,
                                            const std::vector<double>& y, const ref::Shape& shape,
                                            int dim, aclDataType in);
// expect: the reference output; slice_log_sum: ref::LogSoftmax's per-element log-sum;
// out: the output dtype (DOUBLE computes in double).
std::vector<double> LogSoftmaxBound(const std::vector<double>& expect,
                                    const std::vector<double>& slice_log_sum, aclDataType out);
std::vector<double> CrossEntropyLossGradBound(const ref::CrossEntropyArgs& a,
                                              const std::vector<double>& log_prob,
                                              const std::vector<double>& grad_loss,
                                              const std::vector<double>& grad_zloss,
                                              const std::vector<double>& lse, double u = kEps32);
struct CrossEntropyBounds {
  std::vector<double> log_prob, loss, zloss, lse;
};
// The probability-target cross-entropy (aclnnCpuCrossEntropyLossProb and its gradient), in
// units of u (kEps32, or kEps64 for DOUBLE): lse as CrossEntropyLossBound's; a row's loss off by
// |sum wq| times its lse's error plus 270 roundings (the blocked dot) of sum |wq (x - max)| and
// the blocked sum's of |sum wq| |log S|; the gradient by 8 roundings of its terms' magnitudes
// |g| (p |sum wq| + |wq_c|), plus the subtraction x - lse before exp (|g| p |sum wq| u
// |x - lse|) and the blocked sum of the weighted targets (|g| p |sum wq| (min(C, 512) + 16) u).
struct CrossEntropyProbBounds {
  std::vector<double> loss, lse;
};
CrossEntropyProbBounds CrossEntropyProbBound(const std::vector<double>& x,
                                             const std::vector<double>& q,
                                             const std::vector<double>& weight, int64_t n,
                                             int64_t c, ref::Reduction r, double label_smoothing,
                                             const ref::CrossEntropyProbResult& e, double u);
// With lse_error (per row, aclnnCpuCrossEntropyLossProbWithGrad's gradient from its own lseOut:
// the forward's lse bound plus lseOut's rounding), each element adds |g| p |sum wq| lse_error_i.
std::vector<double> CrossEntropyProbGradBound(
    const std::vector<double>& x, const std::vector<double>& q, const std::vector<double>& weight,
    const std::vector<double>& lse, const std::vector<double>& grad_loss, int64_t n, int64_t c,
    ref::Reduction r, double label_smoothing, double u, const std::vector<double>& lse_error = {});
CrossEntropyBounds CrossEntropyLossBound(const ref::CrossEntropyArgs& a,
                                         const std::vector<double>& x,
                                         const ref::CrossEntropyResult& r, double u = kEps32);

// The fused linear cross-entropy (docs/large_vocab.md): each logit is a length-H f32 dot
// product, off by at most (H + 2) u (sum_k |x_k w_k| + |b|); that error moves the loss and the
// log-sum-exp by at most twice the row's largest logit error times the loss's coefficients, and
// each dlogit by its terms' magnitude times the same; dlogits rounded to `g_dtype` (BF16 for
// 16-bit operands) before the products; each product of length K adds (K + 1) u of the sum of
// its terms' magnitudes. Bounds for the f32 arithmetic; Compare adds the outputs' rounding.
struct LinearCrossEntropyBounds {
  std::vector<double> loss, lse, grad_input, grad_weight, grad_bias;
};
LinearCrossEntropyBounds LinearCrossEntropyBound(const ref::CrossEntropyArgs& a, int64_t h,
                                                 const std::vector<double>& x,
                                                 const std::vector<double>& w,
                                                 const std::vector<double>& bias,
                                                 const std::vector<double>& grad_loss,
                                                 const ref::LinearCrossEntropyResult& r,
                                                 aclDataType g_dtype);

}  // namespace tolerance

#endif  // ACLNN_CPU_TESTS_SUPPORT_TOLERANCE_H_
