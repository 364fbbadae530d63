// Final-logit soft-capping (Gemma 2/3: logits <- cap * tanh(logits / cap)) of f32 rows, the
// fused linear cross-entropy's option: the capped values in place with the factor
// 1 - tanh^2 of their derivative, and the gradient scaled by that factor. Highway kernels,
// dispatched like the row kernels.
#ifndef ACLNN_CPU_KERNELS_SOFTCAP_H_
#define ACLNN_CPU_KERNELS_SOFTCAP_H_

#include <cstddef>

namespace aclnn_cpu {

struct SoftcapKernels {
  // z[i] <- cap * t, deriv[i] <- 1 - t * t with t = tanh(z[i] / cap); deriv may be null.
  void (*cap)(float* z, float* deriv, size_t n, float cap) = nullptr;
  // g[i] <- g[i] * deriv[i].
  void (*scale)(float* g, const float* deriv, size_t n) = nullptr;
};

SoftcapKernels GetSoftcapKernels();

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_KERNELS_SOFTCAP_H_
