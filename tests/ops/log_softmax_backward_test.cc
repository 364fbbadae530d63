// aclnnLogSoftmaxBackward through the public API: accuracy against the double reference under
// every Highway target, the validation table with canaries, IEEE specials, the spec example.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "check.h"
#include "device_tensor.h"
#include "reference.h"

using namespace testing_support;

namespace {

OpResult RunLsmBwd(const DeviceTensor& g, const DeviceTensor& y, int64_t dim,
                   const DeviceTensor& out) {
  return RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnLogSoftmaxBackwardGetWorkspaceSize(g.get(), y.get(), dim, out.get(), ws, ex);
      },
      aclnnLogSoftmaxBackward);
}

int WrapDim(int64_t dim, size_t rank) {
  const int64_t r = rank == 0 ? 1 : static_cast<int64_t>(rank);
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

// Reference, bounds and comparison for one problem; inputs drawn by `draw`.
struct Problem {
  aclDataType dtype = ACL_FLOAT, out_dtype = ACL_FLOAT;
  std::vector<int64_t> shape;
  int64_t dim = -1;
  Layout layout = Layout::kContiguous;
  double y_lo = -10.0, y_hi = 0.0, g_scale = 1.0;
  uint64_t seed = 1;
};

::testing::AssertionResult Check(const Problem& p, ErrorStats* stats = nullptr) {
  std::mt19937_64 rng(p.seed);
  DeviceTensor g(p.dtype, p.shape, p.layout), y(p.dtype, p.shape, p.layout),
      out(p.out_dtype, p.shape, p.layout);
  const int64_t n = g.numel();
  // Signs against cancellation: gradients of both signs, mostly positive.
  const std::vector<double> gv = g.Rounded(Normal(rng, n, 0.3 * p.g_scale, p.g_scale));
  const std::vector<double> yv = y.Rounded(Uniform(rng, n, p.y_lo, p.y_hi));
  g.Set(gv);
  y.Set(yv);
  const OpResult r = RunLsmBwd(g, y, p.dim, out);
  if (r.status != 0) {
    return ::testing::AssertionFailure() << "status " << r.status << ": " << r.message;
  }
  if (!out.CanariesOutsideViewIntact()) {
    return ::testing::AssertionFailure() << "wrote outside the view of out";
  }
  const int dim = WrapDim(p.dim, p.shape.size());
  const std::vector<double> expect = ref::LogSoftmaxBackward(gv, yv, p.shape, dim);
  const std::vector<double> bound =
      tolerance::LogSoftmaxBackwardBound(gv, yv, p.shape, dim, p.dtype);
  ErrorStats local;
  auto res = CheckClose(out.Get(), expect, bound, p.dtype, p.out_dtype, stats ? stats : &local);
  if (!res) return res;
  const ErrorStats& st = stats ? *stats : local;
  if (st.nonzero * 2 < st.count) return ::testing::AssertionFailure() << "output mostly zero";
  return ::testing::AssertionSuccess();
}

std::string Name(const Problem& p) {
  std::string s = std::string("dtype ") + std::to_string(p.dtype) + " out " +
                  std::to_string(p.out_dtype) + " shape [";
  for (size_t i = 0; i < p.shape.size(); ++i) s += (i ? "," : "") + std::to_string(p.shape[i]);
  return s + "] dim " + std::to_string(p.dim) + " " + LayoutName(p.layout);
}

constexpr aclDataType kInputs[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
constexpr aclDataType kOutputs[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};

}  // namespace

// Slice lengths around vector-tile edges, last dim and first dim, every dtype pair and layout.
TEST(LogSoftmaxBackwardAccuracy, SliceLengthsDtypesLayouts) {
  const int64_t lengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1000, 4097};
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType in : kInputs) {
      for (aclDataType out : kOutputs) {
        for (int64_t len : lengths) {
          for (Layout layout : kAllLayouts) {
            for (int64_t dim : {-1, 0}) {
              Problem p;
              p.dtype = in;
              p.out_dtype = out;
              p.shape = dim == -1 ? std::vector<int64_t>{3, len} : std::vector<int64_t>{len, 2};
              p.dim = dim;
              p.layout = layout;
              p.seed = static_cast<uint64_t>(len * 131 + in * 7 + out);
              ASSERT_TRUE(Check(p)) << Name(p);
            }
          }
        }
      }
    }
  });
}

