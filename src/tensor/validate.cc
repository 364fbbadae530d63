#include "tensor/validate.h"

#include <algorithm>

namespace aclnn_cpu {

std::string DtypeList(DtypeSpan allowed) {
  std::string s;
  size_t i = 0;
  for (aclDataType a : allowed) {
    if (i > 0) s += (i + 1 == allowed.size()) ? " or " : ", ";
    s += DtypeName(a);
    ++i;
  }
  return s;
}

Status CheckShapeIs(const char* op, const char* name, const aclTensor* t,
                    std::initializer_list<int64_t> want, const char* name_of_want, int code) {
  return CheckShapeIs(op, name, t, std::vector<int64_t>(want), name_of_want, code);
}

Status CheckShapeIs(const char* op, const char* name, const aclTensor* t,
                    const std::vector<int64_t>& want, const char* name_of_want, int code) {
  if (t->shape.size() == want.size() && std::equal(want.begin(), want.end(), t->shape.begin())) {
    return OkStatus();
  }
  std::string w = "[";
  size_t i = 0;
  for (int64_t d : want) w += (i++ ? ", " : "") + std::to_string(d);
  w += "]";
  return MakeError(code, "%s: %s has shape %s but must be %s = %s.", op, name,
                   ShapeString(t).c_str(), name_of_want, w.c_str());
}

Status CheckInPlaceView(const char* op, const char* out_name, const aclTensor* out,
                        const char* in_name, const aclTensor* in) {
  // A null address is reported by CheckStorageInBlock (with its own sentence); no view of it.
  if (in->data == nullptr || out->data == nullptr) return OkStatus();
  const TensorDesc x = DescribeTensor(in), o = DescribeTensor(out);
  if (x.data != o.data || std::equal(x.strides, x.strides + x.rank, o.strides)) return OkStatus();
  return MakeError(ACLNN_ERR_PARAM_INVALID,
                   "%s: %s shares its data address with %s but not its strides; in place, %s "
                   "must be the same view as %s.",
                   op, out_name, in_name, out_name, in_name);
}

}  // namespace aclnn_cpu
