// Row kernels: the SIMD inner loops of all four operators, over contiguous rows of one dtype
// (FLOAT, FLOAT16 or BF16, computing in f32 and rounding each output once to nearest even; or
// DOUBLE, computing in double with f64 lanes). Written once in row_kernels.cc against Highway
// and compiled for every target; a plan takes its RowKernels for the current target once, at
// phase 1. Scalars cross the interface as double: the f32 kernels round each to f32 once on
// entry (a plan that rounded them itself gets the same bits). "f32" below means the kernel's
// compute type, double for DOUBLE; weights `w` are in that type too (ComputeDtype(t)).
//
// Contracts (n >= 0 elements, no alignment required, no aliasing between inputs and out unless
// stated):
//   sum(x, n)            = sum of x, f32 partials over fixed 512-element blocks, blocks added
//                          in order in double (error bound independent of n).
//   lsm_bwd(g,y,s,out,n,stream): out = g - exp(y) * s. out may alias g. With `stream` the
//                          aligned body of out is written with non-temporal stores (call
//                          FlushStreamingStores() before the results are published). Rows of
//                          up to 256 KiB also prefetch g's next n elements (the next row of a
//                          matrix, whose sum comes next) into L2.
//   max(x, n)            = max of x (-inf for n == 0).
//   sum_exp(x, n, m, k)  = sum of exp(x - m) over the elements that are not equal to a finite m
//                          (m = max(x, n): the fast path assumes x - m <= 0 where m is finite),
//                          blocked like sum; *k = the number of elements equal to a finite m
//                          (each contributes exactly 1). Keeping the 1s apart keeps log(k + R)
//                          = log(k) + log1p(R / k) accurate when R is tiny (confident rows).
//   max_sum_exp(x, n, m, k) = sum_exp(x, n, *m, k) with *m = max(x, n), in one pass over x:
//                          block by block, the running maximum's sum rescaled (in double) when
//                          it rises. An empty row or a row of -inf: *m = -inf, 0, *k = 0.
//   lsm_fwd(x,m,l,out,n,stream): out = (x - m) - l. out may alias x. `stream` as for lsm_bwd.
//   ce_grad(lp,out,n,shift,a,b,w,stream): out = exp(lp - shift) * a - b * w[j] (w == nullptr:
//                          w[j] = 1; shift 0 for log-probabilities, the row's log-sum-exp for
//                          logits). out may alias lp. `stream` as for lsm_bwd.
//   dot(x, w, n, m)      = sum of (x - m) * w[j] (w == nullptr: w[j] = 1), blocked like sum;
//                          the shift keeps the error relative to x - m, not to x.
//   ce_grad_t, dot_t:      ce_grad and dot with w in the dtype of x instead of the compute type
//                          (a 16-bit probability target read as it is, no widened copy); the
//                          same results as widening w first.
//   lsm_bwd_cols(g, y, out, rows, cols, sg, sy, so, stream): the same formula for `cols` (<=
//                          kMaxTileCols) adjacent slices laid out as columns: element (r, j) of
//                          an operand is at p[r * stride + j]. Column sums are f32 over blocks
//                          of 256 rows, blocks added in order in double (the error bound of
//                          sum). `stream` as for lsm_bwd (each row of the tile's output).
//   ce_stats_cols(x, rows, cols, sx, w, t, m, l, xt, dot): a cross-entropy tile of `cols` (<=
//                          kMaxTileCols) positions with a class per row (element (r, j) at
//                          x[r * sx + j]): per column j, m[j] = its maximum, l[j] = log(sum of
//                          exp(x - m[j])) from sum_exp's two parts as LogSumExpShifted takes
//                          them (in f64 lanes: Highway's Log and Log1p; NaN for a column of -inf),
//                          xt[j] = x[t[j], j] (0 where t[j] < 0; t: `cols` row indices in the
//                          compute type), and, unless dot is null, dot[j] = sum over r of
//                          (x - m[j]) * w[r] (w null: 1). Sums as lsm_bwd_cols'. m, l, xt, dot:
//                          `cols` doubles each.
//   ce_pick_cols(x, rows, cols, sx, t, lse, xt): xt[j] = x[t[j], j] as ce_stats_cols' (a load
//                          per column), or with lse (`cols` doubles) exp(x[t[j], j] - lse[j]) in
//                          f64 lanes (ExpF: <= 0.74 ulp measured, IEEE edges). x null: xt holds
//                          x[t[j], j] already (ce_stats_cols' xt), only the exp is taken.
//   ce_grad_cols(x, out, rows, cols, sx, so, shift, a, b, w, t, tc, stream): the same tile's
//                          out[r, j] = exp(x[r, j] - shift[j]) * a[j] - b[j] * w[r] (w null: 1),
//                          except out[t[j], j] = tc[j] (the true class, computed by the caller)
//                          and, where t[j] < -1, out[r, j] = tc[j] for every r (t[j] = -1: no
//                          such row); shift, a, b, t, tc: `cols` values of the compute type (t
//                          holds row indices). out may alias x. `stream` as for lsm_bwd_cols.
//   widen(x, n, out)     out[j] = x[j] in the compute type (exact), x read from memory prefetched
//                          as the exp loops do (a row converted before kernels that take the
//                          compute type, such as dot's w).
//   ce_coef_cols(cols, k, t, w, g, gz, lse, p, shift, a, b, tv, tc): per column, in f64 lanes, the
//                          coefficients ce_grad_cols takes for aclnnCpuCrossEntropyLossGrad's
//                          formula from logits, as ce::GradCoefficients, ce::SplitLse and
//                          ce::TrueClassGrad compute them one row at a time (the same operations
//                          in the same order): t[j] the true class (compute type, < 0:
//                          ignored), w, g, gz, lse, p (= exp(x[t[j], j] - lse[j])) `cols`
//                          doubles, k the scan's and the options' constants. Outputs in the
//                          compute type; tc rounded to f32 to odd for 16-bit dtypes (one more
//                          rounding to the output then rounds once); an ignored column with
//                          finite coefficients gets shift, a, b 0, tv -2, tc 0.
// exp is ExpF of simd/convert-inl.h: <= 1.25 ulp measured, IEEE edges (+inf above ln(FLT_MAX),
// NaN propagates, subnormal results kept).
#ifndef ACLNN_CPU_KERNELS_ROW_KERNELS_H_
#define ACLNN_CPU_KERNELS_ROW_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "acl/acl_base.h"