// Ranks 0..8, every dim (positive and negative), every layout.
TEST(LogSoftmaxBackwardAccuracy, RanksAndDims) {
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (int rank = 0; rank <= 8; ++rank) {
      std::vector<int64_t> shape;
      for (int i = 0; i < rank; ++i) shape.push_back(rank <= 4 ? 3 + i : 2 + (i % 2));
      const int r = rank == 0 ? 1 : rank;
      for (int64_t dim = -r; dim < r; ++dim) {
        for (aclDataType in : kInputs) {
          for (Layout layout : kAllLayouts) {
            Problem p;
            p.dtype = in;
            p.out_dtype = (rank % 2) ? ACL_FLOAT : in;
            p.shape = shape;
            p.dim = dim;
            p.layout = layout;
            p.seed = static_cast<uint64_t>(rank * 1000 + (dim + 8) * 10 + in);
            ASSERT_TRUE(Check(p)) << Name(p);
          }
        }
      }
    }
  });
}

// Outputs of log-softmax far outside [-10, 0]: exp underflows to subnormals/zero and grows to
// 1e13 (past fp16's range, where results overflow to inf exactly as the rounded reference).
TEST(LogSoftmaxBackwardAccuracy, WideExponentRange) {
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType in : kInputs) {
      for (int64_t len : {5, 64, 1031}) {
        Problem p;
        p.dtype = in;
        p.out_dtype = in;
        p.shape = {4, len};
        p.y_lo = -110.0;
        p.y_hi = 30.0;
        p.g_scale = 100.0;
        p.seed = static_cast<uint64_t>(len + in);
        ASSERT_TRUE(Check(p)) << Name(p);
      }
    }
  });
}

TEST(LogSoftmaxBackwardAccuracy, WorstUlpPerDtype) {
  for (aclDataType in : kInputs) {
    ErrorStats st;
    for (int64_t len : {17, 257, 4097}) {
      Problem p;
      p.dtype = in;
      p.out_dtype = in;
      p.shape = {16, len};
      p.seed = static_cast<uint64_t>(len);
      ASSERT_TRUE(Check(p, &st)) << Name(p);
    }
    std::printf("LogSoftmaxBackward dtype %d: worst error %.3f ulp over %lld elements\n", in,
                st.max_ulp, static_cast<long long>(st.count));
    // 16-bit outputs are computed in f32 and rounded once; FLOAT and DOUBLE compute in their own
    // precision, where the difference g - exp(y) s may cancel (the bound above holds them).
    if (in == ACL_FLOAT16 || in == ACL_BF16) {
      EXPECT_LE(st.max_ulp, 1.0);
    }
  }
}

