#include "ops/common/cross_entropy.h"

#include <cmath>
#include <cstring>

#include "acl/acl_base.h"
#include "aclnn/aclnn_base.h"
#include "core/dtype.h"

namespace aclnn_cpu {
namespace ce {

const char* ReductionName(Reduction r) {
  switch (r) {
    case Reduction::kNone:
      return "none";
    case Reduction::kMean:
      return "mean";
    case Reduction::kSum:
      return "sum";
  }
  return "?";
}

Status ParseReduction(const char* op, const char* s, Reduction* r) {
  if (s == nullptr || std::strcmp(s, "mean") == 0) {
    *r = Reduction::kMean;
  } else if (std::strcmp(s, "none") == 0) {
    *r = Reduction::kNone;
  } else if (std::strcmp(s, "sum") == 0) {
    *r = Reduction::kSum;
  } else {
    return MakeError(ACLNN_ERR_INNER_TILING_ERROR,
                     "%s: reductionOptional \"%.40s\" is not one of \"none\", \"mean\", \"sum\".",
                     op, s);
  }
  return OkStatus();
}

Status CheckAttributes(const char* op, double ls, double z) {
  if (!(ls >= 0.0 && ls <= 1.0)) {
    return MakeError(ACLNN_ERR_INNER_TILING_ERROR, "%s: labelSmoothing %g is outside [0, 1].", op,
                     ls);
  }
  if (!std::isfinite(z)) {
    return MakeError(ACLNN_ERR_INNER_TILING_ERROR, "%s: lseSquareScaleForZloss %g is not finite.",
                     op, z);
  }
  return OkStatus();
}

Status CheckLossShape(const char* op, const char* name, const aclTensor* t, Reduction r,
                      int64_t n) {
  return CheckLossShape(op, name, t, r, std::vector<int64_t>{n});
}

std::vector<int64_t> PositionShape(const aclTensor* input) {
  std::vector<int64_t> s = input->shape;
  if (s.size() >= 2) s.erase(s.begin() + 1);
  return s;
}

Status CheckLossShape(const char* op, const char* name, const aclTensor* t, Reduction r,
                      const std::vector<int64_t>& positions) {
  const int rank = Rank(t);
  if (r == Reduction::kNone) {
    if (positions.size() == 1) {
      if (rank == 1 && t->shape[0] == positions[0]) return OkStatus();
      return MakeError(ACLNN_ERR_INNER_TILING_ERROR,
                       "%s: %s has shape %s but must be (N,) = [%lld] for reduction \"none\".", op,
                       name, ShapeString(t).c_str(), static_cast<long long>(positions[0]));
    }
    return CheckShapeIs(op, name, t, positions, "(N, d1, ..., dK) for reduction \"none\"",
                        ACLNN_ERR_INNER_TILING_ERROR);
  }
  if (rank == 0 || (rank == 1 && t->shape[0] == 1)) return OkStatus();
  return MakeError(ACLNN_ERR_INNER_TILING_ERROR,
                   "%s: %s has shape %s but must be 0-d or [1] for reduction \"%s\".", op, name,
                   ShapeString(t).c_str(), ReductionName(r));
}

Status BadTargetError(const char* op, const SocProfile& soc, int64_t i, int64_t t, int64_t ignore,
                      int64_t c) {
  const long long li = i, lt = t, lig = ignore, lc = c;
  switch (soc.family) {
    case SocFamily::kAscend910B:
      return MakeError(ACL_ERROR_INVALID_PARAM,
                       "%s: target[%lld] = %lld is neither ignoreIndex (%lld, compared in fp32 on "
                       "the 910B-family) nor a class in [0, %lld), and %s would read weight out of "
                       "bounds for it; nothing was written.",
                       op, li, lt, lig, lc, soc.name);
    case SocFamily::kAscend950:
      if (ignore < 0 && t == ignore) {
        return MakeError(ACL_ERROR_INVALID_PARAM,
                         "%s: target[%lld] = %lld is not a class in [0, %lld): on %s a negative "
                         "ignoreIndex masks no row, and an out-of-range target traps the device; "
                         "nothing was written.",
                         op, li, lt, lc, soc.name);
      }
      return MakeError(ACL_ERROR_INVALID_PARAM,
                       "%s: target[%lld] = %lld is neither ignoreIndex (%lld) nor a class in "
                       "[0, %lld), and on %s an out-of-range target traps the device; nothing was "
                       "written.",
                       op, li, lt, lig, lc, soc.name);
    default:
      return MakeError(ACL_ERROR_INVALID_PARAM,
                       "%s: target[%lld] = %lld is neither ignoreIndex (%lld) nor a class in "
                       "[0, %lld); nothing was written.",
                       op, li, lt, lig, lc);
  }
}

double CopyWeights(const TensorDesc* weight, int64_t c, aclDataType compute, void* w_contig) {
  if (weight == nullptr) return static_cast<double>(c);
  double w_sum = 0.0;
  const int64_t ws = weight->strides[0];
  for (int64_t j = 0; j < c; ++j) {
    StoreFromDouble(compute, w_contig, j, LoadAsDouble(weight->dtype, weight->data, j * ws));
    w_sum += LoadAsDouble(compute, w_contig, j);
  }
  return w_sum;
}

Status ScanTargets(const char* op, const SocProfile& soc, const TensorDesc& target,
                   const TensorDesc* weight, int64_t n, int64_t c, int64_t ignore_index,
                   Reduction r, aclDataType compute, void* w_contig, RowTarget* rows,
                   TargetScan* scan) {
  const int64_t tstride = target.rank == 1 ? target.strides[0] : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = LoadAsInt64(target.dtype, target.data, i * tstride);
    if (IsIgnoredTarget(soc.family, t, ignore_index)) continue;
    if (t < 0 || t >= c) return BadTargetError(op, soc, i, t, ignore_index, c);
  }
  const double w_sum = CopyWeights(weight, c, compute, w_contig);
  double d = 0.0, m = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = LoadAsInt64(target.dtype, target.data, i * tstride);
    if (IsIgnoredTarget(soc.family, t, ignore_index)) {
      rows[i] = RowTarget{-1, 0.0};
      continue;
    }
    const double wt = WeightAt(weight != nullptr ? w_contig : nullptr, compute, t);
    rows[i] = RowTarget{t, wt};
    d += wt;
    m += 1.0;
  }
  scan->w_sum = w_sum;
  scan->d = r == Reduction::kMean ? d : 1.0;
  scan->m = r == Reduction::kMean ? m : 1.0;
  return OkStatus();
}

