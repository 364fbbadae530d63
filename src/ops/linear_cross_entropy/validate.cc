// aclnnCpuLinearCrossEntropy (extension): validation (pure: arguments in, a status and a
// checked description out) and the automatic chunk size; plan.cc makes the plan.
#include "tensor/validate.h"

#include <algorithm>

#include "core/dtype.h"
#include "ops/linear_cross_entropy/plan.h"

namespace aclnn_cpu {
namespace lce {

namespace {

constexpr aclDataType kLinearDtypes[] = {ACL_FLOAT, ACL_BF16, ACL_FLOAT16};
constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
constexpr int kShape = ACLNN_ERR_INNER_TILING_ERROR;

// `t` has `ref`'s dtype, or FLOAT (an fp32 result or accumulator for 16-bit operands).
Status CheckDtypeOrFloat(const char* name, const aclTensor* t, const char* ref_name,
                         const aclTensor* ref) {
  if (t->dtype == ref->dtype || t->dtype == ACL_FLOAT) return OkStatus();
  return MakeError(kDtype, "%s: %s has dtype %s but must be FLOAT or %s's dtype %s.", kOp, name,
                   DtypeName(t->dtype), ref_name, DtypeName(ref->dtype));
}

Status CheckMatrix(const char* name, const aclTensor* t, const char* want) {
  if (Rank(t) == 2) return OkStatus();
  return MakeError(kShape, "%s: %s has shape %s but must be 2-d %s.", kOp, name,
                   ShapeString(t).c_str(), want);
}

}  // namespace

int64_t AutoChunkRows(int64_t n, int64_t v, aclDataType dtype) {
  if (n <= 0 || v <= 0) return 1;
  const double row_bytes = static_cast<double>(v) * (DtypeSize(dtype) == 2 ? 6.0 : 4.0);
  // 1/16 of the logits' bytes in f32 for either dtype: BF16's weight-gradient accumulator
  // (V x H f32) outweighs its chunk anyway, and fewer, larger chunks pass over it less often
  // (docs/large_vocab.md, measured).
  const double budget = static_cast<double>(n) * static_cast<double>(v) * 4.0 / 16.0;
  const int64_t rows = std::max<int64_t>(64, static_cast<int64_t>(budget / row_bytes));
  return std::min(rows, n);
}

Status Validate(const Args& a, Checked* out) {
  *out = Checked{};
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "input", a.input));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "linearWeight", a.linear_weight));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "target", a.target));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "lossOut", a.loss_out));
  ACLNN_RETURN_IF_ERROR(CheckNotNull(kOp, "lseOut", a.lse_out));
  const SocProfile soc = CurrentSoc();
  ACLNN_RETURN_IF_ERROR(ce::CheckSocHasOperator(kOp, soc, /*extension=*/true));

  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, "input", a.input, kLinearDtypes, kDtype));
  ACLNN_RETURN_IF_ERROR(
      CheckSameDtype(kOp, "linearWeight", a.linear_weight, "input", a.input, kDtype));
  if (a.linear_bias != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckSameDtype(kOp, "linearBiasOptional", a.linear_bias, "input", a.input, kDtype));
  }
  if (a.grad_loss != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckDtypeOrFloat("gradLossOptional", a.grad_loss, "input", a.input));
  }
  ACLNN_RETURN_IF_ERROR(CheckDtypeOrFloat("lossOut", a.loss_out, "input", a.input));
  ACLNN_RETURN_IF_ERROR(CheckDtype(kOp, "lseOut", a.lse_out, kFloat32Or64, kDtype));
  if (a.grad_input != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckSameDtype(kOp, "gradInputOptional", a.grad_input, "input", a.input, kDtype));
  }
  if (a.grad_weight != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckDtypeOrFloat("gradWeightOptional", a.grad_weight, "linearWeight", a.linear_weight));
  }
  if (a.grad_bias != nullptr) {
    if (a.linear_bias == nullptr) {
      return MakeError(kDtype,
                       "%s: gradBiasOptional is given but linearBiasOptional is null; there is "
                       "no bias to differentiate.",
                       kOp);
    }
    ACLNN_RETURN_IF_ERROR(
        CheckDtypeOrFloat("gradBiasOptional", a.grad_bias, "linearBiasOptional", a.linear_bias));
  }
  ACLNN_RETURN_IF_ERROR(CheckMatrix("input", a.input, "(N, H)"));
  ACLNN_RETURN_IF_ERROR(CheckMatrix("linearWeight", a.linear_weight, "(V, H)"));
  const int64_t n = a.input->shape[0], h = a.input->shape[1], v = a.linear_weight->shape[0];
  if (a.linear_weight->shape[1] != h) {
    return MakeError(kShape,
                     "%s: linearWeight has shape %s but input has shape %s; their last "
                     "dimensions (H) must be equal.",
                     kOp, ShapeString(a.linear_weight).c_str(), ShapeString(a.input).c_str());
  }
  // The logits' shape, for the cross-entropy rules shared with the other operators.
  aclTensor logits{a.input->dtype, ACL_FORMAT_ND, {n, v}, {v, 1}, 0, {n * v}, a.input->data};
  ce::Reduction r;
  int64_t n2, v2;
  ACLNN_RETURN_IF_ERROR(ce::CheckTargetsAndAttributes(
      kOp, soc, "logits (input x linearWeight^T)", &logits, a.target, a.weight, a.reduction,
      a.label_smoothing, a.zloss_scale, nullptr, &r, &n2, &v2));
  ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(kOp, "lossOut", a.loss_out, r, n));
  if (a.grad_loss != nullptr) {
    ACLNN_RETURN_IF_ERROR(ce::CheckLossShape(kOp, "gradLossOptional", a.grad_loss, r, n));
  }
  ACLNN_RETURN_IF_ERROR(CheckShapeIs(kOp, "lseOut", a.lse_out, {n}, "(N,)", kShape));
  if (a.linear_bias != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(kOp, "linearBiasOptional", a.linear_bias, {v}, "(V,)", kShape));
  }
  if (a.grad_input != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(kOp, "gradInputOptional", a.grad_input, {n, h}, "(N, H)", kShape));
  }
  if (a.grad_weight != nullptr) {
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(kOp, "gradWeightOptional", a.grad_weight, {v, h}, "(V, H)", kShape));
  }
  if (a.grad_bias != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckShapeIs(kOp, "gradBiasOptional", a.grad_bias, {v}, "(V,)", kShape));
  }
  if (!(a.softcap >= 0.0 && a.softcap <= 3.0e38)) {
    return MakeError(kDtype,
                     "%s: logitSoftcap is %g; it must be 0 (no soft-capping) or a positive finite "
                     "cap.",
                     kOp, a.softcap);
  }
  if (a.chunk_size < 0) {
    return MakeError(kShape, "%s: chunkSize is %lld; it must be 0 (automatic) or positive.", kOp,
                     static_cast<long long>(a.chunk_size));
  }
  if (v == 0) {
    out->empty = true;  // like aclnnCrossEntropyLoss with C == 0: nothing is written
    return OkStatus();
  }
  const std::pair<const char*, const aclTensor*> operands[] = {
      {"input", a.input},
      {"linearWeight", a.linear_weight},
      {"linearBiasOptional", a.linear_bias},
      {"target", a.target},
      {"weightOptional", a.weight},
      {"gradLossOptional", a.grad_loss},
      {"lossOut", a.loss_out},
      {"lseOut", a.lse_out},
      {"gradInputOptional", a.grad_input},
      {"gradWeightOptional", a.grad_weight},
      {"gradBiasOptional", a.grad_bias}};
  for (const auto& [name, t] : operands) {
    if (t != nullptr) ACLNN_RETURN_IF_ERROR(CheckStorageInBlock(kOp, name, t));
  }
  ce::DescribeCommon(soc, r, n, v, a.target, a.weight, a.ignore_index, a.label_smoothing,
                     soc.ignores_zloss() ? 0.0 : a.zloss_scale, out);
  out->h = h;
  out->softcap = static_cast<float>(a.softcap);
  out->chunk = a.chunk_size > 0 ? std::min(a.chunk_size, std::max<int64_t>(n, 1))
                                : AutoChunkRows(n, v, a.input->dtype);
  out->input = DescribeTensor(a.input);
  out->linear_weight = DescribeTensor(a.linear_weight);
  out->has_bias = a.linear_bias != nullptr;
  if (out->has_bias) out->linear_bias = DescribeTensor(a.linear_bias);
  out->has_grad_loss = a.grad_loss != nullptr;
  if (out->has_grad_loss) out->grad_loss = DescribeTensor(a.grad_loss);
  out->loss = DescribeTensor(a.loss_out);
  out->lse = DescribeTensor(a.lse_out);
  out->want_input = a.grad_input != nullptr && n > 0 && h > 0;
  out->want_weight = a.grad_weight != nullptr && h > 0;
  out->want_bias = a.grad_bias != nullptr;
  if (out->want_input) out->grad_input = DescribeTensor(a.grad_input);
  if (out->want_weight) out->grad_weight = DescribeTensor(a.grad_weight);
  if (out->want_bias) out->grad_bias = DescribeTensor(a.grad_bias);
  return OkStatus();
}

}  // namespace lce
}  // namespace aclnn_cpu