// inf and NaN propagate as IEEE arithmetic says; exp overflow gives inf.
TEST(LogSoftmaxBackwardSpecials, InfAndNaNPropagate) {
  for (aclDataType in : kInputs) {
    DeviceTensor g(in, {1, 4}), y(in, {1, 4}), out(ACL_FLOAT, {1, 4});
    g.Set({1.0, 2.0, 3.0, 4.0});
    // y: -inf gives exp 0; 100 overflows exp (for fp16 input it is representable too).
    y.Set({-HUGE_VAL, 100.0, -1.0, std::nan("")});
    ASSERT_EQ(RunLsmBwd(g, y, -1, out).status, 0);
    const std::vector<double> o = out.Get();
    EXPECT_EQ(o[0], 1.0);        // 1 - 0 * 10
    EXPECT_EQ(o[1], -HUGE_VAL);  // 2 - inf * 10
    EXPECT_NEAR(o[2], 3.0 - std::exp(-1.0) * 10.0, 0.05);
    EXPECT_TRUE(std::isnan(o[3]));
    g.Set({1.0, std::nan(""), 0.0, 0.0});
    y.Set({-1.0, -1.0, -1.0, -1.0});
    ASSERT_EQ(RunLsmBwd(g, y, -1, out).status, 0);
    for (double v : out.Get()) {
      EXPECT_TRUE(std::isnan(v));  // the sum is NaN
    }
    g.Set({HUGE_VAL, 1.0, 0.0, 0.0});
    ASSERT_EQ(RunLsmBwd(g, y, -1, out).status, 0);
    for (double v : out.Get()) {
      EXPECT_FALSE(std::isfinite(v));
    }
  }
}

// The documented example (spec/log_softmax_backward.md).
TEST(LogSoftmaxBackwardExample, EightValues) {
  DeviceTensor g(ACL_FLOAT, {4, 2}), y(ACL_FLOAT, {4, 2}), out(ACL_FLOAT, {4, 2});
  g.Set({0, 1, 2, 3, 4, 5, 6, 7});
  y.Set({1, 1, 1, 2, 2, 2, 3, 3});
  ASSERT_EQ(RunLsmBwd(g, y, 0, out).status, 0);
  const double expect[] = {-32.619382, -42.492509,  -30.619382,  -115.224898,
                           -84.668673, -113.224898, -235.026443, -314.368591};
  const std::vector<double> o = out.Get();
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(o[i], expect[i], 2e-6 * std::fabs(expect[i])) << i;
}

// ---------------------------------------------------------------------------------------------
// Validation: each rule with its code, a message substring, and canaries proving nothing was
// written.

struct ValidationCase {
  const char* name;
  aclDataType g_dtype, y_dtype, out_dtype;
  std::vector<int64_t> g_shape, y_shape, out_shape;
  int64_t dim;
  int null_arg;  // 0 none, 1 gradOutput, 2 output, 3 out, 4 workspaceSize, 5 executor
  int expect;
  const char* message;
};

