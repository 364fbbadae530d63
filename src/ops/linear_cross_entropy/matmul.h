// Matrix products for the fused linear cross-entropy, from oneDNN (chosen over OpenBLAS by
// bench/blas_bench.cc, docs/large_vocab.md): primitives created once at phase 1, run at phase 2
// on memory handles bound then, with the scratchpad in the operator's workspace (phase 2
// allocates nothing). oneDNN's headers stay in matmul.cc.
#ifndef ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_MATMUL_H_
#define ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_MATMUL_H_

#include <cstdint>
#include <memory>

#include "acl/acl_base.h"
#include "core/status.h"

namespace aclnn_cpu {
namespace lce {

// A rows x cols matrix of dtype FLOAT or BF16: element (i, j) at data + i * row_stride +
// j * col_stride (in elements).
struct MatrixLayout {
  aclDataType dtype;
  int64_t rows, cols, row_stride, col_stride;
};

class Matmul {
 public:
  // c = a * b (a: m x k, b: k x n, c: m x n), plus c's previous value when `accumulate`, plus
  // a bias row (n elements of bias_dtype, stride bias_stride) unless bias_dtype is
  // ACL_DT_UNDEFINED. Products and sums in f32. Fails (with `op` in the message) where this
  // machine's oneDNN has no kernel for the dtypes.
  Status Init(const char* op, const MatrixLayout& a, const MatrixLayout& b, const MatrixLayout& c,
              bool accumulate, aclDataType bias_dtype = ACL_DT_UNDEFINED, int64_t bias_stride = 1);
  uint64_t scratchpad_bytes() const;
  Status Run(const void* a, const void* b, void* c, const void* bias, void* scratchpad) const;
  // The kernel oneDNN chose ("brg:avx512_core_bf16"), for Describe().
  const char* impl() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// c (m x n, row stride ldc) = a * b (+ beta * c), all f32 and row-major, a m x k (or k x m
// when ta), b k x n (or n x k when tb): oneDNN's sgemm, for the BF16 operands of a machine
// without a BF16 matrix product (converted to f32 a block at a time).
Status Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace lce
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_MATMUL_H_
