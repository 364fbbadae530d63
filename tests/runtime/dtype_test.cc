// Scalar conversions of core/dtype.h against the reference's independent rounding.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference.h"

using aclnn_cpu::StoreFromDouble;

namespace {

double StoreAndLoad(aclDataType t, double v) {
  uint16_t h = 0;
  StoreFromDouble(t, &h, 0, v);
  return aclnn_cpu::LoadAsDouble(t, &h, 0);
}

}  // namespace

// Regression: double -> float -> bf16 rounded twice; 0.049438476606011597 lies just above a
// bf16 midpoint, the float step landed on the midpoint and ties-to-even went down.
TEST(Dtype, StoreFromDoubleRoundsOnce) {
  EXPECT_EQ(StoreAndLoad(ACL_BF16, 0.049438476606011597), 0.049560546875);
  EXPECT_EQ(StoreAndLoad(ACL_BF16, -0.049438476606011597), -0.049560546875);
  EXPECT_EQ(StoreAndLoad(ACL_BF16, 0.0494384765625), 0.04931640625);  // the exact tie: even
}

TEST(Dtype, HalfConversionsMatchReferenceRounding) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(-30, 17);
  for (int i = 0; i < 200000; ++i) {
    const double v = std::ldexp(mant(rng), ex(rng)) * ((i & 1) ? -1.0 : 1.0);
    for (aclDataType t : {ACL_FLOAT16, ACL_BF16}) {
      ASSERT_EQ(StoreAndLoad(t, v), ref::RoundTo(t, v)) << t << " " << v;
    }
    // The f32 entry points agree with the reference on f32 inputs.
    const float f = static_cast<float>(v);
    ASSERT_EQ(aclnn_cpu::Fp16ToFloat(aclnn_cpu::FloatToFp16(f)), ref::RoundTo(ACL_FLOAT16, f));
    ASSERT_EQ(aclnn_cpu::Bf16ToFloat(aclnn_cpu::FloatToBf16(f)), ref::RoundTo(ACL_BF16, f));
  }
  EXPECT_TRUE(std::isnan(StoreAndLoad(ACL_BF16, std::nan(""))));
  EXPECT_EQ(StoreAndLoad(ACL_FLOAT16, 65520.0), HUGE_VAL);
  EXPECT_EQ(StoreAndLoad(ACL_FLOAT16, 65519.0), 65504.0);
  EXPECT_EQ(StoreAndLoad(ACL_FLOAT16, 1e-8), std::ldexp(0.0, 0));
  EXPECT_EQ(StoreAndLoad(ACL_FLOAT16, 3e-8), std::ldexp(1.0, -24));
}
