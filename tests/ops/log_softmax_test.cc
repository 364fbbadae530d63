// aclnnLogSoftmax through the public API.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_logsoftmax.h"
#include "check.h"
#include "device_tensor.h"
#include "reference.h"

using namespace testing_support;

namespace {

OpResult RunLsm(const DeviceTensor& x, int64_t dim, const DeviceTensor& out) {
  return RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxGetWorkspaceSize(x.get(), dim, out.get(), ws, ex);
      },
      aclnnLogSoftmax);
}

::testing::AssertionResult Check(aclDataType in, aclDataType outdt, std::vector<int64_t> shape,
                                 int64_t dim, Layout layout, double scale, uint64_t seed,
                                 ErrorStats* stats = nullptr) {
  std::mt19937_64 rng(seed);
  DeviceTensor x(in, shape, layout), out(outdt, shape, layout);
  const std::vector<double> xv = x.Rounded(Normal(rng, x.numel(), 0.0, scale));
  x.Set(xv);
  const OpResult r = RunLsm(x, dim, out);
  if (r.status != 0) return ::testing::AssertionFailure() << r.status << ": " << r.message;
  if (!out.CanariesOutsideViewIntact()) return ::testing::AssertionFailure() << "wrote outside";
  // CANN casts self to out's dtype first, then computes in that dtype (f32 for halves).
  const aclDataType compute = outdt == ACL_DOUBLE ? ACL_DOUBLE : outdt;
  std::vector<double> xc(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) xc[i] = ref::RoundTo(compute, xv[i]);
  const int r_ = shape.empty() ? 1 : static_cast<int>(shape.size());
  const int d = static_cast<int>(dim < 0 ? dim + r_ : dim);
  std::vector<double> l;
  const std::vector<double> expect = ref::LogSoftmax(xc, shape, d, &l);
  const std::vector<double> bound = tolerance::LogSoftmaxBound(expect, l, outdt);
  return CheckClose(out.Get(), expect, bound, outdt == ACL_DOUBLE ? ACL_DOUBLE : outdt, outdt,
                    stats);
}

constexpr aclDataType kAll[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};

}  // namespace

TEST(LogSoftmaxAccuracy, DtypesLengthsLayoutsTargets) {
  const int64_t lengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1000, 4097};
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType in : kAll) {
      for (aclDataType out : kAll) {
        for (int64_t len : lengths) {
          for (Layout layout : kAllLayouts) {
            ASSERT_TRUE(Check(in, out, {3, len}, -1, layout, 3.0, static_cast<uint64_t>(len)))
                << in << "->" << out << " len " << len << " " << LayoutName(layout);
          }
          ASSERT_TRUE(Check(in, out, {len, 2}, 0, Layout::kContiguous, 3.0, 7));
        }
      }
    }
  });
}

TEST(LogSoftmaxAccuracy, RanksAndDims) {
  for (int rank = 0; rank <= 8; ++rank) {
    std::vector<int64_t> shape;
    for (int i = 0; i < rank; ++i) shape.push_back(rank <= 4 ? 3 + i : 2 + (i % 2));
    const int r = rank == 0 ? 1 : rank;
    for (int64_t dim = -r; dim < r; ++dim) {
      for (aclDataType in : {ACL_FLOAT, ACL_BF16}) {
        for (Layout layout : kAllLayouts) {
          ASSERT_TRUE(Check(in, in, shape, dim, layout, 2.0, static_cast<uint64_t>(rank)))
              << "rank " << rank << " dim " << dim;
        }
      }
    }
  }
}

// Numerically stable: inputs of +-1e4 give finite results (the max is subtracted).
TEST(LogSoftmaxAccuracy, LargeInputsStayFinite) {
  for (aclDataType in : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
    DeviceTensor x(in, {2, 4}), out(in, {2, 4});
    x.Set({1e4, -1e4, 9000, 0, -1e4, -1e4, -9998, -1e4});
    ASSERT_EQ(RunLsm(x, -1, out).status, 0);
    for (double v : out.Get()) {
      EXPECT_TRUE(std::isfinite(v));
    }
    EXPECT_NEAR(out.Get()[0], 0.0, 1e-3);
    ASSERT_TRUE(Check(in, in, {4, 100}, -1, Layout::kContiguous, 1e4, 3));
  }
}

TEST(LogSoftmaxAccuracy, WorstUlpPerDtype) {
  for (aclDataType in : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
    ErrorStats st;
    for (int64_t len : {17, 1000, 4097}) {
      ASSERT_TRUE(Check(in, in, {8, len}, -1, Layout::kContiguous, 3.0, 11, &st));
    }
    std::printf("LogSoftmax dtype %d: worst error %.3f ulp (%.3f ulp well-conditioned)\n", in,
                st.max_ulp, st.max_ulp_conditioned);
    if (in != ACL_FLOAT) {
      EXPECT_LE(st.max_ulp_conditioned, 1.0);
    }
  }
}

