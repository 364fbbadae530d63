// aclnnCrossEntropyLossGrad through the public API.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "ce_problem.h"
#include "check.h"
#include "device_tensor.h"
#include "reference.h"

using namespace testing_support;

namespace {

struct CeGradTensors {
  std::unique_ptr<DeviceTensor> grad_loss, log_prob, target, weight, grad_zloss, lse, out;
};

OpResult RunCeGrad(const CeConfig& cfg, const CeGradTensors& t, const char* reduction) {
  return RunOp(
      [&](uint64_t* ws, aclOpExecutor** ex) {
        return aclnnCrossEntropyLossGradGetWorkspaceSize(
            t.grad_loss->get(), t.log_prob->get(), t.target->get(),
            t.weight ? t.weight->get() : nullptr, t.grad_zloss ? t.grad_zloss->get() : nullptr,
            t.lse ? t.lse->get() : nullptr, const_cast<char*>(reduction), cfg.ignore_index,
            cfg.label_smoothing, cfg.zloss_scale, t.out->get(), ws, ex);
      },
      aclnnCrossEntropyLossGrad);
}

struct Outcome {
  ::testing::AssertionResult ok = ::testing::AssertionSuccess();
  ErrorStats stats;
};

Outcome CheckCeGrad(const CeConfig& cfg) {
  Outcome res;
  std::mt19937_64 rng(cfg.seed);
  const int64_t n = cfg.n, c = cfg.c;
  CeGradTensors t;
  t.log_prob = std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{n, c}, cfg.layout);
  t.out = std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{n, c}, cfg.layout);
  t.target = std::make_unique<DeviceTensor>(cfg.target_dtype, std::vector<int64_t>{n}, cfg.layout);
  t.grad_loss = std::make_unique<DeviceTensor>(cfg.dtype, cfg.ScalarShape(), cfg.layout);
  const std::vector<double> lp = t.log_prob->Rounded(Uniform(rng, n * c, -10.0, 0.0));
  t.log_prob->Set(lp);
  const std::vector<int64_t> target = RandomTargets(rng, cfg);
  t.target->Set(AsDoubles(target));
  // gradLoss and weights from normal distributions with large means and negative values.
  const std::vector<double> g = t.grad_loss->Rounded(Normal(rng, t.grad_loss->numel(), 5.0, 10.0));
  t.grad_loss->Set(g);
  std::vector<double> w;
  if (cfg.weight) {
    t.weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{c}, cfg.layout);
    w = t.weight->Rounded(Normal(rng, c, 2.0, 3.0));
    t.weight->Set(w);
  }
  std::vector<double> gz, lse;
  if (cfg.grad_zloss) {
    t.grad_zloss = std::make_unique<DeviceTensor>(cfg.dtype, cfg.ScalarShape(), cfg.layout);
    gz = t.grad_zloss->Rounded(Normal(rng, t.grad_zloss->numel(), 1.0, 2.0));
    t.grad_zloss->Set(gz);
  }
  if (cfg.zloss_scale != 0.0) {
    t.lse = std::make_unique<DeviceTensor>(cfg.dtype, std::vector<int64_t>{n}, cfg.layout);
    lse = t.lse->Rounded(Uniform(rng, n, 0.0, 12.0));
    t.lse->Set(lse);
  }
  const OpResult r = RunCeGrad(cfg, t, ReductionString(cfg.reduction));
  if (r.status != 0) {
    res.ok = ::testing::AssertionFailure() << "status " << r.status << ": " << r.message;
    return res;
  }
  if (!t.out->CanariesOutsideViewIntact()) {
    res.ok = ::testing::AssertionFailure() << "wrote outside the view of out";
    return res;
  }
  const ref::CrossEntropyArgs a = RefArgs(cfg, target, w);
  const std::vector<double> expect = ref::CrossEntropyLossGrad(a, lp, g, gz, lse);
  const std::vector<double> bound = tolerance::CrossEntropyLossGradBound(a, lp, g, gz, lse);
  res.ok = CheckClose(t.out->Get(), expect, bound, cfg.dtype, cfg.dtype, &res.stats);
  return res;
}

