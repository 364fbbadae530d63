#include "ops/cross_entropy_prob/plan.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/slices.h"
#include "ops/common/strided.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace ce_prob {

namespace {
constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
constexpr int kShape = ACLNN_ERR_INNER_TILING_ERROR;
}  // namespace

Status Validate(const Args& a, Checked* out) {
  *out = Checked{};
  const char* const op = a.op();
  const bool grad = a.kind == Kind::kGrad, with_grad = a.kind == Kind::kWithGrad;
  const bool loss_pass = LossPass(a.kind), grad_pass = GradPass(a.kind);
  const char* const x_name = grad ? "logits" : "input";
  const char* const lse_name = grad ? "lse" : "lseOut";
  const char* const out_name = with_grad ? "gradOut" : "out";
  const char* const gl_name = with_grad ? "gradLossOptional" : "gradLoss";
  if (grad) ACLNN_RETURN_IF_ERROR(CheckNotNull(op, gl_name, a.grad_loss));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, x_name, a.logits));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "target", a.target));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(op, lse_name, a.lse));
  if (loss_pass) ACLNN_RETURN_IF_ERROR(CheckNotNull(op, "lossOut", a.loss_out));
  if (grad_pass) ACLNN_RETURN_IF_ERROR(CheckNotNull(op, out_name, a.out));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(ce::CheckSocHasOperator(op, soc, /*extension=*/true));

  ACLNN_RETURN_IF_ERROR(CheckDtype(op, x_name, a.logits, kFloatOrDoubleDtypes, kDtype));
  ACLNN_RETURN_IF_ERROR(CheckSameDtype(op, "target", a.target, x_name, a.logits, kDtype));
  if (a.weight != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckDtype(op, "weightOptional", a.weight, kFloat32Or64, kDtype));
  }
  ACLNN_RETURN_IF_ERROR(CheckDtype(op, lse_name, a.lse, kFloat32Or64, kDtype));
  const bool half = a.logits->dtype == ACL_FLOAT16 || a.logits->dtype == ACL_BF16;
  // The loss-like tensors: the input's dtype, or FLOAT for a 16-bit input (not the gradient's
  // gradLoss, which has the logits' dtype).
  auto check_loss_dtype = [&](const char* name, const aclTensor* t) {
    if (half && t->dtype == ACL_FLOAT) return OkStatus();
    return CheckSameDtype(op, name, t, x_name, a.logits, kDtype);
  };
  if (grad) {
    ACLNN_RETURN_IF_ERROR(CheckSameDtype(op, gl_name, a.grad_loss, x_name, a.logits, kDtype));
  } else {
    ACLNN_RETURN_IF_ERROR(check_loss_dtype("lossOut", a.loss_out));
    if (a.grad_loss != nullptr) ACLNN_RETURN_IF_ERROR(check_loss_dtype(gl_name, a.grad_loss));
  }
  if (grad_pass) {
    ACLNN_RETURN_IF_ERROR(CheckSameDtype(op, out_name, a.out, x_name, a.logits, kDtype));
  }
  ce::Reduction r;
  ACLNN_RETURN_IF_ERROR(ce::ParseReduction(op, a.reduction, &r));
  ACLNN_RETURN_IF_ERROR(ce::CheckAttributes(op, a.label_smoothing, 0.0));
  if (Rank(a.logits) != 2) {
    return MakeError(kShape, "%s: %s has shape %s but must be 2-d (N, C).", op, x_name,
                     ShapeString(a.logits).c_str());
  }
  const int64_t n = a.logits->shape[0], c = a.logits->shape[1];
  ACLNN_RETURN_IF_ERROR(CheckSameShape(op, "target", a.target, x_name, a.logits, kShape));
  if (a.weight != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckShapeIs(op, "weightOptional", a.weight, {c}, "(C,)", kShape));
  }
  ACLNN_RETURN_IF_ERROR(CheckShapeIs(op, lse_name, a.lse, {n}, "(N,)", kShape));
  if (a.grad_loss != nullptr) {
    ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(op, gl_name, a.grad_loss, r, n));
  }
  if (loss_pass) ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(op, "lossOut", a.loss_out, r, n));
  if (grad_pass) {
    ACLNN_RETURN_IF_ERROR(CheckSameShape(op, out_name, a.out, x_name, a.logits, kShape));
  }
  if (n == 0 || c == 0) {
    out->empty = true;
    return OkStatus();
  }
  const std::pair<const char*, const aclTensor*> operands[] = {
      {gl_name, a.grad_loss}, {x_name, a.logits},
      {"target", a.target},   {"weightOptional", a.weight},
      {lse_name, a.lse},      {"lossOut", a.loss_out},
      {out_name, a.out}};
  for (const auto& [name, t] : operands) {
    if (t != nullptr) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(op, name, t));
  }
  if (grad_pass && a.out != a.logits) {
    ACLNN_RETURN_IF_ERROR(CheckInPlaceView(op, out_name, a.out, x_name, a.logits));
  }
  out->kind = a.kind;
  out->reduction = r;
  out->n = n;
  out->c = c;
  out->label_smoothing = a.label_smoothing;
  out->has_weight = a.weight != nullptr;
  out->has_grad_loss = a.grad_loss != nullptr;
  out->logits = DescribeTensor(a.logits);
  out->target = DescribeTensor(a.target);
  if (out->has_weight) out->weight = DescribeTensor(a.weight);
  out->lse = DescribeTensor(a.lse);
  if (out->has_grad_loss) out->grad_loss = DescribeTensor(a.grad_loss);
  if (loss_pass) out->loss = DescribeTensor(a.loss_out);
  if (grad_pass) out->out = DescribeTensor(a.out);
  return OkStatus();
}

