// Soft-capping kernels (softcap.h), compiled for every Highway target by foreach_target.
#include "kernels/softcap.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softcap.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// Per-target headers, after highway.h.
#include "hwy/contrib/math/math-inl.h"
#include "simd/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace aclnn_cpu {
namespace HWY_NAMESPACE {

// Whole vectors, then the tail through a padded vector (SVE vectors cannot live in a struct,
// so each step stores its own results).
void SoftcapCap(float* z, float* deriv, size_t n, float cap) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  const auto vcap = hn::Set(d, cap), inv = hn::Set(d, 1.0f / cap), one = hn::Set(d, 1.0f);
  for (size_t i = 0; i < n; i += lanes) {
    const size_t c = std::min(lanes, n - i);
    const auto t = hn::Tanh(d, hn::Mul(LoadPartialF32(d, z + i, c, 0.0f), inv));
    StorePartialF32(d, hn::Mul(vcap, t), z + i, c);
    if (deriv != nullptr) StorePartialF32(d, hn::NegMulAdd(t, t, one), deriv + i, c);
  }
}

void SoftcapScale(float* g, const float* deriv, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < n; i += lanes) {
    const size_t c = std::min(lanes, n - i);
    StorePartialF32(
        d, hn::Mul(LoadPartialF32(d, g + i, c, 0.0f), LoadPartialF32(d, deriv + i, c, 0.0f)), g + i,
        c);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace aclnn_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "simd/dispatch.h"

namespace aclnn_cpu {

HWY_EXPORT(SoftcapCap);
HWY_EXPORT(SoftcapScale);

SoftcapKernels GetSoftcapKernels() {
  InitDispatch();
  SoftcapKernels k;
  k.cap = ACLNN_DYNAMIC_POINTER(SoftcapCap);
  k.scale = ACLNN_DYNAMIC_POINTER(SoftcapScale);
  return k;
}

}  // namespace aclnn_cpu
#endif  // HWY_ONCE