constexpr aclDataType kDtypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr ref::Reduction kReductions[] = {ref::Reduction::kNone, ref::Reduction::kMean,
                                          ref::Reduction::kSum};

}  // namespace

// Every reduction x weight x label smoothing x z-loss x dtype, with N and C drawn from 1 to a
// few thousand, ignoreIndex negative or inside [0, C), contiguous and strided layouts, INT64
// and INT32 targets; under every Highway target. Prints the worst error per dtype.
TEST(CrossEntropyLossGradAccuracy, RandomisedLikeCannSystemTests) {
  std::map<int, double> worst_ulp, worst_conditioned, worst_used;
  std::mt19937_64 pick(2024);
  const int64_t sizes[] = {1, 2, 7, 16, 33, 100, 257, 1000, 3001};
  int cases = 0;
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType dt : kDtypes) {
      for (ref::Reduction red : kReductions) {
        for (bool weight : {false, true}) {
          for (double ls : {0.0, 0.1, 1.0}) {
            for (int z = 0; z < 3; ++z) {  // off, on, on with gradZloss
              CeConfig cfg;
              cfg.dtype = dt;
              cfg.reduction = red;
              cfg.weight = weight;
              cfg.label_smoothing = ls;
              cfg.zloss_scale = z == 0 ? 0.0 : 1e-4 * static_cast<double>(pick() % 100 + 1);
              cfg.grad_zloss = z == 2;
              cfg.n = sizes[pick() % 9];
              cfg.c = sizes[pick() % 9];
              if (cfg.n * cfg.c > 300000) cfg.c = 300000 / cfg.n;
              cfg.ignore_index = (pick() % 2) ? -100 : static_cast<int64_t>(pick() % cfg.c);
              cfg.layout = kAllLayouts[pick() % 4];
              cfg.target_dtype = (pick() % 2) ? ACL_INT64 : ACL_INT32;
              cfg.scalar_as_1d = pick() % 2;
              cfg.seed = pick();
              Outcome o = CheckCeGrad(cfg);
              ASSERT_TRUE(o.ok) << cfg.Name();
              worst_ulp[dt] = std::max(worst_ulp[dt], o.stats.max_ulp);
              worst_conditioned[dt] = std::max(worst_conditioned[dt], o.stats.max_ulp_conditioned);
              worst_used[dt] = std::max(worst_used[dt], o.stats.max_tolerance_used);
              ++cases;
            }
          }
        }
      }
    }
  });
  for (const auto& kv : worst_ulp) {
    std::printf(
        "CrossEntropyLossGrad dtype %d: worst error %.3f ulp of the output dtype; "
        "%.3f ulp on well-conditioned elements; at most %.0f%% of the tolerance used\n",
        kv.first, kv.second, worst_conditioned[kv.first], 100.0 * worst_used[kv.first]);
  }
  std::printf("CrossEntropyLossGrad: %d randomised cases\n", cases);
  EXPECT_LE(worst_conditioned[ACL_FLOAT16], 1.0);
  EXPECT_LE(worst_conditioned[ACL_BF16], 1.0);
}

// Vector-tile edges in C with every dtype, contiguous rows.
TEST(CrossEntropyLossGradAccuracy, ClassCountsAroundTileEdges) {
  ForEachTarget([&](const std::string& target) {
    SCOPED_TRACE("target " + target);
    for (aclDataType dt : kDtypes) {
      for (int64_t c : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 4097}) {
        CeConfig cfg;
        cfg.dtype = dt;
        cfg.n = 5;
        cfg.c = c;
        cfg.weight = c % 2;
        cfg.label_smoothing = 0.1;
        cfg.seed = static_cast<uint64_t>(c);
        Outcome o = CheckCeGrad(cfg);
        ASSERT_TRUE(o.ok) << cfg.Name();
      }
    }
  });
}