namespace {

class CeProbPlan final : public Plan {
 public:
  explicit CeProbPlan(const Checked& k) : k_(k) {
    dtype_ = k_.logits.dtype;
    compute_ = ComputeDtype(dtype_);
    contiguous_ =
        k_.c == 1 || (k_.logits.strides[1] == 1 && (!k_.grad_pass() || k_.out.strides[1] == 1));
    kernels_ = GetRowKernels(contiguous_ ? dtype_ : compute_);
    compute_kernels_ = GetRowKernels(compute_);  // sum of the weighted targets
    target_kernels_ = GetRowKernels(k_.target.dtype);
    // A target that is already the weighted targets (contiguous, no weight, no smoothing) is
    // read in place: in the compute type, or in the logits' 16-bit dtype (validated: the target
    // has it) where kernels_ take that dtype, through dot_t / ce_grad_t.
    const TensorDesc& t = k_.target;
    in_place_ = (t.strides[1] == 1 || k_.c == 1) && k_.label_smoothing == 0.0 && !k_.has_weight &&
                (t.dtype == compute_ || contiguous_);
    const bool typed = in_place_ && t.dtype != compute_;
    dot_ = typed ? kernels_.dot_t : kernels_.dot;
    ce_grad_ = typed ? kernels_.ce_grad_t : kernels_.ce_grad;
    threads_ = NumThreads();
    const uint64_t row = static_cast<uint64_t>(k_.c) * static_cast<uint64_t>(DtypeSize(compute_));
    // Per thread: the weighted targets, and the row in the compute type off the direct path.
    scratch_ =
        booker_.Book<unsigned char>(static_cast<uint64_t>(threads_) * row * (contiguous_ ? 1 : 2));
    if (k_.has_weight) weights_ = booker_.Book<unsigned char>(row);
    if (k_.loss_pass()) loss_rows_ = booker_.Book<double>(static_cast<uint64_t>(k_.n));
    stream_ = k_.grad_pass() && contiguous_ &&
              static_cast<uint64_t>(k_.n * k_.c * DtypeSize(dtype_)) >= StreamingOutputBytes();
    target_name_ = CurrentTargetName();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(k_.n * k_.c * (k_.grad_pass() ? 3 : 2) * DtypeSize(dtype_));
  }

