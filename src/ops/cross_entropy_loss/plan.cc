#include "ops/cross_entropy_loss/plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/cross_entropy.h"
#include "ops/common/slices.h"
#include "ops/common/soc_rules.h"
#include "ops/common/strided.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace ce_fwd {

Status Validate(const Args& a, Checked* out) {
  *out = Checked{};
  const char* const op = a.op();
  const bool lean = a.lean;  // no logProbOut; lseOut FLOAT or DOUBLE, always written
  const char* const lse_name = lean ? "lseOut" : "lseForZlossOut";
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "input", a.input));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "target", a.target));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "lossOut", a.loss_out));
  if (!lean) ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "logProbOut", a.log_prob_out));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "zlossOut", a.zloss_out));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, lse_name, a.lse_out));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(ce::CheckSocHasOperator(op, soc, /*extension=*/a.float_stats || lean));

  constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
  ACLNN_RETURN_IF_ERROR(CheckDtype(op, "input", a.input, FloatInputDtypes(soc), kDtype));
  // The loss-like outputs: the input's dtype, or (the extension) FLOAT for a 16-bit input.
  auto check_stats_dtype = [&](const char* name, const aclTensor* t) {
    const bool half = a.input->dtype == ACL_FLOAT16 || a.input->dtype == ACL_BF16;
    if (!(a.float_stats || lean) || !half) {
      return CheckSameDtype(op, name, t, "input", a.input, kDtype);
    }
    if (t->dtype == a.input->dtype || t->dtype == ACL_FLOAT) return OkStatus();
    return MakeError(kDtype, "%s: %s has dtype %s but must be FLOAT or the input's dtype %s.", op,
                     name, DtypeName(t->dtype), DtypeName(a.input->dtype));
  };
  ACLNN_RETURN_IF_ERROR(check_stats_dtype("lossOut", a.loss_out));
  if (!lean) {
    ACLNN_RETURN_IF_ERROR(
        CheckSameDtype(op, "logProbOut", a.log_prob_out, "input", a.input, kDtype));
  }
  ACLNN_RETURN_IF_ERROR(check_stats_dtype("zlossOut", a.zloss_out));
  if (lean) {
    ACLNN_RETURN_IF_ERROR(CheckDtype(op, lse_name, a.lse_out, kFloat32Or64, kDtype));
  } else {
    ACLNN_RETURN_IF_ERROR(check_stats_dtype(lse_name, a.lse_out));
  }
  ce::Reduction r;
  int64_t n, c;
  // K-dimensional inputs (N, C, d1, ..., dK): the lean forward and the lean forward with the
  // gradient (aclnn-cpu's extensions).
  const bool k_dim = lean;
  ACLNN_RETURN_IF_ERROR(ce::CheckTargetsAndAttributes(op, soc, "input", a.input, a.target, a.weight,
                                                      a.reduction, a.label_smoothing, a.zloss_scale,
                                                      nullptr, &r, &n, &c, k_dim));
  constexpr int kTiling = ACLNN_ERR_INNER_TILING_ERROR;
  const std::vector<int64_t> positions = ce::PositionShape(a.input);
  const bool spatial = positions.size() > 1;
  ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(op, "lossOut", a.loss_out, r, positions));
  if (!lean) {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(op, "logProbOut", a.log_prob_out, {n, c}, "(N, C)", kTiling));
  }
  ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(op, "zlossOut", a.zloss_out, r, positions));
  ACLNN_RETURN_IF_ERROR(CheckShapeIs(op, lse_name, a.lse_out, positions,
                                     spatial ? "(N, d1, ..., dK)" : "(N,)", kTiling));
  if (a.with_grad) {
    ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "gradOut", a.grad_out));
    ACLNN_RETURN_IF_ERROR(CheckSameDtype(op, "gradOut", a.grad_out, "input", a.input, kDtype));
    ACLNN_RETURN_IF_ERROR(spatial
                              ? CheckSameShape(op, "gradOut", a.grad_out, "input", a.input, kTiling)
                              : CheckShapeIs(op, "gradOut", a.grad_out, {n, c}, "(N, C)", kTiling));
    if (a.grad_loss != nullptr) {
      ACLNN_RETURN_IF_ERROR(check_stats_dtype("gradLossOptional", a.grad_loss));
      ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(op, "gradLossOptional", a.grad_loss, r, positions));
    }
    ACLNN_RETURN_IF_ERROR(CheckInPlaceView(op, "gradOut", a.grad_out, "input", a.input));
  }
  int64_t count = 1;  // positions (rows)
  for (int64_t d : positions) count *= d;
  if (c == 0 || (count == 0 && r == ce::Reduction::kNone)) {
    out->empty = true;  // no element of any output exists to be written
    return OkStatus();
  }
  if (a.with_grad) {
    ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "gradOut", a.grad_out));
    if (a.grad_loss)
      ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "gradLossOptional", a.grad_loss));
  }
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "input", a.input));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "target", a.target));
  if (a.weight) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "weightOptional", a.weight));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "lossOut", a.loss_out));
  if (!lean) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "logProbOut", a.log_prob_out));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, "zlossOut", a.zloss_out));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, lse_name, a.lse_out));
  // Where the NPU ignores the z-loss (zlossOut and lseForZlossOut are never written), so do we.
  ce::DescribeCommon(soc, r, n, c, a.target, a.weight, a.ignore_index, a.label_smoothing,
                     soc.ignores_zloss() ? 0.0 : a.zloss_scale, out);
  out->input = DescribeTensor(a.input);
  out->loss = DescribeTensor(a.loss_out);
  if (!lean) out->log_prob = DescribeTensor(a.log_prob_out);
  out->zloss = DescribeTensor(a.zloss_out);
  out->lse = DescribeTensor(a.lse_out);
  out->return_zloss = a.return_zloss && !soc.ignores_zloss();
  out->op = op;
  out->lean = lean;
  out->spatial = spatial;
  out->with_grad = a.with_grad;
  if (a.with_grad) {
    out->grad_out = DescribeTensor(a.grad_out);
    out->has_grad_loss = a.grad_loss != nullptr;
    if (out->has_grad_loss) out->grad_loss = DescribeTensor(a.grad_loss);
  }
  return OkStatus();
}

