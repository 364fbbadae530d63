#include "ops/cross_entropy_loss_grad/plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/slices.h"
#include "ops/common/soc_rules.h"
#include "ops/common/strided.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace ce_grad {

Status Validate(const Args& a, Checked* out) {
  *out = Checked{};
  const char* const kOp = a.op();
  const bool logits = a.from_logits;
  const char* const lp_name = logits ? "logits" : "logProb";
  const char* const lse_name = logits ? "lse" : "lseForZlossOptional";
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "gradLoss", a.grad_loss));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, lp_name, a.log_prob));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "target", a.target));
  if (logits) ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, lse_name, a.lse));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "out", a.out));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(ce::CheckSocHasOperator(kOp, soc, /*extension=*/logits));

  constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, lp_name, a.log_prob, FloatInputDtypes(soc), kDtype));
  ACLNN_RETURN_IF_ERROR(CheckSameDtype(kOp, "gradLoss", a.grad_loss, lp_name, a.log_prob, kDtype));
  ACLNN_RETURN_IF_ERROR(CheckSameDtype(kOp, "out", a.out, lp_name, a.log_prob, kDtype));
  if (a.grad_zloss != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckSameDtype(kOp, "gradZlossOptional", a.grad_zloss, lp_name, a.log_prob, kDtype));
  }
  if (logits) {
    ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, lse_name, a.lse, kFloat32Or64, kDtype));
  } else if (a.lse != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckSameDtype(kOp, lse_name, a.lse, lp_name, a.log_prob, kDtype));
  }
  ce::Reduction r;
  int64_t n, c;
  if (a.shard) {
    ACLNN_RETURN_IF_ERROR(ce::CheckShardAndAttributes(
        kOp, soc, a.log_prob, a.class_offset, a.num_classes, a.target, a.weight, a.reduction,
        a.label_smoothing, a.zloss_scale, a.grad_loss, &r, &n, &c));
  } else {
    // K-dimensional logits (N, C, d1, ..., dK): the from-logits extension only.
    ACLNN_RETURN_IF_ERROR(ce::CheckTargetsAndAttributes(
        kOp, soc, lp_name, a.log_prob, a.target, a.weight, a.reduction, a.label_smoothing,
        a.zloss_scale, a.grad_loss, &r, &n, &c, /*k_dim=*/logits));
  }
  constexpr int kTiling = ACLNN_ERR_INNER_TILING_ERROR;
  const std::vector<int64_t> positions =
      a.shard ? std::vector<int64_t>{n} : ce::PositionShape(a.log_prob);
  const bool spatial = positions.size() > 1;
  ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(kOp, "gradLoss", a.grad_loss, r, positions));
  // Where the NPU ignores the z-loss arguments (after their dtype checks), so do we.
  const bool zloss_used = !soc.ignores_zloss();
  const double zloss_scale = zloss_used ? a.zloss_scale : 0.0;
  const aclTensor* grad_zloss = zloss_used ? a.grad_zloss : nullptr;
  if (grad_zloss != nullptr) {
    ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(kOp, "gradZlossOptional", grad_zloss, r, positions));
  }
  if (spatial) {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(kOp, "out", a.out, a.log_prob->shape, "(N, C, d1, ..., dK)", kTiling));
  } else {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(kOp, "out", a.out, {n, c}, a.shard ? "(N, Vs)" : "(N, C)", kTiling));
  }
  const bool use_lse = zloss_scale != 0.0 || logits;
  if (use_lse) {
    if (a.lse == nullptr) {
      return MakeError(kTiling,
                       "%s: lseForZlossOptional is null but lseSquareScaleForZloss is %g; the "
                       "z-loss term needs it.",
                       kOp, zloss_scale);
    }
    ACLNN_RETURN_IF_ERROR(CheckShapeIs(kOp, lse_name, a.lse, positions,
                                       spatial ? "(N, d1, ..., dK)" : "(N,)", kTiling));
  }
  if (logits) ACLNN_RETURN_IF_ERROR(CheckInPlaceView(kOp, "out", a.out, "logits", a.log_prob));
  int64_t count = 1;  // positions (rows)
  for (int64_t d : positions) count *= d;
  if (count == 0 || c == 0) {
    out->empty = true;
    return OkStatus();
  }
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "gradLoss", a.grad_loss));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, lp_name, a.log_prob));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "target", a.target));
  if (a.weight) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "weightOptional", a.weight));
  if (grad_zloss) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "gradZlossOptional", grad_zloss));
  if (use_lse) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, lse_name, a.lse));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "out", a.out));
  ce::DescribeCommon(soc, r, n, c, a.target, a.weight, a.ignore_index, a.label_smoothing,
                     zloss_scale, out);
  out->grad_loss = DescribeTensor(a.grad_loss);
  out->log_prob = DescribeTensor(a.log_prob);
  out->out = DescribeTensor(a.out);
  out->has_grad_zloss = grad_zloss != nullptr;
  if (out->has_grad_zloss) out->grad_zloss = DescribeTensor(grad_zloss);
  if (use_lse) out->lse = DescribeTensor(a.lse);
  out->from_logits = logits;
  out->spatial = spatial;
  out->op = kOp;
  if (a.shard) {
    out->class_offset = a.class_offset;
    out->total_classes = a.num_classes;
  }
  return OkStatus();
}

