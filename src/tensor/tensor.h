// aclTensor: view shape, strides (elements), offset (elements), format, storage shape, data.
#ifndef ACLNN_CPU_TENSOR_TENSOR_H_
#define ACLNN_CPU_TENSOR_TENSOR_H_

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"
#include "core/status.h"

struct aclTensor {
  aclDataType dtype;
  aclFormat format;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset;
  std::vector<int64_t> storage;
  void* data;
};

struct aclScalar {
  aclDataType dtype;
  unsigned char value[16];
};

namespace aclnn_cpu {

constexpr int kMaxRank = 8;

// Plain description of a validated tensor, copied into plans (tensors may be destroyed after
// phase 1). `data` points at element 0 of the view (offset applied).
struct TensorDesc {
  aclDataType dtype = ACL_DT_UNDEFINED;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  char* data = nullptr;
};

int64_t NumElements(const aclTensor* t);
int Rank(const aclTensor* t);
// "[2, 3]" for messages.
std::string ShapeString(const aclTensor* t);
bool SameShape(const aclTensor* a, const aclTensor* b);
// rank <= kMaxRank is required.
TensorDesc DescribeTensor(const aclTensor* t);

// The memory of an operand of non-empty work: a null data address is ACLNN_ERR_PARAM_NULLPTR;
// when the data lies in an aclrtMalloc block, the storage must fit in what is left of the block
// from that address (ACLNN_ERR_PARAM_INVALID otherwise). Messages name op and tensor.
Status CheckStorageInBlock(const char* op, const char* name, const aclTensor* t);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_TENSOR_TENSOR_H_
