#include "core/dtype.h"

#include <cmath>

namespace aclnn_cpu {

const char* DtypeName(aclDataType t) {
  switch (t) {
    case ACL_DT_UNDEFINED:
      return "UNDEFINED";
    case ACL_FLOAT:
      return "FLOAT";
    case ACL_FLOAT16:
      return "FLOAT16";
    case ACL_INT8:
      return "INT8";
    case ACL_INT32:
      return "INT32";
    case ACL_UINT8:
      return "UINT8";
    case ACL_INT16:
      return "INT16";
    case ACL_UINT16:
      return "UINT16";
    case ACL_UINT32:
      return "UINT32";
    case ACL_INT64:
      return "INT64";
    case ACL_UINT64:
      return "UINT64";
    case ACL_DOUBLE:
      return "DOUBLE";
    case ACL_BOOL:
      return "BOOL";
    case ACL_STRING:
      return "STRING";
    case ACL_COMPLEX64:
      return "COMPLEX64";
    case ACL_COMPLEX128:
      return "COMPLEX128";
    case ACL_BF16:
      return "BF16";
  }
  return "UNKNOWN";
}

float Fp16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return BitsToFloat(sign | 0x7F800000u | (man << 13));  // inf/NaN
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(man), -24);  // zero or subnormal, exact
    return sign ? -v : v;
  }
  return BitsToFloat(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t FloatToFp16(float f) {
  uint32_t u = FloatToBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (a < 0x38800000u) {
    // Subnormal half (or zero): value = m * 2^-24, m = rint(|f| * 2^24); exact in float.
    float m = std::nearbyint(BitsToFloat(a) * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  uint32_t mant = a + 0xFFFu + ((a >> 13) & 1u);  // round to nearest even at bit 13
  return static_cast<uint16_t>(sign | ((mant - 0x38000000u) >> 13));
}

double LoadAsDouble(aclDataType t, const void* p, int64_t i) {
  switch (t) {
    case ACL_FLOAT:
      return static_cast<const float*>(p)[i];
    case ACL_DOUBLE:
      return static_cast<const double*>(p)[i];
    case ACL_FLOAT16:
      return Fp16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case ACL_BF16:
      return Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    default:
      return 0.0;
  }
}

void StoreFromDouble(aclDataType t, void* p, int64_t i, double v) {
  switch (t) {
    case ACL_FLOAT:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case ACL_DOUBLE:
      static_cast<double*>(p)[i] = v;
      break;
    case ACL_FLOAT16:
      static_cast<uint16_t*>(p)[i] = FloatToFp16(DoubleToFloatRoundToOdd(v));
      break;
    case ACL_BF16:
      static_cast<uint16_t*>(p)[i] = FloatToBf16(DoubleToFloatRoundToOdd(v));
      break;
    default:
      break;
  }
}

int64_t LoadAsInt64(aclDataType t, const void* p, int64_t i) {
  return t == ACL_INT32 ? static_cast<int64_t>(static_cast<const int32_t*>(p)[i])
                        : static_cast<const int64_t*>(p)[i];
}

}  // namespace aclnn_cpu