TEST(LogSoftmaxSpecials, InfAndNaN) {
  DeviceTensor x(ACL_FLOAT, {3, 3}), out(ACL_FLOAT, {3, 3});
  x.Set({-HUGE_VAL, 0, 0, std::nan(""), 1, 2, HUGE_VAL, 1, 2});
  ASSERT_EQ(RunLsm(x, -1, out).status, 0);
  const std::vector<double> o = out.Get();
  EXPECT_EQ(o[0], -HUGE_VAL);
  EXPECT_NEAR(o[1], -std::log(2.0), 1e-6);
  for (int i = 3; i < 9; ++i) {
    EXPECT_TRUE(std::isnan(o[i])) << i;  // NaN in a row, or +inf (inf - inf), poisons the row
  }
}

TEST(LogSoftmaxExample, DocumentedValues) {
  DeviceTensor x(ACL_FLOAT, {3, 3}), out(ACL_FLOAT, {3, 3});
  x.Set({1, 2, 3, 4, 5, 6, 7, 8, 9});
  ASSERT_EQ(RunLsm(x, 1, out).status, 0);
  const double row[] = {-2.407606, -1.407606, -0.407606};
  const std::vector<double> o = out.Get();
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(o[i], row[i % 3], 1e-6) << i;
}

struct LsmValidationCase {
  const char* name;
  aclDataType self, out;
  std::vector<int64_t> self_shape, out_shape;
  int64_t dim;
  int null_arg;  // 1 self, 2 out, 3 workspaceSize, 4 executor
  int expect;
  const char* message;
};

class LogSoftmaxValidation : public ::testing::TestWithParam<LsmValidationCase> {};

TEST_P(LogSoftmaxValidation, CodeMessageAndCanaries) {
  const LsmValidationCase& c = GetParam();
  DeviceTensor x(c.self, c.self_shape), out(c.out, c.out_shape);
  x.Set(std::vector<double>(static_cast<size_t>(x.numel()), 0.5));
  out.FillCanaries();
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = aclnnLogSoftmaxGetWorkspaceSize(
      c.null_arg == 1 ? nullptr : x.get(), c.dim, c.null_arg == 2 ? nullptr : out.get(),
      c.null_arg == 3 ? nullptr : &ws, c.null_arg == 4 ? nullptr : &ex);
  EXPECT_EQ(st, c.expect);
  const std::string msg = TakeMessage();
  if (c.expect != 0) {
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    EXPECT_NE(msg.find("aclnnLogSoftmax"), std::string::npos) << msg;
    EXPECT_TRUE(out.Untouched());
    return;
  }
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  }
  EXPECT_EQ(aclnnLogSoftmax(w, ws, ex, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  if (w) aclrtFree(w);
}

const LsmValidationCase kLsmCases[] = {
    {"null_self", ACL_FLOAT, ACL_FLOAT, {2, 3}, {2, 3}, 1, 1, 161001, "self is null"},
    {"null_out", ACL_FLOAT, ACL_FLOAT, {2, 3}, {2, 3}, 1, 2, 161001, "out is null"},
    {"null_workspaceSize", ACL_FLOAT, ACL_FLOAT, {2, 3}, {2, 3}, 1, 3, 161001, "workspaceSize"},
    {"null_executor", ACL_FLOAT, ACL_FLOAT, {2, 3}, {2, 3}, 1, 4, 161001, "executor is null"},
    {"dim_before_dtype",
     ACL_INT32,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     2,
     0,
     161002,
     "dim 2 is out of range"},
    {"self_int", ACL_INT32, ACL_FLOAT, {2, 3}, {2, 3}, 1, 0, 161002, "self has dtype INT32"},
    {"out_int", ACL_FLOAT, ACL_INT64, {2, 3}, {2, 3}, 1, 0, 161002, "out has dtype INT64"},
    {"nine_dims",
     ACL_FLOAT,
     ACL_FLOAT,
     {1, 1, 1, 1, 1, 1, 1, 1, 2},
     {1, 1, 1, 1, 1, 1, 1, 1, 2},
     0,
     0,
     161002,
     "9 dimensions"},
    {"shape_mismatch", ACL_FLOAT, ACL_FLOAT, {2, 3}, {3, 2}, 1, 0, 161002, "out has shape [3, 2]"},
    {"empty_after_checks", ACL_FLOAT, ACL_FLOAT, {0, 3}, {0, 3}, 1, 0, 0, ""},
    {"empty_still_checks_dtype", ACL_INT8, ACL_FLOAT, {0, 3}, {0, 3}, 1, 0, 161002, "INT8"},
    {"double_both", ACL_DOUBLE, ACL_DOUBLE, {2, 3}, {2, 3}, -1, 0, 0, ""},
    {"zero_d", ACL_BF16, ACL_FLOAT, {}, {}, 0, 0, 0, ""},
};

INSTANTIATE_TEST_SUITE_P(Rules, LogSoftmaxValidation, ::testing::ValuesIn(kLsmCases),
                         [](const ::testing::TestParamInfo<LsmValidationCase>& i) {
                           return std::string(i.param.name);
                         });