// Rows longer than the 16384-element chunk with fewer rows than threads (the split path).
TEST(CrossEntropyLossGradAccuracy, LongRowsSplitAcrossThreads) {
  for (aclDataType dt : kDtypes) {
    for (int64_t n : {1, 3}) {
      CeConfig cfg;
      cfg.dtype = dt;
      cfg.n = n;
      cfg.c = 50000;
      cfg.weight = true;
      cfg.label_smoothing = 0.1;
      cfg.zloss_scale = 1e-3;
      cfg.seed = static_cast<uint64_t>(n);
      Outcome o = CheckCeGrad(cfg);
      ASSERT_TRUE(o.ok) << cfg.Name();
    }
  }
}

// The documented example (spec/cross_entropy_loss_grad.md).
TEST(CrossEntropyLossGradExample, SixValues) {
  CeConfig cfg;
  cfg.n = 2;
  cfg.c = 3;
  CeGradTensors t;
  t.log_prob = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{2, 3});
  t.out = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{2, 3});
  t.target = std::make_unique<DeviceTensor>(ACL_INT64, std::vector<int64_t>{2});
  t.weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{3});
  t.grad_loss = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{});
  t.log_prob->Set(std::vector<double>(6, -0.2));
  t.target->Set({0, 0});
  t.weight->Set({1, 1, 1});
  t.grad_loss->Set({0.1});
  ASSERT_EQ(RunCeGrad(cfg, t, "mean").status, 0);
  const double expect[] = {-0.0090635, 0.0409365, 0.0409365, -0.0090635, 0.0409365, 0.0409365};
  const std::vector<double> o = t.out->Get();
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(o[i], expect[i], 1e-7) << i;
}

// A bad target fails the work: nothing written, ACL_ERROR_INVALID_PARAM at synchronize, a
// message naming the first bad row and value.
TEST(CrossEntropyLossGradTargets, OutOfRangeFailsAtSynchronize) {
  for (int64_t bad : {3, 4, -1, -101}) {
    for (aclDataType tdt : {ACL_INT64, ACL_INT32}) {
      CeConfig cfg;
      cfg.n = 4;
      cfg.c = 3;
      CeGradTensors t;
      t.log_prob = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{4, 3});
      t.out = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{4, 3});
      t.target = std::make_unique<DeviceTensor>(tdt, std::vector<int64_t>{4});
      t.weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{3});
      t.grad_loss = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{});
      t.log_prob->Set(std::vector<double>(12, -1.0));
      t.target->Set({0, -100, static_cast<double>(bad), 1});
      t.weight->Set({1, 2, 3});
      t.grad_loss->Set({1.0});
      t.out->FillCanaries();
      const OpResult r = RunCeGrad(cfg, t, "mean");
      EXPECT_EQ(r.failed_step, 3);  // phase 1 and 2 accept: the error is in the data
      EXPECT_EQ(r.status, ACL_ERROR_INVALID_PARAM);
      EXPECT_NE(r.message.find("target[2] = " + std::to_string(bad)), std::string::npos)
          << r.message;
      EXPECT_NE(r.message.find("aclnnCrossEntropyLossGrad"), std::string::npos);
      EXPECT_TRUE(t.out->Untouched());
      EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);  // reported once
    }
  }
}

