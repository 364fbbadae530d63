#include "ops/log_softmax/plan.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/slices.h"
#include "ops/common/soc_rules.h"
#include "ops/common/strided.h"
#include "simd/dispatch.h"
#include "tensor/validate.h"

namespace aclnn_cpu {
namespace lsm_fwd {

Status Validate(const Args& a, Checked* c) {
  *c = Checked{};
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "self", a.self));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "out", a.out));
  constexpr int kBad = ACLNN_ERR_PARAM_INVALID;
  int64_t wrapped = 0;
  ACLNN_RETURN_IF_ERROR(CheckDim(kOp, a.dim, Rank(a.self), &wrapped));
  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, "self", a.self, kFloatOrDoubleDtypes, kBad));
  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, "out", a.out, kFloatOrDoubleDtypes, kBad));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(CheckSocTakesDtype(kOp, soc, "self", a.self));
  ACLNN_RETURN_IF_ERROR(CheckSocTakesDtype(kOp, soc, "out", a.out));
  ACLNN_RETURN_IF_ERROR(CheckMaxRank(kOp, "self", a.self, kBad));
  ACLNN_RETURN_IF_ERROR(CheckSameShape(kOp, "self", a.self, "out", a.out, kBad));
  if (NumElements(a.self) == 0) {
    c->empty = true;
    return OkStatus();
  }
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "self", a.self));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "out", a.out));
  c->self = DescribeTensor(a.self);
  c->out = DescribeTensor(a.out);
  c->axis = static_cast<int>(wrapped);
  return OkStatus();
}

namespace {

// Operand 0 = self, 1 = out. CANN casts self to out's dtype and computes in that dtype: f32 for
// FLOAT/FLOAT16/BF16 outputs, double (f64 kernels) for DOUBLE.
class LsmFwdPlan final : public Plan {
 public:
  explicit LsmFwdPlan(const Checked& c) : x_(c.self), o_(c.out) {
    const TensorDesc* ops[] = {&x_, &o_};
    geo_ = MakeSliceGeometry(ops, 2, c.axis);
    compute_ = ComputeDtype(o_.dtype);
    if (x_.dtype == o_.dtype &&
        (geo_.axis_len == 1 || (geo_.axis_stride[0] == 1 && geo_.axis_stride[1] == 1))) {
      path_ = Path::kDirect;
    } else {
      path_ = Path::kGather;
    }
    kernels_ = GetRowKernels(path_ == Path::kDirect ? o_.dtype : compute_);
    threads_ = NumThreads();
    stream_ = path_ == Path::kDirect &&
              static_cast<uint64_t>(geo_.axis_len * geo_.num_slices * DtypeSize(o_.dtype)) >=
                  StreamingOutputBytes();
    if (path_ != Path::kDirect) {
      scratch_ = booker_.Book<unsigned char>(static_cast<uint64_t>(DtypeSize(compute_)) *
                                             static_cast<uint64_t>(threads_) *
                                             static_cast<uint64_t>(geo_.axis_len));
    }
    target_ = CurrentTargetName();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(geo_.axis_len * geo_.num_slices *
                                 (DtypeSize(x_.dtype) + DtypeSize(o_.dtype)));
  }

  std::string Describe() const override {
    return StrFormat(
        "%lld slices x %lld (axis stride %lld), %s -> %s, path %s%s, kernel "
        "logsoftmax_%s, target %s, up to %d threads",
        static_cast<long long>(geo_.num_slices), static_cast<long long>(geo_.axis_len),
        static_cast<long long>(geo_.axis_stride[0]), DtypeName(x_.dtype), DtypeName(o_.dtype),
        path_ == Path::kDirect ? "contiguous-rows"
                               : (compute_ == ACL_DOUBLE ? "gather-f64" : "gather-f32"),
        stream_ ? " (streaming stores)" : "", kernels_.dtype, target_, threads_);
  }

  Status Run(void* workspace) const override {
    unsigned char* scratch = Grant<unsigned char>(workspace, scratch_);
    const int64_t D = geo_.axis_len;
    const size_t n = static_cast<size_t>(D);
    const int64_t xs = DtypeSize(x_.dtype), os = DtypeSize(o_.dtype), cs = DtypeSize(compute_);
    ForEachSliceParallel(geo_, std::min(threads_, NumThreads()), [&](int tid, const int64_t* off) {
      const char* x = x_.data + off[0] * xs;
      char* o = o_.data + off[1] * os;
      void* f = scratch + static_cast<int64_t>(tid) * D * cs;
      const void* src = x;
      if (path_ == Path::kGather) {
        // The input cast to out's dtype first (CANN), then computed in its compute type.
        GatherRowAs(x, f);
        src = f;
      }
      // One pass from memory for the maximum and the sum; the output pass then finds the row in
      // cache (a row of up to L2's size).
      double m, k;
      const double rest = kernels_.max_sum_exp(src, n, &m, &k);
      kernels_.lsm_fwd(src, m, LogSumExpShifted(rest, k),
                       path_ == Path::kDirect ? static_cast<void*>(o) : f, n, stream_);
      if (stream_) FlushStreamingStores();
      if (path_ == Path::kGather)
        ScatterRow(compute_, o_.dtype, o_.dtype, f, o, geo_.axis_stride[1], D);
    });
    return OkStatus();
  }

 private:
  enum class Path { kDirect, kGather };

  // Slice x (dtype x_) into f as out's dtype would hold it, in the compute type.
  void GatherRowAs(const char* x, void* f) const {
    if (compute_ == ACL_DOUBLE) {
      GatherF64(x_.dtype, x, geo_.axis_stride[0], geo_.axis_len, static_cast<double*>(f));
    } else {
      GatherF32(x_.dtype, o_.dtype, x, geo_.axis_stride[0], geo_.axis_len, static_cast<float*>(f));
    }
  }

  TensorDesc x_, o_;
  SliceGeometry geo_;
  aclDataType compute_ = ACL_FLOAT;
  Path path_ = Path::kDirect;
  bool stream_ = false;
  RowKernels kernels_;
  int threads_ = 1;
  WorkspaceBooker booker_;
  WorkspaceBooking scratch_;
  const char* target_ = "";
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Checked& c) { return std::make_unique<LsmFwdPlan>(c); }

}  // namespace lsm_fwd
}  // namespace aclnn_cpu
