#include "ops/log_softmax_backward/plan.h"

#include <algorithm>

#include "core/dtype.h"
#include "core/validate.h"
#include "core/workspace.h"
#include "kernels/row_kernels.h"
#include "ops/common/strided.h"
#include "ops/common/slices.h"
#include "runtime/parallel.h"
#include "simd/dispatch.h"
#include "tensor/geometry.h"

namespace aclnn_cpu {
namespace lsm_bwd {

Status Validate(const Args& a, bool* empty) {
  *empty = false;
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "gradOutput", a.grad_output));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "output", a.output));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "out", a.out));
  if (NumElements(a.grad_output) == 0 || NumElements(a.output) == 0) {
    *empty = true;  // CANN A2/A3: empty inputs succeed before any other check
    return OkStatus();
  }
  constexpr int kBad = ACLNN_ERR_PARAM_INVALID;
  ACLNN_RETURN_IF_ERROR(
      CheckDtype(kOp, "gradOutput", a.grad_output, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, kBad));
  ACLNN_RETURN_IF_ERROR(
      CheckDtype(kOp, "output", a.output, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, kBad));
  ACLNN_RETURN_IF_ERROR(
      CheckSameDtype(kOp, "gradOutput", a.grad_output, "output", a.output, kBad));
  ACLNN_RETURN_IF_ERROR(
      CheckDtype(kOp, "out", a.out, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}, kBad));
  ACLNN_RETURN_IF_ERROR(CheckMaxRank(kOp, "gradOutput", a.grad_output, kBad));
  ACLNN_RETURN_IF_ERROR(CheckMaxRank(kOp, "output", a.output, kBad));
  ACLNN_RETURN_IF_ERROR(CheckSameShape(kOp, "gradOutput", a.grad_output, "output", a.output, kBad));
  ACLNN_RETURN_IF_ERROR(CheckSameShape(kOp, "gradOutput", a.grad_output, "out", a.out, kBad));
  int64_t wrapped;
  ACLNN_RETURN_IF_ERROR(CheckDim(kOp, a.dim, Rank(a.grad_output), &wrapped));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "gradOutput", a.grad_output));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "output", a.output));
  ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, "out", a.out));
  return OkStatus();
}

namespace {

// Slices of one grid: operand 0 = gradOutput, 1 = output, 2 = out.
class LsmBwdPlan final : public Plan {
 public:
  explicit LsmBwdPlan(const Args& a) {
    g_ = DescribeTensor(a.grad_output);
    y_ = DescribeTensor(a.output);
    o_ = DescribeTensor(a.out);
    int64_t axis = 0;
    CheckDim(kOp, a.dim, g_.rank, &axis);
    const TensorDesc* ops[] = {&g_, &y_, &o_};
    geo_ = MakeSliceGeometry(ops, 3, static_cast<int>(axis));
    in_ = g_.dtype;
    direct_ = in_ == o_.dtype && (geo_.axis_len == 1 || (geo_.axis_stride[0] == 1 &&
                                                         geo_.axis_stride[1] == 1 &&
                                                         geo_.axis_stride[2] == 1));
    kernels_ = GetRowKernels(direct_ ? in_ : ACL_FLOAT);
    threads_ = NumThreads();
    if (!direct_) {
      scratch_ = booker_.Book<float>(static_cast<uint64_t>(threads_) * 2 *
                                     static_cast<uint64_t>(geo_.axis_len));
    }
    numel_ = geo_.axis_len * geo_.num_slices;
    target_ = CurrentTargetName();
  }

  uint64_t workspace_bytes() const override { return booker_.total(); }
  uint64_t work_bytes() const override {
    return static_cast<uint64_t>(numel_) * static_cast<uint64_t>(3 * DtypeSize(in_));
  }

  std::string Describe() const override {
    return StrFormat("%lld slices x %lld (axis stride %lld), %s -> %s, path %s, kernel "
                     "logsoftmax_bwd_%s, target %s, up to %d threads",
                     static_cast<long long>(geo_.num_slices),
                     static_cast<long long>(geo_.axis_len),
                     static_cast<long long>(geo_.axis_stride[0]), DtypeName(in_),
                     DtypeName(o_.dtype), direct_ ? "contiguous-rows" : "gather-f32",
                     kernels_.dtype, target_, threads_);
  }

  Status Run(void* workspace) const override {
    float* scratch = Grant<float>(workspace, scratch_);
    const int64_t D = geo_.axis_len;
    const int64_t esz_in = DtypeSize(in_), esz_out = DtypeSize(o_.dtype);
    const size_t n = static_cast<size_t>(D);
    ForEachSliceParallel(geo_, std::min(threads_, NumThreads()), [&](int tid, const int64_t* off) {
      const char* g = g_.data + off[0] * esz_in;
      const char* y = y_.data + off[1] * esz_in;
      char* o = o_.data + off[2] * esz_out;
      if (direct_) {
        kernels_.lsm_bwd(g, y, static_cast<float>(kernels_.sum(g, n)), o, n);
        return;
      }
      float* fg = scratch + static_cast<int64_t>(tid) * 2 * D;
      float* fy = fg + D;
      GatherF32(in_, in_, g, geo_.axis_stride[0], D, fg);
      GatherF32(in_, in_, y, geo_.axis_stride[1], D, fy);
      kernels_.lsm_bwd(fg, fy, static_cast<float>(kernels_.sum(fg, n)), fg, n);
      ScatterF32(in_, o_.dtype, fg, o, geo_.axis_stride[2], D);
    });
    return OkStatus();
  }

 private:
  TensorDesc g_, y_, o_;
  SliceGeometry geo_;
  aclDataType in_;
  bool direct_;
  RowKernels kernels_;
  int threads_;
  WorkspaceBooker booker_;
  WorkspaceBooking scratch_;
  int64_t numel_;
  const char* target_;
};

}  // namespace

std::unique_ptr<Plan> MakePlan(const Args& a) { return std::make_unique<LsmBwdPlan>(a); }

}  // namespace lsm_bwd
}  // namespace aclnn_cpu