// "mean" with zero total weight: the division by D = 0 propagates inf/NaN (CANN's behaviour;
// PyTorch returns zeros; docs/numerics.md).
TEST(CrossEntropyLossGradTargets, MeanWithZeroTotalWeightPropagates) {
  CeConfig cfg;
  cfg.n = 2;
  cfg.c = 2;
  CeGradTensors t;
  t.log_prob = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{2, 2});
  t.out = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{2, 2});
  t.target = std::make_unique<DeviceTensor>(ACL_INT64, std::vector<int64_t>{2});
  t.grad_loss = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{});
  t.log_prob->Set({-0.5, -1.0, -0.7, -0.7});
  t.grad_loss->Set({1.0});
  t.target->Set({-100, -100});  // every row ignored
  ASSERT_EQ(RunCeGrad(cfg, t, "mean").status, 0);
  for (double v : t.out->Get()) {
    EXPECT_TRUE(std::isnan(v));
  }
  t.weight = std::make_unique<DeviceTensor>(ACL_FLOAT, std::vector<int64_t>{2});
  t.weight->Set({1.0, -1.0});  // weights of the targets sum to zero
  t.target->Set({0, 1});
  ASSERT_EQ(RunCeGrad(cfg, t, "mean").status, 0);
  for (double v : t.out->Get()) {
    EXPECT_FALSE(std::isfinite(v));
  }
  // With "sum" the same rows are finite, and ignored rows are exactly zero.
  t.target->Set({-100, 1});
  ASSERT_EQ(RunCeGrad(cfg, t, "sum").status, 0);
  const std::vector<double> o = t.out->Get();
  EXPECT_EQ(o[0], 0.0);
  EXPECT_EQ(o[1], 0.0);
  EXPECT_TRUE(std::isfinite(o[2]) && std::isfinite(o[3]));
}

// ---------------------------------------------------------------------------------------------
// Validation table: every rule of the spec with its code, a message substring, and canaries.

struct CeValidationCase {
  const char* name;
  aclDataType lp = ACL_FLOAT, grad = ACL_FLOAT, out = ACL_FLOAT, target = ACL_INT64,
              weight = ACL_FLOAT, gz = ACL_FLOAT, lse = ACL_FLOAT;
  std::vector<int64_t> lp_shape = {2, 3}, grad_shape = {}, out_shape = {2, 3}, target_shape = {2},
                       weight_shape = {3}, gz_shape = {}, lse_shape = {2};
  bool has_weight = true, has_gz = false, has_lse = false;
  const char* reduction = "mean";
  double ls = 0.0, z = 0.0;
  int null_arg = 0;  // 1 gradLoss, 2 logProb, 3 target, 4 out, 5 workspaceSize, 6 executor
  int expect = 0;
  const char* message = "";
};