namespace {

// Per-row loss terms, kept in the workspace so that reductions add them in row order.
using RowLoss = ce::LossTerms;

// A row's reductions over one kRowChunk chunk (slices.h): its maximum and its sum of
// exp(x - max) in one pass (max_sum_exp), then its weighted sum shifted by the row's maximum.
// Rows are always reduced chunk by chunk, chunks combined in order, so a row split across
// threads gives the same bits.
struct ChunkSums {
  double max;
  double rest, k, dot;
  double xt;  // first chunk of a row: the input at the target (read before logProb is written)
};

// The row maximum from its chunks' maxima, in order; a NaN anywhere gives NaN.
inline double FoldMax(double m, double chunk) { return (chunk > m || chunk != chunk) ? chunk : m; }

// A row's maximum and its sum of exp(x - max) split as sum_exp's (*k elements at a finite
// maximum, *rest the others) from its chunks' own, in order: a chunk whose maximum is below the
// row's adds its sum and its count, times exp(chunk max - row max) in double.
inline double CombineChunks(const ChunkSums* parts, int64_t nc, double* rest, double* k) {
  double m = -HUGE_VAL;
  for (int64_t c = 0; c < nc; ++c) m = FoldMax(m, parts[c].max);
  *rest = 0.0;
  *k = 0.0;
  for (int64_t c = 0; c < nc; ++c) {
    if (parts[c].max == m) {
      *rest += parts[c].rest;
      *k += parts[c].k;
    } else {
      *rest += (parts[c].rest + parts[c].k) * std::exp(parts[c].max - m);
    }
  }
  return m;
}

class CeFwdPlan final : public Plan {
 public:
  explicit CeFwdPlan(const Checked& a)
      : k_(a), x_(a.input), lp_(a.log_prob), loss_(a.loss), zloss_(a.zloss), lse_(a.lse) {
    return_zloss_ = a.return_zloss;
    op_ = a.op;
    lean_ = a.lean;
    with_grad_ = a.with_grad;
    has_grad_loss_ = a.has_grad_loss;
    grad_loss_ = a.grad_loss;
    out_ = a.grad_out;
    dtype_ = x_.dtype;
    contiguous_ = k_.c == 1 || (x_.strides[1] == 1 && (lean_ || lp_.strides[1] == 1) &&
                                (!with_grad_ || out_.strides[1] == 1));
    compute_ = ComputeDtype(dtype_);
    kernels_ = GetRowKernels(contiguous_ ? dtype_ : compute_);
    threads_ = NumThreads();
    rows_ = booker_.Book<ce::RowTarget>(static_cast<uint64_t>(k_.n));
    terms_ = booker_.Book<RowLoss>(static_cast<uint64_t>(k_.n));
    const uint64_t cs = static_cast<uint64_t>(DtypeSize(compute_));
    if (k_.has_weight) weights_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(k_.c));
    if (!contiguous_) {
      scratch_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(threads_) *
                                             static_cast<uint64_t>(k_.c));
    }
    // Fewer rows than threads: rows are split into chunks across threads (O(N) side data).
    split_ = contiguous_ && !with_grad_ && SplitRowsAcrossThreads(k_.n, k_.c, threads_);
    if (!split_) {  // one row's chunk sums per thread
      row_chunks_ = booker_.Book<ChunkSums>(static_cast<uint64_t>(threads_) *
                                            static_cast<uint64_t>(RowChunks(k_.c)));
    }
    stream_ = contiguous_ &&
              static_cast<uint64_t>(k_.n * k_.c * DtypeSize(dtype_)) >= StreamingOutputBytes();
    if (split_) {
      chunks_ = booker_.Book<ChunkSums>(static_cast<uint64_t>(k_.n * RowChunks(k_.c)));
    }
    target_name_ = CurrentTargetName();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(k_.n * k_.c * (lean_ && !with_grad_ ? 1 : 2) * DtypeSize(dtype_));
  }

  std::string Describe() const override {
    return StrFormat(
        "%sN %lld, C %lld, %s, reduction %s, weight %s, ls %g, z-loss %g%s, path %s%s%s, "
        "kernel logsoftmax_%s, target %s, up to %d threads",
        with_grad_ ? "lean with the gradient, " : (lean_ ? "lean (no logProb), " : ""),
        static_cast<long long>(k_.n), static_cast<long long>(k_.c), DtypeName(dtype_),
        ce::ReductionName(k_.reduction), k_.has_weight ? "yes" : "no", k_.label_smoothing,
        k_.zloss_scale, return_zloss_ ? " (returned)" : "",
        contiguous_ ? "contiguous-rows" : "gather-f32",
        split_ ? " (rows split across threads)" : "", stream_ ? " (streaming stores)" : "",
        kernels_.dtype, target_name_, threads_);
  }

  Status Run(void* workspace) const override {
    auto* rows = Grant<ce::RowTarget>(workspace, rows_);
    auto* terms = Grant<RowLoss>(workspace, terms_);
    unsigned char* w = k_.has_weight ? Grant<unsigned char>(workspace, weights_) : nullptr;
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(ce::ScanTargets(op_, k_.soc, k_.target,
                                          k_.has_weight ? &k_.weight : nullptr, k_.n, k_.c,
                                          k_.ignore_index, k_.reduction, compute_, w, rows, &scan));
    const int threads = std::min(threads_, NumThreads());
    if (split_ && SplitRowsAcrossThreads(k_.n, k_.c, threads)) {
      RunSplitRows(Grant<ChunkSums>(workspace, chunks_), rows, w, scan.w_sum, terms, threads);
    } else {
      unsigned char* scratch = Grant<unsigned char>(workspace, scratch_);
      ChunkSums* row_chunks = Grant<ChunkSums>(workspace, row_chunks_);
      ParallelFor(k_.n, threads, MinRowsPerThread(k_.c), [&](int tid, int64_t b, int64_t e) {
        void* f = scratch + static_cast<int64_t>(tid) * k_.c * DtypeSize(compute_);
        ChunkSums* parts = row_chunks + static_cast<int64_t>(tid) * RowChunks(k_.c);
        for (int64_t i = b; i < e; ++i) terms[i] = RunRow(i, rows[i], w, scan, f, parts);
        if (stream_) FlushStreamingStores();
      });
    }
    WriteLosses(terms, scan);
    return OkStatus();
  }

 private:
  const char* RowX(int64_t i) const { return x_.data + i * x_.strides[0] * DtypeSize(dtype_); }
  char* RowLp(int64_t i) const { return lp_.data + i * lp_.strides[0] * DtypeSize(dtype_); }

  // Chunk [c0, c0 + len) of a contiguous row `src` (element size esz): its maximum and sum of
  // exponentials, reading it once.
  void ChunkStats(const void* src, int64_t esz, int64_t c0, int64_t len, ChunkSums* out) const {
    out->rest = kernels_.max_sum_exp(static_cast<const char*>(src) + c0 * esz,
                                     static_cast<size_t>(len), &out->max, &out->k);
    out->dot = 0.0;
  }
  // That chunk's weighted sum shifted by the row maximum m (from cache: the chunk was just read).
  void ChunkDot(const void* src, int64_t esz, int64_t c0, int64_t len, double m, const void* w,
                ChunkSums* out) const {
    out->dot = kernels_.dot(static_cast<const char*>(src) + c0 * esz,
                            ce::WeightsFrom(w, compute_, c0), static_cast<size_t>(len), m);
  }

  // A row's loss terms (zero for an ignored row) from its chunk sums, combined in order; *m
  // receives the row maximum, *log_s log(sum exp(x - m)) and *lse the row's log-sum-exp.
  RowLoss FinishRow(const ce::RowTarget& rt, const ChunkSums* parts, int64_t nc, double w_sum,
                    double* m_out, double* log_s, double* lse) const {
    double rest = 0.0, k = 0.0, dot = 0.0;
    const double m = CombineChunks(parts, nc, &rest, &k);
    for (int64_t c = 0; c < nc; ++c) dot += parts[c].dot;
    *m_out = m;
    *log_s = LogSumExpShifted(rest, k);
    *lse = static_cast<double>(m) + *log_s;
    RowLoss t;
    if (rt.t >= 0) {
      t.nll = -rt.w * (parts[0].xt - *lse);
      // sum_c w_c (x_c - lse) = sum_c w_c (x_c - m) - log_s * W: no cancellation of large x.
      // Only with smoothing: a -inf input (a masked class) makes it +inf, and 0 * inf is NaN.
      t.smooth = Smoothing() ? -(dot - *log_s * w_sum) : 0.0;
      t.zl = k_.zloss_scale * *lse * *lse;
    }
    return t;
  }

  // The input at row i's target (0 for an ignored row).
  double TargetInput(int64_t i, const ce::RowTarget& rt) const {
    return rt.t >= 0 ? LoadAsDouble(dtype_, RowX(i), rt.t * x_.strides[1]) : 0.0;
  }

  void StoreLse(int64_t i, double lse) const {
    if (lean_ || k_.zloss_scale != 0.0) {
      StoreFromDouble(lse_.dtype, lse_.data, i * lse_.strides[0], lse);
    }
  }

  // logProb and lse of row i, and its loss terms, on one thread; parts: room for the row's chunk
  // sums, combined by FinishRow as on the split path (the same bits).
  RowLoss RunRow(int64_t i, const ce::RowTarget& rt, const void* w, const ce::TargetScan& scan,
                 void* f, ChunkSums* parts) const {
    const double w_sum = scan.w_sum;
    const char* x = RowX(i);
    const void* src = x;
    if (!contiguous_) {
      GatherRow(compute_, dtype_, x, x_.strides[1], k_.c, f);
      src = f;
    }
    const int64_t esz = DtypeSize(contiguous_ ? dtype_ : compute_);
    const int64_t nc = RowChunks(k_.c);
    for (int64_t c = 0; c < nc; ++c) {
      ChunkStats(src, esz, c * kRowChunk, std::min(kRowChunk, k_.c - c * kRowChunk), &parts[c]);
    }
    const double xt = TargetInput(i, rt);
    parts[0].xt = xt;
    if (rt.t >= 0 && Smoothing()) {
      double rest, k;
      const double row_max = CombineChunks(parts, nc, &rest, &k);
      for (int64_t c = 0; c < nc; ++c) {
        ChunkDot(src, esz, c * kRowChunk, std::min(kRowChunk, k_.c - c * kRowChunk), row_max, w,
                 &parts[c]);
      }
    }
    double m, log_s, lse;
    // Loss terms read the input before logProb is written (f may be rewritten in place).
    const RowLoss t = FinishRow(rt, parts, nc, w_sum, &m, &log_s, &lse);
    StoreLse(i, lse);
    if (with_grad_) GradRow(i, rt, lse, xt, src, w, scan, f);
    if (lean_) return t;
    char* lp = RowLp(i);
    kernels_.lsm_fwd(src, m, log_s, contiguous_ ? static_cast<void*>(lp) : f,
                     static_cast<size_t>(k_.c), stream_);
    if (!contiguous_) ScatterRow(compute_, dtype_, dtype_, f, lp, lp_.strides[1], k_.c);
    return t;
  }

  // kWithGradOp: row i's gradient from its input (src: the row, or its f32 copy f), the lse
  // just computed and the input at the target xt, as aclnnCpuCrossEntropyLossGradFromLogits
  // computes it from the stored lse (the same bits), while the row is in cache.
  void GradRow(int64_t i, const ce::RowTarget& rt, double lse, double xt, const void* src,
               const void* w, const ce::TargetScan& scan, void* f) const {
    const bool none = k_.reduction == ce::Reduction::kNone;
    // The lse as lseOut stores it, so that the gradient has the bits the from-logits operator
    // computes from lseOut: a DOUBLE lseOut keeps all of it (ce::SplitLse says why that matters).
    const double stored =
        lse_.dtype == ACL_DOUBLE ? lse : static_cast<double>(static_cast<float>(lse));
    const ce::LseShift shift = ce::SplitLse(stored, compute_);
    const double g =
        has_grad_loss_ ? LoadAsDouble(grad_loss_.dtype, grad_loss_.data,
                                      grad_loss_.rank == 1 && none ? i * grad_loss_.strides[0] : 0)
                       : 1.0;
    const bool z = k_.zloss_scale != 0.0;
    const ce::GradCoef k =
        ce::GradCoefficients(rt, g, 0.0, z && rt.t >= 0 ? stored : 0.0, k_.label_smoothing,
                             k_.zloss_scale, 1.0 / static_cast<double>(k_.c), scan);
    const int64_t esz = DtypeSize(dtype_);
    char* o = out_.data + i * out_.strides[0] * esz;
    const double true_class =
        rt.t >= 0 ? ce::TrueClassGrad(k, std::exp(xt - stored), ce::WeightAt(w, compute_, rt.t))
                  : 0.0;
    const size_t c = static_cast<size_t>(k_.c);
    const double a = k.big_a * shift.scale;
    if (contiguous_) {
      if (k.zero) {
        std::memset(o, 0, c * static_cast<size_t>(esz));  // +0.0 in every format
        return;
      }
      kernels_.ce_grad(src, o, c, shift.hi, a, k.s, w, stream_);
      if (stream_) FlushStreamingStores();  // the fix-up store lands after the row's stores
      if (rt.t >= 0) StoreFromDouble(dtype_, o, rt.t, true_class);
      return;
    }
    if (k.zero) {
      for (int64_t j = 0; j < k_.c; ++j) StoreFromDouble(dtype_, o, j * out_.strides[1], 0.0);
      return;
    }
    kernels_.ce_grad(f, f, c, shift.hi, a, k.s, w, false);
    if (rt.t >= 0) StoreFromDouble(compute_, f, rt.t, true_class);
    ScatterRow(compute_, dtype_, dtype_, f, o, out_.strides[1], k_.c);
  }

  // Fewer rows than threads: work items are (row, chunk), in three passes (chunk maxima and sums
  // of exponentials; chunk weighted sums with the row maximum; the row's terms and logProb),
  // each split over the threads. The first pass also reads the input at the target, before any
  // logProb (which may alias the input) is written.
  void RunSplitRows(ChunkSums* parts, const ce::RowTarget* rows, const void* w, double w_sum,
                    RowLoss* terms, int threads) const {
    const int64_t nc = RowChunks(k_.c), esz = DtypeSize(dtype_);
    auto row_max = [&](int64_t i) {
      double m = -HUGE_VAL;
      for (int64_t c = 0; c < nc; ++c) m = FoldMax(m, parts[i * nc + c].max);
      return m;
    };
    ForEachRowChunkParallel(k_.n, k_.c, threads, false,
                            [&](int64_t i, int64_t it, int64_t c0, int64_t len) {
                              ChunkStats(RowX(i), esz, c0, len, &parts[it]);
                              if (c0 == 0) parts[it].xt = TargetInput(i, rows[i]);
                            });
    ForEachRowChunkParallel(k_.n, k_.c, threads, false,
                            [&](int64_t i, int64_t it, int64_t c0, int64_t len) {
                              if (rows[i].t >= 0 && Smoothing())
                                ChunkDot(RowX(i), esz, c0, len, row_max(i), w, &parts[it]);
                            });
    ForEachRowChunkParallel(
        k_.n, k_.c, threads, stream_, [&](int64_t i, int64_t, int64_t c0, int64_t len) {
          double m, log_s, lse;
          const RowLoss t = FinishRow(rows[i], &parts[i * nc], nc, w_sum, &m, &log_s, &lse);
          if (c0 == 0) {  // one item per row writes the row's results
            terms[i] = t;
            StoreLse(i, lse);
          }
          if (lean_) return;
          kernels_.lsm_fwd(RowX(i) + c0 * esz, m, log_s, RowLp(i) + c0 * esz,
                           static_cast<size_t>(len), stream_);
        });
  }

  // Whether the loss has the smoothing term (which needs each row's weighted sum of inputs).
  bool Smoothing() const { return k_.label_smoothing != 0.0; }

  double Combine(const RowLoss& t) const { return ce::CombineLoss(t, k_.label_smoothing, k_.c); }

  void WriteLosses(const RowLoss* terms, const ce::TargetScan& scan) const {
    if (k_.reduction == ce::Reduction::kNone) {
      for (int64_t i = 0; i < k_.n; ++i) {
        StoreFromDouble(loss_.dtype, loss_.data, i * loss_.strides[0], Combine(terms[i]));
        if (return_zloss_) {
          StoreFromDouble(zloss_.dtype, zloss_.data, i * zloss_.strides[0], terms[i].zl);
        }
      }
      return;
    }
    // Fixed order, in double: the same bits for any thread count.
    double nll = 0.0, smooth = 0.0, zl = 0.0;
    for (int64_t i = 0; i < k_.n; ++i) {
      nll += terms[i].nll;
      smooth += terms[i].smooth;
      zl += terms[i].zl;
    }
    double loss, zloss;
    if (k_.reduction == ce::Reduction::kSum) {
      loss = Combine(RowLoss{nll, smooth, zl});
      zloss = zl;
    } else {
      loss = ce::MeanLoss(RowLoss{nll, smooth, zl}, k_.label_smoothing, k_.c, scan);
      zloss = zl / scan.m;
    }
    StoreFromDouble(loss_.dtype, loss_.data, 0, loss);
    if (return_zloss_) StoreFromDouble(zloss_.dtype, zloss_.data, 0, zloss);
  }

  const ce::Common k_;  // reduction, N, C, target, weight, attributes
  TensorDesc x_, lp_, loss_, zloss_, lse_;
  bool return_zloss_ = false, contiguous_ = false, lean_ = false;
  bool with_grad_ = false, has_grad_loss_ = false;
  TensorDesc grad_loss_, out_;
  const char* op_ = kOp;
  aclDataType dtype_ = ACL_FLOAT, compute_ = ACL_FLOAT;
  RowKernels kernels_;
  int threads_ = 1;
  WorkspaceBooker booker_;
  bool split_ = false, stream_ = false;
  WorkspaceBooking rows_, terms_, weights_, scratch_, chunks_, row_chunks_;
  const char* target_name_ = "";
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Checked& c) { return std::make_unique<CeFwdPlan>(c); }
uint64_t PlanWorkspaceBytes(const Checked& c) { return CeFwdPlan(c).workspace_bytes(); }
Status RunPlanOnce(const Checked& c, void* workspace) { return CeFwdPlan(c).Run(workspace); }

}  // namespace ce_fwd
}  // namespace aclnn_cpu
