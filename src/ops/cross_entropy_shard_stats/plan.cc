#include "ops/cross_entropy_shard_stats/plan.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/soc_rules.h"
#include "ops/common/strided.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace ce_stats {

Status Validate(const Args& a, Checked* out) {
  *out = Checked{};
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "logits", a.logits));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "target", a.target));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "lseOut", a.lse_out));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "targetLogitOut", a.target_logit_out));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "weightedSumOut", a.weighted_sum_out));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(ce::CheckSocHasOperator(kOp, soc, /*extension=*/true));
  constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
  constexpr int kShape = ACLNN_ERR_INNER_TILING_ERROR;
  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, "logits", a.logits, FloatInputDtypes(soc), kDtype));
  // The statistics: FLOAT, or DOUBLE (all of a DOUBLE shard's, or more of any).
  for (const auto& [name, t] : {std::pair<const char*, const aclTensor*>{"lseOut", a.lse_out},
                                {"targetLogitOut", a.target_logit_out},
                                {"weightedSumOut", a.weighted_sum_out}}) {
    ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, name, t, kFloat32Or64, kDtype));
  }
  ce::Reduction r;
  int64_t n, vs;
  char none[] = "none";
  ACLNN_RETURN_IF_ERROR(ce::CheckShardAndAttributes(kOp, soc, a.logits, a.class_offset,
                                                    a.num_classes, a.target, a.weight, none, 0.0,
                                                    0.0, nullptr, &r, &n, &vs));
  ACLNN_RETURN_IF_ERROR(CheckShapeIs(kOp, "lseOut", a.lse_out, {n}, "(N,)", kShape));
  ACLNN_RETURN_IF_ERROR(
      CheckShapeIs(kOp, "targetLogitOut", a.target_logit_out, {n}, "(N,)", kShape));
  ACLNN_RETURN_IF_ERROR(
      CheckShapeIs(kOp, "weightedSumOut", a.weighted_sum_out, {n}, "(N,)", kShape));
  if (n == 0) {
    out->empty = true;
    return OkStatus();
  }
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "logits", a.logits));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "target", a.target));
  if (a.weight) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "weightOptional", a.weight));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "lseOut", a.lse_out));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "targetLogitOut", a.target_logit_out));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "weightedSumOut", a.weighted_sum_out));
  ce::DescribeCommon(soc, r, n, vs, a.target, a.weight, a.ignore_index, 0.0, 0.0, out);
  out->class_offset = a.class_offset;
  out->num_classes = a.num_classes;
  out->logits = DescribeTensor(a.logits);
  out->lse = DescribeTensor(a.lse_out);
  out->target_logit = DescribeTensor(a.target_logit_out);
  out->weighted_sum = DescribeTensor(a.weighted_sum_out);
  return OkStatus();
}

namespace {

class ShardStatsPlan final : public Plan {
 public:
  explicit ShardStatsPlan(const Checked& k) : k_(k) {
    dtype_ = k_.logits.dtype;
    contiguous_ = k_.c <= 1 || k_.logits.strides[1] == 1;
    compute_ = ComputeDtype(dtype_);
    kernels_ = GetRowKernels(contiguous_ ? dtype_ : compute_);
    threads_ = NumThreads();
    rows_ = booker_.Book<ce::RowTarget>(static_cast<uint64_t>(k_.n));
    const uint64_t cs = static_cast<uint64_t>(DtypeSize(compute_));
    if (k_.has_weight) {
      weights_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(k_.num_classes));
    }
    if (!contiguous_) {
      scratch_ = booker_.Book<unsigned char>(cs * static_cast<uint64_t>(threads_) *
                                             static_cast<uint64_t>(k_.c));
    }
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(k_.n * k_.c * DtypeSize(dtype_));
  }
  std::string Describe() const override {
    return StrFormat(
        "N %lld, shard [%lld, %lld) of %lld classes, %s, weight %s, kernel %s, %s",
        static_cast<long long>(k_.n), static_cast<long long>(k_.class_offset),
        static_cast<long long>(k_.class_offset + k_.c), static_cast<long long>(k_.num_classes),
        DtypeName(dtype_), k_.has_weight ? "yes" : "no", kernels_.dtype,
        contiguous_ ? "contiguous-rows" : (compute_ == ACL_DOUBLE ? "gather-f64" : "gather-f32"));
  }

  Status Run(void* workspace) const override {
    auto* rows = Grant<ce::RowTarget>(workspace, rows_);
    unsigned char* all_w = Grant<unsigned char>(workspace, weights_);
    ce::TargetScan scan;
    ACLNN_RETURN_IF_ERROR(ce::ScanTargets(
        kOp, k_.soc, k_.target, k_.has_weight ? &k_.weight : nullptr, k_.n, k_.num_classes,
        k_.ignore_index, ce::Reduction::kNone, compute_, all_w, rows, &scan));
    const void* w = ce::WeightsFrom(all_w, compute_, k_.class_offset);
    // sum_j w_j over the shard, for the weighted sum from its shifted form.
    double w_shard = static_cast<double>(k_.c);
    if (w != nullptr) {
      w_shard = 0.0;
      for (int64_t j = 0; j < k_.c; ++j) w_shard += ce::WeightAt(w, compute_, j);
    }
    unsigned char* scratch = Grant<unsigned char>(workspace, scratch_);
    const int64_t esz = DtypeSize(dtype_);
    ParallelFor(k_.n, std::min(threads_, NumThreads()), 1, [&](int tid, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const char* x = k_.logits.data + i * k_.logits.strides[0] * esz;
        const void* src = x;
        if (!contiguous_) {
          void* f = scratch + static_cast<int64_t>(tid) * k_.c * DtypeSize(compute_);
          GatherRow(compute_, dtype_, x, k_.logits.strides[1], k_.c, f);
          src = f;
        }
        const size_t len = static_cast<size_t>(k_.c);
        const double m = kernels_.max(src, len);
        double count = 0.0;
        const double rest = kernels_.sum_exp(src, len, m, &count);
        const double lse = static_cast<double>(m) + LogSumExpShifted(rest, count);
        // sum w (x - m) + m sum w: the shifted sum keeps the error relative to x - m.
        const double wsum = kernels_.dot(src, w, len, m) + static_cast<double>(m) * w_shard;
        const int64_t t = rows[i].t - k_.class_offset;
        const double xt = rows[i].t >= 0 && t >= 0 && t < k_.c
                              ? LoadAsDouble(dtype_, x, t * k_.logits.strides[1])
                              : 0.0;
        StoreFromDouble(k_.lse.dtype, k_.lse.data, i * k_.lse.strides[0], lse);
        StoreFromDouble(k_.target_logit.dtype, k_.target_logit.data, i * k_.target_logit.strides[0],
                        xt);
        StoreFromDouble(k_.weighted_sum.dtype, k_.weighted_sum.data, i * k_.weighted_sum.strides[0],
                        wsum);
      }
    });
    return OkStatus();
  }

 private:
  const Checked k_;
  aclDataType dtype_ = ACL_FLOAT, compute_ = ACL_FLOAT;
  bool contiguous_ = true;
  RowKernels kernels_;
  int threads_ = 1;
  WorkspaceBooker booker_;
  WorkspaceBooking rows_, weights_, scratch_;
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Checked& c) { return std::make_unique<ShardStatsPlan>(c); }

}  // namespace ce_stats
}  // namespace aclnn_cpu