std::vector<CeValidationCase> CeValidationCases() {
  std::vector<CeValidationCase> v;
  auto add = [&](const char* name, int expect, const char* msg, auto&& edit) {
    CeValidationCase c;
    c.name = name;
    c.expect = expect;
    c.message = msg;
    edit(c);
    v.push_back(c);
  };
  const double kNaN = std::nan("");
  add("null_gradLoss", 161001, "gradLoss is null", [](auto& c) { c.null_arg = 1; });
  add("null_logProb", 161001, "logProb is null", [](auto& c) { c.null_arg = 2; });
  add("null_target", 161001, "target is null", [](auto& c) { c.null_arg = 3; });
  add("null_out", 161001, "out is null", [](auto& c) { c.null_arg = 4; });
  add("null_workspaceSize", 161001, "workspaceSize is null", [](auto& c) { c.null_arg = 5; });
  add("null_executor", 161001, "executor is null", [](auto& c) { c.null_arg = 6; });
  // DOUBLE: aclnn-cpu's extension under the default profile (an NPU profile refuses it as CANN
  // does: soc_profiles_test), with FLOAT or DOUBLE weights.
  add("logProb_f64", 0, "", [](auto& c) { c.lp = c.grad = c.out = ACL_DOUBLE; });
  add("logProb_f64_weight_f64", 0, "",
      [](auto& c) { c.lp = c.grad = c.out = c.weight = ACL_DOUBLE; });
  add("logProb_int32", 161002, "logProb has dtype INT32",
      [](auto& c) { c.lp = c.grad = c.out = ACL_INT32; });
  add("gradLoss_dtype", 161002, "gradLoss has dtype FLOAT16",
      [](auto& c) { c.grad = ACL_FLOAT16; });
  add("out_dtype", 161002, "out has dtype BF16", [](auto& c) { c.out = ACL_BF16; });
  add("gz_dtype", 161002, "gradZlossOptional has dtype BF16", [](auto& c) {
    c.has_gz = true;
    c.gz = ACL_BF16;
  });
  add("lse_dtype", 161002, "lseForZlossOptional has dtype FLOAT16", [](auto& c) {
    c.has_lse = true;
    c.lse = ACL_FLOAT16;
  });
  add("target_float", 161002, "target has dtype FLOAT", [](auto& c) { c.target = ACL_FLOAT; });
  add("weight_f16", 161002, "weightOptional has dtype FLOAT16",
      [](auto& c) { c.weight = ACL_FLOAT16; });
  add("reduction_unknown", 561002, "reductionOptional \"avg\"",
      [](auto& c) { c.reduction = "avg"; });
  add("ls_negative", 561002, "labelSmoothing -0.1 is outside [0, 1]", [](auto& c) { c.ls = -0.1; });
  add("ls_above_one", 561002, "labelSmoothing 1.5", [](auto& c) { c.ls = 1.5; });
  add("ls_nan", 561002, "labelSmoothing nan", [kNaN](auto& c) { c.ls = kNaN; });
  add("z_inf", 561002, "lseSquareScaleForZloss inf is not finite", [](auto& c) {
    c.z = HUGE_VAL;
    c.has_lse = true;
  });
  add("z_nan", 561002, "is not finite", [kNaN](auto& c) {
    c.z = kNaN;
    c.has_lse = true;
  });
  add("logProb_3d", 561002, "must be 2-d", [](auto& c) {
    c.lp_shape = {2, 3, 1};
    c.out_shape = {2, 3, 1};
  });
  add("target_shape", 561002, "target has shape [3]", [](auto& c) { c.target_shape = {3}; });
  add("weight_shape", 561002, "weightOptional has shape [4]",
      [](auto& c) { c.weight_shape = {4}; });
  add("gradLoss_N_for_mean", 561002, "must be 0-d or [1]", [](auto& c) { c.grad_shape = {2}; });
  add("gradLoss_1_for_none", 561002, "must be (N,) = [2]", [](auto& c) {
    c.reduction = "none";
    c.grad_shape = {1};
  });
  add("gradLoss_0d_for_none", 561002, "for reduction \"none\"",
      [](auto& c) { c.reduction = "none"; });
  add("gz_shape", 561002, "gradZlossOptional has shape [2]", [](auto& c) {
    c.has_gz = true;
    c.gz_shape = {2};
  });
  add("out_shape", 561002, "out has shape [2, 4]", [](auto& c) { c.out_shape = {2, 4}; });
  add("z_without_lse", 561002, "lseForZlossOptional is null", [](auto& c) { c.z = 0.5; });
  add("lse_shape", 561002, "lseForZlossOptional has shape [3]", [](auto& c) {
    c.z = 0.5;
    c.has_lse = true;
    c.lse_shape = {3};
  });
  // Accepted.
  add("empty_N", 0, "", [](auto& c) {
    c.lp_shape = c.out_shape = {0, 3};
    c.target_shape = {0};
  });
  add("empty_C", 0, "", [](auto& c) {
    c.lp_shape = c.out_shape = {2, 0};
    c.weight_shape = {0};
  });
  add("reduction_null_is_mean", 0, "", [](auto& c) { c.reduction = nullptr; });
  add("none_with_N", 0, "", [](auto& c) {
    c.reduction = "none";
    c.grad_shape = {2};
  });
  add("sum_with_1", 0, "", [](auto& c) {
    c.reduction = "sum";
    c.grad_shape = {1};
  });
  add("no_weight", 0, "", [](auto& c) { c.has_weight = false; });
  add("int32_target", 0, "", [](auto& c) { c.target = ACL_INT32; });
  add("zloss_full", 0, "", [](auto& c) {
    c.z = 0.1;
    c.has_lse = true;
    c.has_gz = true;
  });
  add("ls_one_bf16", 0, "", [](auto& c) {
    c.ls = 1.0;
    c.lp = c.grad = c.out = ACL_BF16;
  });
  return v;
}

