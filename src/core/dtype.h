// Data-type facts and exact scalar conversions (round to nearest even) used outside kernels.
#ifndef ACLNN_CPU_CORE_DTYPE_H_
#define ACLNN_CPU_CORE_DTYPE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "acl/acl_base.h"

namespace aclnn_cpu {

// Size in bytes of one element, or 0 for types the library cannot address.
inline int64_t DtypeSize(aclDataType t) {
  switch (t) {
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
      return 4;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
      return 1;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

const char* DtypeName(aclDataType t);

// The dtype sets the operators accept, each written once.
inline constexpr aclDataType kFloatDtypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
inline constexpr aclDataType kFloatOrDoubleDtypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16,
                                                       ACL_DOUBLE};
inline constexpr aclDataType kIndexDtypes[] = {ACL_INT64, ACL_INT32};
inline constexpr aclDataType kFloat32Only[] = {ACL_FLOAT};
// The lean cross-entropy's row log-sum-exp (FLOAT, or DOUBLE to keep all of it: a gradient from
// logits of large magnitude needs it; ce::SplitLse) and the cross-entropy's weights under the
// default profile.
inline constexpr aclDataType kFloat32Or64[] = {ACL_FLOAT, ACL_DOUBLE};

// A read-only view of a dtype set (one of the arrays above).
class DtypeSpan {
 public:
  template <size_t N>
  constexpr DtypeSpan(const aclDataType (&a)[N]) : p_(a), n_(N) {}  // NOLINT: implicit
  const aclDataType* begin() const { return p_; }
  const aclDataType* end() const { return p_ + n_; }
  size_t size() const { return n_; }
  bool Contains(aclDataType t) const {
    for (aclDataType a : *this) {
      if (a == t) return true;
    }
    return false;
  }

 private:
  const aclDataType* p_;
  size_t n_;
};

inline bool IsHalfOrFloat(aclDataType t) { return DtypeSpan(kFloatDtypes).Contains(t); }

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float Bf16ToFloat(uint16_t h) { return BitsToFloat(static_cast<uint32_t>(h) << 16); }

inline uint16_t FloatToBf16(float f) {
  uint32_t u = FloatToBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float Fp16ToFloat(uint16_t h);
uint16_t FloatToFp16(float f);

// double -> float rounding to odd: inexact results get an odd last bit. Rounding that float to
// a format at least two bits narrower (FLOAT16, BF16) then equals rounding the double directly
// (no double-rounding error).
inline float DoubleToFloatRoundToOdd(double v) {
  float f = static_cast<float>(v);  // nearest, ties to even
  if (static_cast<double>(f) == v || std::isnan(v) || std::isinf(f)) return f;
  uint32_t u = FloatToBits(f);
  if ((u & 1u) == 0) {
    // f is even: step to the odd neighbour on v's side (|f| grows with u within a sign).
    const bool away = std::fabs(static_cast<double>(f)) < std::fabs(v);
    u = away ? u + 1 : u - 1;
  }
  return BitsToFloat(u);
}

// Reads element `i` (in elements from p) of a floating tensor as double.
double LoadAsDouble(aclDataType t, const void* p, int64_t i);
// Rounds `v` once to dtype `t` (round to nearest even) and stores it at element `i`.
void StoreFromDouble(aclDataType t, void* p, int64_t i, double v);
// Reads an integer element (INT32/INT64) as int64.
int64_t LoadAsInt64(aclDataType t, const void* p, int64_t i);

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_CORE_DTYPE_H_