class LogSoftmaxBackwardValidation : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(LogSoftmaxBackwardValidation, CodeMessageAndCanaries) {
  const ValidationCase& c = GetParam();
  DeviceTensor g(c.g_dtype, c.g_shape), y(c.y_dtype, c.y_shape), out(c.out_dtype, c.out_shape);
  g.Set(std::vector<double>(static_cast<size_t>(g.numel()), 0.5));
  y.Set(std::vector<double>(static_cast<size_t>(y.numel()), -1.0));
  out.FillCanaries();
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = aclnnLogSoftmaxBackwardGetWorkspaceSize(
      c.null_arg == 1 ? nullptr : g.get(), c.null_arg == 2 ? nullptr : y.get(), c.dim,
      c.null_arg == 3 ? nullptr : out.get(), c.null_arg == 4 ? nullptr : &ws,
      c.null_arg == 5 ? nullptr : &ex);
  EXPECT_EQ(st, c.expect);
  const std::string msg = TakeMessage();
  if (c.expect != 0) {
    EXPECT_NE(msg.find(c.message), std::string::npos) << "message: " << msg;
    EXPECT_NE(msg.find("aclnnLogSoftmaxBackward"), std::string::npos) << msg;
    EXPECT_TRUE(out.Untouched());
  } else {
    ASSERT_NE(ex, nullptr);
    void* w = nullptr;
    if (ws) {
      ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    EXPECT_EQ(aclnnLogSoftmaxBackward(w, ws, ex, nullptr), 0);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
    if (w) aclrtFree(w);
  }
}

const ValidationCase kValidationCases[] = {
    {"null_gradOutput",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     1,
     161001,
     "gradOutput is null"},
    {"null_output",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     2,
     161001,
     "output is null"},
    {"null_out",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     3,
     161001,
     "out is null"},
    {"null_workspaceSize",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     4,
     161001,
     "workspaceSize is null"},
    {"null_executor",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     5,
     161001,
     "executor is null"},
    {"empty_before_checks", ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, {2, 0}, {2, 0}, {2, 3}, 1, 0, 0, ""},
    {"empty_any_dtype", ACL_INT32, ACL_FLOAT, ACL_INT8, {0}, {0}, {5}, 3, 0, 0, ""},
    // DOUBLE inputs: aclnn-cpu's extension under the default profile (an NPU profile refuses
    // them as CANN does: soc_profiles_test).
    {"f64_input", ACL_DOUBLE, ACL_DOUBLE, ACL_FLOAT, {2, 3}, {2, 3}, {2, 3}, 1, 0, 0, ""},
    {"int_input",
     ACL_INT32,
     ACL_INT32,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     0,
     161002,
     "dtype INT32"},
    {"mismatched_inputs",
     ACL_FLOAT,
     ACL_FLOAT16,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     0,
     161002,
     "they must be equal"},
    {"f64_out_ok", ACL_FLOAT, ACL_FLOAT, ACL_DOUBLE, {2, 3}, {2, 3}, {2, 3}, 1, 0, 0, ""},
    {"int_out",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_INT32,
     {2, 3},
     {2, 3},
     {2, 3},
     1,
     0,
     161002,
     "out has dtype INT32"},
    {"nine_dims",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {1, 1, 1, 1, 1, 1, 1, 1, 2},
     {1, 1, 1, 1, 1, 1, 1, 1, 2},
     {1, 1, 1, 1, 1, 1, 1, 1, 2},
     0,
     0,
     161002,
     "9 dimensions"},
    {"eight_dims_dim7_ok",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {1, 2, 1, 2, 1, 2, 1, 2},
     {1, 2, 1, 2, 1, 2, 1, 2},
     {1, 2, 1, 2, 1, 2, 1, 2},
     7,
     0,
     0,
     ""},
    {"eight_dims_dim8",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {1, 2, 1, 2, 1, 2, 1, 2},
     {1, 2, 1, 2, 1, 2, 1, 2},
     {1, 2, 1, 2, 1, 2, 1, 2},
     8,
     0,
     161002,
     "dim 8 is out of range"},
    {"shape_g_vs_y",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {3, 2},
     {2, 3},
     1,
     0,
     161002,
     "output has shape [3, 2]"},
    {"shape_g_vs_out",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 4},
     1,
     0,
     161002,
     "out has shape [2, 4]"},
    {"dim_too_small",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {2, 3},
     {2, 3},
     {2, 3},
     -3,
     0,
     161002,
     "expected -2..1"},
    {"dim_negative_ok", ACL_FLOAT16, ACL_FLOAT16, ACL_BF16, {2, 3}, {2, 3}, {2, 3}, -2, 0, 0, ""},
    {"zero_d_dim0_ok", ACL_BF16, ACL_BF16, ACL_FLOAT, {}, {}, {}, 0, 0, 0, ""},
    {"zero_d_dim_minus1_ok", ACL_FLOAT, ACL_FLOAT, ACL_FLOAT, {}, {}, {}, -1, 0, 0, ""},
    {"zero_d_dim1",
     ACL_FLOAT,
     ACL_FLOAT,
     ACL_FLOAT,
     {},
     {},
     {},
     1,
     0,
     161002,
     "for a 0-d tensor (expected -1..0)"},
};

INSTANTIATE_TEST_SUITE_P(Rules, LogSoftmaxBackwardValidation, ::testing::ValuesIn(kValidationCases),
                         [](const ::testing::TestParamInfo<ValidationCase>& i) {
                           return std::string(i.param.name);
                         });