class CrossEntropyLossGradValidation : public ::testing::TestWithParam<CeValidationCase> {};

TEST_P(CrossEntropyLossGradValidation, CodeMessageAndCanaries) {
  const CeValidationCase& c = GetParam();
  DeviceTensor grad(c.grad, c.grad_shape), lp(c.lp, c.lp_shape), out(c.out, c.out_shape),
      target(c.target, c.target_shape), weight(c.weight, c.weight_shape), gz(c.gz, c.gz_shape),
      lse(c.lse, c.lse_shape);
  grad.Set(std::vector<double>(static_cast<size_t>(grad.numel()), 1.0));
  lp.Set(std::vector<double>(static_cast<size_t>(lp.numel()), -1.0));
  target.Set(std::vector<double>(static_cast<size_t>(target.numel()), 0.0));
  weight.Set(std::vector<double>(static_cast<size_t>(weight.numel()), 1.0));
  gz.Set(std::vector<double>(static_cast<size_t>(gz.numel()), 1.0));
  lse.Set(std::vector<double>(static_cast<size_t>(lse.numel()), 1.0));
  out.FillCanaries();
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  const int st = aclnnCrossEntropyLossGradGetWorkspaceSize(
      c.null_arg == 1 ? nullptr : grad.get(), c.null_arg == 2 ? nullptr : lp.get(),
      c.null_arg == 3 ? nullptr : target.get(), c.has_weight ? weight.get() : nullptr,
      c.has_gz ? gz.get() : nullptr, c.has_lse ? lse.get() : nullptr,
      const_cast<char*>(c.reduction), -100, c.ls, c.z, c.null_arg == 4 ? nullptr : out.get(),
      c.null_arg == 5 ? nullptr : &ws, c.null_arg == 6 ? nullptr : &ex);
  EXPECT_EQ(st, c.expect);
  const std::string msg = TakeMessage();
  if (c.expect != 0) {
    EXPECT_NE(msg.find(c.message), std::string::npos) << "message: " << msg;
    EXPECT_NE(msg.find("aclnnCrossEntropyLossGrad"), std::string::npos) << msg;
    EXPECT_TRUE(out.Untouched());
    return;
  }
  ASSERT_NE(ex, nullptr);
  void* w = nullptr;
  if (ws) {
    ASSERT_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), 0);
  }
  EXPECT_EQ(aclnnCrossEntropyLossGrad(w, ws, ex, nullptr), 0);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), 0);
  if (w) aclrtFree(w);
  if (out.numel() == 0) {
    EXPECT_TRUE(out.Untouched());
  } else {
    EXPECT_TRUE(out.CanariesOutsideViewIntact());
    EXPECT_FALSE(out.Untouched());
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, CrossEntropyLossGradValidation,
                         ::testing::ValuesIn(CeValidationCases()),
                         [](const ::testing::TestParamInfo<CeValidationCase>& i) {
                           return std::string(i.param.name);
                         });

// Regression (found by fuzz/phase1_fuzz): null data addresses are rejected in phase 1.
TEST(CrossEntropyLossGradTargets, NullDataAddressRejected) {
  DeviceTensor grad(ACL_FLOAT, {}), lp(ACL_FLOAT, {2, 3}), out(ACL_FLOAT, {2, 3});
  const int64_t shape[] = {2}, strides[] = {1};
  aclTensor* target =
      aclCreateTensor(shape, 1, ACL_INT64, strides, 0, ACL_FORMAT_ND, shape, 1, nullptr);
  uint64_t ws;
  aclOpExecutor* ex;
  EXPECT_EQ(aclnnCrossEntropyLossGradGetWorkspaceSize(grad.get(), lp.get(), target, nullptr,
                                                      nullptr, nullptr, const_cast<char*>("mean"),
                                                      -100, 0.0, 0.0, out.get(), &ws, &ex),
            161001);
  EXPECT_NE(TakeMessage().find("tensor target has a null data address"), std::string::npos);
  EXPECT_TRUE(out.Untouched());
  aclDestroyTensor(target);
}
