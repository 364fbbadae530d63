// Scalar gather/scatter between strided tensors of any floating dtype and contiguous f32 rows:
// the generic path for non-contiguous views and for output dtypes that differ from the input.
#ifndef ACLNN_CPU_OPS_COMMON_STRIDED_H_
#define ACLNN_CPU_OPS_COMMON_STRIDED_H_

#include <cstdint>

#include "acl/acl_base.h"

namespace aclnn_cpu {

// dst[i] = x[i * stride] of dtype t, first rounded to dtype round_to (FLOAT16/BF16 round;
// FLOAT/DOUBLE: the value as f32).
void GatherF32(aclDataType t, aclDataType round_to, const char* base, int64_t stride, int64_t n,
               float* dst);
// Element i of the strided output (dtype out_t) = src[i] rounded once to dtype round_to, then
// converted to out_t.
void ScatterF32(aclDataType round_to, aclDataType out_t, const float* src, char* base,
                int64_t stride, int64_t n);

// The same through double, for the f64 kernels: dst[i] = x[i * stride] of dtype t (exact for
// every floating dtype); element i of the strided output (dtype out_t) = src[i] rounded once.
void GatherF64(aclDataType t, const char* base, int64_t stride, int64_t n, double* dst);
void ScatterF64(aclDataType out_t, const double* src, char* base, int64_t stride, int64_t n);
// dst[i] = the class index x[i * stride] of dtype t (INT64 or INT32).
void GatherIndices(aclDataType t, const char* base, int64_t stride, int64_t n, int64_t* dst);

// A row gathered into the compute type of the kernels (ComputeDtype: FLOAT or DOUBLE), and
// scattered back; for FLOAT, GatherF32/ScatterF32 with round_to the input dtype.
void GatherRow(aclDataType compute, aclDataType t, const char* base, int64_t stride, int64_t n,
               void* dst);
void ScatterRow(aclDataType compute, aclDataType round_to, aclDataType out_t, const void* src,
                char* base, int64_t stride, int64_t n);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_COMMON_STRIDED_H_