namespace {

// Per-row coefficients (ce::GradCoefficients) and where the row's shift and true class are.
struct RowCoef : ce::GradCoef {
  double lse;          // subtracted before exp: 0 for logProb, the row's lse for logits
  ce::LseShift lse_k;  // lse as the kernel takes it (ce::SplitLse)
  int64_t t;  // the target's column in this shard, or -1 (ignored, or another shard's class)
};

double ScalarAt(const TensorDesc& d, int64_t i) {
  const int64_t stride = d.rank == 1 ? d.strides[0] : 0;
  return LoadAsDouble(d.dtype, d.data, i * stride);
}

class CeGradPlan final : public Plan {
 public:
  explicit CeGradPlan(const Checked& a)
      : k_(a), lp_(a.log_prob), out_(a.out), grad_(a.grad_loss), gz_(a.grad_zloss), lse_(a.lse) {
    offset_ = a.class_offset;
    classes_ = a.total_classes > 0 ? a.total_classes : k_.c;
    batch_.has_batch_divisors = a.has_batch_divisors;
    batch_.batch_d = a.batch_d;
    batch_.batch_m = a.batch_m;
    has_gz_ = a.has_grad_zloss;
    from_logits_ = a.from_logits;
    op_ = a.op;
    dtype_ = lp_.dtype;
    contiguous_ = (k_.c == 1 || (lp_.strides[1] == 1 && out_.strides[1] == 1));
    compute_ = ComputeDtype(dtype_);
    kernels_ = GetRowKernels(contiguous_ ? dtype_ : compute_);
    threads_ = NumThreads();
    stream_ = contiguous_ &&
              static_cast<uint64_t>(k_.n * k_.c * DtypeSize(dtype_)) >= StreamingOutputBytes();
    rows_ = booker_.Book<ce::RowTarget>(static_cast<uint64_t>(k_.n));
    coef_ = booker_.Book<RowCoef>(static_cast<uint64_t>(k_.n));
    const uint64_t cs = static_cast<uint64_t>(DtypeSize(compute_));
    if (k_.has_weight) weights_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(classes_));
    if (!contiguous_) {
      scratch_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(threads_) *
                                             static_cast<uint64_t>(k_.c));
    }
    target_name_ = CurrentTargetName();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(k_.n * k_.c * 2 * DtypeSize(dtype_));
  }

  std::string Describe() const override {
    return StrFormat(
        "%sN %lld, C %lld, %s, reduction %s, weight %s, ls %g, z-loss %g, path %s, "
        "kernel ce_grad_%s%s, target %s, up to %d threads",
        from_logits_ ? "from logits, " : "", static_cast<long long>(k_.n),
        static_cast<long long>(k_.c), DtypeName(dtype_), ce::ReductionName(k_.reduction),
        k_.has_weight ? "yes" : "no", k_.label_smoothing, k_.zloss_scale,
        contiguous_ ? "contiguous-rows" : "gather-f32", kernels_.dtype,
        stream_ ? " (streaming stores)" : "", target_name_, threads_);
  }

  Status Run(void* workspace) const override {
    auto* rows = Grant<ce::RowTarget>(workspace, rows_);
    auto* coef = Grant<RowCoef>(workspace, coef_);
    unsigned char* const all_w =
        k_.has_weight ? Grant<unsigned char>(workspace, weights_) : nullptr;
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(
        ce::ScanTargets(op_, k_.soc, k_.target, k_.has_weight ? &k_.weight : nullptr, k_.n,
                        classes_, k_.ignore_index, k_.reduction, compute_, all_w, rows, &scan));
    // This shard's classes (all of them unless sharded).
    const void* w = ce::WeightsFrom(all_w, compute_, offset_);
    if (batch_.has_batch_divisors) {
      scan.d = batch_.batch_d;
      scan.m = batch_.batch_m;
    }
    const bool none = k_.reduction == ce::Reduction::kNone;
    const double cinv = 1.0 / static_cast<double>(classes_);
    for (int64_t i = 0; i < k_.n; ++i) {
      const double g = ScalarAt(grad_, none ? i : 0);
      const bool z = k_.zloss_scale != 0.0;
      const double gz = z && has_gz_ ? ScalarAt(gz_, none ? i : 0) : 0.0;
      const double lse = z && rows[i].t >= 0 ? ScalarAt(lse_, i) : 0.0;
      RowCoef& k = coef[i];
      static_cast<ce::GradCoef&>(k) =
          ce::GradCoefficients(rows[i], g, gz, lse, k_.label_smoothing, k_.zloss_scale, cinv, scan);
      k.t = rows[i].t >= offset_ && rows[i].t < offset_ + k_.c ? rows[i].t - offset_ : -1;
      k.lse = from_logits_ ? ScalarAt(lse_, i) : 0.0;
      k.lse_k = ce::SplitLse(k.lse, compute_);
    }
    unsigned char* scratch = Grant<unsigned char>(workspace, scratch_);
    const int threads = std::min(threads_, NumThreads());
    const int64_t esz = DtypeSize(dtype_);
    if (contiguous_ && SplitRowsAcrossThreads(k_.n, k_.c, threads)) {
      // Fewer rows than threads: split rows into chunks (elementwise, so any split gives the
      // same bits).
      ForEachRowChunkParallel(k_.n, k_.c, threads, false,
                              [&](int64_t i, int64_t, int64_t c0, int64_t len) {
                                RunRowRange(coef[i], i, c0, c0 + len, w, esz);
                              });
      return OkStatus();
    }
    ParallelFor(k_.n, threads, MinRowsPerThread(k_.c), [&](int tid, int64_t b, int64_t e) {
      void* f = scratch + static_cast<int64_t>(tid) * k_.c * DtypeSize(compute_);
      for (int64_t i = b; i < e; ++i) {
        if (contiguous_) {
          RunRowRange(coef[i], i, 0, k_.c, w, esz);
        } else {
          RunStridedRow(coef[i], i, w, f, esz);
        }
      }
    });
    return OkStatus();
  }

 private:
  // The true-class element p A - s w_t - a, recomputed in double: p is close to 1 exactly
  // there, where f32 cancellation would lose the most. Read before the row is written (out
  // may be the logits).
  double TrueClass(const RowCoef& k, const char* lp, const void* w) const {
    const double p = std::exp(LoadAsDouble(dtype_, lp, k.t * lp_.strides[1]) - k.lse);
    return ce::TrueClassGrad(k, p, ce::WeightAt(w, compute_, k.t));
  }

  // Columns [c0, c1) of a contiguous row.
  void RunRowRange(const RowCoef& k, int64_t i, int64_t c0, int64_t c1, const void* w,
                   int64_t esz) const {
    const char* lp = lp_.data + i * lp_.strides[0] * esz;
    char* o = out_.data + i * out_.strides[0] * esz;
    const size_t len = static_cast<size_t>(c1 - c0);
    if (k.zero) {
      std::memset(o + c0 * esz, 0, len * static_cast<size_t>(esz));  // +0.0 in every format
      return;
    }
    const bool has_t = k.t >= c0 && k.t < c1;
    const double true_class = has_t ? TrueClass(k, lp, w) : 0.0;
    kernels_.ce_grad(lp + c0 * esz, o + c0 * esz, len, k.lse_k.hi, k.big_a * k.lse_k.scale, k.s,
                     ce::WeightsFrom(w, compute_, c0), stream_);
    if (stream_) FlushStreamingStores();  // the fix-up store lands after the row's stores
    if (has_t) StoreFromDouble(dtype_, o, k.t, true_class);
  }

  // A row of a non-contiguous logProb or out, through f32 scratch.
  void RunStridedRow(const RowCoef& k, int64_t i, const void* w, void* f, int64_t esz) const {
    const char* lp = lp_.data + i * lp_.strides[0] * esz;
    char* o = out_.data + i * out_.strides[0] * esz;
    const size_t c = static_cast<size_t>(k_.c);
    if (k.zero) {
      for (int64_t j = 0; j < k_.c; ++j) StoreFromDouble(dtype_, o, j * out_.strides[1], 0.0);
      return;
    }
    GatherRow(compute_, dtype_, lp, lp_.strides[1], k_.c, f);
    kernels_.ce_grad(f, f, c, k.lse_k.hi, k.big_a * k.lse_k.scale, k.s, w, false);
    if (k.t >= 0) StoreFromDouble(compute_, f, k.t, TrueClass(k, lp, w));
    ScatterRow(compute_, dtype_, dtype_, f, o, out_.strides[1], k_.c);
  }

  const ce::Common k_;  // reduction, N, C, target, weight, attributes
  TensorDesc lp_, out_, grad_, gz_, lse_;
  struct {
    bool has_batch_divisors = false;
    double batch_d = 1.0, batch_m = 1.0;
  } batch_;
  bool has_gz_ = false, contiguous_ = false, stream_ = false, from_logits_ = false;
  const char* op_ = kOp;
  int64_t offset_ = 0, classes_ = 0;  // the shard's first class; the vocabulary's classes
  aclDataType dtype_ = ACL_FLOAT, compute_ = ACL_FLOAT;
  RowKernels kernels_;
  int threads_ = 1;
  WorkspaceBooker booker_;
  WorkspaceBooking rows_, coef_, weights_, scratch_;
  const char* target_name_ = "";
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Checked& c) { return std::make_unique<CeGradPlan>(c); }
uint64_t PlanWorkspaceBytes(const Checked& c) { return CeGradPlan(c).workspace_bytes(); }
Status RunPlanOnce(const Checked& c, void* workspace) { return CeGradPlan(c).Run(workspace); }

}  // namespace ce_grad
}  // namespace aclnn_cpu
