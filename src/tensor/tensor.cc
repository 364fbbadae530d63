#include "tensor/tensor.h"

#include <cstring>
#include <limits>

#include "aclnn/aclnn_base.h"
#include "core/dtype.h"
#include "core/log.h"
#include "runtime/memory.h"

namespace aclnn_cpu {

int64_t NumElements(const aclTensor* t) {
  int64_t n = 1;
  for (int64_t d : t->shape) n *= d;
  return n;
}

int Rank(const aclTensor* t) { return static_cast<int>(t->shape.size()); }

std::string ShapeString(const aclTensor* t) {
  std::string s = "[";
  for (size_t i = 0; i < t->shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t->shape[i]);
  }
  return s + "]";
}

bool SameShape(const aclTensor* a, const aclTensor* b) { return a->shape == b->shape; }

TensorDesc DescribeTensor(const aclTensor* t) {
  TensorDesc d;
  d.dtype = t->dtype;
  d.rank = Rank(t);
  for (int i = 0; i < d.rank; ++i) {
    d.shape[i] = t->shape[i];
    d.strides[i] = t->strides[i];
  }
  // No offset applied to a null address (undefined behaviour; phase 1 rejects it before use).
  d.data =
      t->data == nullptr ? nullptr : static_cast<char*>(t->data) + t->offset * DtypeSize(t->dtype);
  return d;
}

Status CheckStorageInBlock(const char* op, const char* name, const aclTensor* t) {
  if (t->data == nullptr) {
    return MakeError(ACLNN_ERR_PARAM_NULLPTR, "%s: tensor %s has a null data address.", op, name);
  }
  BlockInfo b;
  if (!FindBlock(t->data, &b)) return OkStatus();
  int64_t n = 1;
  for (int64_t d : t->storage) n *= d;
  const uint64_t need = static_cast<uint64_t>(n) * static_cast<uint64_t>(DtypeSize(t->dtype));
  const uint64_t have =
      b.usable - static_cast<uint64_t>(static_cast<const unsigned char*>(t->data) - b.base);
  if (need > have) {
    return MakeError(ACLNN_ERR_PARAM_INVALID,
                     "%s: tensor %s has a storage of %llu bytes but its aclrtMalloc block has "
                     "only %llu bytes from the tensor's address.",
                     op, name, static_cast<unsigned long long>(need),
                     static_cast<unsigned long long>(have));
  }
  return OkStatus();
}

namespace {

// Multiplies with overflow detection; false on overflow.
bool MulOk(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }

const char* CheckCreate(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                        const int64_t* stride, int64_t offset, const int64_t* storageDims,
                        uint64_t storageDimsNum) {
  if (DtypeSize(dataType) == 0) return "the data type is not one aclnn-cpu can store";
  if (viewDimsNum > 64 || storageDimsNum > 64) return "more than 64 dimensions";
  if (viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) {
    return "viewDims or stride is null with a non-zero viewDimsNum";
  }
  if (storageDimsNum > 0 && storageDims == nullptr) {
    return "storageDims is null with a non-zero storageDimsNum";
  }
  if (offset < 0) return "the offset is negative";
  int64_t storage = 1, view = 1, last = offset;
  for (uint64_t i = 0; i < storageDimsNum; ++i) {
    if (storageDims[i] < 0) return "a storage dimension is negative";
    if (!MulOk(storage, storageDims[i], &storage)) return "the storage size overflows int64";
  }
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (viewDims[i] < 0) return "a view dimension is negative";
    if (stride[i] < 0) return "a stride is negative";
    if (!MulOk(view, viewDims[i], &view)) return "the view size overflows int64";
  }
  if (view == 0) return nullptr;  // an empty view reaches no element
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    int64_t reach;
    if (!MulOk(viewDims[i] - 1, stride[i], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return "the view's extent overflows int64";
    }
  }
  if (last >= storage) return "the view reaches outside the storage";
  const int64_t limit = std::numeric_limits<int64_t>::max() / 16;
  if (storage > limit) return "the storage is too large to address";
  return nullptr;
}

aclnnStatus CopyOut(const std::vector<int64_t>& v, int64_t** arr, uint64_t* n) {
  *n = v.size();
  *arr = new int64_t[v.empty() ? 1 : v.size()];
  if (!v.empty()) std::memcpy(*arr, v.data(), v.size() * sizeof(int64_t));
  return ACLNN_SUCCESS;
}

aclnnStatus NullArg(const char* fn) {
  return Fail(MakeError(ACLNN_ERR_PARAM_NULLPTR, "%s: an argument is null.", fn));
}

}  // namespace
}  // namespace aclnn_cpu

using namespace aclnn_cpu;

extern "C" {

ACL_FUNC_VISIBILITY aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum,
                                               aclDataType dataType, const int64_t* stride,
                                               int64_t offset, aclFormat format,
                                               const int64_t* storageDims, uint64_t storageDimsNum,
                                               void* tensorData) {
  if (const char* why = CheckCreate(viewDims, viewDimsNum, dataType, stride, offset, storageDims,
                                    storageDimsNum)) {
    SetRecentError(StrFormat("aclCreateTensor: rejected because %s.", why));
    LogMessage(LogLevel::kError, "aclCreateTensor: rejected because %s.", why);
    return nullptr;
  }
  auto* t = new aclTensor;
  t->dtype = dataType;
  t->format = format;
  t->shape.assign(viewDims, viewDims + viewDimsNum);
  t->strides.assign(stride, stride + viewDimsNum);
  t->offset = offset;
  t->storage.assign(storageDims, storageDims + storageDimsNum);
  t->data = tensorData;
  return t;
}

ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  delete tensor;
  return ACLNN_SUCCESS;
}

ACL_FUNC_VISIBILITY aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  const int64_t size = DtypeSize(dataType);
  if (value == nullptr || size == 0) {
    SetRecentError("aclCreateScalar: value is null or the data type has no fixed size.");
    return nullptr;
  }
  auto* s = new aclScalar;
  s->dtype = dataType;
  std::memset(s->value, 0, sizeof(s->value));
  std::memcpy(s->value, value, static_cast<size_t>(size));
  return s;
}

ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims,
                                                uint64_t* viewDimsNum) {
  if (!tensor || !viewDims || !viewDimsNum) return NullArg("aclGetViewShape");
  return CopyOut(tensor->shape, viewDims, viewDimsNum);
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor* tensor, int64_t** stridesValue,
                                                  uint64_t* stridesNum) {
  if (!tensor || !stridesValue || !stridesNum) return NullArg("aclGetViewStrides");
  return CopyOut(tensor->strides, stridesValue, stridesNum);
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor* tensor, int64_t* offset) {
  if (!tensor || !offset) return NullArg("aclGetViewOffset");
  *offset = tensor->offset;
  return ACLNN_SUCCESS;
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor* tensor, int64_t** storageDims,
                                                   uint64_t* storageDimsNum) {
  if (!tensor || !storageDims || !storageDimsNum) return NullArg("aclGetStorageShape");
  return CopyOut(tensor->storage, storageDims, storageDimsNum);
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
  if (!tensor || !format) return NullArg("aclGetFormat");
  *format = tensor->format;
  return ACLNN_SUCCESS;
}

ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  if (!tensor || !dataType) return NullArg("aclGetDataType");
  *dataType = tensor->dtype;
  return ACLNN_SUCCESS;
}

}  // extern "C"