namespace aclnn_cpu {

// Widest column tile lsm_bwd_cols takes.
constexpr size_t kMaxTileCols = 2048;

// ce_coef_cols' constants: the label smoothing, the z-loss scale, 1 / C, the scan's divisors d
// (weights) and m (rows) and the sum of the class weights.
struct CeCoefConstants {
  double label_smoothing = 0.0, zloss_scale = 0.0, cinv = 0.0, d = 1.0, m = 1.0, w_sum = 0.0;
};

struct RowKernels {
  const char* dtype = nullptr;  // "f32", "f16", "bf16", "bf16hw", "f64"
  double (*sum)(const void* x, size_t n) = nullptr;
  void (*lsm_bwd)(const void* g, const void* y, double s, void* out, size_t n,
                  bool stream) = nullptr;
  double (*max)(const void* x, size_t n) = nullptr;
  double (*sum_exp)(const void* x, size_t n, double m, double* k) = nullptr;
  double (*max_sum_exp)(const void* x, size_t n, double* m, double* k) = nullptr;
  void (*lsm_fwd)(const void* x, double m, double l, void* out, size_t n, bool stream) = nullptr;
  void (*ce_grad)(const void* lp, void* out, size_t n, double shift, double a, double b,
                  const void* w, bool stream) = nullptr;
  double (*dot)(const void* x, const void* w, size_t n, double m) = nullptr;
  void (*ce_grad_t)(const void* lp, void* out, size_t n, double shift, double a, double b,
                    const void* w, bool stream) = nullptr;
  double (*dot_t)(const void* x, const void* w, size_t n, double m) = nullptr;
  void (*lsm_bwd_cols)(const void* g, const void* y, void* out, size_t rows, size_t cols, size_t sg,
                       size_t sy, size_t so, bool stream) = nullptr;
  void (*ce_stats_cols)(const void* x, size_t rows, size_t cols, size_t sx, const void* w,
                        const void* t, double* m, double* l, double* xt, double* dot) = nullptr;
  void (*ce_pick_cols)(const void* x, size_t rows, size_t cols, size_t sx, const void* t,
                       const double* lse, double* xt) = nullptr;
  void (*ce_grad_cols)(const void* x, void* out, size_t rows, size_t cols, size_t sx, size_t so,
                       const void* shift, const void* a, const void* b, const void* w,
                       const void* t, const void* tc, bool stream) = nullptr;
  void (*widen)(const void* x, size_t n, void* out) = nullptr;
  void (*ce_coef_cols)(size_t cols, const CeCoefConstants& k, const void* t, const double* w,
                       const double* g, const double* gz, const double* lse, const double* p,
                       void* shift, void* a, void* b, void* tv, void* tc) = nullptr;
};

// The kernel list: X(member of RowKernels, entry-point prefix, extra) for every row kernel.
// It drives the exports and GetRowKernels (row_kernels.cc) and the kernel tests
// (tests/kernels/row_kernels_test.cc, which must define a check for each); a new kernel is a
// member above, its Prefix_<dtype> entry points and a line here.
#define ACLNN_ROW_KERNELS(X, extra)    \
  X(sum, Sum, extra)                   \
  X(lsm_bwd, LsmBwd, extra)            \
  X(max, Max, extra)                   \
  X(sum_exp, SumExp, extra)            \
  X(max_sum_exp, MaxSumExp, extra)     \
  X(lsm_fwd, LsmFwd, extra)            \
  X(ce_grad, CeGrad, extra)            \
  X(dot, Dot, extra)                   \
  X(ce_grad_t, CeGradSame, extra)      \
  X(dot_t, DotSame, extra)             \
  X(lsm_bwd_cols, LsmBwdCols, extra)   \
  X(ce_stats_cols, CeStatsCols, extra) \
  X(ce_pick_cols, CePickCols, extra)   \
  X(ce_grad_cols, CeGradCols, extra)   \
  X(widen, Widen, extra)               \
  X(ce_coef_cols, CeCoefCols, extra)

// Kernels for contiguous rows of dtype t (FLOAT, FLOAT16, BF16 or DOUBLE) on the current target.
RowKernels GetRowKernels(aclDataType t);

// The dtype the kernels of t compute in (and take weights in): DOUBLE for DOUBLE, else FLOAT.
inline aclDataType ComputeDtype(aclDataType t) { return t == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; }

// Orders this thread's non-temporal stores before what follows (sfence on x86).
void FlushStreamingStores();

// Outputs at least this large are written with non-temporal stores: they exceed the caches,
// so a consumer would not find them there, and streaming saves the read-for-ownership.
constexpr uint64_t kStreamingOutputBytes = uint64_t{32} << 20;
// The threshold plans use: kStreamingOutputBytes, or ACLNN_CPU_STREAMING_MIN_BYTES from the
// environment (read once; a number of bytes: 0 streams every output, a huge one none), for
// measuring the store policy on a given machine (docs/performance.md).
uint64_t StreamingOutputBytes();

// How far ahead (bytes) the loops that compute an exp for each element they read from memory
// (lsm_bwd's y, sum_exp, ce_grad, lsm_bwd_cols' second sweep) prefetch it; max_sum_exp, when
// this is not 0, prefetches its next 4096-element block instead, and lsm_bwd g's next row. Measured
// on an Intel Xeon (docs/performance.md): without it the hardware prefetchers let such a loop run
// at a third of its in-cache speed, as the exp's latency keeps too few loads in flight; pure
// streaming loops (sum, max) reach the bandwidth without it. ACLNN_CPU_PREFETCH_BYTES from the
// environment (read once; at most kMaxPrefetchBytes; 0 turns prefetching off) overrides the
// default.
constexpr uint64_t kPrefetchBytes = 2048;
constexpr uint64_t kMaxPrefetchBytes = uint64_t{1} << 20;
uint64_t PrefetchBytes();

// log(sum of exp(x - m)) of a row from sum_exp's two parts, in double.
double LogSumExpShifted(double rest, double count_at_max);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_KERNELS_ROW_KERNELS_H_
