// The kernels' exp (ExpF in simd/convert-inl.h) against std::exp in double (f32 lanes) and
// expl in long double (f64 lanes), under every Highway target: ce_grad with a = 1, b = 0 writes
// exactly the exp of its input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "device_tensor.h"
#include "kernels/row_kernels.h"
#include "reference.h"

using namespace testing_support;

namespace {

std::vector<float> ExpThroughKernel(const std::vector<float>& x) {
  const aclnn_cpu::RowKernels k = aclnn_cpu::GetRowKernels(ACL_FLOAT);
  std::vector<float> out(x.size());
  k.ce_grad(x.data(), out.data(), x.size(), 0.0f, 1.0f, 0.0f, nullptr, false);
  return out;
}

std::vector<double> ExpThroughKernelF64(const std::vector<double>& x) {
  const aclnn_cpu::RowKernels k = aclnn_cpu::GetRowKernels(ACL_DOUBLE);
  std::vector<double> out(x.size());
  k.ce_grad(x.data(), out.data(), x.size(), 0.0, 1.0, 0.0, nullptr, false);
  return out;
}

}  // namespace

TEST(KernelExp, WithinTwoUlpOverTheWholeRange) {
  std::vector<float> x;
  for (double v = -104.0; v <= 88.7; v += 0.0007) x.push_back(static_cast<float>(v));
  // Around the fast path's edges, and a vector mixing fast and edge lanes.
  for (float e : {-86.5f, 88.0f, -87.0f, -103.9f, 88.72f, 0.0f, -0.0f}) {
    for (int k = -20; k <= 20; ++k) x.push_back(std::nextafter(e, 0.0f) + 1e-6f * k);
  }
  ForEachTarget([&](const std::string& target) {
    const std::vector<float> y = ExpThroughKernel(x);
    double worst = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      const double err = std::fabs(y[i] - want) / ref::Ulp(ACL_FLOAT, want);
      worst = std::max(worst, err);
      ASSERT_LE(err, 2.0) << target << ": exp(" << x[i] << ") = " << y[i] << ", want " << want;
    }
    std::printf("kernel exp on %s: worst %.3f ulp over %zu inputs\n", target.c_str(), worst,
                x.size());
  });
}

TEST(KernelExp, IeeeEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-inf, inf, std::nanf(""), 89.0f, 1000.0f, -105.0f, -1e30f, 0.0f};
  ForEachTarget([&](const std::string& target) {
    const std::vector<float> y = ExpThroughKernel(x);
    EXPECT_EQ(y[0], 0.0f) << target;
    EXPECT_EQ(y[1], inf) << target;
    EXPECT_TRUE(std::isnan(y[2])) << target;
    EXPECT_EQ(y[3], inf) << target;
    EXPECT_EQ(y[4], inf) << target;
    EXPECT_EQ(y[5], 0.0f) << target;
    EXPECT_EQ(y[6], 0.0f) << target;
    EXPECT_EQ(y[7], 1.0f) << target;
  });
}

// f64 lanes: the fast path (ExpFastF64, [-707, 709]) and, for a vector with a lane outside it,
// Highway's Exp with the edges; subnormal results included (their ulp is the smallest one).
TEST(KernelExp, F64WithinOneUlpOverTheWholeRange) {
  std::vector<double> x;
  for (double v = -745.0; v <= 709.78; v += 0.00731) x.push_back(v);
  for (double v = -1.0; v <= 1.0; v += 0.0001) x.push_back(v);  // r near 0 and +-ln2/2
  for (double e : {-707.0, 709.0, -708.4, -745.1, 709.78, 0.0, 1e-300, -1e-300}) {
    for (int k = -20; k <= 20; ++k) x.push_back(e + 1e-9 * k);
  }
  ForEachTarget([&](const std::string& target) {
    const std::vector<double> y = ExpThroughKernelF64(x);
    double worst = 0.0, worst_normal = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double want = std::exp(static_cast<long double>(x[i]));
      const double err = static_cast<double>(std::fabs(static_cast<long double>(y[i]) - want)) /
                         ref::Ulp(ACL_DOUBLE, static_cast<double>(want));
      worst = std::max(worst, err);
      if (x[i] >= -707.0) worst_normal = std::max(worst_normal, err);
      ASSERT_LE(err, 1.0) << target << ": exp(" << x[i] << ") = " << y[i];
    }
    std::printf("kernel f64 exp on %s: worst %.3f ulp over %zu inputs, %.3f from -707 up\n",
                target.c_str(), worst, x.size(), worst_normal);
  });
}

TEST(KernelExp, F64IeeeEdges) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {-inf,   inf,    std::nan(""), 710.0,  1e300,
                                 -746.0, -1e300, 0.0,          709.78, -745.0};
  ForEachTarget([&](const std::string& target) {
    const std::vector<double> y = ExpThroughKernelF64(x);
    EXPECT_EQ(y[0], 0.0) << target;
    EXPECT_EQ(y[1], inf) << target;
    EXPECT_TRUE(std::isnan(y[2])) << target;
    EXPECT_EQ(y[3], inf) << target;
    EXPECT_EQ(y[4], inf) << target;
    EXPECT_EQ(y[5], 0.0) << target;
    EXPECT_EQ(y[6], 0.0) << target;
    EXPECT_EQ(y[7], 1.0) << target;
    EXPECT_TRUE(std::isfinite(y[8]) && y[8] > 1e308) << target;
    EXPECT_EQ(y[9], std::numeric_limits<double>::denorm_min()) << target;
  });
}