  std::string Describe() const override {
    return StrFormat(
        "%s: N %lld, C %lld, %s, reduction %s, weight %s, ls %g, path %s%s, kernels %s, target "
        "%s, up to %d threads",
        OpName(k_.kind), static_cast<long long>(k_.n), static_cast<long long>(k_.c),
        DtypeName(dtype_), ce::ReductionName(k_.reduction), k_.has_weight ? "yes" : "no",
        k_.label_smoothing,
        contiguous_ ? "contiguous-rows" : (compute_ == ACL_DOUBLE ? "gather-f64" : "gather-f32"),
        stream_ ? " (streaming stores)" : "", kernels_.dtype, target_name_, threads_);
  }

  Status Run(void* workspace) const override {
    const int64_t cs = DtypeSize(compute_), esz = DtypeSize(dtype_);
    unsigned char* scratch = Grant<unsigned char>(workspace, scratch_);
    unsigned char* w = k_.has_weight ? Grant<unsigned char>(workspace, weights_) : nullptr;
    // The weights in the compute type (a DOUBLE one rounded once for the f32 kernels).
    if (w != nullptr) ce::CopyWeights(&k_.weight, k_.c, compute_, w);
    double* loss_rows = k_.loss_pass() ? Grant<double>(workspace, loss_rows_) : nullptr;
    const int threads = std::min(threads_, NumThreads());
    ParallelFor(k_.n, threads, MinRowsPerThread(k_.c), [&](int tid, int64_t b, int64_t e) {
      unsigned char* wq = scratch + static_cast<int64_t>(tid) * k_.c * cs * (contiguous_ ? 1 : 2);
      unsigned char* f = wq + k_.c * cs;  // the gathered row (off the direct path)
      for (int64_t i = b; i < e; ++i) {
        const char* x = k_.logits.data + i * k_.logits.strides[0] * esz;
        const void* src = x;
        if (!contiguous_) {
          GatherRow(compute_, dtype_, x, k_.logits.strides[1], k_.c, f);
          src = f;
        }
        const void* weighted = nullptr;
        const double s = WeightedTargets(i, w, wq, &weighted);
        // With the gradient: the row and its weighted targets from cache, the lse as lseOut
        // now holds it.
        if (k_.loss_pass()) loss_rows[i] = LossRow(i, src, weighted, s);
        if (k_.grad_pass()) GradRow(i, src, weighted, s, contiguous_ ? nullptr : f);
      }
      if (stream_) FlushStreamingStores();
    });
    if (k_.loss_pass()) WriteLoss(loss_rows);
    return OkStatus();
  }

 private:
  // wq_c = w_c ((1 - ls) q_c + ls / C) of row i, in the compute type; returns their sum and
  // sets *out to the row's weighted targets: the target row itself where in_place_, else `buf`.
  double WeightedTargets(int64_t i, const void* w, void* buf, const void** out) const {
    const TensorDesc& t = k_.target;
    const char* row = t.data + i * t.strides[0] * DtypeSize(t.dtype);
    if (in_place_) {
      *out = row;
      return target_kernels_.sum(row, static_cast<size_t>(k_.c));
    }
    if (compute_ == ACL_DOUBLE) {
      Weighted(row, static_cast<const double*>(w), static_cast<double*>(buf));
    } else {
      Weighted(row, static_cast<const float*>(w), static_cast<float*>(buf));
    }
    *out = buf;
    return compute_kernels_.sum(buf, static_cast<size_t>(k_.c));
  }

