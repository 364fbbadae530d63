#include "tensor/geometry.h"

namespace aclnn_cpu {

SliceGeometry MakeSliceGeometry(const TensorDesc* const* ops, int nops, int axis) {
  SliceGeometry g;
  g.nops = nops;
  const int rank = ops[0]->rank;
  if (rank == 0) return g;  // one slice of one element
  g.axis_len = ops[0]->shape[axis];
  for (int k = 0; k < nops; ++k) g.axis_stride[k] = ops[k]->strides[axis];
  for (int d = 0; d < rank; ++d) {
    if (d == axis || ops[0]->shape[d] == 1) continue;
    const int64_t size = ops[0]->shape[d];
    bool merge = g.ndims > 0;
    for (int k = 0; k < nops && merge; ++k) {
      // The previous outer dim steps over exactly `size` steps of this one.
      merge = g.strides[k][g.ndims - 1] == ops[k]->strides[d] * size;
    }
    if (merge) {
      g.sizes[g.ndims - 1] *= size;
      for (int k = 0; k < nops; ++k) g.strides[k][g.ndims - 1] = ops[k]->strides[d];
    } else {
      g.sizes[g.ndims] = size;
      for (int k = 0; k < nops; ++k) g.strides[k][g.ndims] = ops[k]->strides[d];
      ++g.ndims;
    }
    g.num_slices *= size;
  }
  return g;
}

}  // namespace aclnn_cpu
