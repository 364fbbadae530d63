// aclnnCpuLinearCrossEntropy (extension): validation (pure) and planning. The plan runs the
// cross-entropy plans (ce_fwd lean, ce_grad from logits) on chunks of rows whose logits it
// computes with oneDNN (matmul.h); docs/large_vocab.md has the math.
#ifndef ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_PLAN_H_
#define ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_PLAN_H_

#include <memory>

#include "ops/common/cross_entropy.h"
#include "runtime/executor.h"
#include "tensor/tensor.h"

namespace aclnn_cpu {
namespace lce {

constexpr const char* kOp = "aclnnCpuLinearCrossEntropy";

struct Args {
  const aclTensor *input, *linear_weight, *linear_bias, *target, *weight, *grad_loss;
  const char* reduction;
  int64_t ignore_index;
  double label_smoothing, zloss_scale;
  double softcap;  // 0: none; else logits <- softcap * tanh(logits / softcap)
  int64_t chunk_size;
  const aclTensor *loss_out, *lse_out, *grad_input, *grad_weight, *grad_bias;
};

struct Checked : ce::Common {  // c: the vocabulary V
  bool empty = false;          // V == 0: nothing to compute, nothing written
  int64_t h = 0;               // hidden size
  int64_t chunk = 1;           // rows per chunk
  float softcap = 0.0f;        // final-logit soft-capping (0: none)
  TensorDesc input, linear_weight, linear_bias, grad_loss, loss, lse, grad_input, grad_weight,
      grad_bias;
  bool has_bias = false, has_grad_loss = false;
  bool want_input = false, want_weight = false, want_bias = false;
  bool grads() const { return want_input || want_weight || want_bias; }
};

// Rows per chunk when chunkSize is 0: the chunk's buffers (the fp32 logits and, for BF16, their
// BF16 copy) take at most 1/16 of the bytes of (N, V) f32 logits, and at least 64 rows (fewer
// only when N is smaller).
int64_t AutoChunkRows(int64_t n, int64_t v, aclDataType dtype);

// Tests: plans made while this is on compute BF16 operands with f32 products on converted
// blocks, the path of machines whose oneDNN has no BF16 product (AArch64 without BF16, x86
// without AVX512_CORE), so that both paths are tested on every machine.
void SetForceF32Products(bool on);
bool ForceF32Products();

// ACLNN_CPU_BF16_PRODUCTS: "f32" (f32 products on converted blocks), "bf16" (the BLAS's BF16
// product where it has one), else automatic (read once per process).
enum class Bf16Products { kAuto, kF32, kBf16 };
Bf16Products Bf16ProductsFromEnvironment();

Status Validate(const Args& a, Checked* c);
// Creates the matrix-product primitives (which may fail: 561003 where oneDNN has no kernel).
Status MakePlan(const Checked& c, std::unique_ptr<Plan>* plan);

}  // namespace lce
}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_OPS_LINEAR_CROSS_ENTROPY_PLAN_H_
