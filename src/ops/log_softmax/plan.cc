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
// FLOAT/FLOAT16/BF16 outputs, double for DOUBLE.
class LsmFwdPlan final : public Plan {
 public:
  explicit LsmFwdPlan(const Checked& c) : x_(c.self), o_(c.out) {
    const TensorDesc* ops[] = {&x_, &o_};
    geo_ = MakeSliceGeometry(ops, 2, c.axis);
    if (o_.dtype == ACL_DOUBLE) {
      path_ = Path::kDouble;
    } else if (x_.dtype == o_.dtype &&
               (geo_.axis_len == 1 || (geo_.axis_stride[0] == 1 && geo_.axis_stride[1] == 1))) {
      path_ = Path::kDirect;
    } else {
      path_ = Path::kGatherF32;
    }
    kernels_ = GetRowKernels(path_ == Path::kDirect ? o_.dtype : ACL_FLOAT);
    threads_ = NumThreads();
    stream_ = path_ == Path::kDirect &&
              static_cast<uint64_t>(geo_.axis_len * geo_.num_slices * DtypeSize(o_.dtype)) >=
                  StreamingOutputBytes();
    if (path_ != Path::kDirect) {
      const uint64_t per = path_ == Path::kDouble ? 2 : 1;  // doubles take two floats
      scratch_ = booker_.Book<float>(per * static_cast<uint64_t>(threads_) *
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
    static const char* const kPaths[] = {"contiguous-rows", "gather-f32", "double"};
    return StrFormat(
        "%lld slices x %lld (axis stride %lld), %s -> %s, path %s%s, kernel "
        "logsoftmax_%s, target %s, up to %d threads",
        static_cast<long long>(geo_.num_slices), static_cast<long long>(geo_.axis_len),
        static_cast<long long>(geo_.axis_stride[0]), DtypeName(x_.dtype), DtypeName(o_.dtype),
        kPaths[static_cast<int>(path_)], stream_ ? " (streaming stores)" : "", kernels_.dtype,
        target_, threads_);
  }

  Status Run(void* workspace) const override {
    float* scratch = Grant<float>(workspace, scratch_);
    const int64_t D = geo_.axis_len;
    const size_t n = static_cast<size_t>(D);
    const int64_t xs = DtypeSize(x_.dtype), os = DtypeSize(o_.dtype);
    ForEachSliceParallel(geo_, std::min(threads_, NumThreads()), [&](int tid, const int64_t* off) {
      const char* x = x_.data + off[0] * xs;
      char* o = o_.data + off[1] * os;
      if (path_ == Path::kDouble) {
        RunDouble(x, o, reinterpret_cast<double*>(scratch) + static_cast<int64_t>(tid) * D);
        return;
      }
      float* f = scratch + static_cast<int64_t>(tid) * D;
      const void* src = x;
      if (path_ == Path::kGatherF32) {
        GatherF32(x_.dtype, o_.dtype, x, geo_.axis_stride[0], D, f);
        src = f;
      }
      // One pass from memory for the maximum and the sum; the output pass then finds the row in
      // cache (a row of up to L2's size).
      float m;
      double k;
      const double rest = kernels_.max_sum_exp(src, n, &m, &k);
      const float l = static_cast<float>(LogSumExpShifted(rest, k));
      kernels_.lsm_fwd(src, m, l, path_ == Path::kDirect ? static_cast<void*>(o) : f, n, stream_);
      if (stream_) FlushStreamingStores();
      if (path_ == Path::kGatherF32) ScatterF32(o_.dtype, o_.dtype, f, o, geo_.axis_stride[1], D);
    });
    return OkStatus();
  }

 private:
  enum class Path { kDirect, kGatherF32, kDouble };

  // DOUBLE output: the slice in double with the C library's exp/log.
  void RunDouble(const char* x, char* o, double* v) const {
    const int64_t D = geo_.axis_len;
    double m = -HUGE_VAL;
    for (int64_t i = 0; i < D; ++i) {
      v[i] = LoadAsDouble(x_.dtype, x, i * geo_.axis_stride[0]);
      m = std::max(m, v[i]);
    }
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += std::exp(v[i] - m);
    const double l = std::log(s);
    auto* out = reinterpret_cast<double*>(o);
    for (int64_t i = 0; i < D; ++i) out[i * geo_.axis_stride[1]] = (v[i] - m) - l;
  }

  TensorDesc x_, o_;
  SliceGeometry geo_;
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