// Formats are labels only: NHWC/NCHW tensors are treated as ND.
TEST(LogSoftmaxBackwardValidationExtra, FormatsAreIgnored) {
  std::vector<float> g(16, 1.0f), y(16, -2.0f), o(16, 0.0f);
  const int64_t shape[] = {1, 2, 2, 4}, strides[] = {16, 8, 4, 1};
  for (aclFormat f : {ACL_FORMAT_NHWC, ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0}) {
    aclTensor* tg = aclCreateTensor(shape, 4, ACL_FLOAT, strides, 0, f, shape, 4, g.data());
    aclTensor* ty = aclCreateTensor(shape, 4, ACL_FLOAT, strides, 0, f, shape, 4, y.data());
    aclTensor* to = aclCreateTensor(shape, 4, ACL_FLOAT, strides, 0, f, shape, 4, o.data());
    auto r = RunOp(
        [&](uint64_t* ws, aclOpExecutor** ex) {
          return aclnnLogSoftmaxBackwardGetWorkspaceSize(tg, ty, 3, to, ws, ex);
        },
        aclnnLogSoftmaxBackward);
    EXPECT_EQ(r.status, 0) << r.message;
    EXPECT_NEAR(o[0], 1.0 - std::exp(-2.0) * 4.0, 1e-6);
    aclDestroyTensor(tg);
    aclDestroyTensor(ty);
    aclDestroyTensor(to);
  }
}

// A storage that reaches past its aclrtMalloc block is rejected, naming tensor and sizes.
TEST(LogSoftmaxBackwardValidationExtra, StoragePastBlock) {
  void* small = nullptr;
  ASSERT_EQ(aclrtMalloc(&small, 16 * sizeof(float), ACL_MEM_MALLOC_NORMAL_ONLY), 0);
  DeviceTensor y(ACL_FLOAT, {4, 8}), out(ACL_FLOAT, {4, 8});
  const int64_t shape[] = {4, 8}, strides[] = {8, 1};
  aclTensor* g = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, small);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnLogSoftmaxBackwardGetWorkspaceSize(g, y.get(), -1, out.get(), &ws, &ex), 161002);
  const std::string msg = TakeMessage();
  EXPECT_NE(msg.find("gradOutput has a storage of 128 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only 64 bytes"), std::string::npos) << msg;
  EXPECT_TRUE(out.Untouched());
  aclDestroyTensor(g);
  aclrtFree(small);
}

// A strided (non-contiguous) input view is accepted (CANN's unit-test case) and computed.
TEST(LogSoftmaxBackwardValidationExtra, StridedInputView) {
  Problem p;
  p.shape = {5, 6};
  p.layout = Layout::kPadded;
  EXPECT_TRUE(Check(p));
}

// Rows longer than the 16384-element sum chunk, fewer rows than threads (the split path).
TEST(LogSoftmaxBackwardAccuracy, LongRowsSplitAcrossThreads) {
  for (aclDataType in : kInputs) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{1, 70000}, {3, 40000}}) {
      Problem p;
      p.dtype = in;
      p.out_dtype = in;
      p.shape = shape;
      p.seed = 9;
      ASSERT_TRUE(Check(p)) << Name(p);
    }
  }
}

// Regression (found by fuzz/phase1_fuzz): a non-empty tensor with a null data address was
// accepted by phase 1 (and planned with arithmetic on a null pointer).
TEST(LogSoftmaxBackwardValidationExtra, NullDataAddress) {
  DeviceTensor y(ACL_FLOAT, {2, 3}), out(ACL_FLOAT, {2, 3});
  const int64_t shape[] = {2, 3}, strides[] = {3, 1};
  aclTensor* g = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, nullptr);
  ASSERT_NE(g, nullptr);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnLogSoftmaxBackwardGetWorkspaceSize(g, y.get(), -1, out.get(), &ws, &ex), 161001);
  EXPECT_NE(TakeMessage().find("tensor gradOutput has a null data address"), std::string::npos);
  EXPECT_TRUE(out.Untouched());
  aclDestroyTensor(g);
}
