#include "tensor/validate.h"

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

}  // namespace aclnn_cpu
