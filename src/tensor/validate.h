// Validation building blocks shared by the operators. Each returns OkStatus() or a status with
// one sentence naming the operator, the argument, the value and the rule; all message texts of
// the validation layer live here.
#ifndef ACLNN_CPU_TENSOR_VALIDATE_H_
#define ACLNN_CPU_TENSOR_VALIDATE_H_

#include <initializer_list>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "core/dtype.h"
#include "core/status.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {

inline Status CheckNotNull(const char* op, const char* name, const void* p) {
  if (p != nullptr) return OkStatus();
  return MakeError(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is null.", op, name);
}

// "FLOAT, FLOAT16 or BF16"
std::string DtypeList(DtypeSpan allowed);

inline Status CheckDtype(const char* op, const char* name, const aclTensor* t, DtypeSpan allowed,
                         int code) {
  if (allowed.Contains(t->dtype)) return OkStatus();
  return MakeError(code, "%s: %s has dtype %s, which is not supported (expected %s).", op, name,
                   DtypeName(t->dtype), DtypeList(allowed).c_str());
}

inline Status CheckSameDtype(const char* op, const char* name_a, const aclTensor* a,
                             const char* name_b, const aclTensor* b, int code) {
  if (a->dtype == b->dtype) return OkStatus();
  return MakeError(code, "%s: %s has dtype %s but %s has dtype %s; they must be equal.", op, name_a,
                   DtypeName(a->dtype), name_b, DtypeName(b->dtype));
}

inline Status CheckMaxRank(const char* op, const char* name, const aclTensor* t, int code) {
  if (Rank(t) <= kMaxRank) return OkStatus();
  return MakeError(code, "%s: %s has %d dimensions, more than the %d supported.", op, name, Rank(t),
                   kMaxRank);
}

inline Status CheckSameShape(const char* op, const char* name_a, const aclTensor* a,
                             const char* name_b, const aclTensor* b, int code) {
  if (SameShape(a, b)) return OkStatus();
  return MakeError(code, "%s: %s has shape %s but %s has shape %s; they must be equal.", op, name_a,
                   ShapeString(a).c_str(), name_b, ShapeString(b).c_str());
}

// dim must lie in [-r, r-1], r = max(rank, 1). On success *wrapped is in [0, r-1].
inline Status CheckDim(const char* op, int64_t dim, int rank, int64_t* wrapped) {
  const int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim > r - 1) {
    return MakeError(ACLNN_ERR_PARAM_INVALID,
                     "%s: dim %lld is out of range for a %d-d tensor (expected %lld..%lld).", op,
                     static_cast<long long>(dim), rank, static_cast<long long>(-r),
                     static_cast<long long>(r - 1));
  }
  *wrapped = dim < 0 ? dim + r : dim;
  return OkStatus();
}

// An operator that may compute in place: `out` may be `in`'s own view (the same data address,
// the same strides), not another view of the same bytes (ACLNN_ERR_PARAM_INVALID).
Status CheckInPlaceView(const char* op, const char* out_name, const aclTensor* out,
                        const char* in_name, const aclTensor* in);

// Shape must equal `want` (given as a list of dims; `name_of_want` describes it, e.g. "(N, C)").
Status CheckShapeIs(const char* op, const char* name, const aclTensor* t,
                    std::initializer_list<int64_t> want, const char* name_of_want, int code);
Status CheckShapeIs(const char* op, const char* name, const aclTensor* t,
                    const std::vector<int64_t>& want, const char* name_of_want, int code);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_TENSOR_VALIDATE_H_
