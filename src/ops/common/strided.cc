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

// One switch per call, typed loops inside (the per-position columns of the K-dimensional
// plans call these for every tile), each with a unit-stride copy of itself that the compiler
// vectorizes (the common case: a contiguous per-position tensor; as the strided loop, those
// were 3% of the K-dimensional forward's time, 8x21x512x512 f32).

namespace {
// dst[i] = f(src[i * stride]) for i < n.
template <class S, class D, class F>
inline void GatherWith(const S* src, int64_t stride, int64_t n, D* dst, F f) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i * stride]);
  }
}

// dst[i * stride] = src[i] converted to D, for i < n.
template <class D>
inline void ScatterTo(const double* src, D* dst, int64_t stride, int64_t n) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<D>(src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * stride] = static_cast<D>(src[i]);
  }
}
}  // namespace

void GatherF64(aclDataType t, const char* base, int64_t stride, int64_t n, double* dst) {
  switch (t) {
    case ACL_FLOAT: {
      GatherWith(reinterpret_cast<const float*>(base), stride, n, dst,
                 [](float v) { return static_cast<double>(v); });
      return;
    }
    case ACL_DOUBLE: {
      GatherWith(reinterpret_cast<const double*>(base), stride, n, dst, [](double v) { return v; });
      return;
    }
    case ACL_FLOAT16: {
      GatherWith(reinterpret_cast<const uint16_t*>(base), stride, n, dst,
                 [](uint16_t v) { return static_cast<double>(Fp16ToFloat(v)); });
      return;
    }
    case ACL_BF16: {
      GatherWith(reinterpret_cast<const uint16_t*>(base), stride, n, dst,
                 [](uint16_t v) { return static_cast<double>(Bf16ToFloat(v)); });
      return;
    }
    default:
      for (int64_t i = 0; i < n; ++i) dst[i] = LoadAsDouble(t, base, i * stride);
  }
}

void ScatterF64(aclDataType out_t, const double* src, char* base, int64_t stride, int64_t n) {
  switch (out_t) {
    case ACL_FLOAT:
      return ScatterTo(src, reinterpret_cast<float*>(base), stride, n);
    case ACL_DOUBLE:
      return ScatterTo(src, reinterpret_cast<double*>(base), stride, n);
    default:  // 16-bit: StoreFromDouble's rounding (through f32 rounded to odd)
      for (int64_t i = 0; i < n; ++i) StoreFromDouble(out_t, base, i * stride, src[i]);
  }
}

void GatherIndices(aclDataType t, const char* base, int64_t stride, int64_t n, int64_t* dst) {
  if (t == ACL_INT32) {
    GatherWith(reinterpret_cast<const int32_t*>(base), stride, n, dst,
               [](int32_t v) { return static_cast<int64_t>(v); });
    return;
  }
  GatherWith(reinterpret_cast<const int64_t*>(base), stride, n, dst, [](int64_t v) { return v; });
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
