#include "ops/common/strided.h"

#include "core/dtype.h"

namespace aclnn_cpu {

static inline float RoundTo(aclDataType t, float v) {
  if (t == ACL_FLOAT16) return Fp16ToFloat(FloatToFp16(v));
  if (t == ACL_BF16) return Bf16ToFloat(FloatToBf16(v));
  return v;
}

void GatherF32(aclDataType t, aclDataType round_to, const char* base, int64_t stride, int64_t n,
               float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = RoundTo(round_to, static_cast<float>(LoadAsDouble(t, base, i * stride)));
  }
}

void ScatterF32(aclDataType round_to, aclDataType out_t, const float* src, char* base,
                int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    StoreFromDouble(out_t, base, i * stride, RoundTo(round_to, src[i]));
  }
}

void GatherF64(aclDataType t, const char* base, int64_t stride, int64_t n, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = LoadAsDouble(t, base, i * stride);
}

void ScatterF64(aclDataType out_t, const double* src, char* base, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) StoreFromDouble(out_t, base, i * stride, src[i]);
}

void GatherRow(aclDataType compute, aclDataType t, const char* base, int64_t stride, int64_t n,
               void* dst) {
  if (compute == ACL_DOUBLE) {
    GatherF64(t, base, stride, n, static_cast<double*>(dst));
  } else {
    GatherF32(t, t, base, stride, n, static_cast<float*>(dst));
  }
}

void ScatterRow(aclDataType compute, aclDataType round_to, aclDataType out_t, const void* src,
                char* base, int64_t stride, int64_t n) {
  if (compute == ACL_DOUBLE) {
    ScatterF64(out_t, static_cast<const double*>(src), base, stride, n);
  } else {
    ScatterF32(round_to, out_t, static_cast<const float*>(src), base, stride, n);
  }
}

}  // namespace aclnn_cpu