  // The target row converted to the compute type C (the widen kernel where contiguous: the row
  // comes from memory, prefetched), then scaled by the weights and smoothed.
  template <class C>
  void Weighted(const char* row, const C* w, C* wq) const {
    const TensorDesc& t = k_.target;
    const int64_t c = k_.c, st = k_.c == 1 ? 1 : t.strides[1];
    if (st == 1) {
      // The target has the logits' dtype (validated), so its compute type is C.
      target_kernels_.widen(row, static_cast<size_t>(c), wq);
    } else {
      for (int64_t j = 0; j < c; ++j) wq[j] = static_cast<C>(LoadAsDouble(t.dtype, row, j * st));
    }
    const double ls = k_.label_smoothing;
    if (ls != 0.0) {
      const C keep = static_cast<C>(1.0 - ls), add = static_cast<C>(ls / static_cast<double>(c));
      for (int64_t j = 0; j < c; ++j) wq[j] = keep * wq[j] + add;
    }
    if (w != nullptr) {
      for (int64_t j = 0; j < c; ++j) wq[j] *= w[j];
    }
  }

  // -sum wq (x - lse) = log_s sum wq - sum wq (x - max): no cancellation of a large max. The
  // row's lse goes to lseOut.
  double LossRow(int64_t i, const void* src, const void* wq, double s) const {
    const size_t c = static_cast<size_t>(k_.c);
    double m, k;
    const double rest = kernels_.max_sum_exp(src, c, &m, &k);
    const double log_s = LogSumExpShifted(rest, k);
    StoreFromDouble(k_.lse.dtype, k_.lse.data, i * k_.lse.strides[0], m + log_s);
    return log_s * s - dot_(src, wq, c, m);
  }

  void GradRow(int64_t i, const void* src, const void* wq, double s, void* f) const {
    const bool none = k_.reduction == ce::Reduction::kNone;
    const TensorDesc& gl = k_.grad_loss;
    double g = k_.has_grad_loss
                   ? LoadAsDouble(gl.dtype, gl.data, none && gl.rank == 1 ? i * gl.strides[0] : 0)
                   : 1.0;
    if (k_.reduction == ce::Reduction::kMean) g /= static_cast<double>(k_.n);
    const ce::LseShift shift =
        ce::SplitLse(LoadAsDouble(k_.lse.dtype, k_.lse.data, i * k_.lse.strides[0]), compute_);
    const int64_t esz = DtypeSize(dtype_);
    char* o = k_.out.data + i * k_.out.strides[0] * esz;
    const size_t c = static_cast<size_t>(k_.c);
    if (f == nullptr) {
      ce_grad_(src, o, c, shift.hi, g * s * shift.scale, g, wq, stream_);
      return;
    }
    ce_grad_(src, f, c, shift.hi, g * s * shift.scale, g, wq, false);
    ScatterRow(compute_, dtype_, dtype_, f, o, k_.out.strides[1], k_.c);
  }

  // The rows' losses in order: per row ("none"), their sum, or their sum / N ("mean").
  void WriteLoss(const double* rows) const {
    const TensorDesc& l = k_.loss;
    if (k_.reduction == ce::Reduction::kNone) {
      for (int64_t i = 0; i < k_.n; ++i)
        StoreFromDouble(l.dtype, l.data, i * l.strides[0], rows[i]);
      return;
    }
    double total = 0.0;
    for (int64_t i = 0; i < k_.n; ++i) total += rows[i];
    if (k_.reduction == ce::Reduction::kMean) total /= static_cast<double>(k_.n);
    StoreFromDouble(l.dtype, l.data, 0, total);
  }

  const Checked k_;
  aclDataType dtype_ = ACL_FLOAT, compute_ = ACL_FLOAT;
  bool contiguous_ = true, stream_ = false, in_place_ = false;
  RowKernels kernels_, compute_kernels_, target_kernels_;
  // dot and ce_grad of kernels_, or their _t forms for a 16-bit target read in place.
  decltype(RowKernels::dot) dot_ = nullptr;
  decltype(RowKernels::ce_grad) ce_grad_ = nullptr;
  int threads_ = 1;
  WorkspaceBooker booker_;
  WorkspaceBooking scratch_, weights_, loss_rows_;
  const char* target_name_ = "";
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Checked& c) { return std::make_unique<CeProbPlan>(c); }

}  // namespace ce_prob
}  // namespace aclnn_cpu