void DescribeCommon(const SocProfile& soc, Reduction r, int64_t n, int64_t c,
                    const aclTensor* target, const aclTensor* weight, int64_t ignore_index,
                    double label_smoothing, double zloss_scale, Common* k) {
  k->soc = soc;
  k->reduction = r;
  k->n = n;
  k->c = c;
  k->target = DescribeTensor(target);
  k->has_weight = weight != nullptr;
  if (k->has_weight) k->weight = DescribeTensor(weight);
  k->ignore_index = ignore_index;
  k->label_smoothing = label_smoothing;
  k->zloss_scale = zloss_scale;
}

Status CheckTargetsAndAttributes(const char* op, const SocProfile& soc, const char* rows_name,
                                 const aclTensor* rows, const aclTensor* target,
                                 const aclTensor* weight, const char* reduction,
                                 double label_smoothing, double zloss_scale,
                                 const aclTensor* grad_loss, Reduction* r, int64_t* n, int64_t* c,
                                 bool k_dim) {
  constexpr int kDtype = ACLNN_ERR_PARAM_INVALID;
  constexpr int kTiling = ACLNN_ERR_INNER_TILING_ERROR;
  const bool b910 = soc.family == SocFamily::kAscend910B;
  const bool gradient = grad_loss != nullptr;
  if (b910 && target->dtype != ACL_INT64) {
    return MakeError(kDtype,
                     "%s: target has dtype %s, which %s does not take (SoC profile %s: INT64 "
                     "targets only).",
                     op, DtypeName(target->dtype), soc.name, SocFamilyName(soc.family));
  }
  ACLNN_RETURN_IF_ERROR(CheckDtype(op, "target", target, kIndexDtypes, kDtype));
  if (weight != nullptr) {
    // DOUBLE too under the default profile (PyTorch's weight has the input's dtype).
    ACLNN_RETURN_IF_ERROR(
        CheckDtype(op, "weightOptional", weight,
                   soc.is_cpu() ? DtypeSpan(kFloat32Or64) : DtypeSpan(kFloat32Only), kDtype));
  }
  Status st = ParseReduction(op, reduction, r);
  if (!st.ok() && b910 && gradient) {
    return MakeError(kTiling,
                     "%s: reductionOptional \"%.40s\" is not one of \"none\", \"mean\", "
                     "\"sum\"; %s would silently compute \"none\" (SoC profile %s).",
                     op, reduction, soc.name, SocFamilyName(soc.family));
  }
  ACLNN_RETURN_IF_ERROR(st);
  ACLNN_RETURN_IF_ERROR(
      CheckAttributes(op, label_smoothing, soc.ignores_zloss() ? 0.0 : zloss_scale));
  if (b910 && gradient && label_smoothing != 0.0) {
    return MakeError(kDtype,
                     "%s: labelSmoothing %g is not implemented on %s (SoC profile %s: the NPU "
                     "leaves the output unwritten or hangs); only 0 is accepted.",
                     op, label_smoothing, soc.name, SocFamilyName(soc.family));
  }
  const int rank = Rank(rows);
  if (rank != 2 && !(k_dim && rank > 2)) {
    return MakeError(kTiling, "%s: %s has shape %s but must be %s.", op, rows_name,
                     ShapeString(rows).c_str(),
                     k_dim ? "(N, C) or (N, C, d1, ..., dK)" : "2-d (N, C)");
  }
  *n = rows->shape[0];
  *c = rows->shape[1];
  if (soc.family == SocFamily::kAscend950 && gradient) {
    ACLNN_RETURN_IF_ERROR(CheckLossShape(op, "gradLoss", grad_loss, *r, *n));
  }
  if (rank > 2) {
    // The column tiles hold class indices in the compute type (exact below 2^24).
    if (*c >= (int64_t{1} << 24)) {
      return MakeError(kTiling,
                       "%s: %s has %lld classes; K-dimensional inputs take fewer than 2^24.", op,
                       rows_name, static_cast<long long>(*c));
    }
    ACLNN_RETURN_IF_ERROR(
        CheckShapeIs(op, "target", target, PositionShape(rows), "(N, d1, ..., dK)", kTiling));
  } else {
    ACLNN_RETURN_IF_ERROR(CheckShapeIs(op, "target", target, {*n}, "(N,)", kTiling));
  }
  if (weight != nullptr) {
    ACLNN_RETURN_IF_ERROR(CheckShapeIs(op, "weightOptional", weight, {*c}, "(C,)", kTiling));
  }
  return OkStatus();
}

