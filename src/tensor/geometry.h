// Slice geometry for reductions along one axis: the tensors' common view is split into
// `num_slices` slices of `axis_len` elements; slice s of operand k starts at element
// SliceOffset(k, s) and steps by axis_stride[k]. The other dimensions are collapsed where every
// operand is contiguous across them and size-1 dims are dropped.
#ifndef ACLNN_CPU_TENSOR_GEOMETRY_H_
#define ACLNN_CPU_TENSOR_GEOMETRY_H_

#include <cstdint>

#include "tensor/tensor.h"

namespace aclnn_cpu {

constexpr int kMaxOperands = 6;

struct SliceGeometry {
  int nops = 0;
  int64_t axis_len = 1;
  int64_t axis_stride[kMaxOperands] = {};
  int64_t num_slices = 1;
  int ndims = 0;  // collapsed outer dims, outermost first
  int64_t sizes[kMaxRank] = {};
  int64_t strides[kMaxOperands][kMaxRank] = {};

  // Element offsets of slice s for every operand.
  void SliceOffsets(int64_t s, int64_t* offs) const {
    for (int k = 0; k < nops; ++k) offs[k] = 0;
    for (int d = ndims - 1; d >= 0 && s > 0; --d) {
      const int64_t i = s % sizes[d];
      s /= sizes[d];
      for (int k = 0; k < nops; ++k) offs[k] += i * strides[k][d];
    }
  }
};

// All operands share one view shape (rank 0 is treated as [1]); `axis` is already wrapped.
SliceGeometry MakeSliceGeometry(const TensorDesc* const* ops, int nops, int axis);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_TENSOR_GEOMETRY_H_