Status CheckSocHasOperator(const char* op, const SocProfile& soc, bool extension) {
  if (soc.is_cpu()) return OkStatus();
  if (extension) {
    return MakeError(ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                     "%s is aclnn-cpu's extension, not a CANN operator: it does not exist on %s "
                     "(SoC profile %s).",
                     op, soc.name, SocFamilyName(soc.family));
  }
  if (soc.family == SocFamily::kAscend910) {
    return MakeError(ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                     "%s does not exist on %s (SoC profile %s: CANN ships it for the "
                     "910B-family and the 950 only).",
                     op, soc.name, SocFamilyName(soc.family));
  }
  return OkStatus();
}

Status CheckShardAndAttributes(const char* op, const SocProfile& soc, const aclTensor* logits,
                               int64_t class_offset, int64_t num_classes, const aclTensor* target,
                               const aclTensor* weight, const char* reduction,
                               double label_smoothing, double zloss_scale,
                               const aclTensor* grad_loss, Reduction* r, int64_t* n, int64_t* vs) {
  constexpr int kShape = ACLNN_ERR_INNER_TILING_ERROR;
  if (num_classes < 1 || class_offset < 0 || class_offset >= num_classes) {
    return MakeError(kShape,
                     "%s: classOffset %lld and numClasses %lld do not describe a shard (expected "
                     "0 <= classOffset < numClasses).",
                     op, static_cast<long long>(class_offset), static_cast<long long>(num_classes));
  }
  if (Rank(logits) != 2) {
    return MakeError(kShape, "%s: logits has shape %s but must be 2-d (N, Vs).", op,
                     ShapeString(logits).c_str());
  }
  const int64_t rows = logits->shape[0];
  // The whole vocabulary's logits, for the rules on target and weight.
  const aclTensor whole{
      logits->dtype,        ACL_FORMAT_ND, {rows, num_classes}, {num_classes, 1}, 0,
      {rows * num_classes}, logits->data};
  int64_t c;
  ACLNN_RETURN_IF_ERROR(CheckTargetsAndAttributes(op, soc, "logits (the whole vocabulary)", &whole,
                                                  target, weight, reduction, label_smoothing,
                                                  zloss_scale, grad_loss, r, n, &c));
  *vs = logits->shape[1];
  if (class_offset + *vs > num_classes) {
    return MakeError(kShape,
                     "%s: logits has %lld classes from classOffset %lld, beyond numClasses %lld.",
                     op, static_cast<long long>(*vs), static_cast<long long>(class_offset),
                     static_cast<long long>(num_classes));
  }
  return OkStatus();
}

}  // namespace ce
}  // namespace aclnn_cpu
